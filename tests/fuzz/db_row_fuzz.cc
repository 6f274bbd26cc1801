// Database rows: a result whose text fields are arbitrary bytes (one per line of the input) is
// stored and read back unchanged, and the readers of its fields (workload key, provenance JSON)
// refuse what they cannot read instead of crashing.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "framework/tuning_db.h"
#include "framework/workload.h"
#include "nlohmann/json.hpp"
#include "tests/fuzz/fuzz_check.h"

namespace {

rooftune::TuningDb& Db() {
  static rooftune::TuningDb* db = [] {
    static const std::string path = "/tmp/rooftune_db_row_fuzz_" + std::to_string(getpid()) + ".db";
    unlink(path.c_str());
    // The database lives as long as the process; its file goes with it.
    std::atexit([] { unlink(path.c_str()); });
    auto opened = rooftune::TuningDb::Open(path);
    FUZZ_CHECK(opened.ok());
    return opened->release();
  }();
  return *db;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> f = absl::StrSplit(text, '\n');
  f.resize(6);
  rooftune::TunedResult r;
  r.fingerprint = "fuzz", r.kernel = f[0], r.workload = f[1], r.config = f[3];
  r.provenance = f[4];
  // The enum fields are typed: only their values can be stored.
  r.dtype = rooftune::Dtype(f[2].size() % 4);
  r.cache = f[5].size() % 2 ? rooftune::CacheMode::kCold : rooftune::CacheMode::kWarm;
  r.threads = int(size % 7) - 1;
  r.median_seconds = double(size) * 1e-6;
  if (!Db().Put(r).ok()) return 0;
  auto got = Db().Get(r.fingerprint, r.kernel, r.workload, r.dtype, r.threads, r.cache);
  FUZZ_CHECK(got.ok() && got->has_value());
  FUZZ_CHECK((*got)->kernel == r.kernel && (*got)->workload == r.workload &&
             (*got)->config == r.config && (*got)->provenance == r.provenance);
  (void)rooftune::ParseWorkloadKey((*got)->workload);
  (void)nlohmann::json::parse((*got)->provenance, nullptr, /*allow_exceptions=*/false);
  return 0;
}
