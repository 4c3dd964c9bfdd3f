#include "cluster/tablet.h"

#include <iterator>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace btsim::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

RowRecord Row(const std::string& key) { return RowRecord(key, RowData{}); }

// The keys of the marked rows, in order.
std::vector<std::string> MarkedKeys(const Tablet& tablet) {
  std::vector<std::string> keys;
  for (size_t i = 0; i < tablet.size(); ++i) {
    if (tablet.row(i).marked()) keys.emplace_back(tablet.row(i).key());
  }
  return keys;
}

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

TEST(TabletTest,
     ProbesAndSearchesAgreeWithASortedSetOnKeysSharingLongPrefixes) {
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
  // Batches of keys are probed in stages first, as a replication batch is
  // (under ASan, this also checks that probes read only inside the chunks).
  std::vector<std::string> batch;
  std::vector<Tablet::Probe> probes;
  for (int probe = 0; probe < 4000; ++probe) {
    if (probe % 50 == 0) {
      batch.clear();
      probes.clear();
      for (int k = 0; k < 50; ++k) {
        batch.push_back(random_key());
        probes.push_back(tablet.ProbeChunk(batch.back()));
      }
      for (int k = 0; k < 50; ++k) tablet.ProbeHeads(batch[k], probes[k]);
      for (int k = 0; k < 50; ++k) tablet.ProbeRow(batch[k], &probes[k]);
    }
    const std::string& key = batch[probe % 50];
    const auto it = expected.lower_bound(key);
    EXPECT_EQ(tablet.LowerBound(key),
              static_cast<size_t>(std::distance(expected.begin(), it)))
        << key;
    EXPECT_EQ(tablet.UpperBound(key),
              static_cast<size_t>(
                  std::distance(expected.begin(), expected.upper_bound(key))))
        << key;
    EXPECT_EQ(tablet.Find(key) != nullptr, expected.count(key) == 1) << key;
  }
  ASSERT_EQ(tablet.size(), expected.size());
}

TEST(TabletTest, ProbingAnEmptyTabletFindsNoChunk) {
  Tablet tablet("", "", false);
  Tablet::Probe probe = tablet.ProbeChunk("k");
  EXPECT_EQ(probe.chunk, nullptr);
  tablet.ProbeHeads("k", probe);
  tablet.ProbeRow("k", &probe);
  EXPECT_EQ(tablet.size(), 0u);
}

