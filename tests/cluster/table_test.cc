// Tests of Table used directly: schema changes, writes and reads,
// DropRowRange, compaction with an explicit tombstone horizon, and the
// last-writer-wins rules replication relies on. Its tablets are tested in
// table_tablets_test.cc.
#include "cluster/table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/version.h"
#include "tests/cluster/engine_test_util.h"
#include "tests/cluster/table_fixture.h"

namespace btsim::cluster::table_test {
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
              DropFamily("cf"),
              CreateFamily("cf", GcRule::MaxAge(std::chrono::milliseconds(1)))})
          .ok());
  std::vector<ColumnFamily> families = table_.Families();
  ASSERT_EQ(families.size(), 2u);
  EXPECT_EQ(families[0].name, "a");
  EXPECT_EQ(families[0].gc_rule, GcRule::MaxVersions(1));
  EXPECT_EQ(families[1].name, "cf");
  EXPECT_EQ(families[1].gc_rule, GcRule::MaxAge(std::chrono::milliseconds(1)));
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

  Status bad_create =
      Modify({CreateFamily("z", GcRule::MaxAge(std::chrono::microseconds(0)))});
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

TEST_F(TableTest, InvalidMutationsAreNamedAndChangeNothing) {
  std::vector<Mutation> bad_family = {Set("cf", "q", 0, "v"),
                                      DelCol("nope", "q")};
  Status s = Mutate("r", bad_family);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("mutations[1].delete_from_column"));

  std::vector<Mutation> bad_range = {DelCol("cf", "q", 5000, 1000)};
  s = Mutate("r", bad_range);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("mutations[0].delete_from_column.time_range"));

  std::vector<Mutation> negative = {DelCol("cf", "q", -1000, 0)};
  EXPECT_EQ(Mutate("r", negative).code(), StatusCode::kInvalidArgument);

  std::vector<Mutation> bad_fam_delete = {DelFam("nope")};
  s = Mutate("r", bad_fam_delete);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("mutations[0].delete_from_family"));
  EXPECT_TRUE(Read().empty());

  std::vector<Mutation> ok = {Set("cf", "q", 1000, "v"), DelRow()};
  EXPECT_TRUE(Mutate("r", ok).ok());
}

TEST_F(TableTest, MutateRowRejectsAnEmptyMutationList) {
  Status s = Mutate("r", {});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("mutations"));
  EXPECT_EQ(table_.Stats().rows, 0);
}

TEST_F(TableTest, SameCellFromAnOlderVersionLosesLastWriterWins) {
  // Replication may deliver writes out of order: the newer commit wins.
  const CommitContext newer{
      MakeVersion(kNow + std::chrono::microseconds(10), 1), kNow};
  const CommitContext older{MakeVersion(kNow + std::chrono::microseconds(5), 2),
                            kNow};
  std::vector<Mutation> a = {Set("cf", "q", 1000, "newer")};
  std::vector<Mutation> b = {Set("cf", "q", 1000, "older")};
  ASSERT_TRUE(table_.MutateRow("r", a, newer).ok());
  ASSERT_TRUE(table_.MutateRow("r", b, older).ok());
  EXPECT_THAT(ReadRow("r"), ElementsAre(Cell{"cf", "q", 1000, "newer", ""}));
}

TEST_F(TableTest, EqualCommitTimeTieBrokenByOrigin) {
  const CommitContext origin1{MakeVersion(kNow, 1), kNow};
  const CommitContext origin2{MakeVersion(kNow, 2), kNow};
  std::vector<Mutation> a = {Set("cf", "q", 1000, "from2")};
  std::vector<Mutation> b = {Set("cf", "q", 1000, "from1")};
  ASSERT_TRUE(table_.MutateRow("r", a, origin2).ok());
  ASSERT_TRUE(table_.MutateRow("r", b, origin1).ok());
  EXPECT_THAT(ReadRow("r"), ElementsAre(Cell{"cf", "q", 1000, "from2", ""}));
}

