#include "service/catalog/suggest.h"

#include <algorithm>
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

bool EveryWordIn(const std::vector<std::string>& words, const SuggestionCandidate& c) {
  auto in = [&](const std::string& word) {
    if (absl::StrContains(absl::AsciiStrToLower(c.id), word)) return true;
    for (const std::string& name : c.other_names) {
      if (absl::StrContains(absl::AsciiStrToLower(name), word)) return true;
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

std::vector<std::string> SuggestIds(absl::string_view query,
                                    const std::vector<SuggestionCandidate>& candidates,
                                    size_t limit) {
  std::vector<std::string> out;
  if (query.empty()) return out;
  auto distance = [&](const SuggestionCandidate& c) {
    size_t best = EditDistance(query, c.id);
    for (const std::string& name : c.other_names) best = std::min(best, EditDistance(query, name));
    return best;
  };
  const std::vector<std::string> words = Words(query);
  std::vector<std::pair<size_t, const std::string*>> matches;
  for (const SuggestionCandidate& c : candidates) {
    if (EveryWordIn(words, c)) matches.emplace_back(distance(c), &c.id);
  }
  if (matches.empty()) {
    // Near ids only: within a third of the query's length, and within one
    // edit of the nearest.
    const size_t threshold = std::max<size_t>(2, query.size() / 3);
    size_t best = threshold;
    std::vector<std::pair<size_t, const std::string*>> near;
    for (const SuggestionCandidate& c : candidates) {
      const size_t d = distance(c);
      if (d <= threshold) near.emplace_back(d, &c.id);
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
