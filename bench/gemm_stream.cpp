// oxidize_gemm_stream: one decode matmul (one token; --tokens N: a prefill of N) through the best kernel table, one thread,
// with the weights streamed from memory as in a real model: copies of the matrix fill 384 MB (far
// past the caches), and each timed pass runs the gemm over every copy. Prints the best pass per
// call, per 1000 rows and as weight GB/s, and the largest difference from the scalar vec_dot
// (which must stay at float-rounding size). Plain C++ with no Google Benchmark, so the same
// program runs natively, under node and in a browser page (bench/peers/gemm_stream.mjs): the
// SIMD128 kernels are timed where users run them.
//   oxidize_gemm_stream [--reps N] [--stream-mb M] [--weight-std S] [--tokens T] TYPE:ROWSxCOLS ...
//   e.g. q4_k:8192x2048 q6_k:2048x8192
// --tokens T multiplies T tokens at once (the prefill tiles from 3 tokens), and adds the rate in
// GMAC/s (rows x columns x tokens multiply-adds per second); the scalar check takes the first and
// last token.
// --stream-mb 0 times a single copy: a matrix that fits the caches then shows the kernel's
// arithmetic alone, which set against the streamed figure tells compute from memory.
// --weight-std S scales the gaussian weights (default 1); at a trained model's ~0.02 the Q6_K
// scales (d) are fp16 subnormals, which a kernel's scale conversion must not slow down on.
// Where the table converts a format at load (KernelTable::relayout: Q4_K / Q6_K in the relaxed-SIMD
// module), the matrix is converted the same way and the line names the layout timed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_data.h"
#include "core/quant/dtype.h"
#include "core/quant/traits.h"
#include "kernels/kernels.h"

namespace {


struct Shape {
  ox::DType type;
  int64_t rows, cols;
};

bool parse_shape(const std::string& spec, Shape* out) {
  const size_t colon = spec.find(':'), x = spec.find('x', colon == std::string::npos ? 0 : colon);
  if (colon == std::string::npos || x == std::string::npos) return false;
  if (!ox::dtype_from_name(spec.substr(0, colon), &out->type)) return false;
  char* end = nullptr;
  out->rows = std::strtoll(spec.c_str() + colon + 1, &end, 10);
  if (end != spec.c_str() + x) return false;
  out->cols = std::strtoll(spec.c_str() + x + 1, &end, 10);
  return *end == '\0' && out->rows > 0 && out->cols > 0;
}

// 0 on success; prints one line per shape.
int run(const Shape& s, int reps, uint64_t stream_bytes, float weight_std, int64_t tokens) {
  const ox::kernels::KernelTable& table = ox::kernels::best_kernels();
  const ox::kernels::Relayout relayout = table.relayout[static_cast<int>(s.type)];
  const ox::DType layout = relayout.fn != nullptr ? relayout.to : s.type;  // what a loaded model holds
  const int w_id = static_cast<int>(layout);
  const ox::DType a_type = ox::quant_traits(s.type).vec_dot_type;
  const ox::kernels::GemmFn gemm = table.gemm[w_id];
  if (gemm == nullptr || s.cols % ox::dtype_facts(s.type).block_size != 0) {
    std::printf("%s %s:%lldx%lld: no gemm kernel for this type, or columns not a multiple of its block\n",
                table.isa, ox::dtype_name(s.type), static_cast<long long>(s.rows), static_cast<long long>(s.cols));
    return 1;
  }
  const uint64_t w_row = ox::dtype_row_bytes(s.type, static_cast<uint64_t>(s.cols));
  const uint64_t a_row = ox::dtype_row_bytes(a_type, static_cast<uint64_t>(s.cols));
  const uint64_t matrix = w_row * static_cast<uint64_t>(s.rows);
  const uint64_t copies = std::max<uint64_t>(1, stream_bytes / matrix);
  std::vector<uint8_t> w(matrix * copies);
  std::vector<float> w_f32 = ox::bench::gaussian(s.rows * s.cols, 1);
  for (float& v : w_f32) v *= weight_std;
  ox::quantize_rows_uniform(s.type, w_f32.data(), w.data(), s.rows, s.cols);
  if (relayout.fn != nullptr) relayout.fn(w.data(), s.rows * s.cols / ox::dtype_facts(s.type).block_size);
  for (uint64_t c = 1; c < copies; ++c) std::memcpy(w.data() + c * matrix, w.data(), matrix);
  std::vector<uint8_t> a(a_row * static_cast<uint64_t>(tokens));
  ox::quant_traits(a_type).from_float_ref(ox::bench::gaussian(s.cols * tokens, 2).data(), a.data(), s.cols * tokens);
  std::vector<float> y(static_cast<size_t>(s.rows * tokens));

  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (uint64_t c = 0; c < copies; ++c) gemm(s.cols, w.data() + c * matrix, w_row, s.rows, a.data(), a_row, tokens, y.data(), s.rows);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / copies);
  }
  const ox::VecDotFn ref = ox::kernels::scalar::table().vec_dot[w_id];
  double max_diff = 0, max_abs = 0;
  for (const int64_t t : {int64_t{0}, tokens - 1}) {
    for (int64_t r = 0; r < s.rows; ++r) {
      float expect = 0;
      ref(s.cols, &expect, w.data() + r * w_row, a.data() + static_cast<uint64_t>(t) * a_row);
      max_diff = std::max(max_diff, static_cast<double>(std::fabs(expect - y[t * s.rows + r])));
      max_abs = std::max(max_abs, static_cast<double>(std::fabs(expect)));
    }
  }
  std::printf("%s %s:%lldx%lld: %.1f us/call, %.1f us per 1000 rows, %.2f GB/s (%llu copies, best of %d; "
              "max |diff| vs scalar %.3g at max |y| %.3g)\n",
              table.isa, ox::dtype_name(layout), static_cast<long long>(s.rows), static_cast<long long>(s.cols),
              best * 1e6, best * 1e9 / s.rows, matrix / best / 1e9, static_cast<unsigned long long>(copies), reps,
              max_diff, max_abs);
  if (tokens > 1) {
    std::printf("  %lld tokens: %.2f GMAC/s\n", static_cast<long long>(tokens),
                static_cast<double>(s.rows) * static_cast<double>(s.cols) * static_cast<double>(tokens) / best / 1e9);
  }
  return 0;
}

