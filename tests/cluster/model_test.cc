// A randomized model test: thousands of random mutations (sets, the three
// kinds of delete, appends, check-and-mutate, invalid requests, row-range
// drops) are applied both to a Cluster with tiny tablet limits and to a
// simple reference model in which every delete immediately erases what it
// matches. Full-table reads, range reads and filtered reads must agree after
// every few operations, and again after each compaction.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/filter.h"
#include "sim/clock.h"
#include "sim/rng.h"
#include "tests/cluster/engine_test_util.h"

namespace btsim::cluster {
namespace {

using test_util::Cell;
using test_util::CreateFamily;
using test_util::Keys;
using test_util::Row;

using Column = std::map<int64_t, std::string, std::greater<>>;  // newest first
using Family = std::map<std::string, Column>;
using RowModel = std::map<std::string, Family>;
using TableModel = std::map<std::string, RowModel>;

// Families are created in non-alphabetical order on purpose.
const std::vector<std::string> kFamilies = {"c", "a", "b"};
const std::vector<std::string> kQualifiers = {"", "x", "y"};

class Model {
 public:
  void Apply(std::string_view key, const Mutation& m) {
    RowModel& row = rows_[std::string(key)];
    if (const auto* set = std::get_if<SetCell>(&m)) {
      row[set->family][set->qualifier][Micros(set->timestamp)] = set->value;
    } else if (const auto* col = std::get_if<DeleteFromColumn>(&m)) {
      auto f = row.find(col->family);
      if (f != row.end()) {
        auto c = f->second.find(col->qualifier);
        if (c != f->second.end()) {
          std::erase_if(c->second, [&](const auto& cell) {
            const int64_t start = Micros(col->start);
            const int64_t end = Micros(col->end);
            return cell.first >= start && (end == 0 || cell.first < end);
          });
        }
      }
    } else if (const auto* fam = std::get_if<DeleteFromFamily>(&m)) {
      row.erase(fam->family);
    } else {
      row.clear();
    }
    Prune(std::string(key));
  }

  void DropPrefix(std::string_view prefix) {
    std::erase_if(rows_, [&](const auto& r) {
      return std::string_view(r.first).starts_with(prefix);
    });
  }

  bool HasCells(std::string_view key) const {
    return rows_.count(std::string(key)) > 0;
  }

  // The newest cell of a column, if any.
  const std::pair<const int64_t, std::string>* Latest(
      std::string_view key, const std::string& family,
      const std::string& qualifier) const {
    auto r = rows_.find(std::string(key));
    if (r == rows_.end()) return nullptr;
    auto f = r->second.find(family);
    if (f == r->second.end()) return nullptr;
    auto c = f->second.find(qualifier);
    if (c == f->second.end() || c->second.empty()) return nullptr;
    return &*c->second.begin();
  }

  // Rows in key order, cells in canonical order; `cells_per_column` limits
  // the versions per column (0: all).
  std::vector<Row> Rows(const std::function<bool(const std::string&)>& keep,
                        int cells_per_column = 0) const {
    std::vector<Row> out;
    for (const auto& [key, row] : rows_) {
      if (!keep(key)) continue;
      Row r{key, {}};
      for (const auto& [family, columns] : row) {
        for (const auto& [qualifier, cells] : columns) {
          int n = 0;
          for (const auto& [ts, value] : cells) {
            if (cells_per_column > 0 && n++ >= cells_per_column) break;
            r.cells.push_back(Cell{family, qualifier, ts, value, ""});
          }
        }
      }
      out.push_back(std::move(r));
    }
    return out;
  }

  size_t size() const { return rows_.size(); }

 private:
  void Prune(const std::string& key) {
    auto r = rows_.find(key);
    if (r == rows_.end()) return;
    for (auto f = r->second.begin(); f != r->second.end();) {
      std::erase_if(f->second, [](const auto& c) { return c.second.empty(); });
      f = f->second.empty() ? r->second.erase(f) : std::next(f);
    }
    if (r->second.empty()) rows_.erase(r);
  }

