#include "gpubench/telemetry/energy.hpp"

#include "gpubench/cuda/stream.hpp"
#include "gpubench/engine/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

namespace gpubench {

using nlohmann::json;

energy_options energy_options_for(const measure_options& m) {
  energy_options o;
  o.min_window_s = m.energy_window;
  o.windows = m.energy_windows;
  return o;
}

double energy_window_seconds(double tick_s, const energy_options& o) {
  return std::max(o.min_window_s, o.min_ticks * std::max(tick_s, 0.0));
}

double student_t95(int dof) {
  // Two-sided 95% quantiles of Student's t; beyond 30 degrees of freedom the normal's 1.96 is
  // within 2%.
  static constexpr double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                     2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                     2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                     2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof < 1) return std::numeric_limits<double>::infinity();
  if (dof <= 30) return table[dof - 1];
  return 1.96;
}

interval95 mean_interval95(std::span<const double> values) {
  interval95 out;
  const std::size_t n = values.size();
  if (n == 0) return out;
  double sum = 0;
  for (const double v : values) sum += v;
  out.mean = sum / static_cast<double>(n);
  if (n < 2) return out;
  double ss = 0;
  for (const double v : values) ss += (v - out.mean) * (v - out.mean);
  const double sd = std::sqrt(ss / static_cast<double>(n - 1));
  out.cv = out.mean != 0 ? sd / std::abs(out.mean) : 0;
  out.half_width = student_t95(static_cast<int>(n) - 1) * sd / std::sqrt(static_cast<double>(n));
  return out;
}

double integrate_power(const std::vector<std::pair<double, double>>& samples, double t0,
                       double t1) {
  if (samples.empty() || !(t1 > t0)) return 0;
  const auto power_at = [&](double t) {
    // Linear between the samples around t, the nearest sample's value beyond them.
    if (t <= samples.front().first) return samples.front().second;
    if (t >= samples.back().first) return samples.back().second;
    const auto it = std::upper_bound(samples.begin(), samples.end(), t,
                                     [](double x, const auto& s) { return x < s.first; });
    const auto& [ta, pa] = *(it - 1);
    const auto& [tb, pb] = *it;
    return tb > ta ? pa + (pb - pa) * (t - ta) / (tb - ta) : pb;
  };
  double joules = 0;
  double t = t0;
  double p = power_at(t0);
  for (const auto& [ts, ps] : samples) {
    if (ts <= t0) continue;
    if (ts >= t1) break;
    joules += 0.5 * (p + ps) * (ts - t);
    t = ts;
    p = ps;
  }
  joules += 0.5 * (p + power_at(t1)) * (t1 - t);
  return joules;
}

double counter_disagreement(double counter_j, double integral_j) {
  if (!(counter_j > 0)) return 1;
  return std::abs(counter_j - integral_j) / counter_j;
}

double estimate_tick(const std::vector<std::pair<double, std::uint64_t>>& readings) {
  std::vector<double> changes;
  for (std::size_t i = 1; i < readings.size(); ++i)
    if (readings[i].second != readings[i - 1].second) changes.push_back(readings[i].first);
  if (changes.size() < 2) return 0;
  std::vector<double> gaps;
  for (std::size_t i = 1; i < changes.size(); ++i) gaps.push_back(changes[i] - changes[i - 1]);
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2),
                   gaps.end());
  return gaps[gaps.size() / 2];
}

json energy_unsupported(const std::string& reason) {
  return json{{"supported", false}, {"reason", reason}};
}

