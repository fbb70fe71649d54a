// Reading a result file back (report, compare, rerun, merge): every key checked for its type,
// every string for printable text, errors naming the JSON path and what was expected.
#include "gpubench/results/result.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/input/untrusted_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpubench {

using nlohmann::json;

namespace {

/// Reads j[key] as T, with errors naming the JSON path and the expected type.
class reader {
public:
  reader(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

  [[nodiscard]] const json& at(const char* key, json::value_t type) const {
    if (!j_.is_object()) fail(path_, fmt::format("an object (found {})", kind_name(j_.type())));
    const auto it = j_.find(key);
    if (it == j_.end()) fail(sub(key), "present (missing key)");
    if (!same_kind(it->type(), type)) fail(sub(key), kind_name(type));
    return *it;
  }
  [[nodiscard]] const json* maybe(const char* key, json::value_t type) const {
    if (!j_.is_object()) fail(path_, fmt::format("an object (found {})", kind_name(j_.type())));
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return nullptr;
    if (!same_kind(it->type(), type)) fail(sub(key), kind_name(type));
    return &*it;
  }
  [[nodiscard]] std::string str(const char* key) const {
    return at(key, json::value_t::string).get<std::string>();
  }
  [[nodiscard]] double num(const char* key) const {
    return at(key, json::value_t::number_float).get<double>();
  }
  [[nodiscard]] bool flag(const char* key) const {
    return at(key, json::value_t::boolean).get<bool>();
  }
  [[nodiscard]] std::string sub(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }
  [[noreturn]] static void fail(const std::string& path, const std::string& expected) {
    // The document itself has the empty path (a file holding an array, a string...).
    throw usage_error(
        fmt::format("result file: {} must be {}", path.empty() ? "the top level" : path, expected));
  }

private:
  static bool same_kind(json::value_t have, json::value_t want) {
    const auto numeric = [](json::value_t t) {
      return t == json::value_t::number_float || t == json::value_t::number_integer ||
             t == json::value_t::number_unsigned;
    };
    if (numeric(want)) return numeric(have);
    return have == want;
  }
  static std::string kind_name(json::value_t t) {
    switch (t) {
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "true or false";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::null: return "null";
    default: return "a number";
    }
  }
  const json& j_;
  std::string path_;
};

/// Bounds on what a result file's measurements may hold (see measurement_from_json).
constexpr double min_sample_s = 1e-12;
constexpr double max_sample_s = 1e6;
constexpr double max_work_count = 1e21;

template <typename T>
T integer_in(const reader& r, const char* key, T lo, T hi) {
  const double v = r.num(key);
  if (!(v >= static_cast<double>(lo) && v <= static_cast<double>(hi)) ||
      v != static_cast<double>(static_cast<long long>(v)))
    reader::fail(r.sub(key), fmt::format("an integer in [{}, {}]", lo, hi));
  return static_cast<T>(v);
}

/// A measurement's raw samples: each 0, or a time in seconds from a picosecond to about 11.6
/// days. Beyond that no clock gpubench reads could have measured it, and the statistics would
/// overflow or divide by next to nothing (a 5e-324 s base made every change infinite).
std::vector<double> samples_from(const reader& r) {
  const auto& samples = r.at("samples", json::value_t::array);
  std::vector<double> out;
  out.reserve(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const double x = samples[i].is_number() ? samples[i].get<double>() : -1;
    if (!(x == 0 || (x >= min_sample_s && x <= max_sample_s)))
      reader::fail(
          fmt::format("{}[{}]", r.sub("samples"), i),
          fmt::format("0 or a time in seconds from {:g} to {:g}", min_sample_s, max_sample_s));
    out.push_back(x);
  }
  return out;
}

/// The work one sample did: bytes, items and their unit.
work_counts work_from(const reader& r) {
  const auto count = [&](const char* key) {
    const double v = r.num(key);
    if (!(v >= 0 && v <= max_work_count))
      reader::fail(r.sub(key), fmt::format("a count from 0 to {:g}", max_work_count));
    return v;
  };
  work_counts w; // item_unit keeps its default where a file has none
  w.bytes = count("bytes");
  w.items = count("items");
  if (const auto* u = r.maybe("item_unit", json::value_t::string)) w.item_unit = *u;
  if (r.maybe("flops", json::value_t::number_float) != nullptr) w.flops = count("flops");
  return w;
}

/// How the samples were taken: flush, host-bound, stop reason, timing, batch. Each optional:
/// files written before a field have none.
void sampling_from(const reader& r, measurement& m) {
  if (const auto* c = r.maybe("cold", json::value_t::boolean)) m.cold = c->get<bool>();
  if (const auto* hb = r.maybe("host_bound", json::value_t::boolean))
    m.host_bound = hb->get<bool>();
  if (const auto* he = r.maybe("host_enqueue_s", json::value_t::number_float))
    m.host_enqueue_s = he->get<double>();
  if (const auto* lf = r.maybe("launch_free_s", json::value_t::number_float))
    m.launch_free_s = lf->get<double>();
  if (const auto* sr = r.maybe("stop_reason", json::value_t::string))
    m.stopped = parse_stop_reason(sr->get<std::string>());
  if (const auto* t = r.maybe("timing", json::value_t::string)) {
    for (auto k : {gpu_timing::launch_free, gpu_timing::includes_launch, gpu_timing::batch,
                   gpu_timing::timestamps})
      if (to_string(k) == t->get<std::string>()) m.timing = k;
  }
  // Files written before --l2-flush have none: `cold` alone says read or none.
  if (const auto* f = r.maybe("l2_flush", json::value_t::string))
    m.l2_flush = parse_l2_flush_mode(f->get<std::string>());
  if (r.maybe("invalid_samples", json::value_t::number_integer) != nullptr)
    m.invalid_samples = integer_in<std::size_t>(r, "invalid_samples", 0, std::size_t{1} << 40);
  if (r.maybe("batch_launches", json::value_t::number_integer) != nullptr)
    m.batch_launches = integer_in<long>(r, "batch_launches", 0, 1L << 40);
  if (const auto* b = r.maybe("batch_launch_free", json::value_t::boolean))
    m.batch_launch_free = *b;
}

/// The objects kept as they are: telemetry, the stopping rule, throttled samples, the SM clock,
/// energy.
void records_from(const reader& r, measurement& m) {
  if (const auto* t = r.maybe("telemetry", json::value_t::object)) m.telemetry = *t;
  if (const auto* st = r.maybe("stopping", json::value_t::object)) m.stopping = *st;
  if (const auto* th = r.maybe("throttled_samples", json::value_t::object)) m.throttled = *th;
  if (const auto* c = r.maybe("sm_clock", json::value_t::object)) m.sm_clock = *c;
  if (const auto* e = r.maybe("energy", json::value_t::object)) m.energy = *e;
}

measurement measurement_from_json(const json& j, const std::string& path) {
  const reader r(j, path);
  measurement m;
  m.name = r.str("name");
  const auto clock = r.str("clock");
  if (clock != "gpu" && clock != "host") reader::fail(r.sub("clock"), "\"gpu\" or \"host\"");
  m.clock = clock == "gpu" ? clock_kind::gpu : clock_kind::host;
  m.samples = samples_from(r);
  m.work = work_from(r);
  m.converged = r.flag("converged");
  sampling_from(r, m);
  if (const auto* d = r.maybe("description", json::value_t::string)) m.description = *d;
  records_from(r, m);
  finalize(m); // statistics and rates are recomputed from the raw samples
  if (const auto* rates = r.maybe("rates", json::value_t::object))
    for (const auto& [k, v] : rates->items())
      if (!m.rates.contains(k) && v.is_number()) m.rates[k] = v;
  return m;
}

device_record device_from_json(const json& j, const std::string& path) {
  const reader r(j, path);
  device_record d;
  d.info.id = integer_in(r, "id", 0, 1 << 20);
  d.info.name = r.str("name");
  const auto cc = r.str("cc");
  if (std::sscanf(cc.c_str(), "%d.%d", &d.info.cc_major, &d.info.cc_minor) != 2)
    reader::fail(r.sub("cc"), "a compute capability such as \"9.0\"");
  d.info.sms = integer_in(r, "sms", 0, 1 << 20);
  d.info.memory_bytes = integer_in<std::size_t>(r, "memory_bytes", 0, std::size_t{1} << 52);
  d.info.l2_bytes = integer_in(r, "l2_bytes", 0, 1 << 30);
  d.info.bus_width_bits = integer_in(r, "bus_width_bits", 0, 1 << 20);
  d.info.mem_clock_khz = integer_in(r, "mem_clock_khz", 0, 1 << 30);
  if (const auto* p = r.maybe("pci_bus_id", json::value_t::string)) d.info.pci_bus_id = *p;
  if (const auto* u = r.maybe("uuid", json::value_t::string)) d.info.uuid = *u;
  if (r.maybe("async_engines", json::value_t::number_integer) != nullptr)
    d.info.async_engines = integer_in(r, "async_engines", 0, 1 << 10);
  if (const auto* m = r.maybe("measured", json::value_t::object)) {
    const reader mr(*m, r.sub("measured"));
    if (mr.maybe("d2d_bytes_per_s", json::value_t::number_float))
      d.d2d_bytes_per_s = mr.num("d2d_bytes_per_s");
    if (mr.maybe("h2d_bytes_per_s", json::value_t::number_float))
      d.h2d_bytes_per_s = mr.num("h2d_bytes_per_s");
    if (mr.maybe("d2h_bytes_per_s", json::value_t::number_float))
      d.d2h_bytes_per_s = mr.num("d2h_bytes_per_s");
  }
  return d;
}

verification verification_from_json(const json& j, const std::string& path) {
  const reader r(j, path);
  verification v;
  v.performed = r.flag("performed");
  // null (a check that was not performed) since 13.3; older files say false.
  v.passed = j.contains("passed") && j.at("passed").is_null() ? false : r.flag("passed");
  v.method = r.str("method");
  v.tolerance = r.num("tolerance");
  v.max_abs_error = r.num("max_abs_error");
  v.checked = integer_in<std::uint64_t>(r, "checked", 0, std::uint64_t{1} << 53);
  v.mismatches = integer_in<std::uint64_t>(r, "mismatches", 0, v.checked);
  if (const auto* d = r.maybe("details", json::value_t::object)) v.details = *d;
  return v;
}

result result_from_json(const json& j, const std::string& path) {
  const reader r(j, path);
  result res;
  res.benchmark = r.str("benchmark");
  res.device = integer_in(r, "device", -1, 1 << 20);
  const auto status = parse_result_status(r.str("status"));
  if (!status) reader::fail(r.sub("status"), "one of ok, failed, skipped, error");
  res.status = *status;
  if (const auto* reason = r.maybe("reason", json::value_t::string)) res.reason = *reason;
  res.params = r.at("params", json::value_t::object);
  const auto& ms = r.at("measurements", json::value_t::array);
  for (std::size_t i = 0; i < ms.size(); ++i)
    res.measurements.push_back(
        measurement_from_json(ms[i], fmt::format("{}[{}]", r.sub("measurements"), i)));
  res.derived = r.at("derived", json::value_t::object);
  res.verify =
      verification_from_json(r.at("verification", json::value_t::object), r.sub("verification"));
  // Multi-GPU: optional.
  if (r.maybe("rank", json::value_t::number_integer) != nullptr)
    res.rank = integer_in(r, "rank", 0, 1 << 24);
  if (const auto* h = r.maybe("host", json::value_t::string)) res.host = *h;
  return res;
}

} // namespace

namespace {

/// Every key and string of a result file is printed somewhere (names, parameters, reasons,
/// telemetry notes): each must be printable text of at most max_text_bytes. meta.argv, which
/// holds a run's own arguments and is never printed, is exempt. Depth is bounded by the parser.
void check_printable(const json& v, const std::string& path) {
  if (v.is_string()) {
    if (!printable_field(v.get_ref<const std::string&>()))
      reader::fail(path, printable_field_rule());
    return;
  }
  // Paths are built only for what can hold text: a sample array of numbers costs no formatting.
  const auto holds_text = [](const json& x) { return x.is_string() || x.is_structured(); };
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      // A named reference, not a structured binding: clang 14 (the fuzz build) cannot capture one.
      const std::string& key = it.key();
      const auto at = [&] { return path.empty() ? clip(key, 40) : path + "." + clip(key, 40); };
      if (!printable_field(key)) reader::fail(at() + " (the key)", printable_field_rule());
      if (!holds_text(*it)) continue;
      const std::string here = at();
      if (here != "meta.argv") check_printable(*it, here);
    }
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i)
      if (holds_text(v[i])) check_printable(v[i], fmt::format("{}[{}]", path, i));
  }
}

} // namespace

