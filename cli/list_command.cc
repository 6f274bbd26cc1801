// rooftune list: the registered kernels, their parameters, domains and constraints.
#include <iostream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/common.h"
#include "cli/options.h"
#include "cli/subcommands.h"
#include "framework/kernel.h"
#include "nlohmann/json.hpp"

namespace rooftune::cli {
namespace {

nlohmann::json KernelJson(const Kernel& k) {
  nlohmann::json params = nlohmann::json::array();
  for (const Param& p : k.params.params()) {
    params.push_back({{"name", p.name}, {"domain", p.domain}, {"help", p.help}});
  }
  nlohmann::json constraints = nlohmann::json::array();
  for (const Constraint& c : k.params.constraints()) constraints.push_back(c.description);
  std::vector<std::string> dtypes, epilogues;
  for (Dtype d : k.dtypes) dtypes.emplace_back(ToString(d));
  for (Epilogue e : k.epilogues) epilogues.emplace_back(ToString(e));
  return {{"name", k.name},
          {"op", ToString(k.op)},
          {"dtypes", dtypes},
          {"epilogues", epilogues},
          {"params", params},
          {"constraints", constraints},
          {"description", k.description},
          {"reference", k.reference},
          {"threading", k.threading == Threading::kTbb ? "tbb" : "self"},
          {"origin", k.origin},
          {"valid_configs", k.params.CountValid()}};
}

}  // namespace

absl::StatusOr<int> ListCommand(Session&) {
  const bool json = JsonFlag();
  nlohmann::json all = nlohmann::json::array();
  for (const Kernel* k : KernelRegistry::Global().All()) {
    if (json) {
      all.push_back(KernelJson(*k));
      continue;
    }
    std::vector<std::string> dtypes, epilogues;
    for (Dtype d : k->dtypes) dtypes.emplace_back(ToString(d));
    for (Epilogue e : k->epilogues) epilogues.emplace_back(ToString(e));
    std::cout << k->name << "  (" << ToString(k->op) << "; " << absl::StrJoin(dtypes, ", ")
              << "; epilogues " << absl::StrJoin(epilogues, ", ") << ")"
              << (k->origin != "builtin" ? "  from " + k->origin : "") << "\n";
    if (!k->description.empty()) std::cout << "    " << k->description << "\n";
    for (const Param& p : k->params.params()) {
      std::cout << absl::StrFormat("    %-4s {%s}  %s\n", p.name, absl::StrJoin(p.domain, ","),
                                   p.help);
    }
    for (const Constraint& c : k->params.constraints())
      std::cout << "    requires " << c.description << "\n";
    if (!k->params.params().empty()) {
      std::cout << "    " << k->params.CountValid() << " valid configs of "
                << k->params.CrossProductSize() << "\n";
    }
  }
  if (json)
    std::cout << nlohmann::json{{"schema_version", kJsonSchemaVersion}, {"kernels", all}}.dump(2)
              << "\n";
  return 0;
}

}  // namespace rooftune::cli
