#ifndef CAPPLAN_SERVICE_CLI_SVG_PLOT_LABELS_H_
#define CAPPLAN_SERVICE_CLI_SVG_PLOT_LABELS_H_

// Label placement for the SVG plots: each label has candidate positions
// (best first); a label takes the first candidate whose box stays inside its
// area and meets no box already placed (other labels, the legend). Labels
// are placed in the order given, so the important ones (knee, safe point)
// go first; a label with no free candidate is left out rather than drawn
// over another.

#include <string>
#include <vector>

namespace capplan::service {

// An axis-aligned box in SVG user units (y grows downwards).
struct Box {
  double left = 0, top = 0, right = 0, bottom = 0;
  bool Intersects(const Box& o) const {
    return left < o.right && o.left < right && top < o.bottom && o.top < bottom;
  }
  bool Inside(const Box& area) const {
    return left >= area.left && right <= area.right && top >= area.top && bottom <= area.bottom;
  }
};

enum class Anchor { kStart, kMiddle, kEnd };  // SVG text-anchor

struct LabelPosition {
  double x = 0, y = 0;  // the text's anchor point and baseline
  Anchor anchor = Anchor::kStart;
};

// Average advance of a sans-serif glyph, as a share of the font size: a
// generous estimate (digits and lower case are narrower), so estimated boxes
// hold the rendered text.
inline constexpr double kGlyphWidthEm = 0.62;

// The box `text` covers at `p` in a font of `font_size` (ascent 0.8 em above
// the baseline, descent 0.25 em below; a UTF-8 code point counts as a glyph).
Box TextBox(const std::string& text, double font_size, const LabelPosition& p);

struct LabelRequest {
  std::string text;
  double font_size = 11;
  std::vector<LabelPosition> candidates;  // best first
  Box area;                               // the label must stay inside
};

struct PlacedLabel {
  bool placed = false;
  LabelPosition position;
  Box box;
};

// Places `labels` in order around the fixed `obstacles` (legend, title).
std::vector<PlacedLabel> PlaceLabels(const std::vector<LabelRequest>& labels,
                                     const std::vector<Box>& obstacles);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_SVG_PLOT_LABELS_H_
