// foreach_target.h must follow the define, before any other include.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "probes/bandwidth.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on

#include "probes/bandwidth.h"

#include <algorithm>

#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace rooftune::probes {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D, class V>
HWY_INLINE void Put(D d, V v, float* p, bool nontemporal) {
  if (nontemporal) {
    hn::Stream(v, d, p);
  } else {
    hn::Store(v, d, p);
  }
}

// A read of kStreams streams at once, one per kStreams-th of the array, into one accumulator per
// stream. How a core reads DRAM fastest depends on the machine: one stream's single chain of
// dependent adds paces the loads and lets the prefetchers run further ahead, while eight chains
// cover a 4-cycle add latency at two loads per cycle, which an L1-sized read needs. Unaligned
// loads: callers may hand over any slice of a buffer. The sums carry over from pass to pass and
// are reduced once: reducing after every pass of an L1-sized array costs about a fifth of its
// time.
//
// With kSumsInMemory each sum is stored and reloaded after every vector: some cores stream DRAM
// faster with a store in every iteration. With kPrefetch each stream's line kPrefetchAhead bytes
// on is fetched as a line begins, into L1 or as far as L2, as the GEMV kernels do: the hardware
// prefetchers stop at page boundaries and keep fewer lines in flight than some cores can. With
// kDot each vector is multiplied by one of a cached vector of ones as it is added (a GEMV's row
// times x, the same sums): one guest's core streamed DRAM 10% faster with that second load from
// L1 beside every line than with the lines alone, and its GEMV read 1.07x the fastest plain
// reader. A ceiling is the most any reader gets.
constexpr size_t kPrefetchAheadFloats = 4096 / sizeof(float);

enum class Prefetch { kNone, kIntoL1, kIntoL2 };

// kDot's cached vector: 4 KiB of ones, which L1 holds beside any stream.
constexpr size_t kDotFloats = 1024;
const float* Ones() {
  alignas(64) static float ones[kDotFloats];
  static const bool filled = (std::fill_n(ones, kDotFloats, 1.0f), true);
  (void)filled;
  return ones;
}

template <size_t kStreams, bool kSumsInMemory, Prefetch kPrefetch = Prefetch::kNone,
          bool kDot = false>
float ReadStreams(const float* HWY_RESTRICT a, size_t n, size_t passes) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t part = n / kStreams / N * N;
  const float* HWY_RESTRICT ones = kDot ? Ones() : nullptr;
  hn::Vec<decltype(d)> sum[kStreams];
  for (size_t s = 0; s < kStreams; ++s) sum[s] = hn::Zero(d);
  HWY_ALIGN float spilled[kSumsInMemory ? kStreams * hn::MaxLanes(d) : 1];
  float tail[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (size_t pass = 0; pass < passes; ++pass) {
    for (size_t j = 0; j < part; j += N) {
      for (size_t s = 0; s < kStreams; ++s) {
        if constexpr (kPrefetch != Prefetch::kNone) {
          if (j % (64 / sizeof(float)) == 0) {
            __builtin_prefetch(a + s * part + j + kPrefetchAheadFloats, 0,
                               kPrefetch == Prefetch::kIntoL2 ? 2 : 3);
          }
        }
        if constexpr (kDot) {
          sum[s] = hn::MulAdd(hn::LoadU(d, a + s * part + j), hn::Load(d, ones + j % kDotFloats),
                              sum[s]);
        } else {
          sum[s] = hn::Add(sum[s], hn::LoadU(d, a + s * part + j));
        }
        if constexpr (kSumsInMemory) {
          hn::Store(sum[s], d, spilled + s * N);
          asm volatile("" ::: "memory");  // so the compiler keeps the store and the reload
          sum[s] = hn::Load(d, spilled + s * N);
        }
      }
    }
    // What the streams leave (under kStreams vectors, then under one): vectors into the
    // accumulators, the rest into four scalar sums (one chain of dependent scalar adds is slow:
    // a 64-float tail had cost an L1-sized pass 40%).
    size_t i = kStreams * part;
    for (size_t s = 0; i + N <= n; i += N, ++s) sum[s] = hn::Add(sum[s], hn::LoadU(d, a + i));
    for (size_t t = 0; i < n; ++i, ++t) tail[t % 4] += a[i];
  }
  for (size_t s = 1; s < kStreams; ++s) sum[0] = hn::Add(sum[0], sum[s]);
  return hn::GetLane(hn::SumOfLanes(d, sum[0])) + ((tail[0] + tail[1]) + (tail[2] + tail[3]));
}

