// The explicit list of measuring benchmarks, in the order --help shows them.
#include "gpubench/augment/augment_bench.hpp"
#include "gpubench/engine/benchmark.hpp"
#include "gpubench/pipeline/pipeline_bench.hpp"
#include "gpubench/stream/stream_bench.hpp"
#include "gpubench/vecadd/vecadd_bench.hpp"

namespace gpubench {

const std::vector<benchmark>& all_benchmarks() {
  static const std::vector<benchmark> list = [] {
    std::vector<benchmark> v;
    v.push_back(make_vecadd_benchmark());
    v.push_back(make_augment_benchmark());
    v.push_back(make_pipeline_benchmark());
    v.push_back(make_stream_benchmark());
    return v;
  }();
  return list;
}

} // namespace gpubench