json summarize_energy(const std::vector<energy_window>& windows, double idle_w, double tick_s,
                      double window_s, const std::string& op_unit, double bytes_per_op,
                      const energy_options& o) {
  std::vector<double> gross;
  std::vector<double> net;
  std::vector<double> watts;
  double counter = 0;
  double integral = 0;
  double seconds = 0;
  double ops = 0;
  json per_window = json::array();
  for (const auto& w : windows) {
    if (!(w.ops > 0) || !(w.seconds > 0)) continue;
    gross.push_back(w.counter_j / w.ops);
    net.push_back((w.counter_j - idle_w * w.seconds) / w.ops);
    watts.push_back(w.counter_j / w.seconds);
    counter += w.counter_j;
    integral += w.integral_j;
    seconds += w.seconds;
    ops += w.ops;
    per_window.push_back(json{{"seconds", w.seconds},
                              {"counter_j", w.counter_j},
                              {"integral_j", w.integral_j},
                              {"ops", w.ops}});
  }
  if (gross.empty()) return energy_unsupported("no window completed");
  const auto g = mean_interval95(gross);
  const auto n = mean_interval95(net);
  const auto w = mean_interval95(watts);
  const double disagreement = counter_disagreement(counter, integral);
  json j{{"supported", true},
         {"source", "nvml_total_energy_counter"},
         {"op_unit", op_unit},
         {"tick_s", tick_s},
         {"window_s", window_s},
         {"windows", gross.size()},
         {"idle_w", idle_w},
         {"mean_w", w.mean},
         {"j_per_op", g.mean},
         {"j_per_op_net", n.mean},
         {"cv", g.cv},
         {"ci95_j_per_op", {g.mean - g.half_width, g.mean + g.half_width}},
         {"ci95_rel", g.mean > 0 ? g.half_width / g.mean : 0.0},
         {"ops_per_j", g.mean > 0 ? 1 / g.mean : 0.0},
         {"ops_per_s", seconds > 0 ? ops / seconds : 0.0},
         {"counter_vs_integral", disagreement},
         {"disagreement_flag", disagreement > o.max_disagreement},
         {"per_window", per_window}};
  if (bytes_per_op > 0 && g.mean > 0) j["bytes_per_j"] = bytes_per_op / g.mean;
  return j;
}

namespace {

using steady = std::chrono::steady_clock;
double now_s() { return std::chrono::duration<double>(steady::now().time_since_epoch()).count(); }

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
  const double start = now_s();
  double first_change = -1;
  std::uint64_t first_value = 0;
  while (true) {
    const auto e = m.energy_mj();
    if (!e.value) {
      b.error = e.error;
      return b;
    }
    const double t = now_s();
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

/// Samples instant power on its own thread while it lives.
class power_sampler {
public:
  power_sampler(gpu_monitor& m, double hz) : m_(m) {
    const auto period = std::chrono::duration<double>(1.0 / hz);
    thread_ = std::thread([this, period] {
      auto next = steady::now();
      while (!stop_.load()) {
        const auto p = m_.instant_power_w();
        const double t = now_s();
        {
          const std::lock_guard lock(mutex_);
          if (p.value)
            samples_.emplace_back(t, *p.value);
          else if (error_.empty())
            error_ = p.error;
        }
        next += std::chrono::duration_cast<steady::duration>(period);
        std::this_thread::sleep_until(next);
      }
    });
  }
  power_sampler(const power_sampler&) = delete;
  power_sampler& operator=(const power_sampler&) = delete;
  power_sampler(power_sampler&&) = delete;
  power_sampler& operator=(power_sampler&&) = delete;
  ~power_sampler() { finish(); }
  void finish() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  [[nodiscard]] const std::vector<std::pair<double, double>>& samples() const { return samples_; }
  [[nodiscard]] const std::string& error() const { return error_; }

private:
  gpu_monitor& m_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<std::pair<double, double>> samples_;
  std::string error_;
  std::thread thread_;
};

} // namespace

namespace {

/// Polls the energy counter on its own thread, so that the thread feeding the GPU never waits on
/// NVML (a read of the counter took milliseconds on the H200: read between chunks, it starved the
/// GPU). Each step is timed at the midpoint between the read that last saw the old value and the
/// read that first saw the new one (each read's own midpoint).
class step_watcher {
public:
  struct step {
    double t = 0;
    std::uint64_t mj = 0;
  };

