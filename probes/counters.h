// Hardware and software counters: events named with libpfm4 (pfm_get_os_event_encoding) and
// opened with perf_event_open as one group behind a pinned leader, enabled only around the
// measured region, read with TOTAL_TIME_ENABLED/RUNNING so multiplexed counts are scaled and the
// multiplex factor is reported. An event the machine cannot count (a VM without a PMU gives ENOENT
// for every hardware event) is reported "unsupported" with the reason; the others still count.
// Counting is user space only (exclude_kernel), which perf_event_paranoid = 2 allows without
// root, and covers the calling thread.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rooftune::probes {

struct CounterReading {
  std::string event;
  bool supported = false;
  std::string reason;           // why not, when unsupported
  double value = 0;             // raw count scaled by enabled / running
  double running_fraction = 0;  // running / enabled: 1 when not multiplexed
};

class CounterGroup {
 public:
  // Encodes and opens every event. Never fails for an event the machine lacks (that event is
  // marked unsupported); fails only when libpfm4 itself cannot start. `cpu` -1 counts the
  // calling thread wherever it runs; a CPU number counts everything that runs on that CPU (user
  // space), which needs perf_event_paranoid 0 or less, or CAP_PERFMON.
  static absl::StatusOr<CounterGroup> Open(const std::vector<std::string>& events, int cpu = -1);
  CounterGroup(CounterGroup&& other) noexcept;
  CounterGroup& operator=(CounterGroup&&) = delete;
  ~CounterGroup();

  void Start();   // reset and enable the group
  void Stop();    // disable it
  void Resume();  // enable it without a reset: counts add up over several measured regions
  std::vector<CounterReading> Read() const;
  bool AnySupported() const;

 private:
  CounterGroup() = default;
  struct Event {
    std::string name;
    int fd = -1;
    std::string reason;
  };
  std::vector<Event> events_;
  int leader_ = -1;
  bool started_ = false;
};

// The core PMU libpfm4 detects on this machine ("spr", "amd64_fam19h_zen3", ...), or empty.
std::string DetectedCorePmu();

// Software events that work wherever perf_event_open does.
inline const std::vector<std::string> kSoftwareEvents = {"perf::PERF_COUNT_SW_TASK_CLOCK",
                                                         "perf::PERF_COUNT_SW_PAGE_FAULTS",
                                                         "perf::PERF_COUNT_SW_CONTEXT_SWITCHES"};
// The same for a whole CPU: its clock in place of a task's.
inline const std::vector<std::string> kSoftwareEventsPerCpu = {
    "perf::PERF_COUNT_SW_CPU_CLOCK", "perf::PERF_COUNT_SW_PAGE_FAULTS",
    "perf::PERF_COUNT_SW_CONTEXT_SWITCHES"};

// The events rooftune would count on this machine: the detected PMU's table (or the generic
// perf::cycles and perf::instructions when libpfm4 detects none) plus the software events (those
// of a whole CPU with `per_cpu`).
std::vector<std::string> RooflineEvents(bool per_cpu = false);

// A reading as a figure per call, named for what it measures: the PMU table's metric
// ("l2_to_l1_bytes", scaled to bytes), else a name of the event's own ("task_clock").
struct CountedFigure {
  std::string metric;
  std::string event;  // as opened: "spr::L1D:REPLACEMENT", "perf::PERF_COUNT_SW_TASK_CLOCK"
  bool supported = false;
  std::string reason;  // why not, when unsupported
  double per_call = 0;
  std::string unit;  // "bytes", "flops", "cycles", "instructions", "ns", "lines", "events"
  double running_fraction = 0;
};
std::vector<CountedFigure> PerCallFigures(const std::vector<CounterReading>& readings, int calls);
// Figures of groups that opened the same events (one per CPU), added up event by event: an
// event is supported when every group counted it, scaled by the least running fraction.
std::vector<CountedFigure> AddFigures(const std::vector<std::vector<CountedFigure>>& groups);

// True when `name` ("EVENT:UMASK...") exists in libpfm4's table for `pmu`, present or not.
bool PfmKnowsEvent(const std::string& pmu, const std::string& name);

}  // namespace rooftune::probes
