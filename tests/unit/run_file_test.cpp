// Specification of run files (docs/run-files.md): what parses, and what each mistake says.
#include "gpubench/core/errors.hpp"
#include "gpubench/engine/run_file.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

using Catch::Matchers::Contains;
using gpubench::usage_error;
using nlohmann::json;

namespace {

/// A stand-in catalog: two benchmarks whose plan() expands the "n" list, no CUDA involved.
std::vector<gpubench::benchmark> test_catalog() {
  gpubench::benchmark vec;
  vec.name = "vecadd";
  vec.params = {{"n", "elements", "10M", true},
                {"dtype", "element type", "f32", true},
                {"streams", "streams for overlap", "4", false}};
  vec.plan = [](const gpubench::param_values& v, const gpubench::common_options&) {
    std::vector<json> points;
    std::stringstream list(gpubench::value_of(v, "n"));
    for (std::string n; std::getline(list, n, ',');) {
      if (n == "bad") throw usage_error("--n: 'bad' is not a size");
      points.push_back({{"n", n}, {"dtype", gpubench::value_of(v, "dtype")}});
    }
    return points;
  };
  gpubench::benchmark aug;
  aug.name = "augment";
  aug.params = {{"batch", "images per batch", "32", true},
                {"impl", "staged|fused|all", "all", true}};
  aug.plan = [](const gpubench::param_values& v, const gpubench::common_options&) {
    return std::vector<json>{{{"batch", gpubench::value_of(v, "batch")}}};
  };
  return {vec, aug};
}

const std::vector<gpubench::benchmark>& catalog() {
  static const auto c = test_catalog();
  return c;
}

/// The message parse_run_file throws for `j` (fails the test if it does not throw).
std::string error_of(const json& j) {
  try {
    (void)gpubench::parse_run_file(j, catalog());
  } catch (const usage_error& e) {
    return e.what();
  }
  FAIL("expected a usage_error for " << j.dump());
  return {};
}

json minimal() { return json::parse(R"({"benchmarks": [{"benchmark": "vecadd"}]})"); }

} // namespace

TEST_CASE("a complete run file parses into entries with command-line text", "[run_file]") {
  const auto j = json::parse(R"({
    "$schema": "../docs/schema/run-file.schema.json",
    "name": "demo", "description": "two benchmarks",
    "options": {"device": [0, 1], "warmup": 2, "min_samples": 5, "max_samples": 50,
                "min_time": 0.05, "max_noise": "2%", "timeout": 3, "warm": true, "seed": 7,
                "cpu_threads": 4, "cpu_only": true, "verify": false},
    "benchmarks": [
      {"benchmark": "vecadd", "description": "sizes", "params":
        {"n": [1000, "1M:1G:x4"], "dtype": ["f32", "f16"], "streams": 8}},
      {"benchmark": "augment", "params": {"batch": 32, "impl": "fused"}}
    ]})");
  const auto f = gpubench::parse_run_file(j, catalog());
  CHECK(f.name == "demo");
  CHECK(f.description == "two benchmarks");
  REQUIRE(f.entries.size() == 2);
  CHECK(f.entries[0].bench->name == "vecadd");
  CHECK(f.entries[0].description == "sizes");
  CHECK(f.entries[0].params ==
        gpubench::param_values{{"n", "1000,1M:1G:x4"}, {"dtype", "f32,f16"}, {"streams", "8"}});
  CHECK(f.entries[1].bench->name == "augment");
  CHECK(f.entries[1].params == gpubench::param_values{{"batch", "32"}, {"impl", "fused"}});

  const auto& o = f.options.values;
  CHECK(o.at("device") == "0,1");
  CHECK(o.at("warmup") == 2);
  CHECK(o.at("min-samples") == 5);
  CHECK(o.at("max-samples") == 50);
  CHECK(o.at("min-time").get<double>() == Approx(0.05));
  CHECK(o.at("max-noise").get<double>() == Approx(2)); // percent, as the file writes it
  CHECK(o.at("timeout").get<double>() == Approx(3.0));
  CHECK(o.at("warm") == true);
  CHECK(o.at("seed") == 7U);
  CHECK(o.at("cpu-threads") == 4);
  CHECK(o.at("cpu-only") == true);
  CHECK(o.at("no-verify") == true);
}

