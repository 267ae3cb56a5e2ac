#include "service/model_info.h"

namespace capplan::service {

absl::StatusOr<v1::ModelInfo> DescribeModel(const v1::Model& model) {
  v1::ModelInfo info;
  *info.mutable_model() = model;
  uint32_t layers = 0;
  for (const v1::LayerBlock& block : model.layer_blocks()) {
    for (const v1::LayerSpec& spec : block.layers()) {
      layers += block.repeat() * spec.count();
    }
  }
  info.mutable_derived()->set_num_layers(layers);
  return info;
}

}  // namespace capplan::service
