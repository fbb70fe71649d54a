#pragma once
// Move-only RAII for streams, events, graphs and graph capture, and the current device.
#include "gpubench/cuda/error.hpp"

#include <utility>

namespace gpubench::cuda {

/// Scheduling priority of a stream's kernels when several streams compete for the SMs.
enum class stream_priority { normal, high };

class stream {
public:
  explicit stream(stream_priority priority = stream_priority::normal);
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  stream(stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  stream& operator=(stream&& o) noexcept;
  ~stream();
  [[nodiscard]] cudaStream_t get() const noexcept { return s_; }
  void synchronize() const;

private:
  cudaStream_t s_ = nullptr;
};

class event {
public:
  /// `timing` false makes a lighter event usable only for dependencies.
  explicit event(bool timing = true);
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  event(event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  event& operator=(event&& o) noexcept;
  ~event();
  [[nodiscard]] cudaEvent_t get() const noexcept { return e_; }
  void record(cudaStream_t s) const;
  void synchronize() const;
  /// Makes `s` wait for this event (recorded earlier on another stream).
  void wait_on(cudaStream_t s) const;

private:
  cudaEvent_t e_ = nullptr;
};

/// Seconds between two recorded events (after `stop` completed).
double elapsed_seconds(const event& start, const event& stop);

/// An instantiated CUDA graph, captured from a stream.
class graph_exec {
public:
  graph_exec() = default;
  /// Instantiates from a captured graph and destroys the graph itself.
  explicit graph_exec(cudaGraph_t captured);
  graph_exec(const graph_exec&) = delete;
  graph_exec& operator=(const graph_exec&) = delete;
  graph_exec(graph_exec&& o) noexcept : g_(std::exchange(o.g_, nullptr)) {}
  graph_exec& operator=(graph_exec&& o) noexcept;
  ~graph_exec();
  void launch(cudaStream_t s) const;

private:
  cudaGraphExec_t g_ = nullptr;
};

/// Captures what the calling thread enqueues on a stream into a graph
/// (cudaStreamBeginCapture, thread-local mode). finish() ends the capture and instantiates the
/// graph; a capture left without finish() (an exception) is ended and its graph dropped, so the
/// stream can run work again.
class graph_capture {
public:
  explicit graph_capture(cudaStream_t s);
  graph_capture(const graph_capture&) = delete;
  graph_capture& operator=(const graph_capture&) = delete;
  ~graph_capture();
  /// Ends the capture; the graph, instantiated. Once only.
  graph_exec finish();

private:
  cudaStream_t s_;
  bool capturing_ = true;
};

/// Makes `device` current for the lifetime of the guard, restoring the previous one after.
class scoped_device {
public:
  explicit scoped_device(int device);
  scoped_device(const scoped_device&) = delete;
  scoped_device& operator=(const scoped_device&) = delete;
  ~scoped_device();

private:
  int previous_ = 0;
};

} // namespace gpubench::cuda
