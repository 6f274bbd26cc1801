// rooftune napkin CALC: one napkin formula (framework/napkin.h) with its inputs as flags, on a
// published accelerator (--hardware H100) or on this machine as measured (--hardware this).
#include <iostream>
#include <map>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/common.h"
#include "cli/flags.h"
#include "cli/options.h"
#include "cli/subcommands.h"
#include "framework/napkin.h"
#include "nlohmann/json.hpp"

#define NAPKIN_INPUT(name, help) ABSL_FLAG(std::string, name, "", help);
#include "cli/napkin_inputs.def"
#undef NAPKIN_INPUT
ABSL_FLAG(std::string, hardware, "",
          "napkin: H100, A100-80GB, TPU-v5e, TPU-v5p (published dense bf16 figures) or this (the "
          "measured profile at --dtype and --threads); default this");

namespace rooftune::cli {
namespace {

using napkin::Answer;
using napkin::Hardware;

// The flags given to one napkin run, by name, as numbers.
class Inputs {
 public:
  absl::Status Read(const std::vector<std::string>& names) {
    for (const std::string& name : names) {
      const std::string text = Text(name);
      if (text.empty()) continue;
      double value = 0;
      if (!absl::SimpleAtod(text, &value)) {
        return UsageError(absl::StrCat("--", Dashed(name), " must be a number (got '", text, "')"));
      }
      values_[name] = value;
    }
    return absl::OkStatus();
  }
  bool Has(const std::string& name) const { return values_.count(name) != 0; }
  double Get(const std::string& name, double otherwise) const {
    auto it = values_.find(name);
    return it == values_.end() ? otherwise : it->second;
  }

  static std::string Dashed(std::string name) {
    std::replace(name.begin(), name.end(), '_', '-');
    return name;
  }

