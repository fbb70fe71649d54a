#include "gpubench/engine/measurement_start.hpp"

#include <utility>

namespace gpubench {

namespace {
thread_local measurement_start_hook current_hook;
} // namespace

void notify_measurement_start(std::string_view name, cudaStream_t stream) {
  if (current_hook) current_hook(name, stream);
}

scoped_measurement_start_hook::scoped_measurement_start_hook(measurement_start_hook hook) {
  current_hook = std::move(hook);
}

scoped_measurement_start_hook::~scoped_measurement_start_hook() { current_hook = nullptr; }

} // namespace gpubench
