// CUPTI activity tracing, loaded with dlopen. Only the headers are needed at build time; a build
// without them (a toolkit that lacks CUPTI) compiles the "unavailable" path.
#include "gpubench/cuda/kernel_timestamps.hpp"

#include "gpubench/cuda/library.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>

#if __has_include(<cupti.h>)
#include <cupti.h>
#define GPUBENCH_HAVE_CUPTI 1
#else
#define GPUBENCH_HAVE_CUPTI 0
#endif

namespace gpubench::cuda {

std::optional<double> activity_span_s(std::span<const gpu_activity> activities, std::uint32_t first,
                                      std::uint32_t last) {
  std::uint64_t lo = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t hi = 0;
  bool any = false;
  for (const auto& a : activities) {
    if (a.correlation < first || a.correlation > last) continue;
    // CUPTI leaves a timestamp 0 when it could not collect it: the span would be meaningless.
    if (a.start_ns == 0 || a.end_ns < a.start_ns) return std::nullopt;
    lo = std::min(lo, a.start_ns);
    hi = std::max(hi, a.end_ns);
    any = true;
  }
  if (!any) return std::nullopt;
  return static_cast<double>(hi - lo) * 1e-9;
}

#if GPUBENCH_HAVE_CUPTI

namespace {

constexpr int cuda_major = CUDA_VERSION / 1000;

// CUPTI's library carries the CUDA major version in its name, like the toolkit it ships with.
const std::string& cupti_soname() {
  static const std::string name = fmt::format("libcupti.so.{}", cuda_major);
  return name;
}

/// The CUPTI entry points used here, typed from the headers so a drifting signature fails to build.
struct cupti_api {
  bool loaded = false;
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiEnableDomain) enable_domain = nullptr;
  std::string why; ///< empty once loaded
};

template <typename Fn>
bool bind(const runtime_library& lib, Fn& fn, const char* name, std::string& why) {
  fn = lib.symbol<Fn>(name);
  if (fn == nullptr) why = fmt::format("{} has no entry point {}", cupti_soname(), name);
  return fn != nullptr;
}

const cupti_api& api() {
  static const cupti_api loaded = [] {
    cupti_api a;
    const runtime_library& lib = open_library(
        library_candidates(library_id::cupti, cuda_library_candidates(cupti_soname(), cuda_major)));
    if (!lib.loaded()) {
      a.why = fmt::format("{} not found (it ships with the CUDA Toolkit, or pip install "
                          "nvidia-cuda-cupti); tried: {}",
                          cupti_soname(), lib.tried());
      return a;
    }
    a.loaded = bind(lib, a.result_string, "cuptiGetResultString", a.why) &&
               bind(lib, a.register_callbacks, "cuptiActivityRegisterCallbacks", a.why) &&
               bind(lib, a.enable, "cuptiActivityEnable", a.why) &&
               bind(lib, a.disable, "cuptiActivityDisable", a.why) &&
               bind(lib, a.flush_all, "cuptiActivityFlushAll", a.why) &&
               bind(lib, a.next_record, "cuptiActivityGetNextRecord", a.why) &&
               bind(lib, a.subscribe, "cuptiSubscribe", a.why) &&
               bind(lib, a.unsubscribe, "cuptiUnsubscribe", a.why) &&
               bind(lib, a.enable_domain, "cuptiEnableDomain", a.why);
    return a;
  }();
  return loaded;
}

std::string describe(CUptiResult r) {
  const char* text = nullptr;
  if (api().result_string != nullptr && api().result_string(r, &text) == CUPTI_SUCCESS &&
      text != nullptr)
    return text;
  return fmt::format("CUPTI error {}", static_cast<int>(r));
}

/// CUPTI's callbacks are plain functions: the state they fill is the process's, guarded here.
struct trace_state {
  std::mutex mutex;
  std::vector<gpu_activity> records; ///< under mutex
  std::atomic<bool> owned{false};    ///< a kernel_timestamps exists
  std::atomic<bool> collecting{false};
  std::atomic<std::uint32_t> first{std::numeric_limits<std::uint32_t>::max()};
  std::atomic<std::uint32_t> last{0};
};

trace_state& state() {
  static trace_state s;
  return s;
}

constexpr std::size_t buffer_bytes = std::size_t{1} << 20;
constexpr std::size_t buffer_align = 8; // CUPTI's records are 8-byte aligned

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(buffer_align, buffer_bytes));
  *size = *buffer != nullptr ? buffer_bytes : 0;
  *max_records = 0; // as many as fit
}

// Only start, end and correlationId are read: their offsets (16, 24, and 92 for kernels, 44 for
// copies and memsets) have not moved from CUpti_ActivityKernel4 to Kernel10, Memcpy5 to Memcpy6
// and Memset3 to Memset4, so records of a newer CUPTI than the headers read the same.
template <typename Record>
gpu_activity activity_of(const CUpti_Activity* r) {
  const auto* x = reinterpret_cast<const Record*>(r);
  return {x->correlationId, x->start, x->end};
}

