// Helpers shared by the checks tests (checks_test.cc, checks_reads_test.cc):
// Builder, which writes a History by hand, and shortcuts to run one check or
// evaluate one expectation on it (each also checks that the results do not
// depend on splitting the history into parts). Header-only; test code only.
#ifndef BTSIM_TESTS_SCENARIOS_CHECKS_TEST_UTIL_H_
#define BTSIM_TESTS_SCENARIOS_CHECKS_TEST_UTIL_H_

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/checks.h"
#include "scenarios/checks_rows.h"
#include "scenarios/history.h"

namespace btsim::scenarios::checks_test {

namespace pb = btsim::scenario::v1;
using sim::Duration;

inline Duration Ms(int64_t ms) { return std::chrono::milliseconds(ms); }

// Builds a History by hand. Writes get increasing versions and commit half
// way through; every operation targets table "t". References returned stay
// valid until the next operation (or the ninth cluster, or the 65th event)
// is added.
class Builder {
 public:
  Builder() {
    history_.events.reserve(64);
    history_.final_state.reserve(8);
  }
  // A name in the history's pool.
  Name Intern(std::string_view name) { return history_.names->Intern(name); }
  // Sets the table, or the app profile, of `op` (both default to "t" and
  // "default").
  void SetTable(Operation& op, std::string_view table) {
    op.source =
        history_.names->Source(op.client(), op.group(), op.profile(), table);
  }
  void SetProfile(Operation& op, std::string_view profile) {
    op.source =
        history_.names->Source(op.client(), op.group(), profile, op.table());
  }
  Operation& Op(OpType type, const std::string& client, const std::string& row,
                int64_t invoke_ms, int64_t complete_ms,
                const std::string& cluster = "c1",
                StatusCode code = StatusCode::kOk) {
    Operation op;
    op.id = history_.operations.size();
    op.source = history_.names->Source(
        client, client.substr(0, client.find('-')), "default", "t");
    op.row = history_.names->Store(row);
    op.type = type;
    op.invoke = Ms(invoke_ms);
    op.complete = Ms(complete_ms);
    op.code = code;
    op.attempts = 1;
    op.cluster = Intern(cluster);
    history_.operations.push_back(op);
    return history_.operations.back();
  }
  // A write of `tag` with timestamp `ts` (defaults to the invoke time).
  Operation& Write(const std::string& client, const std::string& row,
                   const std::string& tag, int64_t invoke_ms,
                   int64_t complete_ms, const std::string& cluster = "c1",
                   StatusCode code = StatusCode::kOk, int64_t ts = -1) {
    Operation& op =
        Op(OpType::kWrite, client, row, invoke_ms, complete_ms, cluster, code);
    op.set_written(history_.names->MakeTag(tag));
    op.timestamp =
        cluster::TimestampFromMicros(ts >= 0 ? ts : invoke_ms * 1000);
    op.version = ++version_;
    op.committed = Ms((invoke_ms + complete_ms) / 2);
    return op;
  }
  Operation& Read(const std::string& client, const std::string& row,
                  const std::string& tag, int64_t invoke_ms,
                  int64_t complete_ms, const std::string& cluster = "c1") {
    Operation& op =
        Op(OpType::kReadRow, client, row, invoke_ms, complete_ms, cluster);
    op.set_read(history_.names->MakeTag(tag));
    return op;
  }
  Operation& Increment(const std::string& client, const std::string& row,
                       int64_t counter, int64_t invoke_ms, int64_t complete_ms,
                       const std::string& cluster = "c1") {
    Operation& op = Op(OpType::kReadModifyWrite, client, row, invoke_ms,
                       complete_ms, cluster);
    op.set_counter(counter);
    op.version = ++version_;
    op.committed = Ms((invoke_ms + complete_ms) / 2);
    return op;
  }
  Event& AddEvent(EventKind kind, int64_t at_ms, const std::string& cluster,
                  const std::string& peer = "") {
    Event event;
    event.kind = kind;
    event.at = Ms(at_ms);
    event.cluster = cluster;
    event.peer = peer;
    history_.events.push_back(event);
    return history_.events.back();
  }
  ClusterState& Cluster(const std::string& id,
                        const std::string& digest = "d") {
    history_.final_state.push_back({id, digest, {}, std::nullopt, {}});
    return history_.final_state.back();
  }
  // The final state of table/row on `cluster`, added empty when absent.
  RowState& Row(ClusterState& cluster, std::string_view table,
                std::string_view row) {
    return cluster.rows[{Intern(table), history_.names->Store(row)}];
  }
  // Sets the final state of "t"/row on `cluster` to what write `id` made.
  void Has(ClusterState& cluster, uint64_t id) {
    const Operation& op = history_.operations[id];
    RowState& state = cluster.rows[{op.table(), op.row}];
    state.tag = op.written();
    state.timestamp = op.timestamp;
    state.version = op.version;
  }

