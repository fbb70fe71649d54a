#include "gpubench/results/journal.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/results/output_lock.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace gpubench {

using nlohmann::json;

namespace {

constexpr int journal_format = 1;
constexpr const char* header_key = "gpubench_journal";

/// FNV-1a (64 bits) of the line's JSON without its "check": not a defence against forgery, a way
/// to tell a line changed by hand (or by a disk) from one gpubench wrote. nlohmann's dump of a
/// parsed line is the text it was parsed from (sorted keys, round-trip numbers), so the check can
/// be recomputed on reading.
std::string checksum(const json& j) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : j.dump()) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

std::string sealed_line(json j) {
  j["check"] = checksum(j);
  return j.dump() + "\n";
}

/// CPU time of the whole process (every thread), in seconds: what a point cost, apart from waiting
/// (for the disk, for a core shared with other processes).
double process_cpu_seconds() {
  timespec ts{};
  if (::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

json identity_json(const journal_identity& id) {
  json j{{"points", id.points}, {"options", id.options}, {"version", id.version}, {"git", id.git}};
  if (!id.source_hash.empty()) j["source_sha256"] = id.source_hash;
  if (!id.cuda_driver.empty() || !id.gpu_uuids.empty()) {
    j["cuda_driver"] = id.cuda_driver;
    j["gpu_uuids"] = id.gpu_uuids;
  }
  return j;
}

/// The report around one line's content, so that it is validated by report_from_json, the rules
/// every result file follows.
run_report validated(const json& meta, const json& devices, const json& results) {
  return report_from_json(json{{"schema", std::string(schema_id)},
                               {"meta", meta},
                               {"devices", devices},
                               {"results", results}});
}

[[noreturn]] void bad_line(std::string_view name, std::size_t line, std::string_view what) {
  throw usage_error(fmt::format("{}: line {}: {}", clip(name, 200), line, what));
}

const json& field(const json& j, const char* key, json::value_t type, std::string_view name,
                  std::size_t line) {
  const auto it = j.find(key);
  const bool numeric = type == json::value_t::number_unsigned;
  if (it == j.end() || (numeric ? !it->is_number_unsigned() : it->type() != type))
    bad_line(name, line,
             fmt::format("\"{}\" is missing or not {}", key,
                         numeric ? "a whole number"
                                 : (type == json::value_t::array    ? "an array"
                                    : type == json::value_t::object ? "an object"
                                                                    : "a string")));
  return *it;
}

/// Parses one complete line and checks its checksum; returns it without "check".
json sealed_json(std::string_view text, std::string_view name, std::size_t line) {
  json j = parse_untrusted_json(text, fmt::format("{}: line {}", clip(name, 200), line));
  if (!j.is_object()) bad_line(name, line, "is not a JSON object");
  const auto check = j.find("check");
  if (check == j.end() || !check->is_string())
    bad_line(name, line, "has no \"check\" (every line gpubench writes carries one)");
  const std::string want = check->get<std::string>();
  j.erase("check");
  if (checksum(j) != want)
    bad_line(name, line,
             "its check does not match its content: the line was changed after gpubench wrote it");
  return j;
}

journal_identity identity_from_json(const json& j, std::string_view name) {
  journal_identity id;
  id.points = field(j, "points", json::value_t::array, name, 1);
  id.options = field(j, "options", json::value_t::object, name, 1);
  id.version = field(j, "version", json::value_t::string, name, 1).get<std::string>();
  id.git = field(j, "git", json::value_t::string, name, 1).get<std::string>();
  if (j.contains("source_sha256"))
    id.source_hash = field(j, "source_sha256", json::value_t::string, name, 1).get<std::string>();
  if (j.contains("cuda_driver")) {
    id.cuda_driver = field(j, "cuda_driver", json::value_t::string, name, 1).get<std::string>();
    for (const auto& u : field(j, "gpu_uuids", json::value_t::array, name, 1)) {
      if (!u.is_string()) bad_line(name, 1, "\"gpu_uuids\" must hold strings");
      id.gpu_uuids.push_back(u.get<std::string>());
    }
  }
  return id;
}

std::string point_text(const json& p) {
  std::string s = p.value("benchmark", std::string("?"));
  if (const auto params = p.find("params"); params != p.end() && params->is_object())
    for (const auto& [k, v] : params->items())
      s += fmt::format(" {}={}", k, v.is_string() ? v.get<std::string>() : v.dump());
  return clip(s, 120);
}

/// The first parameter (or "device") in which result `r` is not the plan's point `planned`,
/// "" when it is that point.
std::string planned_key_differing(const result& r, const json& planned) {
  json want = json::object();
  if (const auto p = planned.find("params"); p != planned.end() && p->is_object()) want = *p;
  int device = -1;
  if (const auto d = want.find("device"); d != want.end()) {
    device = d->is_number_integer() ? d->get<int>() : -2;
    want.erase(d);
  }
  if (r.device != device) return "device";
  for (const auto& [key, value] : want.items()) {
    const auto it = r.params.find(key);
    if (it == r.params.end() || *it != value) return key;
  }
  for (const auto& [key, value] : r.params.items())
    if (!want.contains(key)) return key;
  return "";
}

} // namespace

std::string identity_difference(const journal_identity& was, const journal_identity& now) {
  if (was.version != now.version || was.git != now.git)
    return fmt::format("the build differs: the journal's run is gpubench {} ({}), this one {} ({})",
                       clip(was.version), clip(was.git), now.version, now.git);
  if (was.source_hash != now.source_hash)
    return fmt::format(
        "the build differs: the journal's run was built from sources {}, this one "
        "from {}",
        was.source_hash.empty() ? std::string("not recorded") : clip(was.source_hash.substr(0, 12)),
        now.source_hash.empty() ? std::string("not recorded") : now.source_hash.substr(0, 12));
  if (was.gpu_uuids.empty() != now.gpu_uuids.empty())
    return was.gpu_uuids.empty() ? "the journal's run measured on the CPU only, this one on a GPU"
                                 : "the journal's run measured on a GPU, this one on the CPU only";
  if (was.gpu_uuids != now.gpu_uuids) {
    const auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& u : v) s += (s.empty() ? "" : ", ") + clip(u);
      return s;
    };
    return fmt::format("the GPU differs: the journal's run measured on {}, this one on {}",
                       list(was.gpu_uuids), list(now.gpu_uuids));
  }
  if (was.cuda_driver != now.cuda_driver)
    return fmt::format("the CUDA driver differs: {} in the journal, {} now", clip(was.cuda_driver),
                       now.cuda_driver);
  for (const auto& [key, value] : now.options.items()) {
    const auto it = was.options.find(key);
    if (it == was.options.end() || *it != value)
      return fmt::format("the option {} differs: {} in the journal, {} now", key,
                         it == was.options.end() ? "absent" : preview(*it), preview(value));
  }
  for (const auto& [key, value] : was.options.items())
    if (!now.options.contains(key))
      return fmt::format("the option {} differs: {} in the journal, absent now", clip(key),
                         preview(value));
  const std::size_t common = std::min(was.points.size(), now.points.size());
  for (std::size_t i = 0; i < common; ++i)
    if (was.points[i] != now.points[i])
      return fmt::format("the points differ: point {} is {} in the journal, {} now", i + 1,
                         point_text(was.points[i]), point_text(now.points[i]));
  if (was.points.size() != now.points.size())
    return fmt::format("the points differ: the journal's run has {} points, this one {}",
                       was.points.size(), now.points.size());
  return "";
}

