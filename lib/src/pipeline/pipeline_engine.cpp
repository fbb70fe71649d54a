// The pipeline's two stages and the modes that schedule them. Dependencies between the stages are
// events both ways: B(t) waits for A(t) (a_done), and A(t + depth) waits for B(t) (b_done), which
// last read the buffer A(t + depth) overwrites. Every run forks from and joins back to the caller's
// stream, so a run depends on earlier runs only through that join; inside a run only events
// recorded in the same run are waited on, which is what lets a run be captured as a CUDA graph.
#include "gpubench/cuda/runtime.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/engine/environment.hpp"
#include "gpubench/pipeline/pipeline.hpp"
#include "gpubench/pipeline/pipeline_loader.hpp"
#include "gpubench/pipeline/pipeline_stages.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace gpubench {

namespace {

/// The host thread that enqueues encoder-decoder's stage A in `streams` mode, beside the caller's
/// thread enqueuing stage B: each stage's launches cost the host as much as its kernels take on
/// the GPU, so one thread enqueuing both paces the GPU. One job at a time; run() hands it a job
/// and wait() returns when the job is done, rethrowing what it threw.
class stage_a_thread {
public:
  explicit stage_a_thread(int device) : device_(device), worker_([this] { loop(); }) {}
  stage_a_thread(const stage_a_thread&) = delete;
  stage_a_thread& operator=(const stage_a_thread&) = delete;
  ~stage_a_thread() {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }

  void run(std::function<void()> job) {
    {
      const std::lock_guard lock(mutex_);
      job_ = std::move(job);
      done_ = false;
      error_ = nullptr;
    }
    cv_.notify_all();
  }

  void wait() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return done_; });
    if (error_) std::rethrow_exception(error_);
  }

private:
  void loop() {
    bool device_set = false;
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return stop_ || job_; });
        if (stop_) return;
        job = std::move(job_);
        job_ = nullptr;
      }
      std::exception_ptr error;
      try {
        if (!device_set) {
          cuda::set_device(device_); // a new thread starts on device 0
          device_set = true;
        }
        job();
      } catch (...) {
        error = std::current_exception();
      }
      {
        const std::lock_guard lock(mutex_);
        done_ = true;
        error_ = error;
      }
      cv_.notify_all();
    }
  }

  int device_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool done_ = true;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread worker_; ///< last: started once the members it uses exist
};

/// Thrown by await_count when the other enqueuing thread failed: that thread's error is the one
/// to report.
struct enqueue_aborted : std::runtime_error {
  enqueue_aborted() : std::runtime_error("pipeline: the other enqueuing thread failed") {}
};

/// Spins until `count` reaches `at_least`, or throws enqueue_aborted once `abort` is set.
void await_count(const std::atomic<int>& count, int at_least, const std::atomic<bool>& abort) {
  while (count.load(std::memory_order_acquire) < at_least) {
    if (abort.load(std::memory_order_acquire)) throw enqueue_aborted();
    std::this_thread::yield();
  }
}

} // namespace

struct pipeline_engine::state {
  pipeline_config cfg;
  std::uint64_t seed;
  thread_pool& pool;
  int depth;
  std::uint64_t step = 0;   ///< next step whose stage B runs; its stage A is done
  std::uint64_t a_only = 0; ///< step counter of stage_a_only
  std::uint64_t b_only = 0;

  cuda::stream sa;
  /// Stage B (the step that consumes a batch) is the critical path of the pipeline: its kernels
  /// go first when both stages compete for the SMs, and stage A fills the gaps.
  cuda::stream sb{cuda::stream_priority::high};
  cuda::blas_handle blas_a;
  cuda::blas_handle blas_b;
  /// Events of one run: eager runs and graph captures use separate sets, so that no event is
  /// both recorded into a graph and waited on outside it.
  struct event_set {
    cuda::event fork{false};
    cuda::event join_a{false};
    cuda::event join_b{false};
    std::vector<cuda::event> a_done; ///< A(t) wrote slot t % depth
    std::vector<cuda::event> b_done; ///< B(t) finished reading slot t % depth
    cuda::event b_narrow{false};     ///< augment-train: B(t) reached its narrow kernels
  };
  event_set eager;
  event_set captured;
  std::vector<cuda::event> uploaded;      ///< cpu-augment: the host ring entry may be overwritten
  std::map<int, cuda::graph_exec> graphs; ///< by phase (start step % depth)

  std::vector<cuda::device_buffer<float>> slots; ///< augmented batches or encoder features
  std::unique_ptr<pipeline_stages> stages;
  std::vector<cuda::pinned_buffer<float>> host_augmented; ///< cpu-augment's host ring
  std::unique_ptr<cpu_loader> loader;
  /// encoder-decoder `streams`: stage A enqueued from a thread of its own (docs/pipeline.md);
  /// GPUBENCH_PIPELINE_ONE_THREAD=1 enqueues both stages from the caller's thread, to measure
  /// what the second thread buys.
  std::unique_ptr<stage_a_thread> a_thread;

