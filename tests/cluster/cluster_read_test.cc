// Tests of reads through Cluster: row sets, ranges, resumption, filters and
// visitors, and reads and samples across many small tablets.
#include "cluster/cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/filter.h"
#include "tests/cluster/engine_test_util.h"

namespace btsim::cluster {
namespace {

using test_util::C;
using test_util::Cell;
using test_util::CreateFamily;
using test_util::DelCol;
using test_util::DelFam;
using test_util::DelRow;
using test_util::Keys;
using test_util::Row;
using test_util::Set;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ClusterTest = test_util::ClusterTest;

// ================================================================ Reads

class ReadTest : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    for (const char* k : {"a", "b", "c", "d", "e"}) {
      Put(k, "cf", "q", 1000, std::string("v") + k);
    }
  }
};

TEST_F(ReadTest, EmptyRowSetReadsEveryRowInOrder) {
  RowSet all;
  EXPECT_THAT(Keys(ReadRowSet(all)), ElementsAre("a", "b", "c", "d", "e"));
  EXPECT_THAT(Keys(ReadRowSet(all, true)),
              ElementsAre("e", "d", "c", "b", "a"));
  EXPECT_THAT(Keys(Read()), ElementsAre("a", "b", "c", "d", "e"));
  EXPECT_EQ(Read()[2], (Row{"c", {C("cf", "q", 1000, "vc")}}));
}

TEST_F(ReadTest, KeysAreReturnedOnceInOrderAndMissingKeysSkipped) {
  RowSet set;
  for (const char* k : {"d", "b", "zz", "d", "b", "0"}) set.AddKey(k);
  EXPECT_THAT(Keys(ReadRowSet(set)), ElementsAre("b", "d"));
  EXPECT_THAT(Keys(ReadRowSet(set, true)), ElementsAre("d", "b"));
}

struct BoundCase {
  Bound start;
  Bound end;
  std::vector<std::string> expected;
};

TEST_F(ReadTest, RangesWithEveryBoundKind) {
  const std::vector<BoundCase> cases = {
      {Bound::Unbounded(), Bound::Unbounded(), {"a", "b", "c", "d", "e"}},
      {Bound::Unbounded(), Bound::Closed("c"), {"a", "b", "c"}},
      {Bound::Unbounded(), Bound::Open("c"), {"a", "b"}},
      {Bound::Closed("b"), Bound::Unbounded(), {"b", "c", "d", "e"}},
      {Bound::Closed("b"), Bound::Closed("d"), {"b", "c", "d"}},
      {Bound::Closed("b"), Bound::Open("d"), {"b", "c"}},
      {Bound::Open("b"), Bound::Unbounded(), {"c", "d", "e"}},
      {Bound::Open("b"), Bound::Closed("d"), {"c", "d"}},
      {Bound::Open("b"), Bound::Open("d"), {"c"}},
      {Bound::Closed("bb"), Bound::Closed("cc"), {"c"}},
      {Bound::Open(""), Bound::Unbounded(), {"a", "b", "c", "d", "e"}},
      {Bound::Closed(""), Bound::Open("a"), {}},
      {Bound::Open("e"), Bound::Unbounded(), {}},
      {Bound::Closed("b"), Bound::Closed("b"), {"b"}},
  };
  for (const BoundCase& c : cases) {
    RowSet set;
    set.AddRange(Interval{c.start, c.end});
    SCOPED_TRACE("start=" + c.start.value + " end=" + c.end.value);
    EXPECT_EQ(Keys(ReadRowSet(set)), c.expected);
    std::vector<std::string> reversed(c.expected.rbegin(), c.expected.rend());
    EXPECT_EQ(Keys(ReadRowSet(set, true)), reversed);
  }
}

TEST_F(ReadTest, OverlappingRangesAndKeysAreDeduplicated) {
  RowSet set;
  set.AddRange(Interval{Bound::Closed("a"), Bound::Closed("c")});
  set.AddRange(Interval{Bound::Closed("b"), Bound::Closed("d")});
  set.AddRange(Interval{Bound::Open("a"), Bound::Open("c")});
  set.AddKey("c");
  set.AddKey("a");
  set.AddRange(Interval{Bound::Closed("a"), Bound::Closed("b")});
  EXPECT_THAT(Keys(ReadRowSet(set)), ElementsAre("a", "b", "c", "d"));
  EXPECT_THAT(Keys(ReadRowSet(set, true)), ElementsAre("d", "c", "b", "a"));
}

