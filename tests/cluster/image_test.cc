// Cluster images (cluster/image.h): a cluster loaded from another's image
// holds the same state, goes on exactly as the original does, and images
// that do not fit are refused without a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/aggregate.h"
#include "cluster/cluster.h"
#include "cluster/image.h"
#include "cluster/row_codec.h"
#include "cluster/row_set.h"
#include "sim/fingerprint.h"
#include "tests/cluster/engine_test_util.h"

namespace btsim::cluster {
namespace {

using test_util::C;
using test_util::CreateFamily;
using test_util::DelRow;
using test_util::DropFamily;
using test_util::kStartMicros;
using test_util::kStartTime;
using test_util::Set;
using test_util::UpdateFamily;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// An image held in memory.
struct StoredTable {
  TableImage table;
  std::vector<std::pair<std::string, std::string>> rows;
};

class MemoryImage : public ImageWriter {
 public:
  void Cluster(const ClusterImage& cluster) override {
    this->cluster = cluster;
    tables.clear();
  }
  void Table(const TableImage& table) override {
    tables.push_back(StoredTable{table, {}});
  }
  void Row(std::string_view key, std::string_view encoded) override {
    tables.back().rows.emplace_back(std::string(key), std::string(encoded));
  }

  ClusterImage cluster;
  std::vector<StoredTable> tables;
};

MemoryImage ImageOf(const Cluster& c) {
  MemoryImage image;
  c.WriteImage(image);
  return image;
}

// Loads `image` as a persistent store would.
Status Load(const MemoryImage& image, Cluster& into) {
  BTSIM_RETURN_IF_ERROR(into.LoadImage(image.cluster));
  for (const StoredTable& t : image.tables) {
    BTSIM_RETURN_IF_ERROR(into.LoadTable(t.table));
    for (const auto& [key, encoded] : t.rows) {
      BTSIM_RETURN_IF_ERROR(into.LoadRow(t.table.id, key, encoded));
    }
  }
  return OkStatus();
}

// ---- Field-by-field comparison ----

void ExpectSameFamily(const FamilyImage& a, const FamilyImage& b) {
  SCOPED_TRACE("family " + a.name);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.gc_rule.ToString(), b.gc_rule.ToString());
  EXPECT_TRUE(a.gc_rule == b.gc_rule);
  EXPECT_EQ(a.aggregate, b.aggregate);
  EXPECT_EQ(a.created, b.created);
  EXPECT_EQ(a.changed, b.changed);
  ASSERT_EQ(a.past_rules.size(), b.past_rules.size());
  for (size_t i = 0; i < a.past_rules.size(); ++i) {
    EXPECT_EQ(a.past_rules[i].first, b.past_rules[i].first);
    EXPECT_TRUE(a.past_rules[i].second == b.past_rules[i].second);
  }
}

void ExpectSameTable(const StoredTable& x, const StoredTable& y) {
  const TableImage& a = x.table;
  const TableImage& b = y.table;
  SCOPED_TRACE("table " + a.id);
  EXPECT_EQ(a.id, b.id);
  ASSERT_EQ(a.families.size(), b.families.size());
  for (size_t i = 0; i < a.families.size(); ++i) {
    ExpectSameFamily(a.families[i], b.families[i]);
  }
  EXPECT_EQ(a.family_ids, b.family_ids);
  EXPECT_EQ(a.has_aggregates, b.has_aggregates);
  EXPECT_EQ(a.dropped_families, b.dropped_families);
  EXPECT_EQ(a.created_version, b.created_version);
  ASSERT_EQ(a.superseded.size(), b.superseded.size());
  for (size_t i = 0; i < a.superseded.size(); ++i) {
    const SupersededImage& s = a.superseded[i];
    const SupersededImage& t = b.superseded[i];
    SCOPED_TRACE("superseded[" + std::to_string(i) + "]");
    EXPECT_EQ(s.row_key, t.row_key);
    EXPECT_EQ(s.family_id, t.family_id);
    EXPECT_EQ(s.qualifier, t.qualifier);
    EXPECT_EQ(s.timestamp, t.timestamp);
    EXPECT_EQ(s.version, t.version);
    EXPECT_EQ(s.until, t.until);
    EXPECT_EQ(s.garbage, t.garbage);
  }
  EXPECT_EQ(a.range_tombstones, b.range_tombstones);
  ASSERT_EQ(a.tablets.size(), b.tablets.size());
  for (size_t i = 0; i < a.tablets.size(); ++i) {
    EXPECT_EQ(a.tablets[i].start, b.tablets[i].start) << "tablet " << i;
    EXPECT_EQ(a.tablets[i].pinned, b.tablets[i].pinned) << "tablet " << i;
  }
  ASSERT_EQ(x.rows.size(), y.rows.size());
  for (size_t i = 0; i < x.rows.size(); ++i) {
    EXPECT_EQ(x.rows[i].first, y.rows[i].first) << "row " << i;
    EXPECT_TRUE(x.rows[i].second == y.rows[i].second)
        << "row " << x.rows[i].first << " is encoded differently";
  }
}

void ExpectSameImage(const MemoryImage& a, const MemoryImage& b) {
  EXPECT_EQ(a.cluster.last_version, b.cluster.last_version);
  EXPECT_EQ(a.cluster.deleted_tables, b.cluster.deleted_tables);
  ASSERT_EQ(a.cluster.tokens.size(), b.cluster.tokens.size());
  for (size_t i = 0; i < a.cluster.tokens.size(); ++i) {
    const TokenImage& s = a.cluster.tokens[i];
    const TokenImage& t = b.cluster.tokens[i];
    EXPECT_EQ(s.table, t.table);
    EXPECT_EQ(s.row_key, t.row_key);
    EXPECT_EQ(s.token, t.token);
    EXPECT_EQ(s.committed, t.committed);
  }
  ASSERT_EQ(a.tables.size(), b.tables.size());
  for (size_t i = 0; i < a.tables.size(); ++i) {
    ExpectSameTable(a.tables[i], b.tables[i]);
  }
}

std::string Contents(const Cluster& c) {
  sim::Fingerprint f;
  c.AddContents(&f);
  return f.Hex();
}

// Images, fingerprints and SameContents all agree.
void ExpectSameCluster(const Cluster& a, const Cluster& b) {
  ExpectSameImage(ImageOf(a), ImageOf(b));
  EXPECT_EQ(Contents(a), Contents(b));
  EXPECT_TRUE(a.SameContents(b));
  EXPECT_EQ(a.last_version(), b.last_version());
}

// ---- A cluster with a bit of everything ----

Mutation Add(std::string family, std::string qualifier, int64_t ts,
             int64_t input) {
  return AddToCell{std::move(family), std::move(qualifier),
                   TimestampFromMicros(ts), EncodeInt64(input)};
}

FamilyModification SumFamily(std::string name) {
  FamilyModification m = CreateFamily(std::move(name));
  m.aggregate = Aggregate::kSum;
  return m;
}

class ImageTest : public ::testing::Test {
 protected:
  // Small tablets: a few rows split one.
  static constexpr TableOptions kTableOptions{4096, 8, 4};
  static constexpr uint32_t kOtherOrigin = 1;
  static constexpr int64_t kMillis = 1000;