TEST_CASE("options are spelled as on the command line; the old spelling is read with a note",
          "[run_file]") {
  auto j = minimal();
  j["options"] = {{"min-samples", 5},
                  {"max-noise", "2%"},
                  {"cpu-threads", 3},
                  {"cpu-only", true},
                  {"no-verify", true}};
  auto f = gpubench::parse_run_file(j, catalog());
  CHECK(f.options.values.at("min-samples") == 5);
  CHECK(f.options.values.at("max-noise").get<double>() == Approx(2));
  CHECK(f.options.values.at("cpu-threads") == 3);
  CHECK(f.options.values.at("cpu-only") == true);
  CHECK(f.options.values.at("no-verify") == true);
  CHECK(f.notes.empty());

  j["options"] = {{"min_samples", 5}, {"verify", true}};
  f = gpubench::parse_run_file(j, catalog());
  CHECK(f.options.values.at("min-samples") == 5);
  CHECK(f.options.values.at("no-verify") == false);
  REQUIRE(f.notes.size() == 2);
  CHECK_THAT(f.notes[0], Contains("options.min_samples: the snake_case spelling is deprecated; "
                                  "write \"min-samples\""));
  CHECK_THAT(f.notes[1], Contains("options.verify: deprecated; write \"no-verify\": false"));

  j["options"] = {{"min_samples", 5}, {"min-samples", 6}};
  CHECK_THAT(error_of(j), Contains("\"min-samples\" is given twice"));
  j["options"] = {{"min-sample", 5}};
  CHECK_THAT(error_of(j), Contains("(did you mean 'min-samples'?)"));
}

TEST_CASE("options a file leaves out stay unset; params may be omitted", "[run_file]") {
  const auto f = gpubench::parse_run_file(minimal(), catalog());
  CHECK_FALSE(f.options.values.contains("device"));
  CHECK_FALSE(f.options.values.contains("max-noise"));
  REQUIRE(f.entries.size() == 1);
  CHECK(f.entries[0].params.empty());
}

TEST_CASE("max_noise is a percentage, written as a number or as text", "[run_file]") {
  auto j = minimal();
  j["options"] = {{"max_noise", 0.5}};
  CHECK(gpubench::parse_run_file(j, catalog()).options.values.at("max-noise").get<double>() ==
        Approx(0.5));
  j["options"] = {{"max_noise", "3%"}};
  CHECK(gpubench::parse_run_file(j, catalog()).options.values.at("max-noise").get<double>() ==
        Approx(3));
  j["options"] = {{"max_noise", "3"}};
  CHECK_THAT(error_of(j), Contains("options.max_noise") && Contains("\"3\"") &&
                              Contains("expected a percentage"));
  j["options"] = {{"max_noise", 0}};
  CHECK_THAT(error_of(j), Contains("options.max_noise: 0 is an integer"));
}

