// The fixture of the Table tests (table_test.cc, table_tablets_test.cc): a
// Table driven directly, with commit versions handed out like a Cluster
// would, and the helpers its tests share.
#ifndef BTSIM_TESTS_CLUSTER_TABLE_FIXTURE_H_
#define BTSIM_TESTS_CLUSTER_TABLE_FIXTURE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/check.h"
#include "cluster/row_set.h"
#include "cluster/table.h"
#include "cluster/version.h"
#include "sim/rng.h"
#include "tests/cluster/engine_test_util.h"

namespace btsim::cluster::table_test {

using test_util::Cell;
using test_util::CreateFamily;
using test_util::DelRow;
using test_util::Row;
using test_util::Set;

inline constexpr int64_t kNowMicros = 1'700'000'000'000'000;
inline constexpr Timestamp kNow = TimestampFromMicros(kNowMicros);

// Drives a Table directly, handing out commit versions like a Cluster would.
class TableTest : public ::testing::Test {
 protected:
  explicit TableTest(TableOptions options = {},
                     std::vector<std::string> splits = {})
      : table_("t", options, splits) {
    const FamilyModification mods[] = {CreateFamily("cf")};
    BTSIM_CHECK(table_.ModifyColumnFamilies(mods).ok());
  }

  CommitContext Commit(size_t n = 1) {
    CommitContext c{next_version_, kNow};
    next_version_ += static_cast<Version>(std::max<size_t>(n, 1))
                     << kOriginBits;
    return c;
  }
  Version last_version() const { return next_version_ - (1 << kOriginBits); }

  Status Mutate(std::string_view key, std::vector<Mutation> mutations) {
    return table_.MutateRow(key, mutations, Commit(mutations.size()));
  }
  void Put(std::string_view key, std::string value = "v",
           std::string qualifier = "q", int64_t ts = 1000) {
    Status s = Mutate(key, {Set("cf", qualifier, ts, value)});
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // The rows of table_ (those of `rows`, or all), in order or reversed.
  std::vector<Row> Read(const RowSet* rows = nullptr, bool reversed = false) {
    return Contents(table_, rows, reversed);
  }

  // The rows of `table` (those of `rows`, or all), in order or reversed.
  std::vector<Row> Contents(const Table& table, const RowSet* rows = nullptr,
                            bool reversed = false) {
    ReadOptions options;
    options.rows = rows;
    options.reversed = reversed;
    std::vector<Row> out;
    table.Read(options, rng_,
               [&](std::string_view key, std::span<const CellView> cells) {
                 out.push_back(test_util::CopyRow(key, cells));
                 return true;
               });
    return out;
  }

  std::vector<Cell> ReadRow(std::string_view key) {
    RowSet set;
    set.AddKey(std::string(key));
    std::vector<Row> rows = Read(&set);
    return rows.empty() ? std::vector<Cell>{} : rows[0].cells;
  }

  // Drops the rows starting with `prefix`, committed now.
  void DropRowRange(std::string_view prefix) {
    table_.DropRowRangeAt(prefix, Commit().version);
  }

  Status Modify(std::vector<FamilyModification> mods) {
    return table_.ModifyColumnFamilies(mods);
  }

  void CompactAll() { table_.Compact(kNow, last_version()); }

  Table table_;
  sim::Rng rng_{7};
  Version next_version_ = MakeVersion(kNow, 0);
};

inline std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "row%05d", i);
  return buf;
}

}  // namespace btsim::cluster::table_test

#endif  // BTSIM_TESTS_CLUSTER_TABLE_FIXTURE_H_
