// The counter plumbing with software events (which work without a PMU), the "unsupported" path
// for hardware events where the PMU is missing, and the event tables against libpfm4's own.
#include "probes/counters.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mman.h>

#include <ctime>
#include <vector>

#include "probes/pmu_events.h"

namespace rooftune::probes {
namespace {

TEST(Counters, SoftwareEventsCountTheMeasuredRegionOnly) {
  absl::StatusOr<CounterGroup> group = CounterGroup::Open(kSoftwareEvents);
  ASSERT_TRUE(group.ok()) << group.status();
  std::vector<CounterReading> before = group->Read();
  if (!group->AnySupported())
    GTEST_SKIP() << "perf_event_open is not available: " << before[0].reason;
  // Not started: nothing counted yet.
  for (const CounterReading& r : before) EXPECT_EQ(r.value, 0) << r.event;

  group->Start();
  // Fresh anonymous pages (the heap may already hold faulted-in memory): one fault per page.
  const size_t pages = 2000;
  char* memory = static_cast<char*>(
      mmap(nullptr, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(memory, MAP_FAILED);
  for (size_t i = 0; i < pages * 4096; i += 4096) memory[i] = 1;
  volatile double sink = 0;
  for (int i = 0; i < 2000000; ++i) sink = sink + i * 0.5;
  group->Stop();
  const std::vector<CounterReading> after = group->Read();
  ASSERT_EQ(after.size(), 3u);
  EXPECT_TRUE(after[0].supported) << after[0].reason;
  EXPECT_GT(after[0].value, 1e5) << "task clock, ns";
  EXPECT_GE(after[1].value, 0.9 * pages) << "page faults";
  EXPECT_DOUBLE_EQ(after[0].running_fraction, 1.0);

  // Disabled again: more work is not counted.
  const double faults = after[1].value;
  munmap(memory, pages * 4096);
  memory = static_cast<char*>(
      mmap(nullptr, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  for (size_t i = 0; i < pages * 4096; i += 4096) memory[i] = 1;
  EXPECT_EQ(group->Read()[1].value, faults);
  munmap(memory, pages * 4096);
}

// Counting only the kernel's calls, not what runs between them (the eviction of cold timing):
// Resume adds to the counts where Start would reset them, and the figures are per call.
TEST(Counters, ResumeAddsUpRegionsAndFiguresArePerCall) {
  absl::StatusOr<CounterGroup> group = CounterGroup::Open(kSoftwareEvents);
  ASSERT_TRUE(group.ok()) << group.status();
  if (!group->AnySupported()) GTEST_SKIP() << "perf_event_open is not available";
  // Work measured in this thread's CPU time, so a busy machine does not stretch it.
  auto spin_cpu_ms = [](double ms) {
    auto now = [] {
      timespec t;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
      return double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6;
    };
    const double start = now();
    while (now() - start < ms) {
    }
  };
  group->Start();
  spin_cpu_ms(5);
  group->Stop();
  group->Start();  // a reset: the 5 ms are not counted
  group->Stop();
  for (int call = 0; call < 4; ++call) {
    group->Resume();
    spin_cpu_ms(2);  // counted
    group->Stop();
    spin_cpu_ms(10);  // between calls: not counted
  }
  const std::vector<CountedFigure> figures = PerCallFigures(group->Read(), 4);
  ASSERT_EQ(figures.size(), 3u);
  EXPECT_EQ(figures[0].metric, "task_clock");
  EXPECT_EQ(figures[0].unit, "ns");
  EXPECT_TRUE(figures[0].supported) << figures[0].reason;
  EXPECT_GE(figures[0].per_call, 1.9e6);
  EXPECT_LT(figures[0].per_call, 4e6) << "time between the calls, or before the reset, was counted";
  EXPECT_EQ(figures[1].metric, "page_faults");
  EXPECT_EQ(figures[1].unit, "events");
  EXPECT_EQ(figures[2].metric, "context_switches");
}

// A whole CPU's counts (how bench counts several threads): this thread pinned to CPU 0 spins
// 5 ms there, and CPU 0's clock counts at least that; without the privilege it says what is
// needed.
TEST(Counters, AWholeCpuCountsWhatRanThereOrSaysWhatItNeeds) {
  cpu_set_t saved, zero;
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  CPU_ZERO(&zero);
  CPU_SET(0, &zero);
  if (!CPU_ISSET(0, &saved) || sched_setaffinity(0, sizeof(zero), &zero) != 0) {
    GTEST_SKIP() << "cannot run on CPU 0";
  }
  absl::StatusOr<CounterGroup> group = CounterGroup::Open(kSoftwareEventsPerCpu, 0);
  ASSERT_TRUE(group.ok()) << group.status();
  group->Start();
  timespec start, now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  do {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) * 1e9 + (now.tv_nsec - start.tv_nsec) < 5e6);
  group->Stop();
  sched_setaffinity(0, sizeof(saved), &saved);
  const std::vector<CountedFigure> figures = PerCallFigures(group->Read(), 1);
  ASSERT_EQ(figures.size(), 3u);
  EXPECT_EQ(figures[0].metric, "cpu_clock");
  if (figures[0].supported) {
    EXPECT_GE(figures[0].per_call, 4.9e6);
  } else {
    EXPECT_NE(figures[0].reason.find("unsupported"), std::string::npos) << figures[0].reason;
  }
}

// One group per CPU, added up: an event counts when every group counted it.
TEST(Counters, FiguresOfSeveralCpusAddUp) {
  const CountedFigure clock{"cpu_clock", "perf::PERF_COUNT_SW_CPU_CLOCK", true, "", 3e6, "ns", 1.0};
  CountedFigure missing = clock;
  missing.supported = false, missing.reason = "unsupported: not permitted", missing.per_call = 0;
  CountedFigure partly = clock;
  partly.running_fraction = 0.5;
  const std::vector<CountedFigure> sum = AddFigures({{clock, clock}, {partly, missing}});
  ASSERT_EQ(sum.size(), 2u);
  EXPECT_TRUE(sum[0].supported);
  EXPECT_DOUBLE_EQ(sum[0].per_call, 6e6);
  EXPECT_DOUBLE_EQ(sum[0].running_fraction, 0.5);
  EXPECT_FALSE(sum[1].supported);
  EXPECT_EQ(sum[1].reason, "unsupported: not permitted");
  EXPECT_EQ(sum[1].per_call, 0);
  EXPECT_TRUE(AddFigures({}).empty());
}

TEST(Counters, HardwareEventsCountOrSayWhyNot) {
  const std::string pmu = DetectedCorePmu();
  std::vector<std::string> events = {"perf::PERF_COUNT_HW_CPU_CYCLES",
                                     "perf::PERF_COUNT_HW_INSTRUCTIONS",
                                     "perf::PERF_COUNT_SW_TASK_CLOCK"};
  absl::StatusOr<CounterGroup> group = CounterGroup::Open(events);
  ASSERT_TRUE(group.ok());
  group->Start();
  volatile double sink = 0;
  for (int i = 0; i < 1000000; ++i) sink = sink + i;
  group->Stop();
  for (const CounterReading& r : group->Read()) {
    if (r.supported) {
      EXPECT_GT(r.value, 0) << r.event;
    } else {
      EXPECT_NE(r.reason.find("unsupported"), std::string::npos) << r.event << ": " << r.reason;
    }
  }
  // A name libpfm4 does not know is unsupported with libpfm4's reason, not an error.
  absl::StatusOr<CounterGroup> bogus = CounterGroup::Open({"NO_SUCH_EVENT_ANYWHERE"});
  ASSERT_TRUE(bogus.ok());
  const std::vector<CounterReading> r = bogus->Read();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].supported);
  EXPECT_NE(r[0].reason.find("libpfm4 cannot encode"), std::string::npos) << r[0].reason;
}

TEST(PmuTables, EveryEventExistsInLibpfm4) {
  ASSERT_GE(PmuTables().size(), 6u);
  for (const PmuTable& table : PmuTables()) {
    bool has_bytes = false, has_cycles = false;
    for (const MetricEvent& e : table.events) {
      EXPECT_TRUE(PfmKnowsEvent(table.pmu, e.event)) << table.pmu << "::" << e.event;
      has_bytes |= e.unit == "bytes";
      has_cycles |= e.metric == "cycles";
    }
    EXPECT_TRUE(has_bytes && has_cycles) << table.pmu;
    EXPECT_FALSE(table.caveats.empty()) << table.pmu;
  }
  EXPECT_FALSE(PfmKnowsEvent("spr", "L1D:NO_SUCH_UMASK"));
  EXPECT_NE(FindPmuTable("amd64_fam19h_zen3"), nullptr);
  EXPECT_EQ(FindPmuTable("pdp11"), nullptr);
}

// Every byte metric of every PMU table names the level whose fills it counts, so that bench can
// set it beside the model's bytes there.
TEST(PmuTables, EveryByteMetricHasALevel) {
  for (const PmuTable& table : PmuTables()) {
    for (const MetricEvent& e : table.events) {
      EXPECT_EQ(LevelOfMetric(e.metric).has_value(), e.unit == "bytes")
          << table.pmu << " " << e.metric;
    }
  }
  EXPECT_EQ(LevelOfMetric("dram_to_l3_bytes"), MemoryLevel::kDram);
}

}  // namespace
}  // namespace rooftune::probes