  explicit step_watcher(gpu_monitor& m) : m_(m) {
    thread_ = std::thread([this] { run(); });
  }
  step_watcher(const step_watcher&) = delete;
  step_watcher& operator=(const step_watcher&) = delete;
  step_watcher(step_watcher&&) = delete;
  step_watcher& operator=(step_watcher&&) = delete;
  ~step_watcher() { finish(); }
  void finish() {
    stop_.store(true);
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

private:
  void run() {
    std::optional<std::uint64_t> last;
    double last_mid = 0;
    while (!stop_.load()) {
      const double before = now_s();
      const auto e = m_.energy_mj();
      const double after = now_s();
      const double mid = 0.5 * (before + after);
      read_s_.push_back(after - before);
      if (!e.value) {
        const std::lock_guard lock(mutex_);
        error_ = e.error;
        return;
      }
      if (last && *e.value != *last) {
        const std::lock_guard lock(mutex_);
        steps_.push_back({0.5 * (last_mid + mid), *e.value});
      }
      last = *e.value;
      last_mid = mid;
      std::this_thread::sleep_for(std::chrono::microseconds(250));
    }
  }

  gpu_monitor& m_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<step> steps_;
  std::vector<double> read_s_; // the watcher thread's own until finish()
  std::string error_;
  std::thread thread_;
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

} // namespace

json measure_gpu_energy(gpu_monitor* monitor, const std::string& unavailable_reason,
                        cudaStream_t stream, const std::function<void(cudaStream_t)>& body,
                        double ops_per_launch, const std::string& op_unit, double bytes_per_op,
                        const energy_options& o) {
  if (monitor == nullptr) return energy_unsupported(unavailable_reason);
  if (const auto e = monitor->energy_mj(); !e.value) return energy_unsupported(e.error);
  GPUBENCH_CUDA_TRY(cudaStreamSynchronize(stream));
  const baseline base = cached_baseline(*monitor, o);
  if (!base.error.empty()) return energy_unsupported(base.error);
  const double window_s = energy_window_seconds(base.tick_s, o);

  // Launches per chunk: about 1 ms of work, the unit in which the feeding thread sees progress.
  const cuda::event start;
  const cuda::event stop;
  body(stream);
  start.record(stream);
  body(stream);
  stop.record(stream);
  stop.synchronize();
  const double one = cuda::elapsed_seconds(start, stop);
  const long chunk = one > 0 ? std::clamp(static_cast<long>(1e-3 / one), 1L, 100000L) : 100L;
  // One chunk timed whole: the GPU time of a launch back to back, for the busy fraction.
  start.record(stream);
  for (long i = 0; i < chunk; ++i) body(stream);
  stop.record(stream);
  stop.synchronize();
  const double launch_s = cuda::elapsed_seconds(start, stop) / static_cast<double>(chunk);

  // Chunks in flight: at least 20 ms of queued work, so that a late wake-up of this thread never
  // idles the GPU, and at most about 1000 launches (beyond the launch queue, enqueueing blocks).
  const double chunk_s = launch_s * static_cast<double>(chunk);
  const long by_time = chunk_s > 0 ? static_cast<long>(std::ceil(0.02 / chunk_s)) : 8L;
  const long in_flight = std::clamp(std::min(by_time, 1000L / chunk), 2L, 64L);
  std::vector<cuda::event> done_events;
  for (long i = 0; i < in_flight; ++i) done_events.emplace_back(false);
  long enqueued = 0;
  long completed = 0;
  std::vector<std::pair<double, long>> timeline; // (time the host saw it, chunks completed)
  const auto enqueue = [&] {
    for (long i = 0; i < chunk; ++i) body(stream);
    done_events[static_cast<std::size_t>(enqueued % in_flight)].record(stream);
    ++enqueued;
  };
  const auto advance = [&] {
    done_events[static_cast<std::size_t>(completed % in_flight)].synchronize();
    ++completed;
    timeline.emplace_back(now_s(), completed);
    enqueue();
  };

  // Windows start and end where the counter steps, so each holds whole steps and no quantization
  // error; each starts at the first step after a random delay (a random phase against the step).
  // The operations in a window are read off the completion timeline at its two step times.
  struct window_edges {
    step_watcher::step first;
    step_watcher::step last;
  };
  std::vector<window_edges> edges;
  std::string counter_error;
  power_sampler power(*monitor, o.power_hz);
  std::optional<step_watcher> watcher;
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> phase(0.0, base.tick_s);
  try {
    for (long i = 0; i < in_flight; ++i) enqueue();
    const double settle_until = now_s() + 0.2; // clocks and power settle under load
    while (now_s() < settle_until) advance();
    watcher.emplace(*monitor);
    std::size_t seen = 0;
    std::optional<step_watcher::step> open;
    double not_before = now_s() + phase(rng);
    double last_step_t = now_s();
    while (static_cast<int>(edges.size()) < o.windows && !interrupt_requested()) {
      advance();
      for (const auto& st : watcher->steps_from(seen, counter_error)) {
        ++seen;
        last_step_t = st.t;
        if (!open) {
          if (st.t >= not_before) open = st;
        } else if (st.t >= open->t + window_s) {
          edges.push_back({*open, st});
          open.reset();
          not_before = st.t + phase(rng);
          if (static_cast<int>(edges.size()) == o.windows) break;
        }
      }
      if (!counter_error.empty()) break;
      if (now_s() - last_step_t > 5 * window_s + 1) {
        counter_error = "the energy counter stopped advancing under load";
        break;
      }
    }
    watcher->finish();
    GPUBENCH_CUDA_TRY(cudaStreamSynchronize(stream));
  } catch (...) {
    if (watcher) watcher->finish();
    power.finish();
    throw;
  }
  power.finish();
  if (!counter_error.empty()) return energy_unsupported(counter_error);
  std::vector<energy_window> windows;
  double launches = 0;
  for (const auto& [first, last] : edges) {
    energy_window w;
    w.seconds = last.t - first.t;
    w.counter_j = static_cast<double>(last.mj - first.mj) * 1e-3;
    const double chunks = completed_at(timeline, last.t) - completed_at(timeline, first.t);
    launches += chunks * static_cast<double>(chunk);
    w.ops = chunks * static_cast<double>(chunk) * ops_per_launch;
    w.integral_j = integrate_power(power.samples(), first.t, last.t);
    windows.push_back(w);
  }
  auto j = summarize_energy(windows, base.idle_w, base.tick_s, window_s, op_unit, bytes_per_op, o);
  j["launches_per_chunk"] = chunk;
  j["chunks_in_flight"] = in_flight;
  j["power_samples"] = power.samples().size();
  j["counter_read_s"] = watcher->median_read_s();
  // The share of the windows the GPU spent running the work: launches x the GPU time of one
  // launch back to back, over the windows' time. Below 0.9 the figure is the energy of a GPU that
  // waited on the host, and the row says so.
  double seconds = 0;
  for (const auto& w : windows) seconds += w.seconds;
  if (seconds > 0 && launch_s > 0) {
    const double busy = launches * launch_s / seconds;
    j["busy_fraction"] = busy;
    j["host_bound"] = busy < 0.9;
  }
  if (power.samples().empty()) {
    j.erase("counter_vs_integral");
    j["disagreement_flag"] = false;
    j["integral_error"] = power.error().empty() ? "no instant-power sample" : power.error();
  }
  return j;
}

namespace {

/// Package-level RAPL domains (intel-rapl:N, not their sub-zones) and their counter ranges.
struct rapl_domain {
  std::filesystem::path energy;
  double range_uj = 0;
};

std::vector<rapl_domain> rapl_domains(std::string& why) {
  namespace fs = std::filesystem;
  std::vector<rapl_domain> out;
  const fs::path root = "/sys/class/powercap";
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    why = "no /sys/class/powercap";
    return out;
  }
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const auto name = entry.path().filename().string();
    if (name.rfind("intel-rapl:", 0) != 0 || name.find(':', 11) != std::string::npos) continue;
    rapl_domain d;
    d.energy = entry.path() / "energy_uj";
    std::ifstream range(entry.path() / "max_energy_range_uj");
    range >> d.range_uj;
    std::ifstream probe(d.energy);
    double v = -1;
    if (!(probe >> v)) {
      why = fmt::format("{} is not readable (RAPL is often root-only)", d.energy.string());
      return {};
    }
    out.push_back(d);
  }
  if (out.empty() && why.empty()) why = "no RAPL package domain under /sys/class/powercap";
  return out;
}

double read_uj(const rapl_domain& d) {
  std::ifstream in(d.energy);
  double v = 0;
  in >> v;
  return v;
}

} // namespace

json measure_cpu_energy(const std::function<void()>& body, double ops_per_call,
                        const std::string& op_unit, const energy_options& o) {
  std::string why;
  const auto domains = rapl_domains(why);
  if (domains.empty()) return energy_unsupported(why);
  const auto total_j = [&](const std::vector<double>& before) {
    double j = 0;
    for (std::size_t i = 0; i < domains.size(); ++i) {
      double d = read_uj(domains[i]) - before[i];
      if (d < 0) d += domains[i].range_uj; // the counter wrapped
      j += d * 1e-6;
    }
    return j;
  };
  const auto snapshot = [&] {
    std::vector<double> v;
    v.reserve(domains.size());
    for (const auto& d : domains) v.push_back(read_uj(d));
    return v;
  };
  // Idle baseline, then three windows of the reference: RAPL updates about every millisecond, so
  // its windows need no random phase; three keep the cost bounded.
  auto before = snapshot();
  double t0 = now_s();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.min_window_s));
  const double idle_w = total_j(before) / (now_s() - t0);
  std::vector<energy_window> windows;
  for (int w = 0; w < 3 && !interrupt_requested(); ++w) {
    before = snapshot();
    t0 = now_s();
    double calls = 0;
    while (now_s() - t0 < o.min_window_s) {
      body();
      calls += 1;
    }
    energy_window win;
    win.seconds = now_s() - t0;
    win.counter_j = total_j(before);
    win.integral_j = win.counter_j; // no second source on the CPU
    win.ops = calls * ops_per_call;
    windows.push_back(win);
  }
  auto j = summarize_energy(windows, idle_w, 0.001, o.min_window_s, op_unit, 0, o);
  if (j.value("supported", false)) {
    j["source"] = "rapl_package";
    j.erase("counter_vs_integral"); // no second source on the CPU
    j["disagreement_flag"] = false;
  }
  return j;
}