  ImageTest()
      : clock_(kStartTime),
        original_(clock_, sim::Rng(1), ClusterOptions{0, kTableOptions}),
        loaded_(clock_, sim::Rng(1), ClusterOptions{0, kTableOptions}) {}

  void Tick(int64_t millis = 3) {
    clock_.Advance(std::chrono::milliseconds(millis));
  }

  // The current time's version at the other cluster, `back_millis` ago.
  Version OtherVersion(int64_t back_millis = 0) {
    return MakeVersion(
        TimestampOf(clock_.Now()) - std::chrono::milliseconds(back_millis),
        kOtherOrigin);
  }

  static CommitRecord Replicated(Version version, std::string table,
                                 std::string key, std::vector<Mutation> m,
                                 std::string token = "") {
    CommitRecord r;
    r.kind = CommitRecord::Kind::kMutateRow;
    r.table = std::move(table);
    r.version = version;
    r.row_key = std::move(key);
    r.mutations.assign(m.begin(), m.end());
    r.idempotency_token = std::move(token);
    return r;
  }

  static void Ok(const Status& s) { ASSERT_TRUE(s.ok()) << s.ToString(); }

  // Fills original_ with tables that exercise every part of an image.
  void Build() {
    Cluster& c = original_;
    Ok(c.CreateTable("t1",
                     std::vector{CreateFamily("cf", GcRule::MaxVersions(3)),
                                 CreateFamily("gone"), SumFamily("sum"),
                                 CreateFamily("hist", GcRule::MaxVersions(1)),
                                 CreateFamily("one", GcRule::MaxVersions(1))},
                     {"m"}));
    Ok(c.CreateTable("t2", std::vector{CreateFamily("cf")}, {"b", "d", "f"}));
    Ok(c.CreateTable("doomed", std::vector{CreateFamily("cf")}, {}));
    Tick();
    // Enough rows to split t1's last tablet more than once.
    for (int i = 0; i < 30; ++i) {
      const std::string key = "r" + std::to_string(100 + i);
      Ok(c.MutateRow("t1", key,
                     std::vector{Set("cf", "q", kStartMicros, "v" + key),
                                 Set("gone", "g", kStartMicros, "g")}));
      for (int v = 1; v <= 2; ++v) {
        Ok(c.MutateRow("t1", key,
                       std::vector{Set("cf", "q", kStartMicros + v * kMillis,
                                       "v" + std::to_string(v))}));
      }
      Tick(1);
    }
    for (const char* key : {"a", "c", "e", "g"}) {
      Ok(c.MutateRow("t2", key, std::vector{Set("cf", "q", 1000, key)}));
    }
    Ok(c.MutateRow("doomed", "x", std::vector{Set("cf", "q", 1000, "x")}));
    Tick();
    Ok(c.DeleteTable("doomed"));
    // A compaction, before the changes below (which it would judge).
    Tick();
    c.Compact(MakeVersion(
        TimestampOf(clock_.Now()) - std::chrono::milliseconds(2), 0));
    // GC rules changed over time: past rules.
    Tick();
    Ok(c.ModifyColumnFamilies(
        "t1", std::vector{UpdateFamily("cf", GcRule::MaxVersions(2))}));
    Tick();
    Ok(c.ModifyColumnFamilies(
        "t1",
        std::vector{UpdateFamily(
            "cf", GcRule::Union({GcRule::MaxVersions(1),
                                 GcRule::MaxAge(std::chrono::hours(1))}))}));
    Tick();
    Ok(c.ModifyColumnFamilies("t1", std::vector{DropFamily("gone")}));
    // An aggregate family.
    for (int64_t v : {5, 7, -2}) {
      Ok(c.MutateRow("t1", "counter", std::vector{Add("sum", "n", 5000, v)}));
      Tick(1);
    }
    // A cell written at the same timestamp here and, by a replicated record
    // of another version, elsewhere: superseded cells.
    Ok(c.MutateRow("t1", "s1", std::vector{Set("cf", "q", 7000, "here")}));
    Tick();
    c.ApplyReplicated(Replicated(OtherVersion(), "t1", "s1",
                                 {Set("cf", "q", 7000, "there")}));
    c.ApplyReplicated(Replicated(OtherVersion(/*back_millis=*/50), "t1", "s2",
                                 {Set("cf", "q", 7000, "late")}));
    Ok(c.MutateRow("t1", "s2", std::vector{Set("cf", "q", 7000, "s2")}));
    Tick();
    // A DropRowRange, then a replicated write older than it (ignored) and
    // one newer (applied): range tombstones.
    Ok(c.MutateRow("t1", "p1", std::vector{Set("cf", "q", 1000, "p1")}));
    Ok(c.MutateRow("t1", "p2", std::vector{Set("cf", "q", 1000, "p2")}));
    Tick();
    Ok(c.DropRowRange("t1", "p"));
    drop_time_ = TimestampOf(clock_.Now());
    Tick();
    c.ApplyReplicated(Replicated(OtherVersion(/*back_millis=*/20), "t1", "p1",
                                 {Set("cf", "q", 2000, "before the drop")}));
    c.ApplyReplicated(Replicated(OtherVersion(), "t1", "p3",
                                 {Set("cf", "q", 2000, "after the drop")}));
    // A row holding only a tombstone.
    Ok(c.MutateRow("t2", "c", std::vector{DelRow()}));
    // Idempotency tokens: one committed here, one replicated.
    Tick();
    Ok(c.MutateRow("t2", "i", std::vector{Set("cf", "q", 1000, "once")},
                   Idempotency{"token-here", {}}));
    c.ApplyReplicated(Replicated(OtherVersion(), "t2", "j",
                                 {Set("cf", "q", 1000, "once")},
                                 "token-there"));
    Tick();
    // Cells written while their family's rule was stricter: the past rule
    // decides what compaction keeps of them.
    for (int i = 1; i <= 3; ++i) {
      Ok(c.MutateRow(
          "t1", "h",
          std::vector{Set("hist", "q", i * kMillis, std::to_string(i))}));
      Tick(1);
    }
    Ok(c.ModifyColumnFamilies(
        "t1", std::vector{UpdateFamily("hist", GcRule::MaxVersions(5))}));
    Tick();
    // A cell that lost to a newer version of its timestamp (superseded):
    // it counted for GC from its own version on, so compaction up to a
    // horizon between the two versions removes the older cell.
    Ok(c.MutateRow("t1", "g", std::vector{Set("one", "q", 1000, "old")}));
    Tick(10);
    Ok(c.MutateRow("t1", "g", std::vector{Set("one", "q", 7000, "winner")}));
    between_ = MakeVersion(
        TimestampOf(clock_.Now()) - std::chrono::milliseconds(2), 0);
    c.ApplyReplicated(Replicated(OtherVersion(/*back_millis=*/5), "t1", "g",
                                 {Set("one", "q", 7000, "loser")}));
    Tick();
  }

