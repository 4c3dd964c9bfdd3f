#include "scenarios/checks.h"

#include <cmath>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster/version.h"
#include "scenarios/checks_analysis.h"
#include "tests/scenarios/checks_test_util.h"

namespace btsim::scenarios {
namespace {

using checks_test::Builder;
using checks_test::Check;
using checks_test::Eval;
using checks_test::ExpectSameInParts;
using checks_test::Ms;
using checks_test::RunCheck;
using sim::Duration;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
namespace pb = btsim::scenario::v1;

TEST(RunChecksTest, EmptyHistoryNamesEveryCheckInOrder) {
  const std::vector<CheckValue> checks = RunChecks(History{});
  std::vector<std::string> names;
  for (const CheckValue& check : checks) names.push_back(check.name);
  EXPECT_THAT(names,
              ElementsAre("converged", "lost_writes", "rpo_writes",
                          "read_your_writes_violations",
                          "monotonic_read_violations", "strong_read_violations",
                          "lost_updates", "token_violations", "lww_anomalies",
                          "rto_seconds", "failovers", "errors", "successes"));
  EXPECT_EQ(Check(checks, "converged").value, 1);
  for (const CheckValue& check : checks) {
    if (check.name != "converged") {
      EXPECT_EQ(check.value, 0) << check.name;
    }
  }
  EXPECT_EQ(Check(checks, "strong_read_violations").detail,
            "not promised by the routing");
}

TEST(LwwAnomaliesTest, ALaterWriteWithAnOlderTimestampIsShadowed) {
  Builder b;
  // Operations are added in invoke order, as histories hold them.
  // w1: acknowledged at 10 ms with timestamp 100 ms (its clock ahead).
  b.Write("a-0", "r", "w1", 0, 10, "c1", StatusCode::kOk, 100'000);
  // w3: concurrent with w1 (issued before its acknowledgement): not an
  // anomaly, whatever its timestamp.
  b.Write("b-0", "r", "w3", 5, 40, "c2", StatusCode::kOk, 60'000);
  // w2: issued after w1's acknowledgement, with an older timestamp.
  b.Write("b-0", "r", "w2", 20, 30, "c2", StatusCode::kOk, 50'000);
  // w4: another row.
  b.Write("b-0", "other", "w4", 50, 60, "c2", StatusCode::kOk, 1'000);
  // w5: failed, so not acknowledged: neither shadowed nor shadowing.
  b.Write("a-0", "r", "w5", 41, 45, "c1", StatusCode::kUnavailable, 200'000);
  // w6: newer than every acknowledged write before it.
  b.Write("b-0", "r", "w6", 50, 60, "c2", StatusCode::kOk, 150'000);
  ExpectSameInParts(b.history(), {});
  const CheckValue check = Check(RunChecks(b.history()), "lww_anomalies");
  EXPECT_EQ(check.value, 1);
  EXPECT_THAT(check.detail, HasSubstr("1 of 5 acknowledged writes"));
  EXPECT_THAT(check.detail, HasSubstr("op 2 (b-0"));
  EXPECT_THAT(check.detail, HasSubstr("shadowed by op 0 (a-0"));
}

TEST(ConvergedTest, EqualDigestsConverge) {
  Builder b;
  b.Cluster("c1", "abc");
  b.Cluster("c2", "abc");
  EXPECT_EQ(RunCheck(b.history(), "converged").value, 1);
  EXPECT_TRUE(Eval(b.history(), "metric: CONVERGED at_least: 1").pass);
}

TEST(ConvergedTest, DifferentDigestsNameTheFirstDifferingRow) {
  Builder b;
  const uint64_t w1 = b.Write("w-0", "r1", "w-0/1", 0, 10).id;
  const uint64_t w2 = b.Write("w-0", "r2", "w-0/2", 20, 30).id;
  ClusterState& c1 = b.Cluster("c1", "abc");
  b.Has(c1, w1);
  b.Has(c1, w2);
  ClusterState& c2 = b.Cluster("c2", "abd");
  b.Has(c2, w1);
  const CheckValue check = RunCheck(b.history(), "converged");
  EXPECT_EQ(check.value, 0);
  EXPECT_THAT(check.detail, HasSubstr("c2 differs from c1 at t/r2"));
  const ExpectationResult result =
      Eval(b.history(), "metric: CONVERGED at_least: 1");
  EXPECT_FALSE(result.pass);
  EXPECT_EQ(result.metric, "CONVERGED");
  EXPECT_EQ(result.bound, ">= 1");
}

TEST(ConvergedTest, RemovedClustersAreIgnored) {
  Builder b;
  b.Cluster("c1", "abc");
  b.Cluster("c2", "old");
  b.AddEvent(EventKind::kRemoveCluster, 5, "c2");
  EXPECT_EQ(RunCheck(b.history(), "converged").value, 1);
}

TEST(LostWritesTest, PresentOrSupersededWritesAreNotLost) {
  Builder b;
  b.Write("w-0", "r", "w-0/1", 0, 10);  // superseded by w2 on both
  const uint64_t w2 = b.Write("w-1", "r", "w-1/1", 20, 30, "c2").id;
  ClusterState& c1 = b.Cluster("c1");
  ClusterState& c2 = b.Cluster("c2");
  b.Has(c1, w2);
  b.Has(c2, w2);
  EXPECT_EQ(RunCheck(b.history(), "lost_writes").value, 0);
  EXPECT_TRUE(Eval(b.history(), "metric: LOST_WRITES at_most: 0").pass);
}

TEST(LostWritesTest, MissingWriteIsLostOncePerWrite) {
  Builder b;
  const uint64_t w1 = b.Write("w-0", "r", "w-0/1", 0, 10).id;
  b.Write("w-0", "r", "w-0/2", 20, 30);  // lost on both clusters
  b.Write("w-0", "q", "w-0/3", 40, 50, "c1", StatusCode::kUnavailable);
  ClusterState& c1 = b.Cluster("c1");
  ClusterState& c2 = b.Cluster("c2");
  b.Has(c1, w1);
  b.Has(c2, w1);
  const CheckValue check = RunCheck(b.history(), "lost_writes");
  EXPECT_EQ(check.value, 1);
  EXPECT_THAT(check.detail, HasSubstr("w-0 t/r 'w-0/2' missing on c1"));
  EXPECT_THAT(check.detail, HasSubstr("c1 1, c2 1"));
  EXPECT_FALSE(Eval(b.history(), "metric: LOST_WRITES at_most: 0").pass);
  // Filters apply to the write.
  EXPECT_EQ(
      Eval(b.history(), "metric: LOST_WRITES client: 'x' at_most: 0").value, 0);
  EXPECT_EQ(
      Eval(b.history(), "metric: LOST_WRITES client: 'w' at_most: 0").value, 1);
  EXPECT_EQ(Eval(b.history(),
                 "metric: LOST_WRITES window_start { nanos: 15000000 } "
                 "at_most: 0")
                .value,
            1);
  EXPECT_EQ(Eval(b.history(),
                 "metric: LOST_WRITES window_end { nanos: 15000000 } "
                 "at_most: 0")
                .value,
            0);
}

TEST(LostWritesTest, ClustersSharingRowsReadTheSharedCopy) {
  Builder b;
  const uint64_t w1 = b.Write("w-0", "r", "w-0/1", 0, 10).id;
  b.Has(b.Cluster("c1"), w1);
  b.Cluster("c2").same_as = 0;  // the same contents as c1
  EXPECT_EQ(RunCheck(b.history(), "lost_writes").value, 0);
  // Without the shared copy c2 holds nothing: the write is lost there.
  b.history().final_state[1].same_as.reset();
  const CheckValue check = RunCheck(b.history(), "lost_writes");
  EXPECT_EQ(check.value, 1);
  EXPECT_THAT(check.detail, HasSubstr("missing on c2"));
}

TEST(LostWritesTest, EachSharingClusterReadsTheCopyItNames) {
  // c1 holds the write, c2 does not; c3 shares c2's rows, c4 shares c1's.
  Builder b;
  const uint64_t w1 = b.Write("w-0", "r", "w-0/1", 0, 10).id;
  b.Has(b.Cluster("c1", "d1"), w1);
  b.Cluster("c2", "d2");
  b.Cluster("c3", "d2").same_as = 1;
  b.Cluster("c4", "d1").same_as = 0;
  const CheckValue check = RunCheck(b.history(), "lost_writes");
  EXPECT_EQ(check.value, 1);
  EXPECT_THAT(check.detail, HasSubstr("(by cluster: c2 1, c3 1)"));
}

TEST(LostWritesTest, RowsAreTheirTableAndKeyExactly) {
  // ("t", "ab") and ("ta", "b") concatenate to the same bytes, and the
  // same key in two tables names two rows.
  Builder b;
  const uint64_t w1 = b.Write("w-0", "ab", "w-0/1", 0, 10).id;
  b.SetTable(b.Write("w-0", "b", "w-0/2", 20, 30), "ta");
  b.SetTable(b.Write("w-0", "ab", "w-0/3", 40, 50), "u");
  const uint64_t w4 = b.Write("w-0", "ab", "w-0/4", 60, 70).id;
  ClusterState& c1 = b.Cluster("c1");
  b.Has(c1, w1);
  b.Has(c1, w4);
  const CheckValue check = RunCheck(b.history(), "lost_writes");
  EXPECT_EQ(check.value, 2);
  EXPECT_THAT(check.detail, HasSubstr("w-0 ta/b 'w-0/2' missing on c1"));
  EXPECT_THAT(check.detail, HasSubstr("w-0 u/ab 'w-0/3' missing on c1"));
  EXPECT_THAT(check.detail, Not(HasSubstr("'w-0/1'")));
  EXPECT_THAT(check.detail, Not(HasSubstr("'w-0/4'")));
}

TEST(TagIndexTest, FindsTheFirstOpOfEachTagOfAnyForm) {
  // Client tags ("<client>/<n>", n canonical) and every other form.
  const std::vector<std::string> tags = {
      "w-0/1", "w-0/10",         "w-1/1",  "w-0/01", "w-0/1x",
      "plain", "w-0/",           "/5",     "a/b/7",  "w-0/0",
      "w-0/1", "w-0/1000000000", "w-0/99", "w-0/01"};
  NamePool texts;
  std::vector<Operation> ops(tags.size());
  for (size_t i = 0; i < tags.size(); ++i) {
    ops[i].type = OpType::kWrite;
    ops[i].set_written(texts.MakeTag(tags[i]));
  }
  checks_internal::TagIndex index(ops.size());
  const std::vector<int32_t> row_of(tags.size(), 0);  // all on one row
  for (size_t i = 0; i < tags.size(); ++i) {
    index.Add(texts.MakeTag(tags[i]), 0, static_cast<uint32_t>(i), row_of);
  }
  // Duplicates keep the first op: "w-0/1" (0 and 10), "w-0/01" (3 and 13).
  const std::vector<int64_t> first = {0, 1, 2, 3, 4,  5,  6,
                                      7, 8, 9, 0, 11, -2, 3};
  for (size_t i = 0; i < tags.size(); ++i) {
    if (first[i] == -2) continue;  // "w-0/99": past the slots (4 * ops + 16), hashed
    EXPECT_EQ(index.Find(texts.MakeTag(tags[i]), 0, row_of), first[i])
        << tags[i];
  }
  EXPECT_EQ(index.Find(texts.MakeTag("w-0/99"), 0, row_of), 12);
  for (const char* absent : {"w-0/2", "w-2/1", "w-0/001", "", "w-0/100",
                             "plain2", "w-0/4294967296"}) {
    EXPECT_EQ(index.Find(texts.MakeTag(absent), 0, row_of), -1) << absent;
  }
  EXPECT_EQ(index.Find(texts.MakeTag("w-0/1"), 1, row_of), -1);  // not on row 1
}

TEST(TagIndexTest, TheSameTagOnSeveralRowsFindsEachRowsWrite) {
  // A recorded application writes "on" on rows 0, 1 and 0 again, and
  // "off" on row 1.
  const std::vector<std::string> tags = {"on", "on", "on", "off"};
  const std::vector<int32_t> row_of = {0, 1, 0, 1};
  NamePool texts;
  std::vector<Operation> ops(tags.size());
  checks_internal::TagIndex index(ops.size());
  for (size_t i = 0; i < tags.size(); ++i) {
    index.Add(texts.MakeTag(tags[i]), row_of[i], static_cast<uint32_t>(i),
              row_of);
  }
  EXPECT_EQ(index.Find(texts.MakeTag("on"), 0, row_of), 0);
  EXPECT_EQ(index.Find(texts.MakeTag("on"), 1, row_of), 1);
  EXPECT_EQ(index.Find(texts.MakeTag("on"), 2, row_of), -1);
  EXPECT_EQ(index.Find(texts.MakeTag("off"), 1, row_of), 3);
  EXPECT_EQ(index.Find(texts.MakeTag("off"), 0, row_of), -1);
}

TEST(LostWritesTest, DropRowRangeAfterCommitExcuses) {
  Builder b;
  b.Write("w-0", "user1", "w-0/1", 0, 10);
  b.Write("w-0", "other", "w-0/2", 0, 10);
  b.Cluster("c1");
  Event& drop = b.AddEvent(EventKind::kDropRowRange, 20, "c1");
  drop.table = "t";
  drop.detail = "user";
  const CheckValue check = RunCheck(b.history(), "lost_writes");
  EXPECT_EQ(check.value, 1);  // only "other"
  EXPECT_THAT(check.detail, HasSubstr("t/other"));
}

TEST(LostWritesTest, DropBeforeCommitDoesNotExcuse) {
  Builder b;
  b.Write("w-0", "user1", "w-0/1", 100, 110);
  b.Cluster("c1");
  Event& drop = b.AddEvent(EventKind::kDropRowRange, 20, "c1");
  drop.table = "t";  // every row
  EXPECT_EQ(RunCheck(b.history(), "lost_writes").value, 1);
}

// A refused DropRowRange (another was still replicating) dropped nothing:
// the writes under its prefix that are missing are lost writes.
TEST(LostWritesTest, RefusedDropRowRangeDoesNotExcuse) {
  Builder b;
  b.Write("w-0", "user1", "w-0/1", 0, 10);
  b.Cluster("c1");
  Event& drop = b.AddEvent(EventKind::kDropRowRange, 20, "c1");
  drop.table = "t";
  drop.detail = "user";
  drop.refused = true;
  const CheckValue check = RunCheck(b.history(), "lost_writes");
  EXPECT_EQ(check.value, 1);
  EXPECT_THAT(check.detail, HasSubstr("t/user1"));
}

// A refused fault step changed nothing: it starts no outage.
TEST(RtoTest, RefusedFaultIsNotAFault) {
  Builder b;
  b.AddEvent(EventKind::kClusterDown, 10, "c1").refused = true;
  b.Write("w-0", "r", "w-0/1", 20, 30, "c1", StatusCode::kUnavailable);
  b.Write("w-0", "r", "w-0/2", 40, 50);
  EXPECT_EQ(Eval(b.history(), "metric: RTO_SECONDS at_most: 0").value, 0);
  b.history().events[0].refused = false;
  EXPECT_DOUBLE_EQ(Eval(b.history(), "metric: RTO_SECONDS at_most: 0").value,
                   0.04);
}

// A latency change that makes requests miss their deadlines is an outage:
// from the change to the first success after the errors.
TEST(RtoTest, LatencyChangeThatCausesDeadlinesIsAnOutage) {
  Builder b;
  Event& slow = b.AddEvent(EventKind::kLatency, 10, "c1", "c2");
  slow.label = "latency c1 <-> c2";
  b.Write("w-0", "r", "w-0/1", 20, 30, "c2", StatusCode::kDeadlineExceeded);
  b.Write("w-0", "r", "w-0/2", 40, 60, "c2");
  const ExpectationResult rto =
      Eval(b.history(), "metric: RTO_SECONDS at_most: 0");
  EXPECT_DOUBLE_EQ(rto.value, 0.05);
  EXPECT_FALSE(rto.pass);
  EXPECT_THAT(rto.detail, HasSubstr("DEADLINE_EXCEEDED"));
}

// More load (or fewer nodes) that overloads a node is an outage too: from
// the change to the first success after the refusals.
TEST(RtoTest, AnOverloadFromAWorkloadChangeOrAResizeIsAnOutage) {
  for (EventKind kind : {EventKind::kChangeWorkload, EventKind::kResize}) {
    Builder b;
    b.AddEvent(kind, 10, "c1");
    b.Write("w-0", "r", "w-0/1", 20, 30, "c1", StatusCode::kUnavailable);
    b.Write("w-0", "r", "w-0/2", 40, 70, "c1");
    const ExpectationResult rto =
        Eval(b.history(), "metric: RTO_SECONDS at_most: 0");
    EXPECT_DOUBLE_EQ(rto.value, 0.06);
    EXPECT_THAT(rto.detail, HasSubstr("UNAVAILABLE"));
  }
}

// A write of the run's first millisecond whose cell a GC rule may remove
// as its column's newest (the final state, read at 20 s, lacks it).
History ExpiringWrite(std::vector<GcRuleChange> rules, int64_t ended_ms) {
  Builder b;
  b.Write("w-0", "r", "w-0/1", 0, 10, "c1", StatusCode::kOk,
          cluster::Micros(cluster::TimestampOf(kRunEpoch)));
  b.Cluster("c1");
  b.history().gc_rules = std::move(rules);
  b.history().ended = Ms(ended_ms);
  return b.history();
}

// A write missing at the end, then a delete of its row committed `at_ms`
// (kDeleteCells over [from_us, to_us]).
History DeletedWrite(OpType type, int64_t at_ms, int64_t from_us = 0,
                     int64_t to_us = 0) {
  Builder b;
  b.Write("w-0", "r", "w-0/1", 0, 10, "c1", StatusCode::kOk, 5000);
  Operation& del = b.Op(type, "w-0", "r", at_ms, at_ms + 10, "c1");
  del.version = 1000;
  del.committed = Ms(at_ms + 5);
  del.timestamp = cluster::TimestampFromMicros(to_us);
  if (type == OpType::kDeleteCells) {
    del.set_delete_start(cluster::TimestampFromMicros(from_us));
  }
  b.Cluster("c1");
  return b.history();
}

TEST(LostWritesTest, ADeleteCommittedAfterAWriteRemovesItByDesign) {
  const auto lost = [](const History& h) {
    return RunCheck(h, "lost_writes").value;
  };
  EXPECT_EQ(lost(DeletedWrite(OpType::kDeleteRow, 20)), 0);
  EXPECT_EQ(lost(DeletedWrite(OpType::kDeleteFamily, 20)), 0);
  EXPECT_EQ(lost(DeletedWrite(OpType::kDeleteCells, 20, 4000, 6000)), 0);
  // The range misses the write's timestamp (5 ms): the write is lost.
  EXPECT_EQ(lost(DeletedWrite(OpType::kDeleteCells, 20, 6000, 9000)), 1);
  EXPECT_EQ(lost(DeletedWrite(OpType::kDeleteCells, 20, 0, 4000)), 1);
  // A delete that never committed removes nothing.
  History never = DeletedWrite(OpType::kDeleteRow, 20);
  never.operations[1].version = 0;
  EXPECT_EQ(lost(never), 1);
}

// Write "old" (timestamp 5 ms) and a newer version (6 ms), that one
// deleted (kDeleteCells over [6, 7) ms) at 40 ms; the final state has
// neither. "old" is written at 0 ms, "new" at 20 ms.
History SurplusWrite(std::optional<int64_t> max_versions) {
  Builder b;
  b.Write("w-0", "r", "w-0/old", 0, 10, "c1", StatusCode::kOk, 5000);
  b.Write("w-0", "r", "w-0/new", 20, 30, "c1", StatusCode::kOk, 6000);
  Operation& del = b.Op(OpType::kDeleteCells, "w-0", "r", 40, 50, "c1");
  del.version = 1000;
  del.committed = Ms(45);
  del.timestamp = cluster::TimestampFromMicros(7000);
  del.set_delete_start(cluster::TimestampFromMicros(6000));
  b.Cluster("c1");
  if (max_versions) {
    b.history().gc_rules = {
        {Duration(0), "t", cluster::GcRule::MaxVersions(*max_versions)}};
  }
  return b.history();
}

TEST(LostWritesTest, VersionsAVersionLimitMadeSurplusAreNotLost) {
  const auto lost = [](const History& h) {
    return RunCheck(h, "lost_writes").value;
  };
  // One version kept: "old" was surplus once "new" committed (20 ms), and
  // GC removes a surplus version for good.
  EXPECT_EQ(lost(SurplusWrite(1)), 0);
  // Without a limit, or within it, "old" should have stayed.
  EXPECT_EQ(lost(SurplusWrite(std::nullopt)), 1);
  EXPECT_EQ(lost(SurplusWrite(2)), 1);
}

TEST(LostWritesTest, AStricterVersionLimitCollectsWhenItIsSet) {
  // Three versions kept while three are written; then one kept (at 50 ms,
  // with no write after it): the two older ones are surplus from then on,
  // and stay removed when the newest is deleted at 80 ms.
  Builder b;
  b.Write("w-0", "r", "w-0/1", 0, 10, "c1", StatusCode::kOk, 1000);
  b.Write("w-0", "r", "w-0/2", 10, 20, "c1", StatusCode::kOk, 2000);
  b.Write("w-0", "r", "w-0/3", 20, 30, "c1", StatusCode::kOk, 3000);
  Operation& del = b.Op(OpType::kDeleteCells, "w-0", "r", 80, 90, "c1");
  del.version = 1000;
  del.committed = Ms(85);
  del.timestamp = cluster::TimestampFromMicros(4000);
  del.set_delete_start(cluster::TimestampFromMicros(3000));
  b.Cluster("c1");
  b.history().gc_rules = {{Duration(0), "t", cluster::GcRule::MaxVersions(3)},
                          {Ms(50), "t", cluster::GcRule::MaxVersions(1)}};
  EXPECT_EQ(RunCheck(b.history(), "lost_writes").value, 0);
  // Without the stricter limit, both are lost.
  b.history().gc_rules.pop_back();
  EXPECT_EQ(RunCheck(b.history(), "lost_writes").value, 2);
}

TEST(LostWritesTest, CellsAnAgeRuleMayHaveRemovedAreNotLost) {
  using std::chrono::seconds;
  const auto lost = [](const History& h) {
    return RunCheck(h, "lost_writes").value;
  };
  const cluster::GcRule age = cluster::GcRule::MaxAge(seconds(1));
  EXPECT_EQ(lost(ExpiringWrite({}, 20'000)), 1);
  EXPECT_EQ(lost(ExpiringWrite({{Ms(0), "t", age}}, 20'000)), 0);
  EXPECT_EQ(lost(ExpiringWrite({{Ms(0), "t", age}}, 900)), 1);  // too young
  EXPECT_EQ(lost(ExpiringWrite({{Ms(0), "other", age}}, 20'000)), 1);
  // max_num_versions keeps the newest cell: so does an intersection with it.
  EXPECT_EQ(lost(ExpiringWrite({{Ms(0), "t",
                                 cluster::GcRule::Intersection(
                                     {cluster::GcRule::MaxVersions(1), age})}},
                               20'000)),
            1);
  EXPECT_EQ(
      lost(ExpiringWrite(
          {{Ms(0), "t",
            cluster::GcRule::Union({cluster::GcRule::MaxVersions(1), age})}},
          20'000)),
      0);
  // The rule applies from when it was set: a cell may go from then on.
  const std::vector<GcRuleChange> later = {
      {Ms(0), "t", cluster::GcRule::None()}, {Ms(5'000), "t", age}};
  EXPECT_EQ(lost(ExpiringWrite(later, 20'000)), 0);
  EXPECT_EQ(lost(ExpiringWrite(later, 4'000)), 1);
  // Nor when the rule was lifted before the cell was old enough.
  EXPECT_EQ(lost(ExpiringWrite(
                {{Ms(0), "t", age}, {Ms(500), "t", cluster::GcRule::None()}},
                20'000)),
            1);
}

TEST(RpoTest, CountsRecordedAcknowledgedWritesOnce) {
  Builder b;
  b.Write("w-0", "r", "w-0/1", 0, 10);                                   // 0
  b.Write("w-0", "r", "w-0/2", 20, 30, "c1", StatusCode::kUnavailable);  // 1
  b.Write("w-1", "q", "w-1/1", 20, 30);                                  // 2
  b.Cluster("c1");
  b.AddEvent(EventKind::kClusterDown, 40, "c1").unreplicated_ops =
      std::vector<uint64_t>{0, 1, 2, 99};
  b.AddEvent(EventKind::kClusterDown, 80, "c1").unreplicated_ops =
      std::vector<uint64_t>{0};
  const CheckValue check = RunCheck(b.history(), "rpo_writes");
  EXPECT_EQ(check.value, 2);
  EXPECT_THAT(check.detail, HasSubstr("cluster_down c1 at 0.04s: 2"));
  EXPECT_FALSE(Eval(b.history(), "metric: RPO_WRITES at_most: 1").pass);
  EXPECT_TRUE(Eval(b.history(), "metric: RPO_WRITES at_most: 2").pass);
  EXPECT_EQ(
      Eval(b.history(), "metric: RPO_WRITES client: 'w-1' at_most: 0").value,
      1);
}

TEST(RpoTest, NoFaultNoLoss) {
  Builder b;
  b.Write("w-0", "r", "w-0/1", 0, 10);
  b.Cluster("c1");
  EXPECT_EQ(RunCheck(b.history(), "rpo_writes").value, 0);
  EXPECT_TRUE(Eval(b.history(), "metric: RPO_WRITES at_most: 0").pass);
}

TEST(RpoTest, UnrecordedFallsBackToFinalStateLowerBound) {
  Builder b;
  const uint64_t replicated = b.Write("w-0", "r", "w-0/1", 0, 10).id;
  b.Write("w-0", "q", "w-0/2", 0, 10);   // only on c1
  b.Write("w-0", "s", "w-0/3", 50, 60);  // after the fault
  ClusterState& c1 = b.Cluster("c1");
  ClusterState& c2 = b.Cluster("c2");
  b.Has(c1, replicated);
  b.Has(c2, replicated);
  b.AddEvent(EventKind::kClusterDown, 40, "c1");
  const CheckValue check = RunCheck(b.history(), "rpo_writes");
  EXPECT_EQ(check.value, 1);
  EXPECT_THAT(check.detail, HasSubstr("approximate"));
}

TEST(LostUpdatesTest, IncrementsMinusFinalCounter) {
  Builder b;
  b.Increment("a-0", "n", 1, 0, 10, "c1");
  b.Increment("b-0", "n", 1, 0, 10, "c2");  // concurrent on another cluster
  b.Increment("a-0", "n", 2, 20, 30, "c1");
  b.Op(OpType::kReadModifyWrite, "a-0", "n", 40, 50, "c1",
       StatusCode::kUnavailable);  // not acknowledged
  b.Increment("a-0", "m", 1, 0, 10, "c1");
  ClusterState& c1 = b.Cluster("c1");
  ClusterState& c2 = b.Cluster("c2");
  b.Row(c1, "t", "n").counter = 2;
  b.Row(c2, "t", "n").counter = 1;
  b.Row(c1, "t", "m").counter = 1;
  b.Row(c2, "t", "m").counter = 1;
  const CheckValue check = RunCheck(b.history(), "lost_updates");
  EXPECT_EQ(check.value, 1);
  EXPECT_THAT(check.detail, HasSubstr("worst row: t/n, 3 acknowledged"));
  EXPECT_FALSE(Eval(b.history(), "metric: LOST_UPDATES at_most: 0").pass);
  // A row's loss counts against a selection up to its increments there.
  EXPECT_EQ(
      Eval(b.history(), "metric: LOST_UPDATES client: 'b' at_most: 0").value,
      1);
  EXPECT_EQ(Eval(b.history(),
                 "metric: LOST_UPDATES window_start { nanos: 1000000 } "
                 "at_most: 0")
                .value,
            1);
  EXPECT_EQ(Eval(b.history(),
                 "metric: LOST_UPDATES window_start { nanos: 50000000 } "
                 "at_most: 0")
                .value,
            0);
}

TEST(LostUpdatesTest, DroppedIncrementsAreNotCounted) {
  Builder b;
  b.Increment("a-0", "n", 1, 0, 10);
  b.Increment("a-0", "n", 2, 20, 30);
  Event& drop = b.AddEvent(EventKind::kDropRowRange, 40, "c1");
  drop.table = "t";
  b.Increment("a-0", "n", 1, 50, 60);
  b.Row(b.Cluster("c1"), "t", "n").counter = 1;
  EXPECT_EQ(RunCheck(b.history(), "lost_updates").value, 0);
  EXPECT_TRUE(Eval(b.history(), "metric: LOST_UPDATES at_most: 0").pass);
}

TEST(LostUpdatesTest, IncrementsBeforeTheCounterMayHaveExpiredAreNotCounted) {
  // Two increments 5 s apart under a 1 s age rule: the first one's cell
  // may have been collected before the second (the counter restarts), so
  // a final counter of 1 loses nothing; 0 loses the second.
  const auto lost = [](int64_t final_counter, std::vector<GcRuleChange> rules,
                       int64_t ended_ms) {
    Builder b;
    // Committed at 5 ms and 5,005 ms.
    b.Increment("a-0", "n", 1, 0, 10).version =
        cluster::MakeVersion(cluster::TimestampOf(kRunEpoch + Ms(5)), 1);
    b.Increment("a-0", "n", 2, 5000, 5010).version =
        cluster::MakeVersion(cluster::TimestampOf(kRunEpoch + Ms(5005)), 1);
    b.Row(b.Cluster("c1"), "t", "n").counter = final_counter;
    b.history().gc_rules = std::move(rules);
    b.history().ended = Ms(ended_ms);
    return RunCheck(b.history(), "lost_updates").value;
  };
  const std::vector<GcRuleChange> age = {
      {Duration(0), "t", cluster::GcRule::MaxAge(std::chrono::seconds(1))}};
  EXPECT_EQ(lost(1, {}, 5500), 1);  // no rule: one of two lost
  EXPECT_EQ(lost(1, age, 5500), 0);
  EXPECT_EQ(lost(0, age, 5500), 1);
  // By the end (7 s) the second one's cell may be gone too.
  EXPECT_EQ(lost(0, age, 7000), 0);
}

TEST(TokenTest, ViolationsAndWaitSeconds) {
  Builder b;
  Event& first = b.AddEvent(EventKind::kTokenWait, 1000, "");
  first.end = Ms(3000);
  first.violations = 2;
  Event& second = b.AddEvent(EventKind::kTokenWait, 5000, "");
  second.end = Ms(5500);
  second.violations = 1;
  EXPECT_EQ(RunCheck(b.history(), "token_violations").value, 3);
  EXPECT_FALSE(Eval(b.history(), "metric: TOKEN_VIOLATIONS at_most: 0").pass);
  EXPECT_EQ(Eval(b.history(),
                 "metric: TOKEN_VIOLATIONS window_start { seconds: 4 } "
                 "at_most: 0")
                .value,
            1);
  ExpectationResult wait =
      Eval(b.history(), "metric: TOKEN_WAIT_SECONDS at_most: 2");
  EXPECT_EQ(wait.value, 2);
  EXPECT_TRUE(wait.pass);
  EXPECT_FALSE(
      Eval(b.history(), "metric: TOKEN_WAIT_SECONDS at_most: 1.5").pass);
}

TEST(TokenTest, WaitThatNeverEndsIsInfinite) {
  Builder b;
  b.AddEvent(EventKind::kTokenWait, 1000, "");  // end -1
  ExpectationResult wait =
      Eval(b.history(), "metric: TOKEN_WAIT_SECONDS at_most: 1000000");
  EXPECT_TRUE(std::isinf(wait.value));
  EXPECT_FALSE(wait.pass);
  EXPECT_THAT(wait.detail, HasSubstr("never"));
  ExpectationResult none =
      Eval(History{}, "metric: TOKEN_WAIT_SECONDS at_most: 0");
  EXPECT_TRUE(none.pass);
  EXPECT_EQ(none.value, 0);
}

TEST(RtoTest, OutageFromFaultToFirstSuccessAfterErrors) {
  Builder b;
  b.AddEvent(EventKind::kClusterDown, 10'000, "c1");
  b.Read("a-0", "r", "", 9'000, 9'010);
  b.Op(OpType::kReadRow, "a-0", "r", 9'990, 10'100, "c1",
       StatusCode::kUnavailable);  // in flight at the fault
  b.Op(OpType::kReadRow, "a-0", "r", 10'200, 10'500, "",
       StatusCode::kDeadlineExceeded);
  b.Read("a-0", "r", "", 11'000, 11'200, "c2");  // recovered: 1.2 s
  b.Read("b-0", "r", "", 10'500, 10'510, "c2");  // never failed
  const CheckValue check = RunCheck(b.history(), "rto_seconds");
  EXPECT_DOUBLE_EQ(check.value, 1.2);
  EXPECT_THAT(check.detail, HasSubstr("a-0 after cluster_down c1 at 10s"));
  EXPECT_THAT(check.detail,
              HasSubstr("errors during outages: DEADLINE_EXCEEDED 1, "
                        "UNAVAILABLE 1"));
  EXPECT_FALSE(Eval(b.history(), "metric: RTO_SECONDS at_most: 1").pass);
  EXPECT_TRUE(Eval(b.history(), "metric: RTO_SECONDS at_most: 1.5").pass);
  EXPECT_EQ(
      Eval(b.history(), "metric: RTO_SECONDS client: 'b' at_most: 1").value, 0);
  EXPECT_EQ(
      Eval(b.history(), "metric: RTO_SECONDS cluster: 'c2' at_most: 1").value,
      0);
  EXPECT_EQ(Eval(b.history(),
                 "metric: RTO_SECONDS window_start { seconds: 11 } "
                 "at_most: 1")
                .value,
            0);
}

TEST(RtoTest, AClientsOperationsThroughSeveralProfilesMakeOneOutage) {
  // Operations are grouped by client name, whatever source (client,
  // profile, table) they came through: a failure through one profile and
  // the recovery through another make one outage.
  Builder b;
  b.AddEvent(EventKind::kClusterDown, 10'000, "c1");
  b.SetProfile(b.Op(OpType::kReadRow, "a-0", "r", 10'100, 10'200, "",
                    StatusCode::kUnavailable),
               "other");
  b.Read("a-0", "r", "", 10'300, 12'000, "c2");  // the default profile
  const std::vector<checks_internal::Outage> outages =
      checks_internal::FindOutages(b.history(), checks_internal::Filter{});
  ASSERT_EQ(outages.size(), 1u);
  EXPECT_EQ(outages[0].client, "a-0");
  EXPECT_EQ(outages[0].length, Ms(2'000));
  EXPECT_FALSE(outages[0].never);
  EXPECT_THAT(outages[0].failed, ElementsAre(0u));
  EXPECT_DOUBLE_EQ(RunCheck(b.history(), "rto_seconds").value, 2);
}

TEST(RtoTest, NoRecoveryIsInfiniteAndProfileEditsAreNotFaults) {
  Builder b;
  b.AddEvent(EventKind::kUpdateAppProfile, 1'000, "");
  b.Op(OpType::kWrite, "a-0", "r", 1'100, 1'200, "", StatusCode::kUnavailable);
  b.Read("a-0", "r", "", 1'300, 1'400);
  EXPECT_EQ(RunCheck(b.history(), "rto_seconds").value, 0);
  b.AddEvent(EventKind::kPartition, 2'000, "c1", "c2");
  b.Op(OpType::kWrite, "a-0", "r", 2'100, 2'200, "", StatusCode::kUnavailable);
  const CheckValue check = RunCheck(b.history(), "rto_seconds");
  EXPECT_TRUE(std::isinf(check.value));
  EXPECT_THAT(check.detail, HasSubstr("never"));
  EXPECT_FALSE(Eval(b.history(), "metric: RTO_SECONDS at_most: 1e9").pass);
}

TEST(FailbackTest, TimeFromRepairToFirstSuccessOnHome) {
  Builder b;
  b.AddEvent(EventKind::kClusterDown, 10'000, "c1");
  b.AddEvent(EventKind::kClusterUp, 20'000, "c1");
  // a-0 (multi-cluster): c1, then c2 during the fault, back on c1.
  b.Read("a-0", "r", "", 9'000, 9'010, "c1");
  b.Read("b-0", "r", "", 9'000, 9'010, "c2");  // home c2: never left
  b.Read("s-0", "r", "", 9'000, 9'010, "c1");  // single-cluster
  b.Read("n-0", "r", "", 9'000, 9'010, "c1");  // idle during the fault
  b.Read("a-0", "r", "", 10'100, 10'200, "c2");
  b.Op(OpType::kReadRow, "s-0", "r", 10'100, 10'200, "c1",
       StatusCode::kUnavailable);
  b.Read("b-0", "r", "", 15'000, 15'010, "c2");
  b.Read("a-0", "r", "", 20'000, 20'100, "c2");  // invoked at the repair
  b.Read("s-0", "r", "", 20'100, 20'300, "c1");  // back: 0.3 s
  b.Read("a-0", "r", "", 20'200, 20'500, "c1");  // back: 0.5 s
  b.Read("n-0", "r", "", 25'000, 25'010, "c1");
  const std::vector<Failback> failbacks = ComputeFailbacks(b.history());
  ASSERT_EQ(failbacks.size(), 2u);
  EXPECT_EQ(failbacks[0].client, "a-0");
  EXPECT_EQ(failbacks[0].event, 0u);
  EXPECT_EQ(failbacks[0].home, "c1");
  EXPECT_EQ(failbacks[0].repaired, Ms(20'000));
  EXPECT_FALSE(failbacks[0].never);
  EXPECT_EQ(failbacks[0].length, Ms(500));
  EXPECT_EQ(failbacks[1].client, "s-0");
  EXPECT_EQ(failbacks[1].length, Ms(300));
  ExpectationResult result =
      Eval(b.history(), "metric: FAILBACK_SECONDS at_most: 1");
  EXPECT_EQ(result.metric, "FAILBACK_SECONDS");
  EXPECT_DOUBLE_EQ(result.value, 0.5);
  EXPECT_TRUE(result.pass);
  EXPECT_THAT(result.detail,
              HasSubstr("a-0 after cluster_down c1 at 10s: back on c1 0.5s "
                        "after the repair at 20s; 2 fail-backs (0 never)"));
  EXPECT_FALSE(Eval(b.history(), "metric: FAILBACK_SECONDS at_most: 0.4").pass);
  // Filters as for RTO_SECONDS.
  EXPECT_DOUBLE_EQ(
      Eval(b.history(), "metric: FAILBACK_SECONDS client: 's' at_most: 1")
          .value,
      0.3);
  ExpectationResult b_only =
      Eval(b.history(), "metric: FAILBACK_SECONDS client: 'b-0' at_most: 0");
  EXPECT_EQ(b_only.value, 0);
  EXPECT_FALSE(b_only.pass);  // no samples
  EXPECT_EQ(b_only.detail,
            "no samples: no client was moved off its home cluster by a fault");
  EXPECT_EQ(
      Eval(b.history(), "metric: FAILBACK_SECONDS cluster: 'c2' at_most: 0")
          .value,
      0);
  EXPECT_EQ(Eval(b.history(),
                 "metric: FAILBACK_SECONDS window_start { seconds: 11 } "
                 "at_most: 0")
                .value,
            0);
}

TEST(FailbackTest, NeverReturningIsInfinite) {
  Builder b;
  b.AddEvent(EventKind::kClusterDown, 10'000, "c1");
  b.AddEvent(EventKind::kClusterUp, 20'000, "c1");
  b.Read("a-0", "r", "", 9'000, 9'010, "c1");
  b.Read("a-0", "r", "", 10'100, 10'200, "c2");
  b.Read("a-0", "r", "", 21'000, 21'100, "c2");  // still on c2
  const std::vector<Failback> failbacks = ComputeFailbacks(b.history());
  ASSERT_EQ(failbacks.size(), 1u);
  EXPECT_TRUE(failbacks[0].never);
  EXPECT_EQ(failbacks[0].repaired, Ms(20'000));
  ExpectationResult result =
      Eval(b.history(), "metric: FAILBACK_SECONDS at_most: 1e9");
  EXPECT_TRUE(std::isinf(result.value));
  EXPECT_FALSE(result.pass);
  EXPECT_THAT(result.detail, HasSubstr("never"));
  EXPECT_THAT(result.detail, HasSubstr("1 fail-backs (1 never)"));
}

TEST(FailbackTest, ClientThatNeverLeftHasNoSample) {
  Builder b;
  b.AddEvent(EventKind::kClusterDown, 10'000, "c2");
  b.AddEvent(EventKind::kClusterUp, 20'000, "c2");
  b.Read("a-0", "r", "", 9'000, 9'010, "c1");
  b.Read("a-0", "r", "", 15'000, 15'010, "c1");
  b.Read("a-0", "r", "", 25'000, 25'010, "c1");
  b.Read("late-0", "r", "", 12'000, 12'010, "c2");  // no home before
  EXPECT_TRUE(ComputeFailbacks(b.history()).empty());
  ExpectationResult result =
      Eval(b.history(), "metric: FAILBACK_SECONDS at_most: 0");
  EXPECT_EQ(result.value, 0);
  EXPECT_FALSE(result.pass);
  EXPECT_THAT(result.detail, HasSubstr("no samples: "));
}

TEST(FailbackTest, UnrelatedFaultWhileAwayIsNotAMove) {
  Builder b;
  b.AddEvent(EventKind::kClusterDown, 10'000, "c1");
  b.AddEvent(EventKind::kPartition, 15'000, "c3", "c4");
  b.AddEvent(EventKind::kClusterUp, 20'000, "c1");
  b.AddEvent(EventKind::kHeal, 25'000, "c4", "c3");
  b.Read("a-0", "r", "", 9'000, 9'010, "c1");
  b.Read("a-0", "r", "", 11'000, 11'010, "c2");
  b.Read("a-0", "r", "", 16'000, 16'010, "c2");
  b.Read("a-0", "r", "", 20'000, 20'500, "c1");
  b.Read("a-0", "r", "", 26'000, 26'010, "c1");
  const std::vector<Failback> failbacks = ComputeFailbacks(b.history());
  ASSERT_EQ(failbacks.size(), 1u);
  EXPECT_EQ(failbacks[0].event, 0u);
  EXPECT_EQ(failbacks[0].length, Ms(500));
}

TEST(FailbackTest, HealRepairsThePartitionInEitherOrder) {
  Builder b;
  b.AddEvent(EventKind::kPartition, 10'000, "c1", "c2");
  b.AddEvent(EventKind::kHeal, 15'000, "c1", "c3");  // another pair
  b.AddEvent(EventKind::kHeal, 20'000, "c2", "c1");
  b.AddEvent(EventKind::kPartition, 30'000, "c2", "c1");
  b.AddEvent(EventKind::kHeal, 40'000, "c1", "c2");
  b.AddEvent(EventKind::kNodeFailure, 50'000, "c1");
  b.AddEvent(EventKind::kNodeRecovery, 55'000, "c2");  // another cluster
  b.AddEvent(EventKind::kNodeRecovery, 60'000, "c1");
  b.Read("a-0", "r", "", 9'000, 9'010, "c1");
  b.Read("a-0", "r", "", 11'000, 11'010, "c2");
  b.Read("a-0", "r", "", 20'000, 20'100, "c1");  // 0.1 s
  b.Read("a-0", "r", "", 31'000, 31'010, "c2");
  b.Read("a-0", "r", "", 40'000, 40'200, "c1");  // 0.2 s
  b.Read("a-0", "r", "", 51'000, 51'010, "c3");
  b.Read("a-0", "r", "", 60'000, 60'300, "c1");  // 0.3 s
  const std::vector<Failback> failbacks = ComputeFailbacks(b.history());
  ASSERT_EQ(failbacks.size(), 3u);
  EXPECT_EQ(failbacks[0].event, 0u);
  EXPECT_EQ(failbacks[0].repaired, Ms(20'000));
  EXPECT_EQ(failbacks[0].length, Ms(100));
  EXPECT_EQ(failbacks[1].event, 3u);
  EXPECT_EQ(failbacks[1].repaired, Ms(40'000));
  EXPECT_EQ(failbacks[1].length, Ms(200));
  EXPECT_EQ(failbacks[2].event, 5u);
  EXPECT_EQ(failbacks[2].repaired, Ms(60'000));
  EXPECT_EQ(failbacks[2].length, Ms(300));
  EXPECT_DOUBLE_EQ(
      Eval(b.history(), "metric: FAILBACK_SECONDS at_most: 1").value, 0.3);
}

TEST(FailbackTest, SettleRepairsWhatWasNotRepairedEarlier) {
  Builder b;
  b.AddEvent(EventKind::kClusterDown, 10'000, "c1");
  b.AddEvent(EventKind::kRemoveCluster, 12'000, "c3");  // never repaired
  b.AddEvent(EventKind::kSettle, 30'000, "");
  b.Read("a-0", "r", "", 9'000, 9'010, "c1");
  b.Read("i-0", "r", "", 9'000, 9'010, "c1");  // idle after the settle
  b.Read("r-0", "r", "", 9'000, 9'010, "c3");
  b.Read("a-0", "r", "", 11'000, 11'010, "c2");
  b.Read("i-0", "r", "", 11'000, 11'010, "c2");
  b.Read("r-0", "r", "", 13'000, 13'010, "c2");
  b.Read("a-0", "r", "", 30'000, 30'200, "c1");  // 0.2 s
  const std::vector<Failback> failbacks = ComputeFailbacks(b.history());
  // r-0's home c3 is not concerned by c1's fault; c3's removal does not
  // concern a-0's and i-0's home at the time (c2).
  std::vector<std::string> seen;
  for (const Failback& f : failbacks) {
    seen.push_back(std::to_string(f.event) + " " + f.client);
  }
  ASSERT_THAT(seen, ElementsAre("0 a-0", "0 i-0", "1 r-0"));
  EXPECT_EQ(failbacks[0].repaired, Ms(30'000));
  EXPECT_EQ(failbacks[0].length, Ms(200));
  EXPECT_TRUE(failbacks[1].unobserved);  // nothing after the settle
  EXPECT_FALSE(failbacks[1].never);
  EXPECT_EQ(failbacks[2].repaired, Duration(-1));  // removed: never repaired
  EXPECT_EQ(failbacks[2].home, "c3");
  ExpectationResult result =
      Eval(b.history(), "metric: FAILBACK_SECONDS at_most: 1");
  EXPECT_DOUBLE_EQ(result.value, 0.2);
  EXPECT_TRUE(result.pass);
  EXPECT_THAT(result.detail, HasSubstr("1 moved clients of faults never "
                                       "repaired; 1 moved clients idle"));
}

TEST(FailoversTest, CountsWithFilters) {
  Builder b;
  b.history().failovers = {{Ms(10), "multi", "c1", "c2"},
                           {Ms(20), "multi", "c1", "c3"},
                           {Ms(30), "other", "c2", "c3"}};
  b.SetProfile(b.Read("a-0", "r", "", 0, 1), "multi");
  const CheckValue check = RunCheck(b.history(), "failovers");
  EXPECT_EQ(check.value, 3);
  EXPECT_EQ(check.detail, "c1->c2 1, c1->c3 1, c2->c3 1");
  EXPECT_EQ(Eval(b.history(),
                 "metric: FAILOVERS app_profile: 'multi' "
                 "at_most: 0")
                .value,
            2);
  EXPECT_EQ(
      Eval(b.history(), "metric: FAILOVERS cluster: 'c3' at_most: 0").value, 2);
  EXPECT_EQ(Eval(b.history(), "metric: FAILOVERS client: 'a' at_most: 0").value,
            2);
  EXPECT_EQ(Eval(b.history(),
                 "metric: FAILOVERS window_end { nanos: "
                 "15000000 } at_most: 0")
                .value,
            1);
  EXPECT_TRUE(Eval(b.history(), "metric: FAILOVERS at_least: 3").pass);
  EXPECT_FALSE(Eval(b.history(), "metric: FAILOVERS at_most: 2").pass);
}

TEST(CountsTest, ErrorsAndSuccesses) {
  Builder b;
  b.Read("a-0", "r", "", 0, 1);
  b.Write("a-1", "r", "a-1/1", 0, 1);
  b.Op(OpType::kScan, "b-0", "", 5, 6, "c2", StatusCode::kUnavailable);
  b.Op(OpType::kReadRow, "b-0", "", 5, 6, "c2", StatusCode::kDeadlineExceeded);
  CheckValue errors = RunCheck(b.history(), "errors");
  EXPECT_EQ(errors.value, 2);
  EXPECT_EQ(errors.detail, "DEADLINE_EXCEEDED 1, UNAVAILABLE 1");
  CheckValue successes = RunCheck(b.history(), "successes");
  EXPECT_EQ(successes.value, 2);
  EXPECT_EQ(successes.detail, "read_row 1, write 1");
  EXPECT_TRUE(Eval(b.history(), "metric: ERRORS client: 'a' at_most: 0").pass);
  EXPECT_FALSE(Eval(b.history(), "metric: ERRORS at_most: 1").pass);
  EXPECT_TRUE(
      Eval(b.history(), "metric: SUCCESSES client: 'a' at_least: 2").pass);
  EXPECT_FALSE(
      Eval(b.history(), "metric: SUCCESSES cluster: 'c2' at_least: 1").pass);
}

TEST(CountsTest, ErrorRateIsTheFractionThatFailed) {
  Builder b;
  b.Read("a-0", "r", "", 0, 1);
  b.Write("a-1", "r", "a-1/1", 0, 1);
  b.Write("a-1", "r", "a-1/2", 2, 3);
  b.Op(OpType::kReadRow, "b-0", "", 5, 6, "c2", StatusCode::kDeadlineExceeded);
  ExpectationResult all = Eval(b.history(), "metric: ERROR_RATE at_most: 0.2");
  EXPECT_DOUBLE_EQ(all.value, 0.25);
  EXPECT_FALSE(all.pass);
  EXPECT_EQ(all.detail, "1 of 4 operations failed");
  EXPECT_EQ(
      Eval(b.history(), "metric: ERROR_RATE client: 'a' at_most: 0").value, 0);
  ExpectationResult none =
      Eval(b.history(), "metric: ERROR_RATE client: 'c' at_most: 0");
  EXPECT_TRUE(none.pass);
  EXPECT_EQ(none.detail, "no operations");
}

TEST(LatencyTest, NearestRankPercentileOfSuccesses) {
  Builder b;
  for (int i = 1; i <= 100; ++i) b.Read("a-0", "r", "", 1000 * i, 1000 * i + i);
  b.Op(OpType::kReadRow, "a-0", "r", 0, 999'999, "c1",
       StatusCode::kUnavailable);
  ExpectationResult p99 =
      Eval(b.history(), "metric: LATENCY_SECONDS at_most: 0.099");
  EXPECT_DOUBLE_EQ(p99.value, 0.099);
  EXPECT_TRUE(p99.pass);
  EXPECT_EQ(p99.bound, "<= 0.099");
  EXPECT_EQ(p99.detail, "p99 of 100 operations");
  EXPECT_FALSE(Eval(b.history(),
                    "metric: LATENCY_SECONDS percentile: 100 at_most: 0.099")
                   .pass);
  EXPECT_DOUBLE_EQ(
      Eval(b.history(), "metric: LATENCY_SECONDS percentile: 50 at_most: 1")
          .value,
      0.05);
  ExpectationResult none = Eval(
      b.history(), "metric: LATENCY_SECONDS client: 'nobody' at_least: 0.1");
  EXPECT_EQ(none.detail, "no samples");
  EXPECT_FALSE(none.pass);
}

TEST(CatchUpTest, LongestHealOrClusterUp) {
  Builder b;
  b.AddEvent(EventKind::kHeal, 1000, "c1", "c2").end = Ms(1500);
  b.AddEvent(EventKind::kClusterUp, 2000, "c3").end = Ms(4000);
  b.AddEvent(EventKind::kPartition, 0, "c1", "c2").end = Ms(9000);  // ignored
  EXPECT_EQ(Eval(b.history(), "metric: CATCH_UP_SECONDS at_most: 2").value, 2);
  EXPECT_FALSE(Eval(b.history(), "metric: CATCH_UP_SECONDS at_most: 1").pass);
  EXPECT_TRUE(
      Eval(b.history(), "metric: CATCH_UP_SECONDS cluster: 'c2' at_most: 1")
          .pass);
  b.AddEvent(EventKind::kClusterUp, 5000, "c1");  // never caught up
  ExpectationResult never =
      Eval(b.history(), "metric: CATCH_UP_SECONDS at_most: 100");
  EXPECT_FALSE(never.pass);
  EXPECT_THAT(never.detail, HasSubstr("never"));
}

TEST(HottestCpuTest, MaxOverSelectedSamples) {
  Builder b;
  b.history().cpu = {{Ms(1000), "c1", 0.3, 0.5},
                     {Ms(2000), "c2", 0.6, 0.9},
                     {Ms(3000), "c1", 0.4, 0.7}};
  EXPECT_DOUBLE_EQ(
      Eval(b.history(), "metric: HOTTEST_NODE_CPU at_most: 1").value, 0.9);
  EXPECT_FALSE(Eval(b.history(), "metric: HOTTEST_NODE_CPU at_most: 0.8").pass);
  EXPECT_TRUE(
      Eval(b.history(), "metric: HOTTEST_NODE_CPU cluster: 'c1' at_most: 0.8")
          .pass);
  EXPECT_DOUBLE_EQ(Eval(b.history(),
                        "metric: HOTTEST_NODE_CPU cluster: 'c1' window_end { "
                        "seconds: 2 } at_most: 0.8")
                       .value,
                   0.5);
  const ExpectationResult none =
      Eval(b.history(), "metric: HOTTEST_NODE_CPU cluster: 'c9' at_most: 0.8");
  EXPECT_FALSE(none.pass);
  EXPECT_EQ(none.detail, "no samples");
}

// "p99 latency <= 10 ms" when every request failed measured nothing: it
// fails rather than passing on an empty selection.
TEST(NoSamplesTest, LatencyOfOnlyFailedRequestsFails) {
  Builder b;
  b.Op(OpType::kReadRow, "a-0", "r", 1'000, 1'005, "c1",
       StatusCode::kUnavailable);
  b.Op(OpType::kReadRow, "a-0", "r", 2'000, 2'005, "c1",
       StatusCode::kDeadlineExceeded);
  const ExpectationResult p99 =
      Eval(b.history(), "metric: LATENCY_SECONDS at_most: 0.01");
  EXPECT_FALSE(p99.pass);
  EXPECT_EQ(p99.detail, "no samples");
  // A count over the same selection is a measurement: 0 successes.
  const ExpectationResult successes =
      Eval(b.history(), "metric: SUCCESSES at_most: 0");
  EXPECT_TRUE(successes.pass);
  EXPECT_EQ(successes.value, 0);
}

// A write acknowledged at 10 ms on c1; reads of its row on c2 at 10 ms
// (old), 30 ms (new) and on c1 at 12 ms (new).
History VisibilityHistory() {
  Builder b;
  b.Write("w-0", "r", "w-0/1", 0, 10, "c1");
  b.Read("a-0", "r", "", 10, 11, "c2");
  b.Read("a-0", "r", "w-0/1", 30, 31, "c2");
  b.Read("b-0", "r", "w-0/1", 12, 13, "c1");
  return b.history();
}

TEST(TVisibilityTest, MetricUsesTheFirstSelectedReadAfterT) {
  const History history = VisibilityHistory();
  ExpectationResult at_zero =
      Eval(history, "metric: T_VISIBILITY cluster: 'c2' at_least: 0.5");
  EXPECT_EQ(at_zero.value, 0);
  EXPECT_FALSE(at_zero.pass);
  ExpectationResult later =
      Eval(history,
           "metric: T_VISIBILITY cluster: 'c2' after { nanos: 5000000 } "
           "at_least: 0.5");
  EXPECT_EQ(later.value, 1);
  EXPECT_TRUE(later.pass);
  EXPECT_EQ(Eval(history, "metric: T_VISIBILITY client: 'b' at_least: 1").value,
            1);
  ExpectationResult none = Eval(
      history, "metric: T_VISIBILITY after { seconds: 100 } at_least: 0.5");
  EXPECT_EQ(none.detail, "no samples");
  EXPECT_FALSE(none.pass);
}

TEST(TVisibilityTest, CurvesPerClusterPair) {
  ExpectSameInParts(VisibilityHistory(), {});
  const std::vector<VisibilityCurve> curves = TVisibility(VisibilityHistory());
  ASSERT_EQ(curves.size(), 2u);
  EXPECT_EQ(curves[0].write_cluster, "c1");
  EXPECT_EQ(curves[0].read_cluster, "c1");
  EXPECT_EQ(curves[1].read_cluster, "c2");
  ASSERT_EQ(curves[1].t.size(), VisibilityBuckets().size());
  ASSERT_EQ(curves[1].t.size(), 11u);
  // c2: t = 0 -> read at 10 ms (old); 1, 5, 10 ms -> read at 30 ms (new);
  // 50 ms and later: no read.
  EXPECT_EQ(curves[1].probability[0], 0);
  EXPECT_EQ(curves[1].probability[1], 1);
  EXPECT_EQ(curves[1].probability[3], 1);
  EXPECT_EQ(curves[1].probability[4], -1);
  EXPECT_EQ(curves[1].samples[4], 0);
  EXPECT_EQ(curves[0].probability[0], 1);  // c1 read at 12 ms
  EXPECT_EQ(curves[0].probability[2], -1);
}

TEST(EvaluateTest, MissingBoundOrMetricFails) {
  Builder b;
  EXPECT_FALSE(Eval(b.history(), "metric: ERRORS").pass);
  ExpectationResult unknown = Eval(b.history(), "at_most: 1");
  EXPECT_FALSE(unknown.pass);
  EXPECT_EQ(unknown.metric, "METRIC_UNSPECIFIED");
  EXPECT_EQ(unknown.detail, "unknown metric");
}

TEST(EvaluateTest, ResultsInOrderWithNames) {
  google::protobuf::RepeatedPtrField<pb::Expectation> expectations;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "name: 'x' metric: ERRORS at_most: 0", expectations.Add()));
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "name: 'y' metric: SUCCESSES at_least: 1", expectations.Add()));
  const auto results = Evaluate(History{}, expectations);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].name, "x");
  EXPECT_TRUE(results[0].pass);
  EXPECT_EQ(results[1].name, "y");
  EXPECT_FALSE(results[1].pass);
  EXPECT_EQ(results[1].bound, ">= 1");
}

// RunAllChecks shares one analysis; its results are those of the separate
// functions. Clusters hold different row sets (merged by the analysis).
TEST(RunAllChecksTest, SameAsTheSeparateChecks) {
  Builder b;
  for (int i = 0; i < 400; ++i) {
    const std::string row = "r" + std::to_string(i % 13);
    const std::string client = "c-" + std::to_string(i % 3);
    if (i % 3 != 2) {
      b.Write(client, row, client + "/" + std::to_string(i), i, i + 3,
              i % 4 == 0 ? "c1" : "c2");
    } else {
      b.Read(client, row, client + "/" + std::to_string(i - 2), i, i + 1,
             i % 2 == 0 ? "c1" : "c2");
    }
  }
  ClusterState& c1 = b.Cluster("c1");
  for (uint64_t id = 0; id < 200; id += 3) b.Has(c1, id);
  ClusterState& c2 = b.Cluster("c2", "other");
  for (uint64_t id = 100; id < 400; id += 3) b.Has(c2, id);
  b.AddEvent(EventKind::kClusterDown, 100, "c1");
  b.AddEvent(EventKind::kClusterUp, 200, "c1");
  google::protobuf::RepeatedPtrField<pb::Expectation> expectations;
  for (const char* text :
       {"metric: LOST_WRITES at_most: 0",
        "metric: STALENESS_SECONDS at_most: 0 client: 'c-1'",
        "metric: T_VISIBILITY after { nanos: 1000000 } at_least: 1",
        "metric: K_STALENESS at_most: 0"}) {
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
        std::string("name: 'e' ") + text, expectations.Add()));
  }
  const History& h = b.history();
  ExpectSameInParts(h, expectations);
  const AllChecks all = RunAllChecks(h, expectations);
  const std::vector<CheckValue> checks = RunChecks(h);
  ASSERT_EQ(all.checks.size(), checks.size());
  for (size_t i = 0; i < checks.size(); ++i) {
    EXPECT_EQ(all.checks[i].name, checks[i].name);
    EXPECT_EQ(all.checks[i].value, checks[i].value) << checks[i].name;
    EXPECT_EQ(all.checks[i].detail, checks[i].detail);
  }
  EXPECT_GT(Check(all.checks, "lost_writes").value, 0);
  const std::vector<ExpectationResult> results = Evaluate(h, expectations);
  ASSERT_EQ(all.expectations.size(), results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(all.expectations[i].value, results[i].value);
    EXPECT_EQ(all.expectations[i].detail, results[i].detail);
    EXPECT_EQ(all.expectations[i].pass, results[i].pass);
  }
  const std::vector<VisibilityCurve> curves = TVisibility(h);
  ASSERT_EQ(all.visibility.size(), curves.size());
  for (size_t i = 0; i < curves.size(); ++i) {
    EXPECT_EQ(all.visibility[i].samples, curves[i].samples);
    EXPECT_EQ(all.visibility[i].probability, curves[i].probability);
  }
  const KStaleness k = ComputeKStaleness(h);
  EXPECT_EQ(all.k_staleness.reads, k.reads);
  EXPECT_EQ(all.k_staleness.at_most, k.at_most);
  EXPECT_EQ(all.failbacks.size(), ComputeFailbacks(h).size());
}

// Many operations on few rows: finishes quickly only when the checks are
// O(n log n).
TEST(ScaleTest, HundredsOfThousandsOfOperations) {
  Builder b;
  constexpr int kOps = 200'000;
  for (int i = 0; i < kOps; ++i) {
    const std::string row = "r" + std::to_string(i % 7);
    const std::string client = "c-" + std::to_string(i % 3);
    if (i % 2 == 0) {
      b.Write(client, row, client + "/" + std::to_string(i), i, i + 2,
              i % 4 == 0 ? "c1" : "c2");
    } else {
      b.Read(client, row, client + "/" + std::to_string(i - 1), i, i + 1, "c1");
    }
  }
  b.Cluster("c1");
  const std::vector<CheckValue> checks = RunChecks(b.history());
  EXPECT_EQ(Check(checks, "successes").value, kOps);
  EXPECT_FALSE(TVisibility(b.history()).empty());
  EXPECT_EQ(ComputeKStaleness(b.history()).reads, kOps / 2);
  b.AddEvent(EventKind::kClusterDown, 1000, "c1");
  b.AddEvent(EventKind::kClusterUp, 2000, "c1");
  EXPECT_FALSE(ComputeFailbacks(b.history()).empty());
}

}  // namespace
}  // namespace btsim::scenarios
