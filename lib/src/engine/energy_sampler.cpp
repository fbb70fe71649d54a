// Energy per operation on the GPU (--energy): the counter's step and idle baseline, then windows
// of back-to-back work that start and end on counter steps, with instant power integrated beside
// them. Two NVML pollers run on their own threads so that the thread feeding the GPU never waits.
#include "gpubench/engine/energy_sampler.hpp"

#include "gpubench/core/clock.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/runtime.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/cuda/test_delay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <stop_token>
#include <thread>

namespace gpubench {

using nlohmann::json;

namespace {

using steady = std::chrono::steady_clock;

struct baseline {
  double tick_s = 0;
  double idle_w = 0;
  std::string error;
};

/// Polls the counter while the GPU is idle: its step period from the change times and the idle
/// power between the first and the last change (both on a step, so no quantization).
baseline measure_baseline(gpu_monitor& m, const energy_options& o) {
  baseline b;
  std::vector<std::pair<double, std::uint64_t>> readings;
  const double start = steady_seconds();
  double first_change = -1;
  std::uint64_t first_value = 0;
  while (true) {
    const auto e = m.energy_mj();
    if (!e.value) {
      b.error = e.error;
      return b;
    }
    const double t = steady_seconds();
    if (!readings.empty() && *e.value != readings.back().second && first_change < 0) {
      first_change = t;
      first_value = *e.value;
    }
    readings.emplace_back(t, *e.value);
    const double tick = estimate_tick(readings);
    if (first_change >= 0 && tick > 0 && readings.back().second != first_value &&
        t - first_change >= energy_window_seconds(tick, o) &&
        readings.back().second != readings[readings.size() - 2].second)
      break;
    if (t - start > 5 * o.min_window_s + 1) break; // a counter that barely moves
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  b.tick_s = estimate_tick(readings);
  if (first_change >= 0 && readings.back().first > first_change)
    b.idle_w = static_cast<double>(readings.back().second - first_value) * 1e-3 /
               (readings.back().first - first_change);
  if (!(b.tick_s > 0)) b.error = "the energy counter did not advance while idle";
  return b;
}

baseline cached_baseline(gpu_monitor& m, const energy_options& o) {
  static std::mutex mutex;
  static std::map<gpu_monitor*, baseline> cache;
  const std::lock_guard lock(mutex);
  const auto it = cache.find(&m);
  if (it != cache.end()) return it->second;
  auto b = measure_baseline(m, o);
  if (b.error.empty()) cache[&m] = b;
  return b;
}

// The two NVML pollers below run on a std::jthread declared last, so it is stopped and joined
// before the data it writes go; finish() stops it early, before the data are read. A mutex member
// makes each neither copyable nor movable, as a thread that holds `this` requires.

/// Samples instant power on its own thread while it lives.
class power_sampler {
public:
  power_sampler(gpu_monitor& m, double hz)
      : m_(m), thread_([this, hz](const std::stop_token& stop) { run(stop, hz); }) {}
  void finish() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
  }
  /// After finish():
  [[nodiscard]] const std::vector<std::pair<double, double>>& samples() const { return samples_; }
  [[nodiscard]] const std::string& error() const { return error_; }

private:
  void run(const std::stop_token& stop, double hz) {
    const auto period =
        std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(1.0 / hz));
    auto next = steady::now();
    while (!stop.stop_requested()) {
      const auto p = m_.instant_power_w();
      const double t = steady_seconds();
      {
        const std::lock_guard lock(mutex_);
        if (p.value)
          samples_.emplace_back(t, *p.value);
        else if (error_.empty())
          error_ = p.error;
      }
      next += period;
      std::this_thread::sleep_until(next);
    }
  }

  gpu_monitor& m_;
  std::mutex mutex_;
  std::vector<std::pair<double, double>> samples_;
  std::string error_;
  std::jthread thread_;
};

/// Polls the energy counter on its own thread, so that the thread feeding the GPU never waits on
/// NVML (a read of the counter took milliseconds on the H200: read between chunks, it starved the
/// GPU). Each step is timed at the midpoint between the read that last saw the old value and the
/// read that first saw the new one (each read's own midpoint). Between steps it sleeps until
/// shortly before the next is due (watcher_sleep_s): read back to back, it kept a core busy. A
/// step that came during a sleep is kept but marked imprecise, and the margin doubles.
class step_watcher {
public:
  struct step {
    double t = 0;
    std::uint64_t mj = 0;
    bool precise = true; ///< the reads around it were back to back, so `t` is known to a read
  };

