// `gpubench doctor`: which CUDA this binary found, where each library came from, which GPUs it can
// run on, and what to do about each problem. Exit 0 when everything is there, 77 when no GPU is
// usable (or cuBLAS is missing), the cause named in the verdict.
#include "build_info.hpp"
#include "commands.hpp"
#include "gpubench/augment/augment_opencv.hpp"
#include "gpubench/gemm/gemm_cpu.hpp"
#include "gpubench/report/text_table.hpp"
#include "gpubench/telemetry/telemetry.hpp"

#include "gpubench/core/errors.hpp"
#include "gpubench/core/thread_pool.hpp"
#include "gpubench/cuda/cublas_loader.hpp"
#include "gpubench/cuda/error.hpp"
#include "gpubench/cuda/kernel_timestamps.hpp"
#include "gpubench/input/untrusted_file.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <thread>

namespace gpubench::app {

namespace {

namespace fs = std::filesystem;

struct gpu_record {
  int id = 0;
  std::string name;
  int major = 0;
  int minor = 0;
  bool sass = false;
  bool ptx = false;
};

struct library_record {
  std::string name; ///< "cuBLAS", "cuBLASLt", "CUDA runtime", "NVML", "CUDA driver"
  std::string path;
  std::string owner;
};

struct problem {
  bool fatal = false; ///< no GPU can run gpubench's code
  std::string what;
  std::string fix;
};

struct findings {
  std::string driver_version = "none"; ///< from NVML, e.g. "580.65.06"
  std::string driver_cuda = "none";    ///< the CUDA version the driver supports
  std::string runtime_loaded = "none";
  bool nvml = false;
  std::string nvml_reason;
  bool cublas = false;
  std::string cublas_reason;
  bool cupti = false; ///< optional: only --timestamps needs it, so its absence is no problem
  std::string cupti_reason;
  int cpus = 0;        ///< the machine's hardware threads
  int cpus_usable = 0; ///< those this process may run on (its CPU affinity)
  std::vector<gpu_record> gpus;
  std::vector<library_record> libraries;
  std::vector<problem> problems;
};

std::string cuda_version_text(int v) {
  return v == 0 ? std::string("none") : fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

// NVML is the driver's own library; telemetry/ loads it (through cuda/library.hpp) and asks it
// for the driver's version.
void probe_nvml(findings& f) {
  if (auto version = nvml_driver_version(f.nvml_reason)) {
    f.driver_version = *version;
    f.nvml = true; // the library stays open: its path is read from the process's mappings below
  }
}

/// Owner of `path`: a Debian package, a pip distribution, a conda package, or a plain prefix.
std::string owner_of(const fs::path& path) {
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);
  std::set<std::string> names{path.string()};
  if (!ec) names.insert(real.string());
  for (const auto& n : std::set<std::string>(names)) // usrmerge: dpkg may list /lib/...
    if (n.rfind("/usr/lib/", 0) == 0) names.insert(n.substr(4));
  if (fs::is_directory("/var/lib/dpkg/info", ec)) {
    for (const auto& entry : fs::directory_iterator("/var/lib/dpkg/info", ec)) {
      if (entry.path().extension() != ".list") continue;
      std::ifstream in(entry.path());
      for (std::string line; std::getline(in, line);)
        if (names.count(line) != 0) {
          std::string pkg = entry.path().stem().string();
          return "dpkg: " + pkg.substr(0, pkg.find(':'));
        }
    }
  }
  for (fs::path dir = path.parent_path(); !dir.empty() && dir != dir.root_path();
       dir = dir.parent_path()) {
    const auto leaf = dir.filename().string();
    if (leaf == "site-packages" || leaf == "dist-packages") {
      const std::string rel = path.lexically_relative(dir).string();
      for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const auto name = entry.path().filename().string();
        if (name.size() < 10 || name.substr(name.size() - 10) != ".dist-info") continue;
        std::ifstream in(entry.path() / "RECORD");
        for (std::string line; std::getline(in, line);)
          if (line.rfind(rel + ",", 0) == 0) return "pip: " + name.substr(0, name.size() - 10);
      }
      return "pip environment " + dir.string() + " (no distribution lists it)";
    }
    if (fs::is_directory(dir / "conda-meta", ec)) {
      const std::string rel = path.lexically_relative(dir).string();
      for (const auto& entry : fs::directory_iterator(dir / "conda-meta", ec)) {
        if (entry.path().extension() != ".json") continue;
        std::ifstream in(entry.path());
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        if (text.find('"' + rel + '"') != std::string::npos)
          return "conda: " + entry.path().stem().string();
      }
      return "conda environment " + dir.string();
    }
  }
  fs::path prefix = path.parent_path();
  const auto leaf = prefix.filename().string();
  if (leaf == "lib" || leaf == "lib64" || leaf == "x86_64-linux-gnu") prefix = prefix.parent_path();
  return "plain prefix " + prefix.string();
}

/// The CUDA libraries this process has mapped, read from /proc/self/maps after loading them.
void collect_libraries(findings& f) {
  const std::vector<std::pair<std::string, std::string>> wanted{
      {"libcudart.so", "CUDA runtime"}, {"libcublasLt.so", "cuBLASLt"},
      {"libcublas.so", "cuBLAS"},       {"libcupti.so", "CUPTI"},
      {"libnvidia-ml.so", "NVML"},      {"libcuda.so", "CUDA driver"}};
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> seen;
  for (std::string line; std::getline(maps, line);) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    if (!seen.insert(path).second) continue;
    const std::string base = fs::path(path).filename().string();
    for (const auto& [prefix, name] : wanted)
      if (base.rfind(prefix, 0) == 0) {
        f.libraries.push_back({name, path, owner_of(path)});
        break;
      }
  }
  if (cuda_runtime_linkage() == "static")
    f.libraries.insert(f.libraries.begin(),
                       {"CUDA runtime", "(linked into gpubench, static)", "gpubench itself"});
}

