#include "gpubench/core/errors.hpp"
#include "gpubench/results/journal.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using namespace gpubench;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

journal_identity identity_of_points(std::size_t n) {
  journal_identity id;
  for (std::size_t i = 0; i < n; ++i)
    id.points.push_back({{"benchmark", "vecadd"},
                         {"params", {{"n", 1024 * (i + 1)}, {"dtype", "f32"}, {"device", -1}}}});
  id.options = {{"seed", 42}, {"max_samples", 5}};
  id.version = "1.2.3";
  id.git = "abc123";
  return id;
}

result point_result(std::size_t i, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> sample(1e-6, 1e-3);
  std::vector<double> samples(5);
  for (auto& s : samples) s = sample(rng);
  result r;
  r.benchmark = "vecadd";
  r.device = -1;
  r.params = {{"n", 1024 * (i + 1)}, {"dtype", "f32"}};
  r.measurements.push_back(test::finalized("cpu", samples));
  return r;
}

struct journal_dir {
  fs::path dir = fs::temp_directory_path() / "gpubench-journal-test";
  journal_dir() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~journal_dir() { fs::remove_all(dir); }
  [[nodiscard]] std::string output() const { return (dir / "r.json").string(); }
};

run_meta some_meta() {
  run_meta m;
  m.version = "1.2.3";
  m.git = "abc123";
  m.started_at = "2026-12-03T07:00:00Z";
  m.host.name = "host";
  m.host.cpu_model = "cpu";
  m.host.cores = 2;
  return m;
}

/// A journal of `written` points of a 5-point plan, written by run_journal.
std::string written_journal(const journal_dir& d, std::size_t written, std::mt19937_64& rng,
                            std::vector<result>* results = nullptr) {
  run_journal j(d.output());
  j.start(identity_of_points(5), some_meta(), 5, 0);
  for (std::size_t i = 0; i < written; ++i) {
    const result r = point_result(i, rng);
    j.append(i, r, {});
    if (results != nullptr) results->push_back(r);
  }
  return slurp(journal_path(d.output()));
}

std::mt19937_64 seeded_rng() {
  const auto seed = std::random_device{}();
  INFO("seed " << seed);
  std::printf("journal_test seed %u\n", seed);
  return std::mt19937_64(seed);
}

} // namespace

TEST_CASE("a journal reads back every point with its samples, bit for bit", "[journal]") {
  journal_dir d;
  auto rng = seeded_rng();
  std::vector<result> written;
  const std::string text = written_journal(d, 3, rng, &written);
  CHECK(looks_like_journal(text));
  const auto c = parse_journal(text, "r.json.journal");
  REQUIRE(c.has_header);
  CHECK(c.planned == 5);
  CHECK(c.pid > 0);
  CHECK_FALSE(c.torn_tail);
  CHECK(c.valid_bytes == text.size());
  CHECK(identity_difference(c.identity, identity_of_points(5)).empty());
  CHECK(c.meta.started_at == "2026-12-03T07:00:00Z");
  REQUIRE(c.points.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& got = c.points.at(i);
    CHECK(got.params == written[i].params);
    REQUIRE(got.measurements.size() == 1);
    CHECK(got.measurements[0].samples == written[i].measurements[0].samples); // exact doubles
  }
  const run_report rep = journal_report(c);
  CHECK(rep.meta.incomplete);
  CHECK_THAT(rep.meta.incomplete_reason, Catch::Contains("3 of 5 points"));
  CHECK(rep.results.size() == 3);
}

TEST_CASE("a torn last line is ignored, and cut off when the run resumes", "[journal]") {
  journal_dir d;
  auto rng = seeded_rng();
  const std::string whole = written_journal(d, 3, rng);
  const std::size_t last_line = whole.rfind('\n', whole.size() - 2) + 1;
  for (const std::size_t cut : {last_line + 1, last_line + 20, whole.size() - 1}) {
    INFO("cut at " << cut << " of " << whole.size());
    const auto c = parse_journal(whole.substr(0, cut), "j");
    CHECK(c.torn_tail);
    CHECK(c.points.size() == 2);
    CHECK(c.valid_bytes == last_line);
  }
  // Resuming from the torn file: the torn bytes go and the new line follows the complete ones.
  std::ofstream(journal_path(d.output()), std::ios::binary | std::ios::trunc)
      << whole.substr(0, last_line + 7);
  {
    run_journal j(d.output());
    const auto c = parse_journal(j.existing_text(), j.path());
    REQUIRE(c.torn_tail);
    j.start(c.identity, c.meta, c.planned, c.valid_bytes);
    j.append(4, point_result(4, rng), {});
  }
  const auto c = parse_journal(slurp(journal_path(d.output())), "j");
  CHECK_FALSE(c.torn_tail);
  CHECK(c.points.size() == 3);
  CHECK(c.points.count(4) == 1);
  CHECK(c.points.count(2) == 0);
}

