#pragma once
// Internal to report/: the cells the table, CSV and Markdown writers show alike.
#include "gpubench/report/report.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <string>
#include <string_view>

namespace gpubench::report_detail {

std::string params_line(const nlohmann::json& params);
/// "GPU 0 NVIDIA H200", or "CPU only" for host points.
std::string device_label(const run_report& rep, int id);
/// m.rates[key], or -1 when absent.
double rate(const measurement& m, const char* key);
/// "90.2% (101.9%)": of the theoretical peak, then of the measured device-to-device copy.
std::string peak_text(const measurement& m);
/// "of roof": the row's FLOP/s as % of the roof at its arithmetic intensity, where it declares
/// its FLOPs and their units' rate (rates.fraction_of_roof); "" otherwise, and "" under the
/// bandwidth roof where `of peak` shows the same fraction.
std::string roof_text(const measurement& m);
/// The stop column: why sampling ended; yes/no for older files.
std::string stop_text(const measurement& m);
/// A row's name with its marks: '*' telemetry flagged, '^' host-bound.
std::string marked_name(const measurement& m);
/// The stop reasons (stop_text) that mean a limit, not the stopping rule, ended sampling.
inline constexpr std::array<std::string_view, 3> limit_stops{"max-n", "timeout", "intr"};
/// One of limit_stops, or "no" (an older file's not converged).
bool limit_stop(std::string_view stop);
/// The rel.sd column: "-" under two samples.
std::string rel_sd_text(const measurement& m);

} // namespace gpubench::report_detail