TEST(TabletTest, SearchesStayExactWhenTheFirstKeyKeepsChanging) {
  // Descending inserts put every new row first (chunk 0's first key
  // changes each time); a clone, a split and an absorb re-index the chunks.
  Tablet tablet("", "", false);
  const int n = static_cast<int>(Tablet::kMaxChunkRows) * 6;
  for (int i = n - 1; i >= 0; --i) tablet.Put(Row("k" + Key(2 * i)));
  tablet.Put(Row("a"));  // a first key without the chunks' shared prefix
  auto expect_exact = [](const Tablet& t, int from, int to) {
    for (int i = from; i < to; ++i) {
      ASSERT_NE(t.Find("k" + Key(2 * i)), nullptr) << i;
      EXPECT_EQ(t.Find("k" + Key(2 * i + 1)), nullptr) << i;
    }
  };
  expect_exact(tablet, 0, n);
  EXPECT_NE(tablet.Find("a"), nullptr);
  EXPECT_EQ(tablet.LowerBound("b"), 1u);
  const Tablet copy = tablet.Clone();
  expect_exact(copy, 0, n);
  Tablet right = tablet.SplitAt(n / 2);
  expect_exact(tablet, 0, n / 2 - 1);
  expect_exact(right, n / 2 - 1, n);
  tablet.Absorb(std::move(right));
  expect_exact(tablet, 0, n);
  EXPECT_EQ(tablet.size(), static_cast<size_t>(n) + 1);
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

TEST(TabletTest, PutMarksRowsOnlyWhenAsked) {
  Tablet tablet("", "", false);
  EXPECT_TRUE(tablet.all_dirty());  // a new tablet has never been compacted
  tablet.Put(Row("a"), true);
  EXPECT_THAT(MarkedKeys(tablet), IsEmpty());  // every row is already due
  tablet.set_all_dirty(false);
  EXPECT_FALSE(tablet.dirty());
  tablet.Put(Row("a"), false);
  EXPECT_FALSE(tablet.dirty());
  tablet.Put(Row("b"), true);
  EXPECT_TRUE(tablet.dirty());
  EXPECT_FALSE(tablet.all_dirty());
  EXPECT_THAT(MarkedKeys(tablet), ElementsAre("b"));
  tablet.Put(Row("b"), false);  // a replaced row keeps its mark
  tablet.Put(Row("b"), true);   // and is counted once
  EXPECT_EQ(tablet.marked(), 1u);
  EXPECT_THAT(MarkedKeys(tablet), ElementsAre("b"));
  const std::vector<Tablet::Slot> taken = tablet.TakeMarked();
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(tablet.At(taken[0])->key(), "b");
  EXPECT_FALSE(tablet.dirty());
  EXPECT_THAT(MarkedKeys(tablet), IsEmpty());
  tablet.Put(Row("c"), true);
  tablet.set_all_dirty(true);
  EXPECT_THAT(MarkedKeys(tablet), IsEmpty());
  EXPECT_EQ(tablet.marked(), 0u);
}

TEST(TabletTest, TakeMarkedListsSlotsInKeyOrderAcrossChunks) {
  Tablet tablet("", "", false);
  const int n = static_cast<int>(Tablet::kMaxChunkRows) * 3;
  for (int i = 0; i < n; ++i) tablet.Put(Row(Key(i)));
  tablet.set_all_dirty(false);
  std::vector<std::string> expected;
  for (int i = n - 1; i >= 0; i -= 37) tablet.Put(Row(Key(i)), true);
  for (int i = 0; i < n; ++i) {
    if ((n - 1 - i) % 37 == 0) expected.push_back(Key(i));
  }
  // Inserting rows shifts the marked ones; their marks move with them.
  for (int i = n; i < n + 200; ++i) tablet.Put(Row(Key(i) + "x"), false);
  std::vector<std::string> taken;
  for (const Tablet::Slot& slot : tablet.TakeMarked()) {
    taken.emplace_back(tablet.At(slot)->key());
  }
  EXPECT_EQ(taken, expected);
  EXPECT_EQ(tablet.marked(), 0u);
}

TEST(TabletTest, MarksFollowTheirRowsAcrossSplitAndAbsorb) {
  Tablet tablet("", "", false);
  for (int i = 0; i < 10; ++i) tablet.Put(Row(Key(i)));
  tablet.set_all_dirty(false);
  for (int i : {7, 1, 5, 3}) tablet.Put(Row(Key(i)), true);
  Tablet right = tablet.SplitAt(4);
  EXPECT_FALSE(right.all_dirty());
  EXPECT_THAT(MarkedKeys(tablet), ElementsAre(Key(1), Key(3)));
  EXPECT_THAT(MarkedKeys(right), ElementsAre(Key(5), Key(7)));
  EXPECT_EQ(tablet.marked(), 2u);
  EXPECT_EQ(right.marked(), 2u);
  tablet.Absorb(std::move(right));
  EXPECT_THAT(MarkedKeys(tablet), ElementsAre(Key(1), Key(3), Key(5), Key(7)));
  EXPECT_EQ(tablet.marked(), 4u);
  EXPECT_FALSE(tablet.all_dirty());
}

TEST(TabletTest, AllDirtySurvivesSplitAndAbsorb) {
  Tablet tablet("", "", false);
  for (int i = 0; i < 10; ++i) tablet.Put(Row(Key(i)));
  Tablet right = tablet.SplitAt(5);
  EXPECT_TRUE(right.all_dirty());
  tablet.set_all_dirty(false);
  tablet.Put(Row(Key(1)), true);
  tablet.Absorb(std::move(right));
  EXPECT_TRUE(tablet.all_dirty());
  EXPECT_THAT(MarkedKeys(tablet), IsEmpty());
  EXPECT_EQ(tablet.marked(), 0u);
}

// A row whose stored size grows with `size` (a cell of that many bytes).
RowRecord SizedRow(const std::string& key, size_t size) {
  static const std::string kValue(4096, 'v');
  RowData row;
  row.families.push_back(FamilyData{
      0,
      kNoVersion,
      {ColumnData{
          "c",
          {},
          {CellData{1000, 1, std::string_view(kValue).substr(0, size)}}}}});
  return RowRecord(key, row);
}

TEST(TabletTest, HalfBytesIndexIsWhereTheRowsBeforeHoldHalfTheBytes) {
  Tablet tablet("", "", false);
  EXPECT_EQ(tablet.HalfBytesIndex(), 0u);
  std::mt19937_64 gen(3);
  const int n = static_cast<int>(Tablet::kMaxChunkRows) * 5 + 3;
  for (int i = 0; i < n; ++i) {
    tablet.Put(SizedRow(Key((i * 7919) % n), gen() % 3000));
  }
  // Skewed: the big rows first, so the half is well before the middle.
  for (int i = 0; i < n / 8; ++i) tablet.Put(SizedRow(Key(i), 4000));
  int64_t total = 0;
  for (size_t i = 0; i < tablet.size(); ++i) total += tablet.row(i).bytes();
  ASSERT_EQ(total, tablet.bytes());
  size_t expected = 0;
  int64_t before = 0;
  while (before * 2 < total) before += tablet.row(expected++).bytes();
  EXPECT_LT(expected, tablet.size() / 2);
  EXPECT_EQ(tablet.HalfBytesIndex(), expected);
}

TEST(TabletTest, SplitAtInsideAChunkOrAtItsEdgeKeepsBothSidesSearchable) {
  const int n = static_cast<int>(Tablet::kMaxChunkRows) * 6;
  for (int at :
       {1, 37, static_cast<int>(Tablet::kMaxChunkRows) / 2, n / 2, n - 1}) {
    Tablet left("", "", false);
    std::vector<int64_t> bytes(n);
    for (int i = 0; i < n; ++i) {
      const int k = (i * 7919) % n;
      RowRecord row = SizedRow(Key(2 * k), 10 + k % 50);
      bytes[k] = static_cast<int64_t>(row.bytes());
      left.Put(std::move(row));
    }
    left.set_all_dirty(false);
    // Rewritten and marked: one row stays left, one goes right.
    left.Put(SizedRow(Key(0), 10), true);
    bytes[0] = static_cast<int64_t>(SizedRow(Key(0), 10).bytes());
    left.Put(SizedRow(Key(2 * (n - 1)), 70), true);
    bytes[n - 1] = static_cast<int64_t>(SizedRow(Key(2 * (n - 1)), 70).bytes());
    Tablet right = left.SplitAt(static_cast<size_t>(at));
    SCOPED_TRACE(at);
    ASSERT_EQ(left.size(), static_cast<size_t>(at));
    ASSERT_EQ(right.size(), static_cast<size_t>(n - at));
    EXPECT_EQ(left.end(), Key(2 * at));
    EXPECT_EQ(right.start(), Key(2 * at));
    EXPECT_EQ(right.end(), "");
    int64_t left_bytes = 0, right_bytes = 0;
    for (int k = 0; k < n; ++k) (k < at ? left_bytes : right_bytes) += bytes[k];
    EXPECT_EQ(left.bytes(), left_bytes);
    EXPECT_EQ(right.bytes(), right_bytes);
    EXPECT_EQ(left.marked(), 1u);
    EXPECT_EQ(right.marked(), 1u);
    EXPECT_THAT(MarkedKeys(right), ElementsAre(Key(2 * (n - 1))));
    for (int k = 0; k < n; ++k) {
      const Tablet& side = k < at ? left : right;
      const size_t i = static_cast<size_t>(k < at ? k : k - at);
      ASSERT_EQ(side.row(i).key(), Key(2 * k));
      EXPECT_EQ(side.LowerBound(Key(2 * k)), i);
      EXPECT_EQ(side.LowerBound(Key(2 * k + 1)), i + 1);
      ASSERT_NE(side.Find(Key(2 * k)), nullptr);
    }
    // Both sides take inserts (odd keys) in order, then join up again.
    for (int k = 0; k < n; k += 3) {
      (k < at ? left : right).Put(Row(Key(2 * k + 1)));
    }
    left.Absorb(std::move(right));
    ASSERT_EQ(left.size(), static_cast<size_t>(n + (n + 2) / 3));
    for (size_t i = 1; i < left.size(); ++i) {
      ASSERT_LT(left.row(i - 1).key(), left.row(i).key());
    }
  }
}

TEST(TabletTest, ACloneIsAllDirty) {
  Tablet tablet("", "", false);
  tablet.Put(Row("a"));
  tablet.set_all_dirty(false);
  tablet.Put(Row("b"), true);
  const Tablet copy = tablet.Clone();
  EXPECT_TRUE(copy.all_dirty());
  EXPECT_THAT(MarkedKeys(copy), IsEmpty());
  EXPECT_EQ(copy.size(), 2u);
  EXPECT_THAT(MarkedKeys(tablet), ElementsAre("b"));  // the original keeps it
}

TEST(TabletTest, ACloneMadeRightAfterInsertsFindsEveryRowByIndex) {
  // Even keys fill several chunks; then odd keys land in the first chunks
  // with no read in between (inserts leave the later chunks' start indexes
  // to the next read), and the clone is the first to index the rows.
  Tablet tablet("", "", false);
  const int n = static_cast<int>(Tablet::kMaxChunkRows) * 4;
  for (int i = 0; i < n; i += 2) tablet.Put(Row(Key(i)));
  ASSERT_EQ(tablet.row(0).key(), Key(0));
  for (int i = 1; i < 40; i += 2) tablet.Put(Row(Key(i)));
  const Tablet copy = tablet.Clone();
  ASSERT_EQ(copy.size(), static_cast<size_t>(n / 2 + 20));
  for (size_t i = 0; i < copy.size(); ++i) {
    const int k = i < 40 ? static_cast<int>(i) : static_cast<int>(2 * i - 40);
    ASSERT_EQ(copy.row(i).key(), Key(k)) << i;
  }
  EXPECT_EQ(copy.LowerBound(Key(n - 2)), copy.size() - 1);
}

TEST(TabletTest, ErasedAndRewrittenRowsTakeTheirMarks) {
  Tablet tablet("", "", false);
  tablet.set_all_dirty(false);
  for (const char* k : {"a", "b", "c", "d"}) tablet.Put(Row(k), true);
  tablet.Erase("a");
  tablet.EraseRange(0, 1);  // "b"
  EXPECT_EQ(tablet.marked(), 2u);
  tablet.Rewrite(tablet.Seek("c"), Row("c"));  // keeps the mark
  EXPECT_THAT(MarkedKeys(tablet), ElementsAre("c", "d"));
  tablet.Rewrite(tablet.Seek("d"), RowRecord());  // drops it
  tablet.DropInvalid();
  EXPECT_THAT(MarkedKeys(tablet), ElementsAre("c"));
  EXPECT_EQ(tablet.marked(), 1u);
}

TEST(TabletTest, MarkSkipsMarkedRowsAndAllDirtyTablets) {
  Tablet tablet("", "", false);
  tablet.Put(Row("a"), false);
  tablet.Mark(tablet.Seek("a"));  // all dirty: no mark
  EXPECT_EQ(tablet.marked(), 0u);
  tablet.set_all_dirty(false);
  tablet.Mark(tablet.Seek("a"));
  tablet.Mark(tablet.Seek("a"));
  EXPECT_EQ(tablet.marked(), 1u);
  EXPECT_THAT(MarkedKeys(tablet), ElementsAre("a"));
}

TEST(TabletTest, RewriteBySlotKeepsOtherSlotsValid) {
  Tablet tablet("", "", false);
  for (int i = 0; i < 300; ++i) tablet.Put(Row(Key(i)));
  const int64_t bytes = tablet.bytes();
  const Tablet::Slot s1 = tablet.Seek(Key(1));
  const Tablet::Slot s200 = tablet.Seek(Key(200));
  tablet.Rewrite(s1, RowRecord());
  ASSERT_NE(tablet.At(s200), nullptr);
  EXPECT_EQ(tablet.At(s200)->key(), Key(200));
  EXPECT_EQ(tablet.At(tablet.SlotAt(200))->key(), Key(200));
  tablet.DropInvalid();
  EXPECT_EQ(tablet.size(), 299u);
  EXPECT_EQ(tablet.bytes(), bytes - static_cast<int64_t>(Row(Key(1)).bytes()));
  EXPECT_EQ(tablet.Find(Key(1)), nullptr);
}

// Probes a batch of keys in stages, as Table::PrefetchRows does.
std::vector<Tablet::Probe> ProbeAll(const Tablet& tablet,
                                    const std::vector<std::string>& keys) {
  std::vector<Tablet::Probe> probes;
  for (const std::string& k : keys) probes.push_back(tablet.ProbeChunk(k));
  for (size_t i = 0; i < keys.size(); ++i) {
    tablet.ProbeHeads(keys[i], probes[i]);
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    tablet.ProbeRow(keys[i], &probes[i]);
  }
  return probes;
}

TEST(TabletTest, AFreshProbeGivesTheSlotSeekGives) {
  Tablet tablet("", "", false);
  const int n = static_cast<int>(Tablet::kMaxChunkRows) * 5;
  for (int i = 0; i < n; ++i) tablet.Put(Row("k" + Key(2 * i)));
  // Present keys, absent ones between, before and after every row.
  std::vector<std::string> keys = {"a", "k", "z"};
  for (int i = 0; i < n; i += 37) {
    keys.push_back("k" + Key(2 * i));
    keys.push_back("k" + Key(2 * i + 1));
  }
  const std::vector<Tablet::Probe> probes = ProbeAll(tablet, keys);
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::optional<Tablet::Slot> slot =
        tablet.SeekProbed(keys[i], probes[i]);
    ASSERT_TRUE(slot.has_value()) << keys[i];
    const Tablet::Slot seek = tablet.Seek(keys[i]);
    EXPECT_EQ(slot->chunk, seek.chunk) << keys[i];
    EXPECT_EQ(slot->offset, seek.offset) << keys[i];
    EXPECT_EQ(slot->found, seek.found) << keys[i];
  }
}