  step_watcher(gpu_monitor& m, double tick_s)
      : m_(m), tick_s_(tick_s), thread_([this](const std::stop_token& stop) { run(stop); }) {}
  void finish() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
  }
  /// The steps seen from index `from` on, and the error that stopped the thread ("" if none).
  std::vector<step> steps_from(std::size_t from, std::string& error) {
    const std::lock_guard lock(mutex_);
    error = error_;
    if (from >= steps_.size()) return {};
    return {steps_.begin() + static_cast<std::ptrdiff_t>(from), steps_.end()};
  }
  /// The median time one read of the counter took (after finish()).
  [[nodiscard]] double median_read_s() {
    if (read_s_.empty()) return 0;
    const auto mid = read_s_.begin() + static_cast<std::ptrdiff_t>(read_s_.size() / 2);
    std::nth_element(read_s_.begin(), mid, read_s_.end());
    return *mid;
  }
  /// The share of the watcher's time spent reading the counter (after finish()).
  [[nodiscard]] double reading_share() const { return ran_s_ > 0 ? read_total_s_ / ran_s_ : 0; }

private:
  void run(const std::stop_token& stop) {
    std::optional<std::uint64_t> last;
    double last_mid = 0;
    double last_step_t = -1;
    double margin_s = watcher_margin_ticks * tick_s_;
    bool slept = false; // a pacing sleep came between the previous read and this one
    const double began = steady_seconds();
    std::mutex sleep_mutex;
    std::condition_variable_any wake;
    while (!stop.stop_requested()) {
      const double before = steady_seconds();
      const auto e = m_.energy_mj();
      const double after = steady_seconds();
      const double mid = 0.5 * (before + after);
      read_s_.push_back(after - before);
      read_total_s_ += after - before;
      ran_s_ = after - began;
      if (!e.value) {
        const std::lock_guard lock(mutex_);
        error_ = e.error;
        return;
      }
      if (last && *e.value != *last) {
        const std::lock_guard lock(mutex_);
        steps_.push_back({0.5 * (last_mid + mid), *e.value, !slept});
        // After a sleep the step came somewhere since the read before it: plan from that read.
        last_step_t = slept ? last_mid : steps_.back().t;
        if (slept) margin_s = std::min(2 * margin_s, tick_s_);
      }
      last = *e.value;
      last_mid = mid;
      const double sleep_s = watcher_sleep_s(steady_seconds(), last_step_t, tick_s_, margin_s);
      slept = sleep_s > 0;
      std::unique_lock lock(sleep_mutex);
      wake.wait_for(lock, stop,
                    slept ? std::chrono::duration<double>(sleep_s)
                          : std::chrono::duration<double>(250e-6),
                    [] { return false; });
    }
  }

  gpu_monitor& m_;
  double tick_s_;
  std::mutex mutex_;
  std::vector<step> steps_;
  std::vector<double> read_s_; // the watcher thread's own until finish(), as are the two below
  double read_total_s_ = 0;
  double ran_s_ = 0;
  std::string error_;
  std::jthread thread_;
};

/// Chunks completed by time t, linear between the completions the feeding thread saw.
double completed_at(const std::vector<std::pair<double, long>>& timeline, double t) {
  if (timeline.empty()) return 0;
  if (t <= timeline.front().first) return static_cast<double>(timeline.front().second);
  if (t >= timeline.back().first) return static_cast<double>(timeline.back().second);
  const auto it = std::upper_bound(timeline.begin(), timeline.end(), t,
                                   [](double x, const auto& e) { return x < e.first; });
  const auto& [ta, ca] = *(it - 1);
  const auto& [tb, cb] = *it;
  const double f = tb > ta ? (t - ta) / (tb - ta) : 1.0;
  return static_cast<double>(ca) + f * static_cast<double>(cb - ca);
}

/// How the load is fed: launches per chunk (about 1 ms of work, the unit in which the feeding
/// thread sees progress), one launch's GPU time back to back, chunks kept in flight, and whether
/// the hold that timed a chunk covered its enqueue (else the body waits inside its launches).
struct chunk_plan {
  long chunk = 100;
  double launch_s = 0;
  long in_flight = 2;
  bool hold_covered = false;
  double held_enqueue_s = 0;
  std::uint64_t hold_ns = 0;
};

