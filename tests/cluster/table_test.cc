// Tests of Table used directly: schema changes, tablets (split, merge,
// samples), DropRowRange, compaction with an explicit tombstone horizon, and
// the last-writer-wins rules replication relies on.
#include "cluster/table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/version.h"
#include "sim/rng.h"
#include "tests/cluster/engine_test_util.h"

namespace btsim::cluster {
namespace {

using test_util::Cell;
using test_util::CreateFamily;
using test_util::DelCol;
using test_util::DelFam;
using test_util::DelRow;
using test_util::DropFamily;
using test_util::Keys;
using test_util::Row;
using test_util::Set;
using test_util::UpdateFamily;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kNowMicros = 1'700'000'000'000'000;

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
    CommitContext c{next_version_, kNowMicros};
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

  std::vector<Row> Read(const RowSet* rows = nullptr, bool reversed = false) {
    ReadOptions options;
    options.rows = rows;
    options.reversed = reversed;
    std::vector<Row> out;
    table_.Read(options, rng_,
                [&](std::string_view key, std::span<const CellView> cells) {
                  out.push_back(test_util::CopyRow(key, cells));
                  return true;
                });
    return out;
  }

  // Every row of `table` (or those of `rows`), in order.
  std::vector<Row> Contents(const Table& table, const RowSet* rows = nullptr) {
    ReadOptions options;
    options.rows = rows;
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

  Status Modify(std::vector<FamilyModification> mods) {
    return table_.ModifyColumnFamilies(mods);
  }

  void CompactAll() { table_.Compact(kNowMicros, last_version()); }

  // Writes `count` rows to table_ (made with `options`) and to a table
  // without hints, each write announced (ExpectRow) some writes ahead, more
  // than kHints ahead for some, while the writes split chunks and tablets,
  // and a range drop and compactions change the rows under the hints; some
  // keys are announced twice and some never written. Point reads, announced
  // the same way (their hints are not taken; later writes of those keys may
  // find them), go to both tables between the writes. Expects the same
  // reads and the same contents in both.
  void ExpectHintsChangeNothing(TableOptions options, int count,
                                int keys_in_use);

  Table table_;
  sim::Rng rng_{7};
  Version next_version_ = MakeVersion(kNowMicros, 0);
};

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "row%05d", i);
  return buf;
}

void TableTest::ExpectHintsChangeNothing(TableOptions options, int count,
                                         int keys_in_use) {
  Table plain("plain", options, {});
  const FamilyModification mods[] = {CreateFamily("cf")};
  ASSERT_TRUE(plain.ModifyColumnFamilies(mods).ok());
  std::vector<std::string> keys;
  for (int i = 0; i < count; ++i) keys.push_back(Key((i * 53) % keys_in_use));
  const size_t ahead[] = {0, 1, 3, 9, Table::kHints - 1, Table::kHints + 4};
  auto point_read = [&](const Table& table, std::string_view key) {
    RowSet set;
    set.AddKey(std::string(key));
    return Contents(table, &set);
  };
  // Read keys: written ones (before and after their writes) and absent ones.
  auto read_key = [&](size_t i) {
    return Key(static_cast<int>((i * 31) % (keys_in_use + 40)));
  };
  for (size_t i = 0; i < keys.size(); ++i) {
    const size_t lead = ahead[(i / 50) % std::size(ahead)];
    if (i + lead < keys.size()) table_.ExpectRow(keys[i + lead]);
    if (i % 3 == 0) {
      if (i + lead < keys.size()) table_.ExpectRow(read_key(i + lead));
      EXPECT_EQ(point_read(table_, read_key(i)), point_read(plain, read_key(i)))
          << "read " << read_key(i) << " at write " << i;
    }
    if (i % 7 == 0) table_.ExpectRow(keys[i]);                    // twice
    if (i % 11 == 0) table_.ExpectRow(Key(keys_in_use + 1 + i));  // unused
    if (i == keys.size() / 2) {
      table_.DropRowRange("row001");
      plain.DropRowRange("row001");
    }
    if (i % 97 == 0) {
      table_.Compact(kNowMicros, last_version());
      plain.Compact(kNowMicros, last_version());
    }
    // Every other write deletes the row: compaction then removes rows.
    std::vector<Mutation> m = {
        Set("cf", "q", 1000 * static_cast<int64_t>(i + 1), "v" + keys[i])};
    if (i % 2 == 1) m = {DelRow()};
    const CommitContext commit = Commit();
    ASSERT_TRUE(table_.MutateRow(keys[i], m, commit).ok());
    ASSERT_TRUE(plain.MutateRow(keys[i], m, commit).ok());
  }
  const std::vector<Row> want = Contents(plain);
  EXPECT_GE(want.size(), static_cast<size_t>(keys_in_use / 4));
  EXPECT_EQ(Read(), want);
}