TEST(TabletTest, ProbesForKeysWhoseHeadsTieGiveSeeksSlotOrNothing) {
  // "a" and "z" keep the chunk's prefix empty, so every "p/abcdefgh..." key
  // has the same head: a probe stops at the first of them without reading
  // a row, and SeekProbed must check.
  Tablet tablet("", "", false);
  tablet.Put(Row("a"));
  tablet.Put(Row("z"));
  for (int i = 1; i < 10; i += 2) tablet.Put(Row("p/abcdefgh-" + Key(i)));
  std::vector<std::string> keys;
  for (int i = 0; i < 11; ++i) keys.push_back("p/abcdefgh-" + Key(i));
  keys.push_back("p/abcdefgh");  // a prefix of them all
  const std::vector<Tablet::Probe> probes = ProbeAll(tablet, keys);
  int answered = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::optional<Tablet::Slot> slot =
        tablet.SeekProbed(keys[i], probes[i]);
    if (!slot) continue;
    ++answered;
    const Tablet::Slot seek = tablet.Seek(keys[i]);
    EXPECT_EQ(slot->chunk, seek.chunk) << keys[i];
    EXPECT_EQ(slot->offset, seek.offset) << keys[i];
    EXPECT_EQ(slot->found, seek.found) << keys[i];
  }
  // The keys up to the first tied row: the shorter one, the absent one
  // before it and that row itself.
  EXPECT_GE(answered, 3);
  ASSERT_TRUE(tablet.SeekProbed(keys[1], probes[1]).has_value());
  EXPECT_TRUE(tablet.SeekProbed(keys[1], probes[1])->found);
}

