#include "service/catalog/suggest.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace capplan::service {
namespace {

std::vector<std::string> Words(absl::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c))) {
      word += absl::ascii_tolower(static_cast<unsigned char>(c));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

// A candidate's id and other names in lower case, made once per query.
struct LowerCandidate {
  std::string id;
  std::vector<std::string> names;
};

LowerCandidate Lower(const SuggestionCandidate& c) {
  LowerCandidate l{absl::AsciiStrToLower(c.id), {}};
  for (const std::string& name : c.other_names) l.names.push_back(absl::AsciiStrToLower(name));
  return l;
}

bool EveryWordIn(const std::vector<std::string>& words, const LowerCandidate& c) {
  auto in = [&](const std::string& word) {
    if (absl::StrContains(c.id, word)) return true;
    for (const std::string& name : c.names) {
      if (absl::StrContains(name, word)) return true;
    }
    return false;
  };
  return !words.empty() && std::all_of(words.begin(), words.end(), in);
}

}  // namespace

size_t EditDistance(absl::string_view a_text, absl::string_view b_text) {
  const std::string a = absl::AsciiStrToLower(a_text);
  const std::string b = absl::AsciiStrToLower(b_text);
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

size_t BoundedEditDistance(absl::string_view a, absl::string_view b, size_t bound) {
  if (a.size() < b.size()) std::swap(a, b);  // b the shorter: rows over a, columns over b
  bound = std::min(bound, a.size());         // no distance exceeds |a|; bound + 1 cannot wrap
  if (a.size() - b.size() > bound) return bound + 1;
  const size_t past = bound + 1;
  // row[j] = distance of a[0, i) and b[0, j), capped at `past`; cells outside
  // |i - j| <= bound stay at `past`.
  std::vector<size_t> row(b.size() + 1, past);
  for (size_t j = 0; j <= std::min(b.size(), bound); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    const size_t lo = i > bound ? i - bound : 1;
    // i + bound without overflow (the exact distance passes the largest bound).
    const size_t hi = b.size() - std::min(i, b.size()) <= bound ? b.size() : i + bound;
    size_t diagonal = row[lo - 1];
    row[lo - 1] = lo == 1 && i <= bound ? i : past;
    size_t row_min = row[lo - 1];
    for (size_t j = lo; j <= hi; ++j) {
      const size_t up = row[j];
      const size_t cell =
          std::min({up + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      row[j] = std::min(cell, past);
      row_min = std::min(row_min, row[j]);
      diagonal = up;
    }
    if (hi < b.size()) row[hi + 1] = past;
    if (row_min >= past) return past;
  }
  return std::min(row[b.size()], past);
}

std::vector<std::string> SuggestIds(absl::string_view query,
                                    const std::vector<SuggestionCandidate>& candidates,
                                    size_t limit) {
  std::vector<std::string> out;
  if (query.empty()) return out;
  const std::string lower_query = absl::AsciiStrToLower(query);
  std::vector<LowerCandidate> lower;
  lower.reserve(candidates.size());
  for (const SuggestionCandidate& c : candidates) lower.push_back(Lower(c));
  // The nearest of a candidate's id and names, capped at bound + 1.
  auto distance = [&](const LowerCandidate& c, size_t bound) {
    size_t best = BoundedEditDistance(lower_query, c.id, bound);
    for (const std::string& name : c.names) {
      best = std::min(best, BoundedEditDistance(lower_query, name, bound));
    }
    return best;
  };
  const std::vector<std::string> words = Words(query);
  std::vector<std::pair<size_t, const std::string*>> matches;
  for (size_t k = 0; k < candidates.size(); ++k) {
    if (EveryWordIn(words, lower[k])) {
      // Exact: a bound no distance reaches.
      matches.emplace_back(distance(lower[k], std::numeric_limits<size_t>::max()),
                           &candidates[k].id);
    }
  }
  if (matches.empty()) {
    // Near ids only: within a third of the query's length, and within one
    // edit of the nearest.
    const size_t threshold = std::max<size_t>(2, query.size() / 3);
    size_t best = threshold;
    std::vector<std::pair<size_t, const std::string*>> near;
    for (size_t k = 0; k < candidates.size(); ++k) {
      const size_t d = distance(lower[k], threshold);
      if (d <= threshold) near.emplace_back(d, &candidates[k].id);
      best = std::min(best, d);
    }
    for (const auto& m : near) {
      if (m.first <= best + 1) matches.push_back(m);
    }
  }
  std::stable_sort(matches.begin(), matches.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  for (const auto& [d, id] : matches) {
    if (out.size() == limit) break;
    out.push_back(*id);
  }
  return out;
}

std::vector<std::string> SuggestHardware(const Catalog& catalog, absl::string_view query) {
  std::vector<SuggestionCandidate> candidates;
  for (const v1::Hardware& h : catalog.hardware()) candidates.push_back({h.id(), {h.name()}});
  return SuggestIds(query, candidates);
}

std::vector<std::string> SuggestModels(const Catalog& catalog, absl::string_view query) {
  std::vector<SuggestionCandidate> candidates;
  for (const v1::Model& m : catalog.models()) {
    SuggestionCandidate c{m.id(), {m.hf_repo_id(), m.display_name()}};
    c.other_names.insert(c.other_names.end(), m.aliases().begin(), m.aliases().end());
    candidates.push_back(std::move(c));
  }
  return SuggestIds(query, candidates);
}

std::vector<std::string> SuggestBaselines(const Catalog& catalog, absl::string_view query) {
  std::vector<SuggestionCandidate> candidates;
  for (const v1::Baseline& b : catalog.baselines()) candidates.push_back({b.id(), {}});
  return SuggestIds(query, candidates);
}

std::string DidYouMean(const std::vector<std::string>& ids) {
  if (ids.empty()) return "";
  if (ids.size() == 1) return absl::StrCat("; did you mean ", ids[0], "?");
  std::vector<std::string> head(ids.begin(), ids.end() - 1);
  return absl::StrCat("; did you mean ", absl::StrJoin(head, ", "), " or ", ids.back(), "?");
}

}  // namespace capplan::service