  state(const pipeline_config& c, std::uint64_t s, thread_pool& p)
      : cfg(c), seed(s), pool(p), depth(c.depth) {
    for (int k = 0; k < depth; ++k)
      for (auto* e : {&eager, &captured}) {
        e->a_done.emplace_back(false);
        e->b_done.emplace_back(false);
      }
    for (int k = 0; k < depth; ++k) uploaded.emplace_back(false);
  }

  [[nodiscard]] int ring(std::uint64_t t) const noexcept {
    return static_cast<int>(t % static_cast<std::uint64_t>(depth));
  }
  cuda::mlp& trained() { return stages->trained(); }

  void setup() {
    // The slots first, then the scenario's buffers: the allocation order of the single-file
    // engine, so the buffers keep their places in device memory.
    const std::size_t slot_floats = pipeline_slot_floats(cfg);
    for (int k = 0; k < depth; ++k) slots.emplace_back(slot_floats);
    stages = make_pipeline_stages(cfg, seed, pool);
    if (stages->augments() && cfg.has(pipeline_mode::cpu_augment)) {
      for (int k = 0; k < depth; ++k) host_augmented.emplace_back(slot_floats);
      loader = std::make_unique<cpu_loader>([this](std::uint64_t t) { produce_cpu(t); });
    }
    if (!stages->augments()) {
      if (!process_environment().pipeline_one_thread)
        a_thread = std::make_unique<stage_a_thread>(cuda::current_device());
    }
    trained().set_params(stages->initial_params().data());
    // The copies above ran on the legacy stream, which does not order the non-blocking streams
    // the stages run on.
    cuda::synchronize_device();
  }

  // ---- the stages ---------------------------------------------------------------------------

  /// Stage A of step t into slot t % depth, on its own (the pipelined modes call its two halves).
  void stage_a(std::uint64_t t, cudaStream_t s) {
    if (stages->augments()) upload_images(t, s);
    compute_a(t, s, false);
  }

  /// augment-train, the first half of stage A: step t's uint8 batch onto the device.
  void upload_images(std::uint64_t t, cudaStream_t s) { stages->upload(ring(t), s); }

  /// The rest of stage A, the part that writes slot t % depth: the augment kernel, or the
  /// encoder's forward pass.
  void compute_a(std::uint64_t t, cudaStream_t s, bool beside_b) {
    const int k = ring(t);
    stages->compute_a(k, slots[k].data(), blas_a, s, beside_b);
  }

  /// Stage B of step t, reading slot t % depth. augment-train records `narrow` (when given) where
  /// the training step leaves most SMs idle (mlp::train_step).
  void stage_b(std::uint64_t t, cudaStream_t s, cudaEvent_t narrow = nullptr) {
    const int k = ring(t);
    stages->stage_b(k, slots[k].data(), blas_b, s, narrow);
  }

  /// CPU augment of step t's batch into the host ring (the loader thread's work). The host entry
  /// was last uploaded for step t - depth: wait for that upload before overwriting it.
  void produce_cpu(std::uint64_t t) {
    const int k = ring(t);
    uploaded[k].synchronize();
    stages->cpu_stage_a(k, host_augmented[k].data(), pool);
  }

  void upload_cpu(std::uint64_t t, cudaStream_t s) {
    const int k = ring(t);
    cuda::copy_to_device_async(slots[k].data(), host_augmented[k].data(),
                               slots[k].size() * sizeof(float), s);
  }

  // ---- the modes ----------------------------------------------------------------------------

  void bind(cudaStream_t a, cudaStream_t b) {
    blas_a.bind(a);
    blas_b.bind(b);
  }

  /// Serial: B(t) then A(t + 1), all on `main`.
  void run_serial(std::uint64_t s0, int n, cudaStream_t main) {
    bind(main, main);
    for (int j = 0; j < n; ++j) {
      stage_b(s0 + j, main);
      stage_a(s0 + j + 1, main);
    }
  }

  /// The two streams' start behind `main` (with the stages bound to them) and, at the end, `main`
  /// behind both: what every two-stream run does around its steps.
  void fork_streams(cudaStream_t main, cudaStream_t a, cudaStream_t b, event_set& ev) {
    bind(a, b);
    ev.fork.record(main);
    ev.fork.wait_on(a);
    ev.fork.wait_on(b);
  }
  static void join_streams(cudaStream_t main, cudaStream_t a, cudaStream_t b, event_set& ev) {
    ev.join_a.record(a);
    ev.join_b.record(b);
    ev.join_a.wait_on(main);
    ev.join_b.wait_on(main);
  }

