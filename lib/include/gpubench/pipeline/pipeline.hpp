#pragma once
// `gpubench pipeline` (design section 4): two stages of per-batch work, A and B, run serially on
// one stream, pipelined on two streams (A of step n + 1 beside B of step n, a ring of --depth
// buffers between them), as a replayed CUDA graph, and (augment-train) with stage A on CPU threads.
// This header holds the settings (pipeline_config.cpp) and the engine that runs the stages in
// every mode (pipeline_engine.cpp, over the scenarios of pipeline_stages.hpp); the driver
// (pipeline_bench.cpp) measures and verifies through it.
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/core/word_choice.hpp"
#include "gpubench/cuda/mlp.hpp"
#include "gpubench/engine/benchmark.hpp"

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

enum class pipeline_scenario { augment_train, encoder_decoder };
enum class pipeline_mode { serial, streams, graph, cpu_augment };

/// The names of the scenarios and modes, as --scenario and --mode take them.
inline constexpr std::array<word_choice<pipeline_scenario>, 2> pipeline_scenario_words{
    {{"augment-train", pipeline_scenario::augment_train},
     {"encoder-decoder", pipeline_scenario::encoder_decoder}}};
inline constexpr std::array<word_choice<pipeline_mode>, 4> pipeline_mode_words{
    {{"serial", pipeline_mode::serial},
     {"streams", pipeline_mode::streams},
     {"graph", pipeline_mode::graph},
     {"cpu-augment", pipeline_mode::cpu_augment}}};

std::string_view scenario_name(pipeline_scenario s) noexcept;
std::string_view mode_name(pipeline_mode m) noexcept;

struct pipeline_config {
  pipeline_scenario scenario = pipeline_scenario::augment_train;
  int batch = 32;
  int depth = 2;        ///< ring of buffers between the stages
  int steps = 20;       ///< steps per timed sample
  int warmup_steps = 2; ///< steps run before timing and before the verified steps
  float lr = 1e-3F;
  std::vector<pipeline_mode> modes{pipeline_mode::serial, pipeline_mode::streams,
                                   pipeline_mode::graph};
  /// augment-train's stage B: the augmented batch (3 x 256 x 256) average-pooled by `pool`, then
  /// an MLP.
  struct trainer_net {
    int pool = 8;
    int hidden = 2048;
    int layers = 2; ///< hidden layers
    int outputs = 10;
  } trainer;
  /// Tiles per block of the augment kernel when it runs beside stage B (streams, graph): fewer,
  /// longer-lived blocks leave SM room for B's kernels. 0: the choice made when it runs alone.
  int overlap_strip = 4;
  /// encoder-decoder: a frozen encoder (stage A) feeding a decoder trained to reconstruct.
  struct coder_nets {
    int in_features = 1024;
    int enc_width = 2048;
    int enc_layers = 4;
    int dec_width = 1024;
    int dec_layers = 1; ///< hidden layers of the decoder
  } coder;

  [[nodiscard]] bool has(pipeline_mode m) const noexcept;
};

struct augment_config;
/// The augment settings of augment-train's stage A: the augment benchmark's defaults at `batch`.
augment_config pipeline_augment_config(int batch);
/// Floats of one slot between the stages: an augmented batch, or a batch of encoder features.
std::size_t pipeline_slot_floats(const pipeline_config& cfg);

/// The networks of each scenario.
cuda::mlp_shape trainer_shape(const pipeline_config& cfg); ///< augment-train, stage B
cuda::mlp_shape encoder_shape(const pipeline_config& cfg); ///< encoder-decoder, stage A (frozen)
cuda::mlp_shape decoder_shape(const pipeline_config& cfg); ///< encoder-decoder, stage B

/// Work per step of each stage: FLOPs counted as in cuda::mlp_shape, and least bytes moved.
struct stage_work {
  double a_flops = 0;
  double b_flops = 0;
  double a_bytes = 0;
  double b_bytes = 0;
};
stage_work pipeline_work(const pipeline_config& cfg);

/// Device bytes a point needs (rings, networks, cuBLAS workspaces), for the fit check.
std::size_t pipeline_device_bytes(const pipeline_config& cfg);

/// Runs the two stages in every mode. Step t reads input t % depth (the inputs, augment
/// parameters and targets form rings of `depth` distinct batches) and uses buffer t % depth
/// between the stages, so that every mode computes exactly the same thing.
class pipeline_engine {
public:
  pipeline_engine(const pipeline_config& cfg, std::uint64_t seed, thread_pool& pool);
  pipeline_engine(const pipeline_engine&) = delete;
  pipeline_engine& operator=(const pipeline_engine&) = delete;
  ~pipeline_engine();

  /// Trained networks back to their initial weights, step counter to 0.
  void reset_weights();
  /// Waits for everything, then runs stage A of the current step in `mode`'s way (the pipeline's
  /// fill). Graph mode captures its graphs here the first time.
  void start(pipeline_mode mode, cudaStream_t main);
  /// `n` steady-state steps in `mode` (the last start()): B of steps t..t+n-1 and A of
  /// t+1..t+n, forked from and joined back to `main`. Graph mode replays a captured graph when
  /// n == steps and enqueues the streams path otherwise.
  void run(pipeline_mode mode, int n, cudaStream_t main);
  /// Verification reference for cpu-augment: the same CPU-augmented batches, no overlap.
  void run_cpu_serial(int n, cudaStream_t main);
  /// Stage A alone (n times) and stage B alone (n times) on `main`.
  void stage_a_only(int n, cudaStream_t main);
  void stage_b_only(int n, cudaStream_t main);
  /// cpu-augment's stage A alone: CPU augment and upload, n times, waiting for each upload.
  void cpu_stage_a_only(int n, cudaStream_t main);

  /// The trained network's parameters (waits for the device).
  [[nodiscard]] std::vector<float> trained_weights() const;
  /// The augmented batch of ring entry 0 from the GPU (augment-train; for the cpu-augment check).
  /// This and cpu_augmented_batch() stop the cpu-augment loader first: afterwards the caller may
  /// use the thread pool until the next start() or run().
  [[nodiscard]] std::vector<float> gpu_augmented_batch(cudaStream_t main);
  /// CPU-augmented batch of ring entry 0.
  [[nodiscard]] std::vector<float> cpu_augmented_batch();
  [[nodiscard]] std::uint64_t step() const noexcept;

  struct state;

private:
  std::unique_ptr<state> st_;
};

} // namespace gpubench
