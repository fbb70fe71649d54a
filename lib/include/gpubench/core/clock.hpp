#pragma once
// The host's monotonic clock in seconds, for the timelines that threads and ranks share.
#include <chrono>

namespace gpubench {

inline double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

} // namespace gpubench