// ------------------------------------------------------------------ Schema

TEST_F(TableTest, FamiliesAreListedByNameWithTheirRules) {
  ASSERT_TRUE(Modify({CreateFamily("zeta", GcRule::MaxVersions(3)),
                      CreateFamily("alpha")})
                  .ok());
  std::vector<ColumnFamily> families = table_.Families();
  ASSERT_EQ(families.size(), 3u);
  EXPECT_EQ(families[0].name, "alpha");
  EXPECT_EQ(families[1].name, "cf");
  EXPECT_EQ(families[2].name, "zeta");
  EXPECT_EQ(families[2].gc_rule, GcRule::MaxVersions(3));
  EXPECT_TRUE(table_.HasFamily("zeta"));
  EXPECT_FALSE(table_.HasFamily("zet"));
}

TEST_F(TableTest, ModifyColumnFamiliesAppliesCreateUpdateDropInOrder) {
  ASSERT_TRUE(
      Modify({CreateFamily("a"), UpdateFamily("a", GcRule::MaxVersions(1)),
              DropFamily("cf"), CreateFamily("cf", GcRule::MaxAge(1000))})
          .ok());
  std::vector<ColumnFamily> families = table_.Families();
  ASSERT_EQ(families.size(), 2u);
  EXPECT_EQ(families[0].name, "a");
  EXPECT_EQ(families[0].gc_rule, GcRule::MaxVersions(1));
  EXPECT_EQ(families[1].name, "cf");
  EXPECT_EQ(families[1].gc_rule, GcRule::MaxAge(1000));
}

TEST_F(TableTest, ModifyColumnFamiliesIsAtomic) {
  Status s =
      Modify({CreateFamily("new"), UpdateFamily("cf", GcRule::MaxVersions(1)),
              DropFamily("missing")});
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("modifications[2]"));
  EXPECT_FALSE(table_.HasFamily("new"));
  ASSERT_EQ(table_.Families().size(), 1u);
  EXPECT_EQ(table_.Families()[0].gc_rule, GcRule::None());
}

