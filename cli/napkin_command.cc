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

// The formulas' inputs, as text so that a missing one is told from a given one.
ABSL_FLAG(std::string, flops, "", "napkin: floating-point operations");
ABSL_FLAG(
    std::string, bytes, "",
    "napkin: bytes moved (roofline, intensity); bytes per KV element (kv-cache, gqa; default 2)");
ABSL_FLAG(std::string, model_flops, "", "napkin: the model's FLOPs for the step (mfu, hfu)");
ABSL_FLAG(std::string, seconds, "", "napkin: measured seconds of the step (mfu, hfu)");
ABSL_FLAG(std::string, devices, "", "napkin: devices (default 1)");
ABSL_FLAG(std::string, recompute_factor, "",
          "napkin hfu: hardware FLOPs over model FLOPs (default 8/6: full activation recompute)");
ABSL_FLAG(std::string, matmul, "", "napkin mfu-budget: seconds in matmuls");
ABSL_FLAG(std::string, vector, "", "napkin mfu-budget: seconds in vector work (default 0)");
ABSL_FLAG(std::string, memory, "", "napkin mfu-budget: seconds waiting on memory (default 0)");
ABSL_FLAG(std::string, comms, "", "napkin mfu-budget: seconds in communication (default 0)");
ABSL_FLAG(std::string, optimizer, "", "napkin mfu-budget: seconds in the optimizer (default 0)");
ABSL_FLAG(std::string, tokens, "", "napkin: tokens (prefill, decode)");
ABSL_FLAG(std::string, params, "", "napkin: model parameters");
ABSL_FLAG(std::string, mfu, "", "napkin prefill: model FLOPs utilisation, (0, 1] (default 0.5)");
ABSL_FLAG(std::string, bytes_per_param, "", "napkin: bytes per parameter (default 2: bf16)");
ABSL_FLAG(std::string, bandwidth_efficiency, "",
          "napkin decode: fraction of the bandwidth reached, (0, 1] (default 0.8)");
ABSL_FLAG(std::string, kv_bytes_per_token, "",
          "napkin decode: KV-cache bytes each token reads (default 0)");
ABSL_FLAG(std::string, prefill_tokens, "", "napkin latency, devices-for-budget: prompt tokens");
ABSL_FLAG(std::string, decode_tokens, "", "napkin latency, devices-for-budget: generated tokens");
ABSL_FLAG(std::string, overhead, "",
          "napkin latency, devices-for-budget: fixed seconds (default 0)");
ABSL_FLAG(std::string, budget, "", "napkin devices-for-budget: the latency budget in seconds");
ABSL_FLAG(std::string, dim, "", "napkin tile-efficiency: the dimension");
ABSL_FLAG(std::string, tile, "", "napkin tile-efficiency: the tile (default 128)");
ABSL_FLAG(std::string, layers, "", "napkin: transformer layers");
ABSL_FLAG(std::string, kv_heads, "", "napkin: key/value heads");
ABSL_FLAG(std::string, query_heads, "", "napkin gqa: query heads");
ABSL_FLAG(std::string, head_dim, "", "napkin: dimension of one head");
ABSL_FLAG(std::string, seq, "", "napkin: sequence length (positions in the KV cache)");
ABSL_FLAG(std::string, d_model, "", "napkin depth-vs-width: the model width");
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
      {"flops", &FLAGS_flops},
      {"bytes", &FLAGS_bytes},
      {"model_flops", &FLAGS_model_flops},
      {"seconds", &FLAGS_seconds},
      {"devices", &FLAGS_devices},
      {"recompute_factor", &FLAGS_recompute_factor},
      {"matmul", &FLAGS_matmul},
      {"vector", &FLAGS_vector},
      {"memory", &FLAGS_memory},
      {"comms", &FLAGS_comms},
      {"optimizer", &FLAGS_optimizer},
      {"tokens", &FLAGS_tokens},
      {"params", &FLAGS_params},
      {"mfu", &FLAGS_mfu},
      {"bytes_per_param", &FLAGS_bytes_per_param},
      {"bandwidth_efficiency", &FLAGS_bandwidth_efficiency},
      {"kv_bytes_per_token", &FLAGS_kv_bytes_per_token},
      {"prefill_tokens", &FLAGS_prefill_tokens},
      {"decode_tokens", &FLAGS_decode_tokens},
      {"overhead", &FLAGS_overhead},
      {"budget", &FLAGS_budget},
      {"dim", &FLAGS_dim},
      {"tile", &FLAGS_tile},
      {"layers", &FLAGS_layers},
      {"kv_heads", &FLAGS_kv_heads},
      {"query_heads", &FLAGS_query_heads},
      {"head_dim", &FLAGS_head_dim},
      {"seq", &FLAGS_seq},
      {"d_model", &FLAGS_d_model},
      {"batch", &FLAGS_batch}};
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

