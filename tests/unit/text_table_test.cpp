// The shared cell writers: tables that fit, CSV that a spreadsheet cannot
// run, parameters without float noise.
#include "gpubench/report/text_table.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace gpubench;

TEST_CASE("CSV cells that a spreadsheet would run as a formula are neutralised", "[writers]") {
  CHECK(csv_text("=HYPERLINK(\"http://x\")") == "\"'=HYPERLINK(\"\"http://x\"\")\"");
  CHECK(csv_text("+1") == "'+1");
  CHECK(csv_text("-2+3") == "'-2+3");
  CHECK(csv_text("@SUM(A1)") == "'@SUM(A1)");
  CHECK(csv_text("\tx") == "'\tx");
  CHECK(csv_text("plain") == "plain");
  CHECK(csv_text("a,b") == "\"a,b\"");
  CHECK(csv_plain("-2.5") == "-2.5"); // numbers gpubench formats keep their sign
}

TEST_CASE("number columns of a CSV table keep their sign, text columns are neutralised",
          "[writers]") {
  text_table t;
  t.header = {"name", "change"};
  t.right = {false, true};
  t.rows = {{"-x", "-0.25"}};
  std::ostringstream os;
  write_csv_table(os, t);
  CHECK(os.str() == "name,change\n'-x,-0.25\n");
}

TEST_CASE("parameters print without float noise", "[writers]") {
  CHECK(param_text(nlohmann::json(static_cast<double>(123.7F))) == "123.7");
  CHECK(param_text(nlohmann::json(0.1)) == "0.1");
  CHECK(param_text(nlohmann::json(1.0 / 3.0)) == "0.3333333333333333");
  CHECK(param_text(nlohmann::json(45.0)) == "45");
  CHECK(param_text(nlohmann::json(10000000)) == "10000000");
  CHECK(param_text(nlohmann::json("f32")) == "f32");
  CHECK(params_text(nlohmann::json{{"a", 1}, {"b", static_cast<double>(0.9F)}}) == "a=1 b=0.9");
}

TEST_CASE("a text table wraps its wide column to fit the width", "[writers]") {
  text_table t;
  t.header = {"benchmark", "params", "verdict"};
  t.rows = {{"augment",
             std::string(30, 'x') + " batch=256 blur=7 channels=3 crop=128 degrees=45 "
                                    "height=256 impl=all interp=nearest mean=[0] out-dtype=f32",
             "same"}};
  t.wrap_column = 1;
  t.width = 60;
  std::ostringstream os;
  write_text_table(os, t);
  std::istringstream lines(os.str());
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    INFO(line);
    CHECK(line.size() <= 60);
  }
  CHECK(n > 2);                                               // the parameters took several lines
  CHECK(os.str().find("out-dtype=f32") != std::string::npos); // nothing is lost
}

TEST_CASE("markdown cells escape the column separator", "[writers]") {
  CHECK(markdown_text("a|b\nc") == "a\\|b c");
}

TEST_CASE("a column that says the same on every row can be found and left out", "[table]") {
  gpubench::text_table t;
  t.header = {"name", "device", "time"};
  t.right = {false, false, true};
  t.rows = {{"a", "H200", "1 us"}, {"b", "H200", "2 us"}};
  CHECK(gpubench::constant_column(t, 1));
  CHECK_FALSE(gpubench::constant_column(t, 0));
  gpubench::erase_column(t, 1);
  CHECK(t.header == std::vector<std::string>{"name", "time"});
  CHECK(t.right == std::vector<bool>{false, true});
  CHECK(t.rows[1] == std::vector<std::string>{"b", "2 us"});
  CHECK_FALSE(gpubench::constant_column(gpubench::text_table{}, 0)); // no rows: nothing to say
}

TEST_CASE("a table wider than its width folds, keyed by its first column", "[writers]") {
  text_table t;
  t.header = {"row", "alpha", "beta", "gamma"};
  t.right = {false, true, true, true};
  t.rows = {{"kernel", std::string(12, 'a'), std::string(12, 'b'), std::string(12, 'c')},
            {"h2d", "1", "2", "3"}};
  t.width = 40; // row (6) + 3 x 12 + 3 x 2 = 48 columns: two parts
  std::ostringstream os;
  write_text_table(os, t);
  CHECK(os.str() == "row            alpha          beta\n"
                    "kernel  aaaaaaaaaaaa  bbbbbbbbbbbb\n"
                    "h2d                1             2\n"
                    "\n"
                    "row            gamma\n"
                    "kernel  cccccccccccc\n"
                    "h2d                3\n");
  t.width = 48; // it fits: one part
  std::ostringstream whole;
  write_text_table(whole, t);
  CHECK(whole.str().find("\n\n") == std::string::npos);
  CHECK(whole.str().substr(0, whole.str().find('\n')) ==
        "row            alpha          beta         gamma");
}

TEST_CASE("text wraps to a width under its indents, and a status line is cut", "[writers]") {
  std::ostringstream os;
  write_wrapped(os, "one two three four five six", 12, "- ", "    ");
  CHECK(os.str() == "- one two\n    three\n    four\n    five six\n");
  CHECK(elided("0123456789", 10) == "0123456789");
  CHECK(elided("0123456789", 8) == "01234...");
  const output_width_scope narrow(60);
  CHECK(output_width() == 60);
  {
    const output_width_scope page(120);
    CHECK(output_width() == 120);
  }
  CHECK(output_width() == 60);
  set_output_width(10); // narrower than any table can use: 40
  CHECK(output_width() == 40);
  set_output_width(60);
}
