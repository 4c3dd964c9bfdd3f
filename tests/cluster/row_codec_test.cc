#include "cluster/row_codec.h"
#include "cluster/internal/row_edits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/version.h"
#include "sim/rng.h"

namespace btsim::cluster {
namespace {

using internal::KeepNewestCells;
using internal::LoneColumn;
using internal::ReadLoneColumn;
using internal::WithCellWritten;

using ::testing::IsEmpty;

// Deep comparison of two decoded rows (RowData has no operator==).
void ExpectSameRow(const RowData& a, const RowData& b) {
  EXPECT_EQ(a.tombstone, b.tombstone);
  ASSERT_EQ(a.families.size(), b.families.size());
  for (size_t f = 0; f < a.families.size(); ++f) {
    const FamilyData& fa = a.families[f];
    const FamilyData& fb = b.families[f];
    EXPECT_EQ(fa.id, fb.id);
    EXPECT_EQ(fa.tombstone, fb.tombstone);
    ASSERT_EQ(fa.columns.size(), fb.columns.size());
    for (size_t c = 0; c < fa.columns.size(); ++c) {
      const ColumnData& ca = fa.columns[c];
      const ColumnData& cb = fb.columns[c];
      EXPECT_EQ(ca.qualifier, cb.qualifier);
      ASSERT_EQ(ca.tombstones.size(), cb.tombstones.size());
      for (size_t t = 0; t < ca.tombstones.size(); ++t) {
        EXPECT_EQ(ca.tombstones[t].start, cb.tombstones[t].start);
        EXPECT_EQ(ca.tombstones[t].end, cb.tombstones[t].end);
        EXPECT_EQ(ca.tombstones[t].version, cb.tombstones[t].version);
      }
      ASSERT_EQ(ca.cells.size(), cb.cells.size());
      for (size_t k = 0; k < ca.cells.size(); ++k) {
        EXPECT_EQ(ca.cells[k].timestamp, cb.cells[k].timestamp);
        EXPECT_EQ(ca.cells[k].version, cb.cells[k].version);
        EXPECT_EQ(ca.cells[k].value, cb.cells[k].value);
      }
    }
  }
}

RowData RoundTrip(const RowData& row, std::string* storage) {
  storage->clear();
  EncodeRow(row, storage);
  return DecodeRow(*storage);
}

std::vector<LiveCell> Live(const RowData& row, std::string* storage) {
  storage->clear();
  EncodeRow(row, storage);
  std::vector<LiveCell> out;
  AppendLiveCells(*storage, &out);
  return out;
}

TEST(RowCodecTest, EmptyRowRoundTrips) {
  RowData row;
  EXPECT_TRUE(row.empty());
  std::string storage;
  RowData back = RoundTrip(row, &storage);
  EXPECT_TRUE(back.empty());
  EXPECT_EQ(storage.size(), EncodedSize(row));
  EXPECT_EQ(storage.size(), 2u);  // two zero varints
}

TEST(RowCodecTest, RowWithOnlyATombstoneIsNotEmpty) {
  RowData row;
  row.tombstone = MakeVersion(TimestampFromMicros(5), 1);
  EXPECT_FALSE(row.empty());
  std::string storage;
  EXPECT_EQ(RoundTrip(row, &storage).tombstone,
            MakeVersion(TimestampFromMicros(5), 1));
}

TEST(RowCodecTest, RoundTripPreservesEveryField) {
  const Version big =
      MakeVersion(TimestampFromMicros(1'700'000'000'000'000), 3);
  RowData row;
  row.tombstone = big;
  row.families.push_back(FamilyData{
      0,
      big + 256,
      {ColumnData{"a",
                  {ColumnTombstone{TimestampFromMicros(0),
                                   TimestampFromMicros(0), big + 512},
                   ColumnTombstone{TimestampFromMicros(3000),
                                   TimestampFromMicros(9000), big + 768}},
                  {CellData{TimestampFromMicros(1'700'000'000'000'000),
                            big + 1024, "newest"},
                   CellData{TimestampFromMicros(5000), big + 1, "older"},
                   CellData{TimestampFromMicros(0), 7, "zero"}}},
       ColumnData{"b", {}, {CellData{TimestampFromMicros(1000), 1, "x"}}}}});
  row.families.push_back(FamilyData{
      7,
      kNoVersion,
      {ColumnData{"q", {}, {CellData{TimestampFromMicros(2000), 9, ""}}}}});
  std::string storage;
  RowData back = RoundTrip(row, &storage);
  ExpectSameRow(row, back);
  EXPECT_EQ(storage.size(), EncodedSize(row));
}

TEST(RowCodecTest, BinaryQualifiersAndValuesWithNulBytesRoundTrip) {
  const std::string qualifier("q\0\xff\x01", 4);
  const std::string value("\0\0\xfe\0v\0", 6);
  const std::string empty_qualifier;
  RowData row;
  row.families.push_back(FamilyData{
      1,
      kNoVersion,
      {ColumnData{empty_qualifier,
                  {},
                  {CellData{TimestampFromMicros(1000), 1, value}}},
       ColumnData{
           qualifier, {}, {CellData{TimestampFromMicros(2000), 2, ""}}}}});
  std::string storage;
  RowData back = RoundTrip(row, &storage);
  ASSERT_EQ(back.families.size(), 1u);
  ASSERT_EQ(back.families[0].columns.size(), 2u);
  EXPECT_EQ(back.families[0].columns[0].qualifier, "");
  EXPECT_EQ(back.families[0].columns[0].cells[0].value, value);
  EXPECT_EQ(back.families[0].columns[0].cells[0].value.size(), 6u);
  EXPECT_EQ(back.families[0].columns[1].qualifier, qualifier);
  EXPECT_EQ(back.families[0].columns[1].qualifier.size(), 4u);
  EXPECT_EQ(back.families[0].columns[1].cells[0].value, "");
}

TEST(RowCodecTest, ManyVersionsRoundTripInOrder) {
  std::vector<std::string> values;
  for (int i = 0; i < 2000; ++i) values.push_back("v" + std::to_string(i));
  RowData row;
  FamilyData family{2, kNoVersion, {ColumnData{"col", {}, {}}}};
  for (int i = 0; i < 2000; ++i) {
    family.columns[0].cells.push_back(
        CellData{TimestampFromMicros((2000 - i) * int64_t{1000}),
                 MakeVersion(TimestampFromMicros(i), 0), values[i]});
  }
  row.families.push_back(family);
  std::string storage;
  RowData back = RoundTrip(row, &storage);
  ExpectSameRow(row, back);
  std::vector<LiveCell> live;
  AppendLiveCells(storage, &live);
  ASSERT_EQ(live.size(), 2000u);
  EXPECT_EQ(Micros(live.front().timestamp), 2'000'000);
  EXPECT_EQ(Micros(live.back().timestamp), 1000);
  EXPECT_EQ(live.back().value, "v1999");
}

TEST(RowCodecTest, EncodeRowAppendsToExistingBytes) {
  RowData row;
  row.families.push_back(FamilyData{
      0,
      kNoVersion,
      {ColumnData{"c", {}, {CellData{TimestampFromMicros(1000), 1, "v"}}}}});
  std::string storage = "prefix";
  EncodeRow(row, &storage);
  EXPECT_EQ(storage.substr(0, 6), "prefix");
  EXPECT_EQ(storage.size(), 6 + EncodedSize(row));
  ExpectSameRow(row, DecodeRow(std::string_view(storage).substr(6)));
}

TEST(RowCodecTest, RowRecordHoldsBinaryKeyAndEncoding) {
  const std::string key("k\0\xff", 3);
  RowData row;
  row.families.push_back(FamilyData{
      0,
      kNoVersion,
      {ColumnData{
          "c", {}, {CellData{TimestampFromMicros(1000), 1, "value"}}}}});
  RowRecord record(key, row);
  ASSERT_TRUE(record.valid());
  EXPECT_EQ(record.key(), key);
  std::string expected;
  EncodeRow(row, &expected);
  EXPECT_EQ(record.encoded(), expected);
  EXPECT_EQ(record.bytes(), 8 + key.size() + expected.size());
  EXPECT_FALSE(RowRecord().valid());
}

TEST(RowCodecTest, RowRecordOutlivesTheRowDataItWasBuiltFrom) {
  RowRecord record;
  {
    std::string value(1000, 'x');
    RowData row;
    row.families.push_back(FamilyData{
        0,
        kNoVersion,
        {ColumnData{"c", {}, {CellData{TimestampFromMicros(0), 1, value}}}}});
    record = RowRecord("key", row);
  }
  // The prefetches change nothing (a long record, an invalid one).
  record.Prefetch();
  record.PrefetchRest();
  RowRecord().Prefetch();
  RowRecord().PrefetchRest();
  RowData back = DecodeRow(record.encoded());
  EXPECT_EQ(back.families[0].columns[0].cells[0].value, std::string(1000, 'x'));
}

TEST(RowCodecTest, ShiftRightMovesRecordsOnWithTheirMarksAndShares) {
  RowRecord rows[4];
  rows[0] = RowRecord("a", RowData{});
  rows[1] = RowRecord("b", RowData{});
  rows[1].set_marked(true);
  rows[2] = RowRecord("c", RowData{});
  const RowRecord outside = rows[2].Share();
  const void* const c_allocation = rows[2].allocation();
  RowRecord::ShiftRight(rows, rows + 3);
  EXPECT_FALSE(rows[0].valid());
  EXPECT_EQ(rows[1].key(), "a");
  EXPECT_EQ(rows[2].key(), "b");
  EXPECT_TRUE(rows[2].marked());
  EXPECT_FALSE(rows[1].marked());
  EXPECT_EQ(rows[3].key(), "c");
  EXPECT_EQ(rows[3].allocation(), c_allocation);
  // Moved as words: still exactly two references (a count bumped or dropped
  // by the move would leave it shared after one is released, or freed).
  EXPECT_TRUE(outside.shared());
  rows[3] = RowRecord();
  EXPECT_FALSE(outside.shared());
  EXPECT_EQ(outside.key(), "c");
  // An empty range leaves *first invalid and touches no other record.
  rows[0] = RowRecord("z", RowData{});
  RowRecord::ShiftRight(rows + 3, rows + 3);
  EXPECT_FALSE(rows[3].valid());
  EXPECT_EQ(rows[0].key(), "z");
}

TEST(RowCodecDeathTest, ShiftRightOverAValidRecordAborts) {
  RowRecord rows[2];
  rows[0] = RowRecord("a", RowData{});
  rows[1] = RowRecord("b", RowData{});
  EXPECT_DEATH(RowRecord::ShiftRight(rows, rows + 1), "");
}

RowData ThreeFamilies() {
  RowData row;
  for (uint32_t id : {0u, 1u, 2u}) {
    FamilyData f{id, kNoVersion, {}};
    f.columns.push_back(
        ColumnData{"c",
                   {},
                   {CellData{TimestampFromMicros(3000),
                             MakeVersion(TimestampFromMicros(30), 0), "new"},
                    CellData{TimestampFromMicros(2000),
                             MakeVersion(TimestampFromMicros(20), 0), "mid"},
                    CellData{TimestampFromMicros(1000),
                             MakeVersion(TimestampFromMicros(10), 0), "old"}}});
    row.families.push_back(std::move(f));
  }
  return row;
}

TEST(RowCodecTest, MayNeedCompactionOnlyWithTombstonesOrVersions) {
  auto check = [](const RowData& row, bool expected) {
    std::string storage;
    EncodeRow(row, &storage);
    EXPECT_EQ(MayNeedCompaction(row), expected);
    EXPECT_EQ(MayNeedCompaction(std::string_view(storage)), expected);
  };
  RowData single;
  for (uint32_t id : {0u, 3u}) {
    FamilyData f{id, kNoVersion, {}};
    for (const char* q : {"a", "b"}) {
      f.columns.push_back(ColumnData{
          q,
          {},
          {CellData{TimestampFromMicros(1000),
                    MakeVersion(TimestampFromMicros(1), 0), "value"}}});
    }
    single.families.push_back(std::move(f));
  }
  check(RowData{}, false);
  check(single, false);
  check(ThreeFamilies(), true);  // three versions per column

  RowData row_tombstone = single;
  row_tombstone.tombstone = MakeVersion(TimestampFromMicros(5), 0);
  check(row_tombstone, true);
  RowData family_tombstone = single;
  family_tombstone.families[1].tombstone =
      MakeVersion(TimestampFromMicros(5), 0);
  check(family_tombstone, true);
  RowData column_tombstone = single;
  column_tombstone.families[1].columns[1].tombstones.push_back(
      ColumnTombstone{TimestampFromMicros(0), TimestampFromMicros(0),
                      MakeVersion(TimestampFromMicros(5), 0)});
  check(column_tombstone, true);
}

TEST(RowCodecTest, AppendLiveCellsWithoutTombstonesReturnsAllInStorageOrder) {
  std::string storage;
  std::vector<LiveCell> live = Live(ThreeFamilies(), &storage);
  ASSERT_EQ(live.size(), 9u);
  for (size_t i = 0; i < live.size(); ++i) {
    EXPECT_EQ(live[i].family_id, i / 3);
    EXPECT_EQ(live[i].qualifier, "c");
    EXPECT_EQ(Micros(live[i].timestamp), 3000 - 1000 * int64_t(i % 3));
  }
}

TEST(RowCodecTest, AppendLiveCellsHonoursRowTombstone) {
  RowData row = ThreeFamilies();
  row.tombstone = MakeVersion(TimestampFromMicros(20),
                              0);  // hides only version 10 (strictly older)
  std::string storage;
  std::vector<LiveCell> live = Live(row, &storage);
  ASSERT_EQ(live.size(), 6u);
  for (const LiveCell& c : live) EXPECT_NE(c.value, "old");
}

TEST(RowCodecTest, AppendLiveCellsHonoursFamilyTombstone) {
  RowData row = ThreeFamilies();
  row.families[1].tombstone = MakeVersion(TimestampFromMicros(31), 0);
  std::string storage;
  std::vector<LiveCell> live = Live(row, &storage);
  ASSERT_EQ(live.size(), 6u);
  for (const LiveCell& c : live) EXPECT_NE(c.family_id, 1u);
}

TEST(RowCodecTest, AppendLiveCellsHonoursColumnTombstoneRangeAndVersion) {
  RowData row = ThreeFamilies();
  // [2000, 3000): covers only the 2000 cell (start inclusive, end exclusive).
  row.families[0].columns[0].tombstones.push_back(
      ColumnTombstone{TimestampFromMicros(2000), TimestampFromMicros(3000),
                      MakeVersion(TimestampFromMicros(40), 0)});
  // Unbounded end, but an older version than every cell: covers nothing.
  row.families[1].columns[0].tombstones.push_back(
      ColumnTombstone{TimestampFromMicros(0), TimestampFromMicros(0),
                      MakeVersion(TimestampFromMicros(5), 0)});
  // Unbounded end from 2000 at a version between the cells': covers "mid".
  row.families[2].columns[0].tombstones.push_back(
      ColumnTombstone{TimestampFromMicros(2000), TimestampFromMicros(0),
                      MakeVersion(TimestampFromMicros(25), 0)});
  std::string storage;
  std::vector<LiveCell> live = Live(row, &storage);
  std::vector<std::pair<uint32_t, std::string>> got;
  for (const LiveCell& c : live) got.emplace_back(c.family_id, c.value);
  EXPECT_EQ(got, (std::vector<std::pair<uint32_t, std::string>>{{0, "new"},
                                                                {0, "old"},
                                                                {1, "new"},
                                                                {1, "mid"},
                                                                {1, "old"},
                                                                {2, "new"},
                                                                {2, "old"}}));
}

TEST(RowCodecTest, AppendLiveCellsHandlesManyColumnTombstones) {
  RowData row;
  FamilyData f{0, kNoVersion, {ColumnData{"c", {}, {}}}};
  for (int i = 9; i >= 0; --i) {
    f.columns[0].cells.push_back(
        CellData{TimestampFromMicros(i * int64_t{1000}),
                 MakeVersion(TimestampFromMicros(1), 0), "v"});
  }
  // Six tombstones (more than the inline buffer), each covering one even ts.
  for (int i = 0; i < 10; i += 2) {
    f.columns[0].tombstones.push_back(
        ColumnTombstone{TimestampFromMicros(i * int64_t{1000}),
                        TimestampFromMicros(i * int64_t{1000} + 1000),
                        MakeVersion(TimestampFromMicros(2), 0)});
  }
  f.columns[0].tombstones.push_back(
      ColumnTombstone{TimestampFromMicros(100000), TimestampFromMicros(0),
                      MakeVersion(TimestampFromMicros(2), 0)});
  row.families.push_back(f);
  std::string storage;
  std::vector<LiveCell> live = Live(row, &storage);
  std::vector<int64_t> ts;
  for (const LiveCell& c : live) ts.push_back(Micros(c.timestamp));
  EXPECT_EQ(ts, (std::vector<int64_t>{9000, 7000, 5000, 3000, 1000}));
}

// A random row: families 0, 2 and 4 (some), qualifiers "", "a" and "b"
// (some), column tombstones, cells at 0-5 ms, optional row and family
// tombstones. Values point to static storage.
RowData RandomRow(sim::Rng& rng) {
  static const std::string kValues[] = {"a", "b", "", std::string("\0", 1)};
  RowData row;
  row.tombstone = rng.Bernoulli(0.3) ? rng.Uniform(50) : kNoVersion;
  const int families = static_cast<int>(rng.Uniform(3));
  for (int f = 0; f < families; ++f) {
    FamilyData fd{static_cast<uint32_t>(f * 2),
                  rng.Bernoulli(0.3) ? rng.Uniform(50) : kNoVersion,
                  {}};
    static const char* kQualifiers[] = {"", "a", "b"};
    for (const char* q : kQualifiers) {
      if (rng.Bernoulli(0.4)) continue;
      ColumnData cd{q, {}, {}};
      const int tombstones = static_cast<int>(rng.Uniform(7));
      for (int t = 0; t < tombstones; ++t) {
        const int64_t start = int64_t(rng.Uniform(6)) * 1000;
        const int64_t end =
            rng.Bernoulli(0.3) ? 0 : start + int64_t(rng.Uniform(4)) * 1000;
        cd.tombstones.push_back(ColumnTombstone{TimestampFromMicros(start),
                                                TimestampFromMicros(end),
                                                rng.Uniform(50)});
      }
      for (int64_t ts = 5000; ts >= 0; ts -= 1000) {
        if (rng.Bernoulli(0.5)) {
          cd.cells.push_back(CellData{TimestampFromMicros(ts), rng.Uniform(50),
                                      kValues[rng.Uniform(4)]});
        }
      }
      fd.columns.push_back(std::move(cd));
    }
    row.families.push_back(std::move(fd));
  }
  return row;
}

TEST(RowCodecTest, IsCoveredAgreesWithAppendLiveCellsOnRandomRows) {
  sim::Rng rng(2024);
  for (int iter = 0; iter < 300; ++iter) {
    const RowData row = RandomRow(rng);
    std::vector<LiveCell> expected;
    for (const FamilyData& f : row.families) {
      for (const ColumnData& c : f.columns) {
        for (const CellData& cell : c.cells) {
          if (!IsCovered(row, f, c, cell)) {
            expected.push_back(
                LiveCell{f.id, c.qualifier, cell.timestamp, cell.value});
          }
        }
      }
    }
    std::string storage;
    std::vector<LiveCell> live = Live(row, &storage);
    ASSERT_EQ(live.size(), expected.size()) << "iteration " << iter;
    for (size_t i = 0; i < live.size(); ++i) {
      EXPECT_EQ(live[i].family_id, expected[i].family_id);
      EXPECT_EQ(live[i].qualifier, expected[i].qualifier);
      EXPECT_EQ(live[i].timestamp, expected[i].timestamp);
      EXPECT_EQ(live[i].value, expected[i].value);
    }
  }
}

// The value of a cell an edit test writes: usually short, sometimes
// `long_value`.
std::string_view NewValue(sim::Rng& rng, const std::string& long_value) {
  return rng.Bernoulli(0.2) ? std::string_view(long_value)
                            : std::string_view("new");
}

TEST(RowEditsTest, WithCellWrittenIsTheGeneralWriteByteForByteWhenItApplies) {
  sim::Rng rng(99);
  // Long enough for a two-byte length varint; 200 cells cross the one-byte
  // cell count.
  const std::string long_value(300, 'v');
  int created = 0, prepended = 0, replaced = 0, older_lost = 0, declined = 0;
  for (int iter = 0; iter < 8000; ++iter) {
    RowData row = RandomRow(rng);
    if (iter % 50 == 0 && !row.families.empty() &&
        !row.families[0].columns.empty()) {
      auto& cells = row.families[0].columns[0].cells;
      cells.clear();
      for (int64_t ts = 200'000; ts > 0; ts -= 1000) {
        cells.push_back(CellData{TimestampFromMicros(ts), 1, "x"});
      }
    }
    const bool absent = rng.Bernoulli(0.1);
    const RowRecord old("key", row);
    // The general path: the cell written into the decoded row.
    RowData edited = absent ? RowData{} : DecodeRow(old.encoded());
    const uint32_t family = static_cast<uint32_t>(rng.Uniform(5));
    static const char* kQualifiers[] = {"", "a", "b", "c"};
    const std::string_view qualifier = kQualifiers[rng.Uniform(4)];
    ColumnData* column = nullptr;
    for (FamilyData& f : edited.families) {
      if (f.id != family) continue;
      for (ColumnData& c : f.columns) {
        if (c.qualifier == qualifier) column = &c;
      }
    }
    CellData* newest = column != nullptr && !column->cells.empty()
                           ? &column->cells.front()
                           : nullptr;
    // Mostly a millisecond RandomRow's cells use (0-5) or a later one,
    // often the newest cell's, sometimes off the millisecond grid.
    int64_t ts = static_cast<int64_t>(rng.Uniform(10)) * 1000 +
                 (rng.Bernoulli(0.1) ? 999'000 : 0);
    if (newest != nullptr && rng.Bernoulli(0.4)) ts = Micros(newest->timestamp);
    if (rng.Bernoulli(0.05)) ts += 1;
    const Version version = rng.Uniform(60);
    const std::string_view value = NewValue(rng, long_value);
    Version superseded = 1;
    const RowRecord got =
        WithCellWritten("key", absent ? nullptr : &old, family, qualifier,
                        TimestampFromMicros(ts), version, value, &superseded);

    const bool on_grid = ts % 1000 == 0;
    const bool prepend = column != nullptr &&
                         (newest == nullptr || ts > Micros(newest->timestamp));
    const bool same_millisecond =
        newest != nullptr && ts == Micros(newest->timestamp);
    if (on_grid && same_millisecond && version < newest->version) ++older_lost;
    const bool replace = same_millisecond && version >= newest->version;
    const bool applies = on_grid && (absent || prepend || replace);
    ASSERT_EQ(got.valid(), applies) << "iteration " << iter;
    if (!applies) {
      ++declined;
      continue;
    }
    const CellData cell{TimestampFromMicros(ts), version, value};
    if (absent) {
      ++created;
      edited.families.push_back(
          FamilyData{family, kNoVersion, {ColumnData{qualifier, {}, {cell}}}});
    } else if (prepend) {
      ++prepended;
      column->cells.insert(column->cells.begin(), cell);
    } else {
      ++replaced;
      *newest = cell;
    }
    const RowRecord expected("key", edited);
    EXPECT_EQ(got.key(), "key");
    EXPECT_EQ(got.encoded(), expected.encoded()) << "iteration " << iter;
    EXPECT_EQ(got.bytes(), expected.bytes());
  }
  // Every outcome was exercised.
  EXPECT_GT(created, 300);
  EXPECT_GT(prepended, 150);
  EXPECT_GT(replaced, 100);
  EXPECT_GT(older_lost, 20);
  EXPECT_GT(declined, 1000);
  // A negative timestamp is left to the general path.
  Version superseded = 0;
  EXPECT_FALSE(WithCellWritten("k", nullptr, 0, "q", TimestampFromMicros(-5000),
                               2, "y", &superseded)
                   .valid());
}

TEST(RowCodecTest, NewestLiveCellIsTheFirstLiveCellOfItsColumn) {
  sim::Rng rng(31);
  int found = 0;
  int hidden = 0;  // the column has cells, all of them covered
  for (int iter = 0; iter < 2000; ++iter) {
    const RowData row = RandomRow(rng);
    std::string storage;
    const std::vector<LiveCell> live = Live(row, &storage);
    const RowRecord record("key", row);
    for (uint32_t family : {0u, 1u, 2u, 4u}) {
      for (std::string_view qualifier : {"", "a", "b", "c"}) {
        const LiveCell* first = nullptr;
        for (const LiveCell& c : live) {
          if (c.family_id == family && c.qualifier == qualifier) {
            first = &c;
            break;
          }
        }
        const std::optional<LiveCell> got =
            NewestLiveCell(record.encoded(), family, qualifier);
        ASSERT_EQ(got.has_value(), first != nullptr)
            << "iteration " << iter << " family " << family << " column '"
            << qualifier << "'";
        if (!got) {
          for (const FamilyData& f : row.families) {
            for (const ColumnData& c : f.columns) {
              if (f.id == family && c.qualifier == qualifier &&
                  !c.cells.empty()) {
                ++hidden;
              }
            }
          }
          continue;
        }
        ++found;
        EXPECT_EQ(got->family_id, family);
        EXPECT_EQ(got->qualifier, qualifier);
        EXPECT_EQ(got->timestamp, first->timestamp);
        EXPECT_EQ(got->value, first->value);
      }
    }
  }
  EXPECT_GT(found, 1000);
  EXPECT_GT(hidden, 100);
}

// Mostly one column without tombstones (0-10 cells, some with long values),
// sometimes a tombstone, a second column or a second family.
RowData MostlyLoneColumnRow(sim::Rng& rng) {
  static const std::string kLong(200, 'x');
  RowData row;
  if (rng.Bernoulli(0.05)) row.tombstone = 3;
  row.families.push_back(
      FamilyData{static_cast<uint32_t>(rng.Uniform(300)),
                 rng.Bernoulli(0.05) ? Version{4} : kNoVersion,
                 {ColumnData{"q", {}, {}}}});
  ColumnData& c = row.families[0].columns[0];
  if (rng.Bernoulli(0.05))
    c.tombstones.push_back(
        ColumnTombstone{TimestampFromMicros(0), TimestampFromMicros(0), 5});
  const int cells = static_cast<int>(rng.Uniform(11));
  for (int k = 0; k < cells; ++k) {
    c.cells.push_back(CellData{
        TimestampFromMicros((cells - k) * 1000 + 1'000'000'000),
        rng.Uniform(1000),
        rng.Bernoulli(0.3) ? std::string_view(kLong) : std::string_view("v")});
  }
  if (rng.Bernoulli(0.05)) {
    row.families[0].columns.push_back(
        ColumnData{"r", {}, {{TimestampFromMicros(1000), 1, "w"}}});
  }
  if (rng.Bernoulli(0.05)) {
    row.families.push_back(FamilyData{
        row.families[0].id + 1,
        kNoVersion,
        {ColumnData{"q", {}, {{TimestampFromMicros(1000), 1, "w"}}}}});
  }
  return row;
}

TEST(RowEditsTest, KeepNewestCellsIsDecodeTrimEncodeByteForByte) {
  sim::Rng rng(5);
  int trimmed = 0;
  int other = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    const RowData row = MostlyLoneColumnRow(rng);
    const RowRecord old("key", row);
    const ColumnData& c = row.families[0].columns[0];
    const bool lone = row.tombstone == kNoVersion && row.families.size() == 1 &&
                      row.families[0].tombstone == kNoVersion &&
                      row.families[0].columns.size() == 1 &&
                      c.tombstones.empty() && !c.cells.empty() &&
                      c.cells.size() <= LoneColumn::kMaxCells;
    LoneColumn column;
    ASSERT_EQ(ReadLoneColumn(old.encoded(), &column), lone)
        << "iteration " << iter;
    if (!lone) {
      ++other;
      continue;
    }
    EXPECT_EQ(column.family_id, row.families[0].id);
    ASSERT_EQ(column.cells, c.cells.size());
    for (size_t k = 0; k < column.cells; ++k) {
      EXPECT_EQ(column.timestamps[k], c.cells[k].timestamp);
    }
    for (size_t keep = 1; keep < column.cells; ++keep) {
      RowData expected_row = row;
      expected_row.families[0].columns[0].cells.resize(keep);
      const RowRecord expected("key", expected_row);
      const RowRecord got = KeepNewestCells(old, column, keep);
      EXPECT_EQ(got.key(), "key");
      EXPECT_EQ(got.encoded(), expected.encoded())
          << "iteration " << iter << " keep " << keep;
      ++trimmed;
    }
  }
  EXPECT_GT(trimmed, 1000);  // both outcomes were exercised
  EXPECT_GT(other, 100);
}

TEST(RowCodecTest, IsCoveredUsesStrictlyOlderVersions) {
  RowData row;
  FamilyData f{0, kNoVersion, {}};
  ColumnData c{
      "c",
      {ColumnTombstone{TimestampFromMicros(0), TimestampFromMicros(0), 100}},
      {}};
  const CellData same{TimestampFromMicros(1000), 100, "v"};
  const CellData older{TimestampFromMicros(1000), 99, "v"};
  EXPECT_FALSE(IsCovered(row, f, c, same));
  EXPECT_TRUE(IsCovered(row, f, c, older));
  ColumnData none{"c", {}, {}};
  row.tombstone = 100;
  EXPECT_FALSE(IsCovered(row, f, none, same));
  EXPECT_TRUE(IsCovered(row, f, none, older));
  row.tombstone = kNoVersion;
  f.tombstone = 100;
  EXPECT_FALSE(IsCovered(row, f, none, same));
  EXPECT_TRUE(IsCovered(row, f, none, older));
}

TEST(RowCodecDeathTest, DecodeRowAbortsOnTruncatedInput) {
  RowData row = ThreeFamilies();
  std::string storage;
  EncodeRow(row, &storage);
  EXPECT_DEATH(
      DecodeRow(std::string_view(storage).substr(0, storage.size() - 1)),
      "truncated row encoding");
  EXPECT_DEATH(DecodeRow(storage + "x"), "trailing bytes");
}

TEST(RowCodecTest, EmptyLiveCellsForEmptyRow) {
  std::string storage;
  EXPECT_THAT(Live(RowData{}, &storage), IsEmpty());
}

}  // namespace
}  // namespace btsim::cluster
