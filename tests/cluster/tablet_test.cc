// Tests of the internal Tablet (cluster/internal/tablet.h): searches, scans,
// marks and compaction's walks, splits and merges, and probes; and of
// RowProbes (cluster/internal/row_probes.h), the batched searches over a
// table's tablets.
#include "cluster/internal/tablet.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cluster/internal/row_probes.h"

namespace btsim::cluster::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

RowRecord Row(const std::string& key) { return RowRecord(key, RowData{}); }

// Seeks the record's key and puts it there.
void Put(Tablet& tablet, RowRecord record, bool dirty = true) {
  const RowSlot slot = tablet.Seek(record.key());
  tablet.Put(slot, std::move(record), dirty);
}

// Erases the row of `key`, if any.
void Erase(Tablet& tablet, const std::string& key) {
  tablet.EditRange(key, key + std::string(1, '\0'), [](const RowRecord&) {
    RowEdit edit;
    edit.erase = true;
    return edit;
  });
}

// The keys of the rows inside `interval`, in scan order.
std::vector<std::string> Keys(const Tablet& tablet,
                              const Interval& interval = {},
                              bool reversed = false) {
  std::vector<std::string> keys;
  tablet.Scan(interval, reversed, [&](const RowRecord& row) {
    keys.emplace_back(row.key());
    return true;
  });
  return keys;
}

// The keys of the marked rows, in order.
std::vector<std::string> MarkedKeys(const Tablet& tablet) {
  std::vector<std::string> keys;
  tablet.Scan({}, false, [&](const RowRecord& row) {
    if (row.marked()) keys.emplace_back(row.key());
    return true;
  });
  return keys;
}

// The keys EditDue visits, leaving every row as it is (and unmarked).
std::vector<std::string> TakeDue(Tablet& tablet, bool every_row = false) {
  std::vector<std::string> keys;
  tablet.EditDue(every_row, [&](const RowRecord& row) {
    keys.emplace_back(row.key());
    return RowEdit{};
  });
  return keys;
}

std::string Key(int i) {
  std::string k = std::to_string(i);
  return std::string(6 - k.size(), '0') + k;
}

void ExpectSameSlot(const RowSlot& a, const RowSlot& b,
                    const std::string& key) {
  EXPECT_EQ(a.chunk, b.chunk) << key;
  EXPECT_EQ(a.offset, b.offset) << key;
  EXPECT_EQ(a.row, b.row) << key;
}

// ------------------------------------------------------------ Searches

TEST(TabletTest, RowsStayOrderedAcrossChunkSplits) {
  Tablet tablet("", "", false);
  // Insert in a scrambled order, enough to split chunks many times.
  const int n = static_cast<int>(Tablet::kMaxChunkRows) * 9 + 7;
  std::vector<std::string> want;
  for (int i = 0; i < n; ++i) {
    Put(tablet, Row(Key((i * 7919) % n)));
    want.push_back(Key(i));
  }
  ASSERT_EQ(tablet.size(), static_cast<size_t>(n));
  EXPECT_EQ(Keys(tablet), want);
  EXPECT_EQ(tablet.Seek(Key(n)).row, nullptr);
  ASSERT_NE(tablet.Seek(Key(100)).row, nullptr);
  EXPECT_EQ(tablet.Seek(Key(100)).row->key(), Key(100));
}