bool looks_like_journal(std::string_view text) {
  const std::string_view first = text.substr(0, text.find('\n'));
  if (first.find(header_key) == std::string_view::npos) return false;
  const json j = json::parse(first, nullptr, false);
  return j.is_object() && j.contains(header_key);
}

journal_contents parse_journal(std::string_view text, std::string_view name) {
  journal_contents c;
  json meta;
  std::map<std::size_t, std::size_t> line_of; // plan index -> line holding it
  std::size_t start = 0;
  std::size_t line = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      c.torn_tail = true; // killed while writing this line: it never counted
      break;
    }
    ++line;
    const json j = sealed_json(text.substr(start, end - start), name, line);
    if (line == 1) {
      const auto format = j.find(header_key);
      if (format == j.end() || *format != journal_format)
        bad_line(name, 1,
                 fmt::format("is not a gpubench journal header (\"{}\": {} expected)", header_key,
                             journal_format));
      c.identity = identity_from_json(field(j, "identity", json::value_t::object, name, 1), name);
      meta = field(j, "meta", json::value_t::object, name, 1);
      try {
        c.meta = validated(meta, json::array(), json::array()).meta;
      } catch (const usage_error& e) {
        bad_line(name, 1, e.what());
      }
      c.pid = field(j, "pid", json::value_t::number_unsigned, name, 1).get<long>();
      c.planned = field(j, "planned", json::value_t::number_unsigned, name, 1).get<std::size_t>();
      if (c.planned != c.identity.points.size())
        bad_line(name, 1,
                 fmt::format("\"planned\" is {} but the identity lists {} points", c.planned,
                             c.identity.points.size()));
      c.has_header = true;
    } else {
      const auto index =
          field(j, "point", json::value_t::number_unsigned, name, line).get<std::size_t>();
      if (index >= c.planned)
        bad_line(name, line,
                 fmt::format("point {} is beyond the plan's {} points", index, c.planned));
      if (const auto seen = line_of.find(index); seen != line_of.end())
        bad_line(name, line, fmt::format("point {} is already on line {}", index, seen->second));
      const json no_devices = json::array();
      const auto devices = j.find("devices");
      const json& device_list = devices == j.end() ? no_devices : *devices;
      run_report one;
      try {
        one = validated(meta, device_list,
                        json::array({field(j, "result", json::value_t::object, name, line)}));
      } catch (const usage_error& e) {
        bad_line(name, line, e.what());
      }
      const json& planned = c.identity.points[index];
      if (one.results.front().benchmark != planned.value("benchmark", ""))
        bad_line(name, line,
                 fmt::format("point {} is a {} result, but the plan's point is {}", index,
                             clip(one.results.front().benchmark), point_text(planned)));
      if (const std::string key = planned_key_differing(one.results.front(), planned); !key.empty())
        bad_line(name, line,
                 fmt::format("point {}'s parameter {} is not the plan's ({}): the line was not "
                             "written for this plan",
                             index, clip(key), point_text(planned)));
      if (devices != j.end()) c.devices = std::move(one.devices);
      c.points.emplace(index, std::move(one.results.front()));
      line_of.emplace(index, line);
    }
    start = end + 1;
    c.valid_bytes = start;
  }
  return c;
}

