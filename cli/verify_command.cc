// rooftune verify: one call against the reference; exit 0 when correct, 1 when not.
#include <iostream>

#include "cli/common.h"
#include "cli/isolated_trials.h"
#include "cli/subcommands.h"
#include "framework/harness.h"

namespace rooftune::cli {

absl::StatusOr<int> VerifyCommand(Session& session) {
  session.ReadOnly();  // it reads a stored config, if any: it never creates or upgrades a database
  absl::StatusOr<VerifyOptions> options = VerifyOptionsFromFlags(session);
  if (!options.ok()) return options.status();
  const Selection* p = &options->selection;
  // The initial config is the one bench and tune start from, planned on the stored profile's
  // measured caches; before any probe (verify never runs one), on what the OS reports.
  absl::StatusOr<MachineProfile> measured = session.MeasuredProfile(/*quick=*/true, false);
  const MachineProfile& profile = measured.ok() ? *measured : session.Facts();
  // Validation has no cache mode: the config of the mode the workload would be timed in.
  const CacheMode cache = CacheFor(CacheChoice::kByWorkload, profile, p->workload, p->threads);
  absl::StatusOr<ReadyToRun> ready = MakeReady(session, *p, cache, options->config, profile);
  if (!ready.ok()) return ready.status();
  const Session::ResolvedConfig& config = ready->config;
  if (!options->in_process) {
    if (absl::Status s = RunsInAWorker(*p->kernel, p->workload, p->threads, config.config, cache);
        !s.ok()) {
      return s;
    }
  }
  Executor executor(p->threads);
  absl::StatusOr<Validation> v =
      ValidateConfig(*p->kernel, config.config, ready->problem, ready->reference, executor);
  if (!v.ok()) return v.status();
  if (options->json) {
    std::cout << nlohmann::json{{"schema_version", kJsonSchemaVersion},
                                {"kernel", p->kernel->name},
                                {"workload", p->workload.Key()},
                                {"threads", p->threads},
                                {"config", p->kernel->params.Format(config.config)},
                                {"config_source", config.source},
                                {"correct", v->ok},
                                {"mismatches", v->mismatches},
                                {"max_abs_error", v->max_abs_error},
                                {"first_mismatch", v->first_mismatch}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << (v->ok ? "PASS " : "FAIL ") << p->kernel->name << "  " << p->workload.Key()
              << "  threads=" << p->threads
              << "  config=" << ConfigText(p->kernel->params, config.config) << " ("
              << config.source << ")\n  " << v->Summary() << "\n";
  }
  return v->ok ? 0 : 1;
}

}  // namespace rooftune::cli
