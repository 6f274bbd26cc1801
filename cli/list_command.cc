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
    nlohmann::json param = {
        {"name", p.name}, {"kind", p.choices.empty() ? "size" : "choice"}, {"help", p.help}};
    // A size's values as numbers, a choice's as the names `--config` takes.
    if (p.choices.empty()) {
      param["domain"] = p.domain;
    } else {
      param["domain"] = p.choices;
    }
    if (!p.only_when.empty()) param["only_when"] = p.only_when;
    params.push_back(std::move(param));
  }
  nlohmann::json relations = nlohmann::json::object();
  if (!k.unfused_variant_of.empty()) relations["separates_epilogue_of"] = k.unfused_variant_of;
  if (!k.narrower.empty()) relations["narrows_to"] = k.narrower;
  if (!k.f32_counterpart.empty()) relations["compared_with_f32"] = k.f32_counterpart;
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
          {"relations", relations},
          {"description", k.description},
          {"reference", k.reference},
          {"threading", k.threading == Threading::kTbb ? "tbb" : "self"},
          {"origin", k.origin},
          {"valid_configs", k.params.CountValid()},
          {"config_schema", k.config_schema}};
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
      std::vector<std::string> values;
      for (int64_t v : p.domain) values.push_back(p.ValueText(v));
      std::cout << absl::StrFormat("    %-4s {%s}%s  %s\n", p.name, absl::StrJoin(values, ","),
                                   p.only_when.empty() ? "" : " only when " + p.only_when, p.help);
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
