// `gpubench pipeline`: parameters and their validation, the plan, one point's run (bitwise
// verification of every mode against serial, then stage and mode timings) and the batch table.
#include "gpubench/pipeline_bench.hpp"

#include "gpubench/augment_cpu.hpp"
#include "gpubench/augment_params.hpp"
#include "gpubench/cuda/device.hpp"
#include "gpubench/cuda/stream.hpp"
#include "gpubench/errors.hpp"
#include "gpubench/pipeline_cpu.hpp"
#include "gpubench/report.hpp"
#include "gpubench/sizes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <ostream>

namespace gpubench {

using nlohmann::json;

namespace {

constexpr std::uint64_t max_batch = 4096;
constexpr std::uint64_t max_width = 16384;

int int_option(const param_values& v, const char* name, std::uint64_t lo, std::uint64_t hi) {
  const auto x = parse_size(value_of(v, name), name);
  if (x < lo || x > hi)
    throw usage_error(fmt::format("--{}: {} is out of range ({} to {})", name, x, lo, hi));
  return static_cast<int>(x);
}

std::vector<int> int_list(const param_values& v, const char* name, std::uint64_t lo,
                          std::uint64_t hi) {
  std::vector<int> out;
  for (const auto x : parse_size_list(value_of(v, name), name)) {
    if (x < lo || x > hi)
      throw usage_error(fmt::format("--{}: {} is out of range ({} to {})", name, x, lo, hi));
    out.push_back(static_cast<int>(x));
  }
  return out;
}

const std::vector<std::string> gpu_modes{"serial", "streams", "graph"};

std::vector<json> plan_pipeline(const param_values& v, const common_options& opts) {
  (void)opts; // --cpu-only is refused by the runner (supports_cpu_only = false)
  const auto scenarios =
      parse_word_list(value_of(v, "scenario"), "scenario", {"augment-train", "encoder-decoder"},
                      {"augment-train", "encoder-decoder"});
  const std::string& mode_text = value_of(v, "mode");
  const auto modes =
      parse_word_list(mode_text, "mode", {"serial", "streams", "graph", "cpu-augment"},
                      {"serial", "streams", "graph", "cpu-augment"});
  const bool explicit_cpu = mode_text.find("cpu-augment") != std::string::npos;
  if (explicit_cpu &&
      std::find(scenarios.begin(), scenarios.end(), "augment-train") == scenarios.end())
    throw usage_error("--mode: cpu-augment runs stage A (augmentation) on the CPU and needs "
                      "--scenario augment-train");
  const auto batches = int_list(v, "batch", 1, max_batch);
  const auto depths = int_list(v, "depth", 1, 8);
  const int steps = int_option(v, "steps", 1, 1000);
  const int warmup = int_option(v, "warmup-steps", 0, 1000);
  if (steps < warmup)
    throw usage_error(fmt::format("--steps: {} is below --warmup-steps {}: the verified and timed "
                                  "steps must be at least as many as the warm-up",
                                  steps, warmup));
  const auto lrs = parse_number_list(value_of(v, "lr"), "lr");
  if (lrs.size() != 1 || !(lrs[0] > 0 && lrs[0] <= 10))
    throw usage_error(fmt::format("--lr: '{}' is not one number in (0, 10]", value_of(v, "lr")));
  const int pool = int_option(v, "pool", 1, 256);
  const augment_config aug;
  if (aug.resize % pool != 0)
    throw usage_error(
        fmt::format("--pool: {} does not divide the augmented image side {}", pool, aug.resize));
  const int overlap_strip = int_option(v, "overlap-strip", 0, 8);
  if (overlap_strip != 0 && (overlap_strip & (overlap_strip - 1)) != 0)
    throw usage_error(fmt::format("--overlap-strip: {} is not 0, 1, 2, 4 or 8", overlap_strip));
  const int hidden = int_option(v, "hidden", 1, max_width);
  const int layers = int_option(v, "layers", 0, 16);
  const int outputs = int_option(v, "outputs", 1, max_width);
  const int in_features = int_option(v, "in-features", 1, max_width);
  const int enc_width = int_option(v, "enc-width", 1, max_width);
  const int enc_layers = int_option(v, "enc-layers", 1, 16);
  const int dec_width = int_option(v, "dec-width", 1, max_width);
  const int dec_layers = int_option(v, "dec-layers", 0, 16);

  std::vector<json> points;
  for (const auto& sc : scenarios)
    for (const int b : batches)
      for (const int d : depths) {
        // Canonical order; serial always (the baseline and the verification reference).
        std::string mode_list = "serial";
        for (const char* m : {"streams", "graph", "cpu-augment"}) {
          if (std::string_view(m) == "cpu-augment" && sc != "augment-train") continue;
          if (std::find(modes.begin(), modes.end(), m) != modes.end())
            mode_list += std::string(",") + m;
        }
        json p{{"scenario", sc},         {"batch", b},        {"depth", d},  {"steps", steps},
               {"warmup-steps", warmup}, {"mode", mode_list}, {"lr", lrs[0]}};
        if (sc == "augment-train") {
          p["pool"] = pool;
          p["hidden"] = hidden;
          p["layers"] = layers;
          p["outputs"] = outputs;
          p["overlap-strip"] = overlap_strip;
        } else {
          p["in-features"] = in_features;
          p["enc-width"] = enc_width;
          p["enc-layers"] = enc_layers;
          p["dec-width"] = dec_width;
          p["dec-layers"] = dec_layers;
        }
        points.push_back(std::move(p));
      }
  return points;
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
  m.work = std::move(w);
  finalize(m);
  if (flops > 0 && m.median() > 0) m.rates["flop_per_s"] = flops / m.median();
}

result run_pipeline_point(const json& point, run_context& ctx) {
  const auto& opts = ctx.options();
  const pipeline_config cfg = pipeline_config_from_point(point);
  const int device = point_device(point);
  const std::string label = fmt::format("pipeline {} batch {} depth {}",
                                        scenario_name(cfg.scenario), cfg.batch, cfg.depth);
  result r;
  r.params = point;

  const cuda::scoped_device guard(device);
  const device_record& dev = ctx.device(device);
  cuda::require_device_memory(pipeline_device_bytes(cfg) +
                                  static_cast<std::size_t>(std::max(dev.info.l2_bytes, 0)),
                              label.c_str());
  const cuda::stream main_stream;
  const cudaStream_t s = main_stream.get();
  cuda::l2_flusher flusher(dev.info.l2_bytes);
  gpu_sampler sampler(s, &flusher);
  pipeline_engine engine(cfg, opts.seed, ctx.cpu_pool());
  const int n = cfg.steps;
  const int warm = cfg.warmup_steps;

  // ---- verification: the same steps from the same seed in every mode ----
  const std::string corrupt = point.value(pipeline_corrupt_key, "");
  const auto trained = [&](pipeline_mode m) {
    engine.reset_weights();
    engine.start(m, s);
    if (warm > 0) engine.run(m, warm, s);
    engine.run(m, n, s);
    auto w = engine.trained_weights();
    if (corrupt == mode_name(m) && !w.empty()) {
      std::uint32_t bits = 0;
      std::memcpy(&bits, &w[w.size() / 2], sizeof bits);
      bits ^= 1U;
      std::memcpy(&w[w.size() / 2], &bits, sizeof bits);
    }
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
      const augment_shape shape = make_augment_shape([&] {
        augment_config a;
        a.batch = cfg.batch;
        return a;
      }());
      const auto cpu_batch = engine.cpu_augmented_batch();
      const auto gpu_batch = engine.gpu_augmented_batch(s);
      r.verify.merge(
          augment_cpu::check_output(shape, cpu_batch.data(), gpu_batch.data(), ctx.cpu_pool()),
          "cpu-augment batch vs GPU augment");
    }
    r.verify.method = "trained weights bitwise equal to serial's";
    r.verify.details["steps"] = warm + n;
    if (!r.verify.passed) {
      r.status = result_status::failed;
      r.reason = "a mode's trained weights differ from serial's";
    }
  }