  // The values of the cells of row `key` of table "t1".
  std::vector<std::string> Values(Cluster& c, const std::string& key) {
    std::vector<std::string> values;
    RowSet rows;
    rows.AddKey(key);
    ReadOptions options;
    options.rows = &rows;
    Ok(c.ReadRows("t1", options,
                  [&](std::string_view, std::span<const CellView> cells) {
                    for (const CellView& cell : cells) {
                      values.emplace_back(cell.value);
                    }
                    return true;
                  }));
    return values;
  }

  // Checks that the built state holds what the tests claim to cover.
  void ExpectCoversEverything(const MemoryImage& image) {
    EXPECT_EQ(image.cluster.deleted_tables.size(), 1u);
    EXPECT_EQ(image.cluster.tokens.size(), 2u);
    ASSERT_EQ(image.tables.size(), 2u);
    const TableImage& t1 = image.tables[0].table;
    EXPECT_EQ(t1.id, "t1");
    EXPECT_GT(t1.tablets.size(), 3u);  // the split at "m" and auto-splits
    EXPECT_EQ(t1.family_ids, 5u);
    EXPECT_TRUE(t1.has_aggregates);
    EXPECT_THAT(t1.dropped_families, ElementsAre(::testing::Key("gone")));
    ASSERT_EQ(t1.families.size(), 4u);
    EXPECT_EQ(t1.families[0].name, "cf");
    EXPECT_EQ(t1.families[0].past_rules.size(), 2u);
    EXPECT_EQ(t1.families[1].name, "hist");
    EXPECT_EQ(t1.families[1].past_rules.size(), 1u);
    EXPECT_FALSE(t1.superseded.empty());
    EXPECT_EQ(t1.range_tombstones.size(), 1u);
    EXPECT_EQ(image.tables[1].table.tablets.size(), 4u);
  }