TEST(TabletTest, SearchesAndScansAgreeWithASortedSetOnKeysSharingPrefixes) {
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
    Put(tablet, Row(key));
    expected.insert(key);
    if (i % 500 == 0) {
      std::string victim = random_key();
      Erase(tablet, victim);
      expected.erase(victim);
    }
  }
  ASSERT_EQ(tablet.size(), expected.size());
  EXPECT_EQ(Keys(tablet),
            std::vector<std::string>(expected.begin(), expected.end()));
  auto first_key = [&](const Interval& interval, bool reversed) {
    std::optional<std::string> first;
    tablet.Scan(interval, reversed, [&](const RowRecord& row) {
      first.emplace(row.key());
      return false;
    });
    return first;
  };
  for (int probe = 0; probe < 2000; ++probe) {
    const std::string key = random_key();
    EXPECT_EQ(tablet.Seek(key).row != nullptr, expected.count(key) == 1) << key;
    // The first row at or after (after) the key, and at or before (before).
    auto want = [&](auto it, auto end) {
      return it == end ? std::nullopt : std::optional<std::string>(*it);
    };
    EXPECT_EQ(first_key({Bound::Closed(key), {}}, false),
              want(expected.lower_bound(key), expected.end()))
        << key;
    EXPECT_EQ(first_key({Bound::Open(key), {}}, false),
              want(expected.upper_bound(key), expected.end()))
        << key;
    EXPECT_EQ(first_key({{}, Bound::Closed(key)}, true),
              want(std::make_reverse_iterator(expected.upper_bound(key)),
                   expected.rend()))
        << key;
    EXPECT_EQ(first_key({{}, Bound::Open(key)}, true),
              want(std::make_reverse_iterator(expected.lower_bound(key)),
                   expected.rend()))
        << key;
  }
}

TEST(TabletTest, ScansStopAtTheIntervalsEndAndWhenTold) {
  Tablet tablet("", "", false);
  for (int i = 0; i < 500; ++i) Put(tablet, Row(Key(2 * i)));
  EXPECT_THAT(Keys(tablet, {Bound::Open(Key(2)), Bound::Closed(Key(8))}),
              ElementsAre(Key(4), Key(6), Key(8)));
  EXPECT_THAT(Keys(tablet, {Bound::Closed(Key(3)), Bound::Open(Key(8))}, true),
              ElementsAre(Key(6), Key(4)));
  EXPECT_THAT(Keys(tablet, {Bound::Closed(Key(995)), {}}),
              ElementsAre(Key(996), Key(998)));
  int visited = 0;
  EXPECT_FALSE(tablet.Scan({}, false, [&](const RowRecord&) {
    return ++visited < 300;  // across chunks
  }));
  EXPECT_EQ(visited, 300);
  EXPECT_TRUE(tablet.Scan({Bound::Closed("z"), {}}, false,
                          [](const RowRecord&) { return false; }));
  Tablet empty("", "", false);
  EXPECT_THAT(Keys(empty), IsEmpty());
  EXPECT_THAT(Keys(empty, {}, true), IsEmpty());
}

TEST(TabletTest, SearchesStayExactWhenTheFirstKeyKeepsChanging) {
  // Descending inserts put every new row first (chunk 0's first key
  // changes each time); a clone, a split and an absorb re-index the chunks.
  Tablet tablet("", "", false);
  const int n = static_cast<int>(Tablet::kMaxChunkRows) * 6;
  for (int i = n - 1; i >= 0; --i) Put(tablet, Row("k" + Key(2 * i)));
  Put(tablet, Row("a"));  // a first key without the chunks' shared prefix
  auto expect_exact = [](const Tablet& t) {
    for (int i = 0; i < 6 * static_cast<int>(Tablet::kMaxChunkRows); ++i) {
      const std::string key = "k" + Key(2 * i);
      if (!t.Covers(key)) continue;
      ASSERT_NE(t.Seek(key).row, nullptr) << i;
      EXPECT_EQ(t.Seek("k" + Key(2 * i + 1)).row, nullptr) << i;
    }
  };
  expect_exact(tablet);
  EXPECT_NE(tablet.Seek("a").row, nullptr);
  const Tablet copy = tablet.Clone();
  expect_exact(copy);
  Tablet right = tablet.SplitInHalf();
  EXPECT_EQ(tablet.size() + right.size(), static_cast<size_t>(n) + 1);
  expect_exact(tablet);
  expect_exact(right);
  tablet.Absorb(std::move(right));
  expect_exact(tablet);
  EXPECT_EQ(tablet.size(), static_cast<size_t>(n) + 1);
}

