// `gpubench pipeline`: parameters and their validation, the plan, one point's run (bitwise
// verification of every mode against serial, then stage and mode timings) and the batch table.
#include "gpubench/pipeline/pipeline_bench.hpp"

#include "gpubench/augment/augment_bench.hpp"
#include "gpubench/augment/augment_cpu.hpp"
#include "gpubench/augment/augment_opencv.hpp"
#include "gpubench/augment/augment_params.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/flop_rates.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/engine/gpu_setup.hpp"
#include "gpubench/engine/phases.hpp"
#include "gpubench/engine/point.hpp"
#include "gpubench/engine/test_hooks.hpp"
#include "gpubench/input/sizes.hpp"
#include "gpubench/input/untrusted_file.hpp"
#include "gpubench/pipeline/pipeline_cpu.hpp"
#include "gpubench/report/report.hpp"
#include "gpubench/report/text_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>

namespace gpubench {

using nlohmann::json;

namespace {

constexpr double max_batch = 4096;
constexpr double max_width = 16384;

/// serial always (the baseline and the verification reference), then the chosen modes in
/// canonical order; cpu-augment only where stage A is augmentation.
void finish_pipeline_point(json& p, const json& /*all*/, const common_options& /*opts*/) {
  const std::string chosen = "," + p.at("mode").get<std::string>() + ",";
  const bool augment_train = p.at("scenario") == "augment-train";
  std::string modes = "serial";
  for (const char* m : {"streams", "graph", "cpu-augment"}) {
    if (std::string_view(m) == "cpu-augment" && !augment_train) continue;
    if (chosen.find(fmt::format(",{},", m)) != std::string::npos) modes += std::string(",") + m;
  }
  p["mode"] = modes;
}

void check_pipeline_plan(const std::vector<json>& points, const json& all, const param_values& text,
                         const common_options& /*opts*/) {
  // "all" takes cpu-augment where it applies; naming it asks for a scenario where it does.
  const bool asked_cpu = value_of(text, "mode").find("cpu-augment") != std::string::npos;
  const bool any_augment_train = std::any_of(points.begin(), points.end(), [](const json& p) {
    return p.at("scenario") == "augment-train";
  });
  if (asked_cpu && !any_augment_train)
    throw usage_error("--mode: cpu-augment runs stage A (augmentation) on the CPU and needs "
                      "--scenario augment-train");
  const int steps = all.at("steps").get<int>();
  const int warmup = all.at("warmup-steps").get<int>();
  if (steps < warmup)
    throw usage_error(fmt::format("--steps: {} is below --warmup-steps {}: the verified and timed "
                                  "steps must be at least as many as the warm-up",
                                  steps, warmup));
  (void)to_float32(all.at("lr").get<double>(), "lr"); // the network trains in float32
  const int pool = all.at("pool").get<int>();
  const int side = default_augment_config().resize;
  if (side % pool != 0)
    throw usage_error(
        fmt::format("--pool: {} does not divide the augmented image side {}", pool, side));
  const int strip = all.at("overlap-strip").get<int>();
  if (strip != 0 && (strip & (strip - 1)) != 0)
    throw usage_error(fmt::format("--overlap-strip: {} is not 0, 1, 2, 4 or 8", strip));
}

// ---- one point ------------------------------------------------------------------------------

std::string mode_key(pipeline_mode m) {
  std::string k(mode_name(m));
  std::replace(k.begin(), k.end(), '-', '_');
  return k;
}

/// Samples that timed `n` steps each, turned into seconds per step.
void per_step(measurement& m, int n, work_counts w, double flops) {
  for (auto& x : m.samples) x /= n;
  m.host_enqueue_s /= n;
  m.launch_free_s /= n;
  m.work = std::move(w);
  finalize(m);
  if (flops > 0 && m.median() > 0) m.rates["flop_per_s"] = flops / m.median();
}

result run_pipeline_point(const point_view& point, run_context& ctx) {
  const auto& opts = ctx.options();
  const pipeline_config cfg = pipeline_config_from_point(point);
  const int device = point.device();
  const std::string label = fmt::format("pipeline {} batch {} depth {}",
                                        scenario_name(cfg.scenario), cfg.batch, cfg.depth);
  result r;
  r.params = point.values();
  // A step makes the host wait on its ring: it cannot be held behind the blocking kernel that
  // batch and timestamp rows need (methodology.md). Said once, so a run file that asks for them
  // for every benchmark still runs the pipeline.
  static std::atomic<bool> told{false};
  if ((opts.measure.batch_time > 0 || opts.measure.timestamps) && !told.exchange(true))
    std::fprintf(stderr, "gpubench: note: pipeline has no '(batch)' or '(timestamps)' rows: its "
                         "steps wait on the host, so they cannot be held behind the blocking "
                         "kernel\n");

  const cuda::scoped_device guard(device);
  const device_record& dev = ctx.device(device);
  cuda::require_device_memory(pipeline_device_bytes(cfg) +
                                  static_cast<std::size_t>(std::max(dev.info.l2_bytes, 0)),
                              label.c_str());
  gpu_setup gpu(dev, ctx.telemetry(device));
  const cudaStream_t s = gpu.stream.get();
  gpu_sampler& sampler = gpu.sampler;
  pipeline_engine engine(cfg, opts.seed, ctx.cpu_pool());
  const int n = cfg.steps;
  const int warm = cfg.warmup_steps;

  // ---- verification: the same steps from the same seed in every mode ----
  const auto trained = [&](pipeline_mode m) {
    engine.reset_weights();
    engine.start(m, s);
    if (warm > 0) engine.run(m, warm, s);
    engine.run(m, n, s);
    auto w = engine.trained_weights();
    corrupt_for_test(point.values(), mode_name(m), w); // the GPU tests' hook (test_hooks.hpp)
    return w;
  };
  if (opts.verify) {
    const auto reference = trained(pipeline_mode::serial);
    for (const auto m : cfg.modes) {
      if (m == pipeline_mode::serial || m == pipeline_mode::cpu_augment) continue;
      r.verify.merge(pipeline_cpu::compare_bitwise(reference, trained(m)),
                     fmt::format("{} vs serial", mode_name(m)));
    }
    if (cfg.has(pipeline_mode::cpu_augment)) {
      // The CPU augments within a tolerance of the GPU (docs/augment.md), so cpu-augment's weights
      // are compared with a serial run on the same CPU-augmented batches.
      engine.reset_weights();
      engine.start(pipeline_mode::cpu_augment, s);
      engine.run_cpu_serial(warm + n, s);
      const auto cpu_reference = engine.trained_weights();
      r.verify.merge(
          pipeline_cpu::compare_bitwise(cpu_reference, trained(pipeline_mode::cpu_augment)),
          "cpu-augment vs serial on the CPU-augmented batches");
      augment_config augmented = default_augment_config();
      augmented.batch = cfg.batch;
      const augment_shape shape = make_augment_shape(augmented);
      const auto cpu_batch = engine.cpu_augmented_batch();
      const auto gpu_batch = engine.gpu_augmented_batch(s);
      // OpenCV's batch (when built in) is checked under its own tolerance, with the GPU's
      // batch (identical to the float reference within 1e-3) as the reference.
      r.verify.merge(augment_opencv::built_in()
                         ? augment_opencv::check_output(shape, gpu_batch.data(), cpu_batch.data(),
                                                        ctx.cpu_pool())
                         : augment_cpu::check_output(shape, cpu_batch.data(), gpu_batch.data(),
                                                     ctx.cpu_pool()),
                     "cpu-augment batch vs GPU augment");
    }
    r.verify.method = "trained weights bitwise equal to serial's";
    r.verify.details["steps"] = warm + n;
  }

  // ---- measurements, each sample `steps` steps, reported per step ----
  const stage_work w = pipeline_work(cfg);
  // The engine waits on its ring of host buffers while it enqueues (and the mode rows time the
  // host too): not timed behind a blocking kernel, and no '(batch)' or '(timestamps)' rows (said
  // above). A sample runs n steps; the row is made per step.
  // The products run in f32 on the CUDA cores (cuBLASLt's SIMT kernels): their FMA rate is the
  // compute roof of a row's declared FLOPs.
  const double f32_rate = cuda::flops_per_clock_per_sm(dtype::f32, gpu.dev.info, true);
  const auto step_row = [&](const std::string& name, work_counts wc, double flops,
                            const std::function<void(cudaStream_t)>& body) {
    wc.flops = flops;
    wc.flops_per_clock_per_sm = flops > 0 ? f32_rate : 0;
    gpu_row row = plain_gpu_row(name, {}, body, body_kind::host_synchronous);
    row.finish = [n, wc = std::move(wc), flops](measurement& m) { per_step(m, n, wc, flops); };
    return row;
  };
  const auto measure = [&](const std::string& name, work_counts wc, double flops,
                           const std::function<void(cudaStream_t)>& body) {
    measure_row(r, sampler, opts, step_row(name, std::move(wc), flops, body));
  };
  engine.start(pipeline_mode::serial, s);
  measure("stage_a", {w.a_bytes, 1, "steps"}, w.a_flops,
          [&](cudaStream_t st) { engine.stage_a_only(n, st); });
  measure("stage_b", {w.b_bytes, 1, "steps"}, w.b_flops,
          [&](cudaStream_t st) { engine.stage_b_only(n, st); });
  if (cfg.has(pipeline_mode::cpu_augment) && !interrupt_requested()) {
    auto m = measure_host("stage_a_cpu", opts.measure, {}, [&] { engine.cpu_stage_a_only(n, s); });
    per_step(m, n, {0, 1, "steps"}, 0);
    m.description =
        augment_opencv::built_in()
            ? fmt::format("augment's OpenCV baseline ({}) on each batch, then its upload from "
                          "pinned memory",
                          augment_opencv::row_description(ctx.cpu_pool().size()))
            : fmt::format("{} threads: the augment CPU reference (float32 per-op passes, "
                          "compiler-vectorized, baseline ISA, no -march=native; OpenCV {}) on each "
                          "batch, then its "
                          "upload from pinned memory",
                          ctx.cpu_pool().size(), augment_opencv::absence_reason());
    r.measurements.push_back(std::move(m));
  }
  std::map<pipeline_mode, double> host_per_step;
  for (const auto m : cfg.modes) {
    if (interrupt_requested()) break;
    engine.start(m, s);
    if (warm > 0) engine.run(m, warm, s);
    std::vector<double> host;
    gpu_row row = step_row(
        mode_key(m), {w.a_bytes + w.b_bytes, 1, "steps"}, w.a_flops + w.b_flops,
        [&](cudaStream_t st) {
          const auto t0 = std::chrono::steady_clock::now();
          engine.run(m, n, st);
          host.push_back(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / n);
        });
    // The mode's energy per step, its steps run back to back without the host's timing.
    row.energy = true;
    row.energy_ops = static_cast<double>(n);
    row.energy_unit = "step";
    row.energy_body = [&engine, m, n](cudaStream_t st) { engine.run(m, n, st); };
    measure_row(r, sampler, opts, row);
    if (!host.empty()) host_per_step[m] = summarize(host).median;
  }
  engine.start(pipeline_mode::serial, s); // quiets the cpu-augment loader
  derive_pipeline_figures(r, cfg, w, host_per_step);
  // --energy: the energy per step that overlapping saves against serial.
  if (const auto* serial = r.find(mode_key(pipeline_mode::serial));
      serial != nullptr && serial->energy.value("supported", false))
    for (const auto m : {pipeline_mode::streams, pipeline_mode::graph})
      if (const auto* x = r.find(mode_key(m)); x != nullptr && x->energy.value("supported", false))
        r.derived[fmt::format("{}_energy_saved_vs_serial_fraction", mode_key(m))] =
            1.0 - x->energy.value("j_per_op", 0.0) / serial->energy.value("j_per_op", 1.0);
  return r;
}

// ---- the batch table --------------------------------------------------------------------------

void write_summary(std::ostream& os, const std::vector<const result*>& results) {
  const auto num = [](const result& r, const std::string& key, const char* f) -> std::string {
    const auto it = r.derived.find(key);
    if (it == r.derived.end()) return "-";
    // fmt has no '%' presentation type: percentages are written as "{:.0f}%" of 100 x the value.
    const std::string_view spec(f);
    const bool percent = spec.ends_with("%");
    return fmt::format(fmt::runtime(f), percent ? 100.0 * it->get<double>() : it->get<double>());
  };
  const auto time_of = [](const result& r, const char* name) -> std::string {
    const auto* m = r.find(name);
    return m == nullptr ? "-" : format_seconds(m->median());
  };
  // The shared table writer (text_table.hpp): columns as wide as their widest cell; the speedup
  // columns are "x serial" and their overlap efficiencies "eff".
  text_table t;
  t.header = {"scenario", "batch", "depth", "stage A", "stage B", "serial", "streams", "graph",
              "cpu-aug",  "ideal", "x ser", "eff",     "x ser",   "eff",    "ok"};
  t.right.assign(t.header.size(), true);
  t.right.front() = false;
  t.right.back() = false;
  std::vector<const result*> results_with_rows;
  for (const result* r : results) {
    if (r->status == result_status::skipped || r->status == result_status::error) continue;
    results_with_rows.push_back(r);
    t.rows.push_back(
        {r->params.value("scenario", ""), std::to_string(r->params.value("batch", 0)),
         std::to_string(r->params.value("depth", 0)), time_of(*r, "stage_a"),
         time_of(*r, "stage_b"), num(*r, "serial_steps_per_s", "{:.1f}"),
         num(*r, "streams_steps_per_s", "{:.1f}"), num(*r, "graph_steps_per_s", "{:.1f}"),
         num(*r, "cpu_augment_steps_per_s", "{:.2f}"), num(*r, "ideal_speedup", "{:.2f}x"),
         num(*r, "streams_speedup_vs_serial", "{:.2f}x"),
         num(*r, "streams_overlap_efficiency", "{:.0f}%"),
         num(*r, "graph_speedup_vs_serial", "{:.2f}x"),
         num(*r, "graph_overlap_efficiency", "{:.0f}%"),
         !r->verify.performed ? "-"
         : r->verify.passed   ? "yes"
                              : "NO"});
  }
  // A mode no row ran (cpu-aug unless asked for) leaves a column of dashes: it is left out.
  for (std::size_t c = t.header.size(); c-- > 5;)
    if (constant_column(t, c) && t.rows.front()[c] == "-") erase_column(t, c);
  // One depth for every row (the usual case): said once, above the table, not in a column.
  std::string depth_note;
  constexpr std::size_t depth_column = 2;
  if (constant_column(t, depth_column)) {
    depth_note = fmt::format("; depth {} for every row", t.rows.front()[depth_column]);
    erase_column(t, depth_column);
  }
  // Likewise one verdict for every row (the usual case), so that the table fits 120 columns.
  if (const std::size_t verified_column = t.header.size() - 1;
      constant_column(t, verified_column)) {
    depth_note += fmt::format("; verification {} for every row",
                              verification_word(results_with_rows.front()->verify));
    erase_column(t, verified_column);
  }
  write_wrapped(os,
                fmt::format("pipeline summary (steps/s from the median per-step time for serial, "
                            "streams, graph and cpu-aug; x ser = speedup over serial of streams, "
                            "then of graph; eff = overlap efficiency (T_serial - T_mode) / "
                            "(T_serial - max(tA, tB)); ok = every mode verified against serial, "
                            "- not performed{})",
                            depth_note),
                output_width(), "", "");
  write_text_table(os, t);
  os << "\n";
}

} // namespace

void derive_pipeline_figures(result& r, const pipeline_config& cfg, const stage_work& w,
                             const std::map<pipeline_mode, double>& host_per_step) {
  const auto* a = r.find("stage_a");
  const auto* b = r.find("stage_b");
  const auto* serial = r.find("serial");
  if (w.a_flops > 0) r.derived["stage_a_flops_per_step"] = w.a_flops;
  if (w.b_flops > 0) r.derived["stage_b_flops_per_step"] = w.b_flops;
  double ta = 0;
  double tb = 0;
  if (a != nullptr && b != nullptr && a->median() > 0 && b->median() > 0) {
    ta = a->median();
    tb = b->median();
    r.derived["ideal_speedup"] = (ta + tb) / std::max(ta, tb);
    r.derived["ideal_steps_per_s"] = 1.0 / std::max(ta, tb);
    r.derived["stage_balance_a_over_b"] = ta / tb;
  }
  for (const auto m : cfg.modes) {
    const std::string key = mode_key(m);
    const auto* x = r.find(key);
    if (x == nullptr || x->median() <= 0) continue;
    const double t = x->median();
    r.derived[key + "_steps_per_s"] = 1.0 / t;
    r.derived[key + "_images_per_s"] = cfg.batch / t;
    if (const auto it = host_per_step.find(m); it != host_per_step.end())
      r.derived[key + "_host_seconds_per_step"] = it->second;
    if (m == pipeline_mode::serial || serial == nullptr) continue;
    const double ts = serial->median();
    r.derived[key + "_speedup_vs_serial"] = ts / t;
    if (m == pipeline_mode::cpu_augment) {
      // Against its own serial time estimated from the stages: CPU stage A + GPU stage B.
      const auto* ac = r.find("stage_a_cpu");
      if (ac != nullptr && tb > 0 && ac->median() > 0) {
        const double tac = ac->median();
        r.derived["cpu_augment_ideal_speedup"] = (tac + tb) / std::max(tac, tb);
        // The most the overlap can save is min(tA_cpu, tB). When that is smaller than the spread
        // of the two host-timed figures it is measured against (the CPU stage alone and the mode),
        // the ratio is noise (on an H200, tB is 2% of the CPU stage and the efficiency came out
        // anywhere from -570% to +1140%): it is left out rather than reported.
        const double noise = ac->stats.stddev + x->stats.stddev;
        if (std::min(tac, tb) > 2 * noise)
          r.derived["cpu_augment_overlap_efficiency"] = (tac + tb - t) / std::min(tac, tb);
      }
    } else if (ta > 0 && ts > std::max(ta, tb)) {
      r.derived[key + "_overlap_efficiency"] = (ts - t) / (ts - std::max(ta, tb));
    }
  }
}

pipeline_config pipeline_config_from_point(const point_view& point) {
  pipeline_config c;
  c.scenario = point.word<pipeline_scenario>("scenario", pipeline_scenario_words);
  c.batch = point.get<int>("batch");
  c.depth = point.get<int>("depth");
  c.steps = point.get<int>("steps");
  c.warmup_steps = point.get<int>("warmup-steps");
  c.lr = point.get<float>("lr");
  c.modes = point.words<pipeline_mode>("mode", pipeline_mode_words);
  c.trainer.pool = point.get<int>("pool");
  c.trainer.hidden = point.get<int>("hidden");
  c.trainer.layers = point.get<int>("layers");
  c.trainer.outputs = point.get<int>("outputs");
  c.overlap_strip = point.get<int>("overlap-strip");
  c.coder.in_features = point.get<int>("in-features");
  c.coder.enc_width = point.get<int>("enc-width");
  c.coder.enc_layers = point.get<int>("enc-layers");
  c.coder.dec_width = point.get<int>("dec-width");
  c.coder.dec_layers = point.get<int>("dec-layers");
  return c;
}

const std::vector<param_spec>& pipeline_param_table() {
  using k = param_kind;
  const auto count = [](const char* name, const char* value, const char* help, double lo, double hi,
                        const char* scenario) {
    param_spec s{.name = name, .help = help, .default_value = value, .kind = k::size};
    s.min = lo;
    s.max = hi;
    if (scenario != nullptr) s.only_when = {"scenario", scenario};
    return s;
  };
  const char* const train = "augment-train";
  const char* const encdec = "encoder-decoder";
  static const std::vector<param_spec> table{
      {.name = "scenario",
       .help = "which two stages run (a list sweeps)",
       .default_value = "all",
       .sweepable = true,
       .kind = k::word,
       .choices = word_names<pipeline_scenario>(pipeline_scenario_words)},
      {.name = "mode",
       .help = "serial, streams, graph, cpu-augment (augment-train); serial always runs",
       .default_value = "all",
       .kind = k::words,
       .choices = word_names<pipeline_mode>(pipeline_mode_words)},
      {.name = "batch",
       .help = "images (samples) per step: 32, lists 8,32,128, ranges 8:256:x2",
       .default_value = "32",
       .sweepable = true,
       .kind = k::size,
       .min = 1,
       .max = max_batch},
      {.name = "depth",
       .help = "buffers in the ring between the stages",
       .default_value = "2",
       .sweepable = true,
       .kind = k::size,
       .min = 1,
       .max = 8},
      count("steps", "20", "steps per timed sample (also the verified steps after the warm-up)", 1,
            1000, nullptr),
      count("warmup-steps", "2", "untimed steps before timing and verification (at most --steps)",
            0, 1000, nullptr),
      {.name = "lr",
       .help = "SGD learning rate of the trained network",
       .default_value = "0.001",
       .kind = k::number,
       .min = 0,
       .max = 10,
       .min_exclusive = true},
      count("pool", "8",
            "augment-train: average-pool window applied to the 3x256x256 augmented image "
            "(divides 256)",
            1, 256, train),
      count("hidden", "2048", "augment-train: width of the hidden layers", 1, max_width, train),
      count("layers", "2", "augment-train: hidden layers", 0, 16, train),
      count("outputs", "10", "augment-train: outputs (regression targets)", 1, max_width, train),
      count("overlap-strip", "4",
            "augment-train: tiles per block of the augment kernel beside stage B (streams, "
            "graph): 1, 2, 4, 8, or 0 for the choice made when it runs alone",
            0, 8, train),
      count("in-features", "1024", "encoder-decoder: input features (and decoder outputs)", 1,
            max_width, encdec),
      count("enc-width", "2048", "encoder-decoder: width of every encoder layer (the features)", 1,
            max_width, encdec),
      count("enc-layers", "4", "encoder-decoder: encoder layers (frozen, forward only)", 1, 16,
            encdec),
      count("dec-width", "1024", "encoder-decoder: width of the decoder's hidden layers", 1,
            max_width, encdec),
      count("dec-layers", "1", "encoder-decoder: decoder hidden layers (trained)", 0, 16, encdec),
  };
  return table;
}

benchmark make_pipeline_benchmark() {
  benchmark b(
      "pipeline",
      "two stages per step on one stream, two streams or a CUDA graph, vs the ideal "
      "overlap (augment + train, encoder + decoder)",
      "Examples:\n"
      "  gpubench pipeline\n"
      "  gpubench pipeline --scenario augment-train --batch 8,32,128\n"
      "  gpubench pipeline --scenario encoder-decoder --batch 8:256:x2 --mode "
      "serial,streams,graph\n"
      "  gpubench pipeline --scenario augment-train --mode all --depth 2,3 --format json --output "
      "p.json\n"
      "  gpubench pipeline --scenario encoder-decoder --enc-layers 6 --dec-width 2048\n"
      "Each timed sample runs --steps steps (after --warmup-steps untimed ones) and is reported\n"
      "per step. serial always runs: it is the baseline and the verification reference.\n"
      "Both scenarios need a GPU: pipeline has no --cpu-only.\n");
  b.params = pipeline_param_table();
  b.supports_cpu_only = false;
  b.finish_point = finish_pipeline_point;
  b.check_plan = check_pipeline_plan;
  b.run_point = run_pipeline_point;
  b.device_bytes = [](const point_view& point) {
    return pipeline_device_bytes(pipeline_config_from_point(point));
  };
  b.after_point.verify_failure = "a mode's trained weights differ from serial's";
  b.summary_table = write_summary;
  complete_declaration(b);
  return b;
}

} // namespace gpubench
