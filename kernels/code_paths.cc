#include "kernels/code_paths.h"

#include <mutex>

namespace rooftune::kernels {
namespace internal {
std::atomic<bool> recording_code_paths{false};
}  // namespace internal

namespace {

struct Recorded {
  std::mutex mutex;
  std::set<std::string> paths;
};

Recorded& TheRecord() {
  static Recorded* record = new Recorded;  // never destroyed: kernels may note at exit
  return *record;
}

}  // namespace

void RecordCodePaths(bool on) {
  Recorded& r = TheRecord();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (on) r.paths.clear();
  internal::recording_code_paths.store(on, std::memory_order_relaxed);
}

void NoteCodePath(const std::string& path) {
  Recorded& r = TheRecord();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.paths.insert(path);
}

std::set<std::string> RecordedCodePaths() {
  Recorded& r = TheRecord();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.paths;
}

}  // namespace rooftune::kernels
