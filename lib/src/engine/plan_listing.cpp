#include "gpubench/engine/plan_listing.hpp"

#include "gpubench/engine/point.hpp"
#include "gpubench/report/text_table.hpp"

#include <fmt/format.h>

#include <optional>
#include <ostream>

namespace gpubench {

namespace {

/// What the point's buffers take on its device; none for a CPU point or an undeclared benchmark.
std::optional<std::size_t> device_bytes_of(const planned_point& p) {
  if (!p.bench->device_bytes || point_device(p.params) < 0) return std::nullopt;
  return p.bench->device_bytes(point_view(p.bench->params, p.params));
}

} // namespace

void write_plan(std::ostream& os, std::string_view title, const std::vector<planned_point>& points,
                output_format format) {
  if (format == output_format::json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& p : points) {
      nlohmann::json entry{{"benchmark", p.bench->name}, {"params", p.params}};
      if (const auto bytes = device_bytes_of(p)) entry["device_bytes"] = *bytes;
      list.push_back(std::move(entry));
    }
    const nlohmann::json doc = {{"name", title}, {"points", std::move(list)}};
    os << doc.dump(2) << '\n';
    return;
  }
  os << fmt::format("{}: {} point{} would run\n", title, points.size(),
                    points.size() == 1 ? "" : "s");
  const auto width = std::to_string(points.size()).size();
  bool any_memory = false;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto bytes = device_bytes_of(points[i]);
    any_memory = any_memory || bytes.has_value();
    // One point a line where it fits the output's width; a longer one wraps under its
    // parameters.
    const std::string head = fmt::format("{:>{}}  {:<9} ", i + 1, width, points[i].bench->name);
    const std::string text = fmt::format(
        "{}{}", params_text(points[i].params),
        bytes ? fmt::format(" (needs {} on the device)", format_bytes(static_cast<double>(*bytes)))
              : std::string());
    write_wrapped(os, text, output_width(), head, std::string(head.size() + 2, ' '));
  }
  if (any_memory)
    write_wrapped(os,
                  "Device memory: the point's buffers; the L2 flush buffer (twice the L2's size) "
                  "comes on top.",
                  output_width(), "", "  ");
}

} // namespace gpubench