TEST(TabletTest, SeekThenPutAtTheSlotInsertsOrReplaces) {
  Tablet tablet("", "", false);
  RowSlot slot = tablet.Seek("b");
  EXPECT_EQ(slot.row, nullptr);
  tablet.Put(slot, Row("b"), true);
  for (const char* k : {"a", "c"}) {
    slot = tablet.Seek(k);
    EXPECT_EQ(slot.row, nullptr);
    tablet.Put(slot, Row(k), true);
  }
  slot = tablet.Seek("b");
  ASSERT_NE(slot.row, nullptr);
  EXPECT_EQ(slot.row->key(), "b");
  const int64_t bytes = tablet.bytes();
  tablet.Put(slot, Row("b"), false);  // replaces: same size, same count
  EXPECT_EQ(tablet.size(), 3u);
  EXPECT_EQ(tablet.bytes(), bytes);
  EXPECT_THAT(Keys(tablet), ElementsAre("a", "b", "c"));
}

// ------------------------------------------------------------ Marks

TEST(TabletTest, PutMarksRowsOnlyWhenAsked) {
  Tablet tablet("", "", false);
  Put(tablet, Row("a"), true);
  EXPECT_THAT(MarkedKeys(tablet), IsEmpty());  // a new tablet: every row due
  EXPECT_THAT(TakeDue(tablet), ElementsAre("a"));
  EXPECT_THAT(TakeDue(tablet), IsEmpty());
  Put(tablet, Row("a"), false);
  EXPECT_THAT(TakeDue(tablet), IsEmpty());
  Put(tablet, Row("b"), true);
  EXPECT_THAT(MarkedKeys(tablet), ElementsAre("b"));
  Put(tablet, Row("b"), false);  // a replaced row keeps its mark
  Put(tablet, Row("b"), true);   // and is due once
  EXPECT_THAT(MarkedKeys(tablet), ElementsAre("b"));
  EXPECT_THAT(TakeDue(tablet), ElementsAre("b"));
  EXPECT_THAT(MarkedKeys(tablet), IsEmpty());
  EXPECT_THAT(TakeDue(tablet), IsEmpty());
  // Every row when asked, whatever the marks.
  Put(tablet, Row("c"), true);
  EXPECT_THAT(TakeDue(tablet, /*every_row=*/true), ElementsAre("a", "b", "c"));
  EXPECT_THAT(TakeDue(tablet), IsEmpty());
}

TEST(TabletTest, DueRowsAreVisitedInKeyOrderAcrossChunks) {
  Tablet tablet("", "", false);
  const int n = static_cast<int>(Tablet::kMaxChunkRows) * 3;
  for (int i = 0; i < n; ++i) Put(tablet, Row(Key(i)));
  TakeDue(tablet);
  std::vector<std::string> expected;
  for (int i = n - 1; i >= 0; i -= 37) Put(tablet, Row(Key(i)), true);
  for (int i = 0; i < n; ++i) {
    if ((n - 1 - i) % 37 == 0) expected.push_back(Key(i));
  }
  // Inserting rows shifts the marked ones; their marks move with them.
  for (int i = n; i < n + 200; ++i) Put(tablet, Row(Key(i) + "x"), false);
  EXPECT_EQ(TakeDue(tablet), expected);
  EXPECT_THAT(MarkedKeys(tablet), IsEmpty());
}

