// The napkin arithmetic of rooflines and of serving models: each formula a small function that
// checks its inputs (sizes and rates positive, efficiencies in (0, 1], heads that divide) and
// returns its figures by name. `rooftune napkin CALC` prints them; the same arithmetic sizes an
// accelerator fleet (a built-in table of published parts) and this server (its measured profile).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rooftune::napkin {

// A figure with its name and unit: {"intensity", 4.0, "FLOP/byte"}.
struct Figure {
  std::string name;
  double value = 0;
  std::string unit;
};

// What a formula returns: its headline figure first, every other figure named beside it, and
// words where a figure is a choice ("bound by": "memory").
struct Answer {
  std::vector<Figure> figures;  // figures[0] is the headline
  std::vector<std::pair<std::string, std::string>> words;
  double Get(const std::string& name) const;  // the named figure (0 when absent)
};

// A machine as the formulas see it: dense peak (FLOP/s) at the dtype in question, memory
// bandwidth (bytes/s), memory size (bytes) and power (W, 0 when not published).
struct Hardware {
  std::string name;
  double peak_flops = 0;
  double bandwidth = 0;
  double memory_bytes = 0;
  double watts = 0;
  std::string source;
};

// Published dense bf16 peaks of common accelerators (each entry names its source).
const std::vector<Hardware>& KnownHardware();
absl::StatusOr<Hardware> FindHardware(const std::string& name);

absl::StatusOr<Answer> Intensity(double flops, double bytes);
absl::StatusOr<Answer> Ridge(const Hardware& hw);
// Intensity, ridge, what binds, the achievable rate min(peak, intensity x bandwidth), its
// fraction of peak, the seconds, and the lever that pays.
absl::StatusOr<Answer> Roofline(double flops, double bytes, const Hardware& hw);
// Model FLOPs utilisation: model FLOPs / (seconds x devices x peak).
absl::StatusOr<Answer> Mfu(double model_flops, double seconds, int devices, const Hardware& hw);
// Hardware FLOPs utilisation: MFU x the recompute factor (8/6 with full activation recompute).
absl::StatusOr<Answer> Hfu(double model_flops, double seconds, int devices, const Hardware& hw,
                           double recompute_factor);
// A step's time split into matmul, vector, memory, communication and optimizer seconds: each
// one's fraction, MFU (the matmul share, if matmuls run at peak) and the biggest non-matmul part.
absl::StatusOr<Answer> MfuBudget(double matmul, double vector, double memory, double comms,
                                 double optimizer);
// Prefill: 2 x params FLOPs per token, at `mfu` of the devices' peak.
absl::StatusOr<Answer> Prefill(double tokens, double params, int devices, const Hardware& hw,
                               double mfu);
// Decode: each token reads every weight (params x bytes_per_param) and its KV cache, at
// `bandwidth_efficiency` of the devices' bandwidth.
absl::StatusOr<Answer> Decode(double tokens, double params, int devices, const Hardware& hw,
                              double bytes_per_param, double bandwidth_efficiency,
                              double kv_bytes_per_token);
// Prefill plus decode plus a fixed overhead, at MFU 0.5 and bandwidth efficiency 0.8.
absl::StatusOr<Answer> Latency(double prefill_tokens, double decode_tokens, double params,
                               int devices, const Hardware& hw, double overhead_seconds,
                               double bytes_per_param);
// The smallest power of two of devices (up to 1024) whose Latency meets `budget_seconds`, or
// none: then the answer is a smaller model.
absl::StatusOr<Answer> DevicesForBudget(double budget_seconds, double prefill_tokens,
                                        double decode_tokens, double params, const Hardware& hw,
                                        double overhead_seconds, double bytes_per_param);
// Weight bytes, and the devices their memory needs.
absl::StatusOr<Answer> WeightsFit(double params, double bytes_per_param, const Hardware& hw);
// The useful fraction of a dimension padded to whole tiles: dim / (ceil(dim / tile) x tile).
absl::StatusOr<Answer> TileEfficiency(double dim, double tile);
// K and V for every layer, KV head, position and sequence: 2 x L x H x D x S x B x bytes.
absl::StatusOr<Answer> KvCache(double layers, double kv_heads, double head_dim, double seq,
                               double batch, double bytes);
// Grouped-query attention against multi-head: the KV cache of each and what GQA saves. The
// KV heads must divide the query heads.
absl::StatusOr<Answer> Gqa(double layers, double query_heads, double kv_heads, double head_dim,
                           double seq, double batch, double bytes);
// A decode step's intensity: 2 x params x batch FLOPs over the weights' and the KV cache's bytes.
absl::StatusOr<Answer> DecodeIntensity(double params, double layers, double kv_heads,
                                       double head_dim, double seq, double batch,
                                       double bytes_per_param);
// Depth against width for a transformer of `params` (12 x d_model^2 per layer): the layers that
// width implies, against the layers given, and the aspect ratio d_model / layers.
absl::StatusOr<Answer> DepthVsWidth(double params, double d_model, double layers);

}  // namespace rooftune::napkin
