// The pipeline's two stages and the modes that schedule them. Dependencies between the stages are
// events both ways: B(t) waits for A(t) (a_done), and A(t + depth) waits for B(t) (b_done), which
// last read the buffer A(t + depth) overwrites. Every run forks from and joins back to the caller's
// stream, so a run depends on earlier runs only through that join; inside a run only events
// recorded in the same run are waited on, which is what lets a run be captured as a CUDA graph.
#include "gpubench/augment_bench.hpp"
#include "gpubench/augment_cpu.hpp"
#include "gpubench/augment_params.hpp"
#include "gpubench/cuda/augment.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/pipeline.hpp"
#include "gpubench/pipeline_cpu.hpp"
#include "gpubench/random.hpp"

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace gpubench {

namespace {

constexpr std::uint64_t image_stream = 0x51A6E;
constexpr std::uint64_t target_stream = 0x7A26E7;
constexpr std::uint64_t input_stream = 0x1A9B7;
constexpr std::uint64_t trainer_stream = 0x7EA1;
constexpr std::uint64_t encoder_stream = 0xE2C0;
constexpr std::uint64_t decoder_stream = 0xDEC0;

/// The cpu-augment data loader: a host thread that augments batches ahead of the GPU, at most
/// `depth` steps ahead of the last upload (the host ring has `depth` entries).
class cpu_loader {
public:
  explicit cpu_loader(std::function<void(std::uint64_t)> produce)
      : produce_(std::move(produce)), thread_([this] { loop(); }) {}
  cpu_loader(const cpu_loader&) = delete;
  cpu_loader& operator=(const cpu_loader&) = delete;
  ~cpu_loader() {
    {
      const std::lock_guard lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  /// Stops producing (after the batch in progress) and restarts at `first`, limit `limit`.
  void reset(std::uint64_t first, std::uint64_t limit) {
    std::unique_lock lock(m_);
    limit_ = next_;
    cv_.wait(lock, [&] { return !busy_; });
    rethrow();
    next_ = first;
    limit_ = limit;
    cv_.notify_all();
  }
  void quiesce() {
    std::unique_lock lock(m_);
    limit_ = next_;
    cv_.wait(lock, [&] { return !busy_; });
  }
  void allow(std::uint64_t limit) {
    {
      const std::lock_guard lock(m_);
      if (limit > limit_) limit_ = limit;
    }
    cv_.notify_all();
  }
  void wait_ready(std::uint64_t step) {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return error_ || next_ > step; });
    rethrow();
  }

private:
  void rethrow() {
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }
  void loop() {
    std::unique_lock lock(m_);
    while (true) {
      cv_.wait(lock, [&] { return stop_ || (next_ < limit_ && !error_); });
      if (stop_) return;
      const std::uint64_t step = next_;
      busy_ = true;
      lock.unlock();
      std::exception_ptr err;
      try {
        produce_(step);
      } catch (...) {
        err = std::current_exception();
      }
      lock.lock();
      busy_ = false;
      if (err)
        error_ = err;
      else if (next_ == step)
        ++next_;
      cv_.notify_all();
    }
  }

  std::function<void(std::uint64_t)> produce_;
  std::mutex m_;
  std::condition_variable cv_;
  std::uint64_t next_ = 0;
  std::uint64_t limit_ = 0;
  bool busy_ = false;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

} // namespace

std::string_view scenario_name(pipeline_scenario s) noexcept {
  return s == pipeline_scenario::augment_train ? "augment-train" : "encoder-decoder";
}

std::string_view mode_name(pipeline_mode m) noexcept {
  switch (m) {
  case pipeline_mode::serial: return "serial";
  case pipeline_mode::streams: return "streams";
  case pipeline_mode::graph: return "graph";
  case pipeline_mode::cpu_augment: return "cpu-augment";
  }
  return "?";
}

bool pipeline_config::has(pipeline_mode m) const noexcept {
  for (const auto x : modes)
    if (x == m) return true;
  return false;
}

namespace {

augment_config pipeline_augment_config(int batch) {
  // The augment benchmark's defaults (its parameter table): 3 x 256 x 256, crop 128, resize 256.
  augment_config a = default_augment_config();
  a.batch = batch;
  return a;
}

int pooled_features(const pipeline_config& cfg) {
  const augment_config a = pipeline_augment_config(cfg.batch);
  const int side = a.resize / cfg.pool;
  return a.channels * side * side;
}

std::vector<int> widths(int in, int width, int hidden_layers, int out) {
  std::vector<int> s{in};
  for (int l = 0; l < hidden_layers; ++l) s.push_back(width);
  s.push_back(out);
  return s;
}

} // namespace

cuda::mlp_shape trainer_shape(const pipeline_config& cfg) {
  return {widths(pooled_features(cfg), cfg.hidden, cfg.layers, cfg.outputs), false};
}

cuda::mlp_shape encoder_shape(const pipeline_config& cfg) {
  std::vector<int> s{cfg.in_features};
  for (int l = 0; l < cfg.enc_layers; ++l) s.push_back(cfg.enc_width);
  return {s, true};
}

cuda::mlp_shape decoder_shape(const pipeline_config& cfg) {
  return {widths(cfg.enc_width, cfg.dec_width, cfg.dec_layers, cfg.in_features), false};
}

stage_work pipeline_work(const pipeline_config& cfg) {
  stage_work w;
  const double b = cfg.batch;
  if (cfg.scenario == pipeline_scenario::augment_train) {
    const augment_shape shape = make_augment_shape(pipeline_augment_config(cfg.batch));
    const double upload = b * shape.channels * static_cast<double>(shape.input_pixels());
    w.a_bytes = upload + cuda::augment_fused_bytes(shape);
    const auto t = trainer_shape(cfg);
    w.b_flops = t.train_flops(cfg.batch);
    w.b_bytes = static_cast<double>(cuda::augment_output_bytes(shape)) + t.train_bytes(cfg.batch);
  } else {
    const auto e = encoder_shape(cfg);
    const auto d = decoder_shape(cfg);
    w.a_flops = e.forward_flops(cfg.batch);
    w.a_bytes = e.forward_bytes(cfg.batch);
    w.b_flops = d.train_flops(cfg.batch);
    w.b_bytes = d.train_bytes(cfg.batch) + 4.0 * b * cfg.in_features; // targets read
  }
  return w;
}

namespace {

std::size_t mlp_bytes(const cuda::mlp_shape& s, int batch, bool trained) {
  std::size_t acts = 0;
  for (std::size_t l = 1; l < s.sizes.size(); ++l) acts += static_cast<std::size_t>(s.sizes[l]);
  return 4 * (s.param_count() * (trained ? 2 : 1) +
              static_cast<std::size_t>(batch) * (acts + 2 * static_cast<std::size_t>(s.widest())));
}

} // namespace

std::size_t pipeline_device_bytes(const pipeline_config& cfg) {
  const auto depth = static_cast<std::size_t>(cfg.depth);
  const auto batch = static_cast<std::size_t>(cfg.batch);
  std::size_t n = 2 * cuda::blas_handle::workspace_bytes;
  if (cfg.scenario == pipeline_scenario::augment_train) {
    const augment_shape shape = make_augment_shape(pipeline_augment_config(cfg.batch));
    n += batch * shape.channels * shape.input_pixels(); // uint8 upload target
    n += depth * cuda::augment_output_bytes(shape);     // ring between the stages
    n += depth * batch * (sizeof(augment_sample) + 4 * static_cast<std::size_t>(cfg.outputs));
    n += 4 * batch * static_cast<std::size_t>(pooled_features(cfg));
    n += mlp_bytes(trainer_shape(cfg), cfg.batch, true);
  } else {
    n += depth * batch * 4 * static_cast<std::size_t>(cfg.in_features + cfg.enc_width);
    n += mlp_bytes(encoder_shape(cfg), cfg.batch, false);
    n += mlp_bytes(decoder_shape(cfg), cfg.batch, true);
  }
  return n;
}

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

  // augment-train
  augment_config aug_cfg;
  augment_shape aug_shape;
  augment_shape beside_shape; ///< aug_shape with the strip for running beside stage B
  std::vector<cuda::pinned_buffer<std::uint8_t>> host_images;
  std::vector<std::vector<augment_sample>> host_samples;
  cuda::device_buffer<std::uint8_t> d_images;
  cuda::device_buffer<augment_sample> d_samples;
  std::vector<cuda::device_buffer<float>> slots; ///< augmented batches or encoder features
  cuda::device_buffer<float> d_pooled;
  cuda::device_buffer<float> d_targets;
  std::unique_ptr<cuda::mlp> trainer;
  std::vector<cuda::pinned_buffer<float>> host_augmented; ///< cpu-augment's host ring
  std::unique_ptr<cpu_loader> loader;

  // encoder-decoder
  cuda::device_buffer<float> d_inputs;
  std::unique_ptr<cuda::mlp> encoder;
  std::unique_ptr<cuda::mlp> decoder;

  std::vector<float> initial;

  state(const pipeline_config& c, std::uint64_t s, thread_pool& p)
      : cfg(c), seed(s), pool(p), depth(c.depth) {
    for (int k = 0; k < depth; ++k)
      for (auto* e : {&eager, &captured}) {
        e->a_done.emplace_back(false);
        e->b_done.emplace_back(false);
      }
    for (int k = 0; k < depth; ++k) uploaded.emplace_back(false);
  }

  [[nodiscard]] bool augment() const noexcept {
    return cfg.scenario == pipeline_scenario::augment_train;
  }
  [[nodiscard]] int ring(std::uint64_t t) const noexcept {
    return static_cast<int>(t % static_cast<std::uint64_t>(depth));
  }
  [[nodiscard]] std::size_t slot_floats() const noexcept {
    return augment() ? static_cast<std::size_t>(cfg.batch) * aug_shape.channels *
                           aug_shape.output_pixels()
                     : static_cast<std::size_t>(cfg.batch) * cfg.enc_width;
  }
  cuda::mlp& trained() { return augment() ? *trainer : *decoder; }

  void setup() {
    const auto batch = static_cast<std::size_t>(cfg.batch);
    for (int k = 0; k < depth; ++k) slots.emplace_back(slot_floats());
    if (augment()) {
      aug_cfg = pipeline_augment_config(cfg.batch);
      aug_shape = make_augment_shape(aug_cfg);
      beside_shape = aug_shape;
      beside_shape.fused_strip = cfg.overlap_strip;
      const std::size_t image_bytes = batch * aug_shape.channels * aug_shape.input_pixels();
      d_images = cuda::device_buffer<std::uint8_t>(image_bytes);
      d_samples = cuda::device_buffer<augment_sample>(static_cast<std::size_t>(depth) * batch);
      for (int k = 0; k < depth; ++k) {
        host_images.emplace_back(image_bytes);
        fill_synthetic_images(host_images.back().data(), aug_cfg,
                              random_bits(seed, image_stream, static_cast<std::uint64_t>(k)),
                              cfg.batch, pool);
        host_samples.push_back(
            draw_augment_samples(aug_cfg, seed, static_cast<std::uint64_t>(k), cfg.batch));
        GPUBENCH_CUDA_TRY(cudaMemcpy(d_samples.data() + static_cast<std::size_t>(k) * batch,
                                     host_samples.back().data(), batch * sizeof(augment_sample),
                                     cudaMemcpyHostToDevice));
      }
      const auto tshape = trainer_shape(cfg);
      d_pooled = cuda::device_buffer<float>(static_cast<std::size_t>(tshape.inputs()) * batch);
      const std::size_t target_n = static_cast<std::size_t>(depth) * batch * cfg.outputs;
      const auto targets = pipeline_cpu::uniform_values(target_n, -1.0F, 1.0F, seed, target_stream);
      d_targets = cuda::device_buffer<float>(target_n);
      GPUBENCH_CUDA_TRY(cudaMemcpy(d_targets.data(), targets.data(), target_n * sizeof(float),
                                   cudaMemcpyHostToDevice));
      trainer = std::make_unique<cuda::mlp>(tshape, cfg.batch);
      initial = pipeline_cpu::initial_params(tshape, seed, trainer_stream);
      if (cfg.has(pipeline_mode::cpu_augment)) {
        for (int k = 0; k < depth; ++k) host_augmented.emplace_back(slot_floats());
        loader = std::make_unique<cpu_loader>([this](std::uint64_t t) { produce_cpu(t); });
      }
    } else {
      const std::size_t in_n = static_cast<std::size_t>(depth) * batch * cfg.in_features;
      const auto inputs = pipeline_cpu::uniform_values(in_n, -1.0F, 1.0F, seed, input_stream);
      d_inputs = cuda::device_buffer<float>(in_n);
      GPUBENCH_CUDA_TRY(
          cudaMemcpy(d_inputs.data(), inputs.data(), in_n * sizeof(float), cudaMemcpyHostToDevice));
      const auto eshape = encoder_shape(cfg);
      encoder = std::make_unique<cuda::mlp>(eshape, cfg.batch);
      encoder->set_params(pipeline_cpu::initial_params(eshape, seed, encoder_stream).data());
      const auto dshape = decoder_shape(cfg);
      decoder = std::make_unique<cuda::mlp>(dshape, cfg.batch);
      initial = pipeline_cpu::initial_params(dshape, seed, decoder_stream);
    }
    trained().set_params(initial.data());
    // The copies above ran on the legacy stream, which does not order the non-blocking streams
    // the stages run on.
    GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
  }

  // ---- the stages ---------------------------------------------------------------------------

  /// Stage A of step t into slot t % depth, on its own (the pipelined modes call its two halves).
  void stage_a(std::uint64_t t, cudaStream_t s) {
    if (augment()) upload_images(t, s);
    compute_a(t, s, false);
  }

  /// augment-train, the first half of stage A: step t's uint8 batch from its pinned host buffer
  /// into the device's input buffer (which the previous augment kernel on `s` has read).
  void upload_images(std::uint64_t t, cudaStream_t s) {
    GPUBENCH_CUDA_TRY(cudaMemcpyAsync(d_images.data(), host_images[ring(t)].data(),
                                      d_images.bytes(), cudaMemcpyHostToDevice, s));
  }

  /// The rest of stage A, the part that writes slot t % depth: the augment kernel, or the
  /// encoder's forward pass.
  void compute_a(std::uint64_t t, cudaStream_t s, bool beside_b) {
    const int k = ring(t);
    if (augment())
      cuda::launch_augment_fused(beside_b ? beside_shape : aug_shape, d_images.data(),
                                 d_samples.data() + static_cast<std::size_t>(k) * cfg.batch,
                                 slots[k].data(), s);
    else
      encoder->forward(blas_a, input(k), s, slots[k].data());
  }

  /// Stage B of step t, reading slot t % depth. augment-train records `narrow` (when given) where
  /// the training step leaves most SMs idle (mlp::train_step).
  void stage_b(std::uint64_t t, cudaStream_t s, cudaEvent_t narrow = nullptr) {
    const int k = ring(t);
    if (augment()) {
      cuda::launch_avg_pool(slots[k].data(), cfg.batch, aug_shape.channels, aug_shape.resize,
                            cfg.pool, 1.0F / (static_cast<float>(cfg.pool * cfg.pool) * 255.0F),
                            d_pooled.data(), s);
      trainer->train_step(blas_b, d_pooled.data(),
                          d_targets.data() + static_cast<std::size_t>(k) * cfg.batch * cfg.outputs,
                          cfg.lr, s, narrow);
    } else {
      decoder->train_step(blas_b, slots[k].data(), input(k), cfg.lr, s);
    }
  }

  [[nodiscard]] const float* input(int k) const {
    return d_inputs.data() + static_cast<std::size_t>(k) * cfg.batch * cfg.in_features;
  }

  /// CPU augment of step t's batch into the host ring (the loader thread's work). The host entry
  /// was last uploaded for step t - depth: wait for that upload before overwriting it.
  void produce_cpu(std::uint64_t t) {
    const int k = ring(t);
    uploaded[k].synchronize();
    augment_cpu::augment_batch(host_images[k].data(), aug_shape, host_samples[k],
                               host_augmented[k].data(), pool);
  }

  void upload_cpu(std::uint64_t t, cudaStream_t s) {
    const int k = ring(t);
    GPUBENCH_CUDA_TRY(cudaMemcpyAsync(slots[k].data(), host_augmented[k].data(),
                                      slots[k].size() * sizeof(float), cudaMemcpyHostToDevice, s));
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

  /// Two streams; `cpu` makes stage A the upload of a batch the loader augmented on the CPU.
  void run_streams(std::uint64_t s0, int n, cudaStream_t main, bool cpu, event_set& ev) {
    const cudaStream_t a = sa.get();
    const cudaStream_t b = sb.get();
    bind(a, b);
    ev.fork.record(main);
    ev.fork.wait_on(a);
    ev.fork.wait_on(b);
    const bool gpu_augment = augment() && !cpu;
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
    ev.join_a.record(a);
    ev.join_b.record(b);
    ev.join_a.wait_on(main);
    ev.join_b.wait_on(main);
  }

  void capture_graphs(cudaStream_t main) {
    if (!graphs.empty()) return;
    for (int phase = 0; phase < depth; ++phase) {
      cudaGraph_t g = nullptr;
      GPUBENCH_CUDA_TRY(cudaStreamBeginCapture(main, cudaStreamCaptureModeThreadLocal));
      try {
        run_streams(static_cast<std::uint64_t>(phase), cfg.steps, main, false, captured);
      } catch (...) {
        if (cudaStreamEndCapture(main, &g) == cudaSuccess && g != nullptr) cudaGraphDestroy(g);
        throw;
      }
      GPUBENCH_CUDA_TRY(cudaStreamEndCapture(main, &g));
      graphs.emplace(phase, cuda::graph_exec(g));
    }
  }
};

pipeline_engine::pipeline_engine(const pipeline_config& cfg, std::uint64_t seed, thread_pool& pool)
    : st_(std::make_unique<state>(cfg, seed, pool)) {
  st_->setup();
}

pipeline_engine::~pipeline_engine() {
  if (st_->loader) st_->loader->quiesce();
  GPUBENCH_CUDA_CHECK_NOTHROW(cudaDeviceSynchronize());
}

std::uint64_t pipeline_engine::step() const noexcept { return st_->step; }

void pipeline_engine::reset_weights() {
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
  st_->trained().set_params(st_->initial.data());
  st_->step = 0;
}

void pipeline_engine::start(pipeline_mode mode, cudaStream_t main) {
  auto& s = *st_;
  if (s.loader) s.loader->quiesce();
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
  if (mode == pipeline_mode::cpu_augment) {
    s.loader->reset(s.step, s.step + static_cast<std::uint64_t>(s.depth));
    s.loader->wait_ready(s.step);
    s.upload_cpu(s.step, main);
    s.uploaded[s.ring(s.step)].record(main);
    s.loader->allow(s.step + static_cast<std::uint64_t>(s.depth) + 1);
  } else {
    s.bind(main, main);
    s.stage_a(s.step, main);
    GPUBENCH_CUDA_TRY(cudaStreamSynchronize(main));
    // Captured after an eager stage A and B (verification runs serial first): launchers that
    // set kernel attributes on first use have done so outside the capture.
    if (mode == pipeline_mode::graph) s.capture_graphs(main);
  }
  GPUBENCH_CUDA_TRY(cudaStreamSynchronize(main));
}

void pipeline_engine::run(pipeline_mode mode, int n, cudaStream_t main) {
  auto& s = *st_;
  switch (mode) {
  case pipeline_mode::serial: s.run_serial(s.step, n, main); break;
  case pipeline_mode::streams: s.run_streams(s.step, n, main, false, s.eager); break;
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
    GPUBENCH_CUDA_TRY(cudaStreamSynchronize(main)); // the host ring entry is free again
    const int k = s.ring(t + 1);
    augment_cpu::augment_batch(s.host_images[k].data(), s.aug_shape, s.host_samples[k],
                               s.host_augmented[k].data(), s.pool);
    s.upload_cpu(t + 1, main);
    s.uploaded[k].record(main);
  }
  GPUBENCH_CUDA_TRY(cudaStreamSynchronize(main));
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
    augment_cpu::augment_batch(s.host_images[k].data(), s.aug_shape, s.host_samples[k],
                               s.host_augmented[k].data(), s.pool);
    s.upload_cpu(t, main);
    GPUBENCH_CUDA_TRY(cudaStreamSynchronize(main));
  }
}

std::vector<float> pipeline_engine::trained_weights() const { return st_->trained().get_params(); }

std::vector<float> pipeline_engine::gpu_augmented_batch(cudaStream_t main) {
  auto& s = *st_;
  if (s.loader) s.loader->quiesce(); // the caller may use the thread pool next
  s.stage_a(0, main);
  GPUBENCH_CUDA_TRY(cudaStreamSynchronize(main));
  std::vector<float> out(s.slot_floats());
  GPUBENCH_CUDA_TRY(cudaMemcpy(out.data(), s.slots[0].data(), out.size() * sizeof(float),
                               cudaMemcpyDeviceToHost));
  return out;
}

std::vector<float> pipeline_engine::cpu_augmented_batch() {
  auto& s = *st_;
  if (s.loader) s.loader->quiesce(); // one user of the thread pool at a time
  std::vector<float> out(s.slot_floats());
  augment_cpu::augment_batch(s.host_images[0].data(), s.aug_shape, s.host_samples[0], out.data(),
                             s.pool);
  return out;
}

} // namespace gpubench
