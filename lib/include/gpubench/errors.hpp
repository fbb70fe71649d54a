#pragma once
// Host-side error types. main maps each to its documented exit code (docs/errors.md):
// usage_error -> 2, cuda::cuda_error -> 3, cuda::no_device_error -> 77, interruption -> 130.
#include <stdexcept>
#include <string>

namespace gpubench {

/// Bad option, bad size, bad run file, unwritable output: the user must change the input.
class usage_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Set by the SIGINT handler; the engine stops after the current sample, drivers after the
/// current measurement, and the partial results are written marked incomplete.
void request_interrupt() noexcept;
[[nodiscard]] bool interrupt_requested() noexcept;
/// Forgets a request; for tests that simulate the signal in-process.
void clear_interrupt() noexcept;

namespace exit_code {
inline constexpr int success = 0;
inline constexpr int verification_failed = 1;
inline constexpr int usage = 2;
inline constexpr int cuda = 3;
inline constexpr int no_device = 77;
inline constexpr int interrupted = 130;
} // namespace exit_code

} // namespace gpubench
