#ifndef CAPPLAN_SERVICE_TRANSLATE_MODEL_TRANSLATION_H_
#define CAPPLAN_SERVICE_TRANSLATE_MODEL_TRANSLATION_H_

// Translation between the storage/API protos (capplan.v1) and the pure model
// structs of model/. No formula lives here: only field mapping, defaults that
// the protos leave implicit, and validation messages with field paths.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "capplan/v1/catalog.pb.h"
#include "model/architecture.h"
#include "model/memory_model.h"
#include "model/step_inputs.h"
#include "model/weight_format.h"

namespace capplan::service {

// The architecture of a catalogue (or config.json-derived) model. Errors are
// InvalidArgument naming "Model.<field> = <value>; <rule>".
absl::StatusOr<model::ModelArchitecture> ToArchitecture(const v1::Model& model);

// A checkpoint's quantization; an unset message or format means the native
// dtype.
absl::StatusOr<model::Quantization> ToQuantization(const v1::Quantization& q);

// Card memory as the engines see it: usable_memory_bytes, or memory_bytes
// when the usable figure is absent.
absl::StatusOr<model::HardwareSpec> ToHardwareSpec(const v1::Hardware& hardware);

// The card's dense peak FLOP/s in `format`; 0 when the catalogue has none.
double PeakFlops(const v1::Hardware& hardware, v1::NumberFormat format);

// The dense peak FLOP/s of the format a checkpoint's GEMMs run in on this
// card (model::GemmFormatPreference: the first format the card states a peak
// for) and that format's name ("BF16"); {0, ""} when the card states none.
struct GemmPeak {
  double flops_per_second = 0;
  std::string format_name;
};
GemmPeak GemmPeakFor(const v1::Hardware& hardware, model::WeightFormat weights,
                     model::NumberType native_dtype);

model::ParallelismSpec ToParallelism(const v1::Parallelism& parallelism);

model::EngineSettings ToEngineSettings(const v1::EngineConfig& engine);

// An engine preset's rules and coefficients.
absl::StatusOr<model::EngineBehaviour> ToEngineBehaviour(const v1::EnginePreset& preset);

// Dotted numeric components of a version string: "0.13.0+faa43dbf.nv26.01" →
// {0, 13, 0}; "~0.6.4 (inferred)" → {0, 6, 4}; empty when none.
std::vector<int> ParseVersion(absl::string_view version);

// -1, 0, 1 comparing dotted versions component by component (missing = 0).
int CompareVersions(const std::vector<int>& a, const std::vector<int>& b);

struct PresetChoice {
  const v1::EnginePreset* preset = nullptr;  // points into the `presets` argument
  // The version is newer than the newest release the presets know.
  bool newer_than_newest = false;
  // No version was given: the newest preset was assumed.
  bool version_assumed = false;
  std::string note;  // human-readable, for MemoryPlan notes
};

// The preset of `kind` whose [min_version, max_version) holds `version`. An
// empty version takes the newest preset (version_assumed). A version past the
// newest preset's checked_through_version takes that preset with
// newer_than_newest set. NotFound when no preset exists for the engine;
// InvalidArgument when the version is older than every preset or unparsable.
// On a card whose compute capability (when stated) is below the preset's
// min_compute_capability, the preset it names for such cards is taken instead,
// with a note.
absl::StatusOr<PresetChoice> ChoosePreset(const std::vector<v1::EnginePreset>& presets,
                                          v1::EngineKind kind, absl::string_view version,
                                          absl::string_view compute_capability = "");

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_TRANSLATE_MODEL_TRANSLATION_H_