TEST_F(ReadTest, RangeNestedInsideAnotherRange) {
  RowSet set;
  set.AddRange(Interval{Bound::Unbounded(), Bound::Unbounded()});
  set.AddRange(Interval{Bound::Closed("b"), Bound::Closed("c")});
  EXPECT_THAT(Keys(ReadRowSet(set)), ElementsAre("a", "b", "c", "d", "e"));
  EXPECT_THAT(Keys(ReadRowSet(set, true)),
              ElementsAre("e", "d", "c", "b", "a"));
}

TEST_F(ReadTest, EmptyAndInvertedRangesReturnNothing) {
  RowSet set;
  set.AddRange(Interval{Bound::Open("b"), Bound::Open("b")});
  set.AddRange(Interval{Bound::Closed("d"), Bound::Closed("b")});
  set.AddRange(Interval{Bound::Closed("c"), Bound::Open("c")});
  EXPECT_THAT(ReadRowSet(set), IsEmpty());
  EXPECT_THAT(ReadRowSet(set, true), IsEmpty());
  set.AddKey("e");
  EXPECT_THAT(Keys(ReadRowSet(set)), ElementsAre("e"));
}

TEST_F(ReadTest, ResumeAfterForwardAndReversed) {
  RowSet set;
  set.AddRange(Interval{Bound::Closed("b"), Bound::Unbounded()});
  ReadOptions options;
  options.rows = &set;
  options.resume_after = "c";
  EXPECT_THAT(Keys(Read(options)), ElementsAre("d", "e"));
  options.resume_after = "bb";  // not a stored key
  EXPECT_THAT(Keys(Read(options)), ElementsAre("c", "d", "e"));
  options.reversed = true;
  options.resume_after = "d";
  EXPECT_THAT(Keys(Read(options)), ElementsAre("c", "b"));
  options.resume_after = "b";
  EXPECT_THAT(Read(options), IsEmpty());
}

// A read with max_rows_examined stops after that many stored rows, rows
// passed again by overlapping ranges included, and resumes from where it
// stopped; together the batches return every row once.
TEST_F(ReadTest, ABoundedReadStopsAndResumesOverOverlappingRanges) {
  RowSet set;
  for (int i = 0; i < 3; ++i) {
    set.AddRange(Interval{Bound::Unbounded(), Bound::Unbounded()});
  }
  for (bool reversed : {false, true}) {
    SCOPED_TRACE(reversed);
    std::optional<std::string> stopped;
    ReadOptions options;
    options.rows = &set;
    options.reversed = reversed;
    options.max_rows_examined = 2;
    options.stopped_at = &stopped;
    std::vector<std::vector<std::string>> batches;
    std::vector<std::string> stops;
    for (int batch = 0; batch < 10; ++batch) {
      batches.push_back(Keys(Read(options)));
      if (!stopped) break;
      stops.push_back(*stopped);
      options.resume_after = *stopped;
    }
    if (!reversed) {
      // The third batch returns e, passes e again in the second range (the
      // two rows it may examine), and stops there.
      EXPECT_THAT(batches,
                  ElementsAre(ElementsAre("a", "b"), ElementsAre("c", "d"),
                              ElementsAre("e"), IsEmpty()));
      EXPECT_THAT(stops, ElementsAre("b", "d", "e"));
    } else {
      EXPECT_THAT(batches,
                  ElementsAre(ElementsAre("e", "d"), ElementsAre("c", "b"),
                              ElementsAre("a"), IsEmpty()));
      EXPECT_THAT(stops, ElementsAre("d", "b", "a"));
    }
  }
}

TEST_F(ReadTest, FilterIsApplied) {
  Put("b", "cf", "q", 2000, "newer");
  Put("b", "cf", "r", 1000, "other");
  Filter latest = Filter::CellsPerColumnLimit(1).value();
  ReadOptions options;
  options.filter = &latest;
  std::vector<Row> rows = Read(options);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(
      rows[1],
      (Row{"b", {C("cf", "q", 2000, "newer"), C("cf", "r", 1000, "other")}}));
  EXPECT_EQ(ReadRow("b").size(), 3u);
}

