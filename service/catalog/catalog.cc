#include "service/catalog/catalog.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "service/catalog/catalog_validator.h"
#include "service/catalog/entity_checks.h"
#include "service/catalog/entity_text.h"
#include "service/catalog/file_util.h"

namespace capplan::service {
namespace {

namespace fs = std::filesystem;
using google::protobuf::Message;

// Checks the "# proto-message: X" header names the message this folder holds.
absl::Status CheckHeader(const std::string& display, const std::string& text,
                         const std::string& message_name) {
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    absl::string_view stripped = absl::StripAsciiWhitespace(line);
    if (!absl::StartsWith(stripped, "#")) break;
    constexpr absl::string_view kKey = "proto-message:";
    size_t at = stripped.find(kKey);
    if (at == absl::string_view::npos) continue;
    absl::string_view named = absl::StripAsciiWhitespace(stripped.substr(at + kKey.size()));
    if (absl::EndsWith(named, message_name) &&
        (named.size() == message_name.size() ||
         named[named.size() - message_name.size() - 1] == '.')) {
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("%s:%d:%d: header names message '%s'; files in this folder hold '%s'",
                        display, line_number, static_cast<int>(at) + 1, named, message_name));
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("%s:1:1: missing header '# proto-message: %s' (and '# proto-file: "
                      "capplan/v1/catalog.proto')",
                      display, message_name));
}

}  // namespace

absl::Status ParseCatalogText(const std::string& text, const std::string& display,
                              Message* message) {
  CAPPLAN_RETURN_IF_ERROR(CheckHeader(display, text, message->GetDescriptor()->name()));
  return ParseTextEntity(display, text, ValidationRules{}, message);
}

namespace {

// What one load has read so far, against its limits.
struct LoadBudget {
  CatalogLimits limits;
  std::string root;
  size_t files = 0;
  size_t bytes = 0;
};

absl::Status ParseEntity(const fs::path& path, const std::string& display, LoadBudget& budget,
                         Message* message) {
  CAPPLAN_ASSIGN_OR_RETURN(
      std::string text, ReadRegularFile(path.string(), budget.limits.max_file_bytes, budget.root));
  budget.bytes += text.size();
  if (budget.bytes > budget.limits.max_total_bytes) {
    return absl::OutOfRangeError(absl::StrFormat(
        "%s: the catalogue's files exceed %d bytes in all (CatalogLimits.max_total_bytes)", display,
        budget.limits.max_total_bytes));
  }
  return ParseCatalogText(text, display, message);
}

template <typename T>
absl::Status LoadFolder(const fs::path& root, const std::string& folder, LoadBudget& budget,
                        std::vector<T>* out, absl::flat_hash_map<std::string, std::string>* origin,
                        std::vector<std::string>* errors) {
  fs::path dir = root / folder;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return absl::OkStatus();
  if (!fs::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(dir.string(), ": not a directory"));
  }
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (++budget.files > budget.limits.max_files) {
      return absl::OutOfRangeError(
          absl::StrFormat("%s: the catalogue holds more than %d files (CatalogLimits.max_files)",
                          dir.string(), budget.limits.max_files));
    }
    if (IsTemporaryFileName(entry.path().filename().string())) {
      continue;  // a write in flight (or one a kill interrupted: the store removes it)
    }
    if (entry.path().extension() == ".txtpb") {
      files.push_back(entry.path());
    } else if (entry.path().filename() != "README.md") {
      // A misnamed file would otherwise be skipped without a word.
      errors->push_back(
          absl::StrFormat("%s: not a catalogue file; entities are <id>.txtpb (README.md is "
                          "allowed)",
                          (fs::path(folder) / entry.path().filename()).string()));
    }
  }
  if (ec) {
    return absl::UnavailableError(absl::StrCat(dir.string(), ": cannot list: ", ec.message()));
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    std::string display = (fs::path(folder) / file.filename()).string();
    T entity;
    absl::Status status = ParseEntity(file, display, budget, &entity);
    if (absl::IsOutOfRange(status) && budget.bytes > budget.limits.max_total_bytes) return status;
    if (!status.ok()) {
      errors->push_back(std::string(status.message()));
      continue;
    }
    std::string stem = file.stem().string();
    if (entity.id() != stem) {
      errors->push_back(
          absl::StrFormat("%s:1:1: id = \"%s\"; must equal the file name without .txtpb "
                          "(\"%s\")",
                          display, entity.id(), stem));
      continue;
    }
    (*origin)[entity.id()] = display;
    out->push_back(std::move(entity));
  }
  return absl::OkStatus();
}

