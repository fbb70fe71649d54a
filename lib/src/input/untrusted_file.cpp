// Reading and parsing files that come from elsewhere: bounded in size, type and nesting, strict in
// syntax, and quoted in messages only in short pieces.
#include "gpubench/input/untrusted_file.hpp"

#include "gpubench/core/errors.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <iterator>
#include <new>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_set>
#include <utility>
#include <vector>

namespace gpubench {
namespace {

using nlohmann::json;

// ---- position and key path ----------------------------------------------------------------

std::string line_and_column(std::string_view text, std::size_t byte) {
  std::size_t line = 1;
  std::size_t col = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return fmt::format("{}:{}", line, col);
}

/// A problem found while parsing; `byte` is 0 when the position is not known.
struct json_problem {
  std::string path;
  std::string what;
  std::size_t byte = 0;
};

/// An input iterator that publishes how far the parser has read, so that problems found in the
/// SAX callbacks (which get no position) can name a line and column.
class counting_iterator {
public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  counting_iterator(const char* p, const char* begin, std::size_t* read)
      : p_(p), begin_(begin), read_(read) {}
  reference operator*() const { return *p_; }
  counting_iterator& operator++() {
    ++p_;
    *read_ = static_cast<std::size_t>(p_ - begin_);
    return *this;
  }
  counting_iterator operator++(int) {
    auto old = *this;
    ++*this;
    return old;
  }
  bool operator==(const counting_iterator& o) const { return p_ == o.p_; }
  bool operator!=(const counting_iterator& o) const { return p_ != o.p_; }

private:
  const char* p_;
  const char* begin_;
  std::size_t* read_;
};

/// Builds the document like nlohmann's own DOM parser, and checks what that parser lets through:
/// depth, duplicate keys, numbers that underflow to zero. Tracks the key path for messages.
class guarded_sax {
public:
  guarded_sax(json& root, int max_depth, const std::size_t* read)
      : dom_(root, true), max_depth_(max_depth), read_(read) {}

  bool null() {
    return scalar([&] { return dom_.null(); });
  }
  bool boolean(bool v) {
    return scalar([&] { return dom_.boolean(v); });
  }
  bool number_integer(json::number_integer_t v) {
    return scalar([&] { return dom_.number_integer(v); });
  }
  bool number_unsigned(json::number_unsigned_t v) {
    return scalar([&] { return dom_.number_unsigned(v); });
  }
  bool number_float(json::number_float_t v, const json::string_t& text) {
    if (v == 0 && nonzero_mantissa(text))
      problem(fmt::format("the number {} is too small for a double: it would read as 0 (the "
                          "smallest is about 4.9e-324)",
                          clip(text)));
    return scalar([&] { return dom_.number_float(v, text); });
  }
  bool string(json::string_t& v) {
    return scalar([&] { return dom_.string(v); });
  }
  bool binary(json::binary_t& v) {
    return scalar([&] { return dom_.binary(v); });
  }

  bool start_object(std::size_t n) {
    enter(true);
    return dom_.start_object(n);
  }
  bool key(json::string_t& k) {
    auto& f = frames_.back();
    if (!f.keys.insert(k).second)
      problem(fmt::format("the key \"{}\" appears twice in one object (a key may appear once: "
                          "the second would silently replace the first)",
                          clip(k)));
    f.key = k;
    f.has_key = true;
    return dom_.key(k);
  }
  bool end_object() {
    leave();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    enter(false);
    return dom_.start_array(n);
  }
  bool end_array() {
    leave();
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& e) {
    if (e.id == 406) // number overflow: the lexer's text is the number itself
      throw json_problem{
          path(),
          fmt::format("the number {} is out of range for a double (at most about 1.8e308)",
                      clip(last_token)),
          position};
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error while
    // parsing value - invalid literal; last read: 'x'": keep the reason, quote the token briefly.
    if (const auto colon = what.find(": ");
        what.starts_with("[json.exception.") && colon != std::string::npos)
      what = what.substr(colon + 2);
    if (const auto last = what.find("; last read: "); last != std::string::npos)
      what = what.substr(0, last) + "; last read: " + clip(last_token);
    throw json_problem{path(), "not valid JSON (" + clip(what, 200) + ")", position};
  }

  /// "benchmarks[0].params.n": where the parser is now.
  [[nodiscard]] std::string path() const {
    std::string out;
    for (const auto& f : frames_) {
      if (f.object) {
        if (!f.has_key) break;
        if (!out.empty()) out += '.';
        out += clip(f.key, 40);
      } else {
        out += fmt::format("[{}]", f.index);
      }
    }
    return clip(out, 100);
  }

private:
  struct frame {
    bool object = false;
    std::size_t index = 0; ///< arrays: the element being read
    std::string key;       ///< objects: the key being read
    bool has_key = false;
    std::unordered_set<std::string> keys;
  };

  static bool nonzero_mantissa(std::string_view text) {
    for (const char c : text) {
      if (c == 'e' || c == 'E') break;
      if (c >= '1' && c <= '9') return true;
    }
    return false;
  }

  [[noreturn]] void problem(std::string what) const {
    throw json_problem{path(), std::move(what), *read_};
  }

