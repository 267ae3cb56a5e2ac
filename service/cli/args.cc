#include "service/cli/args.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "service/catalog/suggest.h"

namespace capplan::service {

absl::StatusOr<CliArgs> CliArgs::Parse(const std::vector<std::string>& args,
                                       const absl::flat_hash_set<std::string>& switches,
                                       const absl::flat_hash_set<std::string>& valued) {
  CliArgs parsed;
  bool only_positional = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (only_positional || !absl::StartsWith(arg, "--")) {
      parsed.positional_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      only_positional = true;
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (switches.contains(name)) {
      if (value.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("--%s takes no value (got '%s')", name, *value));
      }
      parsed.values_[name].push_back("");
    } else if (valued.contains(name)) {
      if (!value.has_value()) {
        if (i + 1 >= args.size()) {
          return absl::InvalidArgumentError(absl::StrFormat("--%s needs a value", name));
        }
        value = args[++i];
      }
      parsed.values_[name].push_back(*value);
    } else {
      std::vector<SuggestionCandidate> known;
      for (const auto* set : {&switches, &valued}) {
        for (const std::string& flag : *set) known.push_back({"--" + flag, {}});
      }
      std::sort(known.begin(), known.end(),
                [](const auto& a, const auto& b) { return a.id < b.id; });
      return absl::InvalidArgumentError(
          absl::StrFormat("unknown flag --%s%s (see capplan COMMAND --help)", name,
                          DidYouMean(SuggestIds("--" + name, known, 3))));
    }
  }
  return parsed;
}

std::optional<std::string> CliArgs::Get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> CliArgs::GetAll(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>() : it->second;
}

absl::StatusOr<std::optional<int64_t>> CliArgs::GetInt(const std::string& name, int64_t min_value,
                                                       int64_t max_value) const {
  std::optional<std::string> text = Get(name);
  if (!text.has_value()) return std::optional<int64_t>();
  int64_t value = 0;
  if (!absl::SimpleAtoi(*text, &value) || value < min_value) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--%s = %s; must be a whole number >= %d", name, *text, min_value));
  }
  if (value > max_value) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--%s = %s; must be at most %d", name, *text, max_value));
  }
  return std::optional<int64_t>(value);
}

absl::StatusOr<std::optional<double>> CliArgs::GetDouble(const std::string& name) const {
  std::optional<std::string> text = Get(name);
  if (!text.has_value()) return std::optional<double>();
  double value = 0;
  if (!absl::SimpleAtod(*text, &value) || !std::isfinite(value)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--%s = %s; must be a finite number", name, *text));
  }
  return std::optional<double>(value);
}

}  // namespace capplan::service