TEST_CASE("a torn header holds nothing; an empty journal too", "[journal]") {
  journal_dir d;
  auto rng = seeded_rng();
  const std::string whole = written_journal(d, 1, rng);
  const auto none = parse_journal(whole.substr(0, whole.find('\n') / 2), "j");
  CHECK_FALSE(none.has_header);
  CHECK(none.torn_tail);
  CHECK(none.points.empty());
  CHECK_FALSE(parse_journal("", "j").has_header);
}

TEST_CASE("a line changed by hand fails, naming its line number", "[journal]") {
  journal_dir d;
  auto rng = seeded_rng();
  const std::string whole = written_journal(d, 3, rng);
  // Line 3 is point 1: change one digit of its first sample.
  std::size_t at = 0;
  for (int k = 0; k < 2; ++k) at = whole.find('\n', at) + 1;
  std::size_t digit = whole.find("\"samples\":[", at) + 11;
  while (whole[digit] < '1' || whole[digit] > '9') ++digit; // still a number once changed
  std::string edited = whole;
  edited[digit] = edited[digit] == '1' ? '2' : '1';
  CHECK_THROWS_WITH(parse_journal(edited, "r.json.journal"),
                    Catch::Contains("r.json.journal: line 3") &&
                        Catch::Contains("changed after gpubench wrote it"));
  // Not JSON at all, on a complete line.
  std::string garbage = whole;
  garbage.insert(at, "not json\n");
  CHECK_THROWS_WITH(parse_journal(garbage, "j"), Catch::Contains("line 3"));
}

TEST_CASE("a line that repeats a point or leaves the plan is refused", "[journal]") {
  journal_dir d;
  auto rng = seeded_rng();
  const std::string whole = written_journal(d, 2, rng);
  const std::size_t second = whole.find('\n') + 1;
  const std::string line2 = whole.substr(second, whole.find('\n', second) + 1 - second);
  CHECK_THROWS_WITH(parse_journal(whole + line2, "j"),
                    Catch::Contains("line 4") && Catch::Contains("already on line 2"));
}

TEST_CASE("identity_difference names what differs", "[journal]") {
  const auto a = identity_of_points(3);
  CHECK(identity_difference(a, a).empty());
  auto b = a;
  b.git = "def456";
  CHECK_THAT(identity_difference(a, b), Catch::Contains("build differs"));
  b = a;
  b.source_hash = std::string(64, 'a'); // a copy built from other sources, same git name
  CHECK_THAT(identity_difference(a, b), Catch::Contains("built from sources not recorded") &&
                                            Catch::Contains("from aaaaaaaaaaaa"));
  auto edited = b;
  edited.source_hash = std::string(64, 'b');
  CHECK_THAT(identity_difference(b, edited), Catch::Contains("build differs"));
  CHECK(identity_difference(b, b).empty());
  b = a;
  b.points[1]["params"]["n"] = 7;
  CHECK_THAT(identity_difference(a, b), Catch::Contains("point 2") && Catch::Contains("n=7"));
  b = a;
  b.points.erase(2);
  CHECK_THAT(identity_difference(a, b), Catch::Contains("3 points, this one 2"));
  b = a;
  b.options["seed"] = 7;
  CHECK_THAT(identity_difference(a, b), Catch::Contains("option seed"));
  b = a;
  b.cuda_driver = "13.0";
  b.gpu_uuids = {"GPU-1"};
  CHECK_THAT(identity_difference(a, b), Catch::Contains("CPU only"));
  auto c = b;
  c.gpu_uuids = {"GPU-2"};
  CHECK_THAT(identity_difference(b, c), Catch::Contains("GPU differs") &&
                                            Catch::Contains("GPU-1") && Catch::Contains("GPU-2"));
  c = b;
  c.cuda_driver = "13.1";
  CHECK_THAT(identity_difference(b, c), Catch::Contains("driver differs"));
}

TEST_CASE("a result file is not a journal", "[journal]") {
  CHECK_FALSE(looks_like_journal(R"({"schema": "gpubench/1", "meta": {}})"));
  CHECK_FALSE(looks_like_journal(""));
}

TEST_CASE("a journal line whose parameters are not its planned point's is refused", "[journal]") {
  journal_dir d;
  auto rng = seeded_rng();
  const std::string whole = written_journal(d, 2, rng);
  // Line 2 is point 0 (n=1024); give it point 1's n and seal it again, as a careful hand would.
  const std::size_t start = whole.find('\n') + 1;
  const std::size_t end = whole.find('\n', start);
  nlohmann::json line = nlohmann::json::parse(whole.substr(start, end - start));
  line.erase("check");
  line["result"]["params"]["n"] = 2048;
  std::uint64_t h = 14695981039346656037ULL; // the journal's FNV-1a
  for (const char c : line.dump()) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  char check[17];
  std::snprintf(check, sizeof check, "%016llx", static_cast<unsigned long long>(h));
  line["check"] = check;
  const std::string edited = whole.substr(0, start) + line.dump() + whole.substr(end);
  CHECK_THROWS_WITH(parse_journal(edited, "j"), Catch::Contains("j: line 2") &&
                                                    Catch::Contains("parameter n") &&
                                                    Catch::Contains("not the plan's"));
}