// Roofline arithmetic: intensity, the ridge, bounds, utilisation and tile waste.
std::vector<Calc> RooflineCalcs() {
  return {
      {"intensity",
       {"flops", "bytes"},
       {},
       false,
       [](const Inputs& in, const Hardware&) {
         return napkin::Intensity(in.Get("flops", 0), in.Get("bytes", 0));
       }},
      {"ridge", {}, {}, true, [](const Inputs&, const Hardware& hw) { return napkin::Ridge(hw); }},
      {"roofline",
       {"flops", "bytes"},
       {},
       true,
       [](const Inputs& in, const Hardware& hw) {
         return napkin::Roofline(in.Get("flops", 0), in.Get("bytes", 0), hw);
       }},
      {"mfu",
       {"model_flops", "seconds"},
       {"devices"},
       true,
       [](const Inputs& in, const Hardware& hw) {
         return napkin::Mfu(in.Get("model_flops", 0), in.Get("seconds", 0), Devices(in), hw);
       }},
      {"hfu",
       {"model_flops", "seconds"},
       {"devices", "recompute_factor"},
       true,
       [](const Inputs& in, const Hardware& hw) {
         return napkin::Hfu(in.Get("model_flops", 0), in.Get("seconds", 0), Devices(in), hw,
                            in.Get("recompute_factor", 8.0 / 6));
       }},
      {"mfu-budget",
       {"matmul"},
       {"vector", "memory", "comms", "optimizer"},
       false,
       [](const Inputs& in, const Hardware&) {
         return napkin::MfuBudget(in.Get("matmul", 0), in.Get("vector", 0), in.Get("memory", 0),
                                  in.Get("comms", 0), in.Get("optimizer", 0));
       }},
      {"tile-efficiency",
       {"dim"},
       {"tile"},
       false,
       [](const Inputs& in, const Hardware&) {
         return napkin::TileEfficiency(in.Get("dim", 0), in.Get("tile", 128));
       }},
  };
}

// Sizing a transformer's serving: prefill and decode time, latency, memory, the KV cache.
std::vector<Calc> ServingCalcs() {
  return {
      {"prefill",
       {"tokens", "params"},
       {"devices", "mfu"},
       true,
       [](const Inputs& in, const Hardware& hw) {
         return napkin::Prefill(in.Get("tokens", 0), in.Get("params", 0), Devices(in), hw,
                                in.Get("mfu", 0.5));
       }},
      {"decode",
       {"tokens", "params"},
       {"devices", "bytes_per_param", "bandwidth_efficiency", "kv_bytes_per_token"},
       true,
       [](const Inputs& in, const Hardware& hw) {
         return napkin::Decode(in.Get("tokens", 0), in.Get("params", 0), Devices(in), hw,
                               in.Get("bytes_per_param", 2), in.Get("bandwidth_efficiency", 0.8),
                               in.Get("kv_bytes_per_token", 0));
       }},
      {"latency",
       {"prefill_tokens", "decode_tokens", "params"},
       {"devices", "overhead", "bytes_per_param"},
       true,
       [](const Inputs& in, const Hardware& hw) {
         return napkin::Latency(in.Get("prefill_tokens", 0), in.Get("decode_tokens", 0),
                                in.Get("params", 0), Devices(in), hw, in.Get("overhead", 0),
                                in.Get("bytes_per_param", 2));
       }},
      {"devices-for-budget",
       {"budget", "prefill_tokens", "decode_tokens", "params"},
       {"overhead", "bytes_per_param"},
       true,
       [](const Inputs& in, const Hardware& hw) {
         return napkin::DevicesForBudget(in.Get("budget", 0), in.Get("prefill_tokens", 0),
                                         in.Get("decode_tokens", 0), in.Get("params", 0), hw,
                                         in.Get("overhead", 0), in.Get("bytes_per_param", 2));
       }},
      {"weights-fit",
       {"params"},
       {"bytes_per_param"},
       true,
       [](const Inputs& in, const Hardware& hw) {
         return napkin::WeightsFit(in.Get("params", 0), in.Get("bytes_per_param", 2), hw);
       }},
      {"kv-cache",
       {"layers", "kv_heads", "head_dim", "seq", "batch"},
       {"bytes"},
       false,
       [](const Inputs& in, const Hardware&) {
         return napkin::KvCache(in.Get("layers", 0), in.Get("kv_heads", 0), in.Get("head_dim", 0),
                                in.Get("seq", 0), in.Get("batch", 0), in.Get("bytes", 2));
       }},
      {"gqa",
       {"layers", "query_heads", "kv_heads", "head_dim", "seq", "batch"},
       {"bytes"},
       false,
       [](const Inputs& in, const Hardware&) {
         return napkin::Gqa(in.Get("layers", 0), in.Get("query_heads", 0), in.Get("kv_heads", 0),
                            in.Get("head_dim", 0), in.Get("seq", 0), in.Get("batch", 0),
                            in.Get("bytes", 2));
       }},
      {"decode-intensity",
       {"params", "layers", "kv_heads", "head_dim", "seq", "batch"},
       {"bytes_per_param"},
       false,
       [](const Inputs& in, const Hardware&) {
         return napkin::DecodeIntensity(
             in.Get("params", 0), in.Get("layers", 0), in.Get("kv_heads", 0), in.Get("head_dim", 0),
             in.Get("seq", 0), in.Get("batch", 0), in.Get("bytes_per_param", 2));
       }},
      {"depth-vs-width",
       {"params", "d_model", "layers"},
       {},
       false,
       [](const Inputs& in, const Hardware&) {
         return napkin::DepthVsWidth(in.Get("params", 0), in.Get("d_model", 0),
                                     in.Get("layers", 0));
       }},
  };
}

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
  const Ceiling* compute = profile->FindCompute(ComputeDtype(*dtype), threads->front());
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
