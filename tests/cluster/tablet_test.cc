#include "cluster/tablet.h"

#include <iterator>
#include <random>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace btsim::cluster {
namespace {

RowRecord Row(const std::string& key) { return RowRecord(key, RowData{}); }

std::string Key(int i) {
  std::string k = std::to_string(i);
  return std::string(6 - k.size(), '0') + k;
}

TEST(TabletTest, RowsStayOrderedAcrossChunkSplits) {
  Tablet tablet("", "", false);
  // Insert in a scrambled order, enough to split chunks many times.
  const int n = static_cast<int>(Tablet::kMaxChunkRows) * 9 + 7;
  for (int i = 0; i < n; ++i) tablet.Put(Row(Key((i * 7919) % n)));
  ASSERT_EQ(tablet.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) EXPECT_EQ(tablet.row(i).key(), Key(i));
  EXPECT_EQ(tablet.LowerBound(Key(100)), 100u);
  EXPECT_EQ(tablet.UpperBound(Key(100)), 101u);
  EXPECT_EQ(tablet.Find(Key(n)), nullptr);
}

TEST(TabletTest, SearchesAgreeWithASortedSetOnKeysSharingLongPrefixes) {
  // Keys with long shared prefixes, keys that are prefixes of others, NUL
  // and 0xff bytes: the per-chunk heads must order them as memcmp does.
  std::mt19937_64 gen(7);
  auto random_key = [&] {
    static const std::string kPrefixes[] = {"", "user000", "user0001234",
                                            std::string("a\0", 2), "\xff\xff"};
    std::string key = kPrefixes[gen() % 5];
    const size_t extra = gen() % 12;
    for (size_t i = 0; i < extra; ++i) {
      const char alphabet[] = {'\0', '0', '1', '9', 'a', '\xff'};
      key.push_back(alphabet[gen() % 6]);
    }
    return key.empty() ? std::string("k") : key;
  };
  Tablet tablet("", "", false);
  std::set<std::string> expected;
  for (int i = 0; i < 6000; ++i) {
    std::string key = random_key();
    tablet.Put(Row(key));
    expected.insert(key);
    if (i % 500 == 0) {
      std::string victim = random_key();
      tablet.Erase(victim);
      expected.erase(victim);
    }
  }
  ASSERT_EQ(tablet.size(), expected.size());
  size_t i = 0;
  for (const std::string& key : expected) {
    ASSERT_EQ(tablet.row(i++).key(), key);
  }
  for (int probe = 0; probe < 4000; ++probe) {
    const std::string key = random_key();
    const auto it = expected.lower_bound(key);
    EXPECT_EQ(tablet.LowerBound(key),
              static_cast<size_t>(std::distance(expected.begin(), it)))
        << key;
    EXPECT_EQ(tablet.Find(key) != nullptr, expected.count(key) == 1) << key;
  }
}

TEST(TabletTest, SeekThenPutAtTheSlotInsertsOrReplaces) {
  Tablet tablet("", "", false);
  Tablet::Slot slot = tablet.Seek("b");
  EXPECT_FALSE(slot.found);
  EXPECT_EQ(tablet.At(slot), nullptr);
  tablet.Put(Row("b"), true, slot);
  for (const char* k : {"a", "c"}) {
    slot = tablet.Seek(k);
    EXPECT_FALSE(slot.found);
    tablet.Put(Row(k), true, slot);
  }
  slot = tablet.Seek("b");
  ASSERT_TRUE(slot.found);
  ASSERT_NE(tablet.At(slot), nullptr);
  EXPECT_EQ(tablet.At(slot)->key(), "b");
  const int64_t bytes = tablet.bytes();
  tablet.Put(Row("b"), false, slot);  // replaces: same size, same count
  EXPECT_EQ(tablet.size(), 3u);
  EXPECT_EQ(tablet.bytes(), bytes);
  EXPECT_EQ(tablet.row(0).key(), "a");
  EXPECT_EQ(tablet.row(1).key(), "b");
  EXPECT_EQ(tablet.row(2).key(), "c");
}

TEST(TabletTest, PutMarksDirtyOnlyWhenAsked) {
  Tablet tablet("", "", false);
  EXPECT_TRUE(tablet.dirty());  // a new tablet has never been compacted
  tablet.set_dirty(false);
  tablet.Put(Row("a"), false);
  EXPECT_FALSE(tablet.dirty());
  tablet.Put(Row("b"), true);
  EXPECT_TRUE(tablet.dirty());
  tablet.set_dirty(false);
  tablet.Put(Row("b"), false);
  EXPECT_FALSE(tablet.dirty());
}

}  // namespace
}  // namespace btsim::cluster
