#include "probes/machine_probe.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/executor.h"
#include "framework/problem.h"
#include "kernels/workspace.h"
#include "probes/bandwidth.h"
#include "probes/cache_discovery.h"
#include "probes/ceiling_loops.h"
#include "probes/latency.h"
#include "probes/parallel_call.h"
#include "probes/peak_compute.h"
#include "probes/probe_checks.h"
#include "probes/system_facts.h"

namespace rooftune::probes {
namespace {

using Clock = std::chrono::steady_clock;

// Latency curves a full probe measures (ProbeLatency): an odd count, so that a majority exists.
constexpr int kLatencyRounds = 3;

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A ceiling is an upper bound, so it takes the best of several repetitions, not the median: a
// kernel that sustains more than the probe's best is evidence against the model.
double BestRate(int repetitions, const std::function<double()>& rate) {
  double best = 0;
  for (int r = 0; r < repetitions; ++r) best = std::max(best, rate());
  return best;
}

// One ceiling's measurement: repetitions of `repetition` (which returns a rate), taken in rounds
// interleaved with the other measurements' (MeasureInterleaved), so that a phase of a shared
// machine (another tenant, a frequency dip) lowers a few repetitions of each rather than every
// repetition of one. The ceiling is the best repetition: a bound is approached from below.
struct Measurement {
  std::function<double()> repetition;
  std::vector<double> rates;   // every repetition
  std::vector<double> latest;  // the current attempt's (every sitting of the first attempt)
  std::string first_doubt;     // why it was measured again, if it was
  double Best() const { return rates.empty() ? 0 : *std::max_element(rates.begin(), rates.end()); }
};

// `repetitions` rounds, each one repetition of every measurement in `open`; `fresh` begins a new
// attempt, otherwise the rounds add to the current one (another sitting of it).
void MeasureInterleaved(const std::vector<Measurement*>& open, int repetitions, bool fresh) {
  if (fresh) {
    for (Measurement* m : open) m->latest.clear();
  }
  for (int round = 0; round < repetitions; ++round) {
    for (Measurement* m : open) {
      const double rate = m->repetition();
      m->rates.push_back(rate);
      m->latest.push_back(rate);
    }
  }
}

std::vector<Measurement*> All(std::vector<Measurement>& measurements) {
  std::vector<Measurement*> all;
  for (Measurement& m : measurements) all.push_back(&m);
  return all;
}

// Checks every one of `all` as measured so far, and measures again (up to kProbeRetries more
// attempts, interleaved among themselves) those that `doubt` finds contradicted; returns each
// one's doubt after its last attempt ("" when it holds).
std::vector<std::string> CheckAndRetry(std::vector<Measurement>& all, int repetitions,
                                       const std::function<std::string(size_t)>& doubt) {
  std::vector<std::string> doubts(all.size());
  for (int attempt = 0;; ++attempt) {
    std::vector<Measurement*> open;
    for (size_t i = 0; i < all.size(); ++i) {
      doubts[i] = doubt(i);
      if (doubts[i].empty()) continue;
      if (all[i].first_doubt.empty()) all[i].first_doubt = doubts[i];
      open.push_back(&all[i]);
    }
    if (open.empty() || attempt == kProbeRetries) break;
    MeasureInterleaved(open, repetitions, /*fresh=*/true);
  }
  return doubts;
}

// The doubt about a measurement's repetitions alone: too far apart.
std::string SpreadDoubt(const Measurement& m) {
  const double spread = RepetitionSpread(m.latest);
  if (spread <= kRepetitionSpread) return "";
  return absl::StrFormat("median of the repetitions %.0f%% under the best, over %.0f%%",
                         100 * spread, 100 * kRepetitionSpread);
}

// The note a measured ceiling carries: unstable with the doubt that remained, or measured again
// with the doubt that was cleared.
std::string CheckedNote(const Ceiling& ceiling, const Measurement& m, const std::string& doubt) {
  if (!doubt.empty()) {
    return UnstableNote(ceiling, doubt, *std::min_element(m.rates.begin(), m.rates.end()),
                        m.Best());
  }
  if (!m.first_doubt.empty())
    return absl::StrCat(Ceiling::kMeasuredAgainNote, " (", m.first_doubt, ")");
  return "";
}

// The one-thread ceiling already measured for this loop's dtype and path (0 if none).
double OneThreadRate(const MachineProfile& profile, const PeakLoop& loop) {
  for (const Ceiling& c : profile.ceilings) {
    if (c.kind == Ceiling::Kind::kCompute && c.threads == 1 && c.dtype == loop.dtype &&
        c.source == loop.info.path) {
      return c.per_second;
    }
  }
  return 0;
}

// The compute ceilings at one thread count, measured in sittings spread over the probe
// (ProbeMachine says when), checked, and measured again where a check fails.
class ComputeProbe {
 public:
  ComputeProbe(Executor& executor, bool quick) : executor_(executor), quick_(quick) {
    for (PeakLoop& loop : PeakLoops()) {
      if (loop.info.supported) loops_.push_back(std::move(loop));
    }
    for (const PeakLoop& loop : loops_) {
      const uint64_t iterations = Calibrate(loop);
      measurements_.push_back({[this, &loop, iterations] {
        std::vector<double> ops(executor_.threads());
        const double seconds =
            TimeOnAllThreads(executor_, [&](int t) { ops[t] = loop.run(iterations); });
        double total = 0;
        for (double o : ops) total += o;
        return total / seconds;
      }});
    }
  }

