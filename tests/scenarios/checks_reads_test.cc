// The read-consistency checks: read-your-writes, monotonic reads, strong
// reads, staleness and k-staleness.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenarios/checks.h"
#include "tests/scenarios/checks_test_util.h"

namespace btsim::scenarios {
namespace {

using checks_test::Builder;
using checks_test::ExpectSameInParts;
using checks_test::Eval;
using checks_test::Ms;
using checks_test::RunCheck;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ReadYourWritesTest, ReadsAfterOwnAcknowledgedWriteMustSeeIt) {
  Builder b;
  b.Write("a-0", "r", "a-0/1", 0, 10);
  b.Write("a-0", "r", "a-0/2", 20, 30);
  b.Read("a-0", "r", "a-0/2", 30, 35);        // ok
  b.Read("a-0", "r", "a-0/1", 25, 40);        // invoked before the ack: ok
  b.Read("b-0", "r", "a-0/1", 40, 45);        // another client: ok
  b.Read("a-0", "r", "a-0/1", 50, 55, "c2");  // violation
  b.Read("a-0", "r", "", 60, 65, "c2");       // violation: nothing
  const CheckValue check = RunCheck(b.history(), "read_your_writes_violations");
  EXPECT_EQ(check.value, 2);
  EXPECT_THAT(check.detail, HasSubstr("2 of 5 reads; first: op 5"));
  EXPECT_THAT(check.detail, HasSubstr("older than 'a-0/2'"));
  EXPECT_FALSE(
      Eval(b.history(), "metric: READ_YOUR_WRITES_VIOLATIONS at_most: 0").pass);
  EXPECT_TRUE(Eval(b.history(),
                   "metric: READ_YOUR_WRITES_VIOLATIONS cluster: 'c1' "
                   "at_most: 0")
                  .pass);
}

TEST(ReadYourWritesTest, UnknownTagIsOldest) {
  Builder b;
  b.Write("a-0", "r", "a-0/1", 0, 10);
  b.Read("a-0", "r", "ghost/1", 20, 25);
  const CheckValue check = RunCheck(b.history(), "read_your_writes_violations");
  EXPECT_EQ(check.value, 1);
  EXPECT_THAT(check.detail, HasSubstr("1 reads saw unknown tags"));
}

TEST(ReadYourWritesTest, DropRowRangeExcusesEmptyRead) {
  Builder b;
  b.Write("a-0", "r", "a-0/1", 0, 10);
  Event& drop = b.AddEvent(EventKind::kDropRowRange, 15, "c1");
  drop.table = "t";
  b.Read("a-0", "r", "", 20, 25);
  EXPECT_EQ(RunCheck(b.history(), "read_your_writes_violations").value, 0);
  EXPECT_EQ(RunCheck(b.history(), "monotonic_read_violations").value, 0);
}

TEST(MonotonicReadsTest, LaterReadMustNotGoBack) {
  Builder b;
  b.Write("w-0", "r", "w-0/1", 0, 10);
  b.Write("w-0", "r", "w-0/2", 20, 30, "c2");
  b.Read("a-0", "r", "w-0/2", 40, 45, "c2");
  b.Read("a-0", "r", "w-0/1", 42, 50);  // overlapping: ok
  b.Read("b-0", "r", "w-0/1", 50, 55);  // another client: ok
  b.Read("a-0", "r", "w-0/1", 60, 65);  // violation
  const CheckValue check = RunCheck(b.history(), "monotonic_read_violations");
  EXPECT_EQ(check.value, 1);
  EXPECT_THAT(check.detail, HasSubstr("first: op 5"));
  EXPECT_FALSE(
      Eval(b.history(), "metric: MONOTONIC_READ_VIOLATIONS at_most: 0").pass);
  EXPECT_TRUE(Eval(b.history(),
                   "metric: MONOTONIC_READ_VIOLATIONS client: 'b' at_most: 0")
                  .pass);
}

TEST(StrongReadsTest, NotPromisedReportsZero) {
  Builder b;
  b.Write("w-0", "r", "w-0/1", 0, 10);
  b.Read("a-0", "r", "", 20, 25);
  const CheckValue check = RunCheck(b.history(), "strong_read_violations");
  EXPECT_EQ(check.value, 0);
  EXPECT_EQ(check.detail, "not promised by the routing");
  EXPECT_TRUE(
      Eval(b.history(), "metric: STRONG_READ_VIOLATIONS at_most: 0").pass);
}

TEST(StrongReadsTest, PromisedReadsMustSeeEveryAcknowledgedWrite) {
  Builder b;
  b.history().strong_reads_promised = true;
  b.Write("w-0", "r", "w-0/1", 0, 10);
  b.Read("a-0", "r", "", 5, 12);        // concurrent: ok
  b.Read("a-0", "r", "w-0/1", 20, 25);  // ok
  b.Read("b-0", "r", "", 20, 25);       // violation
  const CheckValue check = RunCheck(b.history(), "strong_read_violations");
  EXPECT_EQ(check.value, 1);
  EXPECT_FALSE(
      Eval(b.history(), "metric: STRONG_READ_VIOLATIONS at_most: 0").pass);
  EXPECT_TRUE(Eval(b.history(),
                   "metric: STRONG_READ_VIOLATIONS client: 'a-0' at_most: 0")
                  .pass);
}

TEST(StalenessTest, TimeSinceFirstMissedAcknowledgement) {
  Builder b;
  b.Write("w-0", "r", "w-0/1", 0, 10);
  b.Write("w-0", "r", "w-0/2", 20, 30);
  b.Write("w-0", "r", "w-0/3", 40, 50);
  b.Read("a-0", "r", "w-0/3", 60, 61);  // 0
  b.Read("a-0", "r", "w-0/1", 70, 71);  // missed /2 (ack 30): 40 ms
  b.Read("a-0", "r", "", 80, 81);       // missed /1 (ack 10): 70 ms
  b.Read("a-0", "r", "w-0/2", 45, 46);  // /3 not acked yet: 0
  ExpectationResult p100 = Eval(
      b.history(), "metric: STALENESS_SECONDS percentile: 100 at_most: 0.05");
  EXPECT_DOUBLE_EQ(p100.value, 0.07);
  EXPECT_FALSE(p100.pass);
  EXPECT_THAT(p100.detail, HasSubstr("2 stale"));
  ExpectationResult p50 = Eval(
      b.history(), "metric: STALENESS_SECONDS percentile: 50 at_most: 0.05");
  EXPECT_DOUBLE_EQ(p50.value, 0);  // ranks: 0, 0, 40, 70
  EXPECT_TRUE(p50.pass);
  EXPECT_DOUBLE_EQ(
      Eval(b.history(), "metric: STALENESS_SECONDS percentile: 75 at_most: 1")
          .value,
      0.04);
}

TEST(StalenessTest, NoSamplesAndBadPercentile) {
  Builder b;
  ExpectationResult none =
      Eval(b.history(), "metric: STALENESS_SECONDS at_most: 1");
  EXPECT_EQ(none.value, 0);
  EXPECT_EQ(none.detail, "no samples");
  EXPECT_FALSE(none.pass);  // nothing was measured, whatever the bound
  ExpectationResult bad =
      Eval(b.history(), "metric: STALENESS_SECONDS percentile: 101 at_most: 1");
  EXPECT_FALSE(bad.pass);
  EXPECT_THAT(bad.detail, HasSubstr("percentile"));
}

TEST(KStalenessTest, CountsNewerWritesAcknowledgedBeforeTheRead) {
  Builder b;
  b.Write("w-0", "r", "w-0/1", 0, 10);
  b.Write("w-0", "r", "w-0/2", 20, 30);
  b.Write("w-0", "r", "w-0/3", 40, 50);
  b.Write("w-0", "q", "w-0/4", 40, 50);       // another row
  b.Write("w-0", "r", "w-0/5", 55, 56, "c1",  // not acknowledged
          StatusCode::kUnavailable);
  b.Read("a-0", "r", "w-0/1", 29, 35);  // /2 acked at 30: 0
  b.Read("a-0", "r", "w-0/1", 30, 35);  // /2 acked at its invoke: 1
  b.Read("a-0", "r", "w-0/3", 60, 61);  // 0
  b.Read("a-0", "r", "w-0/2", 60, 61);  // 1
  b.Read("b-0", "r", "w-0/1", 60, 61);  // 2
  b.Read("b-0", "r", "", 60, 61);       // 3
  const KStaleness k = ComputeKStaleness(b.history());
  EXPECT_EQ(k.reads, 6);
  EXPECT_EQ(k.max, 3);
  ASSERT_EQ(k.at_most.size(), static_cast<size_t>(kKStalenessMax) + 1);
  EXPECT_THAT(k.at_most, ElementsAre(2, 4, 5, 6, 6, 6));
}

TEST(KStalenessTest, DropRowRangeMakesAnEmptyReadFresh) {
  Builder b;
  b.Write("w-0", "r", "w-0/1", 0, 10);
  b.Write("w-0", "r", "w-0/2", 20, 30);
  b.Read("a-0", "r", "", 35, 38);  // before the drop: 2
  Event& drop = b.AddEvent(EventKind::kDropRowRange, 40, "c1");
  drop.table = "t";
  b.Read("a-0", "r", "", 50, 55);  // after the drop: 0
  b.Write("w-0", "r", "w-0/3", 60, 70);
  b.Read("a-0", "r", "", 80, 85);  // missed /3 only: 1
  const KStaleness k = ComputeKStaleness(b.history());
  EXPECT_EQ(k.reads, 3);
  EXPECT_EQ(k.max, 2);
  EXPECT_THAT(k.at_most, ElementsAre(1, 2, 3, 3, 3, 3));
}

TEST(KStalenessTest, PercentileMetricWithFilters) {
  Builder b;
  b.Write("w-0", "r", "w-0/1", 0, 10);
  b.Write("w-0", "r", "w-0/2", 20, 30);
  b.Write("w-0", "r", "w-0/3", 40, 50);
  b.Read("a-0", "r", "w-0/3", 60, 61);   // 0
  b.Read("a-0", "r", "w-0/3", 62, 63);   // 0
  b.Read("a-0", "r", "w-0/2", 64, 65);   // 1
  b.Read("b-0", "r", "", 66, 67, "c2");  // 3
  ExpectationResult p100 =
      Eval(b.history(), "metric: K_STALENESS percentile: 100 at_most: 1");
  EXPECT_EQ(p100.metric, "K_STALENESS");
  EXPECT_EQ(p100.value, 3);
  EXPECT_FALSE(p100.pass);
  EXPECT_THAT(p100.detail, HasSubstr("p100 of 4 reads; 2 stale"));
  EXPECT_THAT(p100.detail, HasSubstr("worst 3 writes behind"));
  ExpectationResult p75 =
      Eval(b.history(), "metric: K_STALENESS percentile: 75 at_most: 1");
  EXPECT_EQ(p75.value, 1);
  EXPECT_TRUE(p75.pass);
  EXPECT_EQ(
      Eval(b.history(), "metric: K_STALENESS percentile: 50 at_most: 0").value,
      0);
  // Default p99; filters as for STALENESS_SECONDS.
  EXPECT_EQ(Eval(b.history(), "metric: K_STALENESS at_most: 0").value, 3);
  EXPECT_TRUE(
      Eval(b.history(), "metric: K_STALENESS client: 'a' at_most: 1").pass);
  EXPECT_TRUE(
      Eval(b.history(), "metric: K_STALENESS cluster: 'c1' at_most: 1").pass);
  EXPECT_EQ(Eval(b.history(),
                 "metric: K_STALENESS window_start { nanos: 66000000 } "
                 "at_most: 0")
                .value,
            3);
  ExpectationResult none =
      Eval(b.history(), "metric: K_STALENESS client: 'nobody' at_most: 0");
  EXPECT_EQ(none.detail, "no samples");
  EXPECT_FALSE(none.pass);
  ExpectationResult bad =
      Eval(b.history(), "metric: K_STALENESS percentile: 101 at_most: 1");
  EXPECT_FALSE(bad.pass);
  EXPECT_THAT(bad.detail, HasSubstr("percentile"));
}

}  // namespace
}  // namespace btsim::scenarios
