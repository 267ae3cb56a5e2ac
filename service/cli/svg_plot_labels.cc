#include "service/cli/svg_plot_labels.h"

#include <cstdint>
#include <string_view>

namespace capplan::service {
namespace {

// Advance of one code point in em, a generous class estimate measured
// against DejaVu Sans (the sans-serif of Debian's rsvg-convert, among the
// widest): digits and most lower case ≈ 0.63, capitals ≤ 0.78, m/W/% ≈ 1.
double GlyphEm(uint32_t cp) {
  if (cp >= 0x1100) return 1.0;  // CJK and other wide scripts
  if (cp == 0xD7) return 0.85;   // ×
  if (cp >= 0x80) return kGlyphWidthEm;
  const char c = static_cast<char>(cp);
  if (c == ' ') return 0.35;
  if (std::string_view("fijlrtIJ.,:;'!|()[]/-").find(c) != std::string_view::npos) return 0.40;
  if (std::string_view("mWM%@").find(c) != std::string_view::npos) return 1.0;
  if (std::string_view("w+=<>~").find(c) != std::string_view::npos) return 0.85;
  if (c >= 'A' && c <= 'Z') return 0.80;
  return kGlyphWidthEm;
}

// The text's advance in em (UTF-8 decoded; a malformed byte counts once).
double WidthEm(const std::string& text) {
  double em = 0;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
    uint32_t cp = length == 1 ? c : c & (0x3F >> (length - 1));
    for (size_t k = 1; k < length && i + k < text.size(); ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    }
    em += GlyphEm(cp);
    i += length;
  }
  return em;
}

}  // namespace

Box TextBox(const std::string& text, double font_size, const LabelPosition& p) {
  const double width = WidthEm(text) * font_size;
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
