#ifndef CAPPLAN_SERVICE_CLI_ARGS_H_
#define CAPPLAN_SERVICE_CLI_ARGS_H_

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"

namespace capplan::service {

// A parsed command line: positional words, and kebab-case flags given as
// `--name value`, `--name=value` or, for switches, `--name`.
class CliArgs {
 public:
  // `switches` take no value; `valued` take one. Anything else is an error
  // naming the flag, so a typo never passes silently.
  static absl::StatusOr<CliArgs> Parse(const std::vector<std::string>& args,
                                       const absl::flat_hash_set<std::string>& switches,
                                       const absl::flat_hash_set<std::string>& valued);

  const std::vector<std::string>& positional() const { return positional_; }
  bool Has(const std::string& name) const { return values_.contains(name); }
  // The last value given (flags may repeat).
  std::optional<std::string> Get(const std::string& name) const;
  // Every value given, in order (for repeatable flags such as --allow).
  std::vector<std::string> GetAll(const std::string& name) const;
  // Typed getters: InvalidArgument "--name = value; must be ..." on bad text.
  // Integers land in 32-bit request fields, so above max_value is refused
  // rather than wrapped.
  absl::StatusOr<std::optional<int64_t>> GetInt(
      const std::string& name, int64_t min_value,
      int64_t max_value = std::numeric_limits<uint32_t>::max()) const;
  absl::StatusOr<std::optional<double>> GetDouble(const std::string& name) const;

 private:
  std::vector<std::string> positional_;
  absl::flat_hash_map<std::string, std::vector<std::string>> values_;
};

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_ARGS_H_
