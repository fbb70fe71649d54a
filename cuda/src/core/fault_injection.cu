// The kernel behind GPUBENCH_INJECT_FAULT (test-only): a real illegal-address fault, raised by the
// device, not an error code made up on the host.
#include "gpubench/cuda/error.hpp"
#include "gpubench/cuda/fault_injection.hpp"
#include "gpubench/cuda/stream.hpp"

namespace gpubench::cuda {
namespace {

// The address comes from the host at run time, so the compiler cannot see the store is invalid
// (and turn it into a trap, a different error).
__global__ void fault_injection(volatile int* target) { *target = 1; }

} // namespace

void inject_illegal_address(int device) {
  const scoped_device guard(device);
  // Address 0 is never mapped on the device.
  fault_injection<<<1, 1>>>(nullptr);
  GPUBENCH_CHECK_LAUNCH("fault_injection");
}

} // namespace gpubench::cuda