  sim::ManualClock clock_;
  Cluster original_;
  Cluster loaded_;
  Timestamp drop_time_;
  Version between_ = 0;  // between the superseded cell's two versions
};

TEST_F(ImageTest, ALoadedImageIsTheSameCluster) {
  Build();
  const MemoryImage image = ImageOf(original_);
  ExpectCoversEverything(image);
  Ok(Load(image, loaded_));
  ExpectSameImage(image, ImageOf(loaded_));
  EXPECT_EQ(Contents(original_), Contents(loaded_));
  EXPECT_TRUE(original_.SameContents(loaded_));
  EXPECT_TRUE(loaded_.SameContents(original_));
  EXPECT_EQ(loaded_.ListTables(), original_.ListTables());
  EXPECT_EQ(loaded_.last_version(), original_.last_version());
}

TEST_F(ImageTest, ALoadedClusterHasTheSameFuture) {
  Build();
  Ok(Load(ImageOf(original_), loaded_));
  ExpectSameCluster(original_, loaded_);
  auto both = [&](const std::string& step,
                  const std::function<void(Cluster&)>& f) {
    SCOPED_TRACE(step);
    f(original_);
    f(loaded_);
    ExpectSameCluster(original_, loaded_);
    Tick();
  };
  both("local writes", [&](Cluster& c) {
    for (int i = 0; i < 12; ++i) {
      Ok(c.MutateRow("t1", "r1" + std::to_string(50 + i),
                     std::vector{Set("cf", "q", kStartMicros, "new")}));
    }
    Ok(c.MutateRow("t1", "s1", std::vector{Set("cf", "q", 7000, "again")}));
    Ok(c.MutateRow("t1", "counter", std::vector{Add("sum", "n", 5000, 10)}));
  });
  const Version before_drop =
      MakeVersion(drop_time_ - std::chrono::milliseconds(1), kOtherOrigin);
  both("replicated writes", [&](Cluster& c) {
    c.ApplyReplicated(Replicated(before_drop, "t1", "p2",
                                 {Set("cf", "q", 3000, "before the drop")}));
    c.ApplyReplicated(Replicated(OtherVersion(), "t1", "p2",
                                 {Set("cf", "q", 3000, "after the drop")}));
    c.ApplyReplicated(Replicated(OtherVersion(/*back_millis=*/1), "t1", "s2",
                                 {Set("cf", "q", 7000, "replaced")}));
  });
  both("a replayed token", [&](Cluster& c) {
    Ok(c.MutateRow("t2", "i", std::vector{Set("cf", "q", 1000, "twice")},
                   Idempotency{"token-here", {}}));
    Ok(c.MutateRow("t2", "j", std::vector{Set("cf", "q", 1000, "twice")},
                   Idempotency{"token-there", {}}));
  });
  for (Cluster* c : {&original_, &loaded_}) {
    std::vector<std::string> values;
    Ok(c->ReadRows("t2", ReadOptions{},
                   [&](std::string_view, std::span<const CellView> cells) {
                     for (const CellView& cell : cells) {
                       values.emplace_back(cell.value);
                     }
                     return true;
                   }));
    EXPECT_THAT(values, ElementsAre("a", "e", "g", "once", "once"));
  }
  both("compaction between a superseded cell's versions",
       [&](Cluster& c) { c.Compact(between_); });
  for (Cluster* c : {&original_, &loaded_}) {
    EXPECT_THAT(Values(*c, "g"), ElementsAre("winner"));
    EXPECT_THAT(Values(*c, "h"), ElementsAre("3"));
  }
  both("compaction with a horizon", [&](Cluster& c) {
    c.Compact(MakeVersion(
        TimestampOf(clock_.Now()) - std::chrono::milliseconds(8), 0));
  });
  both("a GC rule change", [&](Cluster& c) {
    Ok(c.ModifyColumnFamilies(
        "t1", std::vector{UpdateFamily("cf", GcRule::MaxVersions(1))}));
  });
  both("compaction of everything", [&](Cluster& c) { c.Compact(); });
  both("more writes after it", [&](Cluster& c) {
    for (int i = 0; i < 10; ++i) {
      Ok(c.MutateRow("t2", "z" + std::to_string(i),
                     std::vector{Set("cf", "q", 1000, "z")}));
    }
  });
}

// ---- Images that do not fit ----

class BadImageTest : public ImageTest {
 protected:
  void SetUp() override {
    Ok(original_.CreateTable(
        "t", std::vector{CreateFamily("a"), CreateFamily("b")}, {"k"}));
    for (const char* key : {"a", "b", "m"}) {
      Ok(original_.MutateRow(
          "t", key,
          std::vector{Set("a", "q", 1000, key), Set("b", "q", 2000, key)}));
    }
    image_ = ImageOf(original_);
    ASSERT_EQ(image_.tables.size(), 1u);
    ASSERT_EQ(image_.tables[0].rows.size(), 3u);
    Ok(loaded_.LoadImage(image_.cluster));
    Ok(loaded_.LoadTable(image_.tables[0].table));
  }