TEST_CASE("each mistake names the key path, the value and what was expected", "[run_file]") {
  SECTION("unknown top-level key") {
    auto j = minimal();
    j["benchmark"] = "vecadd";
    CHECK_THAT(error_of(j), Contains("benchmark: unknown key (value \"vecadd\")") &&
                                Contains("expected one of $schema, name, description, options, "
                                         "benchmarks"));
  }
  SECTION("benchmarks missing, empty or not a list") {
    CHECK_THAT(error_of(json::object()), Contains("benchmarks: missing"));
    CHECK_THAT(error_of({{"benchmarks", json::array()}}),
               Contains("benchmarks: [] is an array; expected a non-empty list"));
    CHECK_THAT(error_of({{"benchmarks", "vecadd"}}),
               Contains("benchmarks: \"vecadd\" is a string"));
  }
  SECTION("a name or description that is not printable text, or too long") {
    auto j = minimal();
    j["name"] = "evil\x1b]0;title\x07";
    CHECK_THAT(error_of(j), Contains("name: ") && Contains("expected printable text"));
    j = minimal();
    j["description"] = std::string(5000, 'x');
    CHECK_THAT(error_of(j), Contains("description: ") && Contains("at most 4096 bytes"));
    j = minimal();
    j["benchmarks"][0]["description"] = "line one\nline two";
    CHECK_THAT(error_of(j),
               Contains("benchmarks[0].description: ") && Contains("expected printable text"));
  }
  SECTION("the document is not an object") {
    CHECK_THAT(error_of(json::array()), Contains("(top level): [] is an array"));
  }
  SECTION("unknown benchmark") {
    auto j = minimal();
    j["benchmarks"].push_back({{"benchmark", "vecad"}});
    CHECK_THAT(error_of(j), Contains("benchmarks[1].benchmark: \"vecad\" is not a benchmark; "
                                     "expected one of vecadd, augment"));
  }
  SECTION("entry without a benchmark name") {
    auto j = minimal();
    j["benchmarks"][0] = {{"params", {{"n", 1}}}};
    CHECK_THAT(error_of(j), Contains("benchmarks[0].benchmark: missing"));
  }
  SECTION("unknown key in an entry") {
    auto j = minimal();
    j["benchmarks"][0]["parameters"] = json::object();
    CHECK_THAT(error_of(j), Contains("benchmarks[0].parameters: unknown key") &&
                                Contains("expected one of benchmark, params, description"));
  }
  SECTION("unknown parameter lists the benchmark's parameters") {
    auto j = minimal();
    j["benchmarks"].push_back({{"benchmark", "augment"}, {"params", {{"bacth", 32}}}});
    CHECK_THAT(error_of(j), Contains("benchmarks[1].params.bacth: unknown parameter of augment "
                                     "(value 32); expected one of batch, impl"));
  }
  SECTION("a list on a parameter that cannot be swept") {
    auto j = minimal();
    j["benchmarks"][0]["params"] = {{"streams", {2, 4}}};
    CHECK_THAT(error_of(j), Contains("benchmarks[0].params.streams: [2,4] is an array") &&
                                Contains("cannot be swept"));
  }
  SECTION("an empty list would run nothing") {
    auto j = minimal();
    j["benchmarks"][0]["params"] = {{"n", json::array()}};
    CHECK_THAT(error_of(j), Contains("benchmarks[0].params.n: [] is an array; expected a "
                                     "non-empty list"));
  }
  SECTION("a nested value inside a list") {
    auto j = minimal();
    j["benchmarks"][0]["params"] = {{"n", {1000, {{"x", 1}}}}};
    CHECK_THAT(error_of(j), Contains("benchmarks[0].params.n[1]: {\"x\":1} is an object"));
  }
  SECTION("null or empty text as a parameter value") {
    auto j = minimal();
    j["benchmarks"][0]["params"] = {{"dtype", nullptr}};
    CHECK_THAT(error_of(j), Contains("benchmarks[0].params.dtype: null is null"));
    j["benchmarks"][0]["params"] = {{"dtype", ""}};
    CHECK_THAT(error_of(j), Contains("benchmarks[0].params.dtype: \"\" is a string"));
  }
  SECTION("params that are not an object") {
    auto j = minimal();
    j["benchmarks"][0]["params"] = "n=10M";
    CHECK_THAT(error_of(j), Contains("benchmarks[0].params: \"n=10M\" is a string; expected an "
                                     "object"));
  }
  SECTION("unknown option") {
    auto j = minimal();
    j["options"] = {{"samples", 10}};
    CHECK_THAT(error_of(j),
               Contains("options.samples: unknown key (value 10)") && Contains("min-samples"));
  }
  SECTION("options of the wrong type or out of range") {
    auto j = minimal();
    j["options"] = {{"min_samples", 0}};
    CHECK_THAT(error_of(j), Contains("options.min_samples: 0 is an integer; expected an integer "
                                     "from 1 to"));
    j["options"] = {{"warmup", 1.5}};
    CHECK_THAT(error_of(j), Contains("options.warmup: 1.5 is a number; expected an integer"));
    j["options"] = {{"timeout", 0}};
    CHECK_THAT(error_of(j), Contains("options.timeout: 0 is an integer; expected a number of "
                                     "seconds above 0"));
    j["options"] = {{"warm", "yes"}};
    CHECK_THAT(error_of(j), Contains("options.warm: \"yes\" is a string; expected true or false"));
    j["options"] = {{"seed", -1}};
    CHECK_THAT(error_of(j), Contains("options.seed: -1 is an integer"));
    j["options"] = {{"device", {0, "1"}}};
    CHECK_THAT(error_of(j), Contains("options.device[1]: \"1\" is a string; expected a device "
                                     "number"));
  }
  SECTION("min_samples above max_samples") {
    auto j = minimal();
    j["options"] = {{"min_samples", 20}, {"max_samples", 10}};
    CHECK_THAT(error_of(j), Contains("options: min-samples (20) is larger than max-samples (10)"));
  }
}

