// Files gpubench creates beside an output, and the one-writer lock (docs/reliability.md, "Files
// that cannot be turned"): nothing planted in their place redirects a write.
#include "gpubench/core/errors.hpp"
#include "gpubench/results/journal.hpp"
#include "gpubench/results/output.hpp"
#include "gpubench/results/output_lock.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace gpubench;
namespace fs = std::filesystem;

namespace {

struct scratch {
  fs::path dir;
  scratch() {
    std::string templ = (fs::temp_directory_path() / "gpubench-lock-test-XXXXXX").string();
    REQUIRE(::mkdtemp(templ.data()) != nullptr);
    dir = templ;
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  ~scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  [[nodiscard]] std::string at(const std::string& name) const { return (dir / name).string(); }
};

void put(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs `what` in a child process; its exit status (0: no exception, 2: usage_error).
template <typename F>
int in_child(F what) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    int code = 0;
    try {
      what();
    } catch (const usage_error&) {
      code = 2;
    } catch (...) {
      code = 3;
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace

TEST_CASE("a journal planted as a link is refused and the file it names is untouched",
          "[output_lock]") {
  scratch s;
  const std::string out = s.at("out.json");
  const std::string victim = s.at("victim");
  put(victim, "precious");
  SECTION("a symlink") { fs::create_symlink(victim, journal_path(out)); }
  SECTION("a hard link") { fs::create_hard_link(victim, journal_path(out)); }
  SECTION("a dangling symlink") {
    fs::remove(victim);
    fs::create_symlink(victim, journal_path(out));
  }
  CHECK_THROWS_WITH(run_journal(out), Catch::Contains("the journal " + journal_path(out)) &&
                                          Catch::Contains("remove it or give another --output"));
  if (fs::exists(victim)) {
    CHECK(slurp(victim) == "precious");
  } else {
    CHECK_FALSE(fs::exists(fs::symlink_status(victim))); // nothing created through the link
  }
}

TEST_CASE("open_own_file creates a file, or opens one that is the user's alone", "[output_lock]") {
  scratch s;
  const std::string path = s.at("f");
  const int created = open_own_file(path, "journal");
  REQUIRE(created >= 0);
  ::close(created);
  const int again = open_own_file(path, "journal");
  REQUIRE(again >= 0);
  ::close(again);
  fs::create_hard_link(path, s.at("g"));
  CHECK_THROWS_WITH(open_own_file(path, "journal"), Catch::Contains("has 2 hard links"));
  fs::create_directory(s.at("d"));
  CHECK_THROWS_WITH(open_own_file(s.at("d"), "journal"), Catch::Contains("journal"));
  if (::geteuid() == 0) {
    const std::string foreign = s.at("foreign");
    put(foreign, "theirs");
    REQUIRE(::chown(foreign.c_str(), 65534, 65534) == 0);
    CHECK_THROWS_WITH(open_own_file(foreign, "journal"),
                      Catch::Contains("belongs to another user (uid 65534"));
  } else {
    WARN("not root: the other user's file is not tried");
  }
}

TEST_CASE("an output through a hard link or of another user is not replaced", "[output_lock]") {
  scratch s;
  const std::string out = s.at("out.json");
  put(out, "old");
  fs::create_hard_link(out, s.at("other-name.json"));
  CHECK_THROWS_WITH(check_output_path(out), Catch::Contains("has 2 hard links"));
  CHECK_THROWS_WITH(write_file_atomically(out, "new"), Catch::Contains("has 2 hard links"));
  CHECK(slurp(s.at("other-name.json")) == "old");
  fs::remove(s.at("other-name.json"));
  write_file_atomically(out, "new");
  CHECK(slurp(out) == "new");
  if (::geteuid() == 0) {
    REQUIRE(::chown(out.c_str(), 65534, 65534) == 0);
    CHECK_THROWS_WITH(write_file_atomically(out, "root's"),
                      Catch::Contains("belongs to another user"));
    CHECK(slurp(out) == "new");
  }
}

TEST_CASE("a symlink another user planted in a shared folder is not followed", "[output_lock]") {
  if (::geteuid() != 0) {
    WARN("not root: a second user cannot plant the link; skipped");
    return;
  }
  scratch s;
  const std::string shared = s.at("shared");
  fs::create_directory(shared);
  fs::permissions(shared, fs::perms::all | fs::perms::sticky_bit);
  const std::string victim = s.at("root-only");
  put(victim, "root's");
  const std::string out = shared + "/out.json";
  fs::create_symlink(victim, out);
  REQUIRE(::lchown(out.c_str(), 65534, 65534) == 0);
  CHECK_THROWS_WITH(check_output_path(out), Catch::Contains("symlink of another user (uid 65534)"));
  CHECK_THROWS_WITH(write_file_atomically(out, "x"), Catch::Contains("shared folder"));
  CHECK(slurp(victim) == "root's");
  // The folder's owner's link, or one in a folder that is not shared, is the user's choice.
  REQUIRE(::lchown(out.c_str(), 0, 0) == 0);
  write_file_atomically(out, "through the link");
  CHECK(slurp(victim) == "through the link");
}

TEST_CASE("one writer per output: a symlink and its target share one lock", "[output_lock]") {
  scratch s;
  const std::string out = s.at("out.json");
  const std::string link = s.at("link.json");
  put(out, "{}");
  fs::create_symlink("out.json", link);
  CHECK(output_lock_path(link) == output_lock_path(out));
  {
    const output_lock held(out, "--output");
    CHECK(fs::exists(held.path()));
    // Another process, through the link or the name, is refused; this one nests.
    CHECK(in_child([&] { output_lock other(link, "--output"); }) == 2);
    CHECK(in_child([&] { write_file_atomically(out, "theirs"); }) == 2);
    const output_lock nested(link, "--output");
    CHECK(nested.path().empty());
    write_file_atomically(link, "mine");
    CHECK(fs::exists(held.path())); // the nested write kept the lock
    CHECK(in_child([&] { output_lock other(out, "--output"); }) == 2);
  }
  CHECK(slurp(out) == "mine");
  CHECK_FALSE(fs::exists(output_lock_path(out))); // removed with the lock
  CHECK(in_child([&] { output_lock other(out, "--output"); }) == 0);
  // A lock file planted as a link is refused like a journal.
  fs::create_symlink(s.at("elsewhere"), output_lock_path(out));
  CHECK_THROWS_WITH(output_lock(out, "--output"), Catch::Contains("lock file"));
  CHECK_FALSE(fs::exists(s.at("elsewhere")));
}