  const std::string& Encoded(size_t row) const {
    return image_.tables[0].rows[row].second;
  }

  // Whether LoadRow refuses with INVALID_ARGUMENT mentioning `what`.
  void ExpectRefused(std::string_view table, std::string_view key,
                     std::string_view encoded, const std::string& what) {
    Status s = loaded_.LoadRow(table, key, encoded);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_THAT(s.message(), HasSubstr(what));
  }

  int64_t LoadedRows() { return (*loaded_.GetTable("t"))->Stats().rows; }

  MemoryImage image_;
};

TEST_F(BadImageTest, AnUnknownTable) {
  ExpectRefused("nope", "a", Encoded(0), "nope");
}

TEST_F(BadImageTest, KeysOutOfOrder) {
  Ok(loaded_.LoadRow("t", "b", Encoded(1)));
  ExpectRefused("t", "a", Encoded(0), "not after");
  ExpectRefused("t", "b", Encoded(1), "not after");
  ExpectRefused("t", "", Encoded(1), "row key");
  ExpectRefused("t", std::string(4097, 'z'), Encoded(1), "row key");
  EXPECT_EQ(LoadedRows(), 1);
  Ok(loaded_.LoadRow("t", "m", Encoded(2)));
  EXPECT_EQ(LoadedRows(), 2);
}

TEST_F(BadImageTest, CorruptEncodings) {
  const std::string& good = Encoded(0);
  for (size_t n = 0; n < good.size(); ++n) {
    ExpectRefused("t", "a", good.substr(0, n), "row encoding");
  }
  std::string trailing = good + '\0';
  ExpectRefused("t", "a", trailing, "trailing bytes");
  // The last value's length (the value is "a"), then the family count.
  std::string flipped = good;
  flipped[good.size() - 2] = static_cast<char>(flipped[good.size() - 2] ^ 2);
  ExpectRefused("t", "a", flipped, "truncated");
  flipped = good;
  flipped[1] = static_cast<char>(flipped[1] ^ 1);
  ExpectRefused("t", "a", flipped, "row encoding");
  EXPECT_EQ(LoadedRows(), 0);
  // Whatever single byte is changed, an encoding CheckRowEncoding accepts
  // decodes and encodes back to itself.
  int accepted = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (int mask : {0x01, 0x02, 0x10, 0x40, 0x80, 0xff}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ mask);
      if (!CheckRowEncoding(bad, 2).ok()) continue;
      ++accepted;
      std::string again;
      EncodeRow(DecodeRow(bad), &again);
      EXPECT_EQ(again, bad) << "byte " << i << " ^ " << mask;
    }
  }
  EXPECT_GT(accepted, 0);  // values and versions may take any byte
  Ok(loaded_.LoadRow("t", "a", good));
}

