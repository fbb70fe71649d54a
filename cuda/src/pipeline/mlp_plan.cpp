// The launch plan of the pipeline's model: what one forward pass and one training step issue, by
// layer and fusion (see mlp_fusion). Plain C++, so that the unit tests check it without a GPU.
#include "gpubench/cuda/mlp.hpp"

namespace gpubench::cuda {

int mlp_launch_plan::forward_total() const noexcept {
  int n = 0;
  for (const auto& l : layers) n += l.forward;
  return n;
}

int mlp_launch_plan::train_total() const noexcept {
  int n = loss + update;
  for (const auto& l : layers) n += l.forward + l.backward;
  return n;
}

mlp_launch_plan plan_launches(const mlp_shape& shape, mlp_fusion fusion) {
  mlp_launch_plan plan;
  for (int l = 0; l < shape.layers(); ++l) {
    mlp_layer_launches x;
    // The product, plus the bias + activation kernel unless the epilogue does it.
    x.forward = fusion == mlp_fusion::none ? 2 : 1;
    // The weight gradient; every layer but the first also passes the gradient on to its input
    // (a product) and through the previous layer's ReLU with that layer's bias gradient (a
    // kernel unless the product's DRELU_BGRAD epilogue does it).
    x.backward = 1;
    if (l > 0) x.backward += fusion == mlp_fusion::full ? 1 : 2;
    plan.layers.push_back(x);
  }
  return plan;
}

const char* to_string(mlp_fusion fusion) noexcept {
  switch (fusion) {
  case mlp_fusion::none: return "none";
  case mlp_fusion::bias_act: return "bias_act";
  case mlp_fusion::full: return "full";
  }
  return "?";
}

} // namespace gpubench::cuda
