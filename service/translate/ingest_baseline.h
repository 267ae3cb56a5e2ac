#ifndef CAPPLAN_SERVICE_TRANSLATE_INGEST_BASELINE_H_
#define CAPPLAN_SERVICE_TRANSLATE_INGEST_BASELINE_H_

// From parsed measurement files (ingest.h) and what the user states about the
// deployment to one catalogue Baseline, the entry `capplan ingest` writes.
// Figures come only from the files; the deployment and provenance only from
// the user or the files' own statements. Nothing is guessed.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "capplan/v1/catalog.pb.h"
#include "capplan/v1/planner.pb.h"
#include "service/translate/ingest.h"

namespace capplan::service {

struct IngestSpec {
  std::string id;
  std::string title;  // empty: "<model> on <n> × <gpu> (<engine> <version>)"
  // The deployment as the user gives it (deployment flags or a launch line),
  // with model_id the catalogue id of the model.
  v1::Deployment deployment;
  // source_document, measured_by, date, notes as the user gives them; the
  // files' tool, date and TPOT definition fill what is empty.
  v1::Provenance provenance;
  // Tokens per request when the files do not state them.
  std::optional<double> input_tokens;
  std::optional<double> output_tokens;
  // The catalogue entry of deployment.model_id, when known: an engine log's
  // quantization method or dtype is checked against its weight format.
  std::optional<v1::Model> model;
};

// INVALID_ARGUMENT when the files hold nothing to measure (no run, no log
// fact), when they name different models, or when combining fails (ingest.h).
//
// An engine log fills the engine settings, tp and pp the user left unset. Its
// weight format (EngineLogCatalogParts.weight_format) becomes the
// deployment's quantization only when the user gave none and the model entry
// is known and holds a different format (an online-quantized or
// dtype-overridden run: "--quantization fp8" or "dtype float16" on a
// bfloat16 checkpoint); the same format is the entry's own and stays
// implicit, and so does a format the log's method name also covers (vLLM's
// "fp8" on an FP8_BLOCK entry, "gptq" on an 8-bit one); with no entry known
// the log's statement goes to other_findings.
absl::StatusOr<v1::Baseline> AssembleBaseline(const IngestSpec& spec,
                                              absl::Span<const IngestedFile> files);

// The API's deployment as the catalogue stores a measured configuration.
v1::DeploymentConfig ToDeploymentConfig(const v1::Deployment& deployment);

// A catalogue id for a Hugging Face repo id: its name part, lowercase, with
// characters outside [a-z0-9.-] as '-': "Qwen/Qwen3-8B" → "qwen3-8b". Empty
// when nothing is left.
std::string ModelIdFromRepo(absl::string_view repo_id);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_TRANSLATE_INGEST_BASELINE_H_
