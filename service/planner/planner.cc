#include "service/planner/planner.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "service/catalog/suggest.h"
#include "service/planner/held_out.h"
#include "service/planner/lint.h"
#include "service/planner/load.h"
#include "service/planner/memory.h"
#include "service/planner/plan.h"
#include "service/planner/put_baseline.h"
#include "service/planner/search.h"
#include "service/planner/validate.h"
#include "service/translate/hf_config.h"
#include "service/translate/model_info.h"
#include "service/translate/request_validation.h"

namespace capplan::service {
namespace {

absl::Status RequireId(absl::string_view message, const std::string& id) {
  if (id.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(message, ".id is empty; must name a catalogue entry"));
  }
  return absl::OkStatus();
}

absl::Status NotInCatalogue(absl::string_view kind, const std::string& id,
                            absl::string_view list_command,
                            const std::vector<std::string>& suggestions) {
  return absl::NotFoundError(absl::StrFormat("%s '%s' is not in the catalogue%s (%s lists the ids)",
                                             kind, id, DidYouMean(suggestions), list_command));
}

}  // namespace

Planner::Planner(std::shared_ptr<const Catalog> catalog, std::shared_ptr<CatalogStore> store,
                 PlannerLimits limits)
    : catalog_(std::move(catalog)), store_(std::move(store)), limits_(limits) {}

std::shared_ptr<const Catalog> Planner::catalog() const {
  absl::MutexLock lock(&mu_);
  return catalog_;
}

void Planner::SwapCatalog(std::shared_ptr<const Catalog> catalog) {
  absl::MutexLock lock(&mu_);
  catalog_ = std::move(catalog);
}

absl::StatusOr<v1::ListHardwareResponse> Planner::ListHardware(
    const v1::ListHardwareRequest& request) {
  CAPPLAN_RETURN_IF_ERROR(ValidateLookupRequest(request));
  std::shared_ptr<const Catalog> catalog = this->catalog();
  v1::ListHardwareResponse response;
  std::string vendor = absl::AsciiStrToLower(request.vendor());
  for (const v1::Hardware& hardware : catalog->hardware()) {
    if (!vendor.empty() && absl::AsciiStrToLower(hardware.vendor()) != vendor) {
      continue;
    }
    *response.add_hardware() = hardware;
  }
  return response;
}

absl::StatusOr<v1::Hardware> Planner::GetHardware(const v1::GetHardwareRequest& request) {
  CAPPLAN_RETURN_IF_ERROR(ValidateLookupRequest(request));
  CAPPLAN_RETURN_IF_ERROR(RequireId("GetHardwareRequest", request.id()));
  std::shared_ptr<const Catalog> catalog = this->catalog();
  const v1::Hardware* hardware = catalog->FindHardware(request.id());
  if (hardware == nullptr) {
    return NotInCatalogue("hardware", request.id(), "ListHardware",
                          SuggestHardware(*catalog, request.id()));
  }
  return *hardware;
}

absl::StatusOr<v1::ListModelsResponse> Planner::ListModels(const v1::ListModelsRequest& request) {
  CAPPLAN_RETURN_IF_ERROR(ValidateLookupRequest(request));
  std::shared_ptr<const Catalog> catalog = this->catalog();
  v1::ListModelsResponse response;
  for (const v1::Model& model : catalog->models()) {
    if (!request.family().empty() && model.family() != request.family()) {
      continue;
    }
    CAPPLAN_ASSIGN_OR_RETURN(*response.add_models(), DescribeModel(model));
  }
  return response;
}

absl::StatusOr<v1::ModelInfo> Planner::GetModel(const v1::GetModelRequest& request) {
  CAPPLAN_RETURN_IF_ERROR(ValidateLookupRequest(request));
  if (!request.model_config_json().empty()) {
    if (!request.id().empty()) {
      return absl::InvalidArgumentError(
          "GetModelRequest: id and model_config_json exclude each other; give one");
    }
    absl::StatusOr<v1::Model> parsed = ModelFromHfConfig(request.model_config_json());
    if (!parsed.ok()) {
      return absl::Status(
          parsed.status().code(),
          absl::StrCat("GetModelRequest.model_config_json: ", parsed.status().message()));
    }
    return DescribeModel(*parsed);
  }
  CAPPLAN_RETURN_IF_ERROR(RequireId("GetModelRequest", request.id()));
  std::shared_ptr<const Catalog> catalog = this->catalog();
  const v1::Model* model = catalog->FindModel(request.id());
  if (model == nullptr) {
    return NotInCatalogue("model", request.id(), "ListModels",
                          SuggestModels(*catalog, request.id()));
  }
  return DescribeModel(*model);
}

