#include "probes/amx_peak.h"

#include <immintrin.h>

#include "kernels/amx.h"

namespace rooftune::probes {
namespace {

constexpr int kAccumulatorTiles = 6;
constexpr double kOpsPerTdpbusd = 16.0 * 16 * 64 * 2;  // 16 x 16 outputs, 64 products each

__attribute__((target("amx-tile,amx-int8"))) void TdpbusdLoop(uint64_t iterations) {
  static const kernels::AmxTileConfig config;
  alignas(64) static const uint8_t ones[16 * 64] = {1};
  _tile_loadconfig(&config);
  for (int t = 0; t < kAccumulatorTiles; ++t) {
    // Tile numbers are immediates: one zeroing per tile.
    switch (t) {
      case 0: _tile_zero(0); break;
      case 1: _tile_zero(1); break;
      case 2: _tile_zero(2); break;
      case 3: _tile_zero(3); break;
      case 4: _tile_zero(4); break;
      case 5: _tile_zero(5); break;
    }
  }
  _tile_loadd(6, ones, 64);
  _tile_loadd(7, ones, 64);
  for (uint64_t i = 0; i < iterations; ++i) {
    _tile_dpbusd(0, 6, 7);
    _tile_dpbusd(1, 6, 7);
    _tile_dpbusd(2, 6, 7);
    _tile_dpbusd(3, 6, 7);
    _tile_dpbusd(4, 6, 7);
    _tile_dpbusd(5, 6, 7);
  }
  // Store one accumulator so the loop has an observable result.
  alignas(64) int32_t sink[16 * 16];
  _tile_stored(0, sink, 64);
  asm volatile("" : : "r"(sink) : "memory");
  _tile_release();
}

}  // namespace

PeakProbeInfo AmxInt8PeakPath() {
  if (!kernels::AmxInt8Available()) return {false, "no AMX int8", 0};
  return {true, "AMX tdpbusd", int(kAccumulatorTiles * kOpsPerTdpbusd)};
}

double RunAmxInt8PeakLoop(uint64_t iterations) {
  if (!kernels::AmxInt8Available()) return 0;
  TdpbusdLoop(iterations);
  return double(iterations) * kAccumulatorTiles * kOpsPerTdpbusd;
}

}  // namespace rooftune::probes
