#include "gpubench/scale/mpi_run.hpp"

#include "gpubench/core/clock.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/error.hpp"
#include "gpubench/engine/env.hpp"
#include "gpubench/engine/environment.hpp"
#include "gpubench/engine/test_hooks.hpp"
#include "gpubench/scale/multi_gpu_merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <thread>

#ifndef GPUBENCH_HAVE_MPI
#define GPUBENCH_HAVE_MPI 0 // lib/CMakeLists.txt defines it
#endif
#if GPUBENCH_HAVE_MPI
#include <mpi.h>
#endif

namespace gpubench {

bool mpi_built_in() noexcept { return GPUBENCH_HAVE_MPI != 0; }

namespace {

/// A build without MPI (or, for tests of that path, one told GPUBENCH_TEST_PRETEND_NO_MPI=1)
/// started by a launcher as one of several processes would have them all write one file.
[[noreturn]] void refuse_launcher(const launcher_info& l) {
  throw usage_error(fmt::format(
      "this gpubench was built without MPI, but {} started it as one of {} processes; rebuild "
      "with MPI (libopenmpi-dev, see docs/multi-gpu.md) or run it as a single process",
      l.name, l.size));
}

bool pretend_no_mpi() { return process_environment().pretend_no_mpi; }

/// The launcher's variables, from the environment as the process started.
const char* launcher_variable(const char* name) { return process_environment().find(name); }

} // namespace

#if GPUBENCH_HAVE_MPI

std::string mpi_description() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(version, &len);
  std::string v(version, static_cast<std::size_t>(len));
  if (const auto nl = v.find_first_of("\n,"); nl != std::string::npos) v.resize(nl);
  return "MPI: built in (" + v + ")";
}

namespace {

using steady = std::chrono::steady_clock;

/// Ends this rank by the signal it was sent, not by an exit status: the launcher, which sent it
/// while ending the job, then sees the death it asked for (Open MPI 4.1's mpirun could hang in
/// its own teardown when a rank it was killing exited 143 instead).
[[noreturn]] void die_by_interrupt_signal() {
  const int sig = interrupt_signal();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
  std::_Exit(128 + sig); // not reached: the default action of SIGINT, SIGTERM and SIGHUP ends us
}

enum tag : int { tag_clock = 1601, tag_arrive, tag_go, tag_result };

/// Thrown on every rank when rank 0 stops the sweep (a rank is lost): the ranks still answering
/// go straight to the gather.
struct job_stopped {};

} // namespace