  void Sitting(bool first) { MeasureInterleaved(All(measurements_), Repetitions(), first); }

  // Checks what the sittings measured, measures again what does not hold, and stores the ceilings.
  void Finish(MachineProfile& profile) {
    const int threads = executor_.threads();
    const std::vector<std::string> doubts =
        CheckAndRetry(measurements_, Repetitions(), [&](size_t i) {
          const PeakLoop& loop = loops_[i];
          std::string doubt = ComputeContradiction(
              measurements_[i].Best(), threads, profile.physical_cores,
              OneThreadRate(profile, loop), loop.info.OpsPerCycleOn(profile.VectorDatapathBytes()),
              profile.clock_ghz);
          return doubt.empty() ? SpreadDoubt(measurements_[i]) : doubt;
        });
    for (size_t i = 0; i < loops_.size(); ++i) {
      Ceiling c{Ceiling::Kind::kCompute, loops_[i].dtype,    MemoryLevel::kDram, threads,
                measurements_[i].Best(), loops_[i].info.path};
      c.note = CheckedNote(c, measurements_[i], doubts[i]);
      // Threads that never had their cores to themselves: what the one-thread rate says a core
      // each does, not the contradicted figure, is the ceiling (a bound must not be low).
      const double floor =
          ScalingFloor(threads, profile.physical_cores, OneThreadRate(profile, loops_[i]));
      if (!doubts[i].empty() && c.per_second < floor) {
        c.per_second = floor;
        absl::StrAppendFormat(&c.note, "; stored at %d x the one-thread rate", threads);
      }
      profile.ceilings.push_back(c);
    }
  }

 private:
  int Repetitions() const { return quick_ ? 3 : 5; }

  // Iterations for ~20 ms (quick) or ~60 ms per repetition.
  uint64_t Calibrate(const PeakLoop& loop) const {
    uint64_t iterations = 1 << 10;
    const double target = quick_ ? 0.02 : 0.06;
    for (;;) {
      const Clock::time_point start = Clock::now();
      loop.run(iterations);
      const double t = Seconds(start);
      if (t > target / 4 || iterations > (uint64_t{1} << 34)) {
        const double scaled = double(iterations) * target / std::max(t, 1e-6);
        return std::max<uint64_t>(1, uint64_t(scaled));
      }
      iterations *= 4;
    }
  }