  TableModel rows_;
};

class ModelTest : public ::testing::TestWithParam<uint64_t> {
 protected:
  ModelTest()
      : rng_(GetParam()),
        clock_(test_util::kStartTime),
        cluster_(clock_, sim::Rng(GetParam()).Fork("cluster"),
                 ClusterOptions{0, TableOptions{1 << 20, 4, 4}}) {}

  void SetUp() override {
    std::vector<FamilyModification> families;
    for (const std::string& f : kFamilies) families.push_back(CreateFamily(f));
    ASSERT_TRUE(cluster_.CreateTable("t", families, {"b"}).ok());
  }

  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[rng_.Uniform(v.size())];
  }

  std::string RandomKey() {
    static const std::vector<std::string> kKeys = {"a",
                                                   "aa",
                                                   "ab",
                                                   "b",
                                                   "ba",
                                                   "bb",
                                                   "c",
                                                   "ca",
                                                   "cb",
                                                   "cc",
                                                   std::string("a\0", 2),
                                                   "\xff"};
    return Pick(kKeys);
  }

  int64_t RandomTs() { return static_cast<int64_t>(rng_.Uniform(6)) * 1000; }

  // Server time of the next commit: the clock moves by whole milliseconds
  // before every request, so the commit time is the clock time.
  int64_t NowMicros() const {
    return sim::NanosSinceEpoch(clock_.Now()) / 1000;
  }

  Mutation RandomMutation() {
    const uint64_t kind = rng_.Uniform(20);
    if (kind < 11) {
      const Timestamp ts = rng_.Bernoulli(0.05)
                               ? kServerTimestamp
                               : TimestampFromMicros(RandomTs());
      return SetCell{Pick(kFamilies), Pick(kQualifiers), ts,
                     "v" + std::to_string(rng_.Uniform(1000))};
    }
    if (kind < 16) {
      const int64_t start = RandomTs();
      const int64_t end =
          rng_.Bernoulli(0.3) ? 0 : start + int64_t(rng_.Uniform(4)) * 1000;
      return DeleteFromColumn{Pick(kFamilies), Pick(kQualifiers),
                              TimestampFromMicros(start),
                              TimestampFromMicros(end)};
    }
    if (kind < 19) return DeleteFromFamily{Pick(kFamilies)};
    return DeleteFromRow{};
  }

  std::vector<Mutation> RandomMutations() {
    std::vector<Mutation> out;
    const int n = 1 + static_cast<int>(rng_.Uniform(3));
    for (int i = 0; i < n; ++i) out.push_back(RandomMutation());
    return out;
  }

  // Resolves server timestamps the way the engine does for one commit.
  void ApplyToModel(std::string_view key, const std::vector<Mutation>& ms) {
    const int64_t now = NowMicros();
    for (Mutation m : ms) {
      if (auto* set = std::get_if<SetCell>(&m)) {
        if (set->timestamp == kServerTimestamp) {
          set->timestamp = TimestampFromMicros(now - now % 1000);
        }
      }
      model_.Apply(key, m);
    }
  }

