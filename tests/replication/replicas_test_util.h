// Helpers shared by the Replicas tests (replicas_test.cc,
// replicas_membership_test.cc, replicas_property_test.cc): zones, owned copies
// of read results, and ReplicasTest, a Replicas on a virtual scheduler with
// helpers to write, read and run. Header-only; test code only.
#ifndef BTSIM_TESTS_REPLICATION_REPLICAS_TEST_UTIL_H_
#define BTSIM_TESTS_REPLICATION_REPLICAS_TEST_UTIL_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/check.h"
#include "base/result.h"
#include "cluster/cluster.h"
#include "cluster/gc_rule.h"
#include "cluster/mutation.h"
#include "cluster/table.h"
#include "replication/replicas.h"
#include "sim/fingerprint.h"
#include "sim/rng.h"
#include "sim/transport.h"
#include "sim/virtual_scheduler.h"

namespace btsim::replication::test_util {

using ::btsim::cluster::ColumnFamily;
using ::btsim::cluster::DeleteFromColumn;
using ::btsim::cluster::DeleteFromFamily;
using ::btsim::cluster::DeleteFromRow;
using ::btsim::cluster::FamilyModification;
using ::btsim::cluster::GcRule;
using ::btsim::cluster::Mutation;
using ::btsim::cluster::SetCell;
using ::btsim::sim::Duration;
using ::btsim::sim::LatencyModel;
using ::btsim::sim::Time;
using ::std::chrono::milliseconds;
using ::std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

// 2023-11-14T22:13:20Z.
inline constexpr Time kStart{Duration(1'700'000'000'000'000'000)};

inline constexpr char kEastB[] = "us-east1-b";
inline constexpr char kEastC[] = "us-east1-c";
inline constexpr char kEurope[] = "europe-west1-d";
inline constexpr char kAsia[] = "asia-east1-a";

// An owned copy of one cell as a read returns it.
struct Cell {
  std::string family;
  std::string qualifier;
  int64_t ts = 0;
  std::string value;
  bool operator==(const Cell&) const = default;
};
using Rows = std::map<std::string, std::vector<Cell>>;

// Every row of `table` on `c`, with its live cells in canonical order.
inline Rows ReadAll(cluster::Cluster& c, std::string_view table = "t") {
  Rows rows;
  const Status s = c.ReadRows(
      table, cluster::ReadOptions{},
      [&](std::string_view key, std::span<const cluster::CellView> cells) {
        std::vector<Cell>& out = rows[std::string(key)];
        for (const cluster::CellView& v : cells) {
          out.push_back(Cell{std::string(v.family), std::string(v.qualifier),
                             cluster::Micros(v.timestamp),
                             std::string(v.value)});
        }
        return true;
      });
  EXPECT_TRUE(s.ok()) << s.ToString();
  return rows;
}

inline std::vector<std::string> Keys(const Rows& rows) {
  std::vector<std::string> keys;
  for (const auto& [key, cells] : rows) keys.push_back(key);
  return keys;
}

inline std::string Contents(const cluster::Cluster& c) {
  sim::Fingerprint f;
  c.AddContents(&f);
  return f.Hex();
}

inline FamilyModification CreateFamily(std::string name,
                                       GcRule rule = GcRule::None()) {
  return FamilyModification{std::move(name), FamilyModification::Kind::kCreate,
                            std::move(rule)};
}

inline std::vector<std::pair<std::string, std::string>> FamiliesOf(
    cluster::Cluster& c, std::string_view table) {
  std::vector<std::pair<std::string, std::string>> out;
  Result<cluster::Table*> t = c.GetTable(table);
  if (!t.ok()) return out;
  for (const ColumnFamily& f : (*t)->Families()) {
    out.emplace_back(f.name, f.gc_rule.ToString());
  }
  return out;
}

// A Replicas on a virtual scheduler, with helpers to write, read and run.
class ReplicasTest : public ::testing::Test {
 protected:
  explicit ReplicasTest(ReplicationOptions options = {})
      : scheduler_(kStart),
        transport_(scheduler_, sim::Rng(7)),
        replicas_(std::make_unique<Replicas>(scheduler_, transport_,
                                             sim::Rng(11), options)) {}

