// Replication convergence at the engine level: several clusters commit
// random writes, deletes and row-range drops concurrently; their commit
// records reach the other clusters in per-origin order but arbitrarily
// interleaved and delayed, while clusters compact with a safe horizon. Once
// every record is delivered, every cluster must hold identical contents.
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cluster/aggregate.h"
#include "cluster/cluster.h"
#include "sim/clock.h"
#include "sim/fingerprint.h"
#include "sim/rng.h"

namespace btsim::cluster {
namespace {

constexpr int64_t kStartNanos = 1'700'000'000'000'000'000;

class Outbox : public CommitObserver {
 public:
  void OnCommit(const CommitRecord& record) override {
    records.push_back(record);
  }
  std::vector<CommitRecord> records;
};

class ReplicatedSet {
 public:
  // Without `shares`, records travel without their RowShare, so every
  // replica applies the mutations itself.
  ReplicatedSet(int clusters, uint64_t seed, bool shares = true)
      : clock_(sim::Time(sim::Duration(kStartNanos))),
        rng_(seed),
        shares_(shares) {
    for (int i = 0; i < clusters; ++i) {
      clusters_.push_back(std::make_unique<Cluster>(
          clock_, sim::Rng(seed).Fork("cluster" + std::to_string(i)),
          ClusterOptions{static_cast<uint32_t>(i), TableOptions{4096, 8, 4}}));
      outboxes_.push_back(std::make_unique<Outbox>());
      clusters_.back()->set_commit_observer(outboxes_.back().get());
      for (int j = 0; j < clusters; ++j) queue_[{i, j}];
    }
  }

  Cluster& cluster(int i) { return *clusters_[i]; }
  int size() const { return static_cast<int>(clusters_.size()); }
  sim::ManualClock& clock() { return clock_; }

  // Moves each cluster's new records into the per-destination queues.
  void Collect() {
    for (int o = 0; o < size(); ++o) {
      for (CommitRecord& r : outboxes_[o]->records) {
        if (r.share.valid()) ++shares_made_;
        if (!shares_) r.share = RowShare();
        for (int d = 0; d < size(); ++d) {
          if (d != o) queue_[{o, d}].push_back(r);
        }
      }
      outboxes_[o]->records.clear();
    }
  }

  // Delivers the oldest pending record of one random (origin, destination)
  // link. Returns false when nothing is pending.
  bool DeliverOne(sim::Rng& rng) {
    Collect();
    std::vector<std::pair<int, int>> busy;
    for (auto& [link, q] : queue_) {
      if (!q.empty()) busy.push_back(link);
    }
    if (busy.empty()) return false;
    const auto link = busy[rng.Uniform(busy.size())];
    auto& q = queue_[link];
    clusters_[link.second]->ApplyReplicated(q.front());
    q.pop_front();
    return true;
  }

  void DeliverAll(sim::Rng& rng) {
    while (DeliverOne(rng)) {
    }
  }

  // The newest horizon at which `dest` may drop tombstones: below every
  // version still on its way to it.
  Version SafeHorizon(int dest) {
    Collect();
    Version horizon = ~Version{0};
    for (auto& [link, q] : queue_) {
      if (link.second != dest) continue;
      for (const CommitRecord& r : q)
        horizon = std::min(horizon, r.version - 1);
    }
    return std::min(horizon, MakeVersion(TimestampOf(clock_.Now()), 0));
  }

  // Records collected with a share (before any was stripped).
  int shares_made() const { return shares_made_; }

  std::string Contents(int i) {
    sim::Fingerprint f;
    clusters_[i]->AddContents(&f);
    return f.Hex();
  }