TEST_CASE("load_run_file names the file, and the line and column of a syntax error", "[run_file]") {
  const std::string path = "run_file_test_syntax.json";
  {
    std::ofstream out(path);
    out << "{\n  \"benchmarks\": [\n    {\"benchmark\": \"vecadd\",}\n  ]\n}\n";
  }
  try {
    (void)gpubench::load_run_file(path, catalog());
    FAIL("a trailing comma must be rejected");
  } catch (const usage_error& e) {
    CHECK_THAT(std::string(e.what()), Contains(path + ":3:") && Contains("not valid JSON"));
  }
  {
    std::ofstream out(path);
    out << R"({"benchmarks": [{"benchmark": "nope"}]})";
  }
  CHECK_THROWS_WITH(gpubench::load_run_file(path, catalog()),
                    Contains(path + ": benchmarks[0].benchmark: \"nope\""));
  std::remove(path.c_str());
  CHECK_THROWS_WITH(gpubench::load_run_file("no/such/file.json", catalog()),
                    Contains("no/such/file.json: cannot open"));
}

TEST_CASE("the command line overrides the file's options", "[run_file]") {
  gpubench::run_file_options file;
  file.values = {
      {"device", "all"}, {"min-samples", 3}, {"max-noise", 2}, {"seed", 99U}, {"no-verify", true}};
  gpubench::common_options opts;
  opts.measure.min_samples = 17; // as if the user typed --min-samples 17
  std::string device = "0";
  gpubench::apply_run_file_options(
      file, opts, device, [](std::string_view option) { return option == "--min-samples"; });
  CHECK(device == "all");
  CHECK(opts.measure.min_samples == 17);
  CHECK(opts.measure.max_noise == Approx(0.02));
  CHECK(opts.seed == 99U);
  CHECK_FALSE(opts.verify);
  CHECK(opts.measure.warmup == gpubench::measure_options{}.warmup); // file left it out
}

TEST_CASE("\"l2-flush\" takes read, write or none; beside \"warm\": true only none", "[run_file]") {
  auto j = minimal();
  for (const char* mode : {"read", "write", "none"}) {
    j["options"] = {{"l2-flush", mode}};
    CHECK(gpubench::parse_run_file(j, catalog()).options.values.at("l2-flush") == mode);
  }
  j["options"] = {{"l2-flush", "dirty"}};
  CHECK_THAT(error_of(j),
             Contains("options.l2-flush: \"dirty\"") && Contains("one of read, write, none"));
  j["options"] = {{"l2-flush", true}};
  CHECK_THAT(error_of(j), Contains("options.l2-flush") && Contains("one of read, write, none"));
  j["options"] = {{"warm", true}, {"l2-flush", "write"}};
  CHECK_THAT(error_of(j), Contains("options: \"warm\": true means \"l2-flush\": \"none\"") &&
                              Contains("conflicts with \"l2-flush\": \"write\""));
  j["options"] = {{"warm", true}, {"l2-flush", "none"}};
  CHECK(gpubench::parse_run_file(j, catalog()).options.values.at("l2-flush") == "none");
  j["options"] = {{"warm", false}, {"l2-flush", "write"}};
  CHECK(gpubench::parse_run_file(j, catalog()).options.values.at("l2-flush") == "write");
}

