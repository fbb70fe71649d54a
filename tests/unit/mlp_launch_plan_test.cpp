// The pipeline model's launch plan (cuda::plan_launches): what each layer issues in a forward
// pass and in a training step, for each fusion, checked against the counts docs/pipeline.md gives.
// The GPU tests check the network's launch counter against the same plan.
#include "gpubench/cuda/mlp.hpp"
#include "gpubench/pipeline/pipeline.hpp"

#include <catch2/catch.hpp>

using namespace gpubench;
using cuda::mlp_fusion;

namespace {

/// Layer l's (forward, backward) launches.
std::vector<std::pair<int, int>> by_layer(const cuda::mlp_launch_plan& p) {
  std::vector<std::pair<int, int>> out;
  for (const auto& l : p.layers) out.emplace_back(l.forward, l.backward);
  return out;
}

} // namespace

TEST_CASE("with full fusion a layer is one product forward, one or two backward",
          "[pipeline][plan]") {
  const cuda::mlp_shape shape{{7, 5, 6, 3}, false};
  const auto p = cuda::plan_launches(shape, mlp_fusion::full);
  // Forward: the product with its bias + ReLU epilogue. Backward: the weight gradient, and for
  // layers 1 and 2 the input gradient with the ReLU gradient and bias gradient in its epilogue.
  CHECK(by_layer(p) == std::vector<std::pair<int, int>>{{1, 1}, {1, 2}, {1, 2}});
  CHECK(p.loss == 1);
  CHECK(p.update == 1);
  CHECK(p.forward_total() == 3);
  CHECK(p.train_total() == 3 * 3 + 1); // 3 L + 1: L forward, L + (L - 1) backward, loss, update
}

TEST_CASE("bias_act fusion keeps the ReLU-gradient kernel, none also the bias kernel",
          "[pipeline][plan]") {
  const cuda::mlp_shape shape{{7, 5, 6, 3}, false};
  const auto b = cuda::plan_launches(shape, mlp_fusion::bias_act);
  CHECK(by_layer(b) == std::vector<std::pair<int, int>>{{1, 1}, {1, 3}, {1, 3}});
  CHECK(b.train_total() == 3 + 1 + (1 + 2 * 3) + 1); // forward, loss, backward, update
  const auto n = cuda::plan_launches(shape, mlp_fusion::none);
  CHECK(by_layer(n) == std::vector<std::pair<int, int>>{{2, 1}, {2, 3}, {2, 3}});
  CHECK(n.forward_total() == 6);
  CHECK(n.train_total() == 5 * 3); // 5 L: the unfused model
}

TEST_CASE("the encoder-decoder step: 11 launches fused, 18 unfused", "[pipeline][plan]") {
  const pipeline_config cfg; // 1024 -> 4 x 2048 encoder, 2048 -> 1024 -> 1024 decoder
  const auto enc = encoder_shape(cfg);
  const auto dec = decoder_shape(cfg);
  REQUIRE(enc.layers() == 4);
  REQUIRE(dec.layers() == 2);
  CHECK(cuda::plan_launches(enc, mlp_fusion::full).forward_total() == 4);
  CHECK(cuda::plan_launches(dec, mlp_fusion::full).train_total() == 7);
  CHECK(cuda::plan_launches(enc, mlp_fusion::full).forward_total() +
            cuda::plan_launches(dec, mlp_fusion::full).train_total() ==
        11);
  CHECK(cuda::plan_launches(enc, mlp_fusion::none).forward_total() +
            cuda::plan_launches(dec, mlp_fusion::none).train_total() ==
        18);
}

TEST_CASE("fusions have names", "[pipeline][plan]") {
  CHECK(std::string(cuda::to_string(mlp_fusion::none)) == "none");
  CHECK(std::string(cuda::to_string(mlp_fusion::bias_act)) == "bias_act");
  CHECK(std::string(cuda::to_string(mlp_fusion::full)) == "full");
}
