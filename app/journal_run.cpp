// A run with --output FILE journals each completed point in FILE.journal (docs/reliability.md,
// "The journal"), holds the journal's lock while it runs, and with --resume keeps the points an
// earlier, killed run of the same plan measured.
#include "commands.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/engine/context.hpp"
#include "gpubench/engine/env.hpp"
#include "gpubench/engine/option_table.hpp"
#include "gpubench/results/journal.hpp"
#include "gpubench/results/output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace gpubench::app {

namespace {

/// Told after each point by the runner: journals it; on a resumed run, hands back the points the
/// journal holds so that they are not measured again.
class journal_observer : public point_observer {
public:
  journal_observer(run_journal& journal, const run_context& ctx, const journal_contents& kept)
      : journal_(journal), ctx_(ctx), kept_(kept) {}
  void before_point(std::size_t /*index*/) override {}
  void after_point(std::size_t index, result& r) override {
    // A point cut short by a signal, or ended by a CUDA error (perhaps what killed the run), is
    // measured again by --resume rather than kept.
    if (interrupt_requested() || r.status == result_status::error) return;
    journal_.append(index, r, ctx_.devices_used());
  }
  const result* recorded(std::size_t index) override {
    const auto it = kept_.points.find(index);
    return it == kept_.points.end() ? nullptr : &it->second;
  }

private:
  run_journal& journal_;
  const run_context& ctx_;
  const journal_contents& kept_;
};

/// What a resumed run must share with the journal: the points, every option that changes what a
/// point measures, the build, and on a GPU the driver and the GPUs themselves.
journal_identity identity_of(const std::vector<planned_point>& points, const common_options& opts) {
  journal_identity id;
  std::vector<int> devices;
  for (const auto& p : points) {
    id.points.push_back({{"benchmark", p.bench->name}, {"params", p.params}});
    const int d = point_device(p.params);
    if (d >= 0 && std::find(devices.begin(), devices.end(), d) == devices.end())
      devices.push_back(d);
  }
  id.options = nlohmann::json::object();
  for (const auto& row : measurement_options())
    if (row.changes_measurement) id.options[row.name] = row.get(opts);
  id.version = version_string();
  id.git = git_revision();
  id.source_hash = source_hash();
  if (!devices.empty()) {
    id.cuda_driver = cuda::driver_version_string();
    for (const int d : devices) id.gpu_uuids.push_back(cuda::device_uuid(d));
  }
  return id;
}

void note(const common_options& opts, const std::string& text) {
  // The journal's path is the user's: quoted by the one escaping rule, as errors are.
  if (opts.verbosity > 0) std::fprintf(stderr, "gpubench: %s\n", printable_message(text).c_str());
}

} // namespace

int run_journaled(const std::vector<planned_point>& points, const common_options& opts,
                  const std::vector<std::string>& argv) {
  run_journal journal(opts.output_path); // the lock: one writer per output
  const journal_identity id = identity_of(points, opts);
  journal_contents kept;
  if (opts.resume) {
    kept = parse_journal(journal.existing_text(), journal.path());
    if (!kept.has_header) {
      note(opts, fmt::format("--resume: {} holds no point of an earlier run; every point is "
                             "measured",
                             journal.path()));
    } else if (const auto differs = identity_difference(kept.identity, id); !differs.empty()) {
      throw usage_error(fmt::format("--resume: the journal {} belongs to another run: {}; remove "
                                    "it to start afresh",
                                    journal.path(), differs));
    } else {
      note(opts,
           fmt::format("--resume: {} of {} points kept from {} (run started {}{})",
                       kept.points.size(), points.size(), journal.path(), kept.meta.started_at,
                       kept.torn_tail ? "; its torn last line is ignored" : ""));
    }
  } else if (!journal.existing_text().empty()) {
    // Measured points are never dropped unasked: the user chooses, before anything is touched.
    journal_contents earlier;
    try {
      earlier = parse_journal(journal.existing_text(), journal.path());
    } catch (const usage_error&) {
      // unreadable: nothing in it could be resumed, so nothing is lost by replacing it
    }
    if (!earlier.points.empty())
      throw usage_error(fmt::format(
          "{} holds {} measured point{} of an earlier run of this --output that did not finish "
          "(started {}); add --resume to keep them and measure the rest, or remove {} to start "
          "afresh",
          journal.path(), earlier.points.size(), earlier.points.size() == 1 ? "" : "s",
          earlier.meta.started_at, journal.path()));
    note(opts, fmt::format("{}: the journal of an earlier run of this --output holds no point; "
                           "it is replaced",
                           journal.path()));
  }
  // A journal without a point is worth nothing: a run that fails before its first point (bad
  // input, no GPU, no room for the header) leaves no file behind.
  const auto holds_points = [&] { return !kept.points.empty() || journal.appended() > 0; };
  const run_meta started = kept.has_header ? kept.meta : collect_meta(argv);
  run_report report;
  try {
    journal.start(id, started, points.size(), kept.has_header ? kept.valid_bytes : 0);
    run_context ctx(opts);
    journal_observer observer(journal, ctx, kept);
    report = execute(points, ctx, argv, &observer);
  } catch (...) {
    if (!holds_points()) journal.remove();
    throw;
  }
  if (kept.has_header) {
    report.meta.started_at = kept.meta.started_at;
    report.meta.resumed_at = utc_timestamp_now();
    report.meta.resumed_points = kept.points.size();
    for (const auto& d : kept.devices) // a GPU only the kept points used
      if (std::none_of(report.devices.begin(), report.devices.end(),
                       [&](const device_record& r) { return r.info.id == d.info.id; }))
        report.devices.push_back(d);
    std::sort(report.devices.begin(), report.devices.end(),
              [](const device_record& a, const device_record& b) { return a.info.id < b.info.id; });
  }
  int code = 0;
  try {
    code = emit_report(report, opts);
  } catch (...) {
    if (!holds_points()) journal.remove();
    throw;
  }
  if (report.meta.incomplete && holds_points())
    note(opts, fmt::format("{} keeps the points measured; the same command with --resume "
                           "measures the rest",
                           journal.path()));
  else
    journal.remove(); // the final file holds every point
  return code;
}

} // namespace gpubench::app
