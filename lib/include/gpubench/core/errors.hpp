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

/// Set by the SIGINT, SIGTERM and SIGHUP handler; the engine stops after the current sample,
/// drivers after the current measurement, and the partial results are written marked incomplete.
/// `signal` is the signal received (SIGINT when called without one).
void request_interrupt(int signal = 2) noexcept;
[[nodiscard]] bool interrupt_requested() noexcept;
/// The signal of the first request (0 when none): its name goes into the report's reason and
/// 128 + signal is the exit code.
[[nodiscard]] int interrupt_signal() noexcept;
/// "SIGINT", "SIGTERM", "SIGHUP" (or "signal N") for the signal of the first request.
[[nodiscard]] const char* interrupt_signal_name() noexcept;
/// Forgets a request; for tests that simulate the signal in-process.
void clear_interrupt() noexcept;
/// From the first measured point on, a signal is recorded (request_interrupt) so that the results
/// so far are written; before it (parsing, loading files, a blocking read) there is nothing to
/// save and main's handler ends the process at once. Set by execute().
void defer_interrupts() noexcept;
[[nodiscard]] bool interrupts_deferred() noexcept;

/// Host memory could not be allocated (std::bad_alloc, or less free memory than a point needs).
/// Not a CUDA error: the runner marks the point skipped with this reason.
class host_memory_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Something inside one point failed that is neither CUDA nor the user's input (a worker thread
/// that could not start, an internal precondition): the runner marks the point an error.
class point_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Throws point_error "precondition failed: WHY (file:line)". For conditions that depend on the
/// environment or on earlier code, never on the user's input (that is a usage_error).
[[noreturn]] void throw_precondition(const char* condition, const std::string& why,
                                     const char* file, int line);

namespace exit_code {
inline constexpr int success = 0;
inline constexpr int verification_failed = 1;
inline constexpr int usage = 2;
inline constexpr int cuda = 3;
inline constexpr int no_device = 77;
inline constexpr int interrupted = 130; ///< SIGINT; SIGTERM gives 143, SIGHUP 129 (128 + N)
} // namespace exit_code

} // namespace gpubench

/// Checks a precondition; on failure throws point_error naming the condition and `why`.
#define GPUBENCH_EXPECTS(condition, why)                                                           \
  do {                                                                                             \
    if (!(condition)) ::gpubench::throw_precondition(#condition, (why), __FILE__, __LINE__);       \
  } while (0)
