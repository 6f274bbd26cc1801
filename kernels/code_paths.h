// Which code paths the kernels ran, so that a test fails when a path it meant to exercise did not
// run (a silent fallback to another target, micro-kernel or packing), as ruy's tests do. Off
// unless a test turns it on: a kernel call then pays one relaxed atomic load.
#pragma once

#include <atomic>
#include <set>
#include <string>

namespace rooftune::kernels {

namespace internal {
extern std::atomic<bool> recording_code_paths;
}  // namespace internal

inline bool RecordingCodePaths() {
  return internal::recording_code_paths.load(std::memory_order_relaxed);
}

// Starts (clearing what was recorded) or stops recording.
void RecordCodePaths(bool on);

// Notes that `path` ran ("gemm_f32 AVX3 6x64 A:packed B:first_use ir"); call only while
// RecordingCodePaths(), so that building the name costs nothing otherwise. Thread-safe.
void NoteCodePath(const std::string& path);

// The distinct paths noted since recording started.
std::set<std::string> RecordedCodePaths();

}  // namespace rooftune::kernels