template <typename T>
void SortById(std::vector<T>* entities) {
  std::sort(entities->begin(), entities->end(),
            [](const T& a, const T& b) { return a.id() < b.id(); });
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Catalog>> Catalog::LoadFromDirectory(
    const std::string& dir, const CatalogLimits& limits) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat("catalogue directory '", dir, "' does not exist"));
  }
  std::vector<v1::Hardware> hardware;
  std::vector<v1::Model> models;
  std::vector<v1::Baseline> baselines;
  std::vector<v1::EnginePreset> engines;
  std::vector<v1::EfficiencyPrior> priors;
  std::vector<v1::KvStorageTierSpec> tiers;
  absl::flat_hash_map<std::string, std::string> origin;
  std::vector<std::string> errors;
  fs::path root(dir);
  LoadBudget budget{limits, dir};
  CAPPLAN_RETURN_IF_ERROR(LoadFolder(root, "hardware", budget, &hardware, &origin, &errors));
  CAPPLAN_RETURN_IF_ERROR(LoadFolder(root, "models", budget, &models, &origin, &errors));
  CAPPLAN_RETURN_IF_ERROR(LoadFolder(root, "baselines", budget, &baselines, &origin, &errors));
  CAPPLAN_RETURN_IF_ERROR(LoadFolder(root, "engines", budget, &engines, &origin, &errors));
  CAPPLAN_RETURN_IF_ERROR(LoadFolder(root, "priors", budget, &priors, &origin, &errors));
  CAPPLAN_RETURN_IF_ERROR(LoadFolder(root, "tiers", budget, &tiers, &origin, &errors));
  if (!errors.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
  }
  // Nothing can be planned without a GPU and a model: an empty folder (a
  // mount that did not happen, a wrong path) must not come up SERVING.
  if (hardware.empty() || models.empty()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "catalogue '%s' holds %d hardware and %d model entries; it needs at least one of each "
        "(hardware/<id>.txtpb, models/<id>.txtpb)",
        dir, hardware.size(), models.size()));
  }
  return FromEntities(std::move(hardware), std::move(models), std::move(baselines),
                      std::move(engines), std::move(origin), std::move(priors), std::move(tiers));
}

absl::StatusOr<std::shared_ptr<const Catalog>> Catalog::FromEntities(
    std::vector<v1::Hardware> hardware, std::vector<v1::Model> models,
    std::vector<v1::Baseline> baselines, std::vector<v1::EnginePreset> engine_presets,
    absl::flat_hash_map<std::string, std::string> origin, std::vector<v1::EfficiencyPrior> priors,
    std::vector<v1::KvStorageTierSpec> tiers) {
  std::shared_ptr<Catalog> catalog(new Catalog());
  catalog->kv_tiers_ = std::move(tiers);
  SortById(&catalog->kv_tiers_);
  catalog->hardware_ = std::move(hardware);
  catalog->models_ = std::move(models);
  catalog->baselines_ = std::move(baselines);
  catalog->engine_presets_ = std::move(engine_presets);
  catalog->priors_ = std::move(priors);
  SortById(&catalog->priors_);
  catalog->origin_ = std::move(origin);
  SortById(&catalog->hardware_);
  SortById(&catalog->models_);
  SortById(&catalog->baselines_);
  SortById(&catalog->engine_presets_);
  CAPPLAN_RETURN_IF_ERROR(catalog->Index());
  return std::shared_ptr<const Catalog>(std::move(catalog));
}

