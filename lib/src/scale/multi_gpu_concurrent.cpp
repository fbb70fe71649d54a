#include "gpubench/scale/multi_gpu_concurrent.hpp"

#include "gpubench/core/clock.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/start_gate.hpp"
#include "gpubench/engine/option_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <thread>

namespace gpubench {

// --- timed_barrier ----------------------------------------------------------------------------

timed_barrier::timed_barrier(std::size_t expected, std::function<void()> completion)
    : expected_(expected), completion_(std::move(completion)) {}

void timed_barrier::complete_locked() {
  if (completion_) completion_();
  arrived_ = 0;
  ++phase_;
  cv_.notify_all();
}

bool timed_barrier::arrive_and_wait(std::chrono::duration<double> timeout) {
  std::unique_lock lock(mutex_);
  if (broken_) return false;
  const auto phase = phase_;
  if (++arrived_ >= expected_) {
    complete_locked();
    return true;
  }
  const bool passed = cv_.wait_for(lock, timeout, [&] { return phase_ != phase || broken_; });
  if (!passed || broken_) {
    broken_ = true;
    cv_.notify_all();
    return false;
  }
  return true;
}

void timed_barrier::drop() {
  const std::lock_guard lock(mutex_);
  if (expected_ > 0) --expected_;
  if (!broken_ && arrived_ > 0 && arrived_ >= expected_) complete_locked();
}

std::size_t timed_barrier::expected() const {
  const std::lock_guard lock(mutex_);
  return expected_;
}

// --- one run on every GPU at once --------------------------------------------------------------

namespace {

using steady = std::chrono::steady_clock;

/// The threads of one point: a barrier per measurement ("phase"), the gate generations it uses,
/// and the start stamps each phase left, turned into a skew when the next phase (or the point)
/// completes, by which time every kernel of the phase has run.
class point_sync {
public:
  point_sync(std::size_t point, std::size_t slots, std::size_t expected, std::uint64_t base,
             cuda::start_gate* gate, measurement_skews& skews, std::uint64_t& last_generation)
      : point_(point), base_(base), gate_(gate), skews_(skews), last_generation_(last_generation),
        arrivals_(slots, 0), host_exit_(slots), barrier_(expected, [this] { complete(); }) {}

  void arrive(std::size_t slot, std::string_view name, cudaStream_t stream,
              std::chrono::duration<double> timeout) {
    const std::uint64_t generation = base_ + ++arrivals_[slot];
    {
      const std::lock_guard lock(mutex_);
      pending_name_ = std::string(name);
      pending_on_gpu_ = stream != nullptr && gate_ != nullptr;
    }
    if (stream != nullptr && gate_ != nullptr)
      gate_->wait_on(static_cast<int>(slot), generation, stream);
    if (!barrier_.arrive_and_wait(timeout)) {
      if (gate_ != nullptr) gate_->release(generation); // let this GPU go; the run is failing
      throw std::runtime_error(fmt::format(
          "--concurrent: the GPU threads did not all reach the start of {} within {:.0f} s (a "
          "thread is stuck or failed); stopping instead of waiting",
          name, timeout.count()));
    }
    host_exit_[slot] = {generation, steady_seconds()};
  }

  void leave() { barrier_.drop(); }

  /// After every thread has left: the last phase's skew.
  void finish() {
    const std::lock_guard lock(mutex_);
    record_phase(completed_);
  }

private:
  void complete() { // runs in the last thread to arrive, before any is released
    const std::lock_guard lock(mutex_);
    record_phase(completed_); // the previous phase's kernels have all finished by now
    ++completed_;
    phase_name_ = pending_name_;
    phase_on_gpu_ = pending_on_gpu_;
    last_generation_ = base_ + completed_;
    if (gate_ != nullptr) gate_->release(base_ + completed_);
  }

  void record_phase(std::uint64_t phase) {
    if (phase == 0 || recorded_ >= phase) return;
    recorded_ = phase;
    const std::uint64_t generation = base_ + phase;
    std::vector<double> starts;
    bool timed_out = false;
    if (phase_on_gpu_) {
      for (std::size_t s = 0; s < arrivals_.size(); ++s) {
        const auto st = gate_->read(static_cast<int>(s));
        if (st.generation != generation) continue;
        if (st.timed_out)
          timed_out = true;
        else
          starts.push_back(static_cast<double>(st.globaltimer_ns) * 1e-9);
      }
    } else {
      for (const auto& [g, t] : host_exit_)
        if (g == generation) starts.push_back(t);
    }
    if (starts.empty() || timed_out) return;
    const double skew = *std::max_element(starts.begin(), starts.end()) -
                        *std::min_element(starts.begin(), starts.end());
    auto& per_point = skews_.per_point[point_];
    const auto it = per_point.find(phase_name_);
    per_point[phase_name_] = it == per_point.end() ? skew : std::max(it->second, skew);
  }

  std::size_t point_;
  std::uint64_t base_;
  cuda::start_gate* gate_;
  measurement_skews& skews_;
  std::uint64_t& last_generation_;
  std::vector<std::uint64_t> arrivals_; ///< per slot, this point's arrivals so far
  std::vector<std::pair<std::uint64_t, double>> host_exit_; ///< per slot: generation, time
  std::mutex mutex_;
  std::string pending_name_;
  bool pending_on_gpu_ = false;
  std::string phase_name_;
  bool phase_on_gpu_ = false;
  std::uint64_t completed_ = 0;
  std::uint64_t recorded_ = 0;
  timed_barrier barrier_; // last: its completion uses the members above
};

class concurrent_run {
public:
  concurrent_run(std::size_t slots, std::size_t points, const concurrent_options& copts)
      : slots_(slots), copts_(copts), in_point_(slots, 0), alive_(slots),
        run_barrier_(slots, [this] { start_point(); }) {
    if (copts.device_gate)
      gate_ = std::make_unique<cuda::start_gate>(static_cast<int>(slots), copts.barrier_timeout_s);
    skews_.per_point.resize(points);
    skews_.clock = copts.device_gate ? "gpu_globaltimer" : "host";
  }