TEST_F(TableTest, ModifyColumnFamiliesErrorsNameTheModification) {
  Status exists = Modify({CreateFamily("x"), CreateFamily("x")});
  EXPECT_EQ(exists.code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(exists.message(), HasSubstr("modifications[1]"));

  Status update_missing =
      Modify({UpdateFamily("nope", GcRule::MaxVersions(1))});
  EXPECT_EQ(update_missing.code(), StatusCode::kNotFound);
  EXPECT_THAT(update_missing.message(), HasSubstr("modifications[0]"));

  Status dropped_twice = Modify({DropFamily("cf"), DropFamily("cf")});
  EXPECT_EQ(dropped_twice.code(), StatusCode::kNotFound);
  EXPECT_THAT(dropped_twice.message(), HasSubstr("modifications[1]"));
  EXPECT_TRUE(table_.HasFamily("cf"));

  Status bad_rule =
      Modify({CreateFamily("y"), UpdateFamily("cf", GcRule::MaxVersions(0))});
  EXPECT_EQ(bad_rule.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_rule.message(),
              HasSubstr("modifications[1].update.gc_rule.max_num_versions"));
  EXPECT_FALSE(table_.HasFamily("y"));

  Status bad_create = Modify({CreateFamily("z", GcRule::MaxAge(0))});
  EXPECT_THAT(bad_create.message(),
              HasSubstr("modifications[0].create.gc_rule.max_age"));
}

TEST_F(TableTest, ModifyColumnFamiliesRejectsInvalidFamilyNames) {
  for (const std::string& name :
       {std::string(""), std::string("-dash"), std::string("sp ace"),
        std::string("a:b"), std::string(65, 'f')}) {
    Status s = Modify({CreateFamily("ok"), CreateFamily(name)});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << "'" << name << "'";
    EXPECT_THAT(s.message(), HasSubstr("modifications[1]"));
    EXPECT_FALSE(table_.HasFamily("ok"));
  }
  EXPECT_TRUE(Modify({CreateFamily(std::string(64, 'f'))}).ok());
}

TEST_F(TableTest, DropAndCreateInOneRequestEmptiesTheFamily) {
  Put("r", "old");
  ASSERT_TRUE(Modify({DropFamily("cf"), CreateFamily("cf")}).ok());
  EXPECT_THAT(Read(), IsEmpty());
  ASSERT_TRUE(Modify({CreateFamily("tmp"), DropFamily("tmp")}).ok());
  EXPECT_FALSE(table_.HasFamily("tmp"));
}

TEST_F(TableTest, DroppedFamilyDataIsHiddenAtOnceAndNotResurrected) {
  Put("r1", "old");
  ASSERT_TRUE(Mutate("r2", {Set("cf", "q", 1000, "old2")}).ok());
  ASSERT_TRUE(Modify({DropFamily("cf")}).ok());
  EXPECT_THAT(Read(), IsEmpty());
  Status s = Mutate("r1", {Set("cf", "q", 1000, "x")});
  EXPECT_EQ(s.code(), StatusCode::kNotFound);

  ASSERT_TRUE(Modify({CreateFamily("cf")}).ok());
  EXPECT_THAT(Read(), IsEmpty());  // before compaction
  Put("r1", "new", "other", 2000);
  EXPECT_THAT(ReadRow("r1"), ElementsAre(Cell{"cf", "other", 2000, "new", ""}));
  CompactAll();
  EXPECT_THAT(ReadRow("r1"), ElementsAre(Cell{"cf", "other", 2000, "new", ""}));
  EXPECT_EQ(table_.Stats().rows, 1);  // r2 held only dropped data
}

TEST_F(TableTest, CompactionReclaimsDroppedFamilyBytes) {
  ASSERT_TRUE(Modify({CreateFamily("big")}).ok());
  Put("r", "small");
  ASSERT_TRUE(
      Mutate("r", {Set("big", "q", 1000, std::string(10000, 'x'))}).ok());
  const int64_t before = table_.Stats().bytes;
  EXPECT_GT(before, 10000);
  ASSERT_TRUE(Modify({DropFamily("big")}).ok());
  EXPECT_EQ(table_.Stats().bytes, before);  // still stored
  CompactAll();
  EXPECT_LT(table_.Stats().bytes, 1000);
  EXPECT_THAT(ReadRow("r"), ElementsAre(Cell{"cf", "q", 1000, "small", ""}));
}

TEST_F(TableTest, CellsComeInCanonicalOrderWhateverTheFamilyCreationOrder) {
  ASSERT_TRUE(
      Modify({CreateFamily("zz"), CreateFamily("b"), CreateFamily("aa")}).ok());
  ASSERT_TRUE(Mutate("r", {Set("zz", "q", 1000, "1"), Set("cf", "b", 1000, "2"),
                           Set("aa", "z", 1000, "3"), Set("b", "q", 1000, "4"),
                           Set("cf", "a", 2000, "5"), Set("cf", "a", 3000, "6"),
                           Set("aa", "a", 1000, "7")})
                  .ok());
  EXPECT_THAT(ReadRow("r"), ElementsAre(Cell{"aa", "a", 1000, "7", ""},
                                        Cell{"aa", "z", 1000, "3", ""},
                                        Cell{"b", "q", 1000, "4", ""},
                                        Cell{"cf", "a", 3000, "6", ""},
                                        Cell{"cf", "a", 2000, "5", ""},
                                        Cell{"cf", "b", 1000, "2", ""},
                                        Cell{"zz", "q", 1000, "1", ""}));
}

// ------------------------------------------------------------------ Writes

TEST_F(TableTest, ValidateMutationsNamesTheField) {
  std::vector<Mutation> ok = {Set("cf", "q", 1000, "v"), DelRow()};
  EXPECT_TRUE(table_.ValidateMutations(ok).ok());

  std::vector<Mutation> bad_family = {Set("cf", "q", 0, "v"),
                                      DelCol("nope", "q")};
  Status s = table_.ValidateMutations(bad_family);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("mutations[1].delete_from_column"));

  std::vector<Mutation> bad_range = {DelCol("cf", "q", 5000, 1000)};
  s = table_.ValidateMutations(bad_range);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("mutations[0].delete_from_column.time_range"));

  std::vector<Mutation> negative = {DelCol("cf", "q", -1000, 0)};
  EXPECT_EQ(table_.ValidateMutations(negative).code(),
            StatusCode::kInvalidArgument);

  std::vector<Mutation> bad_fam_delete = {DelFam("nope")};
  s = table_.ValidateMutations(bad_fam_delete);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("mutations[0].delete_from_family"));
}