TEST_F(ReadTest, RowsWhoseCellsAreAllFilteredOutAreNotVisited) {
  Filter only_b_or_d = Filter::ValueRegex("v[bd]").value();
  ReadOptions options;
  options.filter = &only_b_or_d;
  EXPECT_THAT(Keys(Read(options)), ElementsAre("b", "d"));
  options.reversed = true;
  EXPECT_THAT(Keys(Read(options)), ElementsAre("d", "b"));
  Filter none = Filter::BlockAll();
  options.filter = &none;
  EXPECT_THAT(Read(options), IsEmpty());
}

TEST_F(ReadTest, LabelsFromTheFilterReachTheVisitor) {
  Filter label = Filter::ApplyLabel("seen");
  ReadOptions options;
  options.filter = &label;
  std::vector<Row> rows = Read(options);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].cells[0].label, "seen");
}

TEST_F(ReadTest, RowsWithOnlyDeletedCellsAreNotVisited) {
  ASSERT_TRUE(Mutate("b", {DelRow()}).ok());
  ASSERT_TRUE(Mutate("c", {DelCol("cf", "q")}).ok());
  ASSERT_TRUE(Mutate("d", {DelFam("cf")}).ok());
  EXPECT_THAT(Keys(Read()), ElementsAre("a", "e"));
}

TEST_F(ReadTest, VisitorReturningFalseStopsTheRead) {
  std::vector<std::string> seen;
  Status s = cluster_.ReadRows(
      "t", {}, [&](std::string_view key, std::span<const CellView>) {
        seen.emplace_back(key);
        return key != "c";
      });
  EXPECT_TRUE(s.ok());
  EXPECT_THAT(seen, ElementsAre("a", "b", "c"));
}

TEST_F(ClusterTest, AddContentsVisitsEveryTableAndRowItAdds) {
  ASSERT_TRUE(CreateTable("a", {CreateFamily("f")}).ok());
  Put("r2", "cf", "q", 2000, "new");
  Put("r2", "cf", "q", 1000, "old");
  Put("r1", "cf2", "x", 1000, "v");
  Put("r1", "f", "q", 1000, "w", "a");
  ASSERT_TRUE(Mutate("r3", {DelRow()}).ok());  // no live cells: not added
  std::vector<std::pair<std::string, Row>> seen;
  sim::Fingerprint visited;
  cluster_.AddContents(
      &visited, [&](std::string_view table, std::string_view key,
                    std::span<const CellView> cells) {
        seen.emplace_back(std::string(table), test_util::CopyRow(key, cells));
      });
  // Tables in id order, rows in key order, cells as an unfiltered read
  // returns them.
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].first, "a");
  EXPECT_EQ(seen[0].second, Read({}, "a").at(0));
  EXPECT_EQ(seen[1].first, "t");
  EXPECT_EQ(seen[2].first, "t");
  const std::vector<Row> rows = Read();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(seen[1].second, rows[0]);
  EXPECT_EQ(seen[2].second, rows[1]);
  EXPECT_EQ(seen[2].second.cells,
            std::vector<Cell>(
                {C("cf", "q", 2000, "new"), C("cf", "q", 1000, "old")}));
  // The visitor changes nothing in the fingerprint.
  sim::Fingerprint plain;
  cluster_.AddContents(&plain);
  EXPECT_EQ(visited, plain);
}

TEST_F(ClusterTest, CellsAreInCanonicalOrderWhenFamiliesWereCreatedOutOfOrder) {
  const std::vector<FamilyModification> families = {
      CreateFamily("zeta"), CreateFamily("alpha"), CreateFamily("mid")};
  ASSERT_TRUE(CreateTable("t2", families).ok());
  ASSERT_TRUE(
      Mutate(
          "r",
          {Set("zeta", "a", 1000, "z"), Set("mid", "b", 1000, "m1"),
           Set("alpha", "b", 1000, "a2"), Set("mid", "a", 1000, "m0"),
           Set("alpha", "a", 2000, "a1new"), Set("alpha", "a", 1000, "a1old")},
          "t2")
          .ok());
  EXPECT_THAT(
      ReadRow("r", "t2"),
      ElementsAre(C("alpha", "a", 2000, "a1new"),
                  C("alpha", "a", 1000, "a1old"), C("alpha", "b", 1000, "a2"),
                  C("mid", "a", 1000, "m0"), C("mid", "b", 1000, "m1"),
                  C("zeta", "a", 1000, "z")));
  cluster_.Compact();
  EXPECT_EQ(ReadRow("r", "t2").size(), 6u);
  EXPECT_EQ(ReadRow("r", "t2")[0], C("alpha", "a", 2000, "a1new"));
}

// ================================================================ Tablets

