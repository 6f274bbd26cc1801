#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "probes/bandwidth.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "probes/bandwidth.h"

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

float StreamPassTarget(int kind, float* HWY_RESTRICT a, const float* HWY_RESTRICT b,
                       const float* HWY_RESTRICT c, size_t n, bool nt) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  switch (StreamKind(kind)) {
    case StreamKind::kRead: {
      // Four streams at once, one per quarter of the array: a single sequential stream leaves
      // DRAM bandwidth unused (the prefetchers keep too few lines in flight per stream; the GEMV
      // kernel, which reads several weight rows together, out-ran a one-stream probe). Two
      // accumulators per stream: two loads per cycle against a 4-cycle add latency.
      const size_t quarter = n / 4 / (2 * N) * (2 * N);
      const float* q[4] = {a, a + quarter, a + 2 * quarter, a + 3 * quarter};
      auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
      auto s4 = hn::Zero(d), s5 = hn::Zero(d), s6 = hn::Zero(d), s7 = hn::Zero(d);
      for (size_t j = 0; j < quarter; j += 2 * N) {
        s0 = hn::Add(s0, hn::Load(d, q[0] + j));
        s1 = hn::Add(s1, hn::Load(d, q[0] + j + N));
        s2 = hn::Add(s2, hn::Load(d, q[1] + j));
        s3 = hn::Add(s3, hn::Load(d, q[1] + j + N));
        s4 = hn::Add(s4, hn::Load(d, q[2] + j));
        s5 = hn::Add(s5, hn::Load(d, q[2] + j + N));
        s6 = hn::Add(s6, hn::Load(d, q[3] + j));
        s7 = hn::Add(s7, hn::Load(d, q[3] + j + N));
      }
      s0 = hn::Add(hn::Add(s0, s1), hn::Add(s2, s3));
      s4 = hn::Add(hn::Add(s4, s5), hn::Add(s6, s7));
      float sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s4)));
      for (i = 4 * quarter; i < n; ++i) sum += a[i];
      return sum;
    }
    case StreamKind::kWrite: {
      const auto v = hn::Set(d, 1.0f);
      for (; i + N <= n; i += N) Put(d, v, a + i, nt);
      for (; i < n; ++i) a[i] = 1.0f;
      break;
    }
    case StreamKind::kCopy:
      for (; i + N <= n; i += N) Put(d, hn::Load(d, b + i), a + i, nt);
      for (; i < n; ++i) a[i] = b[i];
      break;
    case StreamKind::kTriad: {
      const auto s = hn::Set(d, 3.0f);
      for (; i + N <= n; i += N) Put(d, hn::MulAdd(s, hn::Load(d, c + i), hn::Load(d, b + i)), a + i, nt);
      for (; i < n; ++i) a[i] = b[i] + 3.0f * c[i];
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
                 bool nontemporal) {
  return HWY_DYNAMIC_DISPATCH(StreamPassTarget)(int(kind), a, b, c, n, nontemporal);
}
}  // namespace rooftune::probes
#endif
