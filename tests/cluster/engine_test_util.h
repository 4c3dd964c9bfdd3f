// Helpers shared by the storage-engine tests: owned copies of read results
// and a Cluster fixture driven by a ManualClock.
#ifndef BTSIM_TESTS_CLUSTER_ENGINE_TEST_UTIL_H_
#define BTSIM_TESTS_CLUSTER_ENGINE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "cluster/cell_view.h"
#include "cluster/cluster.h"
#include "cluster/mutation.h"
#include "cluster/table.h"
#include "cluster/timestamp.h"
#include "sim/clock.h"
#include "sim/rng.h"

namespace btsim::cluster::test_util {

// 2023-11-14T22:13:20Z, a round number of seconds.
inline constexpr sim::Time kStartTime{sim::Duration(1'700'000'000'000'000'000)};
inline constexpr int64_t kStartMicros = 1'700'000'000'000'000;

// An owned copy of one output cell; `ts` in microseconds since the epoch.
struct Cell {
  std::string family;
  std::string qualifier;
  int64_t ts = 0;
  std::string value;
  std::string label;
  bool operator==(const Cell&) const = default;
};

inline void PrintTo(const Cell& c, std::ostream* os) {
  *os << c.family << ":" << c.qualifier << "@" << c.ts << "=" << c.value;
  if (!c.label.empty()) *os << "[" << c.label << "]";
}

// An owned copy of one output row.
struct Row {
  std::string key;
  std::vector<Cell> cells;
  bool operator==(const Row&) const = default;
};

inline void PrintTo(const Row& r, std::ostream* os) {
  *os << "{" << r.key << ":";
  for (const Cell& c : r.cells) {
    *os << " ";
    PrintTo(c, os);
  }
  *os << "}";
}

inline Row CopyRow(std::string_view key, std::span<const CellView> cells) {
  Row row{std::string(key), {}};
  for (const CellView& c : cells) {
    row.cells.push_back(Cell{std::string(c.family), std::string(c.qualifier),
                             Micros(c.timestamp), std::string(c.value),
                             c.label ? *c.label : std::string()});
  }
  return row;
}

// A cell without a label.
inline Cell C(std::string family, std::string qualifier, int64_t ts,
              std::string value) {
  return Cell{std::move(family), std::move(qualifier), ts, std::move(value),
              ""};
}

// A minute and an hour, in microseconds.
inline constexpr int64_t kMinute = 60'000'000;
inline constexpr int64_t kHour = 60 * kMinute;

inline std::vector<std::string> Keys(const std::vector<Row>& rows) {
  std::vector<std::string> out;
  for (const Row& r : rows) out.push_back(r.key);
  return out;
}

// Mutations, with timestamps in microseconds since the epoch as on the wire
// (or kServerTimestamp).
inline Mutation Set(std::string family, std::string qualifier, Timestamp ts,
                    std::string value) {
  return SetCell{std::move(family), std::move(qualifier), ts, std::move(value)};
}
inline Mutation Set(std::string family, std::string qualifier, int64_t ts,
                    std::string value) {
  return Set(std::move(family), std::move(qualifier), TimestampFromMicros(ts),
             std::move(value));
}
inline Mutation DelCol(std::string family, std::string qualifier,
                       int64_t start = 0, int64_t end = 0) {
  return DeleteFromColumn{std::move(family), std::move(qualifier),
                          TimestampFromMicros(start), TimestampFromMicros(end)};
}
inline Mutation DelFam(std::string family) {
  return DeleteFromFamily{std::move(family)};
}
inline Mutation DelRow() { return DeleteFromRow{}; }

inline FamilyModification CreateFamily(std::string name,
                                       GcRule rule = GcRule::None()) {
  return FamilyModification{std::move(name), FamilyModification::Kind::kCreate,
                            std::move(rule)};
}
inline FamilyModification UpdateFamily(std::string name, GcRule rule) {
  return FamilyModification{std::move(name), FamilyModification::Kind::kUpdate,
                            std::move(rule)};
}
inline FamilyModification DropFamily(std::string name) {
  return FamilyModification{std::move(name), FamilyModification::Kind::kDrop,
                            GcRule::None()};
}

// A Cluster on a ManualClock, with table "t" holding families "cf" and "cf2".
class ClusterTest : public ::testing::Test {
 protected:
  explicit ClusterTest(TableOptions table_options = {})
      : clock_(kStartTime),
        cluster_(clock_, sim::Rng(1), ClusterOptions{0, table_options}) {}

  void SetUp() override {
    ASSERT_TRUE(
        CreateTable("t", {CreateFamily("cf"), CreateFamily("cf2")}).ok());
  }

  Status CreateTable(const std::string& id,
                     std::vector<FamilyModification> families,
                     const std::vector<std::string>& splits = {}) {
    return cluster_.CreateTable(id, families, splits);
  }

  Status Mutate(std::string_view key, std::vector<Mutation> mutations,
                std::string_view table = "t") {
    return cluster_.MutateRow(table, key, mutations);
  }

  // Writes one cell; fails the test on error.
  void Put(std::string_view key, std::string family, std::string qualifier,
           int64_t ts, std::string value, std::string_view table = "t") {
    Put(key, std::move(family), std::move(qualifier), TimestampFromMicros(ts),
        std::move(value), table);
  }
  void Put(std::string_view key, std::string family, std::string qualifier,
           Timestamp ts, std::string value, std::string_view table = "t") {
    Status s = Mutate(
        key,
        {Set(std::move(family), std::move(qualifier), ts, std::move(value))},
        table);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  std::vector<Row> Read(const ReadOptions& options = {},
                        std::string_view table = "t") {
    std::vector<Row> rows;
    Status s = cluster_.ReadRows(
        table, options,
        [&](std::string_view key, std::span<const CellView> cells) {
          rows.push_back(CopyRow(key, cells));
          return true;
        });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return rows;
  }

  std::vector<Row> ReadRowSet(const RowSet& set, bool reversed = false) {
    ReadOptions options;
    options.rows = &set;
    options.reversed = reversed;
    return Read(options);
  }

  // The cells of one row (empty when the row has none).
  std::vector<Cell> ReadRow(std::string_view key,
                            std::string_view table = "t") {
    RowSet set;
    set.AddKey(std::string(key));
    ReadOptions options;
    options.rows = &set;
    std::vector<Row> rows = Read(options, table);
    EXPECT_LE(rows.size(), 1u);
    return rows.empty() ? std::vector<Cell>{} : rows[0].cells;
  }

  Table& table(std::string_view id = "t") {
    Result<Table*> t = cluster_.GetTable(id);
    BTSIM_CHECK(t.ok());
    return **t;
  }

  sim::ManualClock clock_;
  Cluster cluster_;
};

}  // namespace btsim::cluster::test_util

#endif  // BTSIM_TESTS_CLUSTER_ENGINE_TEST_UTIL_H_