class SmallTabletClusterTest : public ClusterTest {
 protected:
  SmallTabletClusterTest() : ClusterTest(TableOptions{1 << 20, 8, 4}) {}
};

std::string NumKey(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%04d", i);
  return buf;
}

TEST_F(SmallTabletClusterTest, ReversedScanIsDescendingAcrossTablets) {
  std::vector<std::string> keys;
  for (int i = 0; i < 120; ++i) {
    Put(NumKey((i * 37) % 120), "cf", "q", 1000, "v");
    keys.push_back(NumKey(i));
  }
  ASSERT_GT(table().Stats().tablets, 10);
  ReadOptions options;
  options.reversed = true;
  std::vector<std::string> reversed(keys.rbegin(), keys.rend());
  EXPECT_EQ(Keys(Read(options)), reversed);
  EXPECT_EQ(Keys(Read()), keys);
  options.resume_after = NumKey(60);
  EXPECT_EQ(Keys(Read(options)),
            std::vector<std::string>(reversed.begin() + 60, reversed.end()));
}

TEST_F(SmallTabletClusterTest, PointReadsFindEachKeyOnlyInItsOwnTablet) {
  // Even keys stored; every key from before the first to after the last
  // read alone: tablet starts, keys between a tablet's last row and the
  // next tablet's start, keys between rows.
  for (int i = 0; i < 240; i += 2) Put(NumKey(i), "cf", "q", 1000, "v");
  ASSERT_GT(table().Stats().tablets, 10);
  for (int i = -1; i <= 240; ++i) {
    const std::string key = i < 0 ? "a" : NumKey(i);
    RowSet set;
    set.AddKey(key);
    const std::vector<std::string> expected =
        i >= 0 && i < 240 && i % 2 == 0 ? std::vector<std::string>{key}
                                        : std::vector<std::string>{};
    EXPECT_EQ(Keys(ReadRowSet(set)), expected) << key;
    EXPECT_EQ(Keys(ReadRowSet(set, true)), expected) << key;
  }
  // A point read after the resume point still reads; one at or before it
  // does not.
  RowSet set;
  set.AddKey(NumKey(100));
  ReadOptions options;
  options.rows = &set;
  options.resume_after = NumKey(99);
  EXPECT_THAT(Keys(Read(options)), ElementsAre(NumKey(100)));
  options.resume_after = NumKey(100);
  EXPECT_THAT(Read(options), IsEmpty());
}

TEST_F(SmallTabletClusterTest, CreateTableSplitsAppearInSampleRowKeys) {
  ASSERT_TRUE(CreateTable("s", {CreateFamily("cf")}, {"k0100", "k0050"}).ok());
  for (int i = 0; i < 150; i += 10) {
    Put(NumKey(i), "cf", "q", 1000, "v", "s");
  }
  std::vector<KeySample> samples = table("s").SampleRowKeys();
  std::vector<std::string> sample_keys;
  for (const KeySample& s : samples) sample_keys.push_back(s.row_key);
  EXPECT_EQ(sample_keys[0], "k0050");
  EXPECT_EQ(sample_keys.back(), "");
  EXPECT_NE(std::find(sample_keys.begin(), sample_keys.end(), "k0100"),
            sample_keys.end());
  EXPECT_EQ(samples.back().offset_bytes, table("s").Stats().bytes);

  ASSERT_TRUE(cluster_.DropRowRange("s", "").ok());
  cluster_.Compact();
  samples = table("s").SampleRowKeys();
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].row_key, "k0050");
  EXPECT_EQ(samples[1].row_key, "k0100");
}

TEST_F(SmallTabletClusterTest, DeletesPlusCompactionMergeTablets) {
  for (int i = 0; i < 160; ++i) Put(NumKey(i), "cf", "q", 1000, "v");
  const int64_t tablets = table().Stats().tablets;
  std::vector<RowMutations> deletes;
  for (int i = 0; i < 160; ++i) {
    if (i % 40 != 7) deletes.push_back({NumKey(i), {DelRow()}});
  }
  ASSERT_TRUE(cluster_.MutateRows("t", deletes).ok());
  cluster_.Compact();
  EXPECT_LT(table().Stats().tablets, tablets);
  EXPECT_LE(table().Stats().tablets, 5);
  EXPECT_THAT(Keys(Read()),
              ElementsAre(NumKey(7), NumKey(47), NumKey(87), NumKey(127)));
}

}  // namespace
}  // namespace btsim::cluster
