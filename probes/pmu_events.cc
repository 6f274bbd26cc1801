#include "probes/pmu_events.h"

namespace rooftune::probes {
namespace {

std::vector<MetricEvent> IntelCore(bool has_512) {
  std::vector<MetricEvent> e = {
      {"cycles", "UNHALTED_CORE_CYCLES", 1, "cycles"},
      {"instructions", "INSTRUCTION_RETIRED", 1, "instructions"},
      {"flops_scalar_single", "FP_ARITH_INST_RETIRED:SCALAR_SINGLE", 1, "flops"},
      {"flops_256b_single", "FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", 8, "flops"},
      {"flops_256b_double", "FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", 4, "flops"},
      {"l2_to_l1_bytes", "L1D:REPLACEMENT", 64, "bytes"},
      {"l3_to_l2_bytes", "L2_LINES_IN:ALL", 64, "bytes"},
      {"dram_to_l3_bytes", "LONGEST_LAT_CACHE:MISS", 64, "bytes"},
  };
  if (has_512) {
    e.push_back({"flops_512b_single", "FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE", 16, "flops"});
    e.push_back({"flops_512b_double", "FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE", 8, "flops"});
  }
  return e;
}

const std::vector<std::string> kIntelCaveats = {
    "FP_ARITH_INST_RETIRED counts instructions: FMA counts twice (the scale counts lanes; an "
    "FMA's two operations are counted by the event itself)",
    "L1D:REPLACEMENT and L2_LINES_IN include hardware-prefetched lines; stores are seen only as "
    "the read-for-ownership fills they cause",
    "LONGEST_LAT_CACHE:MISS is the core's view of L3 misses (demand and prefetch); DRAM traffic "
    "from other cores and from non-temporal stores needs the uncore IMC counters",
};

const std::vector<std::string> kAmdCaveats = {
    "RETIRED_SSE_AVX_FLOPS can count above 15 per cycle and needs the merge-event pairing to be "
    "exact; without it a saturated FMA loop under-counts",
    "data-cache fills by source count demand and software-prefetch fills, not hardware prefetches "
    "into L2, so L2 and DRAM bytes are lower bounds",
    "the L3 is a victim cache shared per CCX; its misses are counted by the amd64 L3 uncore PMU, "
    "which needs system-wide counting (perf_event_paranoid <= 0)",
};

std::vector<MetricEvent> AmdCommon() {
  return {
      {"cycles", "CYCLES_NOT_IN_HALT", 1, "cycles"},
      {"instructions", "RETIRED_INSTRUCTIONS", 1, "instructions"},
      {"flops", "RETIRED_SSE_AVX_FLOPS:ANY", 1, "flops"},
      {"l3_to_l2_bytes", "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C", 64, "bytes"}};
}

std::vector<PmuTable> MakeTables() {
  std::vector<PmuTable> t;
  PmuTable zen2{"amd64_fam17h_zen2", "AMD Zen 2", AmdCommon(), kAmdCaveats};
  zen2.events.push_back({"l2_to_l1_bytes",
                         "DATA_CACHE_REFILLS_FROM_SYSTEM:MABRESP_LCL_L2:LS_MABRESP_LCL_CACHE:"
                         "LS_MABRESP_LCL_DRAM:LS_MABRESP_RMT_CACHE:LS_MABRESP_RMT_DRAM",
                         64, "bytes"});
  zen2.events.push_back({"dram_to_l3_bytes",
                         "DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_LCL_DRAM:LS_MABRESP_RMT_DRAM",
                         64, "bytes"});
  t.push_back(zen2);
  PmuTable zen3{"amd64_fam19h_zen3", "AMD Zen 3", AmdCommon(), kAmdCaveats};
  zen3.events.push_back({"l2_to_l1_bytes",
                         "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:LCL_L2:INT_CACHE:EXT_CACHE_LCL:"
                         "MEM_IO_LCL:EXT_CACHE_RMT:MEM_IO_RMT",
                         64, "bytes"});
  zen3.events.push_back(
      {"dram_to_l3_bytes", "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL:MEM_IO_RMT", 64, "bytes"});
  t.push_back(zen3);
  PmuTable zen4{"amd64_fam19h_zen4", "AMD Zen 4", AmdCommon(), kAmdCaveats};
  zen4.events.push_back({"l2_to_l1_bytes",
                         "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:LCL_L2:LOCAL_CCX:NEAR_CACHE_NEAR_FAR:"
                         "DRAM_IO_NEAR:FAR_CACHE_NEAR_FAR:DRAM_IO_FAR",
                         64, "bytes"});
  zen4.events.push_back({"dram_to_l3_bytes",
                         "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:DRAM_IO_NEAR:DRAM_IO_FAR", 64, "bytes"});
  t.push_back(zen4);
  t.push_back({"skx", "Intel Skylake-SP / Cascade Lake", IntelCore(true), kIntelCaveats});
  t.push_back({"icx", "Intel Ice Lake-SP", IntelCore(true), kIntelCaveats});
  t.push_back({"spr", "Intel Sapphire Rapids / Emerald Rapids", IntelCore(true), kIntelCaveats});
  return t;
}

}  // namespace

const std::vector<PmuTable>& PmuTables() {
  static const std::vector<PmuTable>* tables = new std::vector<PmuTable>(MakeTables());
  return *tables;
}

const PmuTable* FindPmuTable(const std::string& pmu) {
  for (const PmuTable& t : PmuTables()) {
    if (t.pmu == pmu) return &t;
  }
  return nullptr;
}

std::optional<MemoryLevel> LevelOfMetric(const std::string& metric) {
  if (metric == "l2_to_l1_bytes") return MemoryLevel::kL2;
  if (metric == "l3_to_l2_bytes") return MemoryLevel::kL3;
  if (metric == "dram_to_l3_bytes") return MemoryLevel::kDram;
  return std::nullopt;
}

}  // namespace rooftune::probes
