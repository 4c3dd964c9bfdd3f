// The row checks give the same results whether the history is analysed
// whole or split into parts (checks_rows.h), on the histories of every
// example scenario. (The hand-written histories of checks_test.cc and
// checks_reads_test.cc are compared the same way by their helpers.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
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

// Field by field: two runs keep their texts in different pools (a's in
// ha's, b's in hb's).
bool SameOperation(const History& ha, const Operation& a, const History& hb,
                   const Operation& b) {
  return a.id == b.id && a.attempts == b.attempts && a.type == b.type &&
         a.code == b.code && a.client() == b.client() &&
         a.group() == b.group() && a.profile() == b.profile() &&
         a.table() == b.table() && a.row == b.row && a.invoke == b.invoke &&
         a.complete == b.complete && a.message == b.message &&
         a.cluster == b.cluster && a.committed == b.committed &&
         a.log_position == b.log_position && a.timestamp == b.timestamp &&
         a.version == b.version &&
         ha.names->Text(a.written()) == hb.names->Text(b.written()) &&
         ha.names->Text(a.read()) == hb.names->Text(b.read()) &&
         a.rows() == b.rows() && a.counter() == b.counter() &&
         a.delete_start() == b.delete_start();
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

// A run whose history leaves memory in small chunks plays exactly as one
// that keeps it (same fingerprint, same operations) and gets the same
// checks, expectations and reports' inputs.
TEST_P(ChecksInPartsTest, ExampleRunsTheSameWithItsHistorySpilled) {
  auto loaded = LoadScenario(std::string(BTSIM_SOURCE_DIR) +
                             "/scenarios/examples/" + GetParam());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  auto kept = RunScenario(*loaded);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  RunOptions options;
  options.history_chunk = 256;
  auto spilled = RunScenario(*loaded, options);
  ASSERT_TRUE(spilled.ok()) << spilled.status().message();

  const OperationLog& a = kept->history.operations;
  const OperationLog& b = spilled->history.operations;
  ASSERT_GT(b.size(), 4 * options.history_chunk);
  EXPECT_FALSE(a.Spilled());
  EXPECT_TRUE(b.Spilled());
  EXPECT_EQ(spilled->fingerprint, kept->fingerprint);
  ASSERT_EQ(a.size(), b.size());
  size_t i = 0;
  for (const Operation& op : b) {
    const Operation& same = a[i];
    ASSERT_EQ(op.id, i);
    ASSERT_TRUE(SameOperation(spilled->history, op, kept->history, same))
        << "op " << i;
    const Operation got = b.Get(i);
    ASSERT_EQ(std::memcmp(&op, &got, sizeof(Operation)), 0);
    ++i;
  }
  ASSERT_EQ(spilled->checks.size(), kept->checks.size());
  for (size_t c = 0; c < kept->checks.size(); ++c) {
    EXPECT_EQ(spilled->checks[c].value, kept->checks[c].value)
        << kept->checks[c].name;
    EXPECT_EQ(spilled->checks[c].detail, kept->checks[c].detail);
  }
  ASSERT_EQ(spilled->expectations.size(), kept->expectations.size());
  for (size_t e = 0; e < kept->expectations.size(); ++e) {
    EXPECT_EQ(spilled->expectations[e].value, kept->expectations[e].value)
        << kept->expectations[e].metric;
    EXPECT_EQ(spilled->expectations[e].detail, kept->expectations[e].detail);
  }
  EXPECT_EQ(spilled->passed, kept->passed);
  ASSERT_EQ(spilled->failbacks.size(), kept->failbacks.size());
  for (size_t f = 0; f < kept->failbacks.size(); ++f) {
    EXPECT_EQ(spilled->failbacks[f].length, kept->failbacks[f].length);
  }
  ASSERT_EQ(spilled->history.final_state.size(),
            kept->history.final_state.size());
  for (size_t c = 0; c < kept->history.final_state.size(); ++c) {
    const RowStates& x = RowsOf(kept->history, c);
    const RowStates& y = RowsOf(spilled->history, c);
    ASSERT_EQ(x.size(), y.size());
    for (size_t r = 0; r < x.size(); ++r) {
      const RowState& s = (x.begin() + r)->second;
      const RowState& t = (y.begin() + r)->second;
      EXPECT_EQ(kept->history.names->Text(s.tag),
                spilled->history.names->Text(t.tag));
      EXPECT_EQ(s.version, t.version);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, ChecksInPartsTest,
                         testing::ValuesIn(Examples()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, 2);
                           return "Example" + name;
                         });

}  // namespace
}  // namespace btsim::scenarios