TEST(TabletTest, EditsReplaceEraseAndMarkRows) {
  Tablet tablet("", "", false);
  for (const char* k : {"a", "b", "c", "d", "e"}) Put(tablet, Row(k));
  TakeDue(tablet);
  for (const char* k : {"a", "b", "c", "d"}) Put(tablet, Row(k), true);
  const int64_t bytes = tablet.bytes();
  const int64_t row_bytes = static_cast<int64_t>(Row("a").bytes());
  // a: kept as is (unmarked by the walk); b: erased; c: replaced by a
  // larger record; d: marked again.
  tablet.EditDue(false, [](const RowRecord& row) {
    RowEdit edit;
    if (row.key() == "b") edit.erase = true;
    if (row.key() == "c") {
      RowData data;
      data.tombstone = 7;
      edit.replacement = RowRecord("c", data);
    }
    if (row.key() == "d") edit.mark = true;
    return edit;
  });
  EXPECT_THAT(Keys(tablet), ElementsAre("a", "c", "d", "e"));
  EXPECT_THAT(MarkedKeys(tablet), ElementsAre("d"));
  RowData data;
  data.tombstone = 7;
  EXPECT_EQ(tablet.bytes(),
            bytes - row_bytes - row_bytes +
                static_cast<int64_t>(RowRecord("c", data).bytes()));
  EXPECT_EQ(tablet.size(), 4u);
  // A marked row replaced by a range edit keeps its mark; erased rows go
  // with theirs.
  tablet.EditRange("c", "e", [](const RowRecord& row) {
    RowEdit edit;
    if (row.key() == "c") edit.erase = true;
    if (row.key() == "d") edit.replacement = Row("d");
    return edit;
  });
  EXPECT_THAT(Keys(tablet), ElementsAre("a", "d", "e"));
  EXPECT_THAT(MarkedKeys(tablet), ElementsAre("d"));
  EXPECT_THAT(TakeDue(tablet), ElementsAre("d"));
  EXPECT_NE(tablet.Seek("e").row, nullptr);  // searchable after the erases
  EXPECT_EQ(tablet.Seek("c").row, nullptr);
}

TEST(TabletTest, EditRangeVisitsExactlyTheRange) {
  Tablet tablet("", "", false);
  for (int i = 0; i < 1000; ++i) Put(tablet, Row(Key(i)));
  std::vector<std::string> seen;
  auto collect = [&](const RowRecord& row) {
    seen.emplace_back(row.key());
    return RowEdit{};
  };
  tablet.EditRange("0001", "0002", collect);
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_EQ(seen.front(), Key(100));
  EXPECT_EQ(seen.back(), Key(199));
  seen.clear();
  tablet.EditRange("0009", "", collect);  // to the end
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_EQ(seen.back(), Key(999));
}

TEST(TabletTest, MarksFollowTheirRowsAcrossSplitAndAbsorb) {
  Tablet tablet("", "", false);
  for (int i = 0; i < 10; ++i) Put(tablet, Row(Key(i)));
  TakeDue(tablet);
  for (int i : {7, 1, 5, 3}) Put(tablet, Row(Key(i)), true);
  Tablet right = tablet.SplitInHalf();  // rows of one size: 5 and 5
  EXPECT_EQ(right.start(), Key(5));
  EXPECT_THAT(MarkedKeys(tablet), ElementsAre(Key(1), Key(3)));
  EXPECT_THAT(MarkedKeys(right), ElementsAre(Key(5), Key(7)));
  tablet.Absorb(std::move(right));
  EXPECT_THAT(MarkedKeys(tablet), ElementsAre(Key(1), Key(3), Key(5), Key(7)));
  EXPECT_THAT(TakeDue(tablet), ElementsAre(Key(1), Key(3), Key(5), Key(7)));
}

TEST(TabletTest, EveryRowStaysDueAcrossSplitAndAbsorb) {
  Tablet tablet("", "", false);
  for (int i = 0; i < 10; ++i) Put(tablet, Row(Key(i)));
  Tablet right = tablet.SplitInHalf();
  EXPECT_EQ(TakeDue(right).size(), 5u);  // new: every row
  Put(right, Row(Key(7)), true);
  tablet.Absorb(std::move(right));  // this one was new: every row again
  EXPECT_THAT(MarkedKeys(tablet), IsEmpty());
  EXPECT_EQ(TakeDue(tablet).size(), 10u);
}