class mpi_job {
public:
  mpi_job() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm local = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &local_rank_);
    MPI_Comm_size(local, &local_size_);
    MPI_Comm_free(&local);
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    MPI_Get_processor_name(name, &len);
    host_.assign(name, static_cast<std::size_t>(len));
    lost_.assign(static_cast<std::size_t>(size_), false);
  }
  mpi_job(const mpi_job&) = delete;
  mpi_job& operator=(const mpi_job&) = delete;
  ~mpi_job() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized == 0) MPI_Finalize();
  }

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] int local_rank() const noexcept { return local_rank_; }
  [[nodiscard]] const std::string& host() const noexcept { return host_; }
  [[nodiscard]] bool root() const noexcept { return rank_ == 0; }
  [[nodiscard]] bool any_lost() const {
    return std::find(lost_.begin(), lost_.end(), true) != lost_.end();
  }

  /// Ends the whole job now, with a message on stderr (rank 0 after writing what it has).
  [[noreturn]] void abort(int code, const std::string& why) const {
    std::fprintf(stderr, "gpubench: rank %d: %s; ending the MPI job (MPI_Abort)\n", rank_,
                 why.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code); // MPI_Abort does not return; this line is for the compiler
  }

  // --- point to point with a deadline ---

  /// A signal while this rank waits for another (Ctrl-C, or the launcher's SIGTERM after another
  /// rank ended the job) ends it now: the wait could otherwise last the whole --sync-timeout.
  void end_if_interrupted() const {
    if (!interrupt_requested()) return;
    std::fprintf(stderr, "gpubench: rank %d: interrupted (%s) while waiting for another rank\n",
                 rank_, interrupt_signal_name());
    std::fflush(stderr);
    die_by_interrupt_signal();
  }

  /// Waits for `req` until the deadline; false (request cancelled) when it passed.
  bool wait(MPI_Request& req, steady::time_point deadline) const {
    int done = 0;
    while (true) {
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (done != 0) return true;
      end_if_interrupted();
      if (steady::now() >= deadline) {
        MPI_Cancel(&req);
        MPI_Request_free(&req);
        return false;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  bool send_double(int to, int t, double v, steady::time_point deadline) const {
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Isend(&v, 1, MPI_DOUBLE, to, t, MPI_COMM_WORLD, &req);
    return wait(req, deadline);
  }
  std::optional<double> recv_double(int from, int t, steady::time_point deadline) const {
    double v = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Irecv(&v, 1, MPI_DOUBLE, from, t, MPI_COMM_WORLD, &req);
    if (!wait(req, deadline)) return std::nullopt;
    return v;
  }
  bool send_text(int to, const std::string& text, steady::time_point deadline) const {
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Isend(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, tag_result, MPI_COMM_WORLD,
              &req);
    return wait(req, deadline);
  }
  std::optional<std::string> recv_text(int from, steady::time_point deadline) const {
    MPI_Status st;
    int ready = 0;
    while (true) {
      MPI_Iprobe(from, tag_result, MPI_COMM_WORLD, &ready, &st);
      if (ready != 0) break;
      end_if_interrupted();
      if (steady::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    int count = 0;
    MPI_Get_count(&st, MPI_CHAR, &count);
    std::string text(static_cast<std::size_t>(count), '\0');
    MPI_Recv(text.data(), count, MPI_CHAR, from, tag_result, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return text;
  }

  std::vector<bool> lost_;                    ///< rank 0's view: ranks that stopped answering
  std::vector<std::string> lost_reason_;      ///< why, per rank (rank 0)
  std::vector<std::optional<double>> offset_; ///< rank 0: each rank's clock minus rank 0's
  std::vector<std::optional<double>> rtt_;

private:
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  std::string host_;
};

mpi_job* current_mpi_job() {
  static std::unique_ptr<mpi_job> job;
  static bool checked = false;
  if (!checked) {
    checked = true;
    if (const auto l = detect_launcher(launcher_variable)) {
      if (pretend_no_mpi()) refuse_launcher(*l);
      job = std::make_unique<mpi_job>();
    }
  }
  return job.get();
}

namespace {

/// Rank 0 measures each rank's clock against its own: a few round trips, the shortest kept; the
/// offset is the rank's reading minus the midpoint of rank 0's send and receive.
void measure_clock_offsets(mpi_job& job, double timeout_s) {
  constexpr int rounds = 8;
  const auto deadline = [&] {
    return steady::now() +
           std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(timeout_s));
  };
  job.offset_.assign(static_cast<std::size_t>(job.size()), std::nullopt);
  job.rtt_.assign(static_cast<std::size_t>(job.size()), std::nullopt);
  job.lost_reason_.assign(static_cast<std::size_t>(job.size()), "");
  if (!job.root()) {
    for (int i = 0; i < rounds; ++i) {
      if (!job.recv_double(0, tag_clock, deadline()))
        job.abort(3, fmt::format("rank 0 did not start the clock exchange within {} s", timeout_s));
      (void)job.send_double(0, tag_clock, steady_seconds(), deadline());
    }
    return;
  }
  job.offset_[0] = 0.0;
  job.rtt_[0] = 0.0;
  for (int r = 1; r < job.size(); ++r)
    for (int i = 0; i < rounds && !job.lost_[r]; ++i) {
      const double t0 = steady_seconds();
      const auto got = job.send_double(r, tag_clock, t0, deadline())
                           ? job.recv_double(r, tag_clock, deadline())
                           : std::nullopt;
      const double t2 = steady_seconds();
      if (!got) {
        job.lost_[r] = true;
        job.lost_reason_[r] =
            fmt::format("did not answer the clock exchange within {} s", timeout_s);
        break;
      }
      if (!job.rtt_[r] || t2 - t0 < *job.rtt_[r]) {
        job.rtt_[r] = t2 - t0;
        job.offset_[r] = *got - 0.5 * (t0 + t2);
      }
    }
}

/// Before each point: every rank tells rank 0 it is ready, rank 0 answers go (1) or stop (0).
class mpi_point_sync final : public point_observer {
public:
  mpi_point_sync(mpi_job& job, double timeout_s, std::size_t points)
      : job_(job), timeout_s_(timeout_s), starts_(points),
        fail_(parse_rank_failure(process_environment().mpi_test_fail)) {}

  void before_point(std::size_t index) override {
    if (fail_ && fail_->rank == job_.rank() && fail_->point == index + 1) {
      std::fprintf(stderr, "gpubench: rank %d: GPUBENCH_MPI_TEST_FAIL: %s before point %zu\n",
                   job_.rank(), fail_->stall ? "stopping to answer" : "aborting", index + 1);
      std::fflush(stderr);
      if (!fail_->stall) std::abort();
      // Stops answering MPI, but still ends on a signal (the launcher's SIGTERM when rank 0
      // ends the job), as a rank hung in its own work would.
      while (!interrupt_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      die_by_interrupt_signal();
    }
    const auto deadline = steady::now() + std::chrono::duration_cast<steady::duration>(
                                              std::chrono::duration<double>(timeout_s_));
    const auto i = static_cast<double>(index);
    if (!job_.root()) {
      // Rank 0 decides at the deadline whether a rank is lost; the others wait longer so they
      // hear its decision rather than give up at the same moment.
      const auto later = deadline + std::chrono::duration_cast<steady::duration>(
                                        std::chrono::duration<double>(timeout_s_ + 5));
      (void)job_.send_double(0, tag_arrive, i, later);
      const auto go = job_.recv_double(0, tag_go, later);
      if (!go)
        job_.abort(3,
                   fmt::format("rank 0 did not start point {} within {} s", index + 1, timeout_s_));
      if (*go == 0) throw job_stopped{};
    } else {
      for (int r = 1; r < job_.size(); ++r)
        if (!job_.lost_[r] && !job_.recv_double(r, tag_arrive, deadline)) {
          job_.lost_[r] = true;
          job_.lost_reason_[r] = fmt::format("did not reach point {} within {} s (crashed, hung "
                                             "or still busy with the point before)",
                                             index + 1, timeout_s_);
        }
      const double go = job_.any_lost() ? 0 : 1;
      for (int r = 1; r < job_.size(); ++r)
        if (!job_.lost_[r]) (void)job_.send_double(r, tag_go, go, deadline);
      if (go == 0) throw job_stopped{};
    }
    starts_[index] = steady_seconds();
  }
  void after_point(std::size_t /*index*/, result& r) override { done_.push_back(r); }

  [[nodiscard]] const std::vector<std::optional<double>>& starts() const { return starts_; }
  /// The points finished so far (what a run stopped by rank 0 still reports).
  [[nodiscard]] const std::vector<result>& done() const { return done_; }

private:
  mpi_job& job_;
  double timeout_s_;
  std::vector<std::optional<double>> starts_;
  std::optional<injected_rank_failure> fail_;
  std::vector<result> done_;
};

nlohmann::json starts_json(const std::vector<std::optional<double>>& starts) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& s : starts) a.push_back(s ? nlohmann::json(*s) : nlohmann::json());
  return a;
}

} // namespace

void pick_rank_device(mpi_job& job, common_options& opts, const mpi_options& mopts) {
  if (opts.cpu_only || mopts.device_given) return;
  const int count = cuda::device_count_or_zero();
  opts.devices = {count > 0 ? job.local_rank() % count : 0};
}

std::optional<run_report> execute_mpi(mpi_job& job, const std::vector<planned_point>& points,
                                      run_context& ctx, const std::vector<std::string>& argv,
                                      const mpi_options& mopts, bool needs_gpu) {
  const auto& opts = ctx.options();
  rank_run mine;
  mine.who.rank = job.rank();
  mine.who.host = job.host();
  mine.who.local_rank = job.local_rank();
  mine.who.local_device = opts.cpu_only || opts.devices.empty() ? -1 : opts.devices.front();
  // A rank that cannot run (no usable GPU) still takes part, so the job neither hangs nor loses
  // the other ranks' results; its points are errors with the reason.
  if (needs_gpu && mine.who.local_device >= 0) try {
      cuda::require_device(mine.who.local_device);
    } catch (const cuda::no_device_error& e) {
      mine.who.status = "error";
      mine.who.reason = e.what();
    }
  measure_clock_offsets(job, mopts.timeout_s);
  mpi_point_sync sync(job, mopts.timeout_s, points.size());
  bool stopped = false;
  try {
    if (mine.who.status == "ok") {
      mine.report = execute(points, ctx, argv, &sync);
    } else {
      mine.report.meta = collect_meta(argv);
      for (std::size_t i = 0; i < points.size(); ++i) {
        sync.before_point(i);
        result r;
        r.benchmark = points[i].bench->name;
        r.params = points[i].params;
        r.params.erase("device");
        r.device = mine.who.local_device;
        r.status = result_status::error;
        r.reason = fmt::format("rank {} could not run: {}", job.rank(), mine.who.reason);
        mine.report.results.push_back(std::move(r));
      }
    }
  } catch (const job_stopped&) {
    stopped = true;
  }
  if (stopped) { // execute() was left by the exception: its report is rebuilt here
    mine.report.meta = collect_meta(argv);
    mine.report.meta.incomplete = true;
    mine.report.meta.incomplete_reason = "stopped by rank 0 (another rank stopped answering)";
    mine.report.results = sync.done();
    mine.report.devices = ctx.devices_used();
  }
  if (mine.who.local_device >= 0 && mine.who.status == "ok") {
    for (const auto& d : mine.report.devices)
      if (d.info.id == mine.who.local_device) {
        mine.who.gpu_name = d.info.name;
        mine.who.pci_bus_id = d.info.pci_bus_id;
      }
    mine.who.uuid = cuda::device_uuid(mine.who.local_device);
  }
  mine.who.cores_usable = mine.report.meta.host.cores_usable;
  const auto deadline = steady::now() + std::chrono::duration_cast<steady::duration>(
                                            std::chrono::duration<double>(mopts.timeout_s));
  if (!job.root()) {
    const auto later = deadline + std::chrono::duration_cast<steady::duration>(
                                      std::chrono::duration<double>(mopts.timeout_s + 5));
    const nlohmann::json payload{{"who", to_json(mine.who)},
                                 {"report", to_json(mine.report)},
                                 {"starts", starts_json(sync.starts())}};
    if (!job.send_text(0, payload.dump(), later))
      job.abort(3, fmt::format("rank 0 did not collect the results within {} s", mopts.timeout_s));
    return std::nullopt;
  }
  // Rank 0: its own run, every live rank's, and a record for each lost one.
  std::vector<rank_run> runs;
  const auto to_root_clock = [&](const std::vector<std::optional<double>>& starts, int r) {
    std::vector<std::optional<double>> out;
    out.reserve(starts.size());
    for (const auto& s : starts)
      out.push_back(s && job.offset_[r] ? std::optional<double>(*s - *job.offset_[r])
                                        : std::nullopt);
    return out;
  };
  mine.point_start_s = to_root_clock(sync.starts(), 0);
  mine.who.clock_offset_s = 0.0;
  runs.push_back(std::move(mine));
  for (int r = 1; r < job.size(); ++r) {
    rank_run run;
    run.who.rank = r;
    std::optional<std::string> text;
    if (!job.lost_[r]) text = job.recv_text(r, deadline);
    if (!text) {
      if (!job.lost_[r])
        job.lost_reason_[r] = fmt::format("did not send its results within {} s", mopts.timeout_s);
      job.lost_[r] = true;
      run.who.status = "lost";
      run.who.reason = job.lost_reason_[r];
      run.report.meta = runs.front().report.meta;
      runs.push_back(std::move(run));
      continue;
    }
    const auto payload = nlohmann::json::parse(*text);
    run.who = rank_record_from_json(payload.at("who"));
    run.report = report_from_json(payload.at("report"));
    std::vector<std::optional<double>> starts;
    for (const auto& s : payload.at("starts"))
      starts.push_back(s.is_number() ? std::optional<double>(s.get<double>()) : std::nullopt);
    run.point_start_s = to_root_clock(starts, r);
    run.who.clock_offset_s = job.offset_[r];
    run.who.clock_rtt_s = job.rtt_[r];
    runs.push_back(std::move(run));
  }
  return merge_rank_runs(std::move(runs), "mpi");
}

void end_mpi_job(mpi_job& job, int exit_code) {
  if (job.root() && job.any_lost()) {
    std::string which;
    for (int r = 0; r < job.size(); ++r)
      if (job.lost_[r])
        which += fmt::format("{}rank {} {}", which.empty() ? "" : "; ", r, job.lost_reason_[r]);
    job.abort(exit_code == 0 ? exit_code::cuda : exit_code, which);
  }
}

int mpi_rank(const mpi_job& job) { return job.rank(); }

#else // no MPI built in

std::string mpi_description() { return "MPI: not built in"; }

class mpi_job {};

mpi_job* current_mpi_job() {
  if (const auto l = detect_launcher(launcher_variable)) refuse_launcher(*l);
  (void)pretend_no_mpi();
  return nullptr;
}

void pick_rank_device(mpi_job& /*job*/, common_options& /*opts*/, const mpi_options& /*m*/) {}

std::optional<run_report> execute_mpi(mpi_job& /*job*/, const std::vector<planned_point>& points,
                                      run_context& ctx, const std::vector<std::string>& argv,
                                      const mpi_options& /*mopts*/, bool /*needs_gpu*/) {
  return execute(points, ctx, argv);
}

void end_mpi_job(mpi_job& /*job*/, int /*exit_code*/) {}

int mpi_rank(const mpi_job& /*job*/) { return 0; }

#endif

} // namespace gpubench
