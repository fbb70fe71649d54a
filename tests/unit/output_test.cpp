#include "gpubench/core/errors.hpp"
#include "gpubench/results/output.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

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
  // As root the old probe-and-rename replaced /dev/null itself.
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

namespace {
/// A fresh, empty folder under the temporary directory, removed by its destructor.
struct scratch_dir {
  explicit scratch_dir(const char* name) : path(fs::temp_directory_path() / name) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  [[nodiscard]] std::string at(const char* name) const { return (path / name).string(); }
  fs::path path;
};

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(dir), fs::directory_iterator{}));
}
} // namespace

TEST_CASE("a dangling symlink is written through: its target is created, the link stays",
          "[output]") {
  // Audit finding 12: the link itself used to be replaced by a regular file.
  const scratch_dir dir("gpubench-output-dangling-test");
  fs::create_directories(dir.path / "results");
  fs::create_symlink("results/new.json", dir.path / "link.json");
  CHECK_NOTHROW(check_output_path(dir.at("link.json")));
  write_file_atomically(dir.at("link.json"), "through");
  CHECK(fs::is_symlink(dir.path / "link.json"));
  CHECK(slurp(dir.path / "results" / "new.json") == "through");
  CHECK(entries(dir.path / "results") == 1); // no temporary left beside the target

  // A chain of links, the last one dangling, relative to each link's own folder.
  fs::create_symlink("../results/chain-end.json", dir.path / "results" / "chain-end-link");
  fs::create_symlink("results/chain-end-link", dir.path / "chain.json");
  write_file_atomically(dir.at("chain.json"), "chained");
  CHECK(fs::is_symlink(dir.path / "chain.json"));
  CHECK(fs::is_symlink(dir.path / "results" / "chain-end-link"));
  CHECK(slurp(dir.path / "results" / "chain-end.json") == "chained");

  // A dangling link into a folder that does not exist: refused as a missing folder.
  fs::create_symlink("nowhere/x.json", dir.path / "lost.json");
  CHECK_THROWS_WITH(check_output_path(dir.at("lost.json")), Catch::Contains("does not exist"));
}

TEST_CASE("a symlink loop as output is refused and left alone", "[output]") {
  const scratch_dir dir("gpubench-output-loop-test");
  fs::create_symlink("loop2", dir.path / "loop1");
  fs::create_symlink("loop1", dir.path / "loop2");
  CHECK_THROWS_WITH(check_output_path(dir.at("loop1")), Catch::Contains("is a symlink loop"));
  CHECK_THROWS_WITH(check_output_path(dir.at("loop1"), "--junit"),
                    Catch::StartsWith("--junit ") && Catch::Contains("symlink loop"));
  CHECK_THROWS_AS(write_file_atomically(dir.at("loop1"), "x"), usage_error);
  CHECK(fs::is_symlink(dir.path / "loop1"));
  CHECK(fs::is_symlink(dir.path / "loop2"));
  CHECK(entries(dir.path) == 2);
}

TEST_CASE("messages about an output path name the option that gave it", "[output]") {
  // Audit finding 6: --junit errors said --output.
  CHECK_THROWS_WITH(check_output_path("/no/such/folder/j.xml", "--junit"),
                    Catch::StartsWith("--junit /no/such/folder/j.xml: the folder"));
  CHECK_THROWS_WITH(check_output_path(fs::temp_directory_path().string(), "--junit"),
                    Catch::StartsWith("--junit ") && Catch::Contains("is a folder"));
  CHECK_THROWS_WITH(check_output_path("", "--junit"),
                    Catch::StartsWith("--junit: the path is empty") &&
                        !Catch::Contains("- for stdout"));
  CHECK_THROWS_WITH(check_output_path(""), Catch::Contains("or - for stdout"));
}

TEST_CASE("same_file sees through symlinks and hard links, and compares new paths", "[output]") {
  const scratch_dir dir("gpubench-output-same-test");
  write_file_atomically(dir.at("a.json"), "a");
  write_file_atomically(dir.at("b.json"), "b");
  fs::create_symlink("a.json", dir.path / "link.json");
  fs::create_hard_link(dir.path / "a.json", dir.path / "hard.json");
  CHECK(same_file(dir.at("a.json"), dir.at("a.json")));
  CHECK(same_file(dir.at("a.json"), dir.at("link.json")));
  CHECK(same_file(dir.at("hard.json"), dir.at("a.json")));
  CHECK(same_file(dir.at("a.json"), (dir.path / "." / "a.json").string()));
  CHECK_FALSE(same_file(dir.at("a.json"), dir.at("b.json")));
  // Neither exists: the same file once written, or not.
  CHECK(same_file(dir.at("new.xml"), (dir.path / "x" / ".." / "new.xml").string()));
  CHECK_FALSE(same_file(dir.at("new.xml"), dir.at("other.xml")));
  // A dangling link and the file it would create.
  fs::create_symlink("target.json", dir.path / "dangling.json");
  CHECK(same_file(dir.at("dangling.json"), dir.at("target.json")));
}

