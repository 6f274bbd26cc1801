// A scratch folder of the running test's own: tests run in parallel (ctest -j), so no two may
// share a fixed /tmp name.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <string>

namespace rooftune::fixtures {

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
  static std::filesystem::path made;
  if (made != dir) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    made = dir;
  }
  return dir;
}

}  // namespace rooftune::fixtures
