// A scratch folder of the running test's own: tests run in parallel (ctest -j), so no two may
// share a fixed /tmp name. Each folder is removed when the next test asks for its own and at the
// process's exit, so a test run leaves nothing behind in /tmp.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <string>
#include <system_error>

namespace rooftune::fixtures {

// The folder the process's current test made; removed by whoever replaces it, or at exit by the
// process that made it (not by a forked child that exits).
class MadeTempDir {
 public:
  ~MadeTempDir() { Remove(); }
  const std::filesystem::path& path() const { return path_; }
  void Replace(const std::filesystem::path& dir) {
    Remove();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    path_ = dir;
    owner_ = getpid();
  }

 private:
  void Remove() {
    std::error_code ignored;
    if (!path_.empty() && owner_ == getpid()) std::filesystem::remove_all(path_, ignored);
  }
  std::filesystem::path path_;
  pid_t owner_ = 0;
};

// temp/rooftune_<suite>.<test>_<pid>, created empty on the first call of a test.
inline std::filesystem::path TestTempDir() {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name = test == nullptr
                               ? std::string("no_test")
                               : std::string(test->test_suite_name()) + "." + test->name();
  std::string safe;
  for (char c : name) safe += std::isalnum(static_cast<unsigned char>(c)) || c == '.' ? c : '_';
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("rooftune_" + safe + "_" + std::to_string(getpid()));
  static MadeTempDir made;
  if (made.path() != dir) made.Replace(dir);
  return dir;
}

}  // namespace rooftune::fixtures
