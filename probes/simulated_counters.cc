#include "probes/simulated_counters.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace rooftune::probes {

uint64_t SimulatorFriendlySize(uint64_t bytes, int ways, int line_bytes) {
  const uint64_t way_line = uint64_t(ways) * uint64_t(line_bytes);
  uint64_t sets = 1;
  while (way_line * sets * 2 <= bytes) sets *= 2;
  return way_line * sets;
}

MachineProfile ProfileOfSimulatedCaches(const MachineProfile& profile,
                                        const SimulatedGeometry& geometry) {
  MachineProfile simulated = profile;
  simulated.measured_levels.clear();
  simulated.level_consensus.clear();
  simulated.level_probes = 0;
  const SimulatedGeometry& g = geometry;
  simulated.caches = {
      {1, "Data", SimulatorFriendlySize(g.l1_bytes, g.l1_ways, g.line_bytes), g.l1_ways,
       g.line_bytes, 1},
      {3, "Unified", SimulatorFriendlySize(g.last_level_bytes, g.last_level_ways, g.line_bytes),
       g.last_level_ways, g.line_bytes, 1}};
  return simulated;
}

absl::StatusOr<SimulatedTraffic> ParseCallgrindTotals(const std::string& text, int line_bytes) {
  std::vector<std::string> names;
  std::vector<double> totals;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view view = line;
    if (absl::ConsumePrefix(&view, "events:")) {
      names = absl::StrSplit(absl::StripAsciiWhitespace(view), ' ', absl::SkipEmpty());
    } else if (absl::ConsumePrefix(&view, "totals:") || absl::ConsumePrefix(&view, "summary:")) {
      totals.clear();
      for (absl::string_view v :
           absl::StrSplit(absl::StripAsciiWhitespace(view), ' ', absl::SkipEmpty())) {
        double value = 0;
        if (!absl::SimpleAtod(v, &value))
          return absl::DataLossError("callgrind totals are not numbers");
        totals.push_back(value);
      }
    }
  }
  if (names.empty() || totals.empty()) return absl::DataLossError("callgrind output has no totals");
  auto get = [&](const std::string& name) {
    for (size_t i = 0; i < names.size() && i < totals.size(); ++i) {
      if (names[i] == name) return totals[i];
    }
    return 0.0;
  };
  SimulatedTraffic t;
  t.instructions = get("Ir");
  t.l1_miss_bytes = (get("D1mr") + get("D1mw")) * line_bytes;
  t.last_level_miss_bytes = (get("DLmr") + get("DLmw")) * line_bytes;
  return t;
}

absl::StatusOr<SimulatedTraffic> SimulateKernelCall(const std::string& rooftune_binary,
                                                    const std::string& args,
                                                    const SimulatedGeometry& g) {
  if (std::system("valgrind --version >/dev/null 2>&1") != 0) {
    return absl::FailedPreconditionError(
        "the simulated counter backend needs valgrind (apt-get install valgrind)");
  }
  // A folder of its own (mkdtemp: created by this call, readable by this user only).
  std::string pattern = (std::filesystem::temp_directory_path() / "rooftune_sim_XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("cannot create a scratch folder under ",
                                            std::filesystem::temp_directory_path().string(), ": ",
                                            std::strerror(errno)));
  }
  const std::filesystem::path dir = pattern;
  const std::string out = (dir / "callgrind.out").string();
  const uint64_t l1 = SimulatorFriendlySize(g.l1_bytes, g.l1_ways, g.line_bytes);
  const uint64_t ll = SimulatorFriendlySize(g.last_level_bytes, g.last_level_ways, g.line_bytes);
  // Built beside rooftune, installed in lib/rooftune/; without it valgrind cannot load libhwy
  // where CPUID hides RDTSCP (cli/valgrind_shim.cc says why).
  const std::filesystem::path bin = std::filesystem::path(rooftune_binary).parent_path();
  std::filesystem::path shim = bin / "librooftune_valgrind_shim.so";
  if (!std::filesystem::exists(shim)) {
    shim = bin.parent_path() / "lib" / "rooftune" / "librooftune_valgrind_shim.so";
  }
  const std::string preload =
      std::filesystem::exists(shim) ? absl::StrCat("LD_PRELOAD=", shim.string(), " ") : "";
  SimulatedTraffic traffic;
  traffic.command = absl::StrCat(
      preload, "valgrind --tool=callgrind --cache-sim=yes --instr-atstart=no --I1=32768,8,",
      g.line_bytes, " --D1=", l1, ",", g.l1_ways, ",", g.line_bytes, " --LL=", ll, ",",
      g.last_level_ways, ",", g.line_bytes, " --callgrind-out-file=", out, " ", rooftune_binary,
      " simulate-once ", args);
  const int status = std::system(
      (traffic.command + " >" + (dir / "stdout").string() + " 2>" + (dir / "log").string())
          .c_str());
  std::stringstream output;
  output << std::ifstream(dir / "stdout").rdbuf();
  std::ifstream file(out);
  std::stringstream text;
  text << file.rdbuf();
  if (status != 0 || text.str().empty()) {
    std::ifstream log(dir / "log");
    std::stringstream log_text;
    log_text << log.rdbuf();
    std::filesystem::remove_all(dir);
    // The simulated rooftune's own error, when it gave one, says more than valgrind's banner.
    std::vector<std::string> own;
    for (absl::string_view line : absl::StrSplit(log_text.str(), '\n')) {
      if (absl::ConsumePrefix(&line, "rooftune: ")) own.emplace_back(line);
    }
    if (!own.empty()) {
      return absl::InternalError(
          absl::StrCat("the simulated call failed: ", absl::StrJoin(own, "; "),
                       " (valgrind runs at most the AVX2 target; ", traffic.command, ")"));
    }
    return absl::InternalError(absl::StrCat("simulation failed (", traffic.command,
                                            "): ", log_text.str().substr(0, 2000)));
  }
  std::filesystem::remove_all(dir);
  absl::StatusOr<SimulatedTraffic> parsed = ParseCallgrindTotals(text.str(), g.line_bytes);
  if (!parsed.ok()) return parsed.status();
  parsed->command = traffic.command;
  parsed->output = output.str();
  return parsed;
}

}  // namespace rooftune::probes
