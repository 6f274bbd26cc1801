// The code compiled for a Highway target runs on every CPU that target is selected on. Highway
// 1.0.3 selects AVX3_DL on CPUs with AVX-512 VNNI whether or not they have AVX-VNNI (the VEX
// encoding of the same dot products, of client cores and of Sapphire Rapids and Zen 5 on), so
// code for the AVX-512 targets must hold no VEX-encoded vpdpbusd/vpdpwssd: on Zen 4 and Ice Lake
// it raises SIGILL. The AVX2 target's AVX-VNNI kernels are used only where the CPU has it
// (kernels/avx_vnni.h). The test reads this binary's own code, which links every kernel.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace {

// stdout of `command`, and whether it exited 0.
bool Capture(const std::string& command, std::string* out) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return false;
  char buffer[1 << 16];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out->append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(InstructionSets, Avx512TargetsHoldNoVexEncodedDotProducts) {
  // This binary by its path: /proc/self/exe in the shell's child would be objdump itself.
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string disassembly;
  if (!Capture("objdump -d --no-show-raw-insn '" + self + "' 2>/dev/null", &disassembly)) {
    GTEST_SKIP() << "objdump (binutils) cannot read this binary";
  }
  std::istringstream lines(disassembly);
  std::string line, function;
  std::vector<std::string> offenders;
  size_t avx512_functions = 0;
  while (std::getline(lines, line)) {
    // "0000000000401000 <symbol>:" opens a function.
    if (!line.empty() && line.back() == ':' && line.find(" <") != std::string::npos) {
      function = line.substr(line.find(" <") + 2);
      avx512_functions += function.find("N_AVX3") != std::string::npos;
      continue;
    }
    if (function.find("N_AVX3") != std::string::npos &&
        (line.find("{vex} vpdpbusd") != std::string::npos ||
         line.find("{vex} vpdpwssd") != std::string::npos)) {
      offenders.push_back(function + "  " + line);
    }
  }
  // The scan saw the AVX-512 targets' code at all (a stripped binary would pass vacuously).
  EXPECT_GT(avx512_functions, 100u);
  EXPECT_TRUE(offenders.empty()) << offenders.size() << " instruction(s), the first:\n"
                                 << offenders.front();
}

}  // namespace
