#pragma once
// A start line for several GPUs (multi-GPU concurrent mode, docs/multi-gpu.md): each GPU's stream
// waits in a spin kernel until the host writes the generation into a flag in mapped pinned
// memory, so the work enqueued behind it starts on every GPU at nearly the same moment. Each
// kernel records %globaltimer when it sees the release; the spread of those stamps is the start
// skew. A kernel that waits longer than its timeout gives up (a lost release never hangs a GPU)
// and says so in its stamp.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpubench::cuda {

class start_gate {
public:
  /// `slots` waiters (one per GPU), each kernel waiting at most `timeout_s`.
  start_gate(int slots, double timeout_s);
  start_gate(const start_gate&) = delete;
  start_gate& operator=(const start_gate&) = delete;
  ~start_gate();

  /// Enqueues on `stream` (of the current device) a kernel that spins until release(generation)
  /// or its timeout, then records its stamp in `slot`. Generations must increase from 1.
  void wait_on(int slot, std::uint64_t generation, cudaStream_t stream);
  /// Releases every kernel waiting for `generation` or an earlier one (a host store).
  void release(std::uint64_t generation) noexcept;

  struct stamp {
    std::uint64_t generation = 0;     ///< the generation the slot's last kernel waited for
    std::uint64_t globaltimer_ns = 0; ///< when it saw the release (0 when it timed out)
    bool timed_out = false;
  };
  /// The slot's stamp as last written (read once the kernel has finished).
  [[nodiscard]] stamp read(int slot) const noexcept;

private:
  int slots_;
  std::uint64_t timeout_ns_;
  std::uint64_t* host_ = nullptr; ///< [0] flag, then 3 words per slot; mapped, portable
};

} // namespace gpubench::cuda