namespace {
std::string joules(double j) {
  const double a = std::abs(j);
  if (a >= 1) return fmt::format("{:.3g} J", j);
  if (a >= 1e-3) return fmt::format("{:.3g} mJ", j * 1e3);
  if (a >= 1e-6) return fmt::format("{:.3g} uJ", j * 1e6);
  if (a >= 1e-9) return fmt::format("{:.3g} nJ", j * 1e9);
  return fmt::format("{:.3g} pJ", j * 1e12);
}
} // namespace

std::string energy_line(const json& e) {
  if (!e.is_object() || e.empty()) return {};
  if (!e.value("supported", false))
    return fmt::format("energy: unsupported ({})", e.value("reason", std::string("unknown")));
  const std::string unit = e.value("op_unit", std::string("op"));
  std::string out = fmt::format(
      "energy: {}/{} (net of idle {}), mean {:.1f} W (idle {:.1f} W), CV {:.2f}%, 95% +-{:.2f}% "
      "over {} windows of {:.2f} s",
      joules(e.value("j_per_op", 0.0)), unit, joules(e.value("j_per_op_net", 0.0)),
      e.value("mean_w", 0.0), e.value("idle_w", 0.0), e.value("cv", 0.0) * 100,
      e.value("ci95_rel", 0.0) * 100, e.value("windows", 0), e.value("window_s", 0.0));
  out += fmt::format(", {:.4g} {}s/J", e.value("ops_per_j", 0.0), unit);
  if (const auto it = e.find("bytes_per_j"); it != e.end() && it->is_number())
    out += fmt::format(", {:.3g} GB/s per W", it->get<double>() * 1e-9);
  if (const auto it = e.find("counter_vs_integral"); it != e.end() && it->is_number())
    out += fmt::format(", counter vs power integral {:.1f}%{}", it->get<double>() * 100,
                       e.value("disagreement_flag", false) ? " (DISAGREE > 5%)" : "");
  if (const auto it = e.find("busy_fraction"); it != e.end() && it->is_number())
    out += fmt::format(", GPU busy {:.0f}%{}", it->get<double>() * 100,
                       e.value("host_bound", false) ? " (HOST-BOUND: the GPU waited on the host)"
                                                    : "");
  return out;
}

} // namespace gpubench