 private:
  sim::ManualClock clock_;
  sim::Rng rng_;
  bool shares_;
  int shares_made_ = 0;
  std::vector<std::unique_ptr<Cluster>> clusters_;
  std::vector<std::unique_ptr<Outbox>> outboxes_;
  std::map<std::pair<int, int>, std::deque<CommitRecord>> queue_;
};

std::string Pick(sim::Rng& rng, const char* const* options, size_t n) {
  return options[rng.Uniform(n)];
}

Mutation RandomMutation(sim::Rng& rng) {
  static const char* const kFamilies[] = {"a", "b"};
  static const char* const kQualifiers[] = {"x", "y", "z"};
  const std::string family = Pick(rng, kFamilies, 2);
  const std::string qualifier = Pick(rng, kQualifiers, 3);
  const uint64_t kind = rng.Uniform(10);
  if (kind < 6) {
    const Timestamp ts =
        rng.Bernoulli(0.3)
            ? kServerTimestamp
            : TimestampFromMicros(static_cast<int64_t>(rng.Uniform(5)) * 1000);
    return SetCell{family, qualifier, ts,
                   "v" + std::to_string(rng.Uniform(1000))};
  }
  if (kind < 8) {
    const int64_t start = static_cast<int64_t>(rng.Uniform(4)) * 1000;
    const int64_t end =
        rng.Bernoulli(0.5)
            ? 0
            : start + static_cast<int64_t>(1 + rng.Uniform(3)) * 1000;
    return DeleteFromColumn{family, qualifier, TimestampFromMicros(start),
                            TimestampFromMicros(end)};
  }
  if (kind < 9) return DeleteFromFamily{family};
  return DeleteFromRow{};
}

// Every cluster's contents once every record is delivered, and again after
// a final compaction (which must make them identical).
struct Outcome {
  std::vector<std::string> delivered;
  std::vector<std::string> compacted;
  int shares_made = 0;
};

Outcome RunConvergence(int clusters, uint64_t seed, int steps,
                       bool shares = true) {
  Outcome outcome;
  ReplicatedSet set(clusters, seed, shares);
  sim::Rng rng = sim::Rng(seed).Fork("driver");
  const FamilyModification families[] = {
      {"a", FamilyModification::Kind::kCreate, {}},
      {"b", FamilyModification::Kind::kCreate, {}}};
  EXPECT_TRUE(set.cluster(0).CreateTable("t", families, {"k2"}).ok());
  set.DeliverAll(rng);
  static const char* const kKeys[] = {"k0", "k1", "k2", "k3", "k30", "k4"};
  for (int step = 0; step < steps; ++step) {
    const uint64_t action = rng.Uniform(100);
    const int c = static_cast<int>(rng.Uniform(clusters));
    if (action < 45) {
      std::vector<Mutation> m;
      const int n = 1 + static_cast<int>(rng.Uniform(3));
      for (int i = 0; i < n; ++i) m.push_back(RandomMutation(rng));
      EXPECT_TRUE(set.cluster(c).MutateRow("t", Pick(rng, kKeys, 6), m).ok());
    } else if (action < 47) {
      const char* const kPrefixes[] = {"k3", "k1", "k"};
      EXPECT_TRUE(
          set.cluster(c).DropRowRange("t", Pick(rng, kPrefixes, 3)).ok());
    } else if (action < 85) {
      set.DeliverOne(rng);
    } else if (action < 90) {
      set.cluster(c).Compact(set.SafeHorizon(c));
    } else {
      set.clock().Advance(
          sim::Duration(static_cast<int64_t>(rng.Uniform(3000)) * 1000));
    }
  }
  set.DeliverAll(rng);
  for (int c = 0; c < clusters; ++c) {
    outcome.delivered.push_back(set.Contents(c));
  }
  // One compaction round at one moment, after every commit, as
  // Replicas::CompactAll runs it: with shares, the clusters share their
  // compacted rows.
  set.clock().Advance(sim::Duration(1000));
  CompactionShares compaction_shares;
  for (int c = 0; c < clusters; ++c) {
    set.cluster(c).Compact(set.SafeHorizon(c),
                           shares ? &compaction_shares : nullptr);
  }
  for (int c = 0; c < clusters; ++c) {
    outcome.compacted.push_back(set.Contents(c));
    EXPECT_EQ(outcome.compacted[c], outcome.compacted[0])
        << "cluster " << c << " diverged; seed " << seed;
  }
  outcome.shares_made = set.shares_made();
  return outcome;
}

TEST(ConvergenceTest, TwoClustersConvergeOverManySeeds) {
  for (uint64_t seed = 1; seed <= 40; ++seed) RunConvergence(2, seed, 400);
}

TEST(ConvergenceTest, FourClustersConvergeOverManySeeds) {
  for (uint64_t seed = 100; seed < 130; ++seed) RunConvergence(4, seed, 600);
}

TEST(ConvergenceTest, SharedRowVersionsChangeNoReplicasContents) {
  // The same run with and without RowShares: every cluster must hold the
  // same bytes at the end of delivery and after compaction.
  int shares = 0;
  for (uint64_t seed = 200; seed < 215; ++seed) {
    const Outcome with = RunConvergence(4, seed, 600, /*shares=*/true);
    const Outcome without = RunConvergence(4, seed, 600, /*shares=*/false);
    EXPECT_EQ(with.delivered, without.delivered) << "seed " << seed;
    EXPECT_EQ(with.compacted, without.compacted) << "seed " << seed;
    shares += with.shares_made;
  }
  EXPECT_GT(shares, 1000);  // not vacuous: single-mutation commits share
}

TEST(ConvergenceTest, SharedCompactionResultsChangeNoReplicasContents) {
  // A GC rule makes compaction rewrite the replicated rows; one round at
  // one moment with shared results must leave each cluster with the bytes
  // it computes on its own. Only writes, so the replicas converge before
  // compacting (GC and deletes may legitimately diverge otherwise).
  auto run = [](bool shares) {
    ReplicatedSet set(3, 5, shares);
    sim::Rng rng(17);
    const FamilyModification families[] = {
        {"a", FamilyModification::Kind::kCreate, GcRule::MaxVersions(1)},
        {"b", FamilyModification::Kind::kCreate, GcRule::MaxVersions(2)}};
    EXPECT_TRUE(set.cluster(0).CreateTable("t", families, {"k5"}).ok());
    set.DeliverAll(rng);
    for (int i = 0; i < 3000; ++i) {
      // One column per row (the splice compaction shares).
      const uint64_t k = rng.Uniform(400);
      const std::vector<Mutation> m = {SetCell{
          k % 2 == 0 ? "a" : "b", "q",
          TimestampFromMicros(static_cast<int64_t>(rng.Uniform(50)) * 1000),
          "v" + std::to_string(i)}};
      const int c = static_cast<int>(rng.Uniform(3));
      const std::string key = "k" + std::to_string(k);
      EXPECT_TRUE(set.cluster(c).MutateRow("t", key, m).ok());
      if (rng.Bernoulli(0.3)) set.DeliverOne(rng);
    }
    set.DeliverAll(rng);
    set.clock().Advance(sim::Duration(1000));
    CompactionShares compaction_shares;
    std::vector<std::string> contents;
    for (int c = 0; c < set.size(); ++c) {
      set.cluster(c).Compact(set.SafeHorizon(c),
                             shares ? &compaction_shares : nullptr);
    }
    for (int c = 0; c < set.size(); ++c) contents.push_back(set.Contents(c));
    EXPECT_EQ(contents[1], contents[0]);
    EXPECT_EQ(contents[2], contents[0]);
    return contents;
  };
  EXPECT_EQ(run(true), run(false));
}

TEST(ConvergenceTest, ContentsAreNotTriviallyEqual) {
  // Guard against a vacuous pass: before delivery, two clusters that
  // received different writes differ.
  ReplicatedSet set(2, 7);
  const FamilyModification family[] = {
      {"a", FamilyModification::Kind::kCreate, {}}};
  ASSERT_TRUE(set.cluster(0).CreateTable("t", family, {}).ok());
  sim::Rng rng(1);
  set.DeliverAll(rng);
  const std::vector<Mutation> m = {
      SetCell{"a", "x", TimestampFromMicros(1000), "v"}};
  ASSERT_TRUE(set.cluster(0).MutateRow("t", "k", m).ok());
  EXPECT_NE(set.Contents(0), set.Contents(1));
  set.DeliverAll(rng);
  EXPECT_EQ(set.Contents(0), set.Contents(1));
}

TEST(ConvergenceTest, ConcurrentWritesOfOneCellResolveByCommitTimeThenOrigin) {
  ReplicatedSet set(2, 9);
  const FamilyModification family[] = {
      {"a", FamilyModification::Kind::kCreate, {}}};
  ASSERT_TRUE(set.cluster(0).CreateTable("t", family, {}).ok());
  sim::Rng rng(1);
  set.DeliverAll(rng);
  // Same clock reading on both clusters (fresh, so neither has used this
  // microsecond yet): the higher origin wins everywhere.
  set.clock().Advance(sim::Duration(1'000'000));
  const std::vector<Mutation> from0 = {
      SetCell{"a", "x", TimestampFromMicros(1000), "zero"}};
  const std::vector<Mutation> from1 = {
      SetCell{"a", "x", TimestampFromMicros(1000), "one"}};
  ASSERT_TRUE(set.cluster(0).MutateRow("t", "k", from0).ok());
  ASSERT_TRUE(set.cluster(1).MutateRow("t", "k", from1).ok());
  set.DeliverAll(rng);
  EXPECT_EQ(set.Contents(0), set.Contents(1));
  std::string value;
  ASSERT_TRUE((*set.cluster(0).GetTable("t"))->HasFamily("a"));
  const Status read =
      set.cluster(0).ReadRows("t", ReadOptions{}, [&](auto, auto cells) {
        value = std::string(cells[0].value);
        return true;
      });
  ASSERT_TRUE(read.ok()) << read.ToString();
  EXPECT_EQ(value, "one");
}

TEST(ConvergenceTest, AWriteAfterSeeingAReplicatedOneWinsEvenIfItsClockLags) {
  ReplicatedSet set(2, 13);
  const FamilyModification family[] = {
      {"a", FamilyModification::Kind::kCreate, {}}};
  ASSERT_TRUE(set.cluster(0).CreateTable("t", family, {}).ok());
  sim::Rng rng(1);
  set.DeliverAll(rng);
  // Cluster 0 commits many requests in one microsecond: its commit clock
  // runs ahead of the shared clock.
  for (int i = 0; i < 5000; ++i) {
    const std::vector<Mutation> m = {SetCell{
        "a", "x", TimestampFromMicros(1000), "from0-" + std::to_string(i)}};
    ASSERT_TRUE(set.cluster(0).MutateRow("t", "k", m).ok());
  }
  set.DeliverAll(rng);
  // Cluster 1 has seen cluster 0's last write; its own later write of the
  // same cell must win everywhere.
  const std::vector<Mutation> m = {
      SetCell{"a", "x", TimestampFromMicros(1000), "from1-later"}};
  ASSERT_TRUE(set.cluster(1).MutateRow("t", "k", m).ok());
  set.DeliverAll(rng);
  for (int c = 0; c < 2; ++c) {
    std::string value;
    (void)set.cluster(c).ReadRows("t", ReadOptions{}, [&](auto, auto cells) {
      value = std::string(cells[0].value);
      return true;
    });
    EXPECT_EQ(value, "from1-later") << "cluster " << c;
  }
}

TEST(ConvergenceTest, DropRowRangeCoversOlderWritesArrivingLater) {
  ReplicatedSet set(3, 11);
  const FamilyModification family[] = {
      {"a", FamilyModification::Kind::kCreate, {}}};
  ASSERT_TRUE(set.cluster(0).CreateTable("t", family, {}).ok());
  sim::Rng rng(1);
  set.DeliverAll(rng);
  // c2 writes, then c0 drops the range before c2's write reaches anyone.
  const std::vector<Mutation> m = {
      SetCell{"a", "x", TimestampFromMicros(1000), "old"}};
  ASSERT_TRUE(set.cluster(2).MutateRow("t", "p1", m).ok());
  set.clock().Advance(sim::Duration(1'000'000));  // the drop is 1 ms later
  ASSERT_TRUE(set.cluster(0).DropRowRange("t", "p").ok());
  set.DeliverAll(rng);
  for (int c = 0; c < 3; ++c) {
    int rows = 0;
    (void)set.cluster(c).ReadRows("t", ReadOptions{}, [&](auto, auto) {
      ++rows;
      return true;
    });
    EXPECT_EQ(rows, 0) << "cluster " << c;
  }
}

}  // namespace
}  // namespace btsim::cluster