  /// Two streams; `cpu` makes stage A the upload of a batch the loader augmented on the CPU.
  void run_streams(std::uint64_t s0, int n, cudaStream_t main, bool cpu, event_set& ev) {
    const cudaStream_t a = sa.get();
    const cudaStream_t b = sb.get();
    fork_streams(main, a, b, ev);
    const bool gpu_augment = stages->augments() && !cpu;
    for (int j = 0; j < n; ++j) {
      const std::uint64_t t = s0 + j;
      // A(s0) completed before this run (the fork orders it); later A's were recorded here.
      if (j > 0) ev.a_done[ring(t)].wait_on(b);
      stage_b(t, b, gpu_augment ? ev.b_narrow.get() : nullptr);
      ev.b_done[ring(t)].record(b);
      const std::uint64_t next = t + 1;
      // A(next) overwrites the slot B(next - depth) read; only wait when that B is in this run.
      const bool wait_slot = next >= s0 + static_cast<std::uint64_t>(depth);
      if (cpu) {
        if (wait_slot) ev.b_done[ring(next)].wait_on(a);
        loader->wait_ready(next);
        upload_cpu(next, a);
        uploaded[ring(next)].record(a);
        loader->allow(next + static_cast<std::uint64_t>(depth) + 1);
      } else {
        // augment-train's upload writes only the uint8 input buffer, which the previous augment
        // (earlier on this stream) has read: it goes ahead without waiting for stage B, and the
        // copy engine works during B(t - 1) and B(t). The augment kernel waits for the slot and
        // then for the point of B(t) where the training step's kernels are smallest (its output
        // layer and the start of the backward pass), where it costs B least (docs/pipeline.md).
        if (gpu_augment) upload_images(next, a);
        if (wait_slot) ev.b_done[ring(next)].wait_on(a);
        if (gpu_augment) ev.b_narrow.wait_on(a);
        compute_a(next, a, true);
      }
      ev.a_done[ring(next)].record(a);
    }
    join_streams(main, a, b, ev);
  }

  /// run_streams for encoder-decoder with stage A enqueued by a_thread: the same launches on the
  /// same streams with the same events as run_streams, the order across the two streams kept by
  /// the host counters: B(t) waits for A(t)'s event only once A(t) is recorded, and A(t + depth)
  /// for B(t)'s only once B(t) is recorded (a wait issued before its record would wait for the
  /// event's previous use).
  void run_streams_threaded(std::uint64_t s0, int n, cudaStream_t main, event_set& ev) {
    const cudaStream_t a = sa.get();
    const cudaStream_t b = sb.get();
    fork_streams(main, a, b, ev);
    std::atomic<int> a_count{0}; ///< A(s0 + 1 .. s0 + a_count) recorded
    std::atomic<int> b_count{0}; ///< B(s0 .. s0 + b_count - 1) recorded
    std::atomic<bool> abort{false};
    a_thread->run([&, s0, n, a] {
      try {
        for (int j = 0; j < n; ++j) {
          const std::uint64_t next = s0 + static_cast<std::uint64_t>(j) + 1;
          if (j + 1 >= depth) { // A(next) overwrites the slot B(next - depth) read
            await_count(b_count, j + 2 - depth, abort);
            ev.b_done[ring(next)].wait_on(a);
          }
          compute_a(next, a, true);
          ev.a_done[ring(next)].record(a);
          a_count.store(j + 1, std::memory_order_release);
        }
      } catch (...) {
        abort.store(true, std::memory_order_release);
        throw;
      }
    });
    try {
      for (int j = 0; j < n; ++j) {
        const std::uint64_t t = s0 + static_cast<std::uint64_t>(j);
        if (j > 0) {
          await_count(a_count, j, abort);
          ev.a_done[ring(t)].wait_on(b);
        }
        stage_b(t, b);
        ev.b_done[ring(t)].record(b);
        b_count.store(j + 1, std::memory_order_release);
      }
    } catch (const enqueue_aborted&) { // stage A's thread failed: report its error
      a_thread->wait();
      throw;
    } catch (...) {
      abort.store(true, std::memory_order_release);
      try {
        a_thread->wait();
      } catch (...) { // stage B's failure came first; A's is the abort it caused
      }
      throw;
    }
    a_thread->wait();
    join_streams(main, a, b, ev);
  }

  void capture_graphs(cudaStream_t main) {
    if (!graphs.empty()) return;
    for (int phase = 0; phase < depth; ++phase) {
      cuda::graph_capture capture(main);
      run_streams(static_cast<std::uint64_t>(phase), cfg.steps, main, false, captured);
      graphs.emplace(phase, capture.finish());
    }
  }
};

pipeline_engine::pipeline_engine(const pipeline_config& cfg, std::uint64_t seed, thread_pool& pool)
    : st_(std::make_unique<state>(cfg, seed, pool)) {
  st_->setup();
}