TEST_F(BadImageTest, EncodingsBreakingTheRowInvariants) {
  const std::string_view q1 = "q1";
  const std::string_view q2 = "q2";
  auto encode = [](const RowData& row) {
    std::string out;
    EncodeRow(row, &out);
    return out;
  };
  auto cell = [](int64_t millis) {
    return CellData{TimestampFromMicros(millis * 1000), 7, "v"};
  };
  RowData out_of_range;
  out_of_range.families.push_back({2, kNoVersion, {{q1, {}, {cell(1)}}}});
  ExpectRefused("t", "a", encode(out_of_range), "family id 2");
  RowData families_unsorted;
  families_unsorted.families.push_back({1, kNoVersion, {{q1, {}, {cell(1)}}}});
  families_unsorted.families.push_back({0, kNoVersion, {{q1, {}, {cell(1)}}}});
  ExpectRefused("t", "a", encode(families_unsorted), "family ids");
  RowData qualifiers_unsorted;
  qualifiers_unsorted.families.push_back(
      {0, kNoVersion, {{q2, {}, {cell(1)}}, {q1, {}, {cell(1)}}}});
  ExpectRefused("t", "a", encode(qualifiers_unsorted), "qualifiers");
  RowData cells_unsorted;
  cells_unsorted.families.push_back(
      {0, kNoVersion, {{q1, {}, {cell(1), cell(2)}}}});
  ExpectRefused("t", "a", encode(cells_unsorted), "cells not by timestamp");
  RowData versions_unsorted;  // contributions to an aggregate cell
  versions_unsorted.families.push_back(
      {0, kNoVersion, {{q1, {}, {cell(1), cell(1)}}}});
  versions_unsorted.families[0].columns[0].cells[1].version = 8;
  ExpectRefused("t", "a", encode(versions_unsorted), "then version");
  RowData negative;
  negative.families.push_back({0, kNoVersion, {{q1, {}, {cell(-1)}}}});
  ExpectRefused("t", "a", encode(negative), "timestamp out of range");
  // A varint longer than it needs to be.
  ExpectRefused("t", "a", std::string("\x80\x00\x00", 3), "malformed");
  EXPECT_EQ(LoadedRows(), 0);
  // The same row, within range, loads.
  RowData fine;
  fine.families.push_back(
      {1, kNoVersion, {{q1, {}, {cell(2), cell(1)}}, {q2, {}, {cell(0)}}}});
  Ok(loaded_.LoadRow("t", "a", encode(fine)));
  EXPECT_EQ(LoadedRows(), 1);
}