chunk_plan plan_chunks(const std::function<void(cudaStream_t)>& body, cudaStream_t stream) {
  chunk_plan p;
  const cuda::event start;
  const cuda::event stop;
  body(stream);
  start.record(stream);
  body(stream);
  stop.record(stream);
  stop.synchronize();
  const double one = cuda::elapsed_seconds(start, stop);
  p.chunk = one > 0 ? std::clamp(static_cast<long>(1e-3 / one), 1L, 100000L) : 100L;
  // The GPU time of a launch back to back, for the busy fraction: one chunk timed whole while a
  // delay kernel, longer than the host takes to enqueue the chunk, holds the GPU. Timed as the
  // host enqueues it, a chunk of a host-bound body would include the host's gaps and always read
  // 100% busy. A body that waits inside its launches (on the host, or on the GPU it holds, as
  // pipeline's cpu-augment does) outlasts the hold: then its chunk still includes the waits, so no
  // busy fraction is claimed and the row is host-bound (it cannot be queued ahead of the GPU). A
  // hold the host overran once is tried again, longer, so one late wake-up does not decide it.
  const double enqueue_from = steady_seconds();
  for (long i = 0; i < p.chunk; ++i) body(stream);
  const double enqueue_s = steady_seconds() - enqueue_from;
  cuda::synchronize(stream);
  p.hold_ns = cuda::launch_free_hold_ns(enqueue_s, 0.25);
  for (int attempt = 0; attempt < 2 && !p.hold_covered; ++attempt) {
    if (attempt > 0)
      p.hold_ns = std::max(p.hold_ns, cuda::launch_free_hold_ns(2 * p.held_enqueue_s + 1e-3, 0.25));
    const double held_from = steady_seconds();
    cuda::launch_delay_ns(p.hold_ns, stream);
    start.record(stream);
    for (long i = 0; i < p.chunk; ++i) body(stream);
    p.held_enqueue_s = steady_seconds() - held_from;
    p.hold_covered = p.held_enqueue_s < static_cast<double>(p.hold_ns) * 1e-9;
    stop.record(stream);
    stop.synchronize();
  }
  p.launch_s = cuda::elapsed_seconds(start, stop) / static_cast<double>(p.chunk);
  // Chunks in flight: at least 20 ms of queued work, so that a late wake-up of this thread never
  // idles the GPU, and at most about 1000 launches (beyond the launch queue, enqueueing blocks).
  const double chunk_s = p.launch_s * static_cast<double>(p.chunk);
  const long by_time = chunk_s > 0 ? static_cast<long>(std::ceil(0.02 / chunk_s)) : 8L;
  p.in_flight = std::clamp(std::min(by_time, 1000L / p.chunk), 2L, 64L);
  return p;
}

/// Keeps `in_flight` chunks queued and records when the host saw each complete.
class chunk_feeder {
public:
  chunk_feeder(const std::function<void(cudaStream_t)>& body, cudaStream_t stream,
               const chunk_plan& plan)
      : body_(body), stream_(stream), plan_(plan) {
    for (long i = 0; i < plan.in_flight; ++i) done_.emplace_back(false);
  }
  void fill() {
    for (long i = 0; i < plan_.in_flight; ++i) enqueue();
  }
  /// Waits for the oldest chunk, notes its completion, enqueues one more.
  void advance() {
    done_[static_cast<std::size_t>(completed_ % plan_.in_flight)].synchronize();
    ++completed_;
    timeline_.emplace_back(steady_seconds(), completed_);
    enqueue();
  }
  /// (time the host saw it, chunks completed)
  [[nodiscard]] const std::vector<std::pair<double, long>>& timeline() const { return timeline_; }

private:
  void enqueue() {
    for (long i = 0; i < plan_.chunk; ++i) body_(stream_);
    done_[static_cast<std::size_t>(enqueued_ % plan_.in_flight)].record(stream_);
    ++enqueued_;
  }
  const std::function<void(cudaStream_t)>& body_;
  cudaStream_t stream_;
  chunk_plan plan_;
  std::vector<cuda::event> done_;
  long enqueued_ = 0;
  long completed_ = 0;
  std::vector<std::pair<double, long>> timeline_;
};

struct window_edges {
  step_watcher::step first;
  step_watcher::step last;
};

/// Feeds the load until `o.windows` windows have closed. Windows start and end where the counter
/// steps, so each holds whole steps and no quantization error; each starts at the first precise
/// step after a random delay (a random phase against the step). `error` says why it ended early.
std::vector<window_edges> collect_windows(chunk_feeder& feed, step_watcher& watcher, double tick_s,
                                          double window_s, const energy_options& o,
                                          std::string& error) {
  std::vector<window_edges> edges;
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> phase(0.0, tick_s);
  std::size_t seen = 0;
  std::optional<step_watcher::step> open;
  double not_before = steady_seconds() + phase(rng);
  double last_step_t = steady_seconds();
  while (static_cast<int>(edges.size()) < o.windows && !interrupt_requested()) {
    feed.advance();
    for (const auto& st : watcher.steps_from(seen, error)) {
      ++seen;
      last_step_t = st.t;
      if (!st.precise) continue; // its time is not known to a read: no window starts or ends on it
      if (!open) {
        if (st.t >= not_before) open = st;
      } else if (st.t >= open->t + window_s) {
        edges.push_back({*open, st});
        open.reset();
        not_before = st.t + phase(rng);
        if (static_cast<int>(edges.size()) == o.windows) break;
      }
    }
    if (!error.empty()) break;
    if (steady_seconds() - last_step_t > 5 * window_s + 1) {
      error = "the energy counter stopped advancing under load";
      break;
    }
  }
  return edges;
}