findings examine() {
  findings f;
  int driver = 0;
  int runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  f.driver_cuda = cuda_version_text(driver);
  f.runtime_loaded = cuda_version_text(runtime);
  probe_nvml(f);

  try {
    cuda::require_device();
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
    for (int d = 0; d < count; ++d) {
      cudaDeviceProp p{};
      if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
      f.gpus.push_back({d, p.name, p.major, p.minor, has_sass_for(p.major, p.minor),
                        has_ptx_for(p.major, p.minor)});
    }
  } catch (const cuda::no_device_error& e) {
    const bool old_driver = driver != 0 && driver < runtime;
    f.problems.push_back(
        {true, e.what(),
         driver == 0 ? "install the NVIDIA driver (nvidia-smi must list the GPU)"
         : old_driver
             ? fmt::format("install a driver that supports CUDA {} or newer", f.runtime_loaded)
             : "check that the GPU is visible (nvidia-smi, CUDA_VISIBLE_DEVICES, container "
               "runtime)"});
  }
  (void)cudaGetLastError();
  // A GPU without code is fatal only when no GPU has code: the others can still be used.
  const bool any_runnable = std::any_of(f.gpus.begin(), f.gpus.end(),
                                        [](const gpu_record& g) { return g.sass || g.ptx; });
  for (const auto& g : f.gpus)
    if (!g.sass && !g.ptx)
      f.problems.push_back(
          {!any_runnable,
           fmt::format("GPU {} ({}, compute capability {}.{}): this build has no code for it "
                       "(built for {})",
                       g.id, g.name, g.major, g.minor, cuda_architectures_text()),
           fmt::format("rebuild with -DCMAKE_CUDA_ARCHITECTURES={}{}-real", g.major, g.minor)});

  f.cublas = cuda::try_load_cublas(f.cublas_reason);
  if (!f.cublas)
    f.problems.push_back(
        {true, fmt::format("cuBLAS ({}) not found: the pipeline cannot run", cuda::cublas_soname()),
         fmt::format("pip install nvidia-cublas=={}.*, or install NVIDIA's "
                     "Debian package libcublas-{}-0",
                     CUDART_VERSION / 1000, CUDART_VERSION / 1000)});
  f.cupti = cuda::try_load_cupti(f.cupti_reason);
  if (!f.nvml)
    f.problems.push_back({false, "NVML (libnvidia-ml.so.1) not available: " + f.nvml_reason,
                          "it comes with the NVIDIA driver; install the driver's NVML library"});

  f.cpus = static_cast<int>(std::thread::hardware_concurrency());
  f.cpus_usable = usable_cpu_cores();
  if (f.cpus_usable < f.cpus)
    f.problems.push_back(
        {false,
         fmt::format("{}: the CPU rows would run on {}", cpu_confinement(f.cpus_usable, f.cpus),
                     f.cpus_usable),
         "run without taskset or a narrow cpuset; under mpirun, --bind-to numa or --bind-to none; "
         "or give --cpu-threads"});

  collect_libraries(f);
  std::map<std::string, std::set<std::string>> dirs;
  for (const auto& l : f.libraries)
    if (l.path.front() == '/') dirs[l.name].insert(fs::path(l.path).parent_path().string());
  for (const auto& [name, where] : dirs)
    if (where.size() > 1)
      f.problems.push_back({false, fmt::format("{} is loaded from {} places", name, where.size()),
                            "remove one copy from LD_LIBRARY_PATH or uninstall one package"});
  // cuBLAS and cuBLASLt must come from one release: two folders mean two installs.
  if (dirs.count("cuBLAS") != 0 && dirs.count("cuBLASLt") != 0 &&
      dirs["cuBLAS"] != dirs["cuBLASLt"])
    f.problems.push_back({false, "cuBLAS and cuBLASLt are loaded from two places",
                          "install both from one package set (pip or Debian), not a mix"});
  return f;
}

