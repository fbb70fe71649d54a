// The explicit list of measuring benchmarks, in the order --help shows them.
#include "gpubench/augment_bench.hpp"
#include "gpubench/benchmark.hpp"
#include "gpubench/pipeline_bench.hpp"
#include "gpubench/stream_bench.hpp"
#include "gpubench/vecadd_bench.hpp"

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