void CUPTIAPI buffer_completed(CUcontext /*ctx*/, uint32_t /*stream*/, uint8_t* buffer,
                               size_t /*size*/, size_t valid) {
  std::vector<gpu_activity> got;
  CUpti_Activity* r = nullptr;
  while (api().next_record(buffer, valid, &r) == CUPTI_SUCCESS) {
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      got.push_back(activity_of<CUpti_ActivityKernel10>(r));
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: got.push_back(activity_of<CUpti_ActivityMemcpy6>(r)); break;
    case CUPTI_ACTIVITY_KIND_MEMSET: got.push_back(activity_of<CUpti_ActivityMemset4>(r)); break;
    default: break;
    }
  }
  std::free(buffer);
  auto& s = state();
  const std::scoped_lock lock(s.mutex);
  s.records.insert(s.records.end(), got.begin(), got.end());
}

/// Every CUDA API call (runtime and driver) made while collecting widens the sample's window of
/// correlation ids: the GPU activities it enqueued carry the same id.
void CUPTIAPI on_api_call(void* /*user*/, CUpti_CallbackDomain domain, CUpti_CallbackId /*cbid*/,
                          const void* data) {
  auto& s = state();
  if (!s.collecting.load(std::memory_order_relaxed)) return;
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const std::uint32_t id = static_cast<const CUpti_CallbackData*>(data)->correlationId;
  std::uint32_t lo = s.first.load(std::memory_order_relaxed);
  while (id < lo && !s.first.compare_exchange_weak(lo, id)) {
  }
  std::uint32_t hi = s.last.load(std::memory_order_relaxed);
  while (id > hi && !s.last.compare_exchange_weak(hi, id)) {
  }
}

constexpr CUpti_ActivityKind traced[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};

} // namespace

struct kernel_timestamps::impl {
  CUpti_SubscriberHandle subscriber = nullptr;
  int enabled = 0; ///< leading entries of `traced` enabled
};

bool try_load_cupti(std::string& why) noexcept {
  try {
    const auto& a = api();
    why = a.why;
    return a.loaded;
  } catch (const std::exception& e) {
    why = e.what();
    return false;
  }
}

std::unique_ptr<kernel_timestamps> kernel_timestamps::open(std::string& why) {
  const auto& a = api();
  if (!a.loaded) {
    why = a.why;
    return nullptr;
  }
  // Tracing is process-wide: a second tracer would see the first one's work in its samples.
  if (state().owned.exchange(true)) {
    why = "another measurement of this process is being traced";
    return nullptr;
  }
  std::unique_ptr<kernel_timestamps> t(new kernel_timestamps);
  t->impl_ = std::make_unique<impl>(); // from here ~kernel_timestamps gives the ownership back
  auto fail = [&](const char* what, CUptiResult r) {
    why = fmt::format("{}: {}", what, describe(r));
    return nullptr; // ~kernel_timestamps undoes what was done
  };
  if (const auto r = a.subscribe(&t->impl_->subscriber, on_api_call, nullptr); r != CUPTI_SUCCESS) {
    t->impl_->subscriber = nullptr;
    return fail("cuptiSubscribe (is another profiler attached?)", r);
  }
  for (const auto domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API})
    if (const auto r = a.enable_domain(1, t->impl_->subscriber, domain); r != CUPTI_SUCCESS)
      return fail("cuptiEnableDomain", r);
  if (const auto r = a.register_callbacks(buffer_requested, buffer_completed); r != CUPTI_SUCCESS)
    return fail("cuptiActivityRegisterCallbacks", r);
  for (const auto kind : traced) {
    if (const auto r = a.enable(kind); r != CUPTI_SUCCESS) return fail("cuptiActivityEnable", r);
    ++t->impl_->enabled;
  }
  const std::scoped_lock lock(state().mutex);
  state().records.clear();
  return t;
}

kernel_timestamps::~kernel_timestamps() {
  if (!impl_) return;
  const auto& a = api();
  state().collecting.store(false);
  for (int i = 0; i < impl_->enabled; ++i) (void)a.disable(traced[i]);
  if (impl_->enabled > 0) (void)a.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (impl_->subscriber != nullptr) (void)a.unsubscribe(impl_->subscriber);
  {
    const std::scoped_lock lock(state().mutex);
    state().records.clear();
  }
  state().owned.store(false);
}

void kernel_timestamps::begin() noexcept {
  auto& s = state();
  s.first.store(std::numeric_limits<std::uint32_t>::max());
  s.last.store(0);
  s.collecting.store(true);
}

void kernel_timestamps::end() noexcept { state().collecting.store(false); }

double kernel_timestamps::span_s() {
  auto& s = state();
  (void)api().flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  const std::scoped_lock lock(s.mutex);
  const auto span = activity_span_s(s.records, s.first.load(), s.last.load());
  s.records.clear();
  return span.value_or(std::numeric_limits<double>::quiet_NaN());
}

#else // no CUPTI headers at build time

struct kernel_timestamps::impl {};

bool try_load_cupti(std::string& why) noexcept {
  why = "this gpubench was built without CUPTI's headers";
  return false;
}

std::unique_ptr<kernel_timestamps> kernel_timestamps::open(std::string& why) {
  why = "this gpubench was built without CUPTI's headers";
  return nullptr;
}
kernel_timestamps::~kernel_timestamps() = default;
void kernel_timestamps::begin() noexcept {}
void kernel_timestamps::end() noexcept {}
double kernel_timestamps::span_s() { return std::numeric_limits<double>::quiet_NaN(); }

#endif

} // namespace gpubench::cuda
