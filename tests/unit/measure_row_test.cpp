// One measure call per row (engine/phases.hpp, measure_row): from one declaration, the row, its
// energy and its '(batch)' and '(timestamps)' rows as the options ask, counted with a fake sampler
// (no GPU).
#include "gpubench/engine/phases.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace gpubench;

namespace {

/// Records which ways of timing were asked for, and returns a row of two samples for each.
class fake_sampler final : public row_sampler {
public:
  std::vector<std::string> calls;
  bool timestamps_available = true;

  measurement run(std::string name, const measure_options& /*opts*/, work_counts work,
                  const std::function<void(cudaStream_t)>& /*body*/, body_kind kind) override {
    calls.push_back("run " + name + (kind == body_kind::host_synchronous ? " (host)" : ""));
    return row(std::move(name), std::move(work));
  }
  measurement run_batch(std::string name, const measure_options& /*opts*/, work_counts work,
                        const std::function<void(cudaStream_t)>& /*body*/) override {
    calls.push_back("batch " + name);
    return row(std::move(name), std::move(work));
  }
  std::optional<measurement> run_timestamps(std::string name, const measure_options& /*opts*/,
                                            work_counts work,
                                            const std::function<void(cudaStream_t)>& /*body*/,
                                            std::string& why) override {
    calls.push_back("timestamps " + name);
    if (!timestamps_available) {
      why = "no CUPTI here";
      return std::nullopt;
    }
    return row(std::move(name), std::move(work));
  }
  [[nodiscard]] cudaStream_t stream() const noexcept override { return nullptr; }
  [[nodiscard]] telemetry_source* telemetry() const noexcept override { return nullptr; }

private:
  static measurement row(std::string name, work_counts work) {
    measurement m;
    m.name = std::move(name);
    m.work = std::move(work);
    m.samples = {1e-3, 1e-3};
    finalize(m);
    return m;
  }
};

gpu_row kernel_row() {
  gpu_row row;
  row.name = "kernel";
  row.work = {3e6, 1e6, "elements"};
  row.body = [](cudaStream_t) {};
  return row;
}

std::vector<std::string> names(const result& r) {
  std::vector<std::string> out;
  for (const auto& m : r.measurements) out.push_back(m.name);
  return out;
}

} // namespace

TEST_CASE("measure_row: one declaration gives every row the options ask for", "[measure][row]") {
  common_options opts;
  fake_sampler s;
  result r;
  SECTION("by default, the row alone") {
    measure_row(r, s, opts, kernel_row());
    CHECK(names(r) == std::vector<std::string>{"kernel"});
    CHECK(r.measurements[0].energy.empty());
  }
  SECTION("--batch-time, --timestamps and --energy: all three beside it, the row first") {
    opts.measure.batch_time = 0.01;
    opts.measure.timestamps = true;
    opts.energy = true;
    measure_row(r, s, opts, kernel_row());
    CHECK(s.calls == std::vector<std::string>{"run kernel", "batch kernel (batch)",
                                              "timestamps kernel (timestamps)"});
    CHECK(names(r) == std::vector<std::string>{"kernel", "kernel (batch)", "kernel (timestamps)"});
    // Energy lands on the row itself; without a counter it says why, never a silent 0.
    REQUIRE(r.measurements[0].energy.is_object());
    CHECK(r.measurements[0].energy["supported"] == false);
    CHECK(r.measurements[0].energy["reason"] == "no telemetry source");
    // The extra rows declare the row's work.
    CHECK(r.measurements[1].work.bytes == 3e6);
    CHECK(r.measurements[2].work.item_unit == "elements");
  }
  SECTION("a plain row (a transfer) takes no extra rows and no energy") {
    opts.measure.batch_time = 0.01;
    opts.measure.timestamps = true;
    opts.energy = true;
    measure_row(
        r, s, opts,
        plain_gpu_row(
            "h2d", {4e6, 1e6, "elements"}, [](cudaStream_t) {}, body_kind::host_synchronous));
    CHECK(s.calls == std::vector<std::string>{"run h2d (host)"});
    CHECK(r.measurements[0].energy.empty());
  }
  SECTION("finish shapes the row before its extra rows read its work") {
    opts.measure.batch_time = 0.01;
    gpu_row row = kernel_row();
    row.finish = [](measurement& m) { m.work = {8, 1, "steps"}; };
    measure_row(r, s, opts, row);
    REQUIRE(r.measurements.size() == 2);
    CHECK(r.measurements[0].work.item_unit == "steps");
    CHECK(r.measurements[1].work.item_unit == "steps");
  }
  SECTION("no timestamps where CUPTI cannot trace: the row and its batch row stay") {
    opts.measure.batch_time = 0.01;
    opts.measure.timestamps = true;
    s.timestamps_available = false;
    measure_row(r, s, opts, kernel_row());
    CHECK(names(r) == std::vector<std::string>{"kernel", "kernel (batch)"});
  }
}
