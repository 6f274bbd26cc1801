// foreach_target.h must follow the define, before any other include.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "probes/peak_compute.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on

#include "probes/peak_compute.h"

#include "hwy/highway.h"
#include "kernels/avx_vnni.h"

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

// Chains of the s8-weight loop: each widens a vector's worth of s8 weights to s32, converts them
// to f32 and multiplies them into its sum, the step of the GEMV whose s8 weights meet f32
// activations (kernels/gemv): three instructions for each multiply-add, which the FMA loop's
// rate would price as one. Half the FMA loop's chains: each needs a temporary beside its sum.
constexpr size_t kConvertChains = kChains / 2;

double ConvertFmaLoop(uint64_t iterations) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<int32_t, decltype(df)> di32;
  const hn::Rebind<int8_t, decltype(df)> di8;
  using V = hn::Vec<decltype(df)>;
  const size_t N = hn::Lanes(df);
  alignas(64) static int8_t weights[kConvertChains * 64];  // 64: the widest vector's lanes
  V acc[kConvertChains];
  for (size_t i = 0; i < kConvertChains; ++i) acc[i] = hn::Zero(df);
  const V x = hn::Set(df, 0.5f);
  const int8_t* w = weights;
  for (uint64_t it = 0; it < iterations; ++it) {
    // The weights as if new on every iteration, read from L1 as the kernel reads its rows: a
    // load the compiler cannot hoist, so every conversion runs.
    asm volatile("" : "+r"(w));
    HWY_UNROLL(64)
    for (size_t i = 0; i < kConvertChains; ++i) {
      const V converted = hn::ConvertTo(df, hn::PromoteTo(di32, hn::LoadU(di8, w + i * N)));
      acc[i] = hn::MulAdd(converted, x, acc[i]);
    }
  }
  V sum = acc[0];
  for (size_t i = 1; i < kConvertChains; ++i) sum = hn::Add(sum, acc[i]);
  volatile float sink = hn::GetLane(sum);
  (void)sink;
  return double(iterations) * kConvertChains * N * 2.0;
}

#if HWY_TARGET == HWY_AVX3_DL
constexpr size_t kVnniChains = 16;
// vpdpbusd: 64 u8 x s8 products summed in fours into 16 s32 lanes, one instruction. Highway
// 1.0.3's AVX3_DL target string enables avxvnni but not avx512vnni, so this function adds it; the
// target is only chosen on CPUs with both. Inline assembly, sixteen accumulators in zmm0-15: with
// intrinsics GCC 12 copied every accumulator between registers and kept two on the stack on each
// iteration (vpdpbusd reads and writes its accumulator), which held the loop, and the int8
// ceiling with it, well below what the instruction sustains (bench/ceiling_check measures it).
__attribute__((target(HWY_TARGET_STR ",avx512vnni"))) double VnniLoop(uint64_t iterations) {
  uint64_t n = iterations;
#define RT_VPDPBUSD(acc) "vpdpbusd %%zmm17, %%zmm16, %%zmm" acc "\n\t"
  asm volatile(
      "vpxord %%zmm16, %%zmm16, %%zmm16\n\tvpxord %%zmm17, %%zmm17, %%zmm17\n\t"
      "test %0, %0\n\tjz 2f\n\t"
      "1:\n\t" RT_VPDPBUSD("0") RT_VPDPBUSD("1") RT_VPDPBUSD("2") RT_VPDPBUSD("3")
          RT_VPDPBUSD("4") RT_VPDPBUSD("5") RT_VPDPBUSD("6") RT_VPDPBUSD("7") RT_VPDPBUSD("8")
              RT_VPDPBUSD("9") RT_VPDPBUSD("10") RT_VPDPBUSD("11") RT_VPDPBUSD("12")
                  RT_VPDPBUSD("13") RT_VPDPBUSD("14") RT_VPDPBUSD("15")
      "dec %0\n\tjnz 1b\n\t"
      "2:"
      : "+r"(n)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "cc");
#undef RT_VPDPBUSD
  return double(iterations) * kVnniChains * 64 * 2.0;
}
#endif