/// Each window's energy by the counter and by the power integral, and the operations in it read
/// off the completion timeline at its two step times.
std::vector<energy_window> energy_windows(const std::vector<window_edges>& edges,
                                          const chunk_feeder& feed, const chunk_plan& plan,
                                          const power_sampler& power, double ops_per_launch) {
  std::vector<energy_window> windows;
  for (const auto& [first, last] : edges) {
    energy_window w;
    w.seconds = last.t - first.t;
    w.counter_j = static_cast<double>(last.mj - first.mj) * 1e-3;
    const double chunks =
        completed_at(feed.timeline(), last.t) - completed_at(feed.timeline(), first.t);
    w.ops = chunks * static_cast<double>(plan.chunk) * ops_per_launch;
    w.integral_j = integrate_power(power.samples(), first.t, last.t);
    windows.push_back(w);
  }
  return windows;
}

/// The share of the windows the GPU spent running the work. A window below host_bound_busy is
/// the energy of a GPU that waited on the host, and the row says so.
void add_busy_fraction(json& j, const std::vector<energy_window>& windows, const chunk_plan& plan,
                       double ops_per_launch) {
  if (!plan.hold_covered) {
    j["host_bound"] = true;
    j["busy_unmeasured"] = fmt::format(
        "a chunk took {:.3g} ms to enqueue behind a {:.3g} ms hold: the body waits inside its "
        "launches, so it cannot be queued ahead of the GPU",
        plan.held_enqueue_s * 1e3, static_cast<double>(plan.hold_ns) * 1e-6);
  } else if (const auto busy = busy_fractions(windows, ops_per_launch, plan.launch_s);
             busy.overall > 0) {
    j["busy_fraction"] = busy.overall;
    j["busy_fraction_min"] = busy.lowest;
    j["host_bound"] = busy.lowest < host_bound_busy;
  }
}

} // namespace

json measure_gpu_energy(gpu_monitor* monitor, const std::string& unavailable_reason,
                        sampler_frame& frame, std::string_view name,
                        const std::function<void(cudaStream_t)>& body, double ops_per_launch,
                        const std::string& op_unit, double bytes_per_op, const energy_options& o) {
  if (monitor == nullptr) return energy_unsupported(unavailable_reason);
  if (const auto e = monitor->energy_mj(); !e.value) return energy_unsupported(e.error);
  const cudaStream_t stream = frame.stream();
  cuda::synchronize(stream);
  const baseline base = cached_baseline(*monitor, o);
  if (!base.error.empty()) return energy_unsupported(base.error);
  const double window_s = energy_window_seconds(base.tick_s, o);
  frame.preload(body);
  const chunk_plan plan = plan_chunks(body, stream);
  chunk_feeder feed(body, stream, plan);

  // Every GPU of --concurrent begins its load here together (the GPU waits behind the gate).
  frame.start(name);
  power_sampler power(*monitor, o.power_hz);
  // On an exception the pollers stop and join as they go out of scope.
  feed.fill();
  const double settle_until = steady_seconds() + 0.2; // clocks and power settle under load
  while (steady_seconds() < settle_until) feed.advance();
  step_watcher watcher(*monitor, base.tick_s);
  std::string counter_error;
  const auto edges = collect_windows(feed, watcher, base.tick_s, window_s, o, counter_error);
  watcher.finish();
  cuda::synchronize(stream);
  power.finish();
  if (!counter_error.empty()) return energy_unsupported(counter_error);
  const auto windows = energy_windows(edges, feed, plan, power, ops_per_launch);
  auto j = summarize_energy(windows, base.idle_w, base.tick_s, window_s, op_unit, bytes_per_op, o);
  j["launches_per_chunk"] = plan.chunk;
  j["chunks_in_flight"] = plan.in_flight;
  j["power_samples"] = power.samples().size();
  j["counter_read_s"] = watcher.median_read_s();
  j["counter_read_share"] = watcher.reading_share();
  add_busy_fraction(j, windows, plan, ops_per_launch);
  if (power.samples().empty()) {
    j.erase("counter_vs_integral");
    j["disagreement_flag"] = false;
    j["integral_error"] = power.error().empty() ? "no instant-power sample" : power.error();
  }
  return j;
}

} // namespace gpubench
