#pragma once
// Two check processes on one GPU (MPI ranks sharing it, or two runs started by hand) take turns
// point by point, so that neither measures the other's traffic: a point holds its GPU while it
// runs. The hold is a socket bound in Linux's abstract namespace under a name made from the GPU's
// UUID: it writes no file, only one process can bind a name, and the kernel releases it when the
// process ends, however it ends.
#include <string>

namespace gpubench {

class gpu_turn {
public:
  /// Waits until no other gpubench check holds the GPU `uuid` (an empty UUID holds nothing), or a
  /// signal asks the run to stop (then it goes on without the hold; the runner stops next).
  explicit gpu_turn(const std::string& uuid);
  ~gpu_turn();
  gpu_turn(const gpu_turn&) = delete;
  gpu_turn& operator=(const gpu_turn&) = delete;
  gpu_turn(gpu_turn&&) = delete;
  gpu_turn& operator=(gpu_turn&&) = delete;

  /// Whether another process held the GPU first and this one waited for it.
  [[nodiscard]] bool waited() const noexcept { return waited_; }

private:
  int fd_ = -1;
  bool waited_ = false;
};

} // namespace gpubench