pipeline_engine::~pipeline_engine() {
  if (st_->loader) st_->loader->quiesce();
  cuda::synchronize_device_nothrow();
}

std::uint64_t pipeline_engine::step() const noexcept { return st_->step; }

void pipeline_engine::reset_weights() {
  cuda::synchronize_device();
  st_->trained().set_params(st_->stages->initial_params().data());
  st_->step = 0;
}

void pipeline_engine::start(pipeline_mode mode, cudaStream_t main) {
  auto& s = *st_;
  if (s.loader) s.loader->quiesce();
  cuda::synchronize_device();
  if (mode == pipeline_mode::cpu_augment) {
    s.loader->reset(s.step, s.step + static_cast<std::uint64_t>(s.depth));
    s.loader->wait_ready(s.step);
    s.upload_cpu(s.step, main);
    s.uploaded[s.ring(s.step)].record(main);
    s.loader->allow(s.step + static_cast<std::uint64_t>(s.depth) + 1);
  } else {
    s.bind(main, main);
    s.stage_a(s.step, main);
    cuda::synchronize(main);
    // Captured after an eager stage A and B (verification runs serial first): launchers that
    // set kernel attributes on first use have done so outside the capture.
    if (mode == pipeline_mode::graph) s.capture_graphs(main);
  }
  cuda::synchronize(main);
}

void pipeline_engine::run(pipeline_mode mode, int n, cudaStream_t main) {
  auto& s = *st_;
  switch (mode) {
  case pipeline_mode::serial: s.run_serial(s.step, n, main); break;
  case pipeline_mode::streams:
    if (s.a_thread)
      s.run_streams_threaded(s.step, n, main, s.eager);
    else
      s.run_streams(s.step, n, main, false, s.eager);
    break;
  case pipeline_mode::cpu_augment: s.run_streams(s.step, n, main, true, s.eager); break;
  case pipeline_mode::graph:
    if (n == s.cfg.steps && !s.graphs.empty())
      s.graphs.at(s.ring(s.step)).launch(main);
    else
      s.run_streams(s.step, n, main, false, s.eager);
    break;
  }
  s.step += static_cast<std::uint64_t>(n);
}

void pipeline_engine::run_cpu_serial(int n, cudaStream_t main) {
  auto& s = *st_;
  if (s.loader) s.loader->quiesce();
  s.bind(main, main);
  for (int j = 0; j < n; ++j) {
    const std::uint64_t t = s.step + static_cast<std::uint64_t>(j);
    s.stage_b(t, main);
    cuda::synchronize(main); // the host ring entry is free again
    const int k = s.ring(t + 1);
    s.stages->cpu_stage_a(k, s.host_augmented[k].data(), s.pool);
    s.upload_cpu(t + 1, main);
    s.uploaded[k].record(main);
  }
  cuda::synchronize(main);
  s.step += static_cast<std::uint64_t>(n);
}

void pipeline_engine::stage_a_only(int n, cudaStream_t main) {
  auto& s = *st_;
  s.bind(main, main);
  for (int j = 0; j < n; ++j) s.stage_a(s.a_only++, main);
}

void pipeline_engine::stage_b_only(int n, cudaStream_t main) {
  auto& s = *st_;
  s.bind(main, main);
  for (int j = 0; j < n; ++j) s.stage_b(s.b_only++, main);
}

void pipeline_engine::cpu_stage_a_only(int n, cudaStream_t main) {
  auto& s = *st_;
  if (s.loader) s.loader->quiesce();
  for (int j = 0; j < n; ++j) {
    const std::uint64_t t = s.a_only++;
    const int k = s.ring(t);
    s.stages->cpu_stage_a(k, s.host_augmented[k].data(), s.pool);
    s.upload_cpu(t, main);
    cuda::synchronize(main);
  }
}

std::vector<float> pipeline_engine::trained_weights() const { return st_->trained().get_params(); }

std::vector<float> pipeline_engine::gpu_augmented_batch(cudaStream_t main) {
  auto& s = *st_;
  if (s.loader) s.loader->quiesce(); // the caller may use the thread pool next
  s.stage_a(0, main);
  cuda::synchronize(main);
  std::vector<float> out(pipeline_slot_floats(s.cfg));
  cuda::copy_to_host(out.data(), s.slots[0].data(), out.size() * sizeof(float));
  return out;
}

std::vector<float> pipeline_engine::cpu_augmented_batch() {
  auto& s = *st_;
  if (s.loader) s.loader->quiesce(); // one user of the thread pool at a time
  std::vector<float> out(pipeline_slot_floats(s.cfg));
  s.stages->cpu_stage_a(0, out.data(), s.pool);
  return out;
}

} // namespace gpubench
