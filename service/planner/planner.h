#ifndef CAPPLAN_SERVICE_PLANNER_PLANNER_H_
#define CAPPLAN_SERVICE_PLANNER_PLANNER_H_

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "capplan/v1/planner.pb.h"
#include "model/budget.h"
#include "service/catalog/catalog.h"
#include "service/catalog/store.h"

namespace capplan::service {

// The planner's operations, as the CLI and the gRPC service see them. Two
// implementations: Planner (in-process, on a catalogue) and RemotePlanner (a
// gRPC client), so the CLI answers the same offline and against a server.
//
// The operations whose work grows with the request take a budget (may be
// null): its cap refuses a request whose estimated work is above it
// (RESOURCE_EXHAUSTED naming the field and the cap) and its stop signal ends
// the work early with the budget's status (DEADLINE_EXCEEDED, CANCELLED).
// A null budget is the planner's own cap without a stop signal. A remote
// planner ignores it: the server applies its own, and the call carries the
// client's deadline.
class PlannerApi {
 public:
  virtual ~PlannerApi() = default;
  virtual absl::StatusOr<v1::ListHardwareResponse> ListHardware(
      const v1::ListHardwareRequest& request) = 0;
  virtual absl::StatusOr<v1::Hardware> GetHardware(const v1::GetHardwareRequest& request) = 0;
  virtual absl::StatusOr<v1::ListModelsResponse> ListModels(
      const v1::ListModelsRequest& request) = 0;
  virtual absl::StatusOr<v1::ModelInfo> GetModel(const v1::GetModelRequest& request) = 0;
  virtual absl::StatusOr<v1::ListBaselinesResponse> ListBaselines(
      const v1::ListBaselinesRequest& request) = 0;
  virtual absl::StatusOr<v1::Baseline> GetBaseline(const v1::GetBaselineRequest& request) = 0;
  virtual absl::StatusOr<v1::MemoryPlan> PlanMemory(const v1::PlanMemoryRequest& request,
                                                    model::Budget* budget) = 0;
  virtual absl::StatusOr<v1::LoadCurve> PredictLoad(const v1::PredictLoadRequest& request,
                                                    model::Budget* budget) = 0;
  virtual absl::StatusOr<v1::PlanResponse> Plan(const v1::PlanRequest& request,
                                                model::Budget* budget) = 0;
  virtual absl::StatusOr<v1::ValidateResponse> Validate(const v1::ValidateRequest& request,
                                                        model::Budget* budget) = 0;
  virtual absl::StatusOr<v1::LintResponse> Lint(const v1::LintRequest& request) = 0;
  virtual absl::StatusOr<v1::AccuracyResponse> Accuracy(const v1::AccuracyRequest& request,
                                                        model::Budget* budget) = 0;
  virtual absl::StatusOr<v1::LoadCurve> SimulateLoad(const v1::PredictLoadRequest& request,
                                                     model::Budget* budget) = 0;
  virtual absl::StatusOr<v1::PutBaselineResponse> PutBaseline(
      const v1::PutBaselineRequest& request) = 0;
  // Stops at `deadline` (the RPC's), returning what was found with
  // truncated = true; `budget` (may be null) ends it earlier with its status
  // when the client goes away or the server drains.
  virtual absl::StatusOr<v1::SearchConfigsResponse> SearchConfigs(
      const v1::SearchConfigsRequest& request, absl::Time deadline, model::Budget* budget) = 0;
};

// Answers requests from the catalogue it holds. Thread-safe; the catalogue can
// be swapped (reload) while requests run: each request uses one snapshot.
// Writes (PutBaseline) go to `store` and are served at once; without a store
// they are refused (FAILED_PRECONDITION).
// What the in-process planner spends on a request without a budget of its
// own (the CLI's offline mode; the server passes budgets with the same cap).
struct PlannerLimits {
  // Largest estimated work of one load curve the client chose point by point
  // (PredictLoad), model/cost.h units: under a second of one core at the cap
  // (a unit is about 1 ns). Plan's and Validate's own search grids get
  // kSearchGridWorkFactor times as much (prepared.h).
  double max_work_units = kDefaultMaxWorkUnits;
  static constexpr double kDefaultMaxWorkUnits = 6e8;
};

class Planner : public PlannerApi {
 public:
  explicit Planner(std::shared_ptr<const Catalog> catalog,
                   std::shared_ptr<CatalogStore> store = nullptr, PlannerLimits limits = {});

  std::shared_ptr<const Catalog> catalog() const;
  void SwapCatalog(std::shared_ptr<const Catalog> catalog);

  absl::StatusOr<v1::ListHardwareResponse> ListHardware(
      const v1::ListHardwareRequest& request) override;
  absl::StatusOr<v1::Hardware> GetHardware(const v1::GetHardwareRequest& request) override;
  absl::StatusOr<v1::ListModelsResponse> ListModels(const v1::ListModelsRequest& request) override;
  absl::StatusOr<v1::ModelInfo> GetModel(const v1::GetModelRequest& request) override;
  absl::StatusOr<v1::ListBaselinesResponse> ListBaselines(
      const v1::ListBaselinesRequest& request) override;
  absl::StatusOr<v1::Baseline> GetBaseline(const v1::GetBaselineRequest& request) override;
  absl::StatusOr<v1::MemoryPlan> PlanMemory(const v1::PlanMemoryRequest& request,
                                            model::Budget* budget) override;
  absl::StatusOr<v1::LoadCurve> PredictLoad(const v1::PredictLoadRequest& request,
                                            model::Budget* budget) override;
  absl::StatusOr<v1::PlanResponse> Plan(const v1::PlanRequest& request,
                                        model::Budget* budget) override;
  absl::StatusOr<v1::ValidateResponse> Validate(const v1::ValidateRequest& request,
                                                model::Budget* budget) override;
  absl::StatusOr<v1::LintResponse> Lint(const v1::LintRequest& request) override;
  absl::StatusOr<v1::AccuracyResponse> Accuracy(const v1::AccuracyRequest& request,
                                                model::Budget* budget) override;
  absl::StatusOr<v1::LoadCurve> SimulateLoad(const v1::PredictLoadRequest& request,
                                             model::Budget* budget) override;
  absl::StatusOr<v1::PutBaselineResponse> PutBaseline(
      const v1::PutBaselineRequest& request) override;
  absl::StatusOr<v1::SearchConfigsResponse> SearchConfigs(const v1::SearchConfigsRequest& request,
                                                          absl::Time deadline,
                                                          model::Budget* budget) override;

 private:
  mutable absl::Mutex mu_;
  std::shared_ptr<const Catalog> catalog_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<CatalogStore> store_;
  PlannerLimits limits_;
  absl::Mutex write_mu_;  // one write at a time, against the newest catalogue
};

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_PLANNER_H_
