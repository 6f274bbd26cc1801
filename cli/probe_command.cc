// rooftune probe: measure the machine (or reuse its stored profile), print it with the counters
// this process can open, and write profile.json and the pictures.
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/common.h"
#include "cli/subcommands.h"
#include "probes/counters.h"
#include "probes/pmu_events.h"
#include "reports/machine_text.h"
#include "reports/report.h"

namespace rooftune::cli {

absl::StatusOr<int> ProbeCommand(Session& session) {
  absl::StatusOr<ProbeCommandOptions> options = ProbeOptionsFromFlags();
  if (!options.ok()) return options.status();
  absl::StatusOr<MachineProfile> profile =
      session.MeasuredProfile(options->quick, options->force, options->fresh);
  if (!profile.ok()) return profile.status();
  const std::string& out = options->out;
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (absl::Status s = WriteFile(out + "/profile.json", profile->ToJson().dump(2) + "\n"); !s.ok())
    return s;
  reports::ReportInput pictured;
  pictured.profile = *profile;
  absl::StatusOr<std::vector<std::string>> pictures = WritePictures(out, pictured);
  if (!pictures.ok()) return pictures.status();
  std::cerr << "wrote " << out << "/profile.json, " << absl::StrJoin(*pictures, ", ") << "\n";
  // Counters are a property of this process on this machine now (PMU passthrough, paranoia),
  // so they are checked live rather than cached.
  nlohmann::json counters = nlohmann::json::array();
  std::string counter_text;
  const std::string pmu = probes::DetectedCorePmu();
  absl::StatusOr<probes::CounterGroup> group = probes::CounterGroup::Open(probes::RooflineEvents());
  if (group.ok()) {
    absl::StrAppend(
        &counter_text, "\ncounters (libpfm4 + perf_event_open, user space, this thread): core PMU ",
        pmu.empty() ? "none detected (no hardware counters exposed to this machine)" : pmu, "\n");
    for (const probes::CounterReading& r : group->Read()) {
      counters.push_back({{"event", r.event}, {"supported", r.supported}, {"reason", r.reason}});
      absl::StrAppend(&counter_text, absl::StrFormat("  %-48s %s\n", r.event,
                                                     r.supported ? "available" : r.reason));
    }
    if (const probes::PmuTable* table = probes::FindPmuTable(pmu); table != nullptr) {
      for (const std::string& caveat : table->caveats)
        absl::StrAppend(&counter_text, "  caveat: ", caveat, "\n");
    }
  } else {
    absl::StrAppend(&counter_text, "\ncounters: ", group.status().message(), "\n");
  }
  if (options->json) {
    nlohmann::json j = profile->ToJson();
    j["schema_version"] = kJsonSchemaVersion;
    j["counters"] = counters;
    j["core_pmu"] = pmu;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << reports::RenderProfileText(*profile) << counter_text;
  }
  return 0;
}

}  // namespace rooftune::cli
