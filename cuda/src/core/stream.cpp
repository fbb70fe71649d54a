#include "gpubench/cuda/stream.hpp"

namespace gpubench::cuda {

stream::stream(stream_priority priority) {
  int least = 0;
  int greatest = 0;
  GPUBENCH_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  GPUBENCH_CUDA_TRY(cudaStreamCreateWithPriority(
      &s_, cudaStreamNonBlocking, priority == stream_priority::high ? greatest : least));
}

stream& stream::operator=(stream&& o) noexcept {
  if (this != &o) {
    if (s_ != nullptr) GPUBENCH_CUDA_CHECK_NOTHROW(cudaStreamDestroy(s_));
    s_ = std::exchange(o.s_, nullptr);
  }
  return *this;
}

stream::~stream() {
  if (s_ != nullptr) GPUBENCH_CUDA_CHECK_NOTHROW(cudaStreamDestroy(s_));
}

void stream::synchronize() const { GPUBENCH_CUDA_TRY(cudaStreamSynchronize(s_)); }

event::event(bool timing) {
  GPUBENCH_CUDA_TRY(
      cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming));
}

event& event::operator=(event&& o) noexcept {
  if (this != &o) {
    if (e_ != nullptr) GPUBENCH_CUDA_CHECK_NOTHROW(cudaEventDestroy(e_));
    e_ = std::exchange(o.e_, nullptr);
  }
  return *this;
}

event::~event() {
  if (e_ != nullptr) GPUBENCH_CUDA_CHECK_NOTHROW(cudaEventDestroy(e_));
}

void event::record(cudaStream_t s) const { GPUBENCH_CUDA_TRY(cudaEventRecord(e_, s)); }
void event::synchronize() const { GPUBENCH_CUDA_TRY(cudaEventSynchronize(e_)); }
void event::wait_on(cudaStream_t s) const { GPUBENCH_CUDA_TRY(cudaStreamWaitEvent(s, e_, 0)); }

double elapsed_seconds(const event& start, const event& stop) {
  float ms = 0.0F;
  GPUBENCH_CUDA_TRY(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return static_cast<double>(ms) * 1e-3;
}

graph_exec::graph_exec(cudaGraph_t captured) {
  const cudaError_t code = cudaGraphInstantiate(&g_, captured, 0);
  GPUBENCH_CUDA_CHECK_NOTHROW(cudaGraphDestroy(captured));
  GPUBENCH_CUDA_TRY(code);
}

graph_exec& graph_exec::operator=(graph_exec&& o) noexcept {
  if (this != &o) {
    if (g_ != nullptr) GPUBENCH_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(g_));
    g_ = std::exchange(o.g_, nullptr);
  }
  return *this;
}

graph_exec::~graph_exec() {
  if (g_ != nullptr) GPUBENCH_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(g_));
}

void graph_exec::launch(cudaStream_t s) const { GPUBENCH_CUDA_TRY(cudaGraphLaunch(g_, s)); }

graph_capture::graph_capture(cudaStream_t s) : s_(s) {
  GPUBENCH_CUDA_TRY(cudaStreamBeginCapture(s_, cudaStreamCaptureModeThreadLocal));
}

graph_capture::~graph_capture() {
  if (!capturing_) return;
  cudaGraph_t g = nullptr;
  if (cudaStreamEndCapture(s_, &g) == cudaSuccess && g != nullptr)
    GPUBENCH_CUDA_CHECK_NOTHROW(cudaGraphDestroy(g));
}

graph_exec graph_capture::finish() {
  capturing_ = false;
  cudaGraph_t g = nullptr;
  GPUBENCH_CUDA_TRY(cudaStreamEndCapture(s_, &g));
  return graph_exec(g);
}

scoped_device::scoped_device(int device) {
  GPUBENCH_CUDA_TRY(cudaGetDevice(&previous_));
  GPUBENCH_CUDA_TRY(cudaSetDevice(device));
}

scoped_device::~scoped_device() { GPUBENCH_CUDA_CHECK_NOTHROW(cudaSetDevice(previous_)); }

} // namespace gpubench::cuda
