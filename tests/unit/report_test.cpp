#include "gpubench/core/errors.hpp"
#include "gpubench/report/report.hpp"
#include "gpubench/results/result.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace gpubench;

namespace {

run_report sample_report() {
  run_report rep;
  rep.meta.version = "0.1.0";
  rep.meta.git = "abc";
  rep.meta.argv = {"gpubench", "vecadd"};
  rep.meta.started_at = "2026-11-29T00:00:00Z";
  rep.meta.host = {"box", "cpu, model \"x\"", 16};
  rep.meta.cuda_driver = "13.0";
  rep.meta.cuda_runtime = "13.0";
  device_record d;
  d.info.id = 0;
  d.info.name = "NVIDIA H200";
  d.info.cc_major = 9;
  d.info.sms = 132;
  d.info.memory_bytes = 150000000000;
  d.info.l2_bytes = 62914560;
  d.info.bus_width_bits = 6144;
  d.info.mem_clock_khz = 3201000;
  d.d2d_bytes_per_s = 4.2e12;
  rep.devices.push_back(d);
  result r;
  r.benchmark = "vecadd";
  r.device = 0;
  r.params = {{"n", 10000000}, {"dtype", "f32"}};
  measurement m;
  m.name = "kernel";
  m.samples = {30e-6, 28e-6, 29e-6};
  m.work = {120e6, 10e6, "elements"};
  m.converged = true;
  finalize(m);
  m.rates["fraction_of_theoretical_peak"] = 0.9;
  r.measurements.push_back(m);
  r.derived["speedup_kernel_vs_cpu_reference"] = 210.5;
  r.verify.performed = true;
  r.verify.passed = true;
  r.verify.method = "exact";
  r.verify.checked = 10000000;
  rep.results.push_back(r);
  result skipped;
  skipped.benchmark = "vecadd";
  skipped.device = 0;
  skipped.params = {{"n", 1}, {"dtype", "f64"}};
  skipped.status = result_status::skipped;
  skipped.reason = "out of memory: needs 9 GB";
  rep.results.push_back(skipped);
  return rep;
}

std::string render(const run_report& r, output_format f) {
  std::ostringstream os;
  write_report(os, r, f);
  return os.str();
}

} // namespace

TEST_CASE("JSON carries the schema id and survives a round trip", "[report]") {
  const auto rep = sample_report();
  const auto j = to_json(rep);
  CHECK(j["schema"] == "gpubench/1");
  CHECK(j["results"][0]["measurements"][0]["stats"]["median"] == 29e-6);
  CHECK(j["results"][0]["measurements"][0]["samples"].size() == 3);
  CHECK(j["devices"][0]["peak_bytes_per_s"].get<double>() == Approx(4.917e12).epsilon(0.01));
  const auto back = report_from_json(j);
  CHECK(to_json(back) == j);
}

TEST_CASE("a result names its GPUs and its code; older files without them still load", "[report]") {
  auto rep = sample_report();
  rep.devices[0].info.uuid = "GPU-0a1b2c3d-0000-1111-2222-333344445555";
  rep.devices[0].info.pci_bus_id = "00000000:19:00.0";
  rep.meta.source_hash = std::string(64, 'e');
  const auto j = to_json(rep);
  CHECK(j["devices"][0]["uuid"] == "GPU-0a1b2c3d-0000-1111-2222-333344445555");
  CHECK(j["devices"][0]["pci_bus_id"] == "00000000:19:00.0");
  CHECK(j["meta"]["build"] ==
        nlohmann::json{{"git", "abc"}, {"source_sha256", std::string(64, 'e')}});
  const auto back = report_from_json(j);
  CHECK(back.devices[0].info.uuid == rep.devices[0].info.uuid);
  CHECK(back.meta.source_hash == rep.meta.source_hash);
  CHECK(to_json(back) == j);
  auto old = j;
  old["devices"][0].erase("uuid");
  old["meta"].erase("build");
  const auto read = report_from_json(old);
  CHECK(read.devices[0].info.uuid.empty());
  CHECK(read.meta.source_hash.empty());
  CHECK(to_json(read) == old); // written back as it was: nothing invented
  auto bad = j;
  bad["devices"][0]["uuid"] = "GPU-\u202e";
  CHECK_THROWS_WITH(report_from_json(bad), Catch::Contains("devices[0].uuid"));
}