  void before_point(std::size_t slot, std::size_t index) {
    next_index_.store(index); // the same index in every thread
    if (!run_barrier_.arrive_and_wait(timeout()))
      throw std::runtime_error(fmt::format(
          "--concurrent: the GPU threads did not all reach point {} within {:.0f} s; stopping "
          "instead of waiting",
          index + 1, timeout().count()));
    in_point_[slot] = 1;
  }

  void measurement_start(std::size_t slot, std::string_view name, cudaStream_t stream) {
    if (in_point_[slot]) current_->arrive(slot, name, stream, timeout());
  }

  void after_point(std::size_t slot) {
    if (!in_point_[slot]) return;
    in_point_[slot] = 0;
    current_->leave();
  }

  /// The thread is done with the run (finished, stopped early or failed).
  void leave_run(std::size_t slot) {
    after_point(slot);
    --alive_;
    run_barrier_.drop();
  }

  /// After every thread has joined.
  measurement_skews finish() {
    if (current_) current_->finish();
    return std::move(skews_);
  }

private:
  std::chrono::duration<double> timeout() const {
    return std::chrono::duration<double>(copts_.barrier_timeout_s);
  }
  void start_point() { // every thread still running has finished the previous point
    if (current_) current_->finish();
    current_ =
        std::make_unique<point_sync>(next_index_.load(), slots_, alive_.load(), last_generation_,
                                     gate_.get(), skews_, last_generation_);
  }

  std::size_t slots_;
  concurrent_options copts_;
  std::vector<char> in_point_; ///< per slot (not vector<bool>: threads write their own)
  /// Threads still in the run, read in the run barrier's completion (which holds its lock).
  std::atomic<std::size_t> alive_;
  std::unique_ptr<cuda::start_gate> gate_;
  measurement_skews skews_;
  std::uint64_t last_generation_ = 0;
  std::atomic<std::size_t> next_index_ = 0;
  std::unique_ptr<point_sync> current_;
  timed_barrier run_barrier_;
};

} // namespace

run_report execute_concurrent(const std::vector<planned_point>& points, const common_options& opts,
                              const std::vector<std::string>& argv,
                              const concurrent_options& copts) {
  // The plan's devices in order, and each device's points.
  std::vector<int> devices;
  std::map<int, std::vector<planned_point>> plan;
  for (const auto& p : points) {
    const int d = point_device(p.params);
    if (plan.find(d) == plan.end()) devices.push_back(d);
    plan[d].push_back(p);
  }
  if (devices.empty()) return merge_rank_runs({}, "concurrent");
  const std::size_t n = devices.size();
  const std::size_t per_device = plan[devices.front()].size();
  concurrent_run run(n, per_device, copts);
  std::vector<rank_run> runs(n);
  std::vector<std::exception_ptr> failures(n);
  const int cpu_threads = std::max(
      1, (opts.cpu_threads > 0 ? opts.cpu_threads : usable_cpu_cores()) / static_cast<int>(n));

  struct observer final : point_observer {
    concurrent_run& run;
    std::size_t slot;
    observer(concurrent_run& r, std::size_t s) : run(r), slot(s) {}
    void before_point(std::size_t index) override { run.before_point(slot, index); }
    void after_point(std::size_t /*index*/, result& /*r*/) override { run.after_point(slot); }
  };

  const auto work = [&](std::size_t slot) {
    const int device = devices[slot];
    try {
      common_options mine = opts;
      mine.devices = {device};
      mine.cpu_threads = cpu_threads;
      if (slot > 0) mine.verbosity = 0; // one voice on stderr
      run_context ctx(mine);
      observer obs(run, slot);
      const scoped_measurement_start_hook hook([&](std::string_view name, cudaStream_t stream) {
        run.measurement_start(slot, name, stream);
      });
      runs[slot].report = execute(plan[device], ctx, argv, &obs);
    } catch (...) {
      failures[slot] = std::current_exception();
    }
    run.leave_run(slot);
  };
  std::vector<std::thread> threads;
  for (std::size_t slot = 1; slot < n; ++slot) threads.emplace_back(work, slot);
  work(0);
  for (auto& t : threads) t.join();
  for (const auto& f : failures)
    if (f) std::rethrow_exception(f);

  for (std::size_t slot = 0; slot < n; ++slot) {
    rank_record& who = runs[slot].who;
    who.rank = static_cast<int>(slot);
    who.host = runs[slot].report.meta.host.name;
    who.local_rank = static_cast<int>(slot);
    who.local_device = devices[slot];
    for (const auto& d : runs[slot].report.devices)
      if (d.info.id == devices[slot]) {
        who.gpu_name = d.info.name;
        who.pci_bus_id = d.info.pci_bus_id;
      }
    if (copts.device_gate && devices[slot] >= 0) who.uuid = cuda::device_uuid(devices[slot]);
  }
  run_report merged = merge_rank_runs(std::move(runs), "concurrent", run.finish());
  // Each GPU thread ran with its own device: the record names every device of the run.
  merged.meta.options = options_record(opts);
  return merged;
}

} // namespace gpubench