template <bool kSumsInMemory, Prefetch kPrefetch, bool kDot = false>
float ReadWithStreams(const float* HWY_RESTRICT a, size_t n, int streams, size_t passes) {
  switch (streams) {
    case 1: return ReadStreams<1, kSumsInMemory, kPrefetch, kDot>(a, n, passes);
    case 2: return ReadStreams<2, kSumsInMemory, kPrefetch, kDot>(a, n, passes);
    case 4: return ReadStreams<4, kSumsInMemory, kPrefetch, kDot>(a, n, passes);
    default: return ReadStreams<8, kSumsInMemory, kPrefetch, kDot>(a, n, passes);
  }
}

float ReadPassTarget(const float* HWY_RESTRICT a, size_t n, int streams, bool sums_in_memory,
                     bool prefetch, bool into_l2, bool dot, size_t passes) {
  const Prefetch fetch = !prefetch ? Prefetch::kNone
                         : into_l2 ? Prefetch::kIntoL2
                                   : Prefetch::kIntoL1;
  if (dot) {
    switch (fetch) {
      case Prefetch::kNone:
        return ReadWithStreams<false, Prefetch::kNone, true>(a, n, streams, passes);
      case Prefetch::kIntoL1:
        return ReadWithStreams<false, Prefetch::kIntoL1, true>(a, n, streams, passes);
      case Prefetch::kIntoL2:
        return ReadWithStreams<false, Prefetch::kIntoL2, true>(a, n, streams, passes);
    }
  }
  switch (fetch) {
    case Prefetch::kIntoL1: return ReadWithStreams<false, Prefetch::kIntoL1>(a, n, streams, passes);
    case Prefetch::kIntoL2: return ReadWithStreams<false, Prefetch::kIntoL2>(a, n, streams, passes);
    case Prefetch::kNone: break;
  }
  return sums_in_memory ? ReadWithStreams<true, Prefetch::kNone>(a, n, streams, passes)
                        : ReadWithStreams<false, Prefetch::kNone>(a, n, streams, passes);
}

float StreamPassTarget(int kind, float* HWY_RESTRICT a, const float* HWY_RESTRICT b,
                       const float* HWY_RESTRICT c, size_t n, bool nt, size_t passes) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  switch (StreamKind(kind)) {
    case StreamKind::kRead: return ReadStreams<8, false>(a, n, passes);
    case StreamKind::kWrite: {
      const auto v = hn::Set(d, 1.0f);
      for (size_t pass = 0; pass < passes; ++pass) {
        size_t i = 0;
        for (; i + N <= n; i += N) Put(d, v, a + i, nt);
        for (; i < n; ++i) a[i] = 1.0f;
      }
      break;
    }
    case StreamKind::kCopy:
      for (size_t pass = 0; pass < passes; ++pass) {
        size_t i = 0;
        for (; i + N <= n; i += N) Put(d, hn::Load(d, b + i), a + i, nt);
        for (; i < n; ++i) a[i] = b[i];
      }
      break;
    case StreamKind::kTriad: {
      const auto s = hn::Set(d, 3.0f);
      for (size_t pass = 0; pass < passes; ++pass) {
        size_t i = 0;
        for (; i + N <= n; i += N) {
          Put(d, hn::MulAdd(s, hn::Load(d, c + i), hn::Load(d, b + i)), a + i, nt);
        }
        for (; i < n; ++i) a[i] = b[i] + 3.0f * c[i];
      }
      break;
    }
  }
  if (nt) hwy::FlushStream();
  return a[0];
}

}  // namespace HWY_NAMESPACE
}  // namespace rooftune::probes
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace rooftune::probes {
HWY_EXPORT(StreamPassTarget);
HWY_EXPORT(ReadPassTarget);

absl::string_view ToString(StreamKind kind) {
  switch (kind) {
    case StreamKind::kRead: return "read";
    case StreamKind::kWrite: return "write";
    case StreamKind::kCopy: return "copy";
    case StreamKind::kTriad: return "triad";
  }
  return "?";
}

double StreamBytes(StreamKind kind, size_t n) {
  const double array = 4.0 * double(n);
  switch (kind) {
    case StreamKind::kRead: return array;
    case StreamKind::kWrite: return array;  // non-temporal stores: no read for ownership
    case StreamKind::kCopy: return 2 * array;
    case StreamKind::kTriad: return 3 * array;
  }
  return 0;
}

float StreamPass(StreamKind kind, float* a, const float* b, const float* c, size_t n,
                 bool nontemporal, size_t passes) {
  return HWY_DYNAMIC_DISPATCH(StreamPassTarget)(int(kind), a, b, c, n, nontemporal, passes);
}

float ReadPass(const float* a, size_t n, Reader reader, size_t passes) {
  return HWY_DYNAMIC_DISPATCH(ReadPassTarget)(a, n, reader.streams, reader.sums_in_memory,
                                              reader.prefetch, reader.prefetch_into_l2, reader.dot,
                                              passes);
}
}  // namespace rooftune::probes
#endif