#if HWY_TARGET == HWY_AVX2
constexpr size_t kAvxVnniChains = 14;
// AVX-VNNI's VEX vpdpbusd: 32 u8 x s8 products into 8 s32 lanes, the int8 kernels' fast path on
// the AVX2 target where the CPU has it (kernels/avx_vnni.h). Fourteen accumulators in ymm0-13,
// the operands in ymm14-15 (VEX reaches only 16 registers). Priced at vpmaddubsw's three
// instructions instead, a kernel on this path would read as faster than its ceiling.
double AvxVnniLoop(uint64_t iterations) {
  uint64_t n = iterations;
#define RT_VPDPBUSD(acc) "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm" acc "\n\t"
  asm volatile(
      "vpxor %%xmm14, %%xmm14, %%xmm14\n\tvpxor %%xmm15, %%xmm15, %%xmm15\n\t"
      "test %0, %0\n\tjz 2f\n\t"
      "1:\n\t" RT_VPDPBUSD("0") RT_VPDPBUSD("1") RT_VPDPBUSD("2") RT_VPDPBUSD("3")
          RT_VPDPBUSD("4") RT_VPDPBUSD("5") RT_VPDPBUSD("6") RT_VPDPBUSD("7") RT_VPDPBUSD("8")
              RT_VPDPBUSD("9") RT_VPDPBUSD("10") RT_VPDPBUSD("11") RT_VPDPBUSD("12")
                  RT_VPDPBUSD("13")
      "dec %0\n\tjnz 1b\n\t"
      "2:"
      : "+r"(n)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc");
#undef RT_VPDPBUSD
  return double(iterations) * kAvxVnniChains * 32 * 2.0;
}
#endif

// Chains of the vpmaddubsw path (each needs a temporary: six fit the 16 AVX2 registers).
constexpr size_t kInt8Chains = 6;

// The u8 x s8 dot product has no Highway op in 1.0.3: inline assembly, fenced by target.
double Int8Loop(uint64_t iterations) {
#if HWY_TARGET == HWY_AVX3_DL
  return VnniLoop(iterations);
#elif HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX2
#if HWY_TARGET == HWY_AVX2
  if (kernels::AvxVnniAvailable()) return AvxVnniLoop(iterations);
#endif
    // vpmaddubsw (u8 x s8 pairs -> s16) + vpmaddwd (x 1 -> s32 pairs) + vpaddd: the int8 path
    // without VNNI, on kInt8Chains chains, each with its own temporary (the three instructions
    // share ports). Inline assembly: with intrinsics GCC 12 proved the chains' products equal and
    // computed one for all of them, so the loop ran a sixth of the multiplies it counted.
#if HWY_TARGET == HWY_AVX3
#define RT_VEC "zmm"
  constexpr int kBytes = 64;
#else
#define RT_VEC "ymm"
  constexpr int kBytes = 32;
#endif
#define RT_STEP(t, acc)                                    \
  "vpmaddubsw %%" RT_VEC "13, %%" RT_VEC "12, %%" RT_VEC t \
  "\n\t"                                                   \
  "vpmaddwd %%" RT_VEC "14, %%" RT_VEC t ", %%" RT_VEC t   \
  "\n\t"                                                   \
  "vpaddd %%" RT_VEC t ", %%" RT_VEC acc ", %%" RT_VEC acc "\n\t"
  uint64_t n = iterations;
  asm volatile(
      "vpxor %%xmm12, %%xmm12, %%xmm12\n\tvpxor %%xmm13, %%xmm13, %%xmm13\n\t"
      "vpxor %%xmm14, %%xmm14, %%xmm14\n\t"
      "test %0, %0\n\tjz 2f\n\t"
      "1:\n\t" RT_STEP("6", "0") RT_STEP("7", "1") RT_STEP("8", "2") RT_STEP("9", "3")
          RT_STEP("10", "4") RT_STEP("11", "5")
      "dec %0\n\tjnz 1b\n\t"
      "2:"
      : "+r"(n)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "cc");
#undef RT_STEP
#undef RT_VEC
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
    case Dtype::kS8F32: return ConvertFmaLoop(iterations);
    default: return FmaLoop<float>(iterations);
  }
}

void PeakPathTarget(int dtype, PeakProbeInfo* info) {
  const std::string isa = hwy::TargetName(HWY_TARGET);
  if (Dtype(dtype) == Dtype::kU8S8) {
#if HWY_TARGET == HWY_AVX3_DL
    *info = {true, isa + " vpdpbusd", int(kVnniChains * 64 * 2), 2 * 64 * 2, 64};
#elif HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX2
#if HWY_TARGET == HWY_AVX2
    if (kernels::AvxVnniAvailable()) {
      *info = {true, isa + " vpdpbusd (AVX-VNNI)", int(kAvxVnniChains * 32 * 2), 2 * 32 * 2, 32};
      return;
    }
#endif
    *info = {true, isa + " vpmaddubsw+vpmaddwd+vpaddd", int(kInt8Chains * HWY_MAX_BYTES * 2),
             HWY_MAX_BYTES * 2, HWY_MAX_BYTES};
#else
    *info = {false, isa + ": no int8 dot-product path", 0, 0};
#endif
    return;
  }
  if (Dtype(dtype) == Dtype::kS8F32) {
    // No instruction throughput is claimed (0): the widen, the convert and the FMA share ports
    // differently from core to core.
    const size_t lanes = hn::Lanes(hn::ScalableTag<float>());
    *info = {true, isa + " s8 widen, convert, multiply-add", int(kConvertChains * lanes * 2), 0.0,
             int(HWY_MAX_BYTES)};
    return;
  }
  const size_t lanes = Dtype(dtype) == Dtype::kF64 ? hn::Lanes(hn::ScalableTag<double>())
                                                   : hn::Lanes(hn::ScalableTag<float>());
  *info = {true, isa + " fma", int(kChains * lanes * 2), HWY_ARCH_X86 ? 2.0 * lanes * 2 : 0.0,
           int(HWY_MAX_BYTES)};
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
