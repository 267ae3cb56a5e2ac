#include "service/planner/put_baseline.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "service/planner/lint.h"

namespace capplan::service {
namespace {

constexpr char kPath[] = "PutBaselineRequest";

absl::Status CheckIds(const Catalog& current, const v1::PutBaselineRequest& request) {
  const std::string& id = request.baseline().id();
  if (!IsCatalogId(id)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s.baseline.id = \"%s\"; must be lowercase kebab-case (a-z, 0-9, '-', '.'), 1 to 128 "
        "characters",
        kPath, id.substr(0, 256)));
  }
  if (!request.replace() && current.FindBaseline(id) != nullptr) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "%s.baseline.id = \"%s\"; the catalogue holds it already (set replace to overwrite it)",
        kPath, id));
  }
  if (request.has_model() && !IsCatalogId(request.model().id())) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.model.id = \"%s\"; must be lowercase kebab-case", kPath,
                        request.model().id().substr(0, 256)));
  }
  if (request.has_hardware()) {
    const v1::Hardware& h = request.hardware();
    if (!IsCatalogId(h.id())) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.hardware.id = \"%s\"; must be lowercase kebab-case", kPath, h.id().substr(0, 256)));
    }
    const v1::Hardware* held = current.FindHardware(h.id());
    if (held != nullptr && held->SerializeAsString() != h.SerializeAsString()) {
      return absl::AlreadyExistsError(absl::StrFormat(
          "%s.hardware.id = \"%s\"; the catalogue holds a different card of that id (name it "
          "by hardware_id, or give this card an id of its own)",
          kPath, h.id()));
    }
  }
  return absl::OkStatus();
}

// The first ERROR finding, as the refusal.
absl::Status Refusal(const std::vector<v1::LintFinding>& findings) {
  for (const v1::LintFinding& f : findings) {
    if (f.severity() != v1::SEVERITY_ERROR) continue;
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.baseline.%s: %s (%s)", kPath, f.field(), f.message(), f.code()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PutBaselineResult> PutBaseline(const Catalog& current, CatalogStore& store,
                                              const v1::PutBaselineRequest& request) {
  CAPPLAN_RETURN_IF_ERROR(CheckIds(current, request));
  // A model or card already in the catalogue is not rewritten.
  const bool new_model = request.has_model() && current.FindModel(request.model().id()) == nullptr;
  const bool new_hardware =
      request.has_hardware() && current.FindHardware(request.hardware().id()) == nullptr;
  std::vector<v1::Model> models;
  if (new_model) models.push_back(request.model());
  std::vector<v1::Hardware> hardware;
  if (new_hardware) hardware.push_back(request.hardware());
  CAPPLAN_ASSIGN_OR_RETURN(
      std::shared_ptr<const Catalog> candidate,
      current.WithEntries(std::move(hardware), std::move(models), {request.baseline()}, kPath));
  const v1::Baseline& baseline = *candidate->FindBaseline(request.baseline().id());
  std::vector<v1::LintFinding> findings = LintBaseline(*candidate, baseline);
  CAPPLAN_RETURN_IF_ERROR(Refusal(findings));
  if (new_hardware) {
    CAPPLAN_RETURN_IF_ERROR(store.PutHardware(request.hardware(), /*replace=*/false).status());
  }
  if (new_model) {
    CAPPLAN_RETURN_IF_ERROR(store.PutModel(request.model(), /*replace=*/false).status());
  }
  CAPPLAN_ASSIGN_OR_RETURN(StoredEntity stored, store.PutBaseline(baseline, request.replace()));
  PutBaselineResult result;
  result.response.set_id(baseline.id());
  result.response.set_file(stored.location);
  result.response.set_replaced(stored.replaced);
  for (v1::LintFinding& f : findings) *result.response.add_findings() = std::move(f);
  result.catalog = std::move(candidate);
  return result;
}

}  // namespace capplan::service
