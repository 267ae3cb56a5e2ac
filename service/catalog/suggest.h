#ifndef CAPPLAN_SERVICE_CATALOG_SUGGEST_H_
#define CAPPLAN_SERVICE_CATALOG_SUGGEST_H_

// "Did you mean": catalogue ids close to an unknown one, for NOT_FOUND
// messages (`--gpu h100` -> the nvidia-h100-* ids).
//
// A candidate matches when every word of the query (split at anything but
// letters and digits, compared without case) is a substring of its id or of
// one of its other names (aliases, Hugging Face repo id, display name). When
// nothing matches that way, the ids within a small edit distance of the
// query (Levenshtein, at most max(2, length / 3), and at most one more than
// the nearest) are suggested, nearest first.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "service/catalog/catalog.h"

namespace capplan::service {

struct SuggestionCandidate {
  std::string id;
  std::vector<std::string> other_names;
};

// At most `limit` ids, nearest first (by edit distance to the id or its
// nearest other name; ties in catalogue order).
std::vector<std::string> SuggestIds(absl::string_view query,
                                    const std::vector<SuggestionCandidate>& candidates,
                                    size_t limit = 6);

// The ids of the catalogue's hardware, models or baselines close to `query`.
std::vector<std::string> SuggestHardware(const Catalog& catalog, absl::string_view query);
std::vector<std::string> SuggestModels(const Catalog& catalog, absl::string_view query);
std::vector<std::string> SuggestBaselines(const Catalog& catalog, absl::string_view query);

// "; did you mean a, b or c?" — empty when there is nothing to suggest.
std::string DidYouMean(const std::vector<std::string>& ids);

// Levenshtein distance (insertions, deletions, substitutions), no case.
size_t EditDistance(absl::string_view a, absl::string_view b);

// min(EditDistance(a, b), bound + 1) for `a` and `b` already in lower case
// (the exact distance for bound = SIZE_MAX), in O((min(|a|, |b|) + bound) ×
// bound): strings whose lengths differ by more than the bound are answered at
// once, only the diagonal band the bound allows is filled, and it stops once
// a whole row is past the bound. What keeps a NOT_FOUND answer for a
// kilobyte-long id cheap: the near-id search needs no distance beyond its
// threshold.
size_t BoundedEditDistance(absl::string_view a, absl::string_view b, size_t bound);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CATALOG_SUGGEST_H_