  Executor& executor_;
  bool quick_;
  std::vector<PeakLoop> loops_;  // supported ones; measurements_[i] runs loops_[i]
  std::vector<Measurement> measurements_;
};

// The bandwidth probe's measurements, each a level and access kind (and, reading, which reader),
// over buffers that live until every round is done: the levels' rounds interleave.
struct StreamSet {
  struct What {
    MemoryLevel level;
    StreamKind kind;
    std::optional<Reader> reader;  // reads only
  };
  std::vector<What> whats;
  std::vector<Measurement> measurements;
  std::vector<std::shared_ptr<void>> buffers;

  // Whether measurement i is the one its ceiling takes: every non-read, and each level's fastest
  // reader. Only those are checked and measured again.
  bool Decides(size_t i) const {
    if (whats[i].kind != StreamKind::kRead) return true;
    for (size_t j = 0; j < whats.size(); ++j) {
      if (whats[j].kind == StreamKind::kRead && whats[j].level == whats[i].level &&
          (measurements[j].Best() > measurements[i].Best() ||
           (measurements[j].Best() == measurements[i].Best() && j < i))) {
        return false;
      }
    }
    return true;
  }

  // The read ceilings as they stand, for the order check.
  std::vector<Ceiling> Reads(int threads) const {
    std::vector<Ceiling> ceilings;
    for (size_t i = 0; i < whats.size(); ++i) {
      if (whats[i].kind == StreamKind::kRead && Decides(i)) {
        ceilings.push_back({Ceiling::Kind::kBandwidth, Dtype::kF32, whats[i].level, threads,
                            measurements[i].Best(), "read"});
      }
    }
    return ceilings;
  }
};

// Adds `level`'s streams of every kind to `set`: its working set allocated and first touched by
// the thread that streams each slice, so that its pages are local to that thread.
absl::Status AddLevelStreams(const MachineProfile& profile, Executor& executor, MemoryLevel level,
                             const std::vector<StreamKind>& kinds, bool quick, StreamSet& set) {
  const int threads = executor.threads();
  const uint64_t bytes = BandwidthWorkingSet(profile, level, threads);
  if (bytes == 0) return absl::OkStatus();
  // Three arrays (triad) share the working set.
  const size_t per_thread = std::max<size_t>(size_t(bytes / 4 / 3 / threads) / 64 * 64, 64);
  // On huge pages where the system grants them (working sets of 2 MiB and more): a ceiling is
  // the most the machine moves, and kernels keep their packed operands on huge pages.
  set.buffers.push_back(kernels::AllocateOnHugePages(per_thread * 3 * threads * sizeof(float)));
  float* data = static_cast<float*>(set.buffers.back().get());
  if (data == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("bandwidth probe: cannot allocate %.0f MiB for the %s working set",
                        bytes / 1048576.0, ToString(level)));
  }
  TimeOnAllThreads(executor, [&](int t) {
    float* slice = data + size_t(t) * 3 * per_thread;
    for (size_t j = 0; j < 3 * per_thread; ++j) slice[j] = 1.0f;
  });
  const bool nontemporal = level == MemoryLevel::kDram;
  for (StreamKind kind : kinds) {
    // Enough passes that a repetition takes a few milliseconds even in L1.
    const double pass_bytes =
        StreamBytes(kind, kind == StreamKind::kRead ? 3 * per_thread : per_thread) * threads;
    const int passes = std::max(1, int((quick ? 5e7 : 2e8) / pass_bytes));
    // One repetition of `pass` (one thread's passes over its slice) on every thread.
    auto repetition = [&executor, data, per_thread, pass_bytes,
                       passes](std::function<void(float*)> pass) {
      return [&executor, data, per_thread, pass_bytes, passes, pass] {
        const double seconds =
            TimeOnAllThreads(executor, [&](int t) { pass(data + size_t(t) * 3 * per_thread); });
        return pass_bytes * passes / seconds;
      };
    };
    // Reads take the whole slice (longer passes, less per-pass overhead in L1), by each of
    // kReaders (the ceiling is the most any reader gets); the other kinds split the slice into
    // their two or three arrays.
    if (kind == StreamKind::kRead) {
      for (const Reader& reader : kReaders) {
        set.whats.push_back({level, kind, reader});
        set.measurements.push_back({repetition([per_thread, reader, passes](float* a) {
          ReadPass(a, 3 * per_thread, reader, passes);
        })});
      }
    } else {
      set.whats.push_back({level, kind, std::nullopt});
      set.measurements.push_back({repetition([kind, per_thread, nontemporal, passes](float* a) {
        StreamPass(kind, a, a + per_thread, a + 2 * per_thread, per_thread, nontemporal, passes);
      })});
    }
  }
  return absl::OkStatus();
}

absl::Status ProbeBandwidth(MachineProfile& profile, Executor& executor, bool quick) {
  const int threads = executor.threads();
  const std::vector<StreamKind> kinds =
      quick ? std::vector<StreamKind>{StreamKind::kRead}
            : std::vector<StreamKind>{StreamKind::kRead, StreamKind::kWrite, StreamKind::kCopy,
                                      StreamKind::kTriad};
  StreamSet set;
  for (int i = 0; i < kNumMemoryLevels; ++i) {
    absl::Status s = AddLevelStreams(profile, executor, MemoryLevel(i), kinds, quick, set);
    if (!s.ok()) return s;
  }
  MeasureInterleaved(All(set.measurements), quick ? 3 : 5, /*fresh=*/true);
  const std::vector<std::string> doubts =
      CheckAndRetry(set.measurements, quick ? 3 : 5, [&](size_t i) -> std::string {
        if (!set.Decides(i)) return "";
        if (set.whats[i].kind == StreamKind::kRead) {
          const std::vector<MemoryLevel> out_of_order =
              OutOfOrderReads(set.Reads(threads), threads);
          if (std::find(out_of_order.begin(), out_of_order.end(), set.whats[i].level) !=
              out_of_order.end()) {
            return absl::StrFormat(
                "reads out of order: L1 >= L2 >= L3 >= DRAM does not hold within %.0f%%",
                100 * kReadOrderSlack);
          }
        }
        return SpreadDoubt(set.measurements[i]);
      });
  for (size_t i = 0; i < set.whats.size(); ++i) {
    if (!set.Decides(i)) continue;
    Ceiling c{Ceiling::Kind::kBandwidth,  Dtype::kF32,
              set.whats[i].level,         threads,
              set.measurements[i].Best(), std::string(ToString(set.whats[i].kind))};
    const std::string checked = CheckedNote(c, set.measurements[i], doubts[i]);
    c.reader = set.whats[i].reader;
    const std::string reader = c.reader ? "fastest reader " + c.reader->Name() : "";
    c.note = reader.empty() || checked.empty() ? reader + checked : reader + "; " + checked;
    profile.ceilings.push_back(c);
  }
  return absl::OkStatus();
}

// 1-thread read bandwidth by working set, one point per octave: the second view of where the
// caches end (streaming lets prefetchers hide latency that the pointer chase cannot).
absl::Status ProbeBandwidthCurve(MachineProfile& profile, bool quick) {
  const double top = double(BandwidthWorkingSet(profile, MemoryLevel::kDram, 1));
  for (double bytes = 16 * 1024; bytes <= top; bytes *= quick ? 4 : 2) {
    const size_t n = size_t(bytes / 4) / 64 * 64;
    Buffer<float> buffer(n);
    if (buffer.data() == nullptr)
      return absl::ResourceExhaustedError("bandwidth curve: out of memory");
    const int passes = std::max(1, int((quick ? 2e7 : 1e8) / bytes));
    StreamPass(StreamKind::kRead, buffer.data(), nullptr, nullptr, n);
    const double rate = BestRate(3, [&] {
      const Clock::time_point start = Clock::now();
      StreamPass(StreamKind::kRead, buffer.data(), nullptr, nullptr, n, false, passes);
      return bytes * passes / Seconds(start);
    });
    profile.read_bandwidth_curve.push_back({bytes, rate / 1e9});
  }
  return absl::OkStatus();
}

// One pointer chase on 4 KiB pages and one on huge pages, the levels the two show, and memory's
// latency without page walks (the huge-page curve's last plateau).
struct LatencyRound {
  std::vector<CurvePoint> small_pages, huge_pages;
  std::vector<MeasuredLevel> levels;
  double memory_latency_ns = 0;
};

absl::StatusOr<LatencyRound> MeasureLatencyRound(LatencyOptions latency) {
  LatencyRound round;
  latency.huge_pages = false;
  absl::StatusOr<std::vector<LatencyPoint>> small = MeasureLatencyCurve(latency);
  if (!small.ok()) return small.status();
  CacheDiscovery discovery = DiscoverCacheLevels(*small);
  for (const LatencyPoint& p : *small) round.small_pages.push_back({p.bytes, p.ns});
  // The same chase on huge pages: a step that vanishes there is a TLB's reach, not a cache.
  latency.huge_pages = true;
  absl::StatusOr<std::vector<LatencyPoint>> huge = MeasureLatencyCurve(latency);
  if (!huge.ok()) return huge.status();
  for (const LatencyPoint& p : *huge) round.huge_pages.push_back({p.bytes, p.ns});
  const CacheDiscovery huge_discovery = DiscoverCacheLevels(*huge);
  LabelTlbSteps(discovery, huge_discovery);
  round.levels = discovery.levels;
  round.memory_latency_ns = huge_discovery.memory_latency_ns > 0 ? huge_discovery.memory_latency_ns
                                                                 : discovery.memory_latency_ns;
  return round;
}

// How far a round's planned levels lie from the consensus's held ones: octaves to the nearest
// planned level for each held one (two for none within two), plus two for each planned level
// beyond the held count.
double OctavesFromConsensus(const MachineProfile& round, const MachineProfile& consensus) {
  std::vector<double> planned;
  for (const MachineProfile::PlannedStep& p : round.PlannedSteps()) {
    if (p.role == MachineProfile::PlannedStep::Role::kLevel) planned.push_back(p.step->size_bytes);
  }
  const std::vector<const LevelConsensus*> held = consensus.ConsensusLevels();
  double octaves = 2.0 * std::max<double>(0, double(planned.size()) - double(held.size()));
  for (const LevelConsensus* level : held) {
    double nearest = 2;
    for (double bytes : planned)
      nearest = std::min(nearest, std::abs(std::log2(bytes / level->Bytes())));
    octaves += nearest;
  }
  return octaves;
}

// The latency curves, kLatencyRounds of them in a full probe: a shared host moves a curve's steps
// from minute to minute (one guest's last cache step at 4.6, 6.5 and 12.7 MiB in three probes
// within an hour, and once a step within memory at 72 MiB), so the levels planned are those more
// than half of the rounds found, each at the median of its sizes (LevelConsensus), and a level
// whose rounds span more than a quarter octave is reported unstable with its range. The profile
// keeps the curves and steps of the round nearest that consensus.
absl::Status ProbeLatency(MachineProfile& profile, const ProbeOptions& options) {
  profile.clock_ghz = MeasureClockGhz();
  profile.fma_latency_cycles = MeasureFmaLatencyCycles(profile.clock_ghz);
  LatencyOptions latency;
  uint64_t last = 0;
  for (const CacheLevel& c : profile.caches) last = std::max(last, c.size_bytes);
  latency.max_bytes =
      options.quick ? 128.0 * (1 << 20) : std::max(256.0 * (1 << 20), 2.0 * double(last));
  latency.points_per_octave = options.quick ? 2 : 4;
  latency.seconds_per_point = options.quick ? 0.01 : 0.02;
  const int rounds = options.quick ? 1 : kLatencyRounds;
  std::vector<MachineProfile> seen;
  for (int r = 0; r < rounds; ++r) {
    if (options.progress) {
      options.progress(
          absl::StrFormat("probe: latency curve (pointer chase), round %d of %d", r + 1, rounds));
    }
    absl::StatusOr<LatencyRound> round = MeasureLatencyRound(latency);
    if (!round.ok()) return round.status();
    MachineProfile one = profile;
    one.latency_curve = std::move(round->small_pages);
    one.latency_curve_huge = std::move(round->huge_pages);
    one.measured_levels = std::move(round->levels);
    one.memory_latency_ns = round->memory_latency_ns;
    one.StartLevelConsensus();
    // Curve by curve, after the earlier probes' curves: each fold adds one curve, so a curve
    // that steps twice near one level counts for it once.
    const MachineProfile* before = seen.empty() ? options.earlier : &seen.back();
    if (before != nullptr) FoldLevelConsensus(*before, one);
    seen.push_back(std::move(one));
  }
  const MachineProfile& consensus = seen.back();
  size_t nearest = 0;
  for (size_t r = 1; r < seen.size(); ++r) {
    if (OctavesFromConsensus(seen[r], consensus) < OctavesFromConsensus(seen[nearest], consensus))
      nearest = r;
  }
  std::vector<LevelConsensus> levels = consensus.level_consensus;
  const int curves = consensus.level_probes;
  profile = std::move(seen[nearest]);
  profile.level_consensus = std::move(levels);
  profile.level_probes = curves;
  return absl::OkStatus();
}

}  // namespace