  void Step() {
    clock_.Advance(std::chrono::milliseconds(1 + rng_.Uniform(3)));
    const uint64_t op = rng_.Uniform(100);
    if (op < 55) {
      const std::string key = RandomKey();
      const std::vector<Mutation> ms = RandomMutations();
      Status s = cluster_.MutateRow("t", key, ms);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ApplyToModel(key, ms);
    } else if (op < 70) {
      std::vector<RowMutations> entries;
      const int n = 1 + static_cast<int>(rng_.Uniform(4));
      for (int i = 0; i < n; ++i) {
        entries.push_back(RowMutations{RandomKey(), RandomMutations()});
      }
      // Sometimes make one entry invalid: it alone must not apply.
      const int bad =
          rng_.Bernoulli(0.3) ? static_cast<int>(rng_.Uniform(n)) : -1;
      if (bad >= 0) {
        entries[bad].mutations.push_back(
            SetCell{"a", "x", TimestampFromMicros(1), "bad"});
      }
      Result<std::vector<Status>> r = cluster_.MutateRows("t", entries);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_EQ(r->size(), entries.size());
      for (int i = 0; i < n; ++i) {
        if (i == bad) {
          EXPECT_EQ((*r)[i].code(), StatusCode::kInvalidArgument);
          continue;
        }
        ASSERT_TRUE((*r)[i].ok()) << (*r)[i].ToString();
        // Each entry commits separately, but all within this millisecond.
        ApplyToModel(entries[i].key, entries[i].mutations);
      }
    } else if (op < 78) {
      // An invalid MutateRow: its valid prefix must not apply.
      const std::string key = RandomKey();
      std::vector<Mutation> ms = RandomMutations();
      if (rng_.Bernoulli(0.5)) {
        ms.push_back(SetCell{"b", "y", TimestampFromMicros(1500), "bad"});
      } else {
        ms.push_back(DeleteFromFamily{"nope"});
      }
      EXPECT_FALSE(cluster_.MutateRow("t", key, ms).ok());
    } else if (op < 86) {
      const std::string key = RandomKey();
      const std::string family = Pick(kFamilies);
      const std::string qualifier = Pick(kQualifiers);
      const std::string suffix = "+" + std::to_string(rng_.Uniform(10));
      const std::vector<ReadModifyWriteRule> rules = {ReadModifyWriteRule{
          family, qualifier, ReadModifyWriteRule::Kind::kAppend, suffix, 0}};
      const auto* latest = model_.Latest(key, family, qualifier);
      const int64_t now = NowMicros();
      const int64_t ts = latest ? std::max(now, latest->first) : now;
      const std::string value = (latest ? latest->second : "") + suffix;
      Result<std::vector<ModifiedCell>> r =
          cluster_.ReadModifyWriteRow("t", key, rules);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_EQ(r->size(), 1u);
      EXPECT_EQ(Micros((*r)[0].timestamp), ts);
      EXPECT_EQ((*r)[0].value, value);
      ApplyToModel(
          key, {SetCell{family, qualifier, TimestampFromMicros(ts), value}});
    } else if (op < 96) {
      const std::string key = RandomKey();
      const std::vector<Mutation> if_true = RandomMutations();
      const std::vector<Mutation> if_false = RandomMutations();
      const bool expected = model_.HasCells(key);
      Result<bool> r =
          cluster_.CheckAndMutateRow("t", key, nullptr, if_true, if_false);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(*r, expected) << key;
      ApplyToModel(key, expected ? if_true : if_false);
    } else if (op < 98) {
      const std::string prefix = RandomKey().substr(0, rng_.Uniform(2) + 1);
      ASSERT_TRUE(cluster_.DropRowRange("t", prefix).ok());
      model_.DropPrefix(prefix);
    } else {
      cluster_.Compact();
      EXPECT_EQ(Stats().rows, static_cast<int64_t>(model_.size()));
    }
  }

  TableStats Stats() { return (*cluster_.GetTable("t"))->Stats(); }

  std::vector<Row> Read(const ReadOptions& options) {
    std::vector<Row> rows;
    EXPECT_TRUE(cluster_
                    .ReadRows("t", options,
                              [&](std::string_view key,
                                  std::span<const CellView> cells) {
                                rows.push_back(test_util::CopyRow(key, cells));
                                return true;
                              })
                    .ok());
    return rows;
  }

  void CompareFullTable() {
    const std::vector<Row> expected =
        model_.Rows([](const std::string&) { return true; });
    ASSERT_EQ(Read({}), expected);
    ReadOptions reversed;
    reversed.reversed = true;
    ASSERT_EQ(Read(reversed),
              std::vector<Row>(expected.rbegin(), expected.rend()));
  }

