#include "probes/latency.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>

#include "absl/strings/str_format.h"

namespace rooftune::probes {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kLine = 64;

// A buffer of whole lines, mapped directly so that huge pages can be requested for it.
class LineBuffer {
 public:
  static absl::StatusOr<LineBuffer> Map(size_t bytes, bool huge_pages) {
    const size_t huge = size_t{2} << 20;
    const size_t rounded = (bytes + huge - 1) / huge * huge;
    void* p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      return absl::ResourceExhaustedError(
          absl::StrFormat("latency probe: cannot map %.0f MiB", double(rounded) / (1 << 20)));
    }
    madvise(p, rounded, huge_pages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    LineBuffer b;
    b.data_ = static_cast<char*>(p);
    b.mapped_ = rounded;
    return b;
  }
  LineBuffer() = default;
  LineBuffer(LineBuffer&& o) noexcept : data_(o.data_), mapped_(o.mapped_) { o.data_ = nullptr; }
  ~LineBuffer() {
    if (data_ != nullptr) munmap(data_, mapped_);
  }
  char* data() { return data_; }

 private:
  char* data_ = nullptr;
  size_t mapped_ = 0;
};

// Links the lines into one random cycle (Sattolo's algorithm), so the chase visits every line
// once per lap in an order spread across all pages.
void LinkRandomCycle(char* base, size_t lines, uint64_t seed) {
  std::vector<uint32_t> order(lines);
  for (size_t i = 0; i < lines; ++i) order[i] = uint32_t(i);
  std::mt19937_64 rng(seed);
  for (size_t i = lines - 1; i > 0; --i) {
    std::uniform_int_distribution<size_t> pick(0, i - 1);
    std::swap(order[i], order[pick(rng)]);
  }
  for (size_t i = 0; i < lines; ++i) {
    *reinterpret_cast<char**>(base + size_t(order[i]) * kLine) =
        base + size_t(order[(i + 1) % lines]) * kLine;
  }
}

__attribute__((noinline)) char* Chase(char* p, uint64_t steps) {
  for (uint64_t i = 0; i < steps; i += 8) {
    p = *reinterpret_cast<char**>(p);
    p = *reinterpret_cast<char**>(p);
    p = *reinterpret_cast<char**>(p);
    p = *reinterpret_cast<char**>(p);
    p = *reinterpret_cast<char**>(p);
    p = *reinterpret_cast<char**>(p);
    p = *reinterpret_cast<char**>(p);
    p = *reinterpret_cast<char**>(p);
  }
  return p;
}

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The shortest of three timings of `run(iterations)`, after one shorter call that lets the clock
// ramp up: a dependent chain is never faster than its latency, so the fastest run is the least
// disturbed.
template <typename Run>
double ShortestOfThree(Run run, uint64_t iterations) {
  run(iterations / 16);
  double best = 1e300;
  for (int i = 0; i < 3; ++i) best = std::min(best, run(iterations));
  return best;
}

}  // namespace

absl::StatusOr<double> ChaseLatency(double bytes, bool huge_pages, double seconds) {
  const size_t lines = std::max<size_t>(16, size_t(bytes) / kLine);
  absl::StatusOr<LineBuffer> buffer = LineBuffer::Map(lines * kLine, huge_pages);
  if (!buffer.ok()) return buffer.status();
  LinkRandomCycle(buffer->data(), lines, lines);
  char* p = buffer->data();
  // Warm up: one lap (at least) brings the working set into the levels it fits.
  p = Chase(p, std::max<uint64_t>(lines, 1 << 12));
  uint64_t steps = 1 << 14;
  double best = 1e300;
  // Three timed runs after calibration; the minimum is the least-disturbed one.
  for (int run = 0; run < 4; ++run) {
    const Clock::time_point start = Clock::now();
    p = Chase(p, steps);
    const double t = Seconds(start);
    if (run == 0) {
      steps = uint64_t(double(steps) * seconds / 3 / std::max(t, 1e-7));
      steps = std::max<uint64_t>(steps / 8 * 8, 1 << 12);
      continue;
    }
    best = std::min(best, t / double(steps) * 1e9);
  }
  asm volatile("" : : "r"(p) : "memory");
  return best;
}

