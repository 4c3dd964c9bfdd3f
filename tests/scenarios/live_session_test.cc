#include "scenarios/live_session.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/virtual_scheduler.h"

namespace btsim::scenarios {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kScenario[] = R"txt(name: "live"
duration { seconds: 30 }
instance {
  clusters { id: "c1" zone: "us-east1-b" }
  clusters { id: "c2" zone: "us-east1-c" }
}
tables { id: "t" families { name: "cf" } families { name: "other" } }
expectations {
  name: "recorded: no error"
  metric: ERRORS
  client: "recorded"
  at_most: 0
}
expectations {
  name: "app-2: no error"
  metric: ERRORS
  client: "app-2"
  at_most: 0
}
)txt";

// A live session on an instance in virtual time; the test plays the server,
// reporting recorded calls to the instance.
class LiveSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded =
        ParseScenario(kScenario, "live.textproto", {}, ScenarioUse::kServe);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    loaded_ = std::move(loaded).value();
    auto created =
        instance::Instance::Create("projects/p/instances/i", scheduler_,
                                   sim::Rng(1), loaded_.instance.config);
    ASSERT_TRUE(created.ok()) << created.status().message();
    instance_ = std::move(created).value();
    auto session = LiveSession::Create(loaded_, *instance_, scheduler_);
    ASSERT_TRUE(session.ok()) << session.status().message();
    session_ = std::move(session).value();
  }

  void Advance(sim::Duration d) { scheduler_.RunUntil(scheduler_.Now() + d); }

  // Commits `mutations` to `row` on c1 and reports the call that did it.
  void Write(const std::string& client, const std::string& row,
             std::vector<cluster::Mutation> mutations,
             const std::string& method = "MutateRow") {
    cluster::Cluster& c1 = *instance_->replicas().Find("c1");
    ASSERT_TRUE(c1.MutateRow("t", row, mutations).ok());
    instance::RowOutcome outcome;
    outcome.key = row;
    outcome.mutations = mutations;
    outcome.version = c1.last_version();
    outcome.log_position = instance_->replicas().LogPosition("c1");
    Report(client, method, {outcome});
  }

  void Report(const std::string& client, const std::string& method,
              std::vector<instance::RowOutcome> rows,
              StatusCode code = StatusCode::kOk,
              sim::Duration latency = milliseconds(2), bool filtered = false,
              bool point_read = false) {
    instance::RequestReport report;
    report.method = method;
    report.cluster = "c1";
    report.app_profile = "default";
    report.code = code;
    report.latency = latency;
    report.recorded = true;
    report.client = client;
    report.table = "t";
    report.filtered = filtered;
    report.point_read = point_read;
    report.rows = rows;
    instance_->ReportRequest(report);
  }

  // A ReadRows of `row` whose reply carried `cells`.
  void Read(const std::string& client, const std::string& row,
            std::vector<cluster::CellView> cells, bool filtered = false) {
    instance::RowOutcome outcome;
    outcome.key = row;
    outcome.cells = cells;
    Report(client, "ReadRows", {outcome}, StatusCode::kOk, milliseconds(1),
           filtered, /*point_read=*/true);
  }

  RunOutcome Finish() {
    session_->EndClientPhase();
    for (int i = 0; i < 100 && !session_->Settled(); ++i) {
      Advance(milliseconds(100));
    }
    return session_->Finish();
  }

  static cluster::Mutation Set(std::string family, std::string column,
                               std::string value) {
    return cluster::SetCell{std::move(family), std::move(column),
                            cluster::kServerTimestamp, std::move(value)};
  }

  sim::VirtualScheduler scheduler_{kRunEpoch};
  LoadedScenario loaded_;
  std::unique_ptr<instance::Instance> instance_;
  std::unique_ptr<LiveSession> session_;
};

TEST_F(LiveSessionTest, RecordsCallsOnlyBetweenStartAndTheEnd) {
  Write("app-1", "early", {Set("cf", "v", "before-start")});
  Advance(seconds(1));
  session_->Start();
  Write("app-1", "r1", {Set("cf", "v", "w1")});
  instance::RequestReport unrecorded;  // e.g. a simulated client's
  unrecorded.method = "MutateRow";
  instance_->ReportRequest(unrecorded);
  Report("app-1", "PingAndWarm", {});  // not an operation of the history
  session_->EndClientPhase();
  Write("app-1", "late", {Set("cf", "v", "after-the-end")});
  RunOutcome out = Finish();
  ASSERT_EQ(out.history.operations.size(), 1u);
  const Operation& op = out.history.operations[0];
  EXPECT_EQ(op.row, "r1");
  EXPECT_EQ(op.type, OpType::kWrite);
  EXPECT_EQ(out.history.names->Text(op.written()), "w1");
  EXPECT_EQ(op.client(), "app-1");
  EXPECT_EQ(op.group(), kRecordedGroup);
  EXPECT_EQ(op.cluster, "c1");
  EXPECT_NE(op.version, 0u);
  EXPECT_TRUE(out.live);
  EXPECT_EQ(out.recorded_ops, 1);
  EXPECT_EQ(out.history.start, kRunEpoch + seconds(1));
}

