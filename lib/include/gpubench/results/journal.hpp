#pragma once
// The journal of a run (docs/reliability.md, "The journal"): FILE.journal beside --output FILE,
// JSON Lines, one header line that identifies the run and one line per completed point, each
// written and fsync'd before the next point starts, so that a run killed by SIGKILL keeps every
// point it measured and `--resume` measures only the rest. The file is locked while a run writes
// it: one writer per output.
#include "gpubench/results/result.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench {

/// What a run must share with a journal to resume it: its points in plan order (benchmark and
/// parameters, device included), the effective measurement options, the binary's version and
/// build, and on a GPU run the driver and each GPU's UUID (empty on a CPU-only run).
struct journal_identity {
  nlohmann::json points = nlohmann::json::array();
  nlohmann::json options = nlohmann::json::object();
  std::string version;
  std::string git;
  std::string source_hash; ///< "" in journals written before it was recorded
  std::string cuda_driver;
  std::vector<std::string> gpu_uuids;
};

/// "" when `was` (the journal's) and `now` (this run's) identify the same run, else what differs,
/// for the user ("the points differ: point 3 is vecadd n=2048 in the journal, vecadd n=4096
/// now").
std::string identity_difference(const journal_identity& was, const journal_identity& now);

/// A journal as read back: the header, every complete point line (by plan index) and how much of
/// the file is valid.
struct journal_contents {
  bool has_header = false;
  journal_identity identity;
  run_meta meta;                        ///< the run's meta as it started
  long pid = 0;                         ///< the process that wrote the header
  std::size_t planned = 0;              ///< points in the run's plan
  std::map<std::size_t, result> points; ///< by 0-based plan index
  std::vector<device_record> devices;   ///< the last devices recorded
  std::size_t valid_bytes = 0;          ///< the length of the complete lines
  bool torn_tail = false;               ///< a last line without its newline (ignored)
};

/// Whether `text` starts like a journal (its first line is a journal header).
bool looks_like_journal(std::string_view text);

/// Reads a journal's text; `name` names it in messages. A last line without its newline is torn
/// (the writer was killed while writing it) and ignored; any other line that is not valid JSON,
/// fails its checksum or holds a result a result file could not (docs/errors.md) throws
/// usage_error "NAME: line N: ...". An empty text, or one whose header line is torn, holds nothing.
journal_contents parse_journal(std::string_view text, std::string_view name);

/// The points a journal holds as a result of an unfinished run (meta.incomplete set), for
/// `report` and `compare`.
run_report journal_report(const journal_contents& j);

/// FILE.journal for --output FILE.
std::string journal_path(const std::string& output_path);

/// The journal a run writes. Constructing it creates or opens FILE.journal and locks it (a
/// POSIX record lock: the kernel releases it when the process dies, so a killed run never leaves
/// a stale lock); another process holding it is a usage_error naming its pid. The text found
/// there is read under the lock (existing_text(), for parse_journal).
class run_journal {
public:
  explicit run_journal(const std::string& output_path);
  run_journal(const run_journal&) = delete;
  run_journal& operator=(const run_journal&) = delete;
  ~run_journal();

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// The journal's text when the lock was taken ("" when there was none); cleared by start().
  [[nodiscard]] const std::string& existing_text() const noexcept { return text_; }

  /// Starts writing. keep_bytes > 0 (a resumed run): the existing journal's first keep_bytes
  /// (its header and complete lines, journal_contents::valid_bytes) stay, a torn last line is cut
  /// off, and new lines follow. 0: the file restarts with a header made of `id`, `meta`,
  /// `planned` and this process's pid.
  void start(const journal_identity& id, const run_meta& meta, std::size_t planned,
             std::size_t keep_bytes);
  /// Appends point `index`'s line (and the devices when they changed since the last line), then
  /// fsyncs. A failed write (a full disk, `ulimit -f`) cuts the file back to its last complete
  /// line and throws usage_error naming the journal.
  void append(std::size_t index, const result& r, const std::vector<device_record>& devices);
  /// Point lines append() wrote since start().
  [[nodiscard]] std::size_t appended() const noexcept { return appended_; }
  /// Deletes the journal (once the final file is written); the lock goes with the descriptor.
  void remove();

private:
  void write_line(const std::string& line);
  std::string path_;
  int fd_ = -1;
  std::string text_;
  std::size_t size_ = 0;
  std::size_t appended_ = 0;
  std::string devices_written_; ///< the devices of the last devices line, as JSON
  double started_ = 0;          ///< steady clock seconds at start()
};

} // namespace gpubench