  // ---- measurements, each sample `steps` steps, reported per step ----
  const stage_work w = pipeline_work(cfg);
  const auto measure = [&](const std::string& name, work_counts wc, double flops,
                           const std::function<void(cudaStream_t)>& body) {
    if (interrupt_requested()) return;
    auto m = sampler.run(name, opts.measure, {}, body);
    per_step(m, n, std::move(wc), flops);
    r.measurements.push_back(std::move(m));
  };
  engine.start(pipeline_mode::serial, s);
  measure("stage_a", {w.a_bytes, 1, "steps"}, w.a_flops,
          [&](cudaStream_t st) { engine.stage_a_only(n, st); });
  measure("stage_b", {w.b_bytes, 1, "steps"}, w.b_flops,
          [&](cudaStream_t st) { engine.stage_b_only(n, st); });
  if (cfg.has(pipeline_mode::cpu_augment) && !interrupt_requested()) {
    auto m = measure_host("stage_a_cpu", opts.measure, {}, [&] { engine.cpu_stage_a_only(n, s); });
    per_step(m, n, {0, 1, "steps"}, 0);
    r.measurements.push_back(std::move(m));
  }
  std::map<pipeline_mode, double> host_per_step;
  for (const auto m : cfg.modes) {
    if (interrupt_requested()) break;
    engine.start(m, s);
    if (warm > 0) engine.run(m, warm, s);
    std::vector<double> host;
    measure(mode_key(m), {w.a_bytes + w.b_bytes, 1, "steps"}, w.a_flops + w.b_flops,
            [&](cudaStream_t st) {
              const auto t0 = std::chrono::steady_clock::now();
              engine.run(m, n, st);
              host.push_back(
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / n);
            });
    if (!host.empty()) host_per_step[m] = summarize(host).median;
  }
  engine.start(pipeline_mode::serial, s); // quiets the cpu-augment loader
  derive_pipeline_figures(r, cfg, w, host_per_step);
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
  os << "pipeline summary (steps/s from the median per-step time; eff = overlap efficiency "
        "(T_serial - T_mode) / (T_serial - max(tA, tB)))\n";
  os << fmt::format("  {:<16} {:>6} {:>5} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>7} {:>8} "
                    "{:>6} {:>8} {:>6}  {}\n",
                    "scenario", "batch", "depth", "stage A", "stage B", "serial", "streams",
                    "graph", "cpu-aug", "ideal", "streams", "eff", "graph", "eff", "verification");
  for (const result* r : results) {
    if (r->status == result_status::skipped || r->status == result_status::error) continue;
    os << fmt::format(
        "  {:<16} {:>6} {:>5} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>7} {:>8} {:>6} {:>8} "
        "{:>6}  {}\n",
        r->params.value("scenario", ""), r->params.value("batch", 0), r->params.value("depth", 0),
        time_of(*r, "stage_a"), time_of(*r, "stage_b"), num(*r, "serial_steps_per_s", "{:.1f}"),
        num(*r, "streams_steps_per_s", "{:.1f}"), num(*r, "graph_steps_per_s", "{:.1f}"),
        num(*r, "cpu_augment_steps_per_s", "{:.2f}"), num(*r, "ideal_speedup", "{:.2f}x"),
        num(*r, "streams_speedup_vs_serial", "{:.2f}x"),
        num(*r, "streams_overlap_efficiency", "{:.0f}%"),
        num(*r, "graph_speedup_vs_serial", "{:.2f}x"),
        num(*r, "graph_overlap_efficiency", "{:.0f}%"),
        !r->verify.performed ? "not performed"
        : r->verify.passed   ? "passed"
                             : "FAILED");
  }
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

pipeline_config pipeline_config_from_point(const json& point) {
  pipeline_config c;
  c.scenario = point.at("scenario") == "encoder-decoder" ? pipeline_scenario::encoder_decoder
                                                         : pipeline_scenario::augment_train;
  c.batch = point.at("batch").get<int>();
  c.depth = point.at("depth").get<int>();
  c.steps = point.at("steps").get<int>();
  c.warmup_steps = point.at("warmup-steps").get<int>();
  c.lr = point.at("lr").get<float>();
  c.modes.clear();
  const std::string modes = point.at("mode").get<std::string>();
  for (const auto m : {pipeline_mode::serial, pipeline_mode::streams, pipeline_mode::graph,
                       pipeline_mode::cpu_augment}) {
    const std::string name(mode_name(m));
    if (("," + modes + ",").find("," + name + ",") != std::string::npos) c.modes.push_back(m);
  }
  c.pool = point.value("pool", c.pool);
  c.hidden = point.value("hidden", c.hidden);
  c.layers = point.value("layers", c.layers);
  c.outputs = point.value("outputs", c.outputs);
  c.overlap_strip = point.value("overlap-strip", c.overlap_strip);
  c.in_features = point.value("in-features", c.in_features);
  c.enc_width = point.value("enc-width", c.enc_width);
  c.enc_layers = point.value("enc-layers", c.enc_layers);
  c.dec_width = point.value("dec-width", c.dec_width);
  c.dec_layers = point.value("dec-layers", c.dec_layers);
  return c;
}

benchmark make_pipeline_benchmark() {
  benchmark b;
  b.name = "pipeline";
  b.summary = "two stages per step on one stream, two streams or a CUDA graph, vs the ideal "
              "overlap (augment + train, encoder + decoder)";
  b.examples =
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
      "--cpu-only is refused: both scenarios need a GPU.\n";
  b.params = {
      {"scenario", "augment-train, encoder-decoder or all", "all", true},
      {"mode", "serial, streams, graph, cpu-augment (augment-train) or all", "all", false},
      {"batch", "images (samples) per step: 32, lists 8,32,128, ranges 8:256:x2", "32", true},
      {"depth", "buffers in the ring between the stages (1 to 8)", "2", true},
      {"steps", "steps per timed sample (also the verified steps after the warm-up)", "20", false},
      {"warmup-steps", "untimed steps before timing and verification (at most --steps)", "2",
       false},
      {"lr", "SGD learning rate of the trained network", "0.001", false},
      {"pool", "augment-train: average-pool window applied to the 3x256x256 augmented image", "8",
       false},
      {"hidden", "augment-train: width of the hidden layers", "2048", false},
      {"layers", "augment-train: hidden layers", "2", false},
      {"outputs", "augment-train: outputs (regression targets)", "10", false},
      {"overlap-strip",
       "augment-train: tiles per block of the augment kernel beside stage B (streams, graph): "
       "1, 2, 4, 8, or 0 for the choice made when it runs alone",
       "4", false},
      {"in-features", "encoder-decoder: input features (and decoder outputs)", "1024", false},
      {"enc-width", "encoder-decoder: width of every encoder layer (the features)", "2048", false},
      {"enc-layers", "encoder-decoder: encoder layers (frozen, forward only)", "4", false},
      {"dec-width", "encoder-decoder: width of the decoder's hidden layers", "1024", false},
      {"dec-layers", "encoder-decoder: decoder hidden layers (trained)", "1", false},
  };
  b.supports_cpu_only = false;
  b.plan = plan_pipeline;
  b.run_point = run_pipeline_point;
  b.summary_table = write_summary;
  return b;
}

} // namespace gpubench
