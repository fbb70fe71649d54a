// Options shared by every measuring subcommand, and the one place results leave the program.
#include "commands.hpp"

#include "gpubench/cuda/error.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/output.hpp"
#include "gpubench/result.hpp"
#include "gpubench/sizes.hpp"
#include "gpubench/untrusted_file.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace gpubench::app {

const char* const exit_codes_help =
    "Exit codes: 0 success; 1 verification failed (or compare found a significant regression);\n"
    "2 usage or input error; 3 CUDA error during the run (including out of device memory);\n"
    "77 no usable CUDA device (use --cpu-only); 130 interrupted (results so far are written).";

namespace {

/// Accepts "1", "1%", "0.5%": a percentage, returned as a fraction (numbers as parse_number reads
/// them, the rules of run files).
double parse_percent(const std::string& text, const char* option) {
  std::string t = text;
  if (!t.empty() && t.back() == '%') t.pop_back();
  try {
    return parse_number(t, option) / 100.0;
  } catch (const usage_error&) {
    // inf and nan are left to validate(), which says what range --max-noise takes.
    double v = 0;
    const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec == std::errc() && ptr == t.data() + t.size() && !t.empty() && !std::isfinite(v))
      return v;
    throw usage_error(
        fmt::format("--{}: '{}' is not a percentage (e.g. 1 or 0.5%)", option, clip(text)));
  }
}

// Hostile input (issue 18): numeric options are read by the rules run files follow, not by
// CLI11's strtoll/strtold (which take "0x10" and "010" as 16 and 8).
const CLI::Validator integer_text([](std::string& t) { return normalize_integer_text(t, true); },
                                  "");
const CLI::Validator seed_text(
    [](std::string& t) {
      return normalize_integer_text(t, false, "a seed (an integer from 0 to 2^64-1)");
    },
    "");
const CLI::Validator number_text([](std::string& t) { return normalize_number_text(t); }, "");

} // namespace

namespace {
// Raw text of options that need more than CLI11's conversion; one set per subcommand.
struct raw_text {
  std::string format = "table";
  std::string max_noise = "1";
  bool quiet = false;
  bool verbose = false;
};
std::vector<std::unique_ptr<raw_text>>& raw_store() {
  static std::vector<std::unique_ptr<raw_text>> store;
  return store;
}
std::map<const common_options*, raw_text*>& raw_of() {
  static std::map<const common_options*, raw_text*> m;
  return m;
}
} // namespace

void add_common_options(CLI::App& cmd, common_options& opts, std::string& device_spec) {
  auto& raw = *raw_store().emplace_back(std::make_unique<raw_text>());
  raw_of()[&opts] = &raw;
  device_spec = "0";
  cmd.add_option("--device", device_spec, "GPU index, list (0,1) or all")->capture_default_str();
  cmd.add_option("--format", raw.format, "stdout format: table, json, csv, md")
      ->capture_default_str();
  cmd.add_option("--output", opts.output_path, "also write the full JSON result to FILE (atomic)");
  cmd.add_option("--warmup", opts.measure.warmup, "discarded samples before sampling")
      ->transform(integer_text)
      ->capture_default_str();
  cmd.add_option("--min-samples", opts.measure.min_samples, "at least this many samples")
      ->transform(integer_text)
      ->capture_default_str();
  cmd.add_option("--max-samples", opts.measure.max_samples, "at most this many samples")
      ->transform(integer_text)
      ->capture_default_str();
  cmd.add_option("--min-time", opts.measure.min_time, "seconds of sampled time before stopping")
      ->transform(number_text)
      ->capture_default_str();
  cmd.add_option("--max-noise", raw.max_noise, "stop when rel. stddev <= PCT percent")
      ->capture_default_str();
  cmd.add_option("--timeout", opts.measure.timeout,
                 "wall seconds per measurement at most, warm-up included")
      ->transform(number_text)
      ->capture_default_str();
  cmd.add_flag("--warm", opts.measure.warm, "do not flush L2 between GPU samples");
  cmd.add_option("--seed", opts.seed, "seed of all random inputs and parameters")
      ->transform(seed_text)
      ->capture_default_str();
  cmd.add_option("--cpu-threads", opts.cpu_threads, "threads for the CPU reference (0: all)")
      ->transform(integer_text)
      ->capture_default_str();
  cmd.add_flag("--cpu-only", opts.cpu_only, "run and report the CPU reference alone (no GPU)");
  cmd.add_flag(
      "--no-verify", [&opts](std::int64_t) { opts.verify = false; }, "skip the GPU-vs-CPU check");
  cmd.add_flag("-q,--quiet", raw.quiet, "no logs or progress on stderr");
  cmd.add_flag("-v,--verbose", raw.verbose, "more detail on stderr");
}

void finish_common_options(common_options& opts, const std::string& device_spec) {
  const raw_text& raw = *raw_of().at(&opts);
  const auto format = parse_output_format(raw.format);
  if (!format)
    throw usage_error(fmt::format("--format: '{}' is not one of table, json, csv, md", raw.format));
  opts.format = *format;
  opts.measure.max_noise = parse_percent(raw.max_noise, "max-noise");
  opts.verbosity = raw.quiet ? 0 : raw.verbose ? 2 : 1;
  if (opts.cpu_threads < 0 || opts.cpu_threads > 4096)
    throw usage_error(
        fmt::format("--cpu-threads: {} is out of range (0 to 4096)", opts.cpu_threads));
  validate(opts.measure);
  if (!opts.output_path.empty()) check_output_path(opts.output_path);

  opts.devices.clear();
  if (device_spec == "all") {
    if (opts.cpu_only) return;
    cuda::require_device();
    for (int d = 0; d < cuda::device_count_or_zero(); ++d) opts.devices.push_back(d);
    return;
  }
  std::size_t pos = 0;
  while (true) {
    const auto comma = device_spec.find(',', pos);
    const std::string item =
        device_spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    int d = -1;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), d);
    if (ec != std::errc() || ptr != item.data() + item.size() || d < 0 || d > 1023)
      throw usage_error(fmt::format("--device: '{}' is not a device index or 'all'", item));
    opts.devices.push_back(d);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (opts.cpu_only) opts.devices.clear();
}

int emit_report(const run_report& report, const common_options& opts) {
  // Points that did not run are in the report, but a person watching stderr should hear of them.
  for (const auto& r : report.results)
    if (r.status == result_status::skipped || r.status == result_status::error)
      std::fprintf(stderr, "gpubench: %s point %s: %s\n", r.benchmark.c_str(),
                   std::string(to_string(r.status)).c_str(), r.reason.c_str());
  // The file first: it is the complete record, and stdout may be a closed pipe.
  if (!opts.output_path.empty())
    write_file_atomically(opts.output_path, to_json(report).dump(2) + "\n");
  std::ostringstream text;
  write_report(text, report, opts.format);
  std::cout << text.str() << std::flush;
  return exit_code_for(report);
}

} // namespace gpubench::app