uint64_t BandwidthWorkingSet(const MachineProfile& profile, MemoryLevel level, int threads) {
  auto size = [&](int l) -> uint64_t { return profile.EffectiveCacheBytes(l).value_or(0); };
  const uint64_t l1 = size(1), l2 = size(2), l3 = size(3);
  // The DRAM set must clear the largest cache anyone claims, measured or reported.
  const uint64_t last =
      std::max(profile.LargestEffectiveCacheBytes(), profile.LargestReportedCacheBytes());
  switch (level) {
    // Half of a private level per thread: inside it, with room for the stack and code.
    case MemoryLevel::kL1: return l1 / 2 * threads;
    // Between the levels in log scale: past L1 by a factor, inside L2 by the same factor.
    case MemoryLevel::kL2:
      return l2 == 0 ? 0 : uint64_t(std::sqrt(double(l1) * double(l2)) * 1.41) / 2 * threads;
    // Past every thread's L2 and inside the shared L3: the geometric middle. The L2 counts at
    // its size as the OS reports it when that is larger: the latency curve plans a level from
    // where its misses begin, and a VM's 2 MiB L2 began missing at 406 KiB.
    case MemoryLevel::kL3: {
      const std::optional<CacheLevel> reported = profile.DataCache(2);
      const double l2_end = std::max(double(l2), reported ? double(reported->size_bytes) : 0.0);
      return l3 == 0 ? 0 : uint64_t(std::sqrt(l2_end * threads * double(l3)));
    }
    // At least 4x the last level, so no measurable part of it stays cached.
    case MemoryLevel::kDram: return std::max<uint64_t>(4 * last, uint64_t{256} << 20);
  }
  return 0;
}

