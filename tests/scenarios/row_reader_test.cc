#include "scenarios/row_reader.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/cell_view.h"
#include "cluster/cluster.h"
#include "cluster/filter.h"
#include "cluster/mutation.h"
#include "cluster/row_set.h"
#include "sim/clock.h"
#include "sim/rng.h"

namespace btsim::scenarios {
namespace {

using cluster::CellView;

// An owned copy of what ReadRowStates passes (its tag views the cells).
struct OwnedRead {
  std::string tag;
  int64_t timestamp_micros = 0;
  int64_t counter = 0;
};

OwnedRead Own(const RowRead& read) {
  return {std::string(read.tag), cluster::Micros(read.timestamp), read.counter};
}

std::string BigEndian(int64_t v) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(static_cast<uint64_t>(v) >> (8 * (7 - i)));
  }
  return out;
}

TEST(RowStateOfTest, NewestValueAndCounterOfTheFamily) {
  const std::string counter = BigEndian(41);
  const std::string older_counter = BigEndian(40);
  // Canonical order: families, then qualifiers ascending, newest first.
  const std::vector<CellView> cells = {
      {"a", "v", cluster::TimestampFromMicros(900), "a/9|xx", nullptr},
      {"cf", "n", cluster::TimestampFromMicros(800), counter, nullptr},
      {"cf", "n", cluster::TimestampFromMicros(700), older_counter, nullptr},
      {"cf", "v", cluster::TimestampFromMicros(500), "w-1/2|pad", nullptr},
      {"cf", "v", cluster::TimestampFromMicros(400), "w-1/1|pad", nullptr},
      {"z", "n", cluster::TimestampFromMicros(900), BigEndian(7), nullptr},
  };
  const RowRead row = RowStateOf("cf", cells);
  EXPECT_EQ(row.tag, "w-1/2");
  EXPECT_EQ(cluster::Micros(row.timestamp), 500);
  EXPECT_EQ(row.counter, 41);

  const RowRead other = RowStateOf("a", cells);
  EXPECT_EQ(other.tag, "a/9");
  EXPECT_EQ(other.counter, 0);

  const RowRead none = RowStateOf("missing", cells);
  EXPECT_EQ(none.tag, "");
  EXPECT_EQ(none.timestamp, cluster::Timestamp{});
  EXPECT_EQ(none.counter, 0);
}

// What ReadRowStates returned when it read through a CellsPerColumnLimit(1)
// filter: the definition its unfiltered read must match.
std::vector<std::pair<std::string, OwnedRead>> ReadThroughFilter(
    cluster::Cluster& c, std::string_view family) {
  std::vector<std::pair<std::string, OwnedRead>> out;
  auto newest_only = cluster::Filter::CellsPerColumnLimit(1);
  cluster::ReadOptions options;
  options.filter = &*newest_only;
  EXPECT_TRUE(
      c.ReadRows("t", options,
                 [&](std::string_view key, std::span<const CellView> cells) {
                   OwnedRead row;
                   for (const CellView& cell : cells) {
                     if (cell.family != family) continue;
                     if (cell.qualifier == kValueColumn) {
                       row.tag = std::string(TagOf(cell.value));
                       row.timestamp_micros = cluster::Micros(cell.timestamp);
                     } else if (cell.qualifier == kCounterColumn) {
                       row.counter = DecodeCounter(cell.value);
                     }
                   }
                   out.emplace_back(std::string(key), row);
                   return true;
                 })
          .ok());
  return out;
}

TEST(ReadRowStatesTest, SeesWhatANewestCellPerColumnReadSees) {
  sim::ManualClock clock(sim::Time(std::chrono::seconds(1'000'000)));
  cluster::Cluster c(clock, sim::Rng(1), cluster::ClusterOptions{});
  const std::vector<cluster::FamilyModification> families = {
      {"cf", cluster::FamilyModification::Kind::kCreate, {}},
      {"other", cluster::FamilyModification::Kind::kCreate, {}}};
  ASSERT_TRUE(c.CreateTable("t", families, {}).ok());
  auto set = [&](const std::string& key, const std::string& family,
                 const std::string& qualifier, int64_t ts,
                 const std::string& value) {
    const std::vector<cluster::Mutation> m = {cluster::SetCell{
        family, qualifier, cluster::TimestampFromMicros(ts), value}};
    ASSERT_TRUE(c.MutateRow("t", key, m).ok());
  };
  set("r1", "cf", "v", 2000, "w-0/2|p");
  set("r1", "cf", "v", 3000, "w-0/3|p");
  set("r1", "cf", "v", 1000, "w-0/1|p");
  set("r1", "cf", "n", 1000, BigEndian(5));
  set("r1", "cf", "n", 5000, BigEndian(6));
  set("r2", "other", "v", 9000, "x/1|p");  // another family only
  set("r3", "cf", "n", 1000, BigEndian(3));
  set("r3", "cf", "u", 7000, "unrelated");
  set("r3", "other", "n", 9000, BigEndian(99));

  std::vector<std::pair<std::string, OwnedRead>> read;
  ASSERT_TRUE(ReadRowStates(c, "t", "cf", /*rows=*/nullptr,
                            [&](std::string_view key, const RowRead& row) {
                              read.emplace_back(std::string(key), Own(row));
                              return true;
                            })
                  .ok());
  const auto expected = ReadThroughFilter(c, "cf");
  ASSERT_EQ(read.size(), 3u);
  ASSERT_EQ(read.size(), expected.size());
  for (size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].first, expected[i].first);
    EXPECT_EQ(read[i].second.tag, expected[i].second.tag) << i;
    EXPECT_EQ(read[i].second.timestamp_micros,
              expected[i].second.timestamp_micros)
        << i;
    EXPECT_EQ(read[i].second.counter, expected[i].second.counter) << i;
  }
  EXPECT_EQ(read[0].second.tag, "w-0/3");
  EXPECT_EQ(read[0].second.timestamp_micros, 3000);
  EXPECT_EQ(read[0].second.counter, 6);
  EXPECT_EQ(read[1].second.tag, "");
  EXPECT_EQ(read[2].second.counter, 3);

  // A row set selects, and a visitor returning false stops.
  cluster::RowSet rows;
  rows.AddKey("r3");
  rows.AddKey("r1");
  std::vector<std::string> keys;
  ASSERT_TRUE(ReadRowStates(c, "t", "cf", &rows,
                            [&](std::string_view key, const RowRead&) {
                              keys.emplace_back(key);
                              return false;
                            })
                  .ok());
  EXPECT_EQ(keys, std::vector<std::string>({"r1"}));
  EXPECT_FALSE(
      ReadRowStates(c, "absent", "cf", nullptr,
                    [](std::string_view, const RowRead&) { return true; })
          .ok());
}

}  // namespace
}  // namespace btsim::scenarios
