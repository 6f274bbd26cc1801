#include "probes/system_facts.h"

#include <sys/utsname.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "framework/executor.h"
#include "hwy/targets.h"

namespace rooftune::probes {
namespace {

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return std::string(absl::StripAsciiWhitespace(line));
}

// ISA extensions that matter to kernels and ceilings, as /proc/cpuinfo names them.
constexpr const char* kInterestingFlags[] = {
    "sse4_2",      "avx",      "avx2",     "fma",         "f16c",     "avx512f",
    "avx512bw",    "avx512vl", "avx512dq", "avx512_vnni", "avx_vnni", "avx512_bf16",
    "avx512_fp16", "amx_tile", "amx_int8", "amx_bf16",    "asimd",    "sve"};

// The CPUs of a sysfs list such as "0-3,8".
std::set<int> ParseCpuList(absl::string_view list) {
  std::set<int> cpus;
  for (absl::string_view part : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> range = absl::StrSplit(part, '-');
    int lo = 0, hi = 0;
    if (!absl::SimpleAtoi(range[0], &lo)) continue;
    if (range.size() != 2 || !absl::SimpleAtoi(range[1], &hi)) hi = lo;
    for (int cpu = lo; cpu <= hi; ++cpu) cpus.insert(cpu);
  }
  return cpus;
}

// The NUMA node of each of `cpus`, from sysfs's node directories; empty when it has none.
std::vector<int> NodesOf(const std::vector<int>& cpus, const std::string& sysfs_root) {
  std::vector<int> nodes(cpus.size(), 0);  // a CPU no node lists counts with node 0
  bool any = false;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator(sysfs_root + "/devices/system/node", ec)) {
    absl::string_view name = entry.path().filename().native();
    int node = 0;
    if (!absl::ConsumePrefix(&name, "node") || !absl::SimpleAtoi(name, &node)) continue;
    const std::set<int> on_node = ParseCpuList(ReadLine(entry.path().string() + "/cpulist"));
    for (size_t i = 0; i < cpus.size(); ++i) {
      if (on_node.count(cpus[i])) nodes[i] = node, any = true;
    }
  }
  return any ? nodes : std::vector<int>();
}

// The count of CPUs in a sysfs list such as "0-3,8".
int CountCpuList(absl::string_view list) {
  return std::max<int>(1, int(ParseCpuList(list).size()));
}

}  // namespace

uint64_t ParseCacheSize(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  uint64_t scale = 1;
  if (!text.empty() && (text.back() == 'K' || text.back() == 'k')) scale = 1024;
  if (!text.empty() && text.back() == 'M') scale = 1024 * 1024;
  if (!text.empty() && text.back() == 'G') scale = uint64_t{1} << 30;
  if (scale != 1) text.remove_suffix(1);
  uint64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) return 0;
  return value * scale;
}

MachineProfile ReadSystemFacts(const std::string& sysfs_root, const std::string& cpuinfo_path) {
  MachineProfile p;
  p.rooftune_version = ROOFTUNE_VERSION;
  {
    std::ifstream in(cpuinfo_path);
    std::string line;
    std::set<std::string> flags;
    while (std::getline(in, line)) {
      std::vector<std::string> kv = absl::StrSplit(line, absl::MaxSplits(':', 1));
      if (kv.size() != 2) continue;
      const std::string key(absl::StripAsciiWhitespace(kv[0]));
      const std::string value(absl::StripAsciiWhitespace(kv[1]));
      if (key == "model name" && p.cpu_model.empty()) p.cpu_model = value;
      if (key == "vendor_id" && p.vendor.empty()) p.vendor = value;
      if (key == "cpu family" && p.cpu_family == 0) (void)absl::SimpleAtoi(value, &p.cpu_family);
      if ((key == "flags" || key == "Features") && flags.empty()) {
        for (absl::string_view f : absl::StrSplit(value, ' ', absl::SkipEmpty()))
          flags.insert(std::string(f));
      }
    }
    for (const char* flag : kInterestingFlags) {
      if (flags.count(flag)) p.isa.push_back(flag);
    }
  }
  if (p.cpu_model.empty()) p.cpu_model = "unknown CPU";
  if (p.vendor.empty()) p.vendor = "unknown";

  for (int64_t target : hwy::SupportedAndGeneratedTargets())
    p.hwy_targets.push_back(hwy::TargetName(target));

  const std::vector<int> cpus = AllowedCpus();
  p.logical_cpus = int(cpus.size());
  std::set<std::string> cores;
  for (int cpu : cpus) {
    const std::string topology =
        absl::StrCat(sysfs_root, "/devices/system/cpu/cpu", cpu, "/topology/");
    const std::string package = ReadLine(topology + "physical_package_id");
    const std::string core = ReadLine(topology + "core_id");
    cores.insert(core.empty() ? absl::StrCat("cpu", cpu) : package + ":" + core);
  }
  p.physical_cores = std::max<int>(1, int(cores.size()));
  p.cpu_nodes = NodesOf(cpus, sysfs_root);

  const std::string cache_dir =
      absl::StrCat(sysfs_root, "/devices/system/cpu/cpu", cpus.front(), "/cache/index");
  for (int index = 0; index < 16; ++index) {
    const std::string dir = absl::StrCat(cache_dir, index, "/");
    const std::string level = ReadLine(dir + "level");
    if (level.empty()) break;
    CacheLevel c;
    if (!absl::SimpleAtoi(level, &c.level)) continue;
    c.type = ReadLine(dir + "type");
    if (c.type == "Instruction") continue;
    c.size_bytes = ParseCacheSize(ReadLine(dir + "size"));
    absl::SimpleAtoi(ReadLine(dir + "ways_of_associativity"), &c.ways);
    if (!absl::SimpleAtoi(ReadLine(dir + "coherency_line_size"), &c.line_bytes)) c.line_bytes = 64;
    const std::string shared = ReadLine(dir + "shared_cpu_list");
    c.shared_by_cpus = shared.empty() ? 1 : CountCpuList(shared);
    if (c.size_bytes > 0) p.caches.push_back(c);
  }

  utsname name{};
  if (uname(&name) == 0) p.os_kernel = absl::StrCat(name.sysname, " ", name.release);
  const std::string thp = ReadLine(sysfs_root + "/kernel/mm/transparent_hugepage/enabled");
  const size_t open = thp.find('['), close = thp.find(']');
  p.transparent_hugepages = open != std::string::npos && close > open
                                ? thp.substr(open + 1, close - open - 1)
                                : "unknown";
  return p;
}

std::optional<std::string> BusyMachineWarning(absl::string_view proc_loadavg, int cpus) {
  const std::vector<absl::string_view> fields =
      absl::StrSplit(proc_loadavg, ' ', absl::SkipWhitespace());
  double load = 0;
  if (fields.empty() || cpus <= 0 || !absl::SimpleAtod(fields[0], &load)) return std::nullopt;
  if (load < 0.75 * cpus) return std::nullopt;
  return absl::StrFormat(
      "warning: the 1-minute load average is %.2f on %d CPUs: other work is running, so ceilings "
      "measured now will be low and kernels may look impossible against them; probe again "
      "(--force) on a quiet machine",
      load, cpus);
}

std::optional<std::string> BusyMachineWarning() {
  std::ifstream in("/proc/loadavg");
  std::string text;
  if (!std::getline(in, text)) return std::nullopt;
  return BusyMachineWarning(text, int(AllowedCpus().size()));
}

}  // namespace rooftune::probes
