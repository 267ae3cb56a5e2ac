#ifndef CAPPLAN_BASE_DIGITS_H_
#define CAPPLAN_BASE_DIGITS_H_

// Counts as people read them: "442416" -> "442,416". The one grouping rule
// the CLI's tables and the planner's messages share.

#include <string>
#include <string_view>

namespace capplan {

// `digits` (an optional leading '-', then decimal digits) with a comma
// before every group of three from the right.
inline std::string GroupThousands(std::string_view digits) {
  std::string out;
  const size_t sign = !digits.empty() && digits.front() == '-' ? 1 : 0;
  out.append(digits.substr(0, sign));
  const std::string_view body = digits.substr(sign);
  for (size_t i = 0; i < body.size(); ++i) {
    if (i > 0 && (body.size() - i) % 3 == 0) out += ',';
    out += body[i];
  }
  return out;
}

}  // namespace capplan

#endif  // CAPPLAN_BASE_DIGITS_H_
