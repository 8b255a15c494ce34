#pragma once
// Helpers shared by the trace tests: temporary files and the shipped trace.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace dvfsim::test {

inline std::string shipped_trace_path() {
  return std::string(DVFSIM_SOURCE_DIR) + "/traces/data/gpt3xl_h200_train_b4_t2048.kineto.json.gz";
}

inline std::string test_data(std::string_view name) {
  return std::string(DVFSIM_TRACES_TEST_DATA) + "/" + std::string(name);
}

// A fresh directory per test, removed at destruction.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("dvfsim_traces_") + info->test_suite_name() + "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~TempDir() { std::filesystem::remove_all(dir_); }
  std::string path(std::string_view name) const { return (dir_ / std::string(name)).string(); }
  std::string write(std::string_view name, std::string_view content) const {
    const std::string p = path(name);
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace dvfsim::test
