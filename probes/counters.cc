#include "probes/counters.h"

#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "probes/pmu_events.h"

namespace rooftune::probes {
namespace {

absl::Status InitializePfm() {
  static const int result = pfm_initialize();
  if (result != PFM_SUCCESS) {
    return absl::UnavailableError(absl::StrCat("libpfm4 failed to start: ", pfm_strerror(result)));
  }
  return absl::OkStatus();
}

std::string Paranoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  std::string value;
  in >> value;
  return value.empty() ? "unknown" : value;
}

std::string OpenFailure(int error, int cpu) {
  switch (error) {
    case ENOENT:
    case EOPNOTSUPP:
      return "unsupported: the kernel has no such event on this CPU (a virtual machine without "
             "a virtual PMU reports every hardware event this way)";
    case EACCES:
    case EPERM:
      return cpu < 0
                 ? absl::StrCat("unsupported: not permitted (perf_event_paranoid is ", Paranoid(),
                                "; user-space counting of this process needs 2 or less)")
                 : absl::StrCat("unsupported: not permitted (perf_event_paranoid is ", Paranoid(),
                                "; counting a whole CPU needs 0 or less, or CAP_PERFMON)");
    case EINVAL:
      return "unsupported: the kernel rejected the encoding (event or modifier not valid here)";
    case ENOSPC:
    case EBUSY:
      return "unsupported: no free hardware counter (another tool holds them, or the group is "
             "larger than the PMU)";
    default: return absl::StrCat("unsupported: perf_event_open failed: ", std::strerror(error));
  }
}

// cpu -1: the calling thread on any CPU; else every task on that CPU.
long PerfEventOpen(perf_event_attr* attr, int cpu, int group_fd) {
  return syscall(__NR_perf_event_open, attr, cpu < 0 ? 0 : -1, cpu, group_fd, 0);
}

}  // namespace

absl::StatusOr<CounterGroup> CounterGroup::Open(const std::vector<std::string>& names, int cpu) {
  if (absl::Status s = InitializePfm(); !s.ok()) return s;
  CounterGroup group;
  for (const std::string& name : names) {
    Event event;
    event.name = name;
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof(attr));
    pfm_perf_encode_arg_t arg;
    std::memset(&arg, 0, sizeof(arg));
    arg.attr = &attr;
    arg.size = sizeof(arg);
    // PFM_PLM3: user level only, which sets exclude_kernel.
    const int encoded = pfm_get_os_event_encoding(name.c_str(), PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
    if (encoded != PFM_SUCCESS) {
      event.reason =
          absl::StrCat("unsupported: libpfm4 cannot encode it here (", pfm_strerror(encoded), ")");
      group.events_.push_back(event);
      continue;
    }
    attr.size = sizeof(attr);
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.read_format =
        PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    const bool leader = group.leader_ < 0;
    attr.disabled = leader ? 1 : 0;
    attr.pinned = leader ? 1 : 0;
    long fd = -1;
    if (attr.type == PERF_TYPE_SOFTWARE) {
      // Page faults and context switches happen in the kernel on this process's behalf: counting
      // them needs exclude_kernel off, which perf_event_paranoid may refuse; then fall back.
      attr.exclude_kernel = 0;
      fd = PerfEventOpen(&attr, cpu, leader ? -1 : group.leader_);
      attr.exclude_kernel = 1;
    }
    if (fd < 0) fd = PerfEventOpen(&attr, cpu, leader ? -1 : group.leader_);
    if (fd < 0) {
      event.reason = OpenFailure(errno, cpu);
    } else {
      event.fd = int(fd);
      if (leader) group.leader_ = event.fd;
    }
    group.events_.push_back(event);
  }
  return group;
}

CounterGroup::CounterGroup(CounterGroup&& other) noexcept
    : events_(std::move(other.events_)), leader_(other.leader_), started_(other.started_) {
  other.events_.clear();
  other.leader_ = -1;
}