TEST_F(TableTest, MutateRowRejectsAnEmptyMutationList) {
  Status s = Mutate("r", {});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("mutations"));
  EXPECT_EQ(table_.Stats().rows, 0);
}

TEST_F(TableTest, SameCellFromAnOlderVersionLosesLastWriterWins) {
  // Replication may deliver writes out of order: the newer commit wins.
  const CommitContext newer{MakeVersion(kNowMicros + 10, 1), kNowMicros};
  const CommitContext older{MakeVersion(kNowMicros + 5, 2), kNowMicros};
  std::vector<Mutation> a = {Set("cf", "q", 1000, "newer")};
  std::vector<Mutation> b = {Set("cf", "q", 1000, "older")};
  ASSERT_TRUE(table_.MutateRow("r", a, newer).ok());
  ASSERT_TRUE(table_.MutateRow("r", b, older).ok());
  EXPECT_THAT(ReadRow("r"), ElementsAre(Cell{"cf", "q", 1000, "newer", ""}));
}

TEST_F(TableTest, EqualCommitTimeTieBrokenByOrigin) {
  const CommitContext origin1{MakeVersion(kNowMicros, 1), kNowMicros};
  const CommitContext origin2{MakeVersion(kNowMicros, 2), kNowMicros};
  std::vector<Mutation> a = {Set("cf", "q", 1000, "from2")};
  std::vector<Mutation> b = {Set("cf", "q", 1000, "from1")};
  ASSERT_TRUE(table_.MutateRow("r", a, origin2).ok());
  ASSERT_TRUE(table_.MutateRow("r", b, origin1).ok());
  EXPECT_THAT(ReadRow("r"), ElementsAre(Cell{"cf", "q", 1000, "from2", ""}));
}

TEST_F(TableTest, DeleteArrivingLateCoversOnlyOlderCommits) {
  const CommitContext early{MakeVersion(kNowMicros + 1, 1), kNowMicros};
  const CommitContext del{MakeVersion(kNowMicros + 2, 2), kNowMicros};
  const CommitContext late{MakeVersion(kNowMicros + 3, 1), kNowMicros};
  std::vector<Mutation> w1 = {Set("cf", "a", 1000, "early")};
  std::vector<Mutation> w2 = {Set("cf", "b", 1000, "late")};
  std::vector<Mutation> d = {DelRow()};
  ASSERT_TRUE(table_.MutateRow("r", w1, early).ok());
  ASSERT_TRUE(table_.MutateRow("r", w2, late).ok());
  ASSERT_TRUE(table_.MutateRow("r", d, del).ok());  // arrives last
  EXPECT_THAT(ReadRow("r"), ElementsAre(Cell{"cf", "b", 1000, "late", ""}));
}

