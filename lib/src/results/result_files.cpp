// Saved results in: a report file loaded (bounded and validated), kept with its raw JSON for
// compare, and several reports merged into one for `report FILE...`.
#include "gpubench/results/result_files.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/results/journal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <new>
#include <sstream>

namespace gpubench {

using nlohmann::json;

run_report load_report(const std::string& path) {
  // Bounded in size, type and depth (untrusted_file.hpp): params, details and derived are kept
  // as any JSON and serialized later, which must stay shallow.
  json j;
  try {
    const std::string text = read_untrusted_file(path, "result file");
    // FILE.journal of a run that has not finished (or was killed) reads as an incomplete run.
    if (looks_like_journal(text)) return journal_report(parse_journal(text, path));
    j = parse_untrusted_json(text, path);
  } catch (const std::bad_alloc&) {
    throw usage_error(fmt::format("{}: out of memory while loading the result file", clip(path)));
  }
  try {
    return report_from_json(j);
  } catch (const usage_error& e) {
    throw usage_error(fmt::format("{}: {}", clip(path, 200), e.what()));
  } catch (const std::bad_alloc&) {
    throw usage_error(fmt::format("{}: out of memory while loading the result file", clip(path)));
  }
}

run_report merge_reports(std::span<const run_report> reports) {
  if (reports.empty()) return {};
  run_report merged;
  merged.meta = reports.front().meta;
  for (const auto& r : reports) {
    std::map<int, int> renumber;
    for (const auto& d : r.devices) {
      const auto same =
          std::find_if(merged.devices.begin(), merged.devices.end(), [&](const auto& m) {
            return m.info.id == d.info.id && m.info.name == d.info.name &&
                   m.info.pci_bus_id == d.info.pci_bus_id;
          });
      if (same != merged.devices.end()) {
        renumber[d.info.id] = d.info.id;
        continue;
      }
      int id = d.info.id;
      const bool taken = std::any_of(merged.devices.begin(), merged.devices.end(),
                                     [&](const auto& m) { return m.info.id == id; });
      if (taken) {
        for (const auto& m : merged.devices) id = std::max(id, m.info.id + 1);
      }
      renumber[d.info.id] = id;
      merged.devices.push_back(d);
      merged.devices.back().info.id = id;
    }
    for (const auto& res : r.results) {
      merged.results.push_back(res);
      const auto it = renumber.find(res.device);
      if (it != renumber.end()) merged.results.back().device = it->second;
    }
    if (&r != &reports.front() && r.meta.incomplete) {
      merged.meta.incomplete = true;
      if (!merged.meta.incomplete_reason.empty()) merged.meta.incomplete_reason += "; ";
      merged.meta.incomplete_reason += r.meta.incomplete_reason;
    }
  }
  // Multi-GPU: one job's rank records and aggregates stay; several jobs' do not add up.
  if (reports.size() == 1) {
    merged.ranks = reports.front().ranks;
    merged.aggregate = reports.front().aggregate;
  }
  return merged;
}

result_file load_result_file(const std::string& path) {
  result_file f;
  f.path = path;
  f.report = load_report(path);
  // Parsed twice (the model above, the raw JSON here): files are small and this keeps
  // load_report the one place that validates them.
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  f.raw = json::parse(buffer.str(), nullptr, false);
  if (f.raw.is_discarded()) f.raw = to_json(f.report); // a journal: its points as a result file
  return f;
}

result_file as_result_file(const run_report& r, std::string label) {
  return {std::move(label), r, to_json(r)};
}

} // namespace gpubench