TEST(TabletTest, ACloneHasEveryRowDue) {
  Tablet tablet("", "", false);
  Put(tablet, Row("a"));
  TakeDue(tablet);
  Put(tablet, Row("b"), true);
  Tablet copy = tablet.Clone();
  EXPECT_THAT(MarkedKeys(copy), IsEmpty());
  EXPECT_THAT(Keys(copy), ElementsAre("a", "b"));
  EXPECT_THAT(TakeDue(copy), ElementsAre("a", "b"));
  EXPECT_THAT(MarkedKeys(tablet), ElementsAre("b"));  // the original keeps it
}

// ------------------------------------------------------------ Splits

// A row whose stored size grows with `size` (a cell of that many bytes).
RowRecord SizedRow(const std::string& key, size_t size) {
  static const std::string kValue(1 << 16, 'v');
  RowData row;
  row.families.push_back(FamilyData{
      0,
      kNoVersion,
      {ColumnData{"c",
                  {},
                  {CellData{TimestampFromMicros(1000), 1,
                            std::string_view(kValue).substr(0, size)}}}}});
  return RowRecord(key, row);
}

TEST(TabletTest, SplitInHalfLeavesHalfTheBytesBefore) {
  Tablet tablet("", "", false);
  std::mt19937_64 gen(3);
  const int n = static_cast<int>(Tablet::kMaxChunkRows) * 5 + 3;
  std::vector<int64_t> bytes(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const int k = (i * 7919) % n;
    RowRecord row = SizedRow(Key(k), gen() % 3000);
    bytes[static_cast<size_t>(k)] = static_cast<int64_t>(row.bytes());
    Put(tablet, std::move(row));
  }
  // Skewed: the big rows first, so the half is well before the middle.
  for (int i = 0; i < n / 8; ++i) {
    RowRecord row = SizedRow(Key(i), 4000);
    bytes[static_cast<size_t>(i)] = static_cast<int64_t>(row.bytes());
    Put(tablet, std::move(row));
  }
  int64_t total = 0;
  for (int64_t b : bytes) total += b;
  ASSERT_EQ(total, tablet.bytes());
  size_t expected = 0;
  int64_t before = 0;
  while (before * 2 < total) before += bytes[expected++];
  ASSERT_LT(expected, static_cast<size_t>(n) / 2);
  Tablet right = tablet.SplitInHalf();
  EXPECT_EQ(tablet.size(), expected);
  EXPECT_EQ(tablet.bytes(), before);
  EXPECT_EQ(right.bytes(), total - before);
  EXPECT_EQ(right.start(), Key(static_cast<int>(expected)));
  EXPECT_EQ(tablet.end(), right.start());
}