CounterGroup::~CounterGroup() {
  for (const Event& e : events_) {
    if (e.fd >= 0) close(e.fd);
  }
}

void CounterGroup::Start() {
  if (leader_ < 0) return;
  ioctl(leader_, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
  Resume();
}

void CounterGroup::Stop() {
  if (leader_ < 0) return;
  ioctl(leader_, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
}

void CounterGroup::Resume() {
  if (leader_ < 0) return;
  started_ = true;
  ioctl(leader_, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}

bool CounterGroup::AnySupported() const { return leader_ >= 0; }

std::vector<CounterReading> CounterGroup::Read() const {
  std::vector<CounterReading> out;
  // Layout with PERF_FORMAT_GROUP: nr, time_enabled, time_running, value[nr].
  std::vector<uint64_t> buffer(3 + events_.size(), 0);
  bool read_ok = false;
  if (leader_ >= 0) {
    const ssize_t n = read(leader_, buffer.data(), buffer.size() * sizeof(uint64_t));
    read_ok = n >= ssize_t(3 * sizeof(uint64_t));
  }
  const double enabled = double(buffer[1]), running = double(buffer[2]);
  size_t slot = 0;
  for (const Event& e : events_) {
    CounterReading r;
    r.event = e.name;
    if (e.fd < 0) {
      r.reason = e.reason;
    } else if (!read_ok || slot >= buffer[0]) {
      r.reason = "unsupported: the group could not be read";
      ++slot;
    } else if (!started_) {
      r.supported = true;  // opened, nothing measured yet
      ++slot;
    } else if (running == 0) {
      r.reason = "not counted: the pinned group was never scheduled (more events than counters?)";
      ++slot;
    } else {
      r.supported = true;
      r.running_fraction = enabled > 0 ? running / enabled : 1;
      r.value = double(buffer[3 + slot]) * (enabled / running);
      ++slot;
    }
    out.push_back(r);
  }
  return out;
}

std::string DetectedCorePmu() {
  if (!InitializePfm().ok()) return "";
  for (int pmu = PFM_PMU_NONE; pmu < PFM_PMU_MAX; ++pmu) {
    pfm_pmu_info_t info;
    std::memset(&info, 0, sizeof(info));
    info.size = sizeof(info);
    if (pfm_get_pmu_info(pfm_pmu_t(pmu), &info) == PFM_SUCCESS && info.is_present &&
        info.type == PFM_PMU_TYPE_CORE && std::strncmp(info.name, "perf", 4) != 0) {
      return info.name;
    }
  }
  return "";
}

std::vector<std::string> RooflineEvents(bool per_cpu) {
  std::vector<std::string> events;
  if (const PmuTable* table = FindPmuTable(DetectedCorePmu()); table != nullptr) {
    for (const MetricEvent& e : table->events) events.push_back(table->pmu + "::" + e.event);
  } else {
    events = {"perf::PERF_COUNT_HW_CPU_CYCLES", "perf::PERF_COUNT_HW_INSTRUCTIONS",
              "perf::PERF_COUNT_HW_CACHE_L1D:READ:MISS", "perf::PERF_COUNT_HW_CACHE_LL:READ:MISS"};
  }
  const std::vector<std::string>& software = per_cpu ? kSoftwareEventsPerCpu : kSoftwareEvents;
  events.insert(events.end(), software.begin(), software.end());
  return events;
}

namespace {

// What an event outside the PMU tables measures: the software events and the generic hardware
// ones opened when libpfm4 detects no known core PMU.
MetricEvent GenericMetric(const std::string& event) {
  static const MetricEvent kKnown[] = {
      {"task_clock", "perf::PERF_COUNT_SW_TASK_CLOCK", 1, "ns"},
      {"cpu_clock", "perf::PERF_COUNT_SW_CPU_CLOCK", 1, "ns"},
      {"page_faults", "perf::PERF_COUNT_SW_PAGE_FAULTS", 1, "events"},
      {"context_switches", "perf::PERF_COUNT_SW_CONTEXT_SWITCHES", 1, "events"},
      {"cycles", "perf::PERF_COUNT_HW_CPU_CYCLES", 1, "cycles"},
      {"instructions", "perf::PERF_COUNT_HW_INSTRUCTIONS", 1, "instructions"},
      {"l1d_read_misses", "perf::PERF_COUNT_HW_CACHE_L1D:READ:MISS", 1, "lines"},
      {"ll_read_misses", "perf::PERF_COUNT_HW_CACHE_LL:READ:MISS", 1, "lines"}};
  for (const MetricEvent& m : kKnown) {
    if (m.event == event) return m;
  }
  return {event, event, 1, "events"};
}

}  // namespace

std::vector<CountedFigure> PerCallFigures(const std::vector<CounterReading>& readings, int calls) {
  const PmuTable* table = FindPmuTable(DetectedCorePmu());
  std::vector<CountedFigure> figures;
  for (const CounterReading& r : readings) {
    MetricEvent what = GenericMetric(r.event);
    if (table != nullptr) {
      for (const MetricEvent& e : table->events) {
        if (table->pmu + "::" + e.event == r.event) what = e;
      }
    }
    CountedFigure f{what.metric, r.event, r.supported, r.reason, 0, what.unit, r.running_fraction};
    if (r.supported && calls > 0) f.per_call = r.value * what.scale / calls;
    figures.push_back(f);
  }
  return figures;
}

std::vector<CountedFigure> AddFigures(const std::vector<std::vector<CountedFigure>>& groups) {
  if (groups.empty()) return {};
  std::vector<CountedFigure> sum = groups.front();
  for (size_t g = 1; g < groups.size(); ++g) {
    for (size_t i = 0; i < sum.size() && i < groups[g].size(); ++i) {
      const CountedFigure& f = groups[g][i];
      if (!f.supported && sum[i].supported) sum[i].supported = false, sum[i].reason = f.reason;
      sum[i].per_call += f.per_call;
      sum[i].running_fraction = std::min(sum[i].running_fraction, f.running_fraction);
    }
  }
  for (CountedFigure& f : sum) {
    if (!f.supported) f.per_call = 0, f.running_fraction = 0;
  }
  return sum;
}

bool PfmKnowsEvent(const std::string& pmu_name, const std::string& name) {
  if (!InitializePfm().ok()) return false;
  const std::vector<std::string> parts = absl::StrSplit(name, ':');
  for (int pmu = PFM_PMU_NONE; pmu < PFM_PMU_MAX; ++pmu) {
    pfm_pmu_info_t info;
    std::memset(&info, 0, sizeof(info));
    info.size = sizeof(info);
    if (pfm_get_pmu_info(pfm_pmu_t(pmu), &info) != PFM_SUCCESS || pmu_name != info.name) continue;
    for (int i = info.first_event; i != -1; i = pfm_get_event_next(i)) {
      pfm_event_info_t e;
      std::memset(&e, 0, sizeof(e));
      e.size = sizeof(e);
      if (pfm_get_event_info(i, PFM_OS_NONE, &e) != PFM_SUCCESS) break;
      if (parts[0] != e.name) continue;
      size_t found = 1;
      for (size_t p = 1; p < parts.size(); ++p) {
        for (int a = 0; a < e.nattrs; ++a) {
          pfm_event_attr_info_t attr;
          std::memset(&attr, 0, sizeof(attr));
          attr.size = sizeof(attr);
          if (pfm_get_event_attr_info(i, a, PFM_OS_NONE, &attr) == PFM_SUCCESS &&
              attr.type == PFM_ATTR_UMASK && parts[p] == attr.name) {
            ++found;
            break;
          }
        }
      }
      return found == parts.size();
    }
  }
  return false;
}

}  // namespace rooftune::probes