TEST_CASE("--warm or --l2-flush on the command line replaces both of the file's flush keys",
          "[run_file]") {
  gpubench::run_file_options file;
  file.values = {{"warm", true}, {"l2-flush", "none"}};
  std::string device = "0";
  SECTION("neither given: the file's keys apply") {
    gpubench::common_options opts;
    gpubench::apply_run_file_options(file, opts, device, [](std::string_view) { return false; });
    CHECK(opts.measure.warm);
    CHECK(gpubench::effective_l2_flush(opts.measure) == gpubench::l2_flush_mode::none);
    CHECK_NOTHROW(gpubench::validate(opts.measure));
  }
  SECTION("--l2-flush write given: the file's warm does not conflict with it") {
    gpubench::common_options opts;
    opts.measure.l2_flush = gpubench::l2_flush_mode::write;
    gpubench::apply_run_file_options(
        file, opts, device, [](std::string_view option) { return option == "--l2-flush"; });
    CHECK_FALSE(opts.measure.warm);
    CHECK(gpubench::effective_l2_flush(opts.measure) == gpubench::l2_flush_mode::write);
    CHECK_NOTHROW(gpubench::validate(opts.measure));
  }
  SECTION("--warm given: the file's l2-flush write is dropped") {
    file.values = {{"warm", false}, {"l2-flush", "write"}};
    gpubench::common_options opts;
    opts.measure.warm = true;
    gpubench::apply_run_file_options(file, opts, device,
                                     [](std::string_view option) { return option == "--warm"; });
    CHECK(opts.measure.warm);
    CHECK_FALSE(opts.measure.l2_flush.has_value());
    CHECK(gpubench::effective_l2_flush(opts.measure) == gpubench::l2_flush_mode::none);
  }
}

TEST_CASE("plan_run_file concatenates the points of every entry in file order", "[run_file]") {
  const auto j = json::parse(R"({"benchmarks": [
      {"benchmark": "vecadd", "params": {"n": ["1K", "2K", "4K"]}},
      {"benchmark": "augment"},
      {"benchmark": "vecadd", "params": {"n": "8K", "dtype": "f16"}}]})");
  const auto f = gpubench::parse_run_file(j, catalog());
  const auto points = gpubench::plan_run_file(f, gpubench::common_options{});
  REQUIRE(points.size() == 5);
  // The runner adds the device of each point (here the default, 0).
  CHECK(points[0].params == json({{"n", "1K"}, {"dtype", "f32"}, {"device", 0}})); // default dtype
  CHECK(points[2].params == json({{"n", "4K"}, {"dtype", "f32"}, {"device", 0}}));
  CHECK(points[3].bench->name == "augment");
  CHECK(points[3].params == json({{"batch", "32"}, {"device", 0}}));
  CHECK(points[4].params == json({{"n", "8K"}, {"dtype", "f16"}, {"device", 0}}));

  std::ostringstream listing;
  gpubench::write_plan(listing, f, points, gpubench::output_format::table);
  CHECK_THAT(listing.str(), Contains("5 points would run") && Contains("3  vecadd") &&
                                Contains("device=0 dtype=f32 n=4K") && Contains("5  vecadd") &&
                                Contains("device=0 dtype=f16 n=8K"));
  std::ostringstream as_json;
  gpubench::write_plan(as_json, f, points, gpubench::output_format::json);
  const auto listed = json::parse(as_json.str());
  REQUIRE(listed.at("points").size() == 5);
  CHECK(listed["points"][3] ==
        json({{"benchmark", "augment"}, {"params", {{"batch", "32"}, {"device", 0}}}}));
}