nlohmann::json to_json(const findings& f) {
  nlohmann::json j;
  j["gpubench"] = {{"version", GPUBENCH_VERSION},
                   {"cuda_runtime_built", cuda_runtime_built()},
                   {"cuda_runtime_linkage", cuda_runtime_linkage()},
                   {"cuda_architectures", cuda_architectures_text()},
                   {"mpi", mpi_compiled_in()},
                   {"opencv", augment_opencv::built_in()}};
  // The OpenCV baseline of augment (optional, like MPI): the version loaded, or why it is absent.
  j["opencv"] = {{"built_in", augment_opencv::built_in()}};
  if (augment_opencv::built_in())
    j["opencv"]["version"] = augment_opencv::version();
  else
    j["opencv"]["reason"] = augment_opencv::absence_reason();
  // OpenBLAS, gemm's CPU row (optional, like OpenCV).
  j["openblas"] = {{"built_in", openblas_built_in()}};
  if (openblas_built_in()) j["openblas"]["config"] = openblas_config();
  j["driver"] = {{"version", f.driver_version}, {"cuda", f.driver_cuda}};
  j["cuda_runtime_loaded"] = f.runtime_loaded;
  j["nvml"] = {{"available", f.nvml}};
  if (!f.nvml) j["nvml"]["reason"] = f.nvml_reason;
  j["cublas"] = {{"available", f.cublas}};
  if (!f.cublas) j["cublas"]["reason"] = f.cublas_reason;
  j["cpus"] = {{"hardware", f.cpus}, {"usable", f.cpus_usable}};
  j["cupti"] = {{"available", f.cupti}};
  if (!f.cupti) j["cupti"]["reason"] = f.cupti_reason;
  j["libraries"] = nlohmann::json::array();
  for (const auto& l : f.libraries)
    j["libraries"].push_back({{"name", l.name}, {"path", l.path}, {"owner", l.owner}});
  j["gpus"] = nlohmann::json::array();
  for (const auto& g : f.gpus)
    j["gpus"].push_back({{"id", g.id},
                         {"name", g.name},
                         {"compute_capability", fmt::format("{}.{}", g.major, g.minor)},
                         {"sass", g.sass},
                         {"ptx", g.ptx}});
  j["problems"] = nlohmann::json::array();
  for (const auto& p : f.problems)
    j["problems"].push_back({{"fatal", p.fatal}, {"what", p.what}, {"fix", p.fix}});
  return j;
}