TEST(TabletTest, SplitInsideAChunkOrAtItsEdgeKeepsBothSidesSearchable) {
  const int n = static_cast<int>(Tablet::kMaxChunkRows) * 6;
  for (int at :
       {1, 37, static_cast<int>(Tablet::kMaxChunkRows) / 2, n / 2, n - 1}) {
    SCOPED_TRACE(at);
    // Rows of one size but row at - 1, large enough that the rows up to it
    // hold half the bytes and those before it do not.
    const int64_t small = static_cast<int64_t>(SizedRow(Key(0), 10).bytes());
    const int64_t big = (std::abs(n + 1 - 2 * at) + 2) * small;
    Tablet left("", "", false);
    for (int i = 0; i < n; ++i) {
      const int k = (i * 7919) % n;
      const size_t size = k == at - 1 ? static_cast<size_t>(big) : 10;
      Put(left, SizedRow(Key(2 * k), size));
    }
    TakeDue(left);
    // Rewritten and marked: one row stays left, one goes right.
    Put(left, SizedRow(Key(0), at == 1 ? static_cast<size_t>(big) : 10), true);
    Put(left, SizedRow(Key(2 * (n - 1)), 10), true);
    const int64_t total = left.bytes();
    Tablet right = left.SplitInHalf();
    ASSERT_EQ(left.size(), static_cast<size_t>(at));
    ASSERT_EQ(right.size(), static_cast<size_t>(n - at));
    EXPECT_EQ(left.end(), Key(2 * at));
    EXPECT_EQ(right.start(), Key(2 * at));
    EXPECT_EQ(right.end(), "");
    EXPECT_EQ(left.bytes() + right.bytes(), total);
    int64_t left_bytes = 0;
    left.Scan({}, false, [&](const RowRecord& row) {
      left_bytes += static_cast<int64_t>(row.bytes());
      return true;
    });
    EXPECT_EQ(left.bytes(), left_bytes);
    EXPECT_THAT(MarkedKeys(left), ElementsAre(Key(0)));
    EXPECT_THAT(MarkedKeys(right), ElementsAre(Key(2 * (n - 1))));
    for (int k = 0; k < n; ++k) {
      const Tablet& side = k < at ? left : right;
      ASSERT_NE(side.Seek(Key(2 * k)).row, nullptr);
      EXPECT_EQ(side.Seek(Key(2 * k + 1)).row, nullptr);
    }
    // Both sides take inserts (odd keys) in order, then join up again.
    for (int k = 0; k < n; k += 3)
      Put(k < at ? left : right, Row(Key(2 * k + 1)));
    left.Absorb(std::move(right));
    ASSERT_EQ(left.size(), static_cast<size_t>(n + (n + 2) / 3));
    const std::vector<std::string> keys = Keys(left);
    for (size_t i = 1; i < keys.size(); ++i) ASSERT_LT(keys[i - 1], keys[i]);
  }
}

// ------------------------------------------------------------ Probes

// Probes a batch of keys step by step, every key's step before the next.
std::vector<Tablet::Probe> ProbeAll(const Tablet& tablet,
                                    const std::vector<std::string>& keys) {
  std::vector<Tablet::Probe> probes(keys.size());
  for (int step = 0; step < Tablet::kProbeSteps; ++step) {
    for (size_t i = 0; i < keys.size(); ++i) {
      tablet.Advance(keys[i], &probes[i]);
    }
  }
  return probes;
}

TEST(TabletTest, ProbingAnEmptyTabletFindsNothing) {
  Tablet tablet("", "", false);
  const std::vector<Tablet::Probe> probes = ProbeAll(tablet, {"k"});
  EXPECT_EQ(probes[0].chunk, nullptr);
  EXPECT_FALSE(tablet.SeekProbed("k", probes[0]).has_value());
}

TEST(TabletTest, AnUnfinishedProbeIsRefused) {
  Tablet tablet("", "", false);
  Put(tablet, Row("k"));
  Tablet::Probe probe;
  for (int step = 0; step < Tablet::kProbeSteps; ++step) {
    EXPECT_FALSE(tablet.SeekProbed("k", probe).has_value()) << step;
    tablet.Advance("k", &probe);
  }
  ASSERT_TRUE(tablet.SeekProbed("k", probe).has_value());
  tablet.Advance("k", &probe);  // nothing after the last step
  ExpectSameSlot(*tablet.SeekProbed("k", probe), tablet.Seek("k"), "k");
}

TEST(TabletTest, AFreshProbeGivesTheSlotSeekGives) {
  Tablet tablet("", "", false);
  const int n = static_cast<int>(Tablet::kMaxChunkRows) * 5;
  for (int i = 0; i < n; ++i) Put(tablet, Row("k" + Key(2 * i)));
  // Present keys, absent ones between, before and after every row.
  std::vector<std::string> keys = {"a", "k", "z"};
  for (int i = 0; i < n; i += 37) {
    keys.push_back("k" + Key(2 * i));
    keys.push_back("k" + Key(2 * i + 1));
  }
  const std::vector<Tablet::Probe> probes = ProbeAll(tablet, keys);
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::optional<RowSlot> slot = tablet.SeekProbed(keys[i], probes[i]);
    ASSERT_TRUE(slot.has_value()) << keys[i];
    ExpectSameSlot(*slot, tablet.Seek(keys[i]), keys[i]);
  }
}