TEST(TabletTest, AProbeMadeStaleByAnInsertBeforeItIsRefused) {
  Tablet tablet("", "", false);
  for (int i = 0; i < 10; ++i) tablet.Put(Row("k" + Key(2 * i)));
  const std::vector<std::string> keys = {"k" + Key(10), "k" + Key(11)};
  const std::vector<Tablet::Probe> probes = ProbeAll(tablet, keys);
  tablet.Put(Row("k" + Key(3)));  // shifts both keys' slots by one
  EXPECT_FALSE(tablet.SeekProbed(keys[0], probes[0]).has_value());
  EXPECT_FALSE(tablet.SeekProbed(keys[1], probes[1]).has_value());
  // An empty tablet's probe is always refused.
  Tablet empty("", "", false);
  EXPECT_FALSE(empty.SeekProbed("k", empty.ProbeChunk("k")).has_value());
}

// FindChunk, then changes, then ProbeChunkAt and the other steps: the probe
// gives Seek's slot or nothing.
std::optional<Tablet::Slot> ProbeFound(const Tablet& tablet, size_t found,
                                       const std::string& key) {
  Tablet::Probe probe = tablet.ProbeChunkAt(found);
  if (probe.chunk != nullptr) {
    tablet.ProbeHeads(key, probe);
    tablet.ProbeRow(key, &probe);
  }
  return tablet.SeekProbed(key, probe);
}