double LinesInFlight(double bytes_per_second, double latency_ns, int line_bytes) {
  return bytes_per_second * latency_ns * 1e-9 / line_bytes;
}

absl::StatusOr<MachineProfile> ProbeMachine(const ProbeOptions& options) {
  MachineProfile profile = ReadSystemFacts();
  const CpuTimes cpu_times_before = ReadCpuTimes();
  if (options.progress) {
    if (std::optional<std::string> busy = BusyMachineWarning()) options.progress(*busy);
  }
  const int max_threads = options.max_threads > 0
                              ? std::min(options.max_threads, profile.logical_cpus)
                              : profile.logical_cpus;
  const std::vector<int> ladder = ThreadLadder(max_threads);
  // Compute is measured in three sittings per thread count: one before the latency curve, one
  // before that count's bandwidth probe and one after it, so that the repetitions span the whole
  // probe rather than a few seconds a passing neighbour or a slow phase of the host can cover.
  std::vector<std::unique_ptr<Executor>> executors;
  std::vector<std::unique_ptr<ComputeProbe>> computes;
  for (int threads : ladder) {
    executors.push_back(std::make_unique<Executor>(threads));
    computes.push_back(std::make_unique<ComputeProbe>(*executors.back(), options.quick));
  }
  if (options.progress) options.progress("probe: peak compute (first sitting)");
  for (auto& compute : computes) compute->Sitting(/*first=*/true);
  if (options.progress) options.progress("probe: clock and latency curves (pointer chase)");
  if (absl::Status s = ProbeLatency(profile, options); !s.ok()) return s;
  if (options.progress) options.progress("probe: read bandwidth curve, 1 thread");
  if (absl::Status s = ProbeBandwidthCurve(profile, options.quick); !s.ok()) return s;
  for (size_t step = 0; step < ladder.size(); ++step) {
    // Which of the ladder's counts: on a large server the bandwidth probes take most of the time.
    const std::string where = absl::StrFormat("%d thread(s), count %d of %d", ladder[step],
                                              int(step) + 1, int(ladder.size()));
    if (options.progress) options.progress("probe: peak compute (second sitting), " + where);
    computes[step]->Sitting(/*first=*/false);
    if (options.progress) options.progress("probe: bandwidth, " + where);
    if (absl::Status s = ProbeBandwidth(profile, *executors[step], options.quick); !s.ok()) {
      return s;
    }
    if (options.progress) options.progress("probe: peak compute (third sitting), " + where);
    computes[step]->Sitting(/*first=*/false);
    computes[step]->Finish(profile);
    if (ladder[step] > 1) {
      profile.parallel_calls.push_back(
          {ladder[step], MeasureParallelCallSeconds(*executors[step])});
    }
  }
  RaiseCeilingsToTheirEvidence(profile);
  profile.steal_share = StealShare(cpu_times_before, ReadCpuTimes());
  if (options.progress && profile.steal_share > kHighSteal) {
    options.progress(absl::StrFormat(
        "probe: the hypervisor ran others on these CPUs for %.0f%% of the probe's CPU time "
        "(steal): its ceilings may be low",
        100 * profile.steal_share));
  }
  return profile;
}

void RaiseCeilingsToTheirEvidence(MachineProfile& profile) {
  std::vector<Ceiling>& all = profile.ceilings;
  // Evidence from the measurements as taken, before any is raised.
  const std::vector<Ceiling> measured = all;
  for (Ceiling& c : all) {
    double best = c.per_second;
    const Ceiling* from = nullptr;
    for (const Ceiling& other : measured) {
      if (!c.SamePath(other) || other.threads == c.threads) continue;
      // More threads can leave some idle; fewer threads did, on average, their share.
      const double evidence = other.threads < c.threads
                                  ? other.per_second
                                  : other.per_second * c.threads / other.threads;
      if (evidence > best) best = evidence, from = &other;
    }
    // Within 2% is the same figure: not worth a note.
    if (from == nullptr || best < 1.02 * c.per_second) continue;
    c.note = absl::StrFormat("%s%s%s: the %d-thread run did more", Ceiling::kRaisedNote,
                             c.RateText(c.per_second), c.note.empty() ? "" : " (" + c.note + ")",
                             from->threads);
    c.per_second = best;
  }
}

}  // namespace rooftune::probes
