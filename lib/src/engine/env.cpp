#include "gpubench/engine/env.hpp"

#include "gpubench/core/thread_pool.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/engine/environment.hpp"
#include "gpubench/engine/test_hooks.hpp"
#include "gpubench/telemetry/telemetry.hpp"

#include <array>
#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>
#include <unistd.h>

namespace gpubench {

namespace detail {
extern const char* const git_revision_text; // generated at build time (git_revision.cpp)
extern const char* const source_hash_text;  // generated at build time (source_hash.cpp)
} // namespace detail

std::string version_string() { return GPUBENCH_VERSION; }
std::string git_revision() { return detail::git_revision_text; }
std::string source_hash() { return detail::source_hash_text; }

std::string utc_timestamp_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

host_info collect_host_info() {
  host_info h;
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) == 0) h.name = name.data();
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) h.cpu_model = line.substr(colon + 2);
      break;
    }
  }
  if (h.cpu_model.empty()) h.cpu_model = "unknown";
  h.cores = static_cast<int>(std::thread::hardware_concurrency());
  h.cores_usable = usable_cpu_cores();
  return h;
}

run_meta collect_meta(const std::vector<std::string>& argv) {
  run_meta m;
  m.version = version_string();
  m.git = git_revision();
  m.source_hash = source_hash();
  m.argv = argv;
  m.started_at = utc_timestamp_now();
  m.host = collect_host_info();
  m.cuda_driver = cuda::driver_version_string();
  m.cuda_runtime = cuda::runtime_version_string();
  m.nvidia_driver = nvidia_driver_version(process_environment().nvidia_version_file);
  m.test_slowdown = test_slowdown_text();
  return m;
}

} // namespace gpubench