TEST(TabletTest, AChunkFoundBeforeChangesIsNeverTrusted) {
  Tablet tablet("", "", false);
  const int n = static_cast<int>(Tablet::kMaxChunkRows) * 6;
  for (int i = 0; i < n; ++i) tablet.Put(Row("k" + Key(4 * i)));
  const std::string last = "k" + Key(4 * (n - 1));
  const std::string late = "k" + Key(4 * (n - 10) + 1);  // absent
  const size_t last_found = tablet.FindChunk(last);
  const size_t late_found = tablet.FindChunk(late);
  ASSERT_GT(last_found, 2u);
  // Unchanged: the two steps are ProbeChunk.
  ASSERT_TRUE(ProbeFound(tablet, last_found, last).has_value());
  EXPECT_TRUE(ProbeFound(tablet, last_found, last)->found);
  // Inserts before the keys split chunks: the indexes found now name
  // earlier chunks.
  for (int i = 0; i < n / 2; ++i) tablet.Put(Row("k" + Key(4 * i + 2)));
  for (const auto& [found, key] :
       {std::pair{last_found, last}, std::pair{late_found, late}}) {
    const std::optional<Tablet::Slot> slot = ProbeFound(tablet, found, key);
    if (slot.has_value()) {
      const Tablet::Slot seek = tablet.Seek(key);
      EXPECT_EQ(slot->chunk, seek.chunk) << key;
      EXPECT_EQ(slot->offset, seek.offset) << key;
      EXPECT_EQ(slot->found, seek.found) << key;
    }
  }
  // A split leaves fewer chunks than the index found: an empty probe.
  Tablet right = tablet.SplitAt(tablet.size() / 4);
  EXPECT_EQ(tablet.ProbeChunkAt(last_found + 100).chunk, nullptr);
  EXPECT_FALSE(ProbeFound(tablet, last_found + 100, last).has_value());
  EXPECT_FALSE(ProbeFound(tablet, last_found, last).has_value());
}

