// Runs an fp32 GEMM with bias and ReLU, an int8 layer and a GEMV through rooftune's library API,
// checks each against a plain loop, and prints the explain line of each call: which config ran
// and why. Exit status 0 when every result matched, 1 when one did not, 2 when a call failed.
//
//   consumer [--threads T] [--db PATH]     (default: 1 thread, the CLI's database path)
#include <rooftune/rooftune.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

std::vector<float> Random(size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(count);
  for (float& x : v) x = u(rng);
  return v;
}

bool Close(const std::vector<float>& got, const std::vector<double>& want, double tolerance,
           const char* what) {
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::abs(got[i] - want[i]) > tolerance * (1 + std::abs(want[i]))) {
      std::printf("MISMATCH %s: element %zu is %g, want %g\n", what, i, got[i], want[i]);
      return false;
    }
  }
  std::printf("ok %s\n", what);
  return true;
}

// Prints "explain: <line>", or fails.
template <typename Call>
bool Explain(const rooftune::Context& context, const Call& call) {
  rooftune::Explanation e;
  const rooftune::Status s = context.Explain(call, &e);
  if (!s.ok()) {
    std::fprintf(stderr, "consumer: explain: %s\n", s.message().c_str());
    return false;
  }
  std::printf("explain: %s\n", e.ToString().c_str());
  return true;
}

bool Check(const rooftune::Status& s, const char* what) {
  if (!s.ok()) std::fprintf(stderr, "consumer: %s: %s\n", what, s.message().c_str());
  return s.ok();
}

enum class Outcome { kMatched, kMismatched, kFailed };

// An fp32 layer: C = A B + bias, ReLU.
Outcome Fp32Layer(rooftune::Context& context) {
  const int64_t m = 67, n = 45, k = 31;
  const std::vector<float> a = Random(m * k, 1), b = Random(k * n, 2), bias = Random(n, 3);
  std::vector<float> c(m * n);
  const rooftune::GemmF32Call gemm{.m = m,
                                   .n = n,
                                   .k = k,
                                   .a = a.data(),
                                   .b = b.data(),
                                   .c = c.data(),
                                   .bias = bias.data(),
                                   .relu = true};
  if (!Explain(context, gemm) || !Check(context.Gemm(gemm), "gemm")) return Outcome::kFailed;
  std::vector<double> want(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = bias[j];
      for (int64_t p = 0; p < k; ++p) acc += double(a[i * k + p]) * b[p * n + j];
      want[i * n + j] = std::max(acc, 0.0);
    }
  }
  return Close(c, want, 1e-4, "gemm f32 bias relu") ? Outcome::kMatched : Outcome::kMismatched;
}

// An int8 layer: u8 activations (scale 0.05, zero point 3) x s8 weights (a scale per column).
Outcome Int8Layer(rooftune::Context& context) {
  const int64_t batch = 5, in = 70, out = 33;
  std::vector<uint8_t> x8(batch * in);
  std::vector<int8_t> w8(in * out);
  for (size_t i = 0; i < x8.size(); ++i) x8[i] = uint8_t((i * 37) % 256);
  for (size_t i = 0; i < w8.size(); ++i) w8[i] = int8_t(int((i * 91) % 256) - 128);
  const std::vector<float> scales(out, 0.01f), bias = Random(out, 3);
  std::shared_ptr<const rooftune::WeightsS8> weights;
  if (!Check(context.PrepareWeightsS8(w8.data(), in, out, 0, scales.data(), &weights), "prepare"))
    return Outcome::kFailed;
  std::vector<float> y(batch * out);
  const rooftune::GemmU8S8Call layer{.m = batch,
                                     .a = x8.data(),
                                     .scale_a = 0.05f,
                                     .zero_point_a = 3,
                                     .weights = weights.get(),
                                     .y = y.data(),
                                     .bias = bias.data()};
  if (!Explain(context, layer) || !Check(context.Gemm(layer), "int8 gemm")) return Outcome::kFailed;
  std::vector<double> want(batch * out, 0);
  for (int64_t i = 0; i < batch; ++i) {
    for (int64_t j = 0; j < out; ++j) {
      long acc = 0;
      for (int64_t p = 0; p < in; ++p) acc += long(x8[i * in + p] - 3) * w8[p * out + j];
      want[i * out + j] = 0.05 * 0.01 * double(acc) + bias[j];
    }
  }
  return Close(y, want, 1e-4, "gemm u8s8 bias") ? Outcome::kMatched : Outcome::kMismatched;
}

// The decode shape: y = W x + bias, with W prepared once in the layout its config reads.
Outcome DecodeStep(rooftune::Context& context) {
  const int64_t rows = 129, cols = 257;
  const std::vector<float> w = Random(rows * cols, 4), v = Random(cols, 5);
  const std::vector<float> row_bias = Random(rows, 6);
  std::shared_ptr<const rooftune::GemvWeights> decode_weights;
  if (!Check(
          context.PrepareGemvWeights(
              rooftune::GemvF32Call{.n = rows, .k = cols, .w = w.data(), .bias = row_bias.data()},
              &decode_weights),
          "prepare gemv")) {
    return Outcome::kFailed;
  }
  std::vector<float> r(rows);
  const rooftune::GemvF32Call gemv{
      .weights = decode_weights.get(), .x = v.data(), .y = r.data(), .bias = row_bias.data()};
  if (!Explain(context, gemv) || !Check(context.Gemv(gemv), "gemv")) return Outcome::kFailed;
  std::vector<double> want(rows, 0);
  for (int64_t i = 0; i < rows; ++i) {
    double acc = row_bias[i];
    for (int64_t p = 0; p < cols; ++p) acc += double(w[i * cols + p]) * v[p];
    want[i] = acc;
  }
  return Close(r, want, 1e-4, "gemv f32 bias") ? Outcome::kMatched : Outcome::kMismatched;
}

}  // namespace

int main(int argc, char** argv) {
  rooftune::ContextOptions options;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--threads") == 0)
      options.threads = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--db") == 0)
      options.database = argv[i + 1];
  }
  std::unique_ptr<rooftune::Context> context;
  if (!Check(rooftune::Context::Open(options, &context), "open")) return 2;
  std::printf("rooftune %s, machine %s, %d tuned rows, %d thread(s)\n", rooftune::LibraryVersion(),
              context->machine().c_str(), context->tuned_rows(), context->threads());
  bool matched = true;
  for (Outcome (*layer)(rooftune::Context&) : {Fp32Layer, Int8Layer, DecodeStep}) {
    const Outcome outcome = layer(*context);
    if (outcome == Outcome::kFailed) return 2;
    matched &= outcome == Outcome::kMatched;
  }
  return matched ? 0 : 1;
}
