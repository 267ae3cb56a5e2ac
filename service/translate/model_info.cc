#include "service/translate/model_info.h"

#include <cmath>

#include "base/status_macros.h"
#include "model/architecture.h"
#include "model/memory_model.h"
#include "service/translate/model_translation.h"

namespace capplan::service {

absl::StatusOr<v1::ModelInfo> DescribeModel(const v1::Model& model) {
  v1::ModelInfo info;
  *info.mutable_model() = model;
  CAPPLAN_ASSIGN_OR_RETURN(model::ModelArchitecture arch, ToArchitecture(model));
  CAPPLAN_RETURN_IF_ERROR(model::ValidateArchitecture(arch));
  model::ParameterCounts counts = model::ComputeParameterCounts(arch);
  v1::ModelDerived* derived = info.mutable_derived();
  derived->set_total_parameters(static_cast<uint64_t>(counts.total));
  derived->set_active_parameters_per_token(static_cast<uint64_t>(counts.active_per_token));
  derived->set_embedding_parameters(static_cast<uint64_t>(counts.embeddings));
  derived->set_num_layers(static_cast<uint32_t>(arch.layers.size()));
  // 16-bit KV (the field's name says so); recurrent state at the memory
  // model's default element sizes (no engine is chosen here).
  derived->set_kv_bytes_per_token_bf16(
      static_cast<uint64_t>(std::llround(model::KvBytesPerToken(arch, 2.0))));
  const model::EngineBehaviour engine_defaults;
  derived->set_state_bytes_per_request(
      static_cast<uint64_t>(std::llround(model::StateBytesPerRequest(
          arch, engine_defaults.conv_state_bytes, engine_defaults.ssm_state_bytes))));
  return info;
}

}  // namespace capplan::service