  Bound RandomBound() {
    switch (rng_.Uniform(3)) {
      case 0:
        return Bound::Unbounded();
      case 1:
        return Bound::Closed(RandomKey());
      default:
        return Bound::Open(RandomKey());
    }
  }

  void CompareRandomRangeRead() {
    RowSet set;
    std::vector<Interval> ranges;
    std::vector<std::string> keys;
    const int n = static_cast<int>(rng_.Uniform(3));
    for (int i = 0; i < n; ++i) {
      ranges.push_back(Interval{RandomBound(), RandomBound()});
      set.AddRange(ranges.back());
    }
    const int k = static_cast<int>(rng_.Uniform(3));
    for (int i = 0; i < k; ++i) {
      keys.push_back(RandomKey());
      set.AddKey(keys.back());
    }
    // Independent membership test (not Interval::Contains).
    auto admits = [](const Bound& b, const std::string& key, bool is_start) {
      if (b.kind == Bound::Kind::kUnbounded) return true;
      if (key == b.value) return b.kind == Bound::Kind::kClosed;
      return is_start ? key > b.value : key < b.value;
    };
    auto keep = [&](const std::string& key) {
      if (ranges.empty() && keys.empty()) return true;
      for (const std::string& k2 : keys) {
        if (k2 == key) return true;
      }
      for (const Interval& r : ranges) {
        if (admits(r.start, key, true) && admits(r.end, key, false)) {
          return true;
        }
      }
      return false;
    };
    Filter latest = Filter::CellsPerColumnLimit(1).value();
    const bool filtered = rng_.Bernoulli(0.5);
    std::vector<Row> expected = model_.Rows(keep, filtered ? 1 : 0);
    ReadOptions options;
    options.rows = &set;
    options.filter = filtered ? &latest : nullptr;
    options.reversed = rng_.Bernoulli(0.5);
    if (options.reversed) std::reverse(expected.begin(), expected.end());
    if (rng_.Bernoulli(0.3)) {
      const std::string resume = RandomKey();
      options.resume_after = resume;
      std::erase_if(expected, [&](const Row& r) {
        return options.reversed ? r.key >= resume : r.key <= resume;
      });
    }
    // Sometimes stop after a few rows, as a rows_limit would.
    const size_t limit = rng_.Bernoulli(0.3) ? 1 + rng_.Uniform(3) : SIZE_MAX;
    if (expected.size() > limit) expected.resize(limit);
    std::vector<Row> got;
    ASSERT_TRUE(cluster_
                    .ReadRows("t", options,
                              [&](std::string_view key,
                                  std::span<const CellView> cells) {
                                got.push_back(test_util::CopyRow(key, cells));
                                return got.size() < limit;
                              })
                    .ok());
    ASSERT_EQ(got, expected);
  }

  sim::Rng rng_;
  sim::ManualClock clock_;
  Cluster cluster_;
  Model model_;
};

TEST_P(ModelTest, RandomOperationsMatchTheReferenceModel) {
  constexpr int kSteps = 3000;
  int64_t max_tablets = 0;
  for (int step = 0; step < kSteps; ++step) {
    ASSERT_NO_FATAL_FAILURE(Step()) << "step " << step;
    if (step % 5 == 4) {
      ASSERT_NO_FATAL_FAILURE(CompareFullTable()) << "step " << step;
    }
    if (step % 7 == 3) {
      ASSERT_NO_FATAL_FAILURE(CompareRandomRangeRead()) << "step " << step;
    }
    max_tablets = std::max(max_tablets, Stats().tablets);
  }
  cluster_.Compact();
  ASSERT_NO_FATAL_FAILURE(CompareFullTable());
  EXPECT_EQ(Stats().rows, static_cast<int64_t>(model_.size()));
  // The tiny limits made the table split at some point.
  EXPECT_GT(max_tablets, 2);
}

INSTANTIATE_TEST_SUITE_P(Seeds, ModelTest,
                         ::testing::Values(1, 2, 3, 42, 20240601));

}  // namespace
}  // namespace btsim::cluster