TEST_CASE("a planning error names the entry it came from", "[run_file]") {
  const auto j = json::parse(R"({"benchmarks": [{"benchmark": "augment"},
      {"benchmark": "vecadd", "params": {"n": ["1K", "bad"]}}]})");
  const auto f = gpubench::parse_run_file(j, catalog());
  CHECK_THROWS_WITH(gpubench::plan_run_file(f, gpubench::common_options{}),
                    Contains("benchmarks[1] (vecadd): --n: 'bad' is not a size"));
}

TEST_CASE("a run file's seed takes the whole range of --seed, 0 to 2^64-1", "[run_file]") {
  auto j = minimal();
  j["options"] = json::parse(R"({"seed": 18446744073709551615})");
  CHECK(gpubench::parse_run_file(j, catalog()).options.values.at("seed") ==
        18446744073709551615ULL);
  j["options"] = json::parse(R"({"seed": 9223372036854775808})");
  CHECK(gpubench::parse_run_file(j, catalog()).options.values.at("seed") == 9223372036854775808ULL);
  j["options"] = json::parse(R"({"seed": 18446744073709551616})"); // 2^64: read as a double
  CHECK_THAT(error_of(j), Contains("options.seed") && Contains("0 to 2^64-1"));
  j["options"] = json::parse(R"({"seed": -1})");
  CHECK_THAT(error_of(j), Contains("options.seed") && Contains("0 to 2^64-1"));
}

TEST_CASE("messages quote a bounded piece of a huge or deep value", "[run_file]") {
  auto j = minimal();
  json deep = json::array();
  json* inner = &deep;
  for (int i = 0; i < 100000; ++i) {
    inner->push_back(json::array());
    inner = &inner->back();
  }
  j["benchmarks"][0]["params"] = {{"n", json::array({std::move(deep)})}};
  const auto deep_error = error_of(j);
  CHECK_THAT(deep_error, Contains("benchmarks[0].params.n[0]"));
  CHECK(deep_error.size() < 300);
  j = minimal();
  j["benchmarks"][0]["benchmark"] = std::string(1000000, 'z');
  CHECK(error_of(j).size() < 400);
  j = minimal();
  j[std::string(100000, 'k')] = std::string(100000, 'v');
  CHECK(error_of(j).size() < 400);
}

TEST_CASE("percentages in run files follow the number rules", "[run_file]") {
  auto j = minimal();
  j["options"] = {{"max_noise", "0x10%"}};
  CHECK_THAT(error_of(j), Contains("options.max_noise"));
  j["options"] = {{"max_noise", "1e400%"}};
  CHECK_THAT(error_of(j), Contains("options.max_noise"));
  j["options"] = {{"max_noise", "2.5%"}};
  CHECK(gpubench::parse_run_file(j, catalog()).options.values.at("max-noise").get<double>() ==
        Approx(2.5));
}

TEST_CASE("load_run_file refuses deep nesting, duplicate keys and text after a NUL", "[run_file]") {
  const std::string path = "run_file_test_hostile.json";
  const auto refused = [&](const std::string& content) {
    {
      std::ofstream out(path, std::ios::binary);
      out << content;
    }
    try {
      (void)gpubench::load_run_file(path, catalog());
    } catch (const usage_error& e) {
      std::remove(path.c_str());
      return std::string(e.what());
    }
    std::remove(path.c_str());
    return std::string("(accepted)");
  };
  CHECK_THAT(refused(std::string(100000, '[') + std::string(100000, ']')),
             Contains(path + ":1:65: ") && Contains("more than 64 levels"));
  CHECK_THAT(refused(R"({"benchmarks": [{"benchmark": "vecadd"}], "benchmarks": []})"),
             Contains("the key \"benchmarks\" appears twice"));
  CHECK_THAT(refused(std::string(R"({"benchmarks": [{"benchmark": "vecadd"}]})") +
                     std::string(1, '\0') + "garbage"),
             Contains(path + ":1:42: a NUL byte"));
}