absl::StatusOr<std::vector<LatencyPoint>> MeasureLatencyCurve(const LatencyOptions& o) {
  std::vector<LatencyPoint> curve;
  const double step = std::pow(2.0, 1.0 / std::max(o.points_per_octave, 1));
  for (double bytes = o.min_bytes; bytes <= o.max_bytes * 1.0001; bytes *= step) {
    absl::StatusOr<double> ns = ChaseLatency(bytes, o.huge_pages, o.seconds_per_point);
    if (!ns.ok()) return ns.status();
    curve.push_back({bytes, *ns});
  }
  // Refine: where neighbours differ by more than a quarter, measure the geometric midpoint.
  // (One pass; each inserted point halves the gap in the step's size estimate.)
  std::vector<LatencyPoint> refined;
  for (size_t i = 0; i < curve.size(); ++i) {
    refined.push_back(curve[i]);
    if (i + 1 == curve.size()) break;
    const double ratio = curve[i + 1].ns / curve[i].ns;
    if (ratio > 1.25 || ratio < 0.8) {
      const double mid = std::sqrt(curve[i].bytes * curve[i + 1].bytes);
      absl::StatusOr<double> ns = ChaseLatency(mid, o.huge_pages, o.seconds_per_point);
      if (!ns.ok()) return ns.status();
      refined.push_back({mid, *ns});
    }
  }
  return refined;
}

double MeasureClockGhz() {
  // Eight dependent adds per iteration: the loop's own counter runs in parallel with them.
  auto run = [](uint64_t iterations) {
    uint64_t x = 0, one = 1;
    const Clock::time_point start = Clock::now();
    for (uint64_t i = 0; i < iterations; ++i) {
#if defined(__x86_64__)
      // Register-register adds: recent Intel cores fold chains of add-immediate at rename.
      asm volatile(
          "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
          "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
          : "+r"(x)
          : "r"(one));
#elif defined(__aarch64__)
      asm volatile(
          "add %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\t"
          "add %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1"
          : "+r"(x));
      (void)one;
#else
      x += 8;
      asm volatile("" : "+r"(x));
#endif
    }
    return Seconds(start);
  };
  const uint64_t iterations = 1 << 24;
  return double(iterations) * 8 / ShortestOfThree(run, iterations) / 1e9;
}

double MeasureFmaLatencyCycles(double clock_ghz) {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("fma")) return 0;
#elif !defined(__aarch64__)
  return 0;
#endif
  if (clock_ghz <= 0) return 0;
  // Eight dependent scalar FMAs per iteration, x = x * 1 + 0: the value never changes, so no
  // denormal or overflow slows the chain. Scalar and vector FMAs have one latency on x86 and Arm.
  auto run = [](uint64_t iterations) {
    float x = 1.0f, one = 1.0f, zero = 0.0f;
    const Clock::time_point start = Clock::now();
    for (uint64_t i = 0; i < iterations; ++i) {
#if defined(__x86_64__)
      asm volatile(
          "vfmadd213ss %2, %1, %0\n\tvfmadd213ss %2, %1, %0\n\t"
          "vfmadd213ss %2, %1, %0\n\tvfmadd213ss %2, %1, %0\n\t"
          "vfmadd213ss %2, %1, %0\n\tvfmadd213ss %2, %1, %0\n\t"
          "vfmadd213ss %2, %1, %0\n\tvfmadd213ss %2, %1, %0"
          : "+x"(x)
          : "x"(one), "x"(zero));
#elif defined(__aarch64__)
      asm volatile(
          "fmadd %s0, %s0, %s1, %s2\n\tfmadd %s0, %s0, %s1, %s2\n\t"
          "fmadd %s0, %s0, %s1, %s2\n\tfmadd %s0, %s0, %s1, %s2\n\t"
          "fmadd %s0, %s0, %s1, %s2\n\tfmadd %s0, %s0, %s1, %s2\n\t"
          "fmadd %s0, %s0, %s1, %s2\n\tfmadd %s0, %s0, %s1, %s2"
          : "+w"(x)
          : "w"(one), "w"(zero));
#endif
    }
    return Seconds(start);
  };
  const uint64_t iterations = 1 << 21;
  return ShortestOfThree(run, iterations) * clock_ghz * 1e9 / (double(iterations) * 8);
}

}  // namespace rooftune::probes