void write_table(std::ostream& os, const findings& f) {
  const std::size_t width = output_width();
  // The verdict first, then what it was judged from: each line wrapped to the terminal.
  if (f.problems.empty()) os << "verdict: OK, everything gpubench needs is there\n";
  for (const auto& p : f.problems)
    write_wrapped(
        os, fmt::format("verdict: {}: {}; fix: {}", p.fatal ? "PROBLEM" : "warning", p.what, p.fix),
        width, "", "  ");
  os << '\n';
  const auto row = [&os, width](const std::string& k, const std::string& v) {
    write_wrapped(os, v, width, fmt::format("{:<22} ", k), std::string(25, ' '));
  };
  row("gpubench", fmt::format("{} ({} runtime {}, {})", GPUBENCH_VERSION, cuda_runtime_linkage(),
                              cuda_runtime_built(), "built for " + cuda_architectures_text()));
  row("driver", f.driver_version == "none" && f.driver_cuda == "none"
                    ? std::string("none")
                    : fmt::format("{} (supports CUDA {})", f.driver_version, f.driver_cuda));
  row("CUDA runtime loaded", f.runtime_loaded);
  row("NVML", f.nvml ? std::string("yes") : "no (" + f.nvml_reason + ")");
  row("cuBLAS", f.cublas ? std::string("yes") : std::string("no"));
  row("CUPTI (--timestamps)", f.cupti ? std::string("yes") : std::string("no (optional)"));
  row("CPUs",
      f.cpus_usable < f.cpus
          ? fmt::format("{} ({} usable by this process: its CPU affinity)", f.cpus, f.cpus_usable)
          : fmt::format("{}", f.cpus));
  row("MPI", mpi_compiled_in() ? "compiled in" : "not compiled in");
  row("OpenBLAS (gemm)", openblas_built_in() ? "compiled in (" + openblas_config() + ")"
                                             : std::string("not compiled in (optional)"));
  row("OpenCV (augment)", augment_opencv::built_in()
                              ? "compiled in (" + augment_opencv::version() + ")"
                              : std::string("not compiled in (optional)"));
  os << "\nlibraries loaded:\n";
  const std::string under(18, ' ');
  for (const auto& l : f.libraries) {
    write_wrapped(os, l.path, width, fmt::format("  {:<13}   ", l.name), under);
    write_wrapped(os, "owner: " + l.owner, width, under, under);
  }
  os << "\nGPUs:\n";
  if (f.gpus.empty()) os << "  none usable\n";
  for (const auto& g : f.gpus) // about 70 columns
    os << fmt::format("  {:>2}  {:<28} cc {}.{}  SASS: {:<3}  PTX: {}\n", g.id, g.name, g.major,
                      g.minor, g.sass ? "yes" : "no", g.ptx ? "yes" : "no");
}

} // namespace

void add_doctor_command(CLI::App& app, cli_state& state) {
  static std::string format = "table";
  CLI::App* sub = app.add_subcommand(
      "doctor", "which CUDA gpubench found, where its libraries come from, what to fix");
  sub->footer(std::string("Exit codes: 0 everything needed is there; 77 no GPU is usable or "
                          "cuBLAS is missing (the verdict names the cause and the fix).\n"));
  sub->add_option("--format", format, "stdout format: table or json")
      ->type_name("{table|json}")
      ->capture_default_str();
  sub->callback([&state] {
    std::string chosen = format; // any case matches; the message echoes what was typed
    for (char& c : chosen) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (chosen != "table" && chosen != "json")
      throw usage_error(fmt::format("--format: '{}' is not one of table, json", clip(format)));
    const findings f = examine();
    if (chosen == "json")
      std::cout << to_json(f).dump(2) << "\n";
    else
      write_table(std::cout, f);
    // The fatal problems go to stderr too, like every other command's errors.
    bool fatal = false;
    for (const auto& p : f.problems)
      if (p.fatal) {
        std::fprintf(stderr, "Error: %s; fix: %s\n", p.what.c_str(), p.fix.c_str());
        fatal = true;
      }
    state.exit_code = fatal ? exit_code::no_device : exit_code::success;
  });
}

} // namespace gpubench::app