  template <typename F>
  bool scalar(F&& add) {
    const bool ok = add();
    done_value();
    return ok;
  }
  void done_value() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }
  void enter(bool object) {
    if (frames_.size() >= static_cast<std::size_t>(max_depth_))
      problem(fmt::format("arrays and objects nest more than {} levels deep (the limit for run "
                          "files and result files)",
                          max_depth_));
    frames_.push_back(frame{object, 0, {}, false, {}});
  }
  void leave() {
    frames_.pop_back();
    done_value();
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  int max_depth_;
  const std::size_t* read_;
  std::vector<frame> frames_;
};

const char* file_type(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

std::string mib(std::uint64_t bytes) {
  return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

/// Closes the descriptor on every path out.
class file_descriptor {
public:
  explicit file_descriptor(int fd) : fd_(fd) {}
  file_descriptor(const file_descriptor&) = delete;
  file_descriptor& operator=(const file_descriptor&) = delete;
  ~file_descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const { return fd_; }

private:
  int fd_;
};

/// Empties `v` from the leaves up without allocating. nlohmann's destructor first moves a
/// container's children to a heap-allocated stack; when memory has just run out that allocation
/// fails inside a destructor, which ends the process (std::terminate). Erasing from the back of
/// each container frees only scalars and empty containers, which allocate nothing. The recursion
/// is bounded by the parser's depth limit.
void release_without_allocating(json& v) noexcept {
  if (auto* a = v.get_ptr<json::array_t*>()) {
    while (!a->empty()) {
      release_without_allocating(a->back());
      a->pop_back();
    }
  } else if (auto* o = v.get_ptr<json::object_t*>()) {
    while (!o->empty()) {
      const auto last = std::prev(o->end());
      release_without_allocating(last->second);
      o->erase(last);
    }
  }
}

} // namespace

std::string read_untrusted_file(const std::string& path, std::string_view what,
                                std::uint64_t max_bytes) {
  const std::string shown = clip(path, 200);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw usage_error(fmt::format("{}: cannot open the {}: {}", shown, what, std::strerror(errno)));
  // The type is checked before opening: opening a FIFO for reading would wait for a writer.
  if (!S_ISREG(st.st_mode))
    throw usage_error(fmt::format("{}: is {}, not a {} (gpubench reads {}s only from regular "
                                  "files)",
                                  shown, file_type(st.st_mode), what, what));
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    throw usage_error(fmt::format("{}: is {} ({} bytes); a {} may be at most {}", shown,
                                  mib(static_cast<std::uint64_t>(st.st_size)), st.st_size, what,
                                  mib(max_bytes)));
  // Non-blocking, and the type checked again on what was opened: the path may have changed.
  const file_descriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0)
    throw usage_error(fmt::format("{}: cannot open the {}: {}", shown, what, std::strerror(errno)));
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw usage_error(fmt::format("{}: is {}, not a {}", shown, file_type(st.st_mode), what));
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  std::vector<char> chunk(std::size_t{1} << 16U);
  while (true) {
    const auto got = ::read(fd.get(), chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      throw usage_error(
          fmt::format("{}: cannot read the {}: {}", shown, what, std::strerror(errno)));
    if (got == 0) break;
    // Files whose size stat cannot tell (procfs) or that grow while read are bounded here.
    if (text.size() + static_cast<std::size_t>(got) > max_bytes)
      throw usage_error(
          fmt::format("{}: is larger than {}, the most a {} may be", shown, mib(max_bytes), what));
    text.append(chunk.data(), static_cast<std::size_t>(got));
  }
  return text;
}

json parse_untrusted_json(std::string_view text, std::string_view name, int max_depth) {
  const std::string shown = clip(name, 200);
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    throw usage_error(fmt::format("{}:{}: a NUL byte in the file; a JSON file is text, and nothing "
                                  "after a NUL may be ignored",
                                  shown, line_and_column(text, nul + 1)));
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw usage_error(
        fmt::format("{}:1:1: not valid JSON (the file is empty; expected a JSON document)", shown));
  json root;
  std::size_t read = 0;
  guarded_sax sax(root, max_depth, &read);
  try {
    json::sax_parse(counting_iterator(text.data(), text.data(), &read),
                    counting_iterator(text.data() + text.size(), text.data(), &read), &sax);
  } catch (const json_problem& p) {
    const auto where = p.byte == 0 ? std::string() : ":" + line_and_column(text, p.byte);
    throw usage_error(
        fmt::format("{}{}: {}{}", shown, where, p.path.empty() ? "" : p.path + ": ", p.what));
  } catch (const std::bad_alloc&) {
    // Free the partial document here, where it needs no memory to go: the caller names the file.
    release_without_allocating(root);
    throw;
  }
  return root;
}

json load_untrusted_json(const std::string& path, std::string_view what) {
  try {
    return parse_untrusted_json(read_untrusted_file(path, what), path);
  } catch (const std::bad_alloc&) {
    throw usage_error(fmt::format("{}: out of memory while loading the {}", clip(path, 200), what));
  }
}

} // namespace gpubench
