// `report`/`compare` --format html: the page is drawn by the Python module gpubench.html_report
// (matplotlib's charts, docs/architecture.md "The HTML report"); this file finds the module and
// an interpreter, runs it on files already read and checked, and returns the page.
#include "html_page.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/engine/environment.hpp"
#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/results/output.hpp"

#include <fmt/format.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <spawn.h>
#include <sstream>
#include <string>
#include <vector>

namespace gpubench::app {
namespace {

namespace fs = std::filesystem;

const char* const module_file = "gpubench/html_report.py";

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string env_or_empty(const char* name) {
  const char* v = process_environment().find(name);
  return v == nullptr ? std::string() : std::string(v);
}

fs::path executable_path() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : self;
}

/// The folder holding gpubench/html_report.py: $GPUBENCH_PYTHON_DIR, else beside the executable
/// as installed (PREFIX/share/gpubench/python for the .deb and the build tree, the wheel's
/// site-packages for the wheel).
fs::path module_root() {
  const std::string forced = env_or_empty("GPUBENCH_PYTHON_DIR");
  std::vector<fs::path> tried;
  if (!forced.empty()) {
    tried.emplace_back(forced);
  } else {
    const fs::path bin = executable_path().parent_path();
    tried.push_back(bin.parent_path() / "share" / "gpubench" / "python");
    tried.push_back(bin.parent_path().parent_path()); // the wheel: site-packages/gpubench/bin
  }
  for (const auto& dir : tried) {
    std::error_code ec;
    if (fs::is_regular_file(dir / module_file, ec)) return dir;
  }
  std::string where;
  for (const auto& dir : tried) where += (where.empty() ? "" : ", ") + (dir / module_file).string();
  throw usage_error(fmt::format(
      "--format html: the report's Python module is missing (looked for {}); reinstall gpubench, "
      "or set GPUBENCH_PYTHON_DIR to the folder that holds gpubench/html_report.py",
      clip(where, 400)));
}

/// $GPUBENCH_PYTHON, else Debian's /usr/bin/python3 (where python3-matplotlib installs), else
/// python3 on PATH.
std::string interpreter() {
  std::string forced = env_or_empty("GPUBENCH_PYTHON");
  if (!forced.empty()) return forced;
  if (::access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
  return "python3";
}

/// A temporary folder, removed with everything in it when this goes out of scope.
class temp_dir {
public:
  temp_dir() {
    std::string base = env_or_empty("TMPDIR");
    if (base.empty()) base = "/tmp";
    std::string templ = base + "/gpubench-html-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr)
      throw usage_error(fmt::format("--format html: cannot create a temporary folder in {}: {}",
                                    clip(base, 200), std::strerror(errno)));
    path_ = templ;
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  [[nodiscard]] const fs::path& path() const { return path_; }

private:
  fs::path path_;
};

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out)
    throw usage_error(
        fmt::format("--format html: cannot write the temporary file {}", clip(path.string(), 200)));
}

/// Runs `args` (args[0] looked up on PATH) with PYTHONPATH led by `root`; its exit status, or
/// nullopt when it could not be started (errno kept in `spawn_error`).
std::optional<int> run_child(const std::vector<std::string>& args, const fs::path& root,
                             int& spawn_error) {
  std::vector<std::string> env_text;
  for (const auto& [name, value] : process_environment().all)
    if (name != "PYTHONPATH") env_text.push_back(std::string(name).append("=").append(value));
  const std::string old_path = env_or_empty("PYTHONPATH");
  env_text.push_back("PYTHONPATH=" + root.string() + (old_path.empty() ? "" : ":" + old_path));
  std::vector<char*> envp;
  envp.reserve(env_text.size() + 1);
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_text = args;
  std::vector<char*> argv;
  argv.reserve(argv_text.size() + 1);
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  spawn_error = ::posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data());
  if (spawn_error != 0) return std::nullopt;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      spawn_error = errno;
      return std::nullopt;
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

std::optional<html_plan> html_output(const output_choice& choice) {
  const bool by_extension =
      choice.output_format.empty() &&
      (ends_with(choice.output_path, ".html") || ends_with(choice.output_path, ".htm"));
  if (choice.format != "html" && choice.output_format != "html" && !by_extension)
    return std::nullopt;
  html_plan plan;
  plan.rest = choice;
  plan.path = choice.output_path;
  if (choice.format == "html") {
    if (choice.output_path.empty())
      throw usage_error("--format html writes one page: give --output FILE.html (or --output - "
                        "for stdout)");
    if (!choice.output_format.empty() && choice.output_format != "html")
      throw usage_error(fmt::format("--format html: --output-format '{}' asks for another format "
                                    "of the same file; leave it out",
                                    clip(choice.output_format)));
    plan.text_to_stdout = false;
    plan.rest.format = "table";
  } else if (choice.output_path.empty()) {
    throw usage_error("--output-format html: give --output FILE (the page is written there)");
  }
  if (plan.path == "-") plan.text_to_stdout = false;
  // `rest` keeps the path (resolve_output_options checks it again) but not "html" as a format.
  plan.rest.output_format.clear();
  check_output_path(plan.path);
  return plan;
}

std::string render_html_page(const html_job& job) {
  const fs::path root = module_root();
  const temp_dir tmp;
  const fs::path page = tmp.path() / "page.html";
  const std::string python = interpreter();
  std::vector<std::string> args{python,   "-m",    "gpubench.html_report", "--kind",
                                job.kind, "--out", page.string()};
  if (!job.terminal.empty()) {
    write_text(tmp.path() / "terminal.txt", job.terminal);
    args.insert(args.end(), {"--terminal", (tmp.path() / "terminal.txt").string()});
  }
  if (!job.comparison_json.empty()) {
    write_text(tmp.path() / "comparison.json", job.comparison_json);
    args.insert(args.end(), {"--comparison", (tmp.path() / "comparison.json").string()});
  }
  if (!job.history_json.empty()) {
    write_text(tmp.path() / "history.json", job.history_json);
    args.insert(args.end(), {"--history", (tmp.path() / "history.json").string()});
  }
  if (!job.base.empty()) {
    args.emplace_back("--base");
    args.insert(args.end(), job.base.begin(), job.base.end());
  }
  if (!job.fresh.empty()) {
    args.emplace_back("--new");
    args.insert(args.end(), job.fresh.begin(), job.fresh.end());
  }
  if (!job.files.empty()) {
    args.emplace_back("--");
    args.insert(args.end(), job.files.begin(), job.files.end());
  }
  int spawn_error = 0;
  const auto status = run_child(args, root, spawn_error);
  if (!status)
    throw usage_error(fmt::format(
        "--format html needs Python 3 with matplotlib: '{}' could not be started ({}). Install "
        "python3 and python3-matplotlib (Debian/Ubuntu), or set GPUBENCH_PYTHON to an "
        "interpreter that has matplotlib",
        clip(python, 200), std::strerror(spawn_error)));
  if (*status != 0)
    throw usage_error(fmt::format("--format html: the page was not written ({} -m "
                                  "gpubench.html_report exited with status {}; its message is "
                                  "above)",
                                  clip(python, 200), *status));
  return read_all(page);
}

} // namespace gpubench::app
