// Specification of reading files that come from elsewhere (lib/src/input/untrusted_file.cpp): what
// is refused before reading, what the strict JSON parse refuses, and how short the quotes stay.
#include "gpubench/core/errors.hpp"
#include "gpubench/input/untrusted_file.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using Catch::Matchers::Contains;
using gpubench::parse_untrusted_json;
using gpubench::usage_error;
using nlohmann::json;

namespace {

std::string error_of(std::string_view text) {
  try {
    (void)parse_untrusted_json(text, "in.json");
  } catch (const usage_error& e) {
    return e.what();
  }
  return "(accepted)";
}

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

/// A scratch folder, removed with everything in it.
struct scratch {
  std::filesystem::path dir;
  scratch() {
    dir = std::filesystem::temp_directory_path() /
          ("gpubench-untrusted-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
  }
  ~scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  [[nodiscard]] std::string file(const std::string& name, const std::string& content) const {
    const auto p = (dir / name).string();
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
};

} // namespace

TEST_CASE("nesting deeper than the limit is refused with the key path, at any depth",
          "[untrusted_file]") {
  CHECK(parse_untrusted_json(nested(64), "in.json").is_array());
  CHECK_THAT(error_of(nested(65)), Contains("in.json:1:65: ") && Contains("more than 64 levels"));
  // Past 100,000 levels the parser itself must not recurse, nor anything after it.
  const auto deep = error_of(nested(200000));
  CHECK_THAT(deep, Contains("more than 64 levels"));
  CHECK(deep.size() < 400);
  CHECK_THAT(error_of(R"({"a": {"b": [)" + nested(70) + "]}}"),
             Contains("in.json:1:75: a.b[0]") && Contains("more than 64 levels"));
}

TEST_CASE("a key twice in one object is an error naming the key", "[untrusted_file]") {
  CHECK_THAT(error_of(R"({"benchmarks": [{"benchmark": "a", "benchmark": "b"}]})"),
             Contains("benchmarks[0].benchmark: the key \"benchmark\" appears twice"));
  // The same key in two objects is fine.
  CHECK(parse_untrusted_json(R"([{"a": 1}, {"a": 2}])", "x").size() == 2);
}

TEST_CASE("numbers beyond a double's range are refused; subnormals are kept", "[untrusted_file]") {
  CHECK_THAT(error_of(R"({"options": {"timeout": 1e400}})"),
             Contains("in.json:1:") && Contains("options.timeout: the number 1e400 is out of "
                                                "range for a double"));
  CHECK_THAT(error_of("[1, -1e999]"), Contains("[1]: the number -1e999 is out of range"));
  CHECK_THAT(error_of(R"({"x": 1e-400})"), Contains("x: the number 1e-400 is too small"));
  CHECK_THAT(error_of(R"({"x": 0.0000e-400})"), Contains("(accepted)"));
  CHECK(parse_untrusted_json("[1e-320]", "x")[0].get<double>() > 0);
}

TEST_CASE("a NUL byte anywhere is an error, not the end of the document", "[untrusted_file]") {
  const std::string text("{\"a\": 1}\0garbage", 16);
  CHECK_THAT(error_of(text), Contains("in.json:1:9: a NUL byte"));
  CHECK_THAT(error_of(std::string("{\"a\": \"x\0\"}", 11)), Contains("NUL byte"));
}

TEST_CASE("syntax errors name line, column and key path, and quote the token briefly",
          "[untrusted_file]") {
  CHECK_THAT(error_of("{\n  \"a\": [1, 2,]\n}"),
             Contains("in.json:2:") && Contains("a[2]: not valid JSON"));
  CHECK_THAT(error_of("  "), Contains("in.json:1:1: not valid JSON (the file is empty"));
  const auto long_token = error_of("[\"" + std::string(100000, 'x') + "\n\"]");
  CHECK(long_token.size() < 400);
}

TEST_CASE("printable text is UTF-8 with no C0 or C1 control, DEL or bidirectional control",
          "[untrusted_file]") {
  CHECK(gpubench::printable_text(""));
  CHECK(gpubench::printable_text("kernel (timestamps) 5.3 TB/s, 28 \xc2\xb5s, \xc3\xa9t\xc3\xa9"));
  CHECK_FALSE(gpubench::printable_text("a\nb"));
  CHECK_FALSE(gpubench::printable_text("a\tb"));
  CHECK_FALSE(gpubench::printable_text("\x1b[2J"));
  CHECK_FALSE(gpubench::printable_text("x\x7f"));
  CHECK_FALSE(gpubench::printable_text(std::string_view("a\0b", 3)));
  CHECK_FALSE(gpubench::printable_text("\xc2\x9b"
                                       "2J")); // U+009B, a terminal's one-byte CSI
  CHECK_FALSE(gpubench::printable_text("\xc2\x80"));
  CHECK(gpubench::printable_text("\xc2\xa0"));   // U+00A0, a no-break space, is text
  CHECK_FALSE(gpubench::printable_text("\xc2")); // a lone lead byte: not UTF-8
  CHECK_FALSE(gpubench::printable_text("vecadd\xff"));
  CHECK_FALSE(gpubench::printable_text("\xc0\xaf"));     // an overlong '/'
  CHECK_FALSE(gpubench::printable_text("\xed\xa0\x80")); // a UTF-16 surrogate
  CHECK_FALSE(gpubench::printable_text("535.\xe2\x80\xae"
                                       "21")); // U+202E, right-to-left override
  for (const char* bidi : {"\xd8\x9c", "\xe2\x80\x8e", "\xe2\x80\x8f", "\xe2\x80\xaa",
                           "\xe2\x81\xa6", "\xe2\x81\xa9", "\xe2\x80\xa8"})
    CHECK_FALSE(gpubench::printable_text(bidi));
  CHECK(gpubench::printable_text("\xf0\x9f\x9a\x80")); // U+1F680, four bytes
}

TEST_CASE("escaped shows every hidden byte and code point as an escape, the rest as it is",
          "[untrusted_file]") {
  CHECK(gpubench::escaped("vecadd\xff") == "vecadd\\xff");
  CHECK(gpubench::escaped("535.\xe2\x80\xae"
                          "21") == "535.\\u202e21");
  CHECK(gpubench::escaped("a\tb\n\x1b[2J") == "a\\tb\\n\\x1b[2J");
  CHECK(gpubench::escaped("\xc2\x9b") == "\\u009b");
  CHECK(gpubench::escaped("\xe2\x82\xac \xc3\xa9") == "\xe2\x82\xac \xc3\xa9");
  CHECK(gpubench::escaped("\xe2\x82") == "\\xe2\\x82"); // a cut sequence, byte by byte
  // What escaped() returns is always printable, whatever the input.
  const std::uint64_t seed = std::random_device{}();
  std::cout << "escaped seed " << seed << '\n';
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 500; ++round) {
    std::string text;
    for (auto n = rng() % 40; n > 0; --n) text += static_cast<char>(rng() % 256);
    INFO("seed " << seed << " round " << round);
    CHECK(gpubench::printable_text(gpubench::escaped(text)));
  }
  CHECK(gpubench::clip("\xe2\x80\xae") == "\\u202e");
}

TEST_CASE("clip keeps messages on one line and short, whole UTF-8 characters only",
          "[untrusted_file]") {
  CHECK(gpubench::clip("short") == "short");
  CHECK(gpubench::clip("a\nb\x01") == "a\\nb\\x01");
  const std::uint64_t seed = std::random_device{}();
  std::cout << "clip seed " << seed << '\n';
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 200; ++round) {
    std::string text;
    const auto n = rng() % 400;
    for (std::uint64_t i = 0; i < n; ++i) {
      switch (rng() % 4) {
      case 0: text += "\xc3\xa9"; break;     // é: two bytes
      case 1: text += "\xe2\x82\xac"; break; // €: three bytes
      case 2: text += static_cast<char>(rng() % 32); break;
      default: text += static_cast<char>('a' + rng() % 26); break;
      }
    }
    const auto c = gpubench::clip(text, 80);
    INFO("seed " << seed << " round " << round);
    CHECK(c.size() <= 80);
    CHECK(c.find('\n') == std::string::npos);
    // Never starts or ends in the middle of a character.
    for (std::size_t i = 0; i < c.size(); ++i) {
      const auto u = static_cast<unsigned char>(c[i]);
      if ((u & 0xC0U) == 0x80U) CHECK(i > 0);
    }
    if (!c.empty()) CHECK((static_cast<unsigned char>(c.back()) & 0xC0U) != 0xC0U);
  }
}