TEST_F(BadImageTest, TablesThatDoNotFit) {
  Cluster fresh(clock_, sim::Rng(1), ClusterOptions{0, kTableOptions});
  Ok(fresh.LoadImage(image_.cluster));
  auto refused = [&](const TableImage& t, const std::string& what) {
    Status s = fresh.LoadTable(t);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_THAT(s.message(), HasSubstr(what));
  };
  const TableImage& good = image_.tables[0].table;
  TableImage t = good;
  t.tablets[0].start = "a";
  refused(t, "first tablet");
  t = good;
  t.tablets[1].start = "";
  refused(t, "tablets[1]");
  t = good;
  t.families[1].id = t.families[0].id;
  refused(t, "families[1]");
  t = good;
  t.family_ids = 1;
  refused(t, "families[1]");
  t = good;
  t.families[0].name = "bad name";
  refused(t, "families[0]");
  t = good;
  t.id = "bad id";
  refused(t, "table id");
  t = good;
  t.families[0].aggregate = Aggregate::kSum;
  refused(t, "has_aggregates");
  t = good;
  t.families[0].past_rules = {{t.families[0].changed, GcRule::MaxVersions(1)}};
  refused(t, "past rules");
  t = good;
  t.superseded.push_back(SupersededImage{.row_key = "a", .family_id = 2});
  refused(t, "superseded");
  EXPECT_TRUE(fresh.ListTables().empty());
  Ok(fresh.LoadTable(good));
  refused(good, "loaded twice");
  EXPECT_THAT(fresh.ListTables(), ElementsAre("t"));

  ClusterImage twice = image_.cluster;
  twice.deleted_tables = {{"x", 1}, {"x", 2}};
  EXPECT_EQ(fresh.LoadImage(twice).code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(fresh.ListTables(), ElementsAre("t"));  // nothing changed
}

}  // namespace
}  // namespace btsim::cluster