TEST(TabletTest, ProbesForKeysWhoseHeadsTieGiveSeeksSlotOrNothing) {
  // "a" and "z" keep the chunk's prefix empty, so every "p/abcdefgh..." key
  // has the same head: a probe stops at the first of them without reading
  // a row, and SeekProbed must check.
  Tablet tablet("", "", false);
  Put(tablet, Row("a"));
  Put(tablet, Row("z"));
  for (int i = 1; i < 10; i += 2) Put(tablet, Row("p/abcdefgh-" + Key(i)));
  std::vector<std::string> keys;
  for (int i = 0; i < 11; ++i) keys.push_back("p/abcdefgh-" + Key(i));
  keys.push_back("p/abcdefgh");  // a prefix of them all
  const std::vector<Tablet::Probe> probes = ProbeAll(tablet, keys);
  int answered = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::optional<RowSlot> slot = tablet.SeekProbed(keys[i], probes[i]);
    if (!slot) continue;
    ++answered;
    ExpectSameSlot(*slot, tablet.Seek(keys[i]), keys[i]);
  }
  // The keys up to the first tied row: the shorter one, the absent one
  // before it and that row itself.
  EXPECT_GE(answered, 3);
  ASSERT_TRUE(tablet.SeekProbed(keys[1], probes[1]).has_value());
  EXPECT_NE(tablet.SeekProbed(keys[1], probes[1])->row, nullptr);
}

TEST(TabletTest, AProbeMadeStaleByAnInsertBeforeItIsRefused) {
  Tablet tablet("", "", false);
  for (int i = 0; i < 10; ++i) Put(tablet, Row("k" + Key(2 * i)));
  const std::vector<std::string> keys = {"k" + Key(10), "k" + Key(11)};
  const std::vector<Tablet::Probe> probes = ProbeAll(tablet, keys);
  Put(tablet, Row("k" + Key(3)));  // shifts both keys' slots by one
  EXPECT_FALSE(tablet.SeekProbed(keys[0], probes[0]).has_value());
  EXPECT_FALSE(tablet.SeekProbed(keys[1], probes[1]).has_value());
}

TEST(TabletTest, AProbePastASplitIsRefused) {
  // After a split the tablet keeps its lower half: a key now past its end
  // must not get a slot here, even where its probe's chunk survived.
  Tablet tablet("", "", false);
  const int n = static_cast<int>(Tablet::kMaxChunkRows) * 4;
  for (int i = 0; i < n; ++i) Put(tablet, Row("k" + Key(2 * i)));
  std::vector<std::string> keys;
  for (int i = 0; i < n; i += 5) {
    keys.push_back("k" + Key(2 * i));
    keys.push_back("k" + Key(2 * i + 1));
  }
  keys.push_back("z");
  const std::vector<Tablet::Probe> probes = ProbeAll(tablet, keys);
  Tablet right = tablet.SplitInHalf();
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::optional<RowSlot> slot = tablet.SeekProbed(keys[i], probes[i]);
    if (!tablet.Covers(keys[i])) {
      EXPECT_FALSE(slot.has_value()) << keys[i];
    } else if (slot) {
      ExpectSameSlot(*slot, tablet.Seek(keys[i]), keys[i]);
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
  for (int i = 0; i < 3000; ++i) Put(tablet, Row(random_key()));
  size_t used = 0, refused = 0;
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> keys;
    for (int k = 0; k < 50; ++k) keys.push_back(random_key());
    const std::vector<Tablet::Probe> probes = ProbeAll(tablet, keys);
    for (size_t i = 0; i < keys.size(); ++i) {
      const std::optional<RowSlot> slot = tablet.SeekProbed(keys[i], probes[i]);
      const RowSlot seek = tablet.Seek(keys[i]);
      if (slot) {
        ++used;
        ExpectSameSlot(*slot, seek, keys[i]);
      } else {
        ++refused;
      }
      if (gen() % 10 == 0) {
        Erase(tablet, keys[i]);
      } else {
        tablet.Put(seek, Row(keys[i]), /*dirty=*/true);
      }
    }
  }
  // Both outcomes are common here: one tablet takes every write, so each
  // chunk split moves the later chunks of every probe after it.
  EXPECT_GT(used, 1000u);
  EXPECT_GT(refused, 1000u);
}

