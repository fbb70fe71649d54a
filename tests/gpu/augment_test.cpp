// Both augment implementations against the CPU reference, every element, outputs poisoned first:
// several shapes (non-square, crop = size, 1 to 5 channels, partial tiles, odd sizes), angles 0 to
// 180, nearest and bilinear, blur 1 to 31, batch 1 and odd batches, every output dtype. Then the
// driver end to end, and the device-memory check.
#include "gpubench/augment/augment_bench.hpp"
#include "gpubench/augment/augment_cpu.hpp"
#include "gpubench/augment/augment_opencv.hpp"
#include "gpubench/augment/augment_params.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/cuda/augment.hpp"
#include "gpubench/cuda/memory.hpp"
#include "gpubench/cuda/stream.hpp"

#include "common.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

using namespace gpubench;
using Catch::Matchers::Contains;

namespace {

struct outcome {
  verification staged;
  verification fused;
  bool identical = false; ///< staged and fused outputs equal byte for byte
};

/// Runs the CPU reference and both GPU implementations on the same synthetic batch.
outcome run_all(const augment_config& cfg, thread_pool& pool, int fused_strip = 0,
                int fused_tail = -1) {
  const auto seed = fresh_seed();
  augment_shape shape = make_augment_shape(cfg);
  shape.fused_strip = fused_strip;
  shape.fused_tail = fused_tail;
  const auto batch = static_cast<std::size_t>(cfg.batch);
  const std::size_t in_n = batch * cfg.channels * shape.input_pixels();
  const std::size_t out_n = batch * cfg.channels * shape.output_pixels();
  std::vector<std::uint8_t> input(in_n);
  fill_synthetic_images(input.data(), cfg, seed, cfg.batch, pool);
  const auto samples = draw_augment_samples(cfg, seed, 1, cfg.batch);
  std::vector<float> ref(out_n);
  augment_cpu::augment_batch(input.data(), shape, samples, ref.data(), pool);

  const std::size_t out_bytes = cuda::augment_output_bytes(shape);
  cuda::device_buffer<std::uint8_t> d_in(in_n);
  cuda::device_buffer<augment_sample> d_samples(batch);
  cuda::device_buffer<std::byte> d_staged(out_bytes);
  cuda::device_buffer<std::byte> d_fused(out_bytes);
  const std::size_t images = batch * cfg.channels;
  cuda::device_buffer<float> full(images * shape.input_pixels());
  cuda::device_buffer<float> cropped(images * static_cast<std::size_t>(cfg.crop) * cfg.crop);
  cuda::device_buffer<float> resized(out_n);
  cuda::device_buffer<float> rotated(out_n);
  cuda::device_buffer<float> blurred(out_n);
  GPUBENCH_CUDA_TRY(cudaMemcpy(d_in.data(), input.data(), in_n, cudaMemcpyHostToDevice));
  GPUBENCH_CUDA_TRY(cudaMemcpy(d_samples.data(), samples.data(), batch * sizeof(augment_sample),
                               cudaMemcpyHostToDevice));
  // Poison: all-ones bytes are NaN in every float type.
  for (auto* b : {&full, &cropped, &resized, &rotated, &blurred})
    GPUBENCH_CUDA_TRY(cudaMemset(b->data(), 0xFF, b->bytes()));
  GPUBENCH_CUDA_TRY(cudaMemset(d_staged.data(), 0xFF, out_bytes));
  GPUBENCH_CUDA_TRY(cudaMemset(d_fused.data(), 0xFF, out_bytes));
  // Legacy-stream copies and memsets do not order work on non-blocking streams: wait for them.
  GPUBENCH_CUDA_TRY(cudaDeviceSynchronize());
  const cuda::stream s;
  cuda::launch_augment_staged(
      shape, d_in.data(), d_samples.data(),
      {full.data(), cropped.data(), resized.data(), rotated.data(), blurred.data()},
      d_staged.data(), s.get());
  cuda::launch_augment_fused(shape, d_in.data(), d_samples.data(), d_fused.data(), s.get());
  s.synchronize();
  std::vector<std::byte> staged(out_bytes);
  std::vector<std::byte> fused(out_bytes);
  GPUBENCH_CUDA_TRY(cudaMemcpy(staged.data(), d_staged.data(), out_bytes, cudaMemcpyDeviceToHost));
  GPUBENCH_CUDA_TRY(cudaMemcpy(fused.data(), d_fused.data(), out_bytes, cudaMemcpyDeviceToHost));
  outcome o;
  o.staged = augment_cpu::check_output(shape, ref.data(), staged.data(), pool);
  o.fused = augment_cpu::check_output(shape, ref.data(), fused.data(), pool);
  o.identical = std::memcmp(staged.data(), fused.data(), out_bytes) == 0;
  return o;
}

std::string describe(const augment_config& c) {
  return "batch " + std::to_string(c.batch) + ", " + std::to_string(c.channels) + "x" +
         std::to_string(c.height) + "x" + std::to_string(c.width) + ", crop " +
         std::to_string(c.crop) + " -> " + std::to_string(c.resize) + ", degrees " +
         std::to_string(c.degrees) +
         (c.interp == augment_interp::nearest ? ", nearest" : ", bilinear") + ", blur " +
         std::to_string(c.blur) + ", out " + std::string(dtype_name(c.out));
}

void check_all(const augment_config& cfg, thread_pool& pool, int fused_strip = 0,
               int fused_tail = -1) {
  INFO(describe(cfg) << "; fused strip " << fused_strip << ", tail " << fused_tail << "; seed "
                     << fresh_seed());
  const outcome o = run_all(cfg, pool, fused_strip, fused_tail);
  INFO("staged: max |error| " << o.staged.max_abs_error << ", mismatches " << o.staged.mismatches
                              << ", " << o.staged.details.dump());
  INFO("fused: max |error| " << o.fused.max_abs_error << ", mismatches " << o.fused.mismatches
                             << ", " << o.fused.details.dump());
  CHECK(o.staged.passed);
  CHECK(o.fused.passed);
  CHECK(o.staged.mismatches == 0);
  CHECK(o.fused.mismatches == 0);
  // Same arithmetic in both implementations: the same bits.
  CHECK(o.identical);
}

augment_config make(int batch, int channels, int h, int w, int crop, int resize, double degrees,
                    augment_interp interp, int blur, dtype out) {
  augment_config c;
  c.batch = batch;
  c.channels = channels;
  c.height = h;
  c.width = w;
  c.crop = crop;
  c.resize = resize;
  c.degrees = degrees;
  c.interp = interp;
  c.blur = blur;
  c.out = out;
  return c;
}

constexpr auto nearest = augment_interp::nearest;
constexpr auto bilinear = augment_interp::bilinear;

} // namespace

