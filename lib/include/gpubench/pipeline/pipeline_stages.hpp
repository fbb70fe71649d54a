#pragma once
// What one pipeline scenario runs in each stage, on one entry of the ring of `depth` batches:
// the scenario owns its inputs and networks, pipeline_engine owns the slots between the stages,
// the streams, the events and the modes that schedule the stages.
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/cuda/mlp.hpp"
#include "gpubench/pipeline/pipeline.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace gpubench {

class pipeline_stages {
public:
  pipeline_stages() = default;
  pipeline_stages(const pipeline_stages&) = delete;
  pipeline_stages& operator=(const pipeline_stages&) = delete;
  virtual ~pipeline_stages() = default;

  /// Whether stage A augments images on the GPU: it starts with an upload that touches no slot
  /// (upload()), and stage B marks the point where it leaves most SMs idle. The pipelined modes
  /// schedule those two parts apart.
  [[nodiscard]] virtual bool augments() const = 0;
  /// Stage A's upload of ring entry k's input (augmented scenarios only).
  virtual void upload(int k, cudaStream_t s) = 0;
  /// The part of stage A that writes `slot` from ring entry k; `beside_b` when it runs beside
  /// stage B.
  virtual void compute_a(int k, float* slot, cuda::blas_handle& blas, cudaStream_t s,
                         bool beside_b) = 0;
  /// Stage B on `slot` with ring entry k's targets; `narrow` (when given) is recorded where the
  /// step leaves most SMs idle.
  virtual void stage_b(int k, const float* slot, cuda::blas_handle& blas, cudaStream_t s,
                       cudaEvent_t narrow) = 0;
  /// Stage A on the CPU into `host_out` (pipeline_slot_floats() floats), for cpu-augment; the
  /// scenarios without it throw.
  virtual void cpu_stage_a(int k, float* host_out, thread_pool& pool) = 0;
  /// The network stage B trains, and its initial parameters.
  [[nodiscard]] virtual cuda::mlp& trained() = 0;
  [[nodiscard]] virtual const std::vector<float>& initial_params() const = 0;
};

/// The stages of `cfg.scenario`, with their inputs and networks on the device (legacy-stream
/// copies: the caller synchronizes the device before using them on other streams).
std::unique_ptr<pipeline_stages> make_pipeline_stages(const pipeline_config& cfg,
                                                      std::uint64_t seed, thread_pool& pool);
std::unique_ptr<pipeline_stages> make_augment_train_stages(const pipeline_config& cfg,
                                                           std::uint64_t seed, thread_pool& pool);
std::unique_ptr<pipeline_stages> make_encoder_decoder_stages(const pipeline_config& cfg,
                                                             std::uint64_t seed);

/// Streams of the counter-based generator (random.hpp) that each scenario draws its data from.
namespace pipeline_streams {
inline constexpr std::uint64_t image = 0x51A6E;
inline constexpr std::uint64_t target = 0x7A26E7;
inline constexpr std::uint64_t input = 0x1A9B7;
inline constexpr std::uint64_t trainer = 0x7EA1;
inline constexpr std::uint64_t encoder = 0xE2C0;
inline constexpr std::uint64_t decoder = 0xDEC0;
} // namespace pipeline_streams

} // namespace gpubench