TEST_CASE("a GPU row records its L2 flush; a file without the field still loads", "[report]") {
  auto rep = sample_report();
  auto& m = rep.results.at(0).measurements.at(0);
  m.l2_flush = l2_flush_mode::write;
  const auto j = to_json(rep);
  CHECK(j["results"][0]["measurements"][0]["l2_flush"] == "write");
  CHECK(j["results"][0]["measurements"][0]["cold"] == true);
  CHECK(report_from_json(j).results.at(0).measurements.at(0).l2_flush == l2_flush_mode::write);
  CHECK(to_json(report_from_json(j)) == j);
  // The table says a write-flushed row apart from a read-flushed one.
  const auto text = render(rep, output_format::table);
  INFO(text);
  CHECK(text.find("gpu/d") != std::string::npos);
  CHECK(text.find("gpu/d = CUDA events, L2 flushed by writing") != std::string::npos);

  auto old = j;
  old["results"][0]["measurements"][0].erase("l2_flush");
  const auto back = report_from_json(old).results.at(0).measurements.at(0);
  CHECK_FALSE(back.l2_flush.has_value());
  CHECK(back.cold);
  CHECK_FALSE(to_json(back).contains("l2_flush"));

  // Host rows never carry one.
  m.clock = clock_kind::host;
  CHECK_FALSE(to_json(m).contains("l2_flush"));
}

TEST_CASE("a row's declared FLOPs give its FLOP/s and intensity, and survive a file", "[report]") {
  auto rep = sample_report();
  auto& m = rep.results.at(0).measurements.at(0);
  m = test::finalized("kernel", {2e-3, 2e-3, 2e-3}, {8e6, 1e6, "elements", 4e6});
  CHECK(m.rates.at("flops_per_s") == Approx(2e9));
  CHECK(m.rates.at("arithmetic_intensity") == Approx(0.5));
  const auto j = to_json(rep);
  CHECK(j["results"][0]["measurements"][0]["flops"] == 4e6);
  const auto back = report_from_json(j).results.at(0).measurements.at(0);
  CHECK(back.work.flops == 4e6);
  CHECK(to_json(report_from_json(j)) == j);
  // A row without FLOPs (a transfer, a file written before they were declared) has none.
  auto old = j;
  old["results"][0]["measurements"][0].erase("flops");
  const auto plain = report_from_json(old).results.at(0).measurements.at(0);
  CHECK(plain.work.flops == 0);
  CHECK_FALSE(to_json(plain).contains("flops"));
  old["results"][0]["measurements"][0]["flops"] = -1;
  CHECK_THROWS_WITH(report_from_json(old), Catch::Contains("measurements[0].flops"));
}

TEST_CASE("the table's of roof column: the compute roof's share, blank under bandwidth",
          "[report]") {
  auto rep = sample_report();
  auto& m = rep.results.at(0).measurements.at(0);
  m.rates["fraction_of_theoretical_peak"] = 0.5;
  m.rates["fraction_of_roof"] = 0.5; // the bandwidth roof: of peak says it already
  CHECK_THAT(render(rep, output_format::table), !Catch::Contains("of roof"));
  m.rates["fraction_of_roof"] = 0.913; // the compute roof
  const auto t = render(rep, output_format::table);
  CHECK_THAT(t, Catch::Contains("of roof") && Catch::Contains("91.3%"));
  CHECK_THAT(t, Catch::Contains("of roof = %"));
}

