#include "gpubench/core/errors.hpp"
#include "gpubench/input/sizes.hpp"

#include <catch2/catch.hpp>

using namespace gpubench;
using V = std::vector<std::uint64_t>;

TEST_CASE("sizes accept plain, SI, binary and power forms", "[sizes]") {
  CHECK(parse_size("10000000") == 10000000);
  CHECK(parse_size("10M") == 10000000);
  CHECK(parse_size("3K") == 3000);
  CHECK(parse_size("2G") == 2000000000);
  CHECK(parse_size("1Mi") == 1048576);
  CHECK(parse_size("4Ki") == 4096);
  CHECK(parse_size("1Gi") == 1073741824);
  CHECK(parse_size("2^28") == 268435456);
  CHECK(parse_size("2^0") == 1);
  CHECK(parse_size(" 7 ") == 7);
}

TEST_CASE("bad sizes name the option and the text", "[sizes]") {
  CHECK_THROWS_WITH(parse_size("abc", "n"), Catch::Contains("--n") && Catch::Contains("'abc'"));
  CHECK_THROWS_WITH(parse_size("-5", "n"), Catch::Contains("negative"));
  CHECK_THROWS_WITH(parse_size("2^70", "n"), Catch::Contains("too large"));
  CHECK_THROWS_WITH(parse_size("20000000T", "n"), Catch::Contains("too large"));
  CHECK_THROWS_WITH(parse_size("99999999999999999999", "n"), Catch::Contains("too large"));
  CHECK_THROWS_AS(parse_size("1.5M", "n"), usage_error);
  CHECK_THROWS_AS(parse_size("", "n"), usage_error);
  CHECK_THROWS_AS(parse_size("M", "n"), usage_error);
  CHECK_THROWS_AS(parse_size("10X", "n"), usage_error);
}

TEST_CASE("lists and ranges expand in order", "[sizes]") {
  CHECK(parse_size_list("1M,10M") == V{1000000, 10000000});
  CHECK(parse_size_list("1M:1G:x4") == V{1000000, 4000000, 16000000, 64000000, 256000000});
  CHECK(parse_size_list("1Ki:4Ki:x2") == V{1024, 2048, 4096});
  CHECK(parse_size_list("0:1000:100").size() == 11);
  CHECK(parse_size_list("0:1000:100").back() == 1000);
  CHECK(parse_size_list("0:999:100").back() == 900);
  CHECK(parse_size_list("5:5:1") == V{5});
  CHECK(parse_size_list("8,1:3:1") == V{8, 1, 2, 3});
}

TEST_CASE("bad lists and ranges are usage errors", "[sizes]") {
  CHECK_THROWS_WITH(parse_size_list("10:1:1", "n"), Catch::Contains("reversed"));
  CHECK_THROWS_WITH(parse_size_list("1:10:0", "n"), Catch::Contains("zero step"));
  CHECK_THROWS_WITH(parse_size_list("1:10:x1", "n"), Catch::Contains("factor"));
  CHECK_THROWS_WITH(parse_size_list("0:10:x2", "n"), Catch::Contains("starting at 0"));
  CHECK_THROWS_WITH(parse_size_list("1,,2", "n"), Catch::Contains("empty"));
  CHECK_THROWS_WITH(parse_size_list("", "n"), Catch::Contains("empty"));
  CHECK_THROWS_WITH(parse_size_list("1:2", "n"), Catch::Contains("range"));
  CHECK_THROWS_WITH(parse_size_list("0:1000000:1", "n"), Catch::Contains("more than"));
}

TEST_CASE("digits grouped by commas are named as such, not read as a list", "[sizes]") {
  for (const char* text : {"1,000,000", "10,000", "2,048", "1,000,000,000"})
    CHECK_THROWS_WITH(parse_size_list(text, "n"),
                      Catch::Contains(std::string("'") + text + "'") &&
                          Catch::Contains("commas between groups of digits"));
  // Lists that only look alike stay lists.
  CHECK(parse_size_list("32,256") == V{32, 256});
  CHECK(parse_size_list("128,256,512") == V{128, 256, 512});
  CHECK(parse_size_list("1,10") == V{1, 10});
}

TEST_CASE("number lists reject non-finite values", "[sizes]") {
  CHECK(parse_number_list("0.5,1,2e3", "mean") == std::vector<double>{0.5, 1, 2000});
  CHECK_THROWS_WITH(parse_number_list("nan", "std"), Catch::Contains("finite"));
  CHECK_THROWS_WITH(parse_number_list("inf", "std"), Catch::Contains("finite"));
  CHECK_THROWS_WITH(parse_number_list("1x", "std"), Catch::Contains("not a number"));
}

TEST_CASE("sizes format compactly", "[sizes]") {
  CHECK(format_size(10000000) == "10M");
  CHECK(format_size(268435456) == "2^28");
  CHECK(format_size(1536) == "1536");
}

