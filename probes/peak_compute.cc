#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "probes/peak_compute.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cstring>

#include "hwy/highway.h"
#include "probes/peak_compute.h"

#if HWY_ARCH_X86
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace rooftune::probes {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Enough chains for 4-cycle FMA latency on 2 pipes, and few enough to stay in registers.
constexpr size_t kChains =
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    24;
#else
    12;
#endif

template <typename T>
double FmaLoop(uint64_t iterations) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  V acc[kChains];
  for (size_t i = 0; i < kChains; ++i) acc[i] = hn::Set(d, T(i) * T(0.001));
  const V mul = hn::Set(d, T(0.999999));
  const V add = hn::Set(d, T(1e-6));
  for (uint64_t it = 0; it < iterations; ++it) {
    // Unrolled in full, so that the accumulators live in registers rather than on the stack.
    HWY_UNROLL(64)
    for (size_t i = 0; i < kChains; ++i) acc[i] = hn::MulAdd(acc[i], mul, add);
  }
  V sum = acc[0];
  for (size_t i = 1; i < kChains; ++i) sum = hn::Add(sum, acc[i]);
  volatile T sink = hn::GetLane(sum);
  (void)sink;
  return double(iterations) * kChains * hn::Lanes(d) * 2.0;
}

#if HWY_TARGET == HWY_AVX3_DL
constexpr size_t kVnniChains = 16;
// vpdpbusd: 64 u8 x s8 products summed in fours into 16 s32 lanes, one instruction. Highway
// 1.0.3's AVX3_DL target string enables avxvnni but not avx512vnni, so this function adds it; the
// target is only chosen on CPUs with both.
__attribute__((target(HWY_TARGET_STR ",avx512vnni"))) double VnniLoop(uint64_t iterations) {
  // Sixteen named accumulators: with an array, GCC 12 mirrors every accumulator to the stack on
  // each iteration, which made this loop store-bound and the ceiling about half the real one
  // (rooftune's own int8 GEMM then measured "impossible" against it).
  using V = hn::Vec<hn::ScalableTag<int32_t>>;
  const hn::ScalableTag<int32_t> d;
  __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  // Distinct starting values, or GCC merges identical chains into one.
  __m512i c0 = _mm512_set1_epi32(0), c1 = _mm512_set1_epi32(1), c2 = _mm512_set1_epi32(2),
          c3 = _mm512_set1_epi32(3), c4 = _mm512_set1_epi32(4), c5 = _mm512_set1_epi32(5),
          c6 = _mm512_set1_epi32(6), c7 = _mm512_set1_epi32(7), c8 = _mm512_set1_epi32(8),
          c9 = _mm512_set1_epi32(9), c10 = _mm512_set1_epi32(10), c11 = _mm512_set1_epi32(11),
          c12 = _mm512_set1_epi32(12), c13 = _mm512_set1_epi32(13), c14 = _mm512_set1_epi32(14),
          c15 = _mm512_set1_epi32(15);
  for (uint64_t it = 0; it < iterations; ++it) {
    // Opaque operands: otherwise GCC folds the constant products into one add per chain.
    asm volatile("" : "+v"(a), "+v"(b));
    c0 = _mm512_dpbusd_epi32(c0, a, b), c1 = _mm512_dpbusd_epi32(c1, a, b);
    c2 = _mm512_dpbusd_epi32(c2, a, b), c3 = _mm512_dpbusd_epi32(c3, a, b);
    c4 = _mm512_dpbusd_epi32(c4, a, b), c5 = _mm512_dpbusd_epi32(c5, a, b);
    c6 = _mm512_dpbusd_epi32(c6, a, b), c7 = _mm512_dpbusd_epi32(c7, a, b);
    c8 = _mm512_dpbusd_epi32(c8, a, b), c9 = _mm512_dpbusd_epi32(c9, a, b);
    c10 = _mm512_dpbusd_epi32(c10, a, b), c11 = _mm512_dpbusd_epi32(c11, a, b);
    c12 = _mm512_dpbusd_epi32(c12, a, b), c13 = _mm512_dpbusd_epi32(c13, a, b);
    c14 = _mm512_dpbusd_epi32(c14, a, b), c15 = _mm512_dpbusd_epi32(c15, a, b);
  }
  const __m512i total = _mm512_add_epi32(
      _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(c0, c1), _mm512_add_epi32(c2, c3)),
                       _mm512_add_epi32(_mm512_add_epi32(c4, c5), _mm512_add_epi32(c6, c7))),
      _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(c8, c9), _mm512_add_epi32(c10, c11)),
                       _mm512_add_epi32(_mm512_add_epi32(c12, c13), _mm512_add_epi32(c14, c15))));
  const V sum{total};
  volatile int sink = hn::GetLane(hn::SumOfLanes(d, sum));
  (void)sink;
  return double(iterations) * kVnniChains * 64 * 2.0;
}
#endif

