#include "gpubench/engine/phases.hpp"

#include "gpubench/cuda/error.hpp"
#include "gpubench/engine/errors.hpp"

#include <atomic>
#include <cstdio>
#include <cstring>

namespace gpubench {

verification checked_run(cudaStream_t stream, const std::vector<poison_target>& targets,
                         const std::function<void(cudaStream_t)>& body,
                         const std::function<verification()>& compare) {
  for (const auto& t : targets) {
    if (t.bytes == 0) continue;
    if (t.on_device)
      GPUBENCH_CUDA_TRY(cudaMemsetAsync(t.data, 0xFF, t.bytes, stream));
    else
      std::memset(t.data, 0xFF, t.bytes);
  }
  body(stream);
  GPUBENCH_CUDA_TRY(cudaStreamSynchronize(stream));
  return compare();
}

void measure_gpu(result& r, gpu_sampler& sampler, const std::string& name,
                 const measure_options& opts, work_counts work,
                 const std::function<void(cudaStream_t)>& body, body_kind kind) {
  if (interrupt_requested()) return;
  r.measurements.push_back(sampler.run(name, opts, std::move(work), body, kind));
}

void measure_gpu_extra_rows(result& r, gpu_sampler& sampler, const std::string& name,
                            const measure_options& opts, const work_counts& work,
                            const std::function<void(cudaStream_t)>& body) {
  if (opts.batch_time > 0 && !interrupt_requested())
    r.measurements.push_back(sampler.run_batch(name + " (batch)", opts, work, body));
  if (opts.timestamps && !interrupt_requested()) {
    std::string why;
    if (auto m = sampler.run_timestamps(name + " (timestamps)", opts, work, body, why)) {
      r.measurements.push_back(std::move(*m));
    } else {
      static std::atomic<bool> told{false};
      if (!told.exchange(true))
        std::fprintf(stderr, "gpubench: warning: --timestamps: no '(timestamps)' rows: %s\n",
                     why.c_str());
    }
  }
}

void measure_cpu(result& r, const std::string& name, const measure_options& opts, work_counts work,
                 const std::function<void()>& body) {
  if (interrupt_requested()) return;
  r.measurements.push_back(measure_host(name, opts, std::move(work), body));
}

} // namespace gpubench
