#include "service/cli/svg_plot_labels.h"

namespace capplan::service {
namespace {

// Code points in UTF-8 text (continuation bytes do not start a glyph).
size_t Glyphs(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

Box TextBox(const std::string& text, double font_size, const LabelPosition& p) {
  const double width = kGlyphWidthEm * font_size * static_cast<double>(Glyphs(text));
  Box b;
  switch (p.anchor) {
    case Anchor::kStart:
      b.left = p.x;
      break;
    case Anchor::kMiddle:
      b.left = p.x - width / 2;
      break;
    case Anchor::kEnd:
      b.left = p.x - width;
      break;
  }
  b.right = b.left + width;
  b.top = p.y - 0.8 * font_size;
  b.bottom = p.y + 0.25 * font_size;
  return b;
}

std::vector<PlacedLabel> PlaceLabels(const std::vector<LabelRequest>& labels,
                                     const std::vector<Box>& obstacles) {
  std::vector<Box> taken = obstacles;
  std::vector<PlacedLabel> out;
  out.reserve(labels.size());
  for (const LabelRequest& label : labels) {
    PlacedLabel placed;
    for (const LabelPosition& candidate : label.candidates) {
      const Box box = TextBox(label.text, label.font_size, candidate);
      if (!box.Inside(label.area)) continue;
      bool free = true;
      for (const Box& other : taken) free = free && !box.Intersects(other);
      if (!free) continue;
      placed = {true, candidate, box};
      taken.push_back(box);
      break;
    }
    out.push_back(placed);
  }
  return out;
}

}  // namespace capplan::service
