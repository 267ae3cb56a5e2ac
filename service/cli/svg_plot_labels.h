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

// Advance of a typical sans-serif glyph (digits, most lower case), as a
// share of the font size; narrow glyphs (i, l, t, punctuation) count less,
// capitals and m, w, W, M, % more (svg_plot_labels.cc), wide scripts (CJK,
// U+1100 and above) a full em. Generous, so estimated boxes hold the
// rendered text (a test checks it against rsvg-convert).
inline constexpr double kGlyphWidthEm = 0.66;

// The box `text` covers at `p` in a font of `font_size` (ascent 0.8 em above
// the baseline, descent 0.25 em below).
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