// The u8 x s8 dot product has no Highway op in 1.0.3: raw intrinsics, fenced by target.
double Int8Loop(uint64_t iterations) {
#if HWY_TARGET == HWY_AVX3_DL
  return VnniLoop(iterations);
#elif HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX2
#if HWY_TARGET == HWY_AVX3
  using I = __m512i;
  constexpr int kBytes = 64;
  auto maddubs = [](I x, I y) HWY_ATTR { return _mm512_maddubs_epi16(x, y); };
  auto madd = [](I x, I y) HWY_ATTR { return _mm512_madd_epi16(x, y); };
  auto add = [](I x, I y) HWY_ATTR { return _mm512_add_epi32(x, y); };
  const I ones = _mm512_set1_epi16(1);
  I a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  (void)b;
#else
  using I = __m256i;
  constexpr int kBytes = 32;
  auto maddubs = [](I x, I y) HWY_ATTR { return _mm256_maddubs_epi16(x, y); };
  auto madd = [](I x, I y) HWY_ATTR { return _mm256_madd_epi16(x, y); };
  auto add = [](I x, I y) HWY_ATTR { return _mm256_add_epi32(x, y); };
  const I ones = _mm256_set1_epi16(1);
  I a = _mm256_set1_epi8(3), b = _mm256_set1_epi8(-2);
#endif
  // vpmaddubsw (u8 x s8 pairs -> s16) + vpmaddwd (x 1 -> s32 pairs) + vpaddd: the AVX2 path.
  // Fewer chains: each needs a temporary, and the three instructions share ports.
  constexpr size_t kInt8Chains = kChains / 2;
  I acc[kInt8Chains], weights[kInt8Chains];
  for (size_t i = 0; i < kInt8Chains; ++i) acc[i] = ones, weights[i] = add(b, acc[i]);
  for (uint64_t it = 0; it < iterations; ++it) {
    // Opaque to the compiler every iteration: the products can be neither hoisted out of the loop
    // nor shared between chains (each chain has its own weights).
    asm volatile("" : "+v"(a));
    HWY_UNROLL(64)
    for (size_t i = 0; i < kInt8Chains; ++i) acc[i] = add(acc[i], madd(maddubs(a, weights[i]), ones));
  }
  I sum = acc[0];
  for (size_t i = 1; i < kInt8Chains; ++i) sum = add(sum, acc[i]);
  volatile int sink = 0;
  alignas(64) int lanes[kBytes / 4];
  std::memcpy(lanes, &sum, sizeof(sum));
  for (int lane : lanes) sink = sink + lane;
  return double(iterations) * kInt8Chains * kBytes * 2.0;
#else
  (void)iterations;
  return 0;
#endif
}

double PeakLoopTarget(int dtype, uint64_t iterations) {
  switch (Dtype(dtype)) {
    case Dtype::kF64: return FmaLoop<double>(iterations);
    case Dtype::kU8S8: return Int8Loop(iterations);
    default: return FmaLoop<float>(iterations);
  }
}

void PeakPathTarget(int dtype, PeakProbeInfo* info) {
  const std::string isa = hwy::TargetName(HWY_TARGET);
  if (Dtype(dtype) == Dtype::kU8S8) {
#if HWY_TARGET == HWY_AVX3_DL
    *info = {true, isa + " vpdpbusd", int(kVnniChains * 64 * 2), 2 * 64 * 2};
#elif HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX2
    *info = {true, isa + " vpmaddubsw+vpmaddwd+vpaddd", int(kChains / 2 * HWY_MAX_BYTES * 2),
             HWY_MAX_BYTES * 2};
#else
    *info = {false, isa + ": no int8 dot-product path", 0, 0};
#endif
    return;
  }
  const size_t lanes = Dtype(dtype) == Dtype::kF64 ? hn::Lanes(hn::ScalableTag<double>())
                                                   : hn::Lanes(hn::ScalableTag<float>());
  *info = {true, isa + " fma", int(kChains * lanes * 2), HWY_ARCH_X86 ? 2.0 * lanes * 2 : 0.0};
}

}  // namespace HWY_NAMESPACE
}  // namespace rooftune::probes
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace rooftune::probes {
HWY_EXPORT(PeakLoopTarget);
HWY_EXPORT(PeakPathTarget);

double RunPeakLoop(Dtype dtype, uint64_t iterations) {
  return HWY_DYNAMIC_DISPATCH(PeakLoopTarget)(int(dtype), iterations);
}
PeakProbeInfo PeakPathFor(Dtype dtype) {
  PeakProbeInfo info;
  HWY_DYNAMIC_DISPATCH(PeakPathTarget)(int(dtype), &info);
  return info;
}
}  // namespace rooftune::probes
#endif