namespace btsim::cluster {
namespace {

// Aggregate families: concurrent AddToCells on every cluster, with
// deletes and compactions in between, must converge, and with no delete
// every input must count exactly once everywhere.
void RunAggregateConvergence(uint64_t seed, bool deletes) {
  ReplicatedSet set(3, seed);
  sim::Rng rng = sim::Rng(seed).Fork("driver");
  FamilyModification sum{"s", FamilyModification::Kind::kCreate, {}};
  sum.aggregate = Aggregate::kSum;
  FamilyModification max{"m", FamilyModification::Kind::kCreate, {}};
  max.aggregate = Aggregate::kMax;
  const FamilyModification families[] = {sum, max};
  ASSERT_TRUE(set.cluster(0).CreateTable("t", families, {"k1"}).ok());
  set.DeliverAll(rng);
  static const char* const kKeys[] = {"k0", "k1", "k2"};
  std::map<std::string, int64_t> expected;  // key/ts -> sum
  for (int step = 0; step < 600; ++step) {
    const uint64_t action = rng.Uniform(100);
    const int c = static_cast<int>(rng.Uniform(3));
    const std::string key = Pick(rng, kKeys, 3);
    if (action < 50) {
      const int64_t ts = static_cast<int64_t>(rng.Uniform(3)) * 1000;
      const int64_t v = static_cast<int64_t>(rng.Uniform(100)) - 30;
      std::vector<Mutation> m = {
          AddToCell{"s", "q", TimestampFromMicros(ts), EncodeInt64(v)},
          AddToCell{"m", "q", TimestampFromMicros(ts), EncodeInt64(v)}};
      if (rng.Bernoulli(0.2)) {  // two inputs to one cell in one request
        m.push_back(
            AddToCell{"s", "q", TimestampFromMicros(ts), EncodeInt64(1)});
        expected[key + "@" + std::to_string(ts)] += 1;
      }
      if (rng.Bernoulli(0.2)) {  // two entries of one batch, one version
        const std::vector<RowMutations> rows = {{key, m}, {key, m}};
        ASSERT_TRUE(set.cluster(c).MutateRows("t", rows).ok());
        expected[key + "@" + std::to_string(ts)] += v + (m.size() > 2 ? 1 : 0);
      } else {
        ASSERT_TRUE(set.cluster(c).MutateRow("t", key, m).ok());
      }
      expected[key + "@" + std::to_string(ts)] += v;
    } else if (action < 55 && deletes) {
      const std::vector<Mutation> m = {
          rng.Bernoulli(0.5) ? Mutation(DeleteFromColumn{"s", "q", {}, {}})
                             : Mutation(DeleteFromRow{})};
      ASSERT_TRUE(set.cluster(c).MutateRow("t", key, m).ok());
    } else if (action < 85) {
      set.DeliverOne(rng);
    } else if (action < 92) {
      set.cluster(c).Compact(set.SafeHorizon(c));
    } else {
      set.clock().Advance(
          sim::Duration(static_cast<int64_t>(rng.Uniform(3000)) * 1000));
    }
  }
  set.DeliverAll(rng);
  for (int c = 1; c < 3; ++c) {
    EXPECT_EQ(set.Contents(c), set.Contents(0)) << "seed " << seed;
  }
  set.clock().Advance(sim::Duration(1000));
  for (int c = 0; c < 3; ++c) set.cluster(c).Compact(set.SafeHorizon(c));
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(set.Contents(c), set.Contents(0)) << "seed " << seed;
    if (deletes) continue;
    std::map<std::string, int64_t> sums;
    ASSERT_TRUE(set.cluster(c)
                    .ReadRows("t", {},
                              [&](std::string_view key,
                                  std::span<const CellView> cells) {
                                for (const CellView& cell : cells) {
                                  if (cell.family != "s") continue;
                                  sums[std::string(key) + "@" +
                                       std::to_string(Micros(cell.timestamp))] =
                                      DecodeInt64(cell.value);
                                }
                                return true;
                              })
                    .ok());
    EXPECT_EQ(sums, expected) << "cluster " << c << ", seed " << seed;
  }
}

TEST(AggregateConvergenceTest, EveryConcurrentAddCountsOnce) {
  for (uint64_t seed = 300; seed < 310; ++seed) {
    RunAggregateConvergence(seed, /*deletes=*/false);
  }
}

TEST(AggregateConvergenceTest, AddsAndDeletesConverge) {
  for (uint64_t seed = 400; seed < 420; ++seed) {
    RunAggregateConvergence(seed, /*deletes=*/true);
  }
}

TEST(AggregateConvergenceTest, ATokenReplicatesWithItsWrite) {
  // A replay on another cluster is recognised once the original has
  // reached it, not before.
  ReplicatedSet set(2, 1);
  sim::Rng rng(1);
  FamilyModification sum{"s", FamilyModification::Kind::kCreate, {}};
  sum.aggregate = Aggregate::kSum;
  const FamilyModification families[] = {sum};
  ASSERT_TRUE(set.cluster(0).CreateTable("t", families, {}).ok());
  set.DeliverAll(rng);
  const std::vector<Mutation> add = {
      AddToCell{"s", "q", TimestampFromMicros(1000), EncodeInt64(1)}};
  const Idempotency first{"token-first", {}};
  const Idempotency second{"token-second", {}};
  ASSERT_TRUE(set.cluster(0).MutateRow("t", "k", add, first).ok());
  ASSERT_TRUE(set.cluster(0).MutateRow("t", "k", add, second).ok());
  set.DeliverAll(rng);
  ASSERT_TRUE(set.cluster(1).MutateRow("t", "k", add, first).ok());  // replay
  // Before `third` reaches cluster 1, its replay there applies again.
  const Idempotency third{"token-third", {}};
  ASSERT_TRUE(set.cluster(0).MutateRow("t", "k", add, third).ok());
  ASSERT_TRUE(set.cluster(1).MutateRow("t", "k", add, third).ok());
  set.DeliverAll(rng);
  for (int c = 0; c < 2; ++c) {
    int64_t value = 0;
    ASSERT_TRUE(
        set.cluster(c)
            .ReadRows("t", {},
                      [&](std::string_view, std::span<const CellView> cells) {
                        value = DecodeInt64(cells[0].value);
                        return true;
                      })
            .ok());
    EXPECT_EQ(value, 4) << "cluster " << c;
  }
}

}  // namespace
}  // namespace btsim::cluster