TEST_F(LiveSessionTest, SortsALongRecordByInvokeKeepingEqualInvokesInOrder) {
  session_->Start();
  Advance(seconds(5));
  // Calls answered 1 ms apart, most within 0 to 2 ms, every seventh after
  // 3 s: invokes repeat (a call of 1 ms after one of 0 ms) and a slow call
  // precedes thousands recorded before it.
  constexpr int kCalls = 40'000;
  struct Call {
    sim::Duration invoke;
    int index;
  };
  std::vector<Call> calls;
  for (int i = 0; i < kCalls; ++i) {
    Advance(milliseconds(1));
    const sim::Duration latency =
        i % 7 == 0 ? milliseconds(3000) : milliseconds(i % 3);
    const std::string key = std::to_string(i);
    instance::RowOutcome row;
    row.key = key;  // a view
    Report("app-1", "MutateRow", {row}, StatusCode::kOk, latency);
    calls.push_back({scheduler_.Now() - kRunEpoch - latency, i});
  }
  std::stable_sort(
      calls.begin(), calls.end(),
      [](const Call& a, const Call& b) { return a.invoke < b.invoke; });
  RunOutcome out = Finish();
  ASSERT_EQ(out.history.operations.size(), static_cast<size_t>(kCalls));
  size_t i = 0;
  for (const Operation& op : out.history.operations) {
    ASSERT_EQ(op.id, i);
    ASSERT_EQ(op.row, std::to_string(calls[i].index)) << "at " << i;
    ASSERT_EQ(op.invoke, calls[i].invoke) << "at " << i;
    ++i;
  }
}

TEST_F(LiveSessionTest, RecordsAnAddAppliedOnceWhenItCommitted) {
  session_->Start();
  Advance(seconds(1));
  const std::vector<cluster::Mutation> add{
      cluster::AddToCell{"cf", "n", cluster::kServerTimestamp,
                         std::string("\0\0\0\0\0\0\0\1", 8)}};
  instance::RowOutcome committed;
  committed.key = "sum";
  committed.mutations = add;
  committed.version = instance_->replicas().Find("c1")->last_version() + 1;
  instance::RowOutcome replay = committed;  // acknowledged, not applied
  replay.version = 0;
  Report("app-1", "MutateRow", {committed});
  Report("app-1", "MutateRow", {replay});
  Report("app-1", "MutateRow", {replay}, StatusCode::kUnavailable);
  RunOutcome out = Finish();
  const OperationLog& ops = out.history.operations;
  ASSERT_EQ(ops.size(), 3u);
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(ops[i].type, OpType::kAddToCell) << i;
    EXPECT_EQ(ops[i].row, "sum");
    EXPECT_EQ(ops[i].applied(), i == 0 ? 1 : 0) << i;
  }
}