TEST_CASE("reading a result file names the bad path", "[report]") {
  auto j = to_json(sample_report());
  j["results"][0]["measurements"][0]["samples"][1] = "fast";
  CHECK_THROWS_WITH(report_from_json(j), Catch::Contains("results[0].measurements[0].samples[1]"));
  j = to_json(sample_report());
  j["schema"] = "other/9";
  CHECK_THROWS_WITH(report_from_json(j), Catch::Contains("gpubench/1"));
  j = to_json(sample_report());
  j["meta"].erase("host");
  CHECK_THROWS_WITH(report_from_json(j), Catch::Contains("meta.host"));
  CHECK_THROWS_AS(report_from_json(nlohmann::json::array()), usage_error);
}

TEST_CASE("a result file's samples are times a clock could have read", "[report]") {
  const auto with_samples = [](std::vector<double> v) {
    auto j = to_json(sample_report());
    j["results"][0]["measurements"][0]["samples"] = v;
    return j;
  };
  // 1e308 s overflowed the median to inf; 5e-324 s as a base made every change infinite.
  for (const double bad : {1e308, 5e-324, 1e-13, 2e6, -1.0})
    CHECK_THROWS_WITH(report_from_json(with_samples({29e-6, bad})),
                      Catch::Contains("results[0].measurements[0].samples[1] must be 0 or a time "
                                      "in seconds from 1e-12 to 1e+06"));
  for (const double good : {0.0, 1e-12, 29e-6, 1e6})
    CHECK_NOTHROW(report_from_json(with_samples({29e-6, good})));
  auto j = to_json(sample_report());
  j["results"][0]["measurements"][0]["bytes"] = 1e300;
  CHECK_THROWS_WITH(report_from_json(j), Catch::Contains("measurements[0].bytes must be a count"));
}

TEST_CASE("every string of a result file is printable text, except the run's own argv",
          "[report]") {
  const std::string expected =
      "must be printable text (UTF-8 without control or bidirectional characters)";
  auto j = to_json(sample_report());
  // A name that clears the screen and forges a table row.
  j["results"][0]["measurements"][0]["name"] = "kernel\x1b[2J\nFAKE ROW";
  CHECK_THROWS_WITH(report_from_json(j),
                    Catch::Contains("results[0].measurements[0].name " + expected));
  j = to_json(sample_report());
  j["results"][0]["params"]["dtype"] = "f32\u009b2J"; // C1 CSI, in UTF-8
  CHECK_THROWS_WITH(report_from_json(j), Catch::Contains("results[0].params.dtype " + expected));
  j = to_json(sample_report());
  j["results"][1]["reason"] = std::string(5000, 'x');
  CHECK_THROWS_WITH(report_from_json(j), Catch::Contains("results[1].reason " + expected));
  j = to_json(sample_report());
  j["results"][0]["derived"]["a\tb"] = 1;
  CHECK_THROWS_WITH(report_from_json(j), Catch::Contains("(the key) " + expected));
  j = to_json(sample_report());
  j["meta"]["argv"].push_back("--note=line one\nline two"); // never printed: kept as written
  CHECK_NOTHROW(report_from_json(j));
  j["results"][0]["measurements"][0]["name"] = "kernel µs é"; // UTF-8 text is fine
  CHECK_NOTHROW(report_from_json(j));
}

TEST_CASE("the table shows medians in human units, derived figures and the verdict", "[report]") {
  const auto t = render(sample_report(), output_format::table);
  CHECK_THAT(t, Catch::Contains("29.00 us"));
  CHECK_THAT(t, Catch::Contains("4.14 TB/s"));
  CHECK_THAT(t, Catch::Contains("speedup_kernel_vs_cpu_reference: 210.50x"));
  CHECK_THAT(t, Catch::Contains("PASSED"));
  CHECK_THAT(t, Catch::Contains("skipped: out of memory"));
  CHECK_THAT(t, Catch::Contains("GPU 0 NVIDIA H200"));
}

