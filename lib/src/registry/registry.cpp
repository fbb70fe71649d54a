// The explicit list of measuring benchmarks, in the order --help shows them: one entry each.
#include "gpubench/registry/registry.hpp"

#include "gpubench/augment/augment_bench.hpp"
#include "gpubench/engine/point.hpp"
#include "gpubench/gemm/gemm_bench.hpp"
#include "gpubench/pipeline/pipeline_bench.hpp"
#include "gpubench/roofline/roofline_bench.hpp"
#include "gpubench/stream/stream_bench.hpp"
#include "gpubench/vecadd/vecadd_bench.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace gpubench {

const std::vector<benchmark>& all_benchmarks() {
  static const std::vector<benchmark> list{
      make_vecadd_benchmark(), make_augment_benchmark(), make_pipeline_benchmark(),
      make_stream_benchmark(), make_gemm_benchmark(),    make_roofline_benchmark(),
  };
  return list;
}

const benchmark* find_benchmark(std::string_view name) noexcept {
  return find_benchmark(all_benchmarks(), name);
}

summary_writers summary_tables() { return summary_tables(all_benchmarks()); }

result run_benchmark_point(std::string_view name, const param_values& values, int device,
                           run_context& ctx) {
  const benchmark* b = find_benchmark(name);
  if (b == nullptr) throw std::logic_error(fmt::format("no benchmark '{}'", name));
  auto points = b->plan(with_defaults(*b, values), ctx.options());
  nlohmann::json p = points.at(0);
  p["device"] = device;
  const point_view view(b->params, p);
  result r = b->run_point(view, ctx);
  r.derived["measured_as"] = fmt::format("{} {}", name, p.dump());
  return r;
}

} // namespace gpubench
