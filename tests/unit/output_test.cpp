#include "gpubench/engine/errors.hpp"
#include "gpubench/results/output.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

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

TEST_CASE("an existing output that is not a regular file is refused, never replaced", "[output]") {
  // As root the old probe-and-rename replaced /dev/null itself (issue 18.3).
  CHECK_THROWS_WITH(check_output_path("/dev/null"),
                    Catch::Contains("is a character device, not a regular file"));
  CHECK_THROWS_WITH(write_file_atomically("/dev/null", "x"),
                    Catch::Contains("is a character device"));
  CHECK(fs::is_character_file("/dev/null"));
  CHECK_NOTHROW(check_output_path("-")); // stdout
  CHECK_THROWS_WITH(check_output_path(""), Catch::Contains("the path is empty"));
}

TEST_CASE("a new output file honours the umask, an existing one keeps its mode", "[output]") {
  const fs::path dir = fs::temp_directory_path() / "gpubench-output-mode-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto file = (dir / "r.json").string();
  const mode_t old_mask = ::umask(077);
  write_file_atomically(file, "private");
  ::umask(old_mask);
  CHECK((fs::status(file).permissions() & fs::perms::mask) ==
        (fs::perms::owner_read | fs::perms::owner_write));
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  write_file_atomically(file, "again");
  CHECK((fs::status(file).permissions() & fs::perms::mask) ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  fs::remove_all(dir);
}

TEST_CASE("a symlink to a regular file is written through and stays a link", "[output]") {
  const fs::path dir = fs::temp_directory_path() / "gpubench-output-link-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  write_file_atomically((dir / "target.json").string(), "old");
  fs::create_symlink(dir / "target.json", dir / "link.json");
  write_file_atomically((dir / "link.json").string(), "new");
  CHECK(fs::is_symlink(dir / "link.json"));
  CHECK(slurp(dir / "target.json") == "new");
  fs::remove_all(dir);
}