TEST(TabletTest, AProbePastASplitIsRefused) {
  // After SplitAt the tablet keeps [start, at): a key now past its end must
  // not get a slot here, even where its probe's chunk survived.
  Tablet tablet("", "", false);
  const int n = static_cast<int>(Tablet::kMaxChunkRows) * 4;
  for (int i = 0; i < n; ++i) tablet.Put(Row("k" + Key(2 * i)));
  std::vector<std::string> keys;
  for (int i = 0; i < n; i += 5) {
    keys.push_back("k" + Key(2 * i));
    keys.push_back("k" + Key(2 * i + 1));
  }
  keys.push_back("z");
  const std::vector<Tablet::Probe> probes = ProbeAll(tablet, keys);
  Tablet right = tablet.SplitAt(tablet.size() / 2);
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::optional<Tablet::Slot> slot =
        tablet.SeekProbed(keys[i], probes[i]);
    if (!tablet.Covers(keys[i])) {
      EXPECT_FALSE(slot.has_value()) << keys[i];
    } else if (slot) {
      const Tablet::Slot seek = tablet.Seek(keys[i]);
      EXPECT_EQ(slot->chunk, seek.chunk) << keys[i];
      EXPECT_EQ(slot->offset, seek.offset) << keys[i];
      EXPECT_EQ(slot->found, seek.found) << keys[i];
    }
  }
  EXPECT_FALSE(tablet.SeekProbed("z", probes.back()).has_value());
}

