#ifndef CAPPLAN_SERVICE_CATALOG_CATALOG_H_
#define CAPPLAN_SERVICE_CATALOG_CATALOG_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "capplan/v1/catalog.pb.h"
#include "google/protobuf/message.h"

namespace capplan::service {

// What loading a catalogue directory may read, checked before reading: a
// file above max_file_bytes, a catalogue above max_total_bytes in all, or
// more than max_files directory entries is refused (OUT_OF_RANGE), so no
// directory can make a load allocate without bound. The largest bundled file
// is ~16 KB and the whole of data/ ~1 MB.
inline constexpr size_t kMaxCatalogFileBytes = size_t{4} << 20;
struct CatalogLimits {
  size_t max_file_bytes = kMaxCatalogFileBytes;
  size_t max_total_bytes = size_t{64} << 20;
  size_t max_files = 20000;
};

// Parses one catalogue file's text into `message` (whose type the file's
// "# proto-message:" header must name), checks its structure
// (CheckEntityStructure: UTF-8, duplicates) and validates it (ValidateEntity).
// INVALID_ARGUMENT "display:line:column: message", one line per finding.
absl::Status ParseCatalogText(const std::string& text, const std::string& display,
                              google::protobuf::Message* message);

// The loaded, validated catalogue: every entity of data/ in memory, immutable
// once built. Shared by handlers through std::shared_ptr<const Catalog>; a
// reload builds a new one and swaps it in.
class Catalog {
 public:
  // Loads <dir>/hardware/*.txtpb, <dir>/models/*.txtpb, <dir>/baselines/*.txtpb,
  // <dir>/engines/*.txtpb, <dir>/priors/*.txtpb and <dir>/tiers/*.txtpb (KV
  // storage tiers), then validates ids, references and ranges.
  // Parse errors read "file:line:column: message"; validation errors name the
  // file and the field path. Only regular files inside `dir` are read
  // (ReadRegularFile: a FIFO, a device, or a symbolic link out of the tree is
  // an error, never a hang), within `limits`. A catalogue without a hardware
  // or a model entry is FAILED_PRECONDITION.
  static absl::StatusOr<std::shared_ptr<const Catalog>> LoadFromDirectory(
      const std::string& dir, const CatalogLimits& limits = {});

  // Builds a catalogue from entities already in memory (tests), validated the
  // same way. `origin` names the entities in error messages.
  static absl::StatusOr<std::shared_ptr<const Catalog>> FromEntities(
      std::vector<v1::Hardware> hardware, std::vector<v1::Model> models,
      std::vector<v1::Baseline> baselines, std::vector<v1::EnginePreset> engine_presets,
      absl::flat_hash_map<std::string, std::string> origin = {},
      std::vector<v1::EfficiencyPrior> priors = {}, std::vector<v1::KvStorageTierSpec> tiers = {});

  // A copy with these cards, models and baselines added or, where the id
  // exists, replaced; each entry validated (ValidateEntity: INVALID_ARGUMENT
  // "<path>.<field>: rule") and the whole cross-checked like a load. The new
  // entries' origin is "<folder>/<id>.txtpb".
  absl::StatusOr<std::shared_ptr<const Catalog>> WithEntries(std::vector<v1::Hardware> hardware,
                                                             std::vector<v1::Model> models,
                                                             std::vector<v1::Baseline> baselines,
                                                             absl::string_view path) const;

  // A copy without these baselines and with `priors` in place of its own
  // (the accuracy harness's held-out catalogue).
  absl::StatusOr<std::shared_ptr<const Catalog>> WithoutBaselines(
      const std::vector<std::string>& ids, std::vector<v1::EfficiencyPrior> priors) const;

  // nullptr when absent.
  const v1::Hardware* FindHardware(absl::string_view id) const;
  // Accepts a catalogue id, a Hugging Face repo id or an alias (repo ids are
  // matched case-insensitively).
  const v1::Model* FindModel(absl::string_view id_or_repo) const;
  const v1::Baseline* FindBaseline(absl::string_view id) const;

  // Sorted by id.
  const std::vector<v1::Hardware>& hardware() const { return hardware_; }
  const std::vector<v1::Model>& models() const { return models_; }
  const std::vector<v1::Baseline>& baselines() const { return baselines_; }
  const std::vector<v1::EnginePreset>& engine_presets() const { return engine_presets_; }
  const std::vector<v1::EfficiencyPrior>& priors() const { return priors_; }
  const v1::EfficiencyPrior* FindPrior(absl::string_view id) const;
  const std::vector<v1::KvStorageTierSpec>& kv_tiers() const { return kv_tiers_; }
  const v1::KvStorageTierSpec* FindKvTier(absl::string_view id) const;

  // The file each entity came from ("hardware/nvidia-l4-24gb.txtpb"), by id.
  const std::string& OriginOf(absl::string_view id) const;

 private:
  Catalog() = default;
  absl::Status Index();

  std::vector<v1::Hardware> hardware_;
  std::vector<v1::Model> models_;
  std::vector<v1::Baseline> baselines_;
  std::vector<v1::EnginePreset> engine_presets_;
  std::vector<v1::EfficiencyPrior> priors_;
  std::vector<v1::KvStorageTierSpec> kv_tiers_;
  absl::flat_hash_map<std::string, std::string> origin_;
  absl::flat_hash_map<std::string, size_t> hardware_index_;
  absl::flat_hash_map<std::string, size_t> model_index_;  // ids, repos, aliases (lowercase)
  absl::flat_hash_map<std::string, size_t> baseline_index_;
  absl::flat_hash_map<std::string, size_t> engine_index_;
  absl::flat_hash_map<std::string, size_t> prior_index_;
  absl::flat_hash_map<std::string, size_t> kv_tier_index_;
};

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CATALOG_CATALOG_H_
