// Tests of Table's tablets used directly: splits, merges, samples, initial
// splits, reads across tablets, and writes given probes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/table.h"
#include "tests/cluster/table_fixture.h"

namespace btsim::cluster::table_test {
namespace {

using test_util::DelCol;
using test_util::Keys;
using ::testing::ElementsAre;

// ------------------------------------------------------------------ Tablets

class SmallTabletTest : public TableTest {
 protected:
  SmallTabletTest() : TableTest(TableOptions{1 << 20, 8, 4}) {}
};

TEST_F(SmallTabletTest, SplitsWhenRowLimitIsExceeded) {
  EXPECT_EQ(table_.Stats().tablets, 1);
  for (int i = 0; i < 8; ++i) Put(Key(i));
  EXPECT_EQ(table_.Stats().tablets, 1);
  Put(Key(8));
  EXPECT_EQ(table_.Stats().tablets, 2);
  for (int i = 9; i < 200; ++i) Put(Key(i));
  const TableStats stats = table_.Stats();
  EXPECT_EQ(stats.rows, 200);
  EXPECT_GE(stats.tablets, 200 / 8);
}

TEST_F(SmallTabletTest, SampleRowKeysAreIncreasingAndEndWithTheTotal) {
  for (int i = 0; i < 100; ++i) Put(Key(i), std::string(i % 7 * 10, 'v'));
  std::vector<KeySample> samples = table_.SampleRowKeys();
  ASSERT_EQ(static_cast<int64_t>(samples.size()), table_.Stats().tablets);
  for (size_t i = 0; i + 1 < samples.size(); ++i) {
    EXPECT_FALSE(samples[i].row_key.empty());
    EXPECT_GT(samples[i].offset_bytes, 0);
    if (i > 0) {
      EXPECT_LT(samples[i - 1].row_key, samples[i].row_key);
      EXPECT_LT(samples[i - 1].offset_bytes, samples[i].offset_bytes);
    }
  }
  EXPECT_EQ(samples.back().row_key, "");
  EXPECT_EQ(samples.back().offset_bytes, table_.Stats().bytes);
  EXPECT_LT(samples[samples.size() - 2].offset_bytes,
            samples.back().offset_bytes);
}

TEST_F(SmallTabletTest, ReadsAcrossManyTabletsInBothDirections) {
  std::vector<std::string> expected;
  for (int i = 0; i < 300; ++i) {
    // Insert in a scrambled order so splits happen everywhere.
    Put(Key(i * 7 % 300));
    expected.push_back(Key(i));
  }
  ASSERT_GT(table_.Stats().tablets, 30);
  EXPECT_EQ(Keys(Read()), expected);
  std::vector<std::string> reversed(expected.rbegin(), expected.rend());
  EXPECT_EQ(Keys(Read(nullptr, true)), reversed);

  RowSet set;
  set.AddRange(Interval{Bound::Open(Key(17)), Bound::Closed(Key(250))});
  set.AddKey(Key(3));
  set.AddKey(Key(299));
  std::vector<std::string> want = {Key(3)};
  for (int i = 18; i <= 250; ++i) want.push_back(Key(i));
  want.push_back(Key(299));
  EXPECT_EQ(Keys(Read(&set)), want);
  std::vector<std::string> want_rev(want.rbegin(), want.rend());
  EXPECT_EQ(Keys(Read(&set, true)), want_rev);
}

TEST_F(SmallTabletTest, ABatchOfWritesMatchesTheSameWritesOneByOne) {
  // MutateRows searches for its rows before writing them; its own writes
  // then split chunks and tablets under those searches, some keys come
  // twice (in order), and one entry is invalid.
  Table plain("plain", TableOptions{1 << 20, 8, 4}, {});
  const FamilyModification mods[] = {CreateFamily("cf")};
  ASSERT_TRUE(plain.ModifyColumnFamilies(mods).ok());
  for (int round = 0; round < 3; ++round) {
    std::vector<RowMutations> rows;
    for (int i = 0; i < 150; ++i) {
      rows.push_back(RowMutations{
          Key((i * 37 + round) % 200),
          {Set("cf", "q", 1000, "v" + std::to_string(round * 1000 + i))}});
      if (i % 10 == 3) {
        rows.push_back(
            RowMutations{rows[static_cast<size_t>(i / 2)].key,
                         {DelCol("cf", "q"), Set("cf", "r", 0, "w")}});
      }
    }
    rows.push_back(RowMutations{Key(7), {Set("nope", "q", 0, "x")}});
    const CommitContext commit = Commit();
    const std::vector<Status> statuses = table_.MutateRows(rows, commit);
    ASSERT_EQ(statuses.size(), rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const Status want =
          plain.MutateRow(rows[i].key, rows[i].mutations, commit);
      EXPECT_EQ(statuses[i].code(), want.code()) << i;
      EXPECT_EQ(statuses[i].ok(), i + 1 < rows.size()) << i;
    }
  }
  EXPECT_GT(table_.Stats().tablets, 10);
  const std::vector<Row> want = Contents(plain);
  EXPECT_GE(want.size(), 150u);
  EXPECT_EQ(Read(), want);
}

TEST_F(SmallTabletTest, SplitsOnBytesToo) {
  Table table("bytes", TableOptions{1000, 1 << 20, 4}, {});
  const FamilyModification mods[] = {CreateFamily("cf")};
  ASSERT_TRUE(table.ModifyColumnFamilies(mods).ok());
  for (int i = 0; i < 20; ++i) {
    std::vector<Mutation> m = {Set("cf", "q", 1000, std::string(300, 'x'))};
    ASSERT_TRUE(table.MutateRow(Key(i), m, Commit()).ok());
  }
  EXPECT_GE(table.Stats().tablets, 5);
  std::vector<KeySample> samples = table.SampleRowKeys();
  for (size_t i = 1; i < samples.size(); ++i) {
    EXPECT_LE(samples[i].offset_bytes - samples[i - 1].offset_bytes, 1000);
  }
}

TEST_F(SmallTabletTest, TabletsMergeAfterMostRowsAreDeletedAndCompacted) {
  for (int i = 0; i < 200; ++i) Put(Key(i));
  const int64_t before = table_.Stats().tablets;
  ASSERT_GT(before, 20);
  for (int i = 0; i < 200; ++i) {
    if (i % 50 != 0) {
      ASSERT_TRUE(Mutate(Key(i), {DelRow()}).ok());
    }
  }
  EXPECT_EQ(table_.Stats().tablets, before);  // deletes alone do not merge
  CompactAll();
  EXPECT_EQ(table_.Stats().rows, 4);
  EXPECT_LT(table_.Stats().tablets, before / 4);
  EXPECT_THAT(Keys(Read()), ElementsAre(Key(0), Key(50), Key(100), Key(150)));
  EXPECT_THAT(Keys(Read(nullptr, true)),
              ElementsAre(Key(150), Key(100), Key(50), Key(0)));
}

class PresplitTableTest : public TableTest {
 protected:
  PresplitTableTest()
      : TableTest(TableOptions{1 << 20, 8, 4}, {"m", "d", "", "m", "t"}) {}
};

TEST_F(PresplitTableTest, InitialSplitsAppearInSampleRowKeys) {
  std::vector<KeySample> samples = table_.SampleRowKeys();
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(samples[0].row_key, "d");
  EXPECT_EQ(samples[1].row_key, "m");
  EXPECT_EQ(samples[2].row_key, "t");
  EXPECT_EQ(samples[3].row_key, "");
  for (const KeySample& s : samples) EXPECT_EQ(s.offset_bytes, 0);
  EXPECT_EQ(table_.Stats().tablets, 4);
}

TEST_F(PresplitTableTest, InitialSplitsSurviveMerging) {
  for (const char* k : {"a", "e", "n", "u"}) Put(k);
  std::vector<KeySample> samples = table_.SampleRowKeys();
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_GT(samples[0].offset_bytes, 0);
  EXPECT_LT(samples[0].offset_bytes, samples[1].offset_bytes);
  DropRowRange("");
  CompactAll();
  samples = table_.SampleRowKeys();
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(samples[0].row_key, "d");
  EXPECT_EQ(samples[1].row_key, "m");
  EXPECT_EQ(samples[2].row_key, "t");
}

TEST_F(PresplitTableTest, GrownTabletsMergeBackButNotAcrossInitialSplits) {
  for (int i = 0; i < 100; ++i) Put("n" + Key(i));  // all in [m, t)
  const int64_t grown = table_.Stats().tablets;
  ASSERT_GT(grown, 10);
  DropRowRange("n");
  Put("e");
  Put("n");
  CompactAll();
  EXPECT_EQ(table_.Stats().tablets, 4);
  std::vector<KeySample> samples = table_.SampleRowKeys();
  EXPECT_EQ(samples[0].row_key, "d");
  EXPECT_EQ(samples[1].row_key, "m");
  EXPECT_EQ(samples[2].row_key, "t");
  EXPECT_THAT(Keys(Read()), ElementsAre("e", "n"));
}

TEST_F(PresplitTableTest, TabletStartOfNamesTheTabletHoldingTheKey) {
  EXPECT_EQ(table_.TabletStartOf(""), "");
  EXPECT_EQ(table_.TabletStartOf("a"), "");
  EXPECT_EQ(table_.TabletStartOf("d"), "d");  // a start belongs to its tablet
  EXPECT_EQ(table_.TabletStartOf("czzz"), "");
  EXPECT_EQ(table_.TabletStartOf("lzzz"), "d");
  EXPECT_EQ(table_.TabletStartOf("m"), "m");
  EXPECT_EQ(table_.TabletStartOf("\xff\xff"), "t");
  // A split moves the upper half's keys to a tablet starting inside [m, t).
  for (int i = 0; i < 20; ++i) Put("n" + Key(i));
  ASSERT_GT(table_.Stats().tablets, 4);
  EXPECT_EQ(table_.TabletStartOf("m"), "m");
  const std::string& upper = table_.TabletStartOf("n" + Key(19));
  EXPECT_GT(upper, "m");
  EXPECT_LE(upper, "n" + Key(19));
}

TEST_F(PresplitTableTest, TabletStartHashIsTheHashOfTheKeysTabletStart) {
  // Each tablet remembers its hash for one seed: alternating seeds, and
  // splits and merges in between, must never give a stale one.
  std::vector<std::string> keys = {"a", "czzz", "d", "e", "m", "s", "t"};
  for (int i = 0; i < 40; ++i) keys.push_back("n" + Key(i));
  auto expect_exact = [&] {
    for (const std::string& key : keys) {
      for (uint64_t seed : {uint64_t{7}, uint64_t{7}, uint64_t{99}}) {
        EXPECT_EQ(table_.TabletStartHash(key, seed),
                  sim::StableHash(table_.TabletStartOf(key), seed))
            << key << " " << seed;
      }
    }
  };
  expect_exact();
  for (int i = 0; i < 40; ++i) {
    Put("n" + Key(i));
    expect_exact();
  }
  ASSERT_GT(table_.Stats().tablets, 4);
  DropRowRange("n");
  CompactAll();  // merges the split tablets again
  expect_exact();
}

TEST_F(PresplitTableTest, TabletStartOfIsExactWhateverTabletWasWrittenLast) {
  // TabletStartOf tries the last written tablet first: after writes to
  // every tablet (splitting some), every key must still get its own.
  std::vector<std::string> keys = {"", "a", "czzz", "d", "e", "m", "s", "t"};
  for (int i = 0; i < 40; ++i) keys.push_back("n" + Key(i));
  for (int i = 0; i < 40; ++i) {
    // Every key but "" (not a valid row key).
    Put(keys[1 + static_cast<size_t>(i * 7) % (keys.size() - 1)]);
    // The tablets' starts: "" and every tablet's end but the last's.
    std::vector<std::string> starts = {""};
    for (const KeySample& s : table_.SampleRowKeys()) {
      if (!s.row_key.empty()) starts.push_back(s.row_key);
    }
    for (const std::string& key : keys) {
      const auto after = std::upper_bound(starts.begin(), starts.end(), key);
      EXPECT_EQ(table_.TabletStartOf(key), *std::prev(after)) << key;
    }
  }
  EXPECT_GT(table_.Stats().tablets, 4);
}

TEST_F(PresplitTableTest, ReadsStartingOrEndingOnSplitKeys) {
  for (const char* k : {"a", "d", "da", "l", "m", "s", "t", "z"}) Put(k);
  RowSet set;
  set.AddRange(Interval{Bound::Closed("d"), Bound::Open("t")});
  EXPECT_THAT(Keys(Read(&set)), ElementsAre("d", "da", "l", "m", "s"));
  EXPECT_THAT(Keys(Read(&set, true)), ElementsAre("s", "m", "l", "da", "d"));
  RowSet set2;
  set2.AddRange(Interval{Bound::Open("d"), Bound::Closed("t")});
  EXPECT_THAT(Keys(Read(&set2)), ElementsAre("da", "l", "m", "s", "t"));
  EXPECT_THAT(Keys(Read(&set2, true)), ElementsAre("t", "s", "m", "l", "da"));
  const std::string m0("m\0", 2);
  Put(m0);
  RowSet set3;
  set3.AddRange(
      Interval{Bound::Open("m"), Bound::Open(std::string("m\0\0", 3))});
  EXPECT_THAT(Keys(Read(&set3)), ElementsAre(m0));
  EXPECT_THAT(Keys(Read(&set3, true)), ElementsAre(m0));
}

}  // namespace
}  // namespace btsim::cluster::table_test