TEST_F(TableTest, HotRowReadModifyWriteRewritesItsNewestCellInOneMillisecond) {
  const ReadModifyWriteRule add_one{
      "cf", "n", ReadModifyWriteRule::Kind::kIncrement, "", 1};
  auto increment = [&](int64_t server_micros) {
    CommitContext commit = Commit();
    commit.server_time_micros = server_micros;
    auto r = table_.ReadModifyWriteRow("r", {&add_one, 1}, commit);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  };
  auto counter = [](int64_t n) {
    std::string bytes(8, '\0');
    for (int i = 7; i >= 0; --i, n >>= 8) bytes[i] = static_cast<char>(n);
    return bytes;
  };
  // Increments within one millisecond keep one cell, counting up.
  for (int i = 0; i < 50; ++i) increment(kNowMicros);
  EXPECT_THAT(ReadRow("r"),
              ElementsAre(Cell{"cf", "n", kNowMicros, counter(50), ""}));
  // A later millisecond adds a version (no GC rule: both are kept).
  increment(kNowMicros + 1000);
  increment(kNowMicros + 1000);
  EXPECT_THAT(ReadRow("r"),
              ElementsAre(Cell{"cf", "n", kNowMicros + 1000, counter(52), ""},
                          Cell{"cf", "n", kNowMicros, counter(50), ""}));
  // A deleted column counts from zero again: its hidden cells are not read,
  // and the new cell outlives the delete.
  ASSERT_TRUE(Mutate("r", {DelCol("cf", "n")}).ok());
  increment(kNowMicros + 1000);
  EXPECT_THAT(ReadRow("r"),
              ElementsAre(Cell{"cf", "n", kNowMicros + 1000, counter(1), ""}));
}

// ------------------------------------------------------------------ Reads

TEST_F(TableTest, ResumeAfterSkipsRowsUpToTheKeyInScanOrder) {
  for (const char* k : {"a", "b", "c", "d"}) Put(k);
  ReadOptions options;
  options.resume_after = "b";
  std::vector<std::string> forward;
  table_.Read(options, rng_, [&](std::string_view key, auto) {
    forward.emplace_back(key);
    return true;
  });
  EXPECT_THAT(forward, ElementsAre("c", "d"));

  options.reversed = true;
  options.resume_after = "c";
  std::vector<std::string> reverse;
  table_.Read(options, rng_, [&](std::string_view key, auto) {
    reverse.emplace_back(key);
    return true;
  });
  EXPECT_THAT(reverse, ElementsAre("b", "a"));
}

TEST_F(TableTest, VisitorReturningFalseStopsTheRead) {
  for (const char* k : {"a", "b", "c", "d"}) Put(k);
  for (bool reversed : {false, true}) {
    ReadOptions options;
    options.reversed = reversed;
    std::vector<std::string> seen;
    table_.Read(options, rng_, [&](std::string_view key, auto) {
      seen.emplace_back(key);
      return seen.size() < 2;
    });
    EXPECT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0], reversed ? "d" : "a");
  }
}

// ------------------------------------------------------------------
// DropRowRange

TEST_F(TableTest, DropRowRangeByPrefix) {
  for (const char* k : {"a", "ab", "abc", "abd", "ac", "b"}) Put(k);
  table_.DropRowRange("ab");
  EXPECT_THAT(Keys(Read()), ElementsAre("a", "ac", "b"));
  EXPECT_EQ(table_.Stats().rows, 3);
}