namespace {

// Replaces the entity of the same id, or adds it.
template <typename T>
void Upsert(std::vector<T>* all, T entity) {
  for (T& e : *all) {
    if (e.id() == entity.id()) {
      e = std::move(entity);
      return;
    }
  }
  all->push_back(std::move(entity));
}

absl::Status CheckEntity(const Message& entity, absl::string_view path) {
  std::vector<Finding> findings = CheckEntityStructure(entity);
  if (findings.empty()) findings = ValidateEntity(entity);
  if (findings.empty()) return absl::OkStatus();
  std::vector<std::string> lines;
  for (const Finding& f : findings) {
    lines.push_back(absl::StrCat(path, ".", f.field_path, ": ", f.message));
  }
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Catalog>> Catalog::WithEntries(
    std::vector<v1::Hardware> hardware, std::vector<v1::Model> models,
    std::vector<v1::Baseline> baselines, absl::string_view path) const {
  std::vector<v1::Hardware> all_hardware = hardware_;
  std::vector<v1::Model> all_models = models_;
  std::vector<v1::Baseline> all_baselines = baselines_;
  absl::flat_hash_map<std::string, std::string> origin = origin_;
  for (v1::Hardware& h : hardware) {
    CAPPLAN_RETURN_IF_ERROR(CheckEntity(h, absl::StrCat(path, ".hardware")));
    origin[h.id()] = absl::StrCat("hardware/", h.id(), ".txtpb");
    Upsert(&all_hardware, std::move(h));
  }
  for (v1::Model& m : models) {
    CAPPLAN_RETURN_IF_ERROR(CheckEntity(m, absl::StrCat(path, ".model")));
    origin[m.id()] = absl::StrCat("models/", m.id(), ".txtpb");
    Upsert(&all_models, std::move(m));
  }
  for (v1::Baseline& b : baselines) {
    CAPPLAN_RETURN_IF_ERROR(CheckEntity(b, absl::StrCat(path, ".baseline")));
    origin[b.id()] = absl::StrCat("baselines/", b.id(), ".txtpb");
    Upsert(&all_baselines, std::move(b));
  }
  return FromEntities(std::move(all_hardware), std::move(all_models), std::move(all_baselines),
                      engine_presets_, std::move(origin), priors_, kv_tiers_);
}

absl::StatusOr<std::shared_ptr<const Catalog>> Catalog::WithoutBaselines(
    const std::vector<std::string>& ids, std::vector<v1::EfficiencyPrior> priors) const {
  std::vector<v1::Baseline> kept;
  for (const v1::Baseline& b : baselines_) {
    if (std::find(ids.begin(), ids.end(), b.id()) == ids.end()) kept.push_back(b);
  }
  return FromEntities(hardware_, models_, std::move(kept), engine_presets_, origin_,
                      std::move(priors), kv_tiers_);
}

absl::Status Catalog::Index() {
  std::vector<std::string> errors;
  auto where = [this](const std::string& id) {
    auto it = origin_.find(id);
    return it == origin_.end() ? id : it->second;
  };
  auto add = [&](absl::flat_hash_map<std::string, size_t>* index, const std::string& key, size_t i,
                 const std::string& id, const std::string& field) {
    auto [it, inserted] = index->emplace(key, i);
    if (!inserted) {
      errors.push_back(absl::StrFormat("%s: %s = \"%s\"; must be unique", where(id), field, key));
    }
  };
  for (size_t i = 0; i < hardware_.size(); ++i) {
    add(&hardware_index_, hardware_[i].id(), i, hardware_[i].id(), "id");
  }
  for (size_t i = 0; i < priors_.size(); ++i) {
    add(&prior_index_, priors_[i].id(), i, priors_[i].id(), "id");
  }
  for (size_t i = 0; i < kv_tiers_.size(); ++i) {
    add(&kv_tier_index_, kv_tiers_[i].id(), i, kv_tiers_[i].id(), "id");
  }
  for (size_t i = 0; i < engine_presets_.size(); ++i) {
    add(&engine_index_, engine_presets_[i].id(), i, engine_presets_[i].id(), "id");
  }
  for (const v1::EnginePreset& preset : engine_presets_) {
    const std::string& fallback = preset.below_compute_capability_preset();
    if (fallback.empty()) continue;
    const auto it = engine_index_.find(fallback);
    if (it == engine_index_.end() || engine_presets_[it->second].engine() != preset.engine() ||
        fallback == preset.id()) {
      errors.push_back(absl::StrFormat(
          "%s: below_compute_capability_preset = \"%s\"; must name another preset of the "
          "same engine",
          where(preset.id()), fallback));
    }
  }
  for (size_t i = 0; i < models_.size(); ++i) {
    const v1::Model& model = models_[i];
    add(&model_index_, absl::AsciiStrToLower(model.id()), i, model.id(), "id");
    if (!model.hf_repo_id().empty()) {
      add(&model_index_, absl::AsciiStrToLower(model.hf_repo_id()), i, model.id(), "hf_repo_id");
    }
    for (const std::string& alias : model.aliases()) {
      add(&model_index_, absl::AsciiStrToLower(alias), i, model.id(), "aliases");
    }
  }
  for (size_t i = 0; i < baselines_.size(); ++i) {
    const v1::Baseline& baseline = baselines_[i];
    add(&baseline_index_, baseline.id(), i, baseline.id(), "id");
    const v1::DeploymentConfig& deployment = baseline.deployment();
    if (!deployment.hardware_id().empty() && !hardware_index_.contains(deployment.hardware_id())) {
      errors.push_back(
          absl::StrFormat("%s: deployment.hardware_id = \"%s\"; must name a hardware entry",
                          where(baseline.id()), deployment.hardware_id()));
    }
    if (!model_index_.contains(deployment.model_id()) ||
        models_[model_index_[deployment.model_id()]].id() != deployment.model_id()) {
      errors.push_back(
          absl::StrFormat("%s: deployment.model_id = \"%s\"; must name a model entry by id",
                          where(baseline.id()), deployment.model_id()));
    }
  }
  if (!errors.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
  }
  return absl::OkStatus();
}

namespace {
template <typename T>
const T* Lookup(const absl::flat_hash_map<std::string, size_t>& index, const std::vector<T>& items,
                absl::string_view key) {
  auto it = index.find(key);
  return it == index.end() ? nullptr : &items[it->second];
}
}  // namespace

const v1::Hardware* Catalog::FindHardware(absl::string_view id) const {
  return Lookup(hardware_index_, hardware_, id);
}
const v1::Model* Catalog::FindModel(absl::string_view id_or_repo) const {
  return Lookup(model_index_, models_, absl::AsciiStrToLower(id_or_repo));
}
const v1::EfficiencyPrior* Catalog::FindPrior(absl::string_view id) const {
  return Lookup(prior_index_, priors_, id);
}
const v1::KvStorageTierSpec* Catalog::FindKvTier(absl::string_view id) const {
  return Lookup(kv_tier_index_, kv_tiers_, id);
}
const v1::Baseline* Catalog::FindBaseline(absl::string_view id) const {
  return Lookup(baseline_index_, baselines_, id);
}

const std::string& Catalog::OriginOf(absl::string_view id) const {
  static const std::string* const kNone = new std::string();
  auto it = origin_.find(id);
  return it == origin_.end() ? *kNone : it->second;
}

}  // namespace capplan::service