TEST_CASE("augment: the default pipeline matches the CPU reference in every output dtype",
          "[augment]") {
  thread_pool pool;
  const auto out = GENERATE(dtype::f32, dtype::f16, dtype::bf16);
  const auto interp = GENERATE(nearest, bilinear);
  check_all(make(5, 3, 256, 256, 128, 256, 45, interp, 7, out), pool);
}

TEST_CASE("augment: shapes, channels, angles and blur sizes", "[augment]") {
  thread_pool pool;
  SECTION("non-square image, downscaling, generic blur radius") {
    check_all(make(3, 3, 200, 300, 150, 100, 30, bilinear, 5, dtype::f16), pool);
    check_all(make(3, 3, 300, 200, 150, 100, 30, nearest, 5, dtype::f32), pool);
  }
  SECTION("crop equal to the image, one channel, 90 degrees, batch 1") {
    check_all(make(1, 1, 64, 64, 64, 96, 90, nearest, 7, dtype::bf16), pool);
    check_all(make(1, 1, 64, 64, 64, 96, 90, bilinear, 7, dtype::f32), pool);
  }
  SECTION("four channels, no rotation, per-channel normalize") {
    auto c = make(7, 4, 96, 80, 80, 256, 0, bilinear, 3, dtype::f32);
    c.mean = {10.0F, 20.0F, 30.0F, 40.0F};
    c.stddev = {2.0F, 0.5F, 4.0F, 1.0F};
    check_all(c, pool);
    c.interp = nearest;
    c.out = dtype::f16;
    check_all(c, pool);
  }
  SECTION("five channels (two channel groups), an output side not a multiple of 4") {
    check_all(make(2, 5, 100, 90, 60, 77, 60, nearest, 9, dtype::f32), pool);
    check_all(make(3, 5, 100, 90, 60, 77, 60, bilinear, 7, dtype::bf16), pool);
  }
  SECTION("the largest blur on a small output, 180 degrees") {
    check_all(make(3, 2, 50, 50, 40, 40, 180, nearest, 31, dtype::f16), pool);
    check_all(make(3, 2, 50, 50, 40, 40, 180, bilinear, 31, dtype::f32), pool);
  }
  SECTION("an output side above the shared-memory tap table") {
    check_all(make(1, 1, 80, 80, 64, 1100, 20, nearest, 7, dtype::f32), pool);
  }
  SECTION("tiny outputs") {
    check_all(make(2, 3, 5, 5, 1, 1, 45, nearest, 1, dtype::f32), pool);
    check_all(make(3, 1, 9, 7, 3, 6, 45, bilinear, 3, dtype::f32), pool);
  }
  SECTION("blur 1 and sigma fixed") {
    auto c = make(9, 3, 128, 128, 100, 128, 45, nearest, 1, dtype::f32);
    c.sigma_lo = c.sigma_hi = 0.5;
    check_all(c, pool);
  }
}

