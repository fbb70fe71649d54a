// Single-thread CPU time per image of each step of augment's OpenCV baseline, for the choices in
// docs/augment.md: the geometric ops on one interleaved 3-channel image (after a merge of the crop
// planes, followed by a split) against the same ops on each of the three planes, and the blur as
// sepFilter2D from uint8 against convertTo + GaussianBlur on float32.
// Thread CPU time, so other processes on the machine inflate it less than wall time.
//   g++ -O2 -std=c++17 -I/usr/include/opencv4 layout_ops.cpp -lopencv_imgproc -lopencv_core
//   ./a.out            (64 images of 3 x 256 x 256, crop 128 -> 256, +-45 degrees, 5 rounds)
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <random>
#include <vector>

namespace {

double cpu_now() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

cv::Matx23d output_to_source(double cs, double sn, int n) {
  const double c = 0.5 * (n - 1);
  return {cs, -sn, c - cs * c + sn * c, sn, cs, c - sn * c - cs * c};
}

} // namespace

int main() {
  cv::setNumThreads(1);
  const int images = 64;
  const int rounds = 5;
  const int side = 256;
  const int crop = 128;
  std::mt19937 rng(1);
  std::vector<unsigned char> input(static_cast<std::size_t>(images) * 3 * side * side);
  for (auto& v : input) v = static_cast<unsigned char>(rng() & 255U);
  struct params {
    int top, left;
    double cs, sn, sigma;
  };
  std::vector<params> ps;
  std::uniform_int_distribution<int> offset(0, side - crop);
  std::uniform_real_distribution<double> angle(-45, 45);
  std::uniform_real_distribution<double> sigma(0.1, 2.0);
  for (int i = 0; i < images; ++i) {
    const double a = angle(rng) * CV_PI / 180;
    ps.push_back({offset(rng), offset(rng), std::cos(a), std::sin(a), sigma(rng)});
  }
  std::vector<float> out(3 * side * side);
  const char* names[] = {"merge crop planes", "resize, interleaved",     "warpAffine, interleaved",
                         "split uint8",       "convertTo x 3 planes",     "GaussianBlur x 3 planes",
                         "resize x 3 planes", "warpAffine x 3 planes", "sepFilter2D u8 -> f32 x 3"};
  double t[9] = {};
  cv::Mat merged, resized, rotated, f32, r8, w8;
  std::vector<cv::Mat> planes, crops(3);
  const cv::Size size(side, side);
  for (int r = 0; r < rounds; ++r)
    for (int i = 0; i < images; ++i) {
      const params& p = ps[static_cast<std::size_t>(i)];
      unsigned char* img = input.data() + static_cast<std::size_t>(i) * 3 * side * side;
      const cv::Rect window(p.left, p.top, crop, crop);
      const cv::Matx23d m = output_to_source(p.cs, p.sn, side);
      const int flags = cv::INTER_NEAREST | cv::WARP_INVERSE_MAP;
      double a = cpu_now();
      for (int c = 0; c < 3; ++c) crops[c] = cv::Mat(side, side, CV_8UC1, img + c * side * side)(window);
      cv::merge(crops, merged);
      double b = cpu_now();
      t[0] += b - a;
      cv::resize(merged, resized, size, 0, 0, cv::INTER_LINEAR);
      a = cpu_now();
      t[1] += a - b;
      cv::warpAffine(resized, rotated, m, size, flags, cv::BORDER_CONSTANT, cv::Scalar::all(0));
      b = cpu_now();
      t[2] += b - a;
      cv::split(rotated, planes);
      a = cpu_now();
      t[3] += a - b;
      for (int c = 0; c < 3; ++c) {
        b = cpu_now();
        planes[c].convertTo(f32, CV_32F);
        a = cpu_now();
        t[4] += a - b;
        cv::Mat dst(side, side, CV_32FC1, out.data() + c * side * side);
        cv::GaussianBlur(f32, dst, cv::Size(7, 7), p.sigma, p.sigma, cv::BORDER_REFLECT_101);
        t[5] += cpu_now() - a;
        // What gpubench does instead of convertTo + GaussianBlur: uint8 in, float32 out.
        a = cpu_now();
        const cv::Mat k = cv::getGaussianKernel(7, p.sigma, CV_32F);
        cv::sepFilter2D(planes[c], dst, CV_32F, k, k, cv::Point(-1, -1), 0, cv::BORDER_REFLECT_101);
        t[8] += cpu_now() - a;
      }
      for (int c = 0; c < 3; ++c) {
        a = cpu_now();
        cv::resize(crops[c], r8, size, 0, 0, cv::INTER_LINEAR);
        b = cpu_now();
        t[6] += b - a;
        cv::warpAffine(r8, w8, m, size, flags, cv::BORDER_CONSTANT, cv::Scalar::all(0));
        t[7] += cpu_now() - b;
      }
    }
  std::printf("OpenCV %s, one thread, CPU time per image (%d images x %d rounds):\n",
              cv::getVersionString().c_str(), images, rounds);
  for (int k = 0; k < 9; ++k) std::printf("  %-26s %7.1f us\n", names[k], 1e6 * t[k] / (images * rounds));
  std::printf("  interleaved, sepFilter2D from uint8 (gpubench): %.1f us\n",
              1e6 * (t[0] + t[1] + t[2] + t[3] + t[8]) / (images * rounds));
  std::printf("  interleaved, convertTo + GaussianBlur:          %.1f us\n",
              1e6 * (t[0] + t[1] + t[2] + t[3] + t[4] + t[5]) / (images * rounds));
  std::printf("  per plane, sepFilter2D from uint8:              %.1f us\n",
              1e6 * (t[6] + t[7] + t[8]) / (images * rounds));
}
