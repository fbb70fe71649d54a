#include "gpubench/core/errors.hpp"

#include <fmt/format.h>

#include <atomic>
#include <csignal>

namespace gpubench {
namespace {
// Written from the signal handler: lock-free atomics are async-signal-safe.
std::atomic<int> interrupted_by{0};
static_assert(std::atomic<int>::is_always_lock_free);
std::atomic<bool> deferred{false};
static_assert(std::atomic<bool>::is_always_lock_free);
} // namespace

void defer_interrupts() noexcept { deferred.store(true); }
bool interrupts_deferred() noexcept { return deferred.load(); }

void request_interrupt(int signal) noexcept {
  int none = 0;
  // The first signal decides the reason and the exit code; a second one changes neither.
  interrupted_by.compare_exchange_strong(none, signal > 0 ? signal : SIGINT,
                                         std::memory_order_relaxed);
}
bool interrupt_requested() noexcept { return interrupted_by.load(std::memory_order_relaxed) != 0; }
int interrupt_signal() noexcept { return interrupted_by.load(std::memory_order_relaxed); }
const char* interrupt_signal_name() noexcept {
  switch (interrupt_signal()) {
  case SIGINT: return "SIGINT";
  case SIGTERM: return "SIGTERM";
  case SIGHUP: return "SIGHUP";
  case 0: return "no signal";
  default: return "a signal";
  }
}
void clear_interrupt() noexcept { interrupted_by.store(0, std::memory_order_relaxed); }

void throw_precondition(const char* condition, const std::string& why, const char* file, int line) {
  throw point_error(fmt::format("precondition failed: {} ({}; {}:{})", why, condition, file, line));
}

} // namespace gpubench