TEST_F(LiveSessionTest, MapsEachCallToOperationsInInvokeOrder) {
  session_->Start();
  Advance(seconds(1));
  Write("app-1", "r1", {Set("cf", "v", "w1|padding")});
  Advance(seconds(1));
  Read("app-1", "r1", {{"cf", "v", cluster::Timestamp{}, "w1|padding"}});
  // A filtered read that returned no value cell: not a read of the value.
  Read("app-1", "r1", {{"other", "x", cluster::Timestamp{}, "?"}},
       /*filtered=*/true);
  // A write elsewhere in the row: a write without a tag.
  Write("app-1", "r2", {Set("other", "x", "y")});
  // A delete of the row, after a write it erases.
  Write("app-1", "r2", {Set("cf", "v", "gone"), cluster::DeleteFromRow{}});
  // MutateRows: one operation per entry, each with its own status.
  instance::RowOutcome ok_entry;
  ok_entry.key = "m1";
  instance::RowOutcome failed_entry;
  failed_entry.key = "m2";
  failed_entry.code = StatusCode::kInvalidArgument;
  failed_entry.message = "entries[1].mutations: bad";
  Report("app-2", "MutateRows", {ok_entry, failed_entry});
  // ReadModifyWriteRow of the counter column, and of another column.
  instance::RowOutcome counter;
  counter.key = "c";
  const std::string seven("\0\0\0\0\0\0\0\7", 8);
  std::vector<cluster::CellView> counter_cells{
      {"cf", "n", cluster::Timestamp{}, seven}};
  counter.cells = counter_cells;
  Report("app-1", "ReadModifyWriteRow", {counter});
  instance::RowOutcome append;
  append.key = "a";
  Report("app-1", "ReadModifyWriteRow", {append});
  // A scan; and a call that took long, so it was invoked before all of
  // the above.
  Report("app-1", "ReadRows", {}, StatusCode::kOk, milliseconds(1));
  instance::RowOutcome slow;
  slow.key = "slow";
  Report("app-3", "MutateRow", {slow}, StatusCode::kDeadlineExceeded,
         milliseconds(1500));

  RunOutcome out = Finish();
  const OperationLog& ops = out.history.operations;
  ASSERT_EQ(ops.size(), 11u);
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(ops[i].id, i);
    if (i > 0) {
      EXPECT_LE(ops[i - 1].invoke, ops[i].invoke);
    }
  }
  // The slow call, invoked at 0.5 s, comes first.
  EXPECT_EQ(ops[0].row, "slow");
  EXPECT_EQ(ops[0].code, StatusCode::kDeadlineExceeded);
  EXPECT_EQ(ops[0].invoke, milliseconds(500));
  std::map<std::string, std::vector<const Operation*>> by_row;
  for (const Operation& op : ops) by_row[std::string(op.row)].push_back(&op);
  ASSERT_EQ(by_row["r1"].size(), 3u);
  EXPECT_EQ(by_row["r1"][1]->type, OpType::kReadRow);
  EXPECT_EQ(out.history.names->Text(by_row["r1"][1]->read()),
            "w1");  // the tag: before '|'
  EXPECT_EQ(by_row["r1"][2]->type, OpType::kScan);
  ASSERT_EQ(by_row["r2"].size(), 2u);
  EXPECT_EQ(by_row["r2"][0]->type, OpType::kWrite);
  EXPECT_TRUE(by_row["r2"][0]->written().empty());
  EXPECT_EQ(by_row["r2"][1]->type, OpType::kDeleteRow);
  EXPECT_TRUE(by_row["r2"][1]->written().empty());
  ASSERT_EQ(by_row["m2"].size(), 1u);
  EXPECT_EQ(by_row["m1"][0]->code, StatusCode::kOk);
  EXPECT_EQ(by_row["m2"][0]->code, StatusCode::kInvalidArgument);
  EXPECT_EQ(by_row["m2"][0]->message, "entries[1].mutations: bad");
  EXPECT_EQ(by_row["c"][0]->type, OpType::kReadModifyWrite);
  EXPECT_EQ(by_row["c"][0]->counter(), 7);
  EXPECT_EQ(by_row["a"][0]->type, OpType::kAppend);
  EXPECT_EQ(by_row[""][0]->type, OpType::kScan);

  // Expectations scoped to all recorded clients, and to one.
  ASSERT_EQ(out.expectations.size(), 2u);
  EXPECT_FALSE(out.expectations[0].pass);  // m2 and the slow call
  EXPECT_EQ(out.expectations[0].value, 2);
  EXPECT_FALSE(out.expectations[1].pass);  // app-2's m2
  EXPECT_EQ(out.expectations[1].value, 1);
  EXPECT_FALSE(out.passed);
}

TEST_F(LiveSessionTest, JudgesConsistencyFromTheValuesRecorded) {
  session_->Start();
  Write("app-1", "r1", {Set("cf", "v", "w1")});
  Advance(seconds(1));
  // The client's own acknowledged write is missing from its read.
  Read("app-1", "r1", {});
  RunOutcome out = Finish();
  std::map<std::string, double> checks;
  for (const CheckValue& c : out.checks) checks[c.name] = c.value;
  EXPECT_EQ(checks["read_your_writes_violations"], 1);
  EXPECT_EQ(checks["lost_writes"], 0);  // it is there in the end
  EXPECT_EQ(checks["converged"], 1);
}

TEST_F(LiveSessionTest, AReplayAcknowledgedWithoutACommitIsNoWriteOfItsValue) {
  session_->Start();
  Write("app-1", "r1", {Set("cf", "v", "w1")});
  Advance(seconds(1));
  // The same call again, with its idempotency token: acknowledged, not
  // committed (no version), a second after the original.
  const std::vector<cluster::Mutation> again{Set("cf", "v", "w1")};
  instance::RowOutcome replay;
  replay.key = "r1";
  replay.mutations = again;
  Report("app-1", "MutateRow", {replay});
  RunOutcome out = Finish();
  const OperationLog& ops = out.history.operations;
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(out.history.names->Text(ops[0].written()), "w1");
  EXPECT_EQ(ops[1].type, OpType::kWrite);
  EXPECT_TRUE(ops[1].written().empty());
  std::map<std::string, double> checks;
  for (const CheckValue& c : out.checks) checks[c.name] = c.value;
  EXPECT_EQ(checks["lost_writes"], 0);
}

TEST_F(LiveSessionTest, SettlesOnceEveryClusterHasEverything) {
  session_->Start();
  // The link to c2 is cut before a write can reach it.
  instance_->transport().Partition("us-east1-b", "us-east1-c");
  Write("app-1", "r1", {Set("cf", "v", "w1")});
  Advance(seconds(1));
  session_->EndClientPhase();
  Advance(seconds(1));
  EXPECT_FALSE(session_->Settled());
  instance_->transport().Heal("us-east1-b", "us-east1-c");
  Advance(seconds(3));
  EXPECT_TRUE(session_->Settled());
  RunOutcome out = session_->Finish();
  EXPECT_EQ(out.history.operations.size(), 1u);
  EXPECT_GE(out.history.settled, seconds(3));
}

}  // namespace
}  // namespace btsim::scenarios
