// dlopen in one place: the candidates a library is looked for at, the file a user named, and the
// handle with its entry points.
#include "gpubench/cuda/library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <array>
#include <filesystem>
#include <map>
#include <mutex>
#include <system_error>
#include <utility>

namespace gpubench::cuda {

namespace {

struct named_files {
  std::mutex mutex;
  std::array<std::string, 3> files; ///< by library_id
};

named_files& named() {
  static named_files n;
  return n;
}

} // namespace

void set_library_file(library_id id, std::string path) {
  auto& n = named();
  const std::lock_guard lock(n.mutex);
  n.files.at(static_cast<std::size_t>(id)) = std::move(path);
}

std::string library_file(library_id id) {
  auto& n = named();
  const std::lock_guard lock(n.mutex);
  return n.files.at(static_cast<std::size_t>(id));
}

std::vector<std::string> cuda_library_candidates(const std::string& file, int major) {
  std::vector<std::string> out{file};
  // NVIDIA's wheels put the library in site-packages/nvidia/cu<major>/lib; the gpubench wheel
  // installs the executable in site-packages/gpubench/bin, and pip's scripts folder (bin/) sits
  // beside lib/pythonX.Y/site-packages. RUNPATH covers the first; this covers a copied binary.
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto sub = std::filesystem::path("nvidia") / fmt::format("cu{}", major) / "lib" / file;
    out.push_back((exe.parent_path().parent_path().parent_path() / sub).string());
  }
  out.push_back((std::filesystem::path("/usr/local/cuda/lib64") / file).string());
  return out;
}

std::vector<std::string> library_candidates(library_id id, std::vector<std::string> defaults) {
  std::string file = library_file(id);
  if (!file.empty()) return {std::move(file)};
  return defaults;
}

runtime_library::runtime_library(const std::vector<std::string>& candidates) {
  for (const auto& path : candidates) {
    handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr) return;
    const char* err = ::dlerror();
    tried_ += fmt::format("{}{} ({})", tried_.empty() ? "" : "; ", path,
                          err != nullptr ? err : "not loadable");
  }
}

const runtime_library& open_library(const std::vector<std::string>& candidates) {
  static std::mutex mutex;
  // Never destroyed: an entry point may be called from a static destructor.
  static auto* opened = new std::map<std::vector<std::string>, runtime_library>();
  const std::lock_guard lock(mutex);
  auto it = opened->find(candidates);
  if (it == opened->end()) it = opened->emplace(candidates, runtime_library(candidates)).first;
  return it->second;
}

void* runtime_library::raw_symbol(const char* name) const noexcept {
  return handle_ == nullptr ? nullptr : ::dlsym(handle_, name);
}

} // namespace gpubench::cuda
