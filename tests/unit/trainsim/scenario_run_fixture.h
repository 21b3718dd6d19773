#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cleanup.h"

namespace trainsim {

// A test's own scenario on the real node (root only): written to a fresh
// directory in SetUp; in TearDown the run is cleaned up by its id whatever
// the test did, and anything left of it fails the test.
class ScenarioRunTest : public ::testing::Test {
 protected:
  ScenarioRunTest(const char* scenario, const char* dir_prefix)
      : scenario_(scenario), dir_prefix_(dir_prefix) {}

  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    run_id_ = NewRunId();
    dir_ = ::testing::TempDir() + "/" + dir_prefix_ + run_id_;
    std::filesystem::create_directories(dir_);
    scenario_path_ = dir_ + "/scenario.json";
    std::ofstream(scenario_path_) << scenario_;
  }
  void TearDown() override {
    if (run_id_.empty()) return;
    for (const std::string& l : CleanupRun(run_id_, false))
      ADD_FAILURE() << "left: " << l;
    std::filesystem::remove_all(dir_);
  }

  std::string run_id_, dir_, scenario_path_;

 private:
  const char* scenario_;
  const char* dir_prefix_;
};

}  // namespace trainsim