TEST(TabletTest, ProbesUsedAfterRandomChangesGiveSeeksSlotOrNothing) {
  // Probes of a batch, then the batch's own writes (inserts that shift
  // slots and split chunks, erases), as a replication batch applies them:
  // every probe used must give exactly Seek's slot.
  std::mt19937_64 gen(11);
  auto random_key = [&] { return "k" + Key(static_cast<int>(gen() % 20000)); };
  Tablet tablet("k", "l", false);
  for (int i = 0; i < 3000; ++i) tablet.Put(Row(random_key()));
  size_t used = 0, refused = 0;
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> keys;
    for (int k = 0; k < 50; ++k) keys.push_back(random_key());
    const std::vector<Tablet::Probe> probes = ProbeAll(tablet, keys);
    for (size_t i = 0; i < keys.size(); ++i) {
      const std::optional<Tablet::Slot> slot =
          tablet.SeekProbed(keys[i], probes[i]);
      const Tablet::Slot seek = tablet.Seek(keys[i]);
      if (slot) {
        ++used;
        ASSERT_EQ(slot->chunk, seek.chunk) << keys[i];
        ASSERT_EQ(slot->offset, seek.offset) << keys[i];
        ASSERT_EQ(slot->found, seek.found) << keys[i];
      } else {
        ++refused;
      }
      if (gen() % 10 == 0) {
        tablet.Erase(keys[i]);
      } else {
        tablet.Put(Row(keys[i]), /*dirty=*/true, seek);
      }
    }
  }
  // Both outcomes are common here: one tablet takes every write, so each
  // chunk split moves the later chunks of every probe after it.
  EXPECT_GT(used, 1000u);
  EXPECT_GT(refused, 1000u);
}

TEST(TabletTest, AProbeMadeForAnotherKeyNeverGivesAWrongSlot) {
  // Table::PrefetchRows' callers may pass a wrong probe: it must give
  // Seek's slot or nothing, also for keys outside the tablet.
  Tablet tablet("f", "p", false);
  for (int i = 0; i < 400; ++i) tablet.Put(Row("h" + Key(3 * i)));
  // Past the last row, before the first: slots at the tablet's ends.
  const std::vector<std::string> edges = {"o", "g"};
  const std::vector<Tablet::Probe> edge_probes = ProbeAll(tablet, edges);
  EXPECT_FALSE(tablet.SeekProbed("x", edge_probes[0]).has_value());
  EXPECT_FALSE(tablet.SeekProbed("a", edge_probes[1]).has_value());
  std::mt19937_64 gen(5);
  std::vector<std::string> keys;
  for (int i = 0; i < 300; ++i) {
    const char first = static_cast<char>('a' + gen() % 26);
    keys.push_back(first + Key(static_cast<int>(gen() % 1500)));
    if (i % 3 == 0) keys.back() = "h" + Key(static_cast<int>(gen() % 1200));
  }
  const std::vector<Tablet::Probe> probes = ProbeAll(tablet, keys);
  size_t used = 0;
  for (const std::string& key : keys) {
    for (const Tablet::Probe& probe : probes) {
      const std::optional<Tablet::Slot> slot = tablet.SeekProbed(key, probe);
      if (!slot) continue;
      ++used;
      ASSERT_TRUE(tablet.Covers(key)) << key;
      const Tablet::Slot seek = tablet.Seek(key);
      ASSERT_EQ(slot->chunk, seek.chunk) << key;
      ASSERT_EQ(slot->offset, seek.offset) << key;
      ASSERT_EQ(slot->found, seek.found) << key;
    }
  }
  EXPECT_GT(used, keys.size());
}

}  // namespace
}  // namespace btsim::cluster