 private:
  static std::string Text(const std::string& name);
  std::map<std::string, double> values_;
};

std::string Inputs::Text(const std::string& name) {
  static const std::map<std::string, absl::Flag<std::string>*> flags = {
#define NAPKIN_INPUT(name, help) {#name, &FLAGS_##name},
#include "cli/napkin_inputs.def"
#undef NAPKIN_INPUT
      {"batch", &FLAGS_batch},  // a global flag, which predict reads too
  };
  auto it = flags.find(name);
  return it == flags.end() ? "" : absl::GetFlag(*it->second);
}

struct Calc {
  const char* name;
  std::vector<std::string> required, optional;
  bool hardware;
  absl::StatusOr<Answer> (*run)(const Inputs&, const Hardware&);
};

int Devices(const Inputs& in) { return int(in.Get("devices", 1)); }

// A calculator a paragraph: its name, required and optional inputs, whether it reads the
// hardware, and its formula.
// clang-format off

// Roofline arithmetic: intensity, the ridge, bounds, utilisation and tile waste.
std::vector<Calc> RooflineCalcs() {
  return {
      {"intensity", {"flops", "bytes"}, {}, false,
       [](const Inputs& in, const Hardware&) {
         return napkin::Intensity(in.Get("flops", 0), in.Get("bytes", 0));
       }},
      {"ridge", {}, {}, true, [](const Inputs&, const Hardware& hw) { return napkin::Ridge(hw); }},
      {"roofline", {"flops", "bytes"}, {}, true,
       [](const Inputs& in, const Hardware& hw) {
         return napkin::Roofline(in.Get("flops", 0), in.Get("bytes", 0), hw);
       }},
      {"mfu", {"model_flops", "seconds"}, {"devices"}, true,
       [](const Inputs& in, const Hardware& hw) {
         return napkin::Mfu(in.Get("model_flops", 0), in.Get("seconds", 0), Devices(in), hw);
       }},
      {"hfu", {"model_flops", "seconds"}, {"devices", "recompute_factor"}, true,
       [](const Inputs& in, const Hardware& hw) {
         return napkin::Hfu(in.Get("model_flops", 0), in.Get("seconds", 0), Devices(in), hw,
                            in.Get("recompute_factor", 8.0 / 6));
       }},
      {"mfu-budget", {"matmul"}, {"vector", "memory", "comms", "optimizer"}, false,
       [](const Inputs& in, const Hardware&) {
         return napkin::MfuBudget(in.Get("matmul", 0), in.Get("vector", 0), in.Get("memory", 0),
                                  in.Get("comms", 0), in.Get("optimizer", 0));
       }},
      {"tile-efficiency", {"dim"}, {"tile"}, false,
       [](const Inputs& in, const Hardware&) {
         return napkin::TileEfficiency(in.Get("dim", 0), in.Get("tile", 128));
       }},
  };
}

// Sizing a transformer's serving: prefill and decode time, latency, memory, the KV cache.
std::vector<Calc> ServingCalcs() {
  return {
      {"prefill", {"tokens", "params"}, {"devices", "mfu"}, true,
       [](const Inputs& in, const Hardware& hw) {
         return napkin::Prefill(in.Get("tokens", 0), in.Get("params", 0), Devices(in), hw,
                                in.Get("mfu", 0.5));
       }},
      {"decode", {"tokens", "params"},
       {"devices", "bytes_per_param", "bandwidth_efficiency", "kv_bytes_per_token"}, true,
       [](const Inputs& in, const Hardware& hw) {
         return napkin::Decode(in.Get("tokens", 0), in.Get("params", 0), Devices(in), hw,
                               in.Get("bytes_per_param", 2), in.Get("bandwidth_efficiency", 0.8),
                               in.Get("kv_bytes_per_token", 0));
       }},
      {"latency", {"prefill_tokens", "decode_tokens", "params"},
       {"devices", "overhead", "bytes_per_param"}, true,
       [](const Inputs& in, const Hardware& hw) {
         return napkin::Latency(in.Get("prefill_tokens", 0), in.Get("decode_tokens", 0),
                                in.Get("params", 0), Devices(in), hw, in.Get("overhead", 0),
                                in.Get("bytes_per_param", 2));
       }},
      {"devices-for-budget", {"budget", "prefill_tokens", "decode_tokens", "params"},
       {"overhead", "bytes_per_param"}, true,
       [](const Inputs& in, const Hardware& hw) {
         return napkin::DevicesForBudget(in.Get("budget", 0), in.Get("prefill_tokens", 0),
                                         in.Get("decode_tokens", 0), in.Get("params", 0), hw,
                                         in.Get("overhead", 0), in.Get("bytes_per_param", 2));
       }},
      {"weights-fit", {"params"}, {"bytes_per_param"}, true,
       [](const Inputs& in, const Hardware& hw) {
         return napkin::WeightsFit(in.Get("params", 0), in.Get("bytes_per_param", 2), hw);
       }},
      {"kv-cache", {"layers", "kv_heads", "head_dim", "seq", "batch"}, {"bytes"}, false,
       [](const Inputs& in, const Hardware&) {
         return napkin::KvCache(in.Get("layers", 0), in.Get("kv_heads", 0), in.Get("head_dim", 0),
                                in.Get("seq", 0), in.Get("batch", 0), in.Get("bytes", 2));
       }},
      {"gqa", {"layers", "query_heads", "kv_heads", "head_dim", "seq", "batch"}, {"bytes"}, false,
       [](const Inputs& in, const Hardware&) {
         return napkin::Gqa(in.Get("layers", 0), in.Get("query_heads", 0), in.Get("kv_heads", 0),
                            in.Get("head_dim", 0), in.Get("seq", 0), in.Get("batch", 0),
                            in.Get("bytes", 2));
       }},
      {"decode-intensity", {"params", "layers", "kv_heads", "head_dim", "seq", "batch"},
       {"bytes_per_param"}, false,
       [](const Inputs& in, const Hardware&) {
         return napkin::DecodeIntensity(in.Get("params", 0), in.Get("layers", 0),
                                        in.Get("kv_heads", 0), in.Get("head_dim", 0),
                                        in.Get("seq", 0), in.Get("batch", 0),
                                        in.Get("bytes_per_param", 2));
       }},
      {"depth-vs-width", {"params", "d_model", "layers"}, {}, false,
       [](const Inputs& in, const Hardware&) {
         return napkin::DepthVsWidth(in.Get("params", 0), in.Get("d_model", 0),
                                     in.Get("layers", 0));
       }},
  };
}
// clang-format on

const std::vector<Calc>& Calcs() {
  static const std::vector<Calc> calcs = [] {
    std::vector<Calc> all = RooflineCalcs();
    for (Calc& c : ServingCalcs()) all.push_back(std::move(c));
    return all;
  }();
  return calcs;
}

// This machine as the formulas see it: the compute ceiling of --dtype at --threads, the DRAM
// read bandwidth at --threads, and the memory installed.
absl::StatusOr<Hardware> ThisMachine(Session& session) {
  const std::string dtype_text =
      absl::GetFlag(FLAGS_dtype).empty() ? "f32" : absl::GetFlag(FLAGS_dtype);
  absl::StatusOr<Dtype> dtype = ParseDtype(dtype_text);
  if (!dtype.ok()) return UsageError(dtype.status().message());
  absl::StatusOr<std::vector<int>> threads = session.ParseThreads(
      absl::GetFlag(FLAGS_threads).empty() ? "1" : absl::GetFlag(FLAGS_threads));
  if (!threads.ok()) return threads.status();
  if (threads->size() != 1) return UsageError("napkin takes one thread count");
  absl::StatusOr<MachineProfile> profile = session.MeasuredProfile(true, false);
  if (!profile.ok()) return profile.status();
  const Ceiling* compute = profile->FindCompute(*dtype, threads->front());
  const Ceiling* dram = profile->FillBandwidth(MemoryLevel::kDram, threads->front());
  Hardware hw{
      "this",
      compute ? compute->per_second : 0,
      dram ? dram->per_second : 0,
      double(AvailableMemoryBytes()),
      0,
      absl::StrCat("the measured profile: ", compute ? compute->Name() : "no compute ceiling", ", ",
                   dram ? dram->Name() : "no DRAM ceiling")};
  return hw;
}

}  // namespace

std::vector<absl::string_view> NapkinFlags() {
  return {
#define NAPKIN_INPUT(name, help) #name,
#include "cli/napkin_inputs.def"
#undef NAPKIN_INPUT
      "batch", "hardware", "dtype", "threads", "json"};
}

absl::StatusOr<int> NapkinCommand(Session& session, const std::vector<std::string>& operands) {
  std::vector<std::string> names;
  for (const Calc& c : Calcs()) names.push_back(c.name);
  if (operands.size() != 1) {
    return UsageError(absl::StrCat("napkin takes one formula: ", absl::StrJoin(names, ", ")));
  }
  const Calc* calc = nullptr;
  for (const Calc& c : Calcs()) {
    if (operands[0] == c.name) calc = &c;
  }
  if (calc == nullptr) {
    return UsageError(absl::StrCat("unknown napkin formula '", operands[0], "' (",
                                   absl::StrJoin(names, ", "), ")"));
  }
  Inputs inputs;
  std::vector<std::string> all = calc->required;
  all.insert(all.end(), calc->optional.begin(), calc->optional.end());
  if (absl::Status s = inputs.Read(all); !s.ok()) return s;
  for (const std::string& name : calc->required) {
    if (!inputs.Has(name)) {
      return UsageError(absl::StrCat("napkin ", calc->name, " needs --", Inputs::Dashed(name)));
    }
  }
  // A flag of another formula would be ignored in silence.
  Inputs others;
  std::vector<std::string> every;
  for (const Calc& c : Calcs()) {
    for (const auto& list : {c.required, c.optional})
      every.insert(every.end(), list.begin(), list.end());
  }
  if (absl::Status s = others.Read(every); !s.ok()) return s;
  for (const std::string& name : every) {
    if (others.Has(name) && std::find(all.begin(), all.end(), name) == all.end()) {
      return UsageError(
          absl::StrCat("--", Inputs::Dashed(name), " does not apply to napkin ", calc->name));
    }
  }
  Hardware hw;
  const std::string hardware = absl::GetFlag(FLAGS_hardware);
  if (!calc->hardware && !hardware.empty()) {
    return UsageError(absl::StrCat("napkin ", calc->name, " takes no --hardware"));
  }
  if (calc->hardware) {
    absl::StatusOr<Hardware> found = hardware.empty() || hardware == "this"
                                         ? ThisMachine(session)
                                         : napkin::FindHardware(hardware);
    if (!found.ok()) return UsageError(found.status().message());
    hw = *found;
  }
  absl::StatusOr<Answer> answer = calc->run(inputs, hw);
  if (!answer.ok())
    return UsageError(absl::StrCat("napkin ", calc->name, ": ", answer.status().message()));
  if (JsonFlag()) {
    nlohmann::json j = {
        {"schema_version", 1}, {"formula", calc->name}, {"result", answer->figures.front().value}};
    for (const napkin::Figure& f : answer->figures) j[f.name] = f.value;
    for (const auto& [name, word] : answer->words) j[name] = word;
    if (calc->hardware) j["hardware"] = {{"name", hw.name}, {"source", hw.source}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  for (const napkin::Figure& f : answer->figures) {
    std::cout << absl::StrFormat("%-22s %.6g%s\n", f.name, f.value,
                                 f.unit.empty() ? "" : " " + f.unit);
  }
  for (const auto& [name, word] : answer->words)
    std::cout << absl::StrFormat("%-22s %s\n", name, word);
  if (calc->hardware)
    std::cout << absl::StrFormat("%-22s %s (%s)\n", "hardware", hw.name, hw.source);
  return 0;
}

}  // namespace rooftune::cli