TEST_CASE("an output that is one of the command's inputs is refused, naming both", "[output]") {
  // Audit finding 2: `compare a b --output b` replaced the input b.
  const scratch_dir dir("gpubench-output-input-test");
  write_file_atomically(dir.at("base.json"), "{}");
  write_file_atomically(dir.at("new.json"), "{}");
  fs::create_symlink("new.json", dir.path / "link.json");
  const std::vector<named_input> inputs{{"BASE result file", dir.at("base.json")},
                                        {"NEW result file", dir.at("new.json")}};
  CHECK_THROWS_WITH(
      check_output_is_not_an_input(dir.at("new.json"), "--output", inputs),
      Catch::StartsWith("--output " + dir.at("new.json")) &&
          Catch::Contains("the same file as the NEW result file '" + dir.at("new.json") + "'"));
  CHECK_THROWS_WITH(check_output_is_not_an_input(dir.at("link.json"), "--junit", inputs),
                    Catch::StartsWith("--junit ") && Catch::Contains("NEW result file"));
  CHECK_NOTHROW(check_output_is_not_an_input(dir.at("out.json"), "--output", inputs));
  CHECK_NOTHROW(check_output_is_not_an_input("-", "--output", inputs));
  CHECK_NOTHROW(check_output_is_not_an_input("", "--output", inputs));
  CHECK(slurp(dir.path / "new.json") == "{}");
}

TEST_CASE("first_duplicate finds a file given twice, by path or through a link", "[output]") {
  // Audit finding 4: the same file twice on one side of compare counted as two runs.
  const scratch_dir dir("gpubench-output-dup-test");
  write_file_atomically(dir.at("a.json"), "a");
  write_file_atomically(dir.at("b.json"), "b");
  fs::create_symlink("b.json", dir.path / "link.json");
  CHECK_FALSE(first_duplicate({dir.at("a.json"), dir.at("b.json")}));
  CHECK_FALSE(first_duplicate({dir.at("a.json")}));
  CHECK_FALSE(first_duplicate({}));
  const auto same_path = first_duplicate({dir.at("a.json"), dir.at("b.json"), dir.at("a.json")});
  REQUIRE(same_path);
  CHECK(*same_path == std::make_pair(std::size_t{0}, std::size_t{2}));
  const auto linked = first_duplicate({dir.at("a.json"), dir.at("b.json"), dir.at("link.json")});
  REQUIRE(linked);
  CHECK(*linked == std::make_pair(std::size_t{1}, std::size_t{2}));
  // Missing files are compared by path (their loading fails later anyway).
  CHECK(first_duplicate({dir.at("gone.json"), dir.at("gone.json")}));
}

TEST_CASE("printable_message clips echoed arguments and escapes control characters", "[output]") {
  // Audit finding 8: a 120 KB argument gave a 120 KB message, and ESC reached the terminal.
  const std::string plain = "--format: 'xml' is not one of table, json, csv, md";
  CHECK(printable_message(plain) == plain);
  const std::string huge(120000, 'a');
  const std::string clipped =
      printable_message("The following argument was not expected: --" + huge);
  CHECK(clipped.size() < 300);
  CHECK_THAT(clipped, Catch::StartsWith("The following argument was not expected: --aaa") &&
                          Catch::Contains("..."));
  CHECK(printable_message("--format: 'x\x1b[2Jy\rz' is bad") ==
        "--format: 'x\\x1b[2Jy\\rz' is bad");
  // Lines stay lines (CLI11's "Run with --help" line, multi-line hints), each one bounded.
  CHECK(printable_message("first\nsecond\n") == "first\nsecond\n");
  std::string many_words;
  for (int i = 0; i < 20000; ++i) many_words += "word ";
  CHECK(printable_message(many_words).size() <= 1000);
}

TEST_CASE("writes through checked_fd_buf are checked", "[output]") {
  // Audit finding 5: std::cout's failed writes (to /dev/full, a closed pipe) went unreported.
  if (!fs::exists("/dev/full")) return;
  const int full = ::open("/dev/full", O_WRONLY);
  REQUIRE(full >= 0);
  {
    checked_fd_buf buf(full);
    std::ostream os(&buf);
    os << std::string(100000, 'x') << "\n";
    os.flush();
    CHECK_FALSE(os.good());
    CHECK(buf.take_error() == ENOSPC);
    CHECK(buf.take_error() == 0); // reported once
  }
  ::close(full);

  int fds[2] = {-1, -1};
  REQUIRE(::pipe(fds) == 0);
  {
    checked_fd_buf buf(fds[1]);
    std::ostream os(&buf);
    os << "hello " << 42 << '\n';
    os.flush();
    CHECK(os.good());
    CHECK(buf.take_error() == 0);
  }
  ::close(fds[1]);
  char got[32] = {};
  const ssize_t n = ::read(fds[0], got, sizeof(got));
  ::close(fds[0]);
  CHECK(std::string(got, n > 0 ? static_cast<std::size_t>(n) : 0) == "hello 42\n");
}
