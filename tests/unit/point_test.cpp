// The typed view of a planned point (engine/point.hpp): every parameter kind read as its type,
// the table's default where the point lacks a key, and a programming error for a key the table
// lacks or a read as the wrong type.
#include "gpubench/engine/point.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

using namespace gpubench;
using nlohmann::json;

namespace {

enum class colour { red, green, blue };
constexpr std::array<word_choice<colour>, 3> colour_words{
    {{"red", colour::red}, {"green", colour::green}, {"blue", colour::blue}}};

const std::vector<param_spec>& table() {
  using k = param_kind;
  static const std::vector<param_spec> t{
      {.name = "n",
       .default_value = "1K",
       .sweepable = true,
       .kind = k::size,
       .min = 1,
       .max = 1e12},
      {.name = "rate", .default_value = "0.5", .kind = k::number, .min = 0, .max = 1},
      {.name = "weights", .default_value = "1,2", .kind = k::numbers},
      {.name = "colour",
       .default_value = "green",
       .kind = k::word,
       .choices = word_names<colour>(colour_words)},
      {.name = "palette",
       .default_value = "all",
       .kind = k::words,
       .choices = word_names<colour>(colour_words)},
      {.name = "grid",
       .default_value = "vectors",
       .kind = k::word_or_size,
       .min = 1,
       .max = 1e6,
       .choices = {"vectors", "device"}},
      {.name = "range", .default_value = "0.1:2", .kind = k::text},
      {.name = "input", .kind = k::path},
  };
  return t;
}

/// A point as the planner writes it: every value parsed from its text.
json planned(const std::vector<std::pair<std::string, std::string>>& given) {
  json p = json::object();
  for (const auto& [key, text] : given) p[key] = parse_param(spec_of(table(), key), text).front();
  return p;
}

} // namespace

TEST_CASE("a point's values are read as their types", "[point]") {
  const json p = planned({{"n", "2^33"},
                          {"rate", "0.25"},
                          {"weights", "3,4.5"},
                          {"colour", "BLUE"},
                          {"palette", "blue,red"},
                          {"grid", "1024"},
                          {"range", "1:3"},
                          {"input", "pictures"}});
  const point_view v(table(), p);
  CHECK(v.get<std::int64_t>("n") == (std::int64_t{1} << 33));
  CHECK(v.get<std::size_t>("n") == (std::size_t{1} << 33));
  CHECK(v.get<double>("n") == 8589934592.0);
  CHECK(v.get<double>("rate") == 0.25);
  CHECK(v.numbers("weights") == std::vector<double>{3, 4.5});
  CHECK(v.word<colour>("colour", colour_words) == colour::blue);
  // A set of words comes back in the table's order, whatever order it was given in.
  CHECK(v.words<colour>("palette", colour_words) == std::vector<colour>{colour::red, colour::blue});
  CHECK(std::get<std::int64_t>(v.word_or_size("grid")) == 1024);
  CHECK(v.text("range") == "1:3");
  CHECK(v.text("input") == "pictures");
  CHECK(v.text("colour") == "blue");
  CHECK(v.values() == p);
}

TEST_CASE("a key the point lacks reads the table's default; an unset optional one is empty",
          "[point]") {
  const json p = json::object();
  const point_view v(table(), p);
  CHECK_FALSE(v.has("n"));
  CHECK(v.get<int>("n") == 1000);
  CHECK(v.get<float>("rate") == 0.5F);
  CHECK(v.numbers("weights") == std::vector<double>{1, 2});
  CHECK(v.word<colour>("colour", colour_words) == colour::green);
  CHECK(v.words<colour>("palette", colour_words) ==
        std::vector<colour>{colour::red, colour::green, colour::blue});
  CHECK(std::get<std::string>(v.word_or_size("grid")) == "vectors");
  CHECK(v.text("input").empty());
  CHECK(v.device() == -1);
  const json on_gpu{{"device", 3}};
  CHECK(point_view(table(), on_gpu).device() == 3);
}

TEST_CASE("a key the table lacks, or a read as the wrong type, is a programming error", "[point]") {
  const json p = planned({{"n", "5000000000"}, {"colour", "red"}, {"grid", "device"}});
  const point_view v(table(), p);
  CHECK_THROWS_AS(v.get<int>("no-such-key"), std::logic_error);
  CHECK_THROWS_WITH(v.has("no-such-key"), Catch::Contains("no-such-key"));
  // 5e9 does not fit an int, nor a negative type's range check.
  CHECK_THROWS_WITH(v.get<int>("n"), Catch::Contains("n") && Catch::Contains("5000000000"));
  CHECK(v.get<std::int64_t>("n") == 5000000000);
  CHECK_THROWS_AS(v.get<double>("colour"), std::logic_error);
  CHECK_THROWS_AS(v.text("n"), std::logic_error);
  CHECK_THROWS_AS(v.numbers("rate"), std::logic_error);
  CHECK_THROWS_AS(v.word<colour>("palette", colour_words), std::logic_error);
  CHECK_THROWS_AS(v.words<colour>("colour", colour_words), std::logic_error);
  CHECK_THROWS_AS(v.word_or_size("colour"), std::logic_error);
  // A word the driver's list does not know (the table and the driver disagree).
  constexpr std::array<word_choice<colour>, 1> only_blue{{{"blue", colour::blue}}};
  CHECK_THROWS_WITH(v.word<colour>("colour", only_blue), Catch::Contains("colour"));
  // A number where the table says size, e.g. a hand-edited point.
  const json edited{{"n", "12"}};
  CHECK_THROWS_AS(point_view(table(), edited).get<int>("n"), std::logic_error);
  const json fractional{{"n", 1.5}};
  CHECK_THROWS_AS(point_view(table(), fractional).get<int>("n"), std::logic_error);
  const json negative{{"n", -1}};
  CHECK_THROWS_AS(point_view(table(), negative).get<unsigned>("n"), std::logic_error);
}