  History& history() { return history_; }

 private:
  History history_;
  uint64_t version_ = 0;
};

inline const CheckValue& Check(const std::vector<CheckValue>& checks,
                               const std::string& name) {
  for (const CheckValue& check : checks) {
    if (check.name == name) return check;
  }
  ADD_FAILURE() << "no check " << name;
  static const CheckValue kMissing;
  return kMissing;
}

// Expects every result of RunAllChecks on `history` to be the same whether
// the row checks see it whole or split into parts.
inline void ExpectSameInParts(
    const History& history,
    const google::protobuf::RepeatedPtrField<pb::Expectation>& expectations) {
  const AllChecks whole =
      checks_internal::RunAllChecksInParts(history, expectations, 1);
  for (size_t parts : {2, 3, 7}) {
    SCOPED_TRACE("in " + std::to_string(parts) + " parts");
    const AllChecks split =
        checks_internal::RunAllChecksInParts(history, expectations, parts);
    ASSERT_EQ(split.checks.size(), whole.checks.size());
    for (size_t i = 0; i < whole.checks.size(); ++i) {
      EXPECT_EQ(split.checks[i].name, whole.checks[i].name);
      EXPECT_EQ(split.checks[i].value, whole.checks[i].value)
          << whole.checks[i].name;
      EXPECT_EQ(split.checks[i].detail, whole.checks[i].detail);
    }
    ASSERT_EQ(split.expectations.size(), whole.expectations.size());
    for (size_t i = 0; i < whole.expectations.size(); ++i) {
      const ExpectationResult& a = split.expectations[i];
      const ExpectationResult& b = whole.expectations[i];
      EXPECT_EQ(a.metric, b.metric);
      EXPECT_EQ(a.value, b.value) << b.metric;
      EXPECT_EQ(a.detail, b.detail);
      EXPECT_EQ(a.pass, b.pass) << b.metric;
    }
    ASSERT_EQ(split.visibility.size(), whole.visibility.size());
    for (size_t i = 0; i < whole.visibility.size(); ++i) {
      EXPECT_EQ(split.visibility[i].write_cluster,
                whole.visibility[i].write_cluster);
      EXPECT_EQ(split.visibility[i].read_cluster,
                whole.visibility[i].read_cluster);
      EXPECT_EQ(split.visibility[i].samples, whole.visibility[i].samples);
      EXPECT_EQ(split.visibility[i].probability,
                whole.visibility[i].probability);
    }
    EXPECT_EQ(split.k_staleness.reads, whole.k_staleness.reads);
    EXPECT_EQ(split.k_staleness.at_most, whole.k_staleness.at_most);
    EXPECT_EQ(split.k_staleness.max, whole.k_staleness.max);
  }
}

// One check of RunChecks, after checking that splitting the history into
// parts changes nothing.
inline CheckValue RunCheck(const History& history, const std::string& name) {
  ExpectSameInParts(history, {});
  return Check(RunChecks(history), name);
}

// Evaluates one expectation written in text format (name defaults to "e").
inline ExpectationResult Eval(const History& history, const std::string& text) {
  google::protobuf::RepeatedPtrField<pb::Expectation> expectations;
  pb::Expectation* expectation = expectations.Add();
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString("name: 'e' " + text,
                                                            expectation))
      << text;
  ExpectSameInParts(history, expectations);
  std::vector<ExpectationResult> results = Evaluate(history, expectations);
  EXPECT_EQ(results.size(), 1u);
  return results.empty() ? ExpectationResult{} : results[0];
}

}  // namespace btsim::scenarios::checks_test

#endif  // BTSIM_TESTS_SCENARIOS_CHECKS_TEST_UTIL_H_