TEST_F(TableTest, DropRowRangeWithFfBytesAndBinaryKeys) {
  const std::vector<std::string> keys = {
      std::string("a\xfe", 2),     std::string("a\xff", 2),
      std::string("a\xff\x00", 3), std::string("a\xff\xff", 3),
      std::string("b", 1),         std::string("\xff", 1),
      std::string("\xff\x01", 2),  std::string("\0", 1),
      std::string("\0\0", 2)};
  for (const std::string& k : keys) Put(k);
  table_.DropRowRange("a\xff");
  EXPECT_THAT(Keys(Read()),
              ElementsAre(std::string("\0", 1), std::string("\0\0", 2),
                          std::string("a\xfe", 2), "b", "\xff", "\xff\x01"));
  table_.DropRowRange("\xff");
  EXPECT_THAT(Keys(Read()),
              ElementsAre(std::string("\0", 1), std::string("\0\0", 2),
                          std::string("a\xfe", 2), "b"));
  table_.DropRowRange(std::string("\0", 1));
  EXPECT_THAT(Keys(Read()), ElementsAre(std::string("a\xfe", 2), "b"));
}

TEST_F(TableTest, DropRowRangeWithEmptyPrefixDropsEverything) {
  for (int i = 0; i < 50; ++i) Put(Key(i));
  table_.DropRowRange("");
  EXPECT_THAT(Read(), IsEmpty());
  EXPECT_EQ(table_.Stats().rows, 0);
  EXPECT_EQ(table_.Stats().bytes, 0);
  Put("again");
  EXPECT_THAT(Keys(Read()), ElementsAre("again"));
}

// ------------------------------------------------------------------ Compaction

TEST_F(TableTest, CompactionKeepsTombstonesNewerThanTheHorizon) {
  Put("r", "old", "q", 1000);
  const Version horizon = last_version();
  ASSERT_TRUE(Mutate("r", {DelCol("cf", "q")}).ok());
  table_.Compact(kNowMicros, horizon);
  EXPECT_THAT(ReadRow("r"), IsEmpty());
  EXPECT_EQ(table_.Stats().rows, 1);  // the tombstone is still stored
  // A write replicated from a peer with a commit older than the delete stays
  // hidden because the tombstone survived.
  std::vector<Mutation> stale = {Set("cf", "q", 2000, "stale")};
  ASSERT_TRUE(table_
                  .MutateRow("r", stale,
                             CommitContext{horizon - (1 << kOriginBits) + 5,
                                           kNowMicros})
                  .ok());
  EXPECT_THAT(ReadRow("r"), IsEmpty());
  CompactAll();
  EXPECT_EQ(table_.Stats().rows, 0);
}

TEST_F(TableTest, CompactionRemovesEmptyRowsAndCoveredBytes) {
  for (int i = 0; i < 10; ++i) Put(Key(i), std::string(100, 'x'));
  const int64_t bytes = table_.Stats().bytes;
  for (int i = 0; i < 10; i += 2) ASSERT_TRUE(Mutate(Key(i), {DelRow()}).ok());
  EXPECT_EQ(table_.Stats().rows, 10);  // tombstones are stored rows
  EXPECT_GE(table_.Stats().bytes, bytes);
  EXPECT_EQ(Read().size(), 5u);
  CompactAll();
  EXPECT_EQ(table_.Stats().rows, 5);
  EXPECT_LT(table_.Stats().bytes, bytes * 6 / 10);
  EXPECT_EQ(Read().size(), 5u);
}

TEST_F(TableTest, CompactionAppliesGcRuleAtTheGivenTime) {
  ASSERT_TRUE(Modify({UpdateFamily("cf", GcRule::MaxAge(60'000'000))}).ok());
  Put("r", "old", "q", kNowMicros - 120'000'000);
  Put("r", "new", "q", kNowMicros - 30'000'000);
  table_.Compact(kNowMicros - 60'000'000, last_version());
  EXPECT_EQ(ReadRow("r").size(), 2u);  // nothing old enough yet
  table_.Compact(kNowMicros, last_version());
  EXPECT_THAT(ReadRow("r"),
              ElementsAre(Cell{"cf", "q", kNowMicros - 30'000'000, "new", ""}));
}