TEST_CASE("CSV has one row per measurement with every parameter column", "[report]") {
  const auto csv = render(sample_report(), output_format::csv);
  std::istringstream in(csv);
  std::string header, row1, row2, extra;
  std::getline(in, header);
  std::getline(in, row1);
  std::getline(in, row2);
  CHECK_FALSE(std::getline(in, extra));
  CHECK_THAT(header, Catch::StartsWith("benchmark,device,status,dtype,n,measurement"));
  CHECK_THAT(row1, Catch::StartsWith("vecadd,0,ok,f32,10000000,kernel,gpu"));
  CHECK_THAT(row2, Catch::StartsWith("vecadd,0,skipped,f64,1,"));
  CHECK_THAT(header, Catch::EndsWith(",verified,run_incomplete,incomplete_reason"));
  CHECK_THAT(row1, Catch::EndsWith(",true,false,"));
  CHECK_THAT(row2, Catch::EndsWith(",false,"));
}

TEST_CASE("CSV of an interrupted run says so on every row", "[report]") {
  auto rep = sample_report();
  rep.meta.incomplete = true;
  rep.meta.incomplete_reason = "interrupted by SIGINT, 1 of 3 points done";
  const auto csv = render(rep, output_format::csv);
  std::istringstream in(csv);
  std::string header, row;
  std::getline(in, header);
  int rows = 0;
  while (std::getline(in, row)) {
    ++rows;
    CHECK_THAT(row, Catch::EndsWith(",true,interrupted by SIGINT, 1 of 3 points done") ||
                        Catch::EndsWith(",true,\"interrupted by SIGINT, 1 of 3 points done\""));
  }
  CHECK(rows == 2);
}

TEST_CASE("markdown is a table with a header separator", "[report]") {
  const auto md = render(sample_report(), output_format::md);
  CHECK_THAT(md, Catch::StartsWith("| benchmark |"));
  CHECK_THAT(md, Catch::Contains("|---|"));
  CHECK_THAT(md, Catch::Contains("| kernel | 29.00 us |"));
}

TEST_CASE("units scale for people", "[report]") {
  CHECK(format_seconds(28.4e-6) == "28.40 us");
  CHECK(format_seconds(1.5e-3) == "1.500 ms");
  CHECK(format_seconds(2.0) == "2.000 s");
  CHECK(format_bytes_per_s(4.23e12) == "4.23 TB/s");
  CHECK(format_bytes_per_s(55e9) == "55 GB/s");
}

TEST_CASE("exit codes follow the documented precedence", "[report]") {
  auto rep = sample_report();
  CHECK(exit_code_for(rep) == exit_code::cuda); // a skipped (out-of-memory) point
  rep.results.pop_back();
  CHECK(exit_code_for(rep) == exit_code::success);
  rep.results[0].status = result_status::failed;
  CHECK(exit_code_for(rep) == exit_code::verification_failed);
}

TEST_CASE("the JSON writer prints what to_json prints, one result at a time", "[report]") {
  run_report r;
  r.meta.version = "1.0";
  r.meta.argv = {"gpubench", "vecadd"};
  r.meta.test_slowdown = "x:0.1"; // a key after "results" in the document's order
  for (int i = 0; i < 3; ++i) {
    result res;
    res.benchmark = "vecadd";
    res.params = {{"n", 1000 + i}, {"note", "a\nb"}};
    measurement m;
    m.name = "cpu_reference";
    m.samples = {1e-6 * (i + 1), 2e-6, 3.5e-6};
    finalize(m);
    res.measurements.push_back(m);
    r.results.push_back(res);
  }
  for (const std::size_t n : {3U, 1U, 0U}) {
    r.results.resize(n);
    std::ostringstream os;
    write_report(os, r, output_format::json, {});
    CHECK(os.str() == to_json(r).dump(2) + "\n");
  }
}