TEST_CASE("augment: nearest rotation picks the same source pixel as the CPU", "[augment]") {
  // crop = resize (the resize is exact), blur 1 (exact), mean 0, std 1: every output is one input
  // pixel, so any difference in the coordinate arithmetic shows as a whole pixel value.
  thread_pool pool;
  const auto side = GENERATE(63, 64, 130);
  const auto degrees = GENERATE(0.0, 90.0, 180.0);
  auto c = make(5, 3, side + 11, side + 5, side, side, degrees, nearest, 1, dtype::f32);
  INFO(describe(c) << "; seed " << fresh_seed());
  const outcome o = run_all(c, pool);
  CHECK(o.staged.max_abs_error == 0.0);
  CHECK(o.fused.max_abs_error == 0.0);
  CHECK(o.staged.mismatches == 0);
  CHECK(o.fused.mismatches == 0);
}

TEST_CASE("augment: bilinear rotation at any angle uses the same weights as the CPU", "[augment]") {
  thread_pool pool;
  auto c = make(7, 1, 70, 70, 64, 64, 180, bilinear, 1, dtype::f32);
  INFO(describe(c) << "; seed " << fresh_seed());
  const outcome o = run_all(c, pool);
  CHECK(o.staged.mismatches == 0);
  CHECK(o.fused.mismatches == 0);
  CHECK(o.fused.max_abs_error < 1e-3);
}

TEST_CASE("augment: the driver verifies and measures every implementation", "[augment]") {
  common_options opts;
  opts.measure.min_samples = 2;
  opts.measure.max_samples = 3;
  opts.measure.min_time = 0;
  opts.measure.timeout = 0.5;
  opts.verbosity = 0;
  opts.seed = fresh_seed();
  run_context ctx(opts);
  const benchmark b = make_augment_benchmark();
  const auto points = b.plan(with_defaults(b, {{"batch", "3,4"}, {"out-dtype", "f16"}}), opts);
  REQUIRE(points.size() == 2);
  for (auto point : points) {
    point["device"] = 0;
    const result r = run_point(b, point, ctx);
    INFO(r.verify.details.dump());
    CHECK(r.status == result_status::ok);
    CHECK(r.verify.performed);
    CHECK(r.verify.passed);
    CHECK(r.verify.details.contains("staged"));
    CHECK(r.verify.details.contains("fused"));
    for (const char* name : {"cpu_reference", "staged", "fused", "h2d"}) {
      INFO(name);
      REQUIRE(r.find(name) != nullptr);
      CHECK(r.find(name)->work.items == point["batch"].get<double>());
    }
    for (const char* key : {"speedup_fused_vs_staged", "speedup_fused_vs_cpu_reference",
                            "speedup_fused_with_upload_vs_cpu_reference", "fused_images_per_s"}) {
      INFO(key);
      CHECK(r.derived.contains(key));
    }
    CHECK(r.find("fused")->rates.contains("fraction_of_theoretical_peak"));
    // Both implementations declare the same pixel arithmetic, and sit under their roof.
    const double flops =
        r.derived.value("flops_blur", 0.0) + r.derived.value("flops_normalize", 0.0);
    CHECK(flops > 0);
    for (const char* name : {"staged", "fused"}) {
      INFO(name);
      CHECK(r.find(name)->work.flops == flops); // nearest sampling: no resize or rotate FLOPs
      const double of_roof = r.find(name)->rates.value("fraction_of_roof", 0.0);
      CHECK(of_roof > 0);
      CHECK(of_roof < 1.05);
    }
    CHECK(r.find("h2d")->work.flops == 0);
    // The OpenCV baseline, when built in, is measured and checked beside the GPU versions, and the
    // speedups name the CPU row they are against.
    if (augment_opencv::built_in()) {
      CHECK(r.verify.details.contains("cpu_opencv"));
      REQUIRE(r.find("cpu_opencv") != nullptr);
      CHECK(r.derived.contains("speedup_fused_vs_cpu_opencv"));
      CHECK(r.derived.contains("speedup_fused_with_upload_vs_cpu_opencv"));
    } else {
      CHECK(r.derived.contains("cpu_opencv_absent"));
    }
    CHECK(r.derived.contains("fastest_cpu"));
  }
}

