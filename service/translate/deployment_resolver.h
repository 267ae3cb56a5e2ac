#ifndef CAPPLAN_SERVICE_TRANSLATE_DEPLOYMENT_RESOLVER_H_
#define CAPPLAN_SERVICE_TRANSLATE_DEPLOYMENT_RESOLVER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "capplan/v1/planner.pb.h"
#include "model/memory_model.h"
#include "service/catalog/catalog.h"
#include "service/translate/model_translation.h"

namespace capplan::service {

// An API Deployment made concrete: the baseline it starts from (if any) with
// the request's overrides applied, checked, and turned into the memory
// model's input.
struct ResolvedDeployment {
  model::MemoryPlanInput input;
  v1::Model model;       // the catalogue entry or the parsed config.json
  std::string model_id;  // empty for a config.json model
  // The catalogue's card, or the request's inline one (Deployment.hardware),
  // which `inline_hardware` then owns.
  const v1::Hardware* hardware = nullptr;
  std::shared_ptr<const v1::Hardware> inline_hardware;
  const v1::Baseline* baseline = nullptr;  // the baseline_id it started from
  v1::EngineConfig engine;                 // merged engine configuration
  v1::Parallelism parallelism;             // merged
  v1::Quantization quantization;           // effective checkpoint format
  uint32_t gpu_count = 1;
  // The request gave gpu_count without tp: tp was derived (gpu_count ÷ pp),
  // so errors about tp are errors about gpu_count.
  bool tp_from_gpu_count = false;
  PresetChoice preset;
  // EngineSettings.kv_pool_tokens: a pool the user states.
  std::optional<uint64_t> stated_kv_pool_tokens;
  // The deployment's field path in the request ("PlanRequest.deployment"),
  // which prefixes errors found after resolution.
  std::string path;
};

// Resolves `deployment`; `path` is its field path in the request
// ("PlanMemoryRequest.deployment") and prefixes every error: INVALID_ARGUMENT
// with the field, value and rule; NOT_FOUND for unknown ids;
// FAILED_PRECONDITION when a baseline withholds what the plan needs. An
// inline `hardware` is validated like a catalogue entry (ValidateEntity,
// citations optional): INVALID_ARGUMENT "<path>.hardware.<field> = v; rule".
absl::StatusOr<ResolvedDeployment> ResolveDeployment(const Catalog& catalog,
                                                     const v1::Deployment& deployment,
                                                     const std::string& path);

// The same, but a baseline that withholds its GPU (and a deployment that names
// none) resolves with hardware == nullptr and an empty input.hardware instead
// of FAILED_PRECONDITION: PredictLoad fits and predicts such a baseline's own
// rows in the card's unknown units (load_service.h).
absl::StatusOr<ResolvedDeployment> ResolveDeploymentAllowingWithheldHardware(
    const Catalog& catalog, const v1::Deployment& deployment, const std::string& path);

// A card a request gives whole (Deployment.hardware, SearchConstraints.hardware):
// structure and ValidateEntity as for a catalogue entry, citations optional,
// and its id not a catalogue card's. INVALID_ARGUMENT "<path>.<field> = v;
// rule" (`path` is the card's own, e.g. "PlanRequest.deployment.hardware").
absl::Status CheckInlineHardware(const Catalog& catalog, const v1::Hardware& card,
                                 const std::string& path);

// The deployment asks for speculative decoding (a method other than NONE).
bool SpeculationOn(const v1::SpeculativeDecoding& s);

// True when `baseline` measured the configuration `resolved` describes: same
// model, hardware, GPU count, TP and PP, engine, weight format and the engine
// memory settings the baseline states. Expert parallelism and speculative
// decoding are matched figure by figure (a baseline may measure both ways).
bool BaselineMatches(const v1::Baseline& baseline, const ResolvedDeployment& resolved);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_TRANSLATE_DEPLOYMENT_RESOLVER_H_
