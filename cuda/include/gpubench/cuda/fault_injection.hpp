#pragma once
// Test-only: a genuine device fault on demand, for the tests of the sticky-error path
// (GPUBENCH_INJECT_FAULT, docs/reliability.md). Nothing else launches it.

namespace gpubench::cuda {

/// Launches the kernel `fault_injection` on `device`: one thread storing through an invalid device
/// address. Returns without synchronizing, as a faulty kernel would: the device raises
/// cudaErrorIllegalAddress (sticky) on its own, and the next call that synchronizes reports it.
void inject_illegal_address(int device);

} // namespace gpubench::cuda