TEST_CASE("preview shows a bounded piece of any value without serializing it whole",
          "[untrusted_file]") {
  CHECK(gpubench::preview(json{{"a", 1}}) == R"({"a":1})"); // as json::dump writes it
  json big = json::array();
  for (int i = 0; i < 100000; ++i) big.push_back(std::string(100, 'y'));
  CHECK(gpubench::preview(big, 60).size() <= 60);
  // A value nested far deeper than any file may be (built here directly).
  json deep = json::array();
  json* inner = &deep;
  for (int i = 0; i < 100000; ++i) {
    inner->push_back(json::array());
    inner = &inner->back();
  }
  const auto shown = gpubench::preview(deep, 60);
  CHECK(shown.size() <= 60);
  CHECK_THAT(shown, Contains("[[[["));
}

TEST_CASE("only regular files are read, up to the size limit", "[untrusted_file]") {
  const scratch s;
  const auto ok = s.file("ok.json", R"({"a": [1, 2]})");
  CHECK(gpubench::load_untrusted_json(ok, "run file")["a"].size() == 2);
  CHECK_THROWS_WITH(gpubench::read_untrusted_file(s.dir.string(), "run file"),
                    Contains("is a directory, not a run file"));
  CHECK_THROWS_WITH(gpubench::read_untrusted_file("/dev/zero", "result file"),
                    Contains("/dev/zero: is a character device, not a result file"));
  const auto fifo = (s.dir / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // No writer: opening it for reading would block forever; it must be refused at once.
  CHECK_THROWS_WITH(gpubench::read_untrusted_file(fifo, "run file"),
                    Contains("is a FIFO (named pipe), not a run file"));
  const auto big = s.file("big.json", std::string(2000, ' ') + "{}");
  CHECK_THROWS_WITH(gpubench::read_untrusted_file(big, "run file", 1024),
                    Contains("may be at most"));
  CHECK(gpubench::read_untrusted_file(big, "run file", 4096).size() == 2002);
  CHECK_THROWS_WITH(gpubench::read_untrusted_file((s.dir / "none").string(), "run file"),
                    Contains("cannot open the run file"));
  CHECK(gpubench::max_untrusted_file_bytes == 256U << 20U);
}