  // Every link, including same-zone ones, takes exactly `latency`.
  void SetLatency(Duration latency) {
    transport_.SetLatencyEverywhere(LatencyModel::Constant(latency));
  }

  void Add(const std::string& id, const std::string& zone) {
    const Status s = replicas_->AddCluster({id, zone});
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  cluster::Cluster& C(std::string_view id) {
    cluster::Cluster* c = replicas_->Find(id);
    BTSIM_CHECK_MSG(c != nullptr, std::string(id));
    return *c;
  }

  std::string Zone(std::string_view id) {
    const ClusterSpec* spec = replicas_->Spec(id);
    BTSIM_CHECK_MSG(spec != nullptr, std::string(id));
    return spec->zone;
  }

  // Table "t" with families "cf" and "cf2", created on `id`.
  void CreateTable(std::string_view id) {
    const std::vector<FamilyModification> families = {CreateFamily("cf"),
                                                      CreateFamily("cf2")};
    const Status s = C(id).CreateTable("t", families, {});
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  void Mutate(std::string_view id, std::string_view row,
              std::vector<Mutation> mutations) {
    const Status s = C(id).MutateRow("t", row, mutations);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // Writes cf:q of `row` on cluster `id`, at `ts` (server time when unset).
  void Write(std::string_view id, std::string_view row, std::string value,
             cluster::Timestamp ts = cluster::kServerTimestamp) {
    Mutate(id, row, {SetCell{"cf", "q", ts, std::move(value)}});
  }

  // The newest value of cf:q in `row` on cluster `id`, if any.
  std::optional<std::string> Get(std::string_view id, std::string_view row) {
    const Rows rows = ReadAll(C(id));
    auto it = rows.find(std::string(row));
    if (it == rows.end()) return std::nullopt;
    for (const Cell& c : it->second) {
      if (c.family == "cf" && c.qualifier == "q") return c.value;
    }
    return std::nullopt;
  }

  int64_t StoredRows(std::string_view id) {
    Result<cluster::Table*> t = C(id).GetTable("t");
    BTSIM_CHECK(t.ok());
    return (*t)->Stats().rows;
  }

  void RunUntil(Time t) { scheduler_.RunUntil(t); }
  void RunFor(Duration d) { scheduler_.RunFor(d); }
  // Runs until nothing is pending, which happens once every batch is
  // acknowledged (retransmit timers keep the scheduler busy until then).
  void RunUntilIdle() {
    scheduler_.RunUntilIdle(2'000'000);
    ASSERT_EQ(scheduler_.pending(), 0u) << "replication never went idle";
  }

  uint64_t Backlog(std::string_view from, std::string_view to) {
    return replicas_->Backlog(from, to);
  }

  // Every cluster holds the same contents (and it is not an empty instance).
  void ExpectConverged() {
    const std::vector<std::string> ids = replicas_->ClusterIds();
    ASSERT_FALSE(ids.empty());
    const std::string first = Contents(C(ids[0]));
    for (const std::string& id : ids) {
      EXPECT_EQ(Contents(C(id)), first) << id << " differs from " << ids[0];
      for (const std::string& peer : ids) EXPECT_EQ(Backlog(id, peer), 0u);
    }
    EXPECT_TRUE(replicas_->HasApplied(replicas_->LogPositions()));
  }

  sim::VirtualScheduler scheduler_;
  sim::Transport transport_;
  std::unique_ptr<Replicas> replicas_;
};

}  // namespace btsim::replication::test_util

#endif  // BTSIM_TESTS_REPLICATION_REPLICAS_TEST_UTIL_H_
