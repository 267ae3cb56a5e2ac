#ifndef CAPPLAN_SERVICE_PLANNER_MEMORY_CALIBRATION_H_
#define CAPPLAN_SERVICE_PLANNER_MEMORY_CALIBRATION_H_

// The catalogue as the memory model's calibration corpus (DESIGN §3): every
// baseline that states an engine's KV pool and whose deployment resolves
// (card, model, engine and version) becomes a model::StartupLog, fitted and
// checked leave-one-log-out by model::CalibrateEnginePresets. The presets'
// fitted coefficients in data/engines/ are a fresh fit on this corpus
// (tests/data/memory_calibration_test.cc checks that they are).

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "model/memory_calibration.h"
#include "service/catalog/catalog.h"

namespace capplan::service {

struct StartupLogCorpus {
  std::vector<model::StartupLog> logs;
  // Baselines with an engine figure that cannot be a log here, and why.
  std::vector<std::pair<std::string, std::string>> excluded;
};

// The catalogue's start-up logs. A pool counts when a kv_pools entry without
// a speculative setting other than the deployment's states its tokens, or
// (plain paged pools) its concurrency at a length; the log's weights come
// from a per-GPU weight footprint or memory account, its CUDA-graph memory
// from a per-GPU memory account.
absl::StatusOr<StartupLogCorpus> StartupLogsOf(const Catalog& catalog);

// Every engine preset of the catalogue as the memory model's behaviour, by id.
absl::StatusOr<std::map<std::string, model::EngineBehaviour>> PresetBehaviours(
    const Catalog& catalog);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_MEMORY_CALIBRATION_H_