TEST(TabletTest, AProbeMadeForAnotherKeyNeverGivesAWrongSlot) {
  // A probe for the wrong key must give Seek's slot or nothing, also for
  // keys outside the tablet.
  Tablet tablet("f", "p", false);
  for (int i = 0; i < 400; ++i) Put(tablet, Row("h" + Key(3 * i)));
  // Past the last row, before the first: slots at the tablet's ends.
  const std::vector<Tablet::Probe> edge_probes = ProbeAll(tablet, {"o", "g"});
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
      const std::optional<RowSlot> slot = tablet.SeekProbed(key, probe);
      if (!slot) continue;
      ++used;
      ASSERT_TRUE(tablet.Covers(key)) << key;
      ExpectSameSlot(*slot, tablet.Seek(key), key);
    }
  }
  EXPECT_GT(used, keys.size());
}

// ------------------------------------------------------------ RowProbes

TEST(RowProbesTest, FindGivesTheCoveringTabletAndSeeksSlotOrNothing) {
  // Three tablets; a batch is probed, then written in order (inserts that
  // split chunks) while each write asks Find for its row, and asks with
  // another key's probe too.
  std::vector<std::unique_ptr<Tablet>> tablets;
  tablets.push_back(std::make_unique<Tablet>("", "h", false));
  tablets.push_back(std::make_unique<Tablet>("h", "q", false));
  tablets.push_back(std::make_unique<Tablet>("q", "", false));
  auto tablet_of = [&](std::string_view key) -> size_t {
    size_t i = 0;
    while (i + 1 < tablets.size() && !LessBytes(key, tablets[i + 1]->start())) {
      ++i;
    }
    return i;
  };
  std::mt19937_64 gen(17);
  auto random_key = [&] {
    return std::string(1, static_cast<char>('a' + gen() % 26)) +
           Key(static_cast<int>(gen() % 5000));
  };
  for (int i = 0; i < 2000; ++i) {
    const std::string key = random_key();
    Put(*tablets[tablet_of(key)], Row(key));
  }
  RowProbes probes;
  size_t used = 0;
  for (int round = 0; round < 50; ++round) {
    std::vector<std::string> keys;
    for (int k = 0; k < 100; ++k) keys.push_back(random_key());
    const std::vector<std::string_view> views(keys.begin(), keys.end());
    probes.Start(tablets, views, tablet_of);
    for (size_t i = 0; i < keys.size(); ++i) {
      for (size_t probe : {i, keys.size() - 1 - i, keys.size() + 5}) {
        const auto found = probes.Find(tablets, probe, keys[i]);
        if (!found) continue;
        used += probe == i ? 1 : 0;
        ASSERT_EQ(found->first, tablet_of(keys[i])) << keys[i];
        ExpectSameSlot(found->second, tablets[found->first]->Seek(keys[i]),
                       keys[i]);
      }
      Put(*tablets[tablet_of(keys[i])], Row(keys[i]));
    }
  }
  EXPECT_GT(used, 2000u);  // most of the batch's own probes still hold
}

}  // namespace
}  // namespace btsim::cluster::internal