run_report journal_report(const journal_contents& j) {
  run_report r;
  r.meta = j.meta;
  r.meta.incomplete = true;
  r.meta.incomplete_reason =
      fmt::format("read from the journal of a run that has not finished: {} of {} points",
                  j.points.size(), j.planned);
  r.devices = j.devices;
  for (const auto& [index, res] : j.points) r.results.push_back(res);
  return r;
}

std::string journal_path(const std::string& output_path) { return output_path + ".journal"; }

run_journal::run_journal(const std::string& output_path) : path_(journal_path(output_path)) {
  // Never through a link: a journal planted as a symlink or a hard link would make this run
  // overwrite the file it names (docs/reliability.md, "Files that cannot be turned").
  fd_ = open_locked_own_file(path_, "journal", [&](long pid) {
    return fmt::format("--output {}: another process{} is writing it (it holds the lock on {}); "
                       "wait for it to end or give another --output",
                       clip(output_path, 200), pid >= 0 ? fmt::format(" (pid {})", pid) : "",
                       clip(path_, 200));
  });
  struct stat st {};
  ::fstat(fd_, &st);
  if (static_cast<std::uint64_t>(st.st_size) > max_untrusted_file_bytes) {
    ::close(fd_);
    fd_ = -1;
    throw usage_error(fmt::format("the journal {} is larger than {} MiB; remove it",
                                  clip(path_, 200), max_untrusted_file_bytes >> 20U));
  }
  text_.resize(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < text_.size()) {
    const ssize_t n =
        ::pread(fd_, text_.data() + done, text_.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd_);
      fd_ = -1;
      throw usage_error(
          fmt::format("cannot read the journal {}: {}", clip(path_, 200), std::strerror(err)));
    }
    done += static_cast<std::size_t>(n);
  }
}

run_journal::~run_journal() {
  if (fd_ >= 0) ::close(fd_);
}

void run_journal::start(const journal_identity& id, const run_meta& meta, std::size_t planned,
                        std::size_t keep_bytes) {
  started_ = steady_seconds();
  if (::ftruncate(fd_, static_cast<off_t>(keep_bytes)) != 0)
    throw usage_error(
        fmt::format("cannot write the journal {}: {}", clip(path_, 200), std::strerror(errno)));
  size_ = keep_bytes;
  text_.clear();
  if (keep_bytes == 0) {
    run_report r;
    r.meta = meta;
    write_line(sealed_line(json{{header_key, journal_format},
                                {"pid", static_cast<long>(::getpid())},
                                {"planned", planned},
                                {"identity", identity_json(id)},
                                {"meta", to_json(r).at("meta")}}));
  }
  // The journal's name must survive a crash too, not only its content.
  const auto folder = std::filesystem::path(path_).parent_path();
  const int dir = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void run_journal::append(std::size_t index, const result& r,
                         const std::vector<device_record>& devices) {
  run_report one;
  one.devices = devices;
  one.results.push_back(r);
  const json whole = to_json(one);
  json line{{"point", index},
            {"t", std::max(0.0, steady_seconds() - started_)},
            {"cpu_s", process_cpu_seconds()},
            {"result", whole.at("results").at(0)}};
  if (std::string now = whole.at("devices").dump(); now != devices_written_ && !devices.empty()) {
    line["devices"] = whole.at("devices");
    devices_written_ = std::move(now);
  }
  write_line(sealed_line(std::move(line)));
  ++appended_;
}

void run_journal::write_line(const std::string& line) {
  const auto fail = [this](const char* what) {
    const int err = errno;
    // Whatever part of the line reached the file goes: the journal ends on a complete line.
    if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
      // the error reported is the write's; a torn tail is ignored when the journal is read
    }
    throw usage_error(fmt::format("cannot write the journal {} ({}): {}; it keeps the points "
                                  "measured before this one",
                                  clip(path_, 200), what, std::strerror(err)));
  };
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n =
        ::pwrite(fd_, line.data() + done, line.size() - done, static_cast<off_t>(size_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      fail("write");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fdatasync(fd_) != 0) fail("sync");
  size_ += line.size();
}

void run_journal::remove() {
  if (fd_ < 0) return;
  unlink_if_still_named(fd_, path_);
  ::close(fd_);
  fd_ = -1;
}

} // namespace gpubench