// Ends with "done (exit N)" on stdout: a browser page has no exit status (gemm_stream.mjs waits for it).
int finish(int status) {
  std::printf("done (exit %d)\n", status);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 7, status = 0, shapes = 0;
  uint64_t stream_bytes = uint64_t{384} << 20;
  float weight_std = 1.0f;
  int64_t tokens = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
      continue;
    }
    if (arg == "--stream-mb" && i + 1 < argc) {
      stream_bytes = static_cast<uint64_t>(std::max(0, std::atoi(argv[++i]))) << 20;
      continue;
    }
    if (arg == "--weight-std" && i + 1 < argc) {
      weight_std = static_cast<float>(std::atof(argv[++i]));
      if (!(weight_std > 0.0f) || !std::isfinite(weight_std)) {
        std::fprintf(stderr, "oxidize_gemm_stream: --weight-std '%s' is not a positive number\n", argv[i]);
        return finish(2);
      }
      continue;
    }
    if (arg == "--tokens" && i + 1 < argc) {
      tokens = std::max(1, std::atoi(argv[++i]));
      continue;
    }
    Shape s{};
    if (!parse_shape(arg, &s)) {
      std::fprintf(stderr, "oxidize_gemm_stream: bad shape '%s' (want TYPE:ROWSxCOLS, e.g. q4_k:8192x2048)\n", arg.c_str());
      return finish(2);
    }
    status |= run(s, reps, stream_bytes, weight_std, tokens);
    ++shapes;
  }
  if (shapes == 0) {
    std::fprintf(stderr, "usage: oxidize_gemm_stream [--reps N] [--stream-mb M] [--weight-std S] [--tokens T] TYPE:ROWSxCOLS ...\n");
    return finish(2);
  }
  return finish(status);
}
