// The measurement option table (lib/src/engine/option_table.cpp): every row reads the same in a
// run file, in a result's meta.options and in a rerun, and docs/usage.md lists each with its
// default. Every test walks the whole table, so a new row is covered without a new test.
#include "gpubench/engine/option_table.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/engine/benchmark.hpp"
#include "gpubench/engine/rerun.hpp"
#include "gpubench/engine/run_file.hpp"
#include "gpubench/registry/registry.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

/// A valid value of `s` other than its default, as a run file writes it.
json other_value(const gpubench::option_spec& s) {
  using k = gpubench::option_kind;
  const json def = s.get(gpubench::common_options{});
  switch (s.kind) {
  case k::integer:
    return def.get<std::int64_t>() < static_cast<std::int64_t>(s.max) ? def.get<std::int64_t>() + 1
                                                                      : def.get<std::int64_t>() - 1;
  case k::seconds:
  case k::number:
  case k::percent: {
    const double v = def.get<double>() * 1.5 + 0.25; // 0 -> 0.25, 1 -> 1.75
    return v <= s.max ? v : (def.get<double>() + s.min) / 2;
  }
  case k::flag: return !def.get<bool>();
  case k::word:
    for (const auto& c : s.choices)
      if (c != def.get<std::string>()) return c;
    break;
  case k::seed: return def.get<std::uint64_t>() + 1;
  case k::devices: return "1";
  }
  FAIL("no other value for " << s.name);
  return nullptr;
}

/// What meta.options records for `v` (devices: as the list --device resolves to).
json recorded(const gpubench::option_spec& s, const json& v) {
  if (s.kind == gpubench::option_kind::devices) return json::array({1});
  return v;
}

gpubench::common_options from_run_file(const json& options, std::string& device) {
  const json file = {{"options", options}, {"benchmarks", {{{"benchmark", "vecadd"}}}}};
  const auto parsed = gpubench::parse_run_file(file, gpubench::all_benchmarks());
  gpubench::common_options opts;
  gpubench::apply_run_file_options(parsed.options, opts, device,
                                   [](std::string_view) { return false; });
  if (device != "0") opts.devices = {std::stoi(device)}; // as finish_common_options resolves it
  return opts;
}

} // namespace

TEST_CASE("every option reads the same from a run file, into meta.options and back by rerun",
          "[option_table]") {
  const auto& table = gpubench::measurement_options();
  REQUIRE(table.size() >= 20);
  for (const auto& s : table) {
    CAPTURE(s.name);
    const json v = other_value(s);
    CAPTURE(v);
    REQUIRE(v != s.get(gpubench::common_options{}));
    std::string device = "0";
    const auto opts = from_run_file({{s.name, v}}, device);
    const json record = gpubench::options_record(opts);
    CHECK(record.at(s.name) == recorded(s, v));
    // Every other row keeps its default.
    for (const auto& other : table)
      if (other.name != s.name && other.name != "l2-flush") // --warm also sets the flush to none
        CHECK(record.at(other.name) == other.get(gpubench::common_options{}));
    // A rerun applies the record and gets the same record back.
    gpubench::common_options again;
    std::string again_device = "0";
    gpubench::apply_recorded_options(record, again, again_device);
    if (again_device != "0") again.devices = {std::stoi(again_device)};
    CHECK(gpubench::options_record(again) == record);
    // The record is a run file's "options" as it stands.
    std::string file_device = "0";
    CHECK(gpubench::options_record(from_run_file(record, file_device)) == record);
  }
}

TEST_CASE("every option outside its range is refused by run files and by validate_options",
          "[option_table]") {
  for (const auto& s : gpubench::measurement_options()) {
    CAPTURE(s.name);
    using k = gpubench::option_kind;
    if (s.kind != k::integer && s.kind != k::seconds && s.kind != k::percent && s.kind != k::number)
      continue;
    const json above =
        s.kind == k::integer ? json(static_cast<std::int64_t>(s.max) + 1) : json(s.max * 2 + 1);
    CHECK_THROWS_WITH(gpubench::read_option_value(s, above, "options.x"),
                      Contains("options.x: ") && Contains("expected"));
    gpubench::common_options opts;
    std::string device;
    s.set({opts, device}, above);
    CHECK_THROWS_WITH(gpubench::validate_options(opts), Contains("--" + s.name + ": "));
  }
}

TEST_CASE("a record with an option this build lacks is refused, naming it", "[option_table]") {
  gpubench::common_options opts;
  std::string device = "0";
  json record = gpubench::options_record(opts);
  record["fast-mode"] = true;
  CHECK_THROWS_WITH(gpubench::apply_recorded_options(record, opts, device),
                    Contains("meta.options.fast-mode") && Contains("newer build"));
  record.erase("fast-mode");
  record["warmup"] = -1;
  CHECK_THROWS_WITH(gpubench::apply_recorded_options(record, opts, device),
                    Contains("meta.options.warmup: -1"));
}