TEST_F(TableTest, CompactionRemovesARowWhoseOnlyColumnAgedOut) {
  ASSERT_TRUE(Modify({UpdateFamily("cf", GcRule::MaxAge(60'000'000))}).ok());
  Put("gone", "a", "q", kNowMicros - 120'000'000);
  Put("gone", "b", "q", kNowMicros - 90'000'000);
  Put("kept", "c", "q", kNowMicros - 90'000'000);
  Put("kept", "d", "q", kNowMicros - 10'000'000);
  table_.Compact(kNowMicros, last_version());
  EXPECT_THAT(ReadRow("gone"), IsEmpty());
  EXPECT_THAT(ReadRow("kept"),
              ElementsAre(Cell{"cf", "q", kNowMicros - 10'000'000, "d", ""}));
  EXPECT_EQ(table_.Stats().rows, 1);
}

TEST_F(TableTest, CompactionReclaimsARowWrittenSinceTheLastOne) {
  ASSERT_TRUE(Modify({UpdateFamily("cf", GcRule::MaxVersions(1))}).ok());
  for (int i = 0; i < 10; ++i) Put(Key(i), "old", "q", 1000);
  CompactAll();  // the schema changed: every row
  Put(Key(3), "new", "q", 2000);
  const int64_t bytes = table_.Stats().bytes;
  CompactAll();  // only the candidate
  EXPECT_LT(table_.Stats().bytes, bytes);
  EXPECT_EQ(table_.Stats().rows, 10);
  EXPECT_THAT(ReadRow(Key(3)), ElementsAre(Cell{"cf", "q", 2000, "new", ""}));
  const int64_t compacted = table_.Stats().bytes;
  CompactAll();
  EXPECT_EQ(table_.Stats().bytes, compacted);
}

TEST_F(TableTest, TombstoneKeptAboveTheHorizonGoesOnceTheHorizonPassesIt) {
  Put("other", "v", "q", 1000);
  CompactAll();
  Put("r", "old", "q", 1000);
  const Version horizon = last_version();
  ASSERT_TRUE(Mutate("r", {DelCol("cf", "q")}).ok());
  table_.Compact(kNowMicros, horizon);
  EXPECT_EQ(table_.Stats().rows, 2);  // the tombstone is still stored
  CompactAll();                       // "r" was not written again
  EXPECT_EQ(table_.Stats().rows, 1);
  EXPECT_THAT(Keys(Read()), ElementsAre("other"));
}

TEST_F(TableTest, CompactionSkipsRowsErasedSinceTheyWereWritten) {
  ASSERT_TRUE(Modify({UpdateFamily("cf", GcRule::MaxVersions(1))}).ok());
  for (int i = 0; i < 10; ++i) Put(Key(i), "old", "q", 1000);
  CompactAll();
  for (int i = 0; i < 10; ++i) Put(Key(i), "new", "q", 2000);
  table_.DropRowRange("row0000");  // rows 0 to 9: every candidate
  Put(Key(20), "v", "q", 1000);
  CompactAll();
  EXPECT_THAT(Keys(Read()), ElementsAre(Key(20)));
  EXPECT_EQ(table_.Stats().rows, 1);
}

