#include "gpubench/errors.hpp"
#include "gpubench/output.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace gpubench;
namespace fs = std::filesystem;

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
} // namespace

TEST_CASE("atomic writes replace the file and leave no temporary behind", "[output]") {
  const fs::path dir = fs::temp_directory_path() / "gpubench-output-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto file = (dir / "r.json").string();
  write_file_atomically(file, "first");
  write_file_atomically(file, "second");
  CHECK(slurp(file) == "second");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 1);
  fs::remove_all(dir);
}

TEST_CASE("output paths are checked before anything runs", "[output]") {
  CHECK_THROWS_WITH(check_output_path("/no/such/folder/r.json"), Catch::Contains("does not exist"));
  CHECK_THROWS_WITH(check_output_path(fs::temp_directory_path().string()),
                    Catch::Contains("is a folder"));
  CHECK_THROWS_AS(check_output_path(""), usage_error);
  CHECK_NOTHROW(check_output_path((fs::temp_directory_path() / "x.json").string()));
}