absl::StatusOr<v1::ListBaselinesResponse> Planner::ListBaselines(
    const v1::ListBaselinesRequest& request) {
  CAPPLAN_RETURN_IF_ERROR(ValidateLookupRequest(request));
  std::shared_ptr<const Catalog> catalog = this->catalog();
  if (!request.model_id().empty() && catalog->FindModel(request.model_id()) == nullptr) {
    return absl::NotFoundError(absl::StrFormat(
        "ListBaselinesRequest.model_id = \"%s\"; no such model in the "
        "catalogue%s",
        request.model_id(), DidYouMean(SuggestModels(*catalog, request.model_id()))));
  }
  if (!request.hardware_id().empty() && catalog->FindHardware(request.hardware_id()) == nullptr) {
    return absl::NotFoundError(absl::StrFormat(
        "ListBaselinesRequest.hardware_id = \"%s\"; no such hardware in the "
        "catalogue%s",
        request.hardware_id(), DidYouMean(SuggestHardware(*catalog, request.hardware_id()))));
  }
  const v1::Model* model =
      request.model_id().empty() ? nullptr : catalog->FindModel(request.model_id());
  v1::ListBaselinesResponse response;
  for (const v1::Baseline& baseline : catalog->baselines()) {
    const v1::DeploymentConfig& d = baseline.deployment();
    if (model != nullptr && d.model_id() != model->id()) continue;
    if (!request.hardware_id().empty() && d.hardware_id() != request.hardware_id()) {
      continue;
    }
    if (request.engine() != v1::ENGINE_KIND_UNSPECIFIED && d.engine().kind() != request.engine()) {
      continue;
    }
    *response.add_baselines() = baseline;
  }
  return response;
}

absl::StatusOr<v1::Baseline> Planner::GetBaseline(const v1::GetBaselineRequest& request) {
  CAPPLAN_RETURN_IF_ERROR(ValidateLookupRequest(request));
  CAPPLAN_RETURN_IF_ERROR(RequireId("GetBaselineRequest", request.id()));
  std::shared_ptr<const Catalog> catalog = this->catalog();
  const v1::Baseline* baseline = catalog->FindBaseline(request.id());
  if (baseline == nullptr) {
    return NotInCatalogue("baseline", request.id(), "ListBaselines",
                          SuggestBaselines(*catalog, request.id()));
  }
  return *baseline;
}

absl::StatusOr<v1::MemoryPlan> Planner::PlanMemory(const v1::PlanMemoryRequest& request,
                                                   model::Budget*) {
  return service::PlanMemory(*catalog(), request);
}

absl::StatusOr<v1::LoadCurve> Planner::PredictLoad(const v1::PredictLoadRequest& request,
                                                   model::Budget* budget) {
  model::Budget own(limits_.max_work_units, nullptr);
  return service::PredictLoad(*catalog(), request, nullptr, budget != nullptr ? budget : &own);
}

absl::StatusOr<v1::PlanResponse> Planner::Plan(const v1::PlanRequest& request,
                                               model::Budget* budget) {
  model::Budget own(limits_.max_work_units, nullptr);
  return service::Plan(*catalog(), request, nullptr, budget != nullptr ? budget : &own);
}

absl::StatusOr<v1::ValidateResponse> Planner::Validate(const v1::ValidateRequest& request,
                                                       model::Budget* budget) {
  model::Budget own(limits_.max_work_units, nullptr);
  return service::Validate(*catalog(), request, nullptr, budget != nullptr ? budget : &own);
}

absl::StatusOr<v1::LintResponse> Planner::Lint(const v1::LintRequest& request) {
  CAPPLAN_RETURN_IF_ERROR(ValidateLintRequest(request));
  return service::Lint(*catalog(), request);
}

absl::StatusOr<v1::AccuracyResponse> Planner::Accuracy(const v1::AccuracyRequest& request,
                                                       model::Budget* budget) {
  CAPPLAN_RETURN_IF_ERROR(ValidateAccuracyRequest(request));
  absl::StatusOr<v1::AccuracyResponse> response = service::Accuracy(*catalog(), request);
  // The catalogue bounds this work; a stopped budget still ends the call
  // with its own status rather than an answer the client no longer waits for.
  CAPPLAN_RETURN_IF_ERROR(model::BudgetStatus(budget));
  return response;
}

absl::StatusOr<v1::SearchConfigsResponse> Planner::SearchConfigs(
    const v1::SearchConfigsRequest& request, absl::Time deadline, model::Budget* budget) {
  return service::SearchConfigs(*catalog(), request, deadline, /*counters=*/nullptr, budget);
}

absl::StatusOr<v1::LoadCurve> Planner::SimulateLoad(const v1::PredictLoadRequest& request,
                                                    model::Budget* budget) {
  return service::SimulateLoad(*catalog(), request, budget);
}

absl::StatusOr<v1::PutBaselineResponse> Planner::PutBaseline(
    const v1::PutBaselineRequest& request) {
  if (store_ == nullptr) {
    return absl::FailedPreconditionError(
        "PutBaseline: this planner has no writable catalogue store");
  }
  CAPPLAN_RETURN_IF_ERROR(ValidatePutBaselineRequest(request));
  absl::MutexLock lock(&write_mu_);
  CAPPLAN_ASSIGN_OR_RETURN(PutBaselineResult result,
                           service::PutBaseline(*catalog(), *store_, request));
  SwapCatalog(std::move(result.catalog));
  return std::move(result.response);
}

}  // namespace capplan::service
