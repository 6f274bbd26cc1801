#include "framework/napkin.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace rooftune::napkin {
namespace {

// Fails naming the first input that is not a positive finite number.
absl::Status Positive(std::initializer_list<std::pair<const char*, double>> inputs) {
  for (const auto& [name, value] : inputs) {
    if (!(value > 0) || !std::isfinite(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " must be a positive number (got ", value, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status Fraction(const char* name, double value) {
  if (!(value > 0 && value <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " must lie in (0, 1] (got ", value, ")"));
  }
  return absl::OkStatus();
}

absl::Status Devices(int devices) {
  if (devices < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--devices must be at least 1 (got ", devices, ")"));
  }
  return absl::OkStatus();
}

absl::Status HasPeak(const Hardware& hw) {
  return Positive({{"peak (of the hardware)", hw.peak_flops}});
}
absl::Status HasBandwidth(const Hardware& hw) {
  return Positive({{"bandwidth (of the hardware)", hw.bandwidth}});
}

}  // namespace

double Answer::Get(const std::string& name) const {
  for (const Figure& f : figures) {
    if (f.name == name) return f.value;
  }
  return 0;
}

const std::vector<Hardware>& KnownHardware() {
  // name, dense bf16 FLOP/s, memory bandwidth (bytes/s), memory bytes, watts (0: not published),
  // and where the figures are published.
  static const std::vector<Hardware> table = {
      {"H100", 989e12, 3.35e12, 80e9, 700, "NVIDIA H100 Tensor Core GPU datasheet, SXM5"},
      {"A100-80GB", 312e12, 2.039e12, 80e9, 400, "NVIDIA A100 Tensor Core GPU datasheet, SXM"},
      {"TPU-v5e", 197e12, 819e9, 16e9, 0, "Google Cloud, cloud.google.com/tpu/docs/v5e"},
      {"TPU-v5p", 459e12, 2.765e12, 95e9, 0, "Google Cloud, cloud.google.com/tpu/docs/v5p"},
  };
  return table;
}

absl::StatusOr<Hardware> FindHardware(const std::string& name) {
  std::string names;
  for (const Hardware& hw : KnownHardware()) {
    if (absl::EqualsIgnoreCase(hw.name, name)) return hw;
    absl::StrAppend(&names, names.empty() ? "" : ", ", hw.name);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown hardware '", name, "' (known: ", names, ", or this)"));
}

absl::StatusOr<Answer> Intensity(double flops, double bytes) {
  if (absl::Status s = Positive({{"flops", flops}, {"bytes", bytes}}); !s.ok()) return s;
  return Answer{{{"intensity", flops / bytes, "FLOP/byte"}}, {}};
}

absl::StatusOr<Answer> Ridge(const Hardware& hw) {
  if (absl::Status s = HasPeak(hw); !s.ok()) return s;
  if (absl::Status s = HasBandwidth(hw); !s.ok()) return s;
  return Answer{{{"ridge", hw.peak_flops / hw.bandwidth, "FLOP/byte"},
                 {"peak", hw.peak_flops, "FLOP/s"},
                 {"bandwidth", hw.bandwidth, "byte/s"}},
                {{"hardware", hw.name}}};
}

absl::StatusOr<Answer> Roofline(double flops, double bytes, const Hardware& hw) {
  absl::StatusOr<Answer> ridge = Ridge(hw);
  if (!ridge.ok()) return ridge.status();
  absl::StatusOr<Answer> intensity = Intensity(flops, bytes);
  if (!intensity.ok()) return intensity.status();
  const double i = intensity->Get("intensity"), r = ridge->Get("ridge");
  const bool memory_bound = i < r;
  const double rate = std::min(hw.peak_flops, i * hw.bandwidth);
  return Answer{{{"seconds", flops / rate, "s"},
                 {"intensity", i, "FLOP/byte"},
                 {"ridge", r, "FLOP/byte"},
                 {"rate", rate, "FLOP/s"},
                 {"fraction_of_peak", rate / hw.peak_flops, ""}},
                {{"bound_by", memory_bound ? "memory" : "compute"},
                 {"lever", memory_bound ? "fewer bytes or more reuse per byte (raise the "
                                          "intensity towards the ridge)"
                                        : "faster arithmetic (a narrower type, a kernel nearer "
                                          "the peak)"}}};
}

absl::StatusOr<Answer> Mfu(double model_flops, double seconds, int devices, const Hardware& hw) {
  if (absl::Status s = Positive({{"model-flops", model_flops}, {"seconds", seconds}}); !s.ok()) {
    return s;
  }
  if (absl::Status s = Devices(devices); !s.ok()) return s;
  if (absl::Status s = HasPeak(hw); !s.ok()) return s;
  const double achieved = model_flops / seconds;
  return Answer{{{"mfu", achieved / (devices * hw.peak_flops), ""},
                 {"achieved", achieved, "FLOP/s"},
                 {"peak", devices * hw.peak_flops, "FLOP/s"}},
                {}};
}

absl::StatusOr<Answer> Hfu(double model_flops, double seconds, int devices, const Hardware& hw,
                           double recompute_factor) {
  if (absl::Status s = Positive({{"recompute-factor", recompute_factor}}); !s.ok()) return s;
  if (recompute_factor < 1) {
    return absl::InvalidArgumentError("--recompute-factor is at least 1 (recomputation adds work)");
  }
  absl::StatusOr<Answer> mfu = Mfu(model_flops, seconds, devices, hw);
  if (!mfu.ok()) return mfu.status();
  return Answer{{{"hfu", mfu->Get("mfu") * recompute_factor, ""},
                 {"mfu", mfu->Get("mfu"), ""},
                 {"recompute_factor", recompute_factor, ""}},
                {}};
}

absl::StatusOr<Answer> MfuBudget(double matmul, double vector, double memory, double comms,
                                 double optimizer) {
  for (const auto& [name, value] : {std::pair<const char*, double>{"matmul", matmul},
                                    {"vector", vector},
                                    {"memory", memory},
                                    {"comms", comms},
                                    {"optimizer", optimizer}}) {
    if (!(value >= 0) || !std::isfinite(value)) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " must be 0 or more seconds"));
    }
  }
  const double total = matmul + vector + memory + comms + optimizer;
  if (absl::Status s = Positive({{"matmul", matmul}}); !s.ok()) return s;
  const std::pair<const char*, double> others[] = {
      {"vector", vector}, {"memory", memory}, {"comms", comms}, {"optimizer", optimizer}};
  const auto biggest = std::max_element(std::begin(others), std::end(others),
                                        [](auto a, auto b) { return a.second < b.second; });
  return Answer{{{"mfu", matmul / total, ""},
                 {"matmul_fraction", matmul / total, ""},
                 {"vector_fraction", vector / total, ""},
                 {"memory_fraction", memory / total, ""},
                 {"comms_fraction", comms / total, ""},
                 {"optimizer_fraction", optimizer / total, ""},
                 {"step_seconds", total, "s"}},
                {{"biggest_lever", biggest->first}}};
}

absl::StatusOr<Answer> Prefill(double tokens, double params, int devices, const Hardware& hw,
                               double mfu) {
  if (absl::Status s = Positive({{"tokens", tokens}, {"params", params}}); !s.ok()) return s;
  if (absl::Status s = Devices(devices); !s.ok()) return s;
  if (absl::Status s = Fraction("mfu", mfu); !s.ok()) return s;
  if (absl::Status s = HasPeak(hw); !s.ok()) return s;
  const double flops = 2 * params * tokens;
  return Answer{
      {{"seconds", flops / (devices * hw.peak_flops * mfu), "s"}, {"flops", flops, "FLOP"}}, {}};
}

absl::StatusOr<Answer> Decode(double tokens, double params, int devices, const Hardware& hw,
                              double bytes_per_param, double bandwidth_efficiency,
                              double kv_bytes_per_token) {
  if (absl::Status s =
          Positive({{"tokens", tokens}, {"params", params}, {"bytes-per-param", bytes_per_param}});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = Devices(devices); !s.ok()) return s;
  if (absl::Status s = Fraction("bandwidth-efficiency", bandwidth_efficiency); !s.ok()) return s;
  if (!(kv_bytes_per_token >= 0)) {
    return absl::InvalidArgumentError("--kv-bytes-per-token must be 0 or more");
  }
  if (absl::Status s = HasBandwidth(hw); !s.ok()) return s;
  const double bytes = params * bytes_per_param + kv_bytes_per_token;
  const double per_token = bytes / (devices * hw.bandwidth * bandwidth_efficiency);
  return Answer{{{"seconds", tokens * per_token, "s"},
                 {"seconds_per_token", per_token, "s"},
                 {"tokens_per_second", 1 / per_token, "token/s"},
                 {"bytes_per_token", bytes, "byte"}},
                {}};
}

absl::StatusOr<Answer> Latency(double prefill_tokens, double decode_tokens, double params,
                               int devices, const Hardware& hw, double overhead_seconds,
                               double bytes_per_param) {
  if (!(overhead_seconds >= 0)) return absl::InvalidArgumentError("--overhead must be 0 or more");
  absl::StatusOr<Answer> prefill = Prefill(prefill_tokens, params, devices, hw, 0.5);
  if (!prefill.ok()) return prefill.status();
  absl::StatusOr<Answer> decode =
      Decode(decode_tokens, params, devices, hw, bytes_per_param, 0.8, 0);
  if (!decode.ok()) return decode.status();
  const double total = prefill->Get("seconds") + decode->Get("seconds") + overhead_seconds;
  return Answer{{{"seconds", total, "s"},
                 {"prefill_seconds", prefill->Get("seconds"), "s"},
                 {"decode_seconds", decode->Get("seconds"), "s"},
                 {"overhead_seconds", overhead_seconds, "s"}},
                {}};
}

absl::StatusOr<Answer> DevicesForBudget(double budget_seconds, double prefill_tokens,
                                        double decode_tokens, double params, const Hardware& hw,
                                        double overhead_seconds, double bytes_per_param) {
  if (absl::Status s = Positive({{"budget", budget_seconds}}); !s.ok()) return s;
  for (int devices = 1; devices <= 1024; devices *= 2) {
    absl::StatusOr<Answer> latency = Latency(prefill_tokens, decode_tokens, params, devices, hw,
                                             overhead_seconds, bytes_per_param);
    if (!latency.ok()) return latency.status();
    if (latency->Get("seconds") <= budget_seconds) {
      return Answer{{{"devices", double(devices), ""}, {"seconds", latency->Get("seconds"), "s"}},
                    {}};
    }
  }
  return Answer{{{"devices", 0, ""}},
                {{"answer", "none up to 1024 devices meets the budget: a smaller model"}}};
}

absl::StatusOr<Answer> WeightsFit(double params, double bytes_per_param, const Hardware& hw) {
  if (absl::Status s = Positive({{"params", params},
                                 {"bytes-per-param", bytes_per_param},
                                 {"memory (of the hardware)", hw.memory_bytes}});
      !s.ok()) {
    return s;
  }
  const double bytes = params * bytes_per_param;
  return Answer{{{"devices", std::ceil(bytes / hw.memory_bytes), ""},
                 {"weight_bytes", bytes, "byte"},
                 {"memory_per_device", hw.memory_bytes, "byte"}},
                {}};
}

absl::StatusOr<Answer> TileEfficiency(double dim, double tile) {
  if (absl::Status s = Positive({{"dim", dim}, {"tile", tile}}); !s.ok()) return s;
  const double padded = std::ceil(dim / tile) * tile;
  return Answer{{{"efficiency", dim / padded, ""}, {"padded", padded, ""}}, {}};
}

absl::StatusOr<Answer> KvCache(double layers, double kv_heads, double head_dim, double seq,
                               double batch, double bytes) {
  if (absl::Status s = Positive({{"layers", layers},
                                 {"kv-heads", kv_heads},
                                 {"head-dim", head_dim},
                                 {"seq", seq},
                                 {"batch", batch},
                                 {"bytes", bytes}});
      !s.ok()) {
    return s;
  }
  const double per_token = 2 * layers * kv_heads * head_dim * bytes;
  return Answer{
      {{"bytes", per_token * seq * batch, "byte"}, {"bytes_per_token", per_token, "byte"}}, {}};
}

absl::StatusOr<Answer> Gqa(double layers, double query_heads, double kv_heads, double head_dim,
                           double seq, double batch, double bytes) {
  if (absl::Status s = Positive({{"query-heads", query_heads}}); !s.ok()) return s;
  absl::StatusOr<Answer> gqa = KvCache(layers, kv_heads, head_dim, seq, batch, bytes);
  if (!gqa.ok()) return gqa.status();
  if (std::fmod(query_heads, kv_heads) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--kv-heads (", kv_heads, ") must divide --query-heads (", query_heads, ")"));
  }
  absl::StatusOr<Answer> mha = KvCache(layers, query_heads, head_dim, seq, batch, bytes);
  return Answer{{{"saving", query_heads / kv_heads, "x"},
                 {"gqa_bytes", gqa->Get("bytes"), "byte"},
                 {"mha_bytes", mha->Get("bytes"), "byte"},
                 {"group_size", query_heads / kv_heads, ""}},
                {}};
}

absl::StatusOr<Answer> DecodeIntensity(double params, double layers, double kv_heads,
                                       double head_dim, double seq, double batch,
                                       double bytes_per_param) {
  if (absl::Status s = Positive({{"params", params}}); !s.ok()) return s;
  absl::StatusOr<Answer> kv = KvCache(layers, kv_heads, head_dim, seq, batch, bytes_per_param);
  if (!kv.ok()) return kv.status();
  const double flops = 2 * params * batch;
  const double bytes = params * bytes_per_param + kv->Get("bytes");
  return Answer{{{"intensity", flops / bytes, "FLOP/byte"},
                 {"flops", flops, "FLOP"},
                 {"weight_bytes", params * bytes_per_param, "byte"},
                 {"kv_bytes", kv->Get("bytes"), "byte"}},
                {}};
}

absl::StatusOr<Answer> DepthVsWidth(double params, double d_model, double layers) {
  if (absl::Status s = Positive({{"params", params}, {"d-model", d_model}, {"layers", layers}});
      !s.ok()) {
    return s;
  }
  const double per_layer = 12 * d_model * d_model;
  return Answer{{{"layers_for_params", params / per_layer, ""},
                 {"params_per_layer", per_layer, ""},
                 {"params_at_layers", per_layer * layers, ""},
                 {"aspect_ratio", d_model / layers, ""}},
                {}};
}

}  // namespace rooftune::napkin
