// pipeline's settings: names, the networks of each scenario, the work each stage does and the
// device memory a point needs.
#include "gpubench/augment/augment_bench.hpp"
#include "gpubench/augment/augment_params.hpp"
#include "gpubench/cuda/augment.hpp"
#include "gpubench/pipeline/pipeline.hpp"

namespace gpubench {

namespace {

template <class E, std::size_t N>
std::string_view name_in(const std::array<word_choice<E>, N>& words, E value) noexcept {
  for (const auto& w : words)
    if (w.value == value) return w.name;
  return "?";
}

} // namespace

std::string_view scenario_name(pipeline_scenario s) noexcept {
  return name_in(pipeline_scenario_words, s);
}

std::string_view mode_name(pipeline_mode m) noexcept { return name_in(pipeline_mode_words, m); }

bool pipeline_config::has(pipeline_mode m) const noexcept {
  for (const auto x : modes)
    if (x == m) return true;
  return false;
}

augment_config pipeline_augment_config(int batch) {
  // The augment benchmark's defaults (its parameter table): 3 x 256 x 256, crop 128, resize 256.
  augment_config a = default_augment_config();
  a.batch = batch;
  return a;
}

namespace {

int pooled_features(const pipeline_config& cfg) {
  const augment_config a = pipeline_augment_config(cfg.batch);
  const int side = a.resize / cfg.trainer.pool;
  return a.channels * side * side;
}

std::vector<int> widths(int in, int width, int hidden_layers, int out) {
  std::vector<int> s{in};
  for (int l = 0; l < hidden_layers; ++l) s.push_back(width);
  s.push_back(out);
  return s;
}

} // namespace

std::size_t pipeline_slot_floats(const pipeline_config& cfg) {
  const auto batch = static_cast<std::size_t>(cfg.batch);
  if (cfg.scenario == pipeline_scenario::augment_train) {
    const augment_shape shape = make_augment_shape(pipeline_augment_config(cfg.batch));
    return batch * shape.channels * shape.output_pixels();
  }
  return batch * static_cast<std::size_t>(cfg.coder.enc_width);
}

cuda::mlp_shape trainer_shape(const pipeline_config& cfg) {
  return {widths(pooled_features(cfg), cfg.trainer.hidden, cfg.trainer.layers, cfg.trainer.outputs),
          false};
}

cuda::mlp_shape encoder_shape(const pipeline_config& cfg) {
  std::vector<int> s{cfg.coder.in_features};
  for (int l = 0; l < cfg.coder.enc_layers; ++l) s.push_back(cfg.coder.enc_width);
  return {s, true};
}

cuda::mlp_shape decoder_shape(const pipeline_config& cfg) {
  return {
      widths(cfg.coder.enc_width, cfg.coder.dec_width, cfg.coder.dec_layers, cfg.coder.in_features),
      false};
}

stage_work pipeline_work(const pipeline_config& cfg) {
  stage_work w;
  const double b = cfg.batch;
  if (cfg.scenario == pipeline_scenario::augment_train) {
    const augment_shape shape = make_augment_shape(pipeline_augment_config(cfg.batch));
    const double upload = b * shape.channels * static_cast<double>(shape.input_pixels());
    w.a_bytes = upload + cuda::augment_fused_bytes(shape);
    const auto t = trainer_shape(cfg);
    w.b_flops = t.train_flops(cfg.batch);
    w.b_bytes = static_cast<double>(cuda::augment_output_bytes(shape)) + t.train_bytes(cfg.batch);
  } else {
    const auto e = encoder_shape(cfg);
    const auto d = decoder_shape(cfg);
    w.a_flops = e.forward_flops(cfg.batch);
    w.a_bytes = e.forward_bytes(cfg.batch);
    w.b_flops = d.train_flops(cfg.batch);
    w.b_bytes = d.train_bytes(cfg.batch) + 4.0 * b * cfg.coder.in_features; // targets read
  }
  return w;
}

namespace {

std::size_t mlp_bytes(const cuda::mlp_shape& s, int batch, bool trained) {
  std::size_t acts = 0;
  std::size_t masks = 0; // a trained network's ReLU bit masks, rows rounded up to 128 bits
  for (std::size_t l = 1; l < s.sizes.size(); ++l) {
    acts += static_cast<std::size_t>(s.sizes[l]);
    if (trained && l + 1 < s.sizes.size())
      masks += (static_cast<std::size_t>(s.sizes[l]) + 127) / 128 * 16;
  }
  return 4 * (s.param_count() * (trained ? 2 : 1) +
              static_cast<std::size_t>(batch) * (acts + 2 * static_cast<std::size_t>(s.widest()))) +
         static_cast<std::size_t>(batch) * masks;
}

} // namespace

std::size_t pipeline_device_bytes(const pipeline_config& cfg) {
  const auto depth = static_cast<std::size_t>(cfg.depth);
  const auto batch = static_cast<std::size_t>(cfg.batch);
  std::size_t n = 2 * cuda::blas_handle::workspace_bytes;
  if (cfg.scenario == pipeline_scenario::augment_train) {
    const augment_shape shape = make_augment_shape(pipeline_augment_config(cfg.batch));
    n += batch * shape.channels * shape.input_pixels(); // uint8 upload target
    n += depth * cuda::augment_output_bytes(shape);     // ring between the stages
    n += depth * batch *
         (sizeof(augment_sample) + 4 * static_cast<std::size_t>(cfg.trainer.outputs));
    n += 4 * batch * static_cast<std::size_t>(pooled_features(cfg));
    n += mlp_bytes(trainer_shape(cfg), cfg.batch, true);
  } else {
    n += depth * batch * 4 * static_cast<std::size_t>(cfg.coder.in_features + cfg.coder.enc_width);
    n += mlp_bytes(encoder_shape(cfg), cfg.batch, false);
    n += mlp_bytes(decoder_shape(cfg), cfg.batch, true);
  }
  return n;
}

} // namespace gpubench