TEST_CASE("docs/usage.md's option table lists every option with the code's default",
          "[option_table]") {
  std::ifstream in(std::string(GPUBENCH_SOURCE_DIR) + "/docs/usage.md");
  REQUIRE(in);
  std::vector<std::string> rows;
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("| `--")) rows.push_back(line);
  for (const auto& s : gpubench::measurement_options()) {
    CAPTURE(s.name);
    const std::string start = "| `--" + s.name;
    const auto row = std::find_if(rows.begin(), rows.end(), [&](const std::string& r) {
      return r.starts_with(start + "`") || r.starts_with(start + " ");
    });
    REQUIRE(row != rows.end());
    // | option | default | meaning |: the default cell starts with the code's default.
    const auto first = row->find(" | ");
    REQUIRE(first != std::string::npos);
    const auto cell_end = row->find(" |", first + 3);
    const std::string cell = row->substr(first + 3, cell_end - first - 3);
    CAPTURE(cell);
    const auto def = gpubench::option_default_text(s);
    CHECK((cell == def || cell.starts_with(def + " (")));
  }
}

TEST_CASE("rerun plans the recorded points again and refuses what this build cannot run",
          "[option_table][rerun]") {
  gpubench::common_options opts;
  opts.cpu_only = true;
  opts.devices.clear();
  const auto* vecadd = gpubench::find_benchmark("vecadd");
  REQUIRE(vecadd != nullptr);
  gpubench::run_report source;
  for (const auto& p : gpubench::plan_points(
           *vecadd, gpubench::with_defaults(*vecadd, {{"n", "1000,2000"}, {"dtype", "f32,f64"}}),
           opts)) {
    gpubench::result r;
    r.benchmark = p.bench->name;
    r.params = p.params;
    r.params.erase("device");
    source.results.push_back(r);
  }
  REQUIRE(source.results.size() == 4);
  const auto points = gpubench::rerun_points(source, opts, gpubench::all_benchmarks());
  REQUIRE(points.size() == 4);
  for (std::size_t i = 0; i < points.size(); ++i) {
    auto params = points[i].params;
    CHECK(gpubench::point_device(params) == -1);
    params.erase("device");
    CHECK(params == source.results[i].params);
  }

  auto other = source;
  other.results[1].benchmark = "tensorcore";
  CHECK_THROWS_WITH(gpubench::rerun_points(other, opts, gpubench::all_benchmarks()),
                    Contains("results[1] (tensorcore): this gpubench has no benchmark"));
  other = source;
  other.results[2].params["unroll"] = 4;
  CHECK_THROWS_WITH(gpubench::rerun_points(other, opts, gpubench::all_benchmarks()),
                    Contains("results[2] (vecadd)") && Contains("unroll"));
}

namespace {

json schema(const char* name) {
  std::ifstream in(std::string(GPUBENCH_SOURCE_DIR) + "/docs/schema/" + name);
  REQUIRE(in);
  return json::parse(in);
}

/// The schema of a numeric option states the row's range; a word option its choices.
void check_schema_range(const gpubench::option_spec& s, const json& prop) {
  using k = gpubench::option_kind;
  if (s.kind == k::integer || s.kind == k::seconds || s.kind == k::number) {
    CHECK(prop.at(s.min_exclusive ? "exclusiveMinimum" : "minimum").get<double>() == s.min);
    CHECK(prop.at("maximum").get<double>() == s.max);
  }
  if (s.kind == k::word) CHECK(prop.at("enum") == json(s.choices));
  if (s.kind == k::flag) CHECK(prop.at("type") == "boolean");
}

} // namespace

TEST_CASE("the JSON Schemas of run files and results list every option with its range",
          "[option_table]") {
  const json run_file = schema("run-file.schema.json").at("$defs").at("options").at("properties");
  const json meta = schema("gpubench-result.schema.json")
                        .at("properties")
                        .at("meta")
                        .at("properties")
                        .at("options");
  std::vector<std::string> names;
  for (const auto& s : gpubench::measurement_options()) {
    CAPTURE(s.name);
    names.push_back(s.name);
    REQUIRE(run_file.contains(s.name));
    REQUIRE(meta.at("properties").contains(s.name));
    check_schema_range(s, run_file.at(s.name));
    check_schema_range(s, meta.at("properties").at(s.name));
  }
  CHECK(meta.at("required") == json(names));
  for (const auto& [key, prop] : run_file.items()) {
    CAPTURE(key);
    CHECK((gpubench::find_option(key) != nullptr || prop.value("deprecated", false)));
  }
}