// Whatever the history, compacting only the candidates leaves the table as
// compacting every row would (a clone compacts every row).
TEST_F(TableTest, CompactingCandidatesMatchesCompactingEveryRow) {
  Table table("t", TableOptions{1 << 20, 8, 4}, {"row00100"});
  const FamilyModification mods[] = {
      CreateFamily("cf", GcRule::MaxVersions(2))};
  ASSERT_TRUE(table.ModifyColumnFamilies(mods).ok());
  sim::Rng rng(42);
  std::vector<Version> versions;
  for (int step = 0; step < 60; ++step) {
    for (int op = 0; op < 40; ++op) {
      const std::string key = Key(static_cast<int>(rng.Uniform(200)));
      const std::string qualifier = rng.Bernoulli(0.5) ? "a" : "b";
      const int64_t ts = 1000 * static_cast<int64_t>(1 + rng.Uniform(5));
      std::vector<Mutation> mutations;
      switch (rng.Uniform(10)) {
        case 0:
          mutations = {DelCol("cf", qualifier)};
          break;
        case 1:
          mutations = {DelFam("cf")};
          break;
        case 2:
          mutations = {DelRow()};
          break;
        case 3:
          table.DropRowRange(key.substr(0, 7));
          continue;
        case 4:
          table.DropRowRangeAt(key.substr(0, 7), Commit().version);
          continue;
        default:
          mutations = {Set("cf", qualifier, ts, "v" + std::to_string(step))};
      }
      ASSERT_TRUE(table.MutateRow(key, mutations, Commit()).ok());
    }
    versions.push_back(last_version());
    const Version horizon = versions[versions.size() / 2];
    std::unique_ptr<Table> every_row = table.Clone();
    table.Compact(kNowMicros, horizon);
    every_row->Compact(kNowMicros, horizon);
    ASSERT_EQ(Contents(table), Contents(*every_row)) << "step " << step;
    const TableStats a = table.Stats();
    const TableStats b = every_row->Stats();
    ASSERT_EQ(a.rows, b.rows) << "step " << step;
    ASSERT_EQ(a.bytes, b.bytes) << "step " << step;
    ASSERT_EQ(a.tablets, b.tablets) << "step " << step;
  }
}

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

TEST_F(SmallTabletTest, WritesGivenProbesMatchWritesWithout) {
  // One batch probed first (PrefetchRows), then written with each key's
  // probe, while its own writes split chunks and tablets under the probes;
  // and again with every probe wrong (reversed). Both must give what
  // writing without probes gives.
  auto make = [](const std::string& id) {
    auto t = std::make_unique<Table>(id, TableOptions{1 << 20, 8, 4},
                                     std::vector<std::string>{});
    const FamilyModification mods[] = {CreateFamily("cf")};
    BTSIM_CHECK(t->ModifyColumnFamilies(mods).ok());
    return t;
  };
  std::unique_ptr<Table> plain = make("plain");
  std::unique_ptr<Table> reversed = make("reversed");
  for (int round = 0; round < 3; ++round) {
    std::vector<std::string> keys;
    for (int i = 0; i < 150; ++i) keys.push_back(Key((i * 37 + round) % 200));
    const std::vector<std::string_view> views(keys.begin(), keys.end());
    table_.PrefetchRows(views);
    reversed->PrefetchRows(views);
    for (size_t i = 0; i < keys.size(); ++i) {
      const std::vector<Mutation> m = {
          Set("cf", "q", 1000, "v" + std::to_string(round))};
      const CommitContext commit = Commit();
      ASSERT_TRUE(table_.MutateRow(keys[i], m, commit, i).ok());
      ASSERT_TRUE(
          reversed->MutateRow(keys[i], m, commit, keys.size() - 1 - i).ok());
      ASSERT_TRUE(plain->MutateRow(keys[i], m, commit).ok());
    }
  }
  EXPECT_GT(table_.Stats().tablets, 10);
  const std::vector<Row> want = Contents(*plain);
  EXPECT_GE(want.size(), 150u);
  EXPECT_EQ(Read(), want);
  EXPECT_EQ(Contents(*reversed), want);
}

TEST_F(SmallTabletTest, HintedWritesMatchWritesWithout) {
  ExpectHintsChangeNothing(TableOptions{1 << 20, 8, 4}, 600, 230);
  EXPECT_GT(table_.Stats().tablets, 10);
}

TEST_F(TableTest, HintedWritesInOneTabletMatchWritesWithout) {
  // Many chunks of one tablet: rows move under the hints' offsets.
  ExpectHintsChangeNothing(TableOptions{}, 4000, 1500);
  EXPECT_EQ(table_.Stats().tablets, 1);
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
  table_.DropRowRange("");
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
  table_.DropRowRange("n");
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
  table_.DropRowRange("n");
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
}  // namespace btsim::cluster
