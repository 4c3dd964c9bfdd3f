// The row checks give the same results whether the history is analysed
// whole or split into parts (checks_rows.h), on the histories of every
// example scenario. (The hand-written histories of checks_test.cc and
// checks_reads_test.cc are compared the same way by their helpers.)
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "scenarios/checks_rows.h"
#include "scenarios/loader.h"
#include "scenarios/runner.h"
#include "tests/scenarios/checks_test_util.h"

namespace btsim::scenarios {
namespace {

std::vector<std::string> Examples() {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::string(BTSIM_SOURCE_DIR) + "/scenarios/examples")) {
    if (entry.path().extension() == ".textproto") {
      paths.push_back(entry.path().filename().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

class ChecksInPartsTest : public testing::TestWithParam<std::string> {};

TEST_P(ChecksInPartsTest, ExampleHistoryGivesTheSameResultsInParts) {
  auto loaded = LoadScenario(std::string(BTSIM_SOURCE_DIR) +
                             "/scenarios/examples/" + GetParam());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  auto outcome = RunScenario(*loaded);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  ASSERT_GT(outcome->history.operations.size(), 100u);
  checks_test::ExpectSameInParts(outcome->history,
                                 loaded->proto.expectations());
}

INSTANTIATE_TEST_SUITE_P(Examples, ChecksInPartsTest,
                         testing::ValuesIn(Examples()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, 2);
                           return "Example" + name;
                         });

}  // namespace
}  // namespace btsim::scenarios