TEST_CASE("augment: a batch that cannot fit in device memory is an out-of-memory error of its "
          "point, not of the plan",
          "[augment]") {
  common_options opts;
  opts.verbosity = 0;
  const benchmark b = make_augment_benchmark();
  const param_values huge{
      {"batch", "1048576"}, {"size", "2048"}, {"crop", "1024"}, {"resize", "2048"}};
  auto points = b.plan(with_defaults(b, huge), opts); // planning no longer asks the device
  REQUIRE(points.size() == 1);
  points[0]["device"] = 0;
  run_context ctx(opts);
  try {
    (void)run_point(b, points[0], ctx);
    FAIL("no out_of_memory_error");
  } catch (const cuda::out_of_memory_error& e) {
    CHECK_THAT(e.what(),
               Contains("--batch 1048576") && Contains("GB of device memory") && Contains("free"));
  }
}

TEST_CASE("augment: small shapes through every kernel path", "[augment][sanitize]") {
  // Small enough for compute-sanitizer (scripts/gpu-check.sh --sanitize): staged window and
  // global fallback, compile-time and runtime radius, two channel groups, partial tiles.
  thread_pool pool;
  check_all(make(2, 3, 70, 66, 32, 64, 45, nearest, 7, dtype::f32), pool);
  check_all(make(2, 3, 70, 66, 32, 64, 45, bilinear, 5, dtype::f16), pool);
  check_all(make(3, 5, 40, 50, 40, 37, 120, nearest, 3, dtype::bf16), pool);
  check_all(make(1, 2, 96, 96, 90, 30, 10, bilinear, 7, dtype::f32), pool);
}

TEST_CASE("augment: the fused fast path on a small shape", "[augment][sanitize]") {
  // 3 channels, blur 7, output side a multiple of 32, input width a multiple of 4: the fast
  // kernel (staged window, tabulated taps), 45 degrees so that some halo samples leave the image.
  thread_pool pool;
  check_all(make(2, 3, 72, 68, 40, 64, 45, nearest, 7, dtype::f32), pool);
  check_all(make(2, 3, 72, 68, 40, 64, 45, bilinear, 7, dtype::f16), pool);
  check_all(make(3, 3, 64, 64, 64, 32, 30, nearest, 7, dtype::bf16), pool);
}

TEST_CASE("augment: every strip length of the fused fast path gives the same bits",
          "[augment][sanitize]") {
  // A block of the fast kernel may go on down its tile column, carrying 6 halo rows from one
  // tile to the next; the automatic choice only does so for large batches. Force each length.
  thread_pool pool;
  for (const int strip : {1, 2, 4}) {
    check_all(make(2, 3, 136, 132, 64, 128, 45, nearest, 7, dtype::f32), pool, strip);
    check_all(make(2, 3, 136, 132, 64, 128, 30, bilinear, 7, dtype::f16), pool, strip);
  }
  // Strips and single-tile blocks in one launch: the last 3 of the 8 tile columns run as tiles.
  check_all(make(2, 3, 136, 132, 64, 128, 45, nearest, 7, dtype::f32), pool, 2, 3);
  check_all(make(2, 3, 136, 132, 64, 128, 30, bilinear, 7, dtype::f16), pool, 4, 3);
}

TEST_CASE("augment: the fused fast path's float resize (weights not quarters)", "[augment]") {
  // Crop 100 -> 256: resize weights that are not multiples of 1/4, so the nearest fast kernel
  // takes its float resize instead of the integer one; every strip length and a tail.
  thread_pool pool;
  for (const int strip : {1, 4, 8})
    check_all(make(3, 3, 256, 256, 100, 256, 45, nearest, 7, dtype::f32), pool, strip);
  check_all(make(3, 3, 256, 256, 100, 256, 45, nearest, 7, dtype::f16), pool, 2, 5);
}

TEST_CASE("augment: the default shape at every strip length", "[augment]") {
  thread_pool pool;
  const auto interp = GENERATE(nearest, bilinear);
  for (const int strip : {1, 2, 4, 8})
    check_all(make(3, 3, 256, 256, 128, 256, 45, interp, 7, dtype::f32), pool, strip);
  check_all(make(3, 3, 256, 256, 128, 256, 45, interp, 7, dtype::f32), pool, 4, 10);
}

TEST_CASE("augment: strong downscaling reads the input directly", "[augment][sanitize]") {
  // A 200-pixel crop resized to 32: no tile's window fits in shared memory, so the fused kernels
  // (the fast path and the generic one) sample the uint8 input; the staged rotate's box still fits.
  thread_pool pool;
  check_all(make(2, 3, 208, 204, 200, 32, 45, nearest, 7, dtype::f32), pool);
  check_all(make(2, 3, 208, 204, 200, 32, 45, bilinear, 7, dtype::f32), pool);
  check_all(make(2, 2, 208, 204, 200, 32, 45, bilinear, 5, dtype::f16), pool);
}
