// bench --counters: libpfm4 events counted over a kernel's timed calls, per call, set beside
// the bytes its model priced, as perf stat and likwid-perfctr would show them.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/executor.h"
#include "framework/roofline.h"
#include "nlohmann/json.hpp"
#include "probes/counters.h"

namespace rooftune::cli {

// The counters of the timed calls: on one thread, the calling thread's (the kernel runs on it);
// on more, one group per CPU the executor pins its threads to, counting everything that runs
// there, as likwid-perfctr does (the arena's worker threads are not fixed, its CPUs are).
class CallCounters {
 public:
  static absl::StatusOr<CallCounters> Open(const Executor& executor);
  // Around each timed call: counts add up over the calls.
  void Resume();
  void Stop();
  // The counts divided by `calls`, added up over the CPUs.
  std::vector<probes::CountedFigure> PerCall(int calls) const;
  // What was counted, for the header line: "this thread" or the CPUs summed.
  std::string scope() const;
  // The CPUs counted whole; 0 when the calling thread was counted.
  int cpus() const { return per_cpu_ ? int(groups_.size()) : 0; }

 private:
  std::vector<probes::CounterGroup> groups_;
  bool per_cpu_ = false;
};

// The figures in the style of perf stat: each byte figure beside the bytes the model priced at
// that level, the FLOPs of every width beside the workload's, unsupported events under their
// reason, and for an impossible verdict what the counters say of its cause.
void PrintCounters(const std::vector<probes::CountedFigure>& figures, int calls,
                   const std::string& scope, const Verdict& v, const Workload& w);

// The same as JSON: calls, cpus (0: the calling thread), one entry per event, and the evidence.
nlohmann::json CountersJson(const std::vector<probes::CountedFigure>& figures, int calls, int cpus,
                            const Verdict& v);

}  // namespace rooftune::cli
