#include "scenarios/report.h"

#include <vector>

#include <gtest/gtest.h>

#include "tests/scenarios/checks_test_util.h"

namespace btsim::scenarios {
namespace {

using checks_test::Builder;
using checks_test::Ms;

TEST(PhasesTest, LinesCountEachProfileAndClusterOfEachPhase) {
  Builder b;
  b.history().duration = Ms(20'000);
  Event& cut = b.AddEvent(EventKind::kClusterDown, 10'000, "c1");
  cut.label = "c1 down";
  // Phase 1: a-0 through c1 and c2 (the second c1 a separate copy of the
  // text, as a name from another pool would be), and through a second
  // profile; one error.
  b.Read("a-0", "r", "", 1'000, 1'010, "c1");
  b.Read("a-0", "r", "", 2'000, 2'030, "c2");
  b.Read("a-0", "r", "", 3'000, 3'020, "c1").cluster =
      b.history().names->Store("c1");
  b.SetProfile(b.Read("a-0", "r", "", 4'000, 4'040, "c1"), "other");
  b.Op(OpType::kReadRow, "a-0", "r", 5'000, 5'100, "c1",
       StatusCode::kUnavailable);
  // Phase 2: refused by routing (no cluster), then served by c2.
  b.Op(OpType::kReadRow, "a-0", "r", 11'000, 11'010, "",
       StatusCode::kFailedPrecondition);
  b.Read("a-0", "r", "", 12'000, 12'050, "c2");

  const std::vector<PhaseStats> phases = Phases(b.history());
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].label, "start");
  EXPECT_EQ(phases[1].label, "c1 down");
  ASSERT_EQ(phases[0].lines.size(), 3u);
  EXPECT_EQ(phases[0].lines[0].profile, "default");
  EXPECT_EQ(phases[0].lines[0].cluster, "c1");
  EXPECT_EQ(phases[0].lines[0].ops, 3);
  EXPECT_EQ(phases[0].lines[0].errors, 1);
  EXPECT_EQ(phases[0].lines[0].p99, Ms(20));
  EXPECT_EQ(phases[0].lines[1].profile, "default");
  EXPECT_EQ(phases[0].lines[1].cluster, "c2");
  EXPECT_EQ(phases[0].lines[1].ops, 1);
  EXPECT_EQ(phases[0].lines[2].profile, "other");
  EXPECT_EQ(phases[0].lines[2].cluster, "c1");
  EXPECT_EQ(phases[0].lines[2].p50, Ms(40));
  ASSERT_EQ(phases[1].lines.size(), 2u);
  EXPECT_EQ(phases[1].lines[0].cluster, "-");
  EXPECT_EQ(phases[1].lines[0].errors, 1);
  EXPECT_EQ(phases[1].lines[0].ops, 1);
  EXPECT_EQ(phases[1].lines[1].cluster, "c2");
  EXPECT_EQ(phases[1].lines[1].p50, Ms(50));
}

TEST(PhasesTest, ClusterNamesThatAreNotInternedStillCountTogether) {
  // Every operation's cluster name a separate copy of "c1".
  Builder b;
  b.history().duration = Ms(1'000);
  for (int i = 0; i < 20; ++i) {
    b.Read("a-0", "r", "", i * 10, i * 10 + 5, "c1").cluster =
        b.history().names->Store("c1");
  }
  const std::vector<PhaseStats> phases = Phases(b.history());
  ASSERT_EQ(phases.size(), 1u);
  ASSERT_EQ(phases[0].lines.size(), 1u);
  EXPECT_EQ(phases[0].lines[0].cluster, "c1");
  EXPECT_EQ(phases[0].lines[0].ops, 20);
}

}  // namespace
}  // namespace btsim::scenarios