run_report report_from_json(const json& j) {
  check_printable(j, "");
  const reader top(j, "");
  const auto schema = top.str("schema");
  if (schema != schema_id)
    reader::fail("schema", fmt::format("\"{}\" (found \"{}\")", schema_id, schema));
  run_report rep;
  const reader meta(top.at("meta", json::value_t::object), "meta");
  rep.meta.version = meta.str("version");
  rep.meta.git = meta.str("git");
  for (const auto& a : meta.at("argv", json::value_t::array)) {
    if (!a.is_string()) reader::fail("meta.argv", "an array of strings");
    rep.meta.argv.push_back(a.get<std::string>());
  }
  rep.meta.started_at = meta.str("started_at");
  const reader host(meta.at("host", json::value_t::object), "meta.host");
  rep.meta.host.name = host.str("name");
  rep.meta.host.cpu_model = host.str("cpu");
  rep.meta.host.cores = integer_in(host, "cores", 0, 1 << 20);
  if (host.maybe("cores_usable", json::value_t::number_float) != nullptr) // absent before
    rep.meta.host.cores_usable = integer_in(host, "cores_usable", 0, 1 << 20);
  const reader cuda(meta.at("cuda", json::value_t::object), "meta.cuda");
  rep.meta.cuda_driver = cuda.str("driver");
  rep.meta.cuda_runtime = cuda.str("runtime");
  // Absent from files written before it was recorded.
  if (const auto* v = cuda.maybe("nvidia_driver", json::value_t::string))
    rep.meta.nvidia_driver = v->get<std::string>();
  rep.meta.incomplete = meta.flag("incomplete");
  if (const auto* why = meta.maybe("incomplete_reason", json::value_t::string))
    rep.meta.incomplete_reason = *why;
  if (const auto* build = meta.maybe("build", json::value_t::object)) {
    const reader b(*build, "meta.build");
    rep.meta.source_hash = b.str("source_sha256");
    const bool hex =
        rep.meta.source_hash.size() == 64 &&
        rep.meta.source_hash.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (!hex) reader::fail("meta.build.source_sha256", "64 lowercase hex digits (a SHA-256)");
  }
  if (const auto* t = meta.maybe("test_slowdown", json::value_t::string))
    rep.meta.test_slowdown = *t;
  if (const auto* options = meta.maybe("options", json::value_t::object))
    rep.meta.options = *options; // checked by the reader of the record (rerun), row by row
  if (const auto* resumed = meta.maybe("resumed", json::value_t::object)) {
    const reader r(*resumed, "meta.resumed");
    rep.meta.resumed_at = r.str("at");
    rep.meta.resumed_points = integer_in<std::size_t>(r, "kept_points", 0, std::size_t{1} << 40);
  }
  const auto& devices = top.at("devices", json::value_t::array);
  for (std::size_t i = 0; i < devices.size(); ++i)
    rep.devices.push_back(device_from_json(devices[i], fmt::format("devices[{}]", i)));
  const auto& results = top.at("results", json::value_t::array);
  for (std::size_t i = 0; i < results.size(); ++i)
    rep.results.push_back(result_from_json(results[i], fmt::format("results[{}]", i)));
  // Multi-GPU: optional, kept as written.
  if (const auto* ranks = top.maybe("ranks", json::value_t::array)) rep.ranks = *ranks;
  if (const auto* agg = top.maybe("aggregate", json::value_t::object)) rep.aggregate = *agg;
  return rep;
}

} // namespace gpubench