TEST_F(TableTest, DeleteArrivingLateCoversOnlyOlderCommits) {
  const CommitContext early{MakeVersion(kNow + std::chrono::microseconds(1), 1),
                            kNow};
  const CommitContext del{MakeVersion(kNow + std::chrono::microseconds(2), 2),
                          kNow};
  const CommitContext late{MakeVersion(kNow + std::chrono::microseconds(3), 1),
                           kNow};
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
    commit.server_time = TimestampFromMicros(server_micros);
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
  DropRowRange("ab");
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
  DropRowRange("a\xff");
  EXPECT_THAT(Keys(Read()),
              ElementsAre(std::string("\0", 1), std::string("\0\0", 2),
                          std::string("a\xfe", 2), "b", "\xff", "\xff\x01"));
  DropRowRange("\xff");
  EXPECT_THAT(Keys(Read()),
              ElementsAre(std::string("\0", 1), std::string("\0\0", 2),
                          std::string("a\xfe", 2), "b"));
  DropRowRange(std::string("\0", 1));
  EXPECT_THAT(Keys(Read()), ElementsAre(std::string("a\xfe", 2), "b"));
}

TEST_F(TableTest, DropRowRangeWithEmptyPrefixDropsEverything) {
  for (int i = 0; i < 50; ++i) Put(Key(i));
  DropRowRange("");
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
  table_.Compact(kNow, horizon);
  EXPECT_THAT(ReadRow("r"), IsEmpty());
  EXPECT_EQ(table_.Stats().rows, 1);  // the tombstone is still stored
  // A write replicated from a peer with a commit older than the delete stays
  // hidden because the tombstone survived.
  std::vector<Mutation> stale = {Set("cf", "q", 2000, "stale")};
  ASSERT_TRUE(
      table_
          .MutateRow("r", stale,
                     CommitContext{horizon - (1 << kOriginBits) + 5, kNow})
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

TEST_F(TableTest, CompactionJudgesAgesAtTheHorizonsTime) {
  ASSERT_TRUE(
      Modify({UpdateFamily("cf", GcRule::MaxAge(std::chrono::minutes(1)))})
          .ok());
  Put("r", "old", "q", kNowMicros - 120'000'000);
  Put("r", "new", "q", kNowMicros - 30'000'000);
  // Every change up to about kNow is applied, so ages are final as of
  // then; "new" is older than a minute at `now` but not yet at kNow.
  table_.Compact(kNow + std::chrono::minutes(10), last_version());
  EXPECT_THAT(ReadRow("r"),
              ElementsAre(Cell{"cf", "q", kNowMicros - 30'000'000, "new", ""}));
}

TEST(TableGcTest, ARewrittenTimestampCountsFromItsFirstVersionInAnyOrder) {
  // Column q holds an old cell at ts 0 (version 1) and a cell at ts 3000
  // written twice (versions 2 and 4); the family keeps one version until
  // version 3 and everything after. From 2 to 3 the old cell was surplus,
  // whichever order a replica received the two writes of ts 3000 in.
  auto at = [](int v) { return MakeVersion(kNow, 0) + (v << kOriginBits); };
  auto replica = [&](bool rewrite_arrives_first) {
    auto table = std::make_unique<Table>("t", TableOptions{},
                                         std::vector<std::string>{});
    const FamilyModification create[] = {
        CreateFamily("cf", GcRule::MaxVersions(1))};
    EXPECT_TRUE(table->ModifyColumnFamilies(create, at(0)).ok());
    auto write = [&](int64_t ts, const char* value, int v) {
      const std::vector<Mutation> m = {Set("cf", "q", ts, value)};
      EXPECT_TRUE(table->MutateRow("r", m, CommitContext{at(v), kNow}).ok());
    };
    write(0, "old", 1);
    if (rewrite_arrives_first) {
      write(3000, "second", 4);
      write(3000, "first", 2);  // arrives late: loses to version 4
    } else {
      write(3000, "first", 2);
      write(3000, "second", 4);
    }
    const FamilyModification relax[] = {UpdateFamily("cf", GcRule::None())};
    EXPECT_TRUE(table->ModifyColumnFamilies(relax, at(3)).ok());
    table->Compact(kNow + std::chrono::seconds(1), at(10));
    return table;
  };
  for (bool first : {false, true}) {
    SCOPED_TRACE(first ? "rewrite first" : "in order");
    std::unique_ptr<Table> table = replica(first);
    RowSet set;
    set.AddKey("r");
    std::vector<std::string> values;
    sim::Rng rng(1);
    ReadOptions options;
    options.rows = &set;
    table->Read(options, rng,
                [&](std::string_view, std::span<const CellView> cells) {
                  for (const CellView& c : cells) {
                    values.emplace_back(c.value);
                  }
                  return true;
                });
    EXPECT_THAT(values, ElementsAre("second"));
  }
}

TEST(TableGcTest, ACellWrittenTwiceInOneRequestCountsOnce) {
  // Keep two versions. q@1 (version 1) stays whatever the order of q@5's
  // writes: twice in one request at version 2, once at version 3.
  auto at = [](int v) { return MakeVersion(kNow, 0) + (v << kOriginBits); };
  auto cells = [&](bool newer_first) {
    Table table("t", TableOptions{}, std::vector<std::string>{});
    const FamilyModification create[] = {
        CreateFamily("cf", GcRule::MaxVersions(2))};
    EXPECT_TRUE(table.ModifyColumnFamilies(create, at(0)).ok());
    auto write = [&](std::vector<Mutation> m, int v) {
      EXPECT_TRUE(table.MutateRow("r", m, CommitContext{at(v), kNow}).ok());
    };
    write({Set("cf", "q", 1000, "x")}, 1);
    const std::vector<Mutation> twice = {Set("cf", "q", 5000, "a"),
                                         Set("cf", "q", 5000, "b")};
    if (newer_first) {
      write({Set("cf", "q", 5000, "c")}, 3);
      write(twice, 2);
    } else {
      write(twice, 2);
      write({Set("cf", "q", 5000, "c")}, 3);
    }
    table.Compact(kNow + std::chrono::seconds(1), at(10));
    RowSet set;
    set.AddKey("r");
    ReadOptions options;
    options.rows = &set;
    sim::Rng rng(1);
    std::vector<std::string> values;
    table.Read(options, rng,
               [&](std::string_view, std::span<const CellView> row) {
                 for (const CellView& c : row) values.emplace_back(c.value);
                 return true;
               });
    return values;
  };
  EXPECT_THAT(cells(false), ElementsAre("c", "x"));
  EXPECT_THAT(cells(true), ElementsAre("c", "x"));
}

TEST_F(TableTest, CompactionRemovesARowWhoseOnlyColumnAgedOut) {
  ASSERT_TRUE(
      Modify({UpdateFamily("cf", GcRule::MaxAge(std::chrono::minutes(1)))})
          .ok());
  Put("gone", "a", "q", kNowMicros - 120'000'000);
  Put("gone", "b", "q", kNowMicros - 90'000'000);
  Put("kept", "c", "q", kNowMicros - 90'000'000);
  Put("kept", "d", "q", kNowMicros - 10'000'000);
  table_.Compact(kNow, last_version());
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
  table_.Compact(kNow, horizon);
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
  DropRowRange("row0000");  // rows 0 to 9: every candidate
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
        case 3:  // a drop committed earlier, arriving late
          table.DropRowRangeAt(key.substr(0, 7), versions.empty()
                                                     ? Commit().version
                                                     : versions.back());
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
    table.Compact(kNow, horizon);
    every_row->Compact(kNow, horizon);
    ASSERT_EQ(Contents(table), Contents(*every_row)) << "step " << step;
    const TableStats a = table.Stats();
    const TableStats b = every_row->Stats();
    ASSERT_EQ(a.rows, b.rows) << "step " << step;
    ASSERT_EQ(a.bytes, b.bytes) << "step " << step;
    ASSERT_EQ(a.tablets, b.tablets) << "step " << step;
  }
}

}  // namespace
}  // namespace btsim::cluster::table_test