TEST_CASE("word lists accept all and both, keep order and drop duplicates", "[sizes]") {
  using W = std::vector<std::string>;
  const W kinds{"seed", "vectorized"};
  CHECK(parse_word_list("seed", "kernel", kinds) == W{"seed"});
  CHECK(parse_word_list("all", "kernel", kinds) == kinds);
  CHECK(parse_word_list("both", "kernel", kinds) == kinds);
  CHECK(parse_word_list("vectorized,seed,vectorized", "kernel", kinds) == W{"vectorized", "seed"});
  CHECK(parse_word_list("all", "mode", {"a", "b", "c"}, {"a", "b"}) == W{"a", "b"});
  CHECK_THROWS_WITH(parse_word_list("fast", "kernel", kinds),
                    Catch::Contains("--kernel: 'fast' is not one of seed, vectorized (or all)"));
  CHECK_THROWS_AS(parse_word_list("both", "mode", {"a", "b", "c"}), usage_error);
}

TEST_CASE("numbers: one set of rules for options and run files", "[sizes][numbers]") {
  CHECK(parse_number("10", "lr") == 10);
  CHECK(parse_number(" -2.5e3 ", "lr") == -2500);
  CHECK(parse_number("+0.5", "lr") == 0.5);
  CHECK(parse_number(".5", "lr") == 0.5);
  // Subnormal doubles are numbers (std::stod throws on them).
  CHECK(parse_number("1e-320", "lr") > 0);
  CHECK(parse_number("1e-320", "lr") < 1e-319);
  CHECK_THROWS_WITH(parse_number("0x10", "degrees"),
                    Catch::Contains("--degrees: '0x10' is not a number"));
  CHECK_THROWS_WITH(parse_number("1.5abc", "degrees"), Catch::Contains("is not a number"));
  CHECK_THROWS_WITH(parse_number("1 2", "degrees"), Catch::Contains("is not a number"));
  CHECK_THROWS_WITH(parse_number("++1", "degrees"), Catch::Contains("is not a number"));
  CHECK_THROWS_WITH(parse_number("-inf", "degrees"), Catch::Contains("not a finite number"));
  CHECK_THROWS_WITH(parse_number("1e400", "timeout"), Catch::Contains("is out of range"));
  CHECK_THROWS_WITH(parse_number("-1e400", "timeout"), Catch::Contains("is out of range"));
  CHECK_THROWS_WITH(parse_number("1e-400", "timeout"), Catch::Contains("is too small"));
  CHECK_THROWS_WITH(parse_number("", "timeout"), Catch::Contains("is empty"));
  CHECK(parse_number_list("1e-320,2", "lr").size() == 2);
  CHECK_THROWS_WITH(parse_number_list("1,0x10", "mean"), Catch::Contains("'0x10'"));
}

TEST_CASE("float32 values must not overflow or round to zero", "[sizes][numbers]") {
  CHECK(to_float32(0.5, "sigma") == 0.5F);
  CHECK(to_float32(0, "degrees") == 0.0F);
  CHECK(to_float32(1e-40, "sigma") > 0); // a float32 subnormal is still not 0
  CHECK_THROWS_WITH(to_float32(1e-50, "sigma"),
                    Catch::Contains("--sigma: '1e-50' is too small for float32"));
  CHECK_THROWS_WITH(to_float32(-1e39, "mean"), Catch::Contains("out of range for float32"));
}

TEST_CASE("messages quote at most about 80 characters of the text", "[sizes][numbers]") {
  const std::string huge(100000, '7');
  try {
    (void)parse_size_list(huge + ",x", "n");
    FAIL("a bad list must be refused");
  } catch (const usage_error& e) {
    CHECK(std::string(e.what()).size() < 200);
  }
  try {
    (void)parse_number(std::string(5000, '1') + "x", "lr");
    FAIL("trailing text must be refused");
  } catch (const usage_error& e) {
    CHECK(std::string(e.what()).size() < 200);
  }
}

TEST_CASE("one percentage reader: with or without the sign, numbers by the rules of all numbers",
          "[sizes]") {
  CHECK(read_percent("2.5") == 2.5);
  CHECK(read_percent("2.5%") == 2.5);
  CHECK(read_percent(" 10% ") == 10.0);
  CHECK(read_percent("1e-1%") == Approx(0.1));
  CHECK(read_percent("-5%") == -5.0); // the caller bounds it
  for (const char* bad : {"", "%", "five", "0x10", "inf", "nan%", "5%%", "5 %x"}) {
    INFO(bad);
    CHECK_FALSE(read_percent(bad));
  }
  // Where only text with its sign is a percentage (a run file's "1%"; 1 is a number there).
  CHECK(read_percent("1%", true) == 1.0);
  CHECK_FALSE(read_percent("1", true));
}

TEST_CASE("one device-list reader: all, or indices from 0 to 1023", "[sizes]") {
  CHECK_FALSE(parse_device_list("all", "--device"));
  CHECK(parse_device_list("0", "--device") == std::vector<int>{0});
  CHECK(parse_device_list("3,0,1023", "--device") == std::vector<int>{3, 0, 1023});
  CHECK_THROWS_WITH(parse_device_list("0,x", "--device"),
                    "--device: 'x' is not a device index (0 to 1023) or 'all'");
  CHECK_THROWS_WITH(parse_device_list("1024", "options.device"),
                    Catch::StartsWith("options.device: '1024'"));
  for (const char* bad : {"", ",", "0,", "-1", "0x1", "1.0", "ALL0"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_device_list(bad, "--device"), usage_error);
  }
}
