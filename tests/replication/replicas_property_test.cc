// Replicas's randomized property tests: convergence of two to four
// clusters under every kind of mutation (writes with server and back-dated
// timestamps, the three deletes with time ranges, appends, increments,
// conditional writes, DropRowRange), schema changes (GC rules of every
// kind, a family dropped and created again), partitions, loss, down
// clusters, clusters removed and added, and compaction; consistency-token
// soundness; determinism by seed.
#include "replication/replicas.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/replication/replicas_test_util.h"

// In the helpers' namespace, so that they need no using-declarations.
namespace btsim::replication::test_util {
namespace {

// ---- Randomized property tests ----

const char* const kZones[] = {kEastB, kEastC, kEurope, kAsia};

// A replicated instance driven by random steps: writes with explicit and
// server timestamps, all three delete kinds, appends and increments,
// conditional writes, DropRowRange, GC rule changes and a family dropped
// and created again (on one cluster, or also applied everywhere at once as
// the admin layer does), partitions (also one-way) and heals, latency
// changes, loss, down/up, a cluster removed and another added in its zone,
// compaction, and time passing. Fully determined by the seed.
class RandomWorld {
 public:
  struct Options {
    int clusters = 3;
    int steps = 300;
    // Unique row keys and no deletes (for the token soundness property).
    bool unique_rows = false;
    // Start with one cluster fewer and add the last one at a random step.
    bool late_add = false;
    // Compact every cluster after every step, not only now and then.
    bool compact_often = false;
    // Also appends, increments, conditional writes, schema changes and
    // cluster removals (off for the token soundness property).
    bool everything = true;
  };

  RandomWorld(uint64_t seed, Options options)
      : options_(options),
        rng_(sim::Rng(seed).Fork("driver")),
        scheduler_(kStart),
        transport_(scheduler_, sim::Rng(seed).Fork("transport")),
        replicas_(scheduler_, transport_, sim::Rng(seed).Fork("replicas"),
                  RandomOptions(sim::Rng(seed).Fork("options"))) {
    std::vector<std::string> zones(std::begin(kZones), std::end(kZones));
    for (size_t i = zones.size(); i > 1; --i) {
      std::swap(zones[i - 1], zones[rng_.Uniform(i)]);
    }
    for (int i = 0; i < options_.clusters; ++i) {
      specs_.push_back({"c" + std::to_string(i), zones[i]});
    }
    const int initial =
        options_.late_add ? options_.clusters - 1 : options_.clusters;
    for (int i = 0; i < initial; ++i) AddSpec(specs_[i]);
    add_at_ =
        options_.late_add ? static_cast<int>(rng_.Uniform(options_.steps)) : -1;
    std::vector<FamilyModification> families = {CreateFamily("a"),
                                                CreateFamily("b")};
    if (options_.everything) {
      families[0].gc_rule = GcRule::MaxVersions(2);
      families[1].gc_rule = GcRule::MaxAge(milliseconds(2000));
      gc_rules_ = true;
    }
    const Status s = Cluster(specs_[0].id).CreateTable("t", families, {"k2"});
    EXPECT_TRUE(s.ok()) << s.ToString();
    scheduler_.RunUntilIdle();
  }

  sim::VirtualScheduler& scheduler() { return scheduler_; }
  sim::Transport& transport() { return transport_; }
  Replicas& replicas() { return replicas_; }
  sim::Fingerprint& trace() { return trace_; }
  int writes() const { return writes_; }
  // Whether a GC rule was ever set: replicas may then differ until the
  // compaction after replication has drained.
  bool gc_rules() const { return gc_rules_; }
  bool saw_divergence() const { return saw_divergence_; }
  // (cluster id, row key) of every write, in order (unique_rows only).
  const std::vector<std::pair<std::string, std::string>>& written() const {
    return written_;
  }

  cluster::Cluster& Cluster(std::string_view id) {
    cluster::Cluster* c = replicas_.Find(id);
    BTSIM_CHECK_MSG(c != nullptr, std::string(id));
    return *c;
  }

  void Run() {
    for (int step = 0; step < options_.steps; ++step) Step(step);
  }

  void Step(int step) {
    if (step == add_at_) AddSpec(specs_.back());
    uint64_t action = rng_.Uniform(100);
    if (!options_.everything && action < 40) action = 0;  // a plain write
    if (action < 32) {
      Write();
    } else if (action < 36) {
      ReadModifyWrite();
    } else if (action < 38) {
      CheckAndMutate();
    } else if (action < 40) {
      ChangeSchema();
    } else if (action < 42) {
      DropRange();
    } else if (action < 43) {
      if (options_.everything) ReplaceCluster();
    } else if (action < 60) {
      scheduler_.RunFor(milliseconds(rng_.Uniform(300)));
    } else if (action < 63) {
      scheduler_.RunFor(milliseconds(1000 + rng_.Uniform(5000)));
    } else if (action < 70) {
      const auto [a, b] = RandomLink();
      transport_.Partition(a, b, /*one_way=*/rng_.Bernoulli(0.5));
    } else if (action < 78) {
      const auto [a, b] = RandomLink();
      transport_.Heal(a, b);
    } else if (action < 82) {
      const auto [a, b] = RandomLink();
      const bool one_way = rng_.Bernoulli(0.5);
      switch (rng_.Uniform(3)) {
        case 0:
          transport_.ClearLatency(a, b, one_way);
          break;
        case 1:
          transport_.SetLatency(
              a, b, LatencyModel::Constant(milliseconds(rng_.Uniform(2000))),
              one_way);
          break;
        default:
          transport_.SetLatency(
              a, b,
              LatencyModel::Uniform(milliseconds(1),
                                    milliseconds(2 + rng_.Uniform(1500))),
              one_way);
          break;
      }
    } else if (action < 86) {
      const auto [a, b] = RandomLink();
      static constexpr double kLoss[] = {0.0, 0.2, 0.5, 0.8};
      transport_.SetLoss(a, b, kLoss[rng_.Uniform(4)], rng_.Bernoulli(0.5));
    } else if (action < 91) {
      const std::string id = RandomId();
      const Status s = replicas_.SetDown(id, !replicas_.IsDown(id));
      EXPECT_TRUE(s.ok()) << s.ToString();
    } else if (action < 95) {
      replicas_.CompactAll();
    } else {
      CheckDivergence();
    }
    if (options_.compact_often) replicas_.CompactAll();
    trace_.AddInt(sim::NanosSinceEpoch(scheduler_.Now()));
    for (const auto& [id, position] : replicas_.LogPositions()) {
      trace_.Add(id);
      trace_.AddInt(static_cast<int64_t>(position));
      for (const auto& [peer, unused] : replicas_.LogPositions()) {
        trace_.AddInt(static_cast<int64_t>(replicas_.Backlog(id, peer)));
      }
    }
  }

  // Heals every link, removes loss, brings every cluster up and runs until
  // every batch is acknowledged.
  void Settle() {
    for (const std::string& a : zones_) {
      for (const std::string& b : zones_) {
        transport_.Heal(a, b);
        transport_.SetLoss(a, b, 0.0);
      }
    }
    for (const std::string& id : replicas_.ClusterIds()) {
      EXPECT_TRUE(replicas_.SetDown(id, false).ok());
    }
    scheduler_.RunUntilIdle(5'000'000);
    EXPECT_EQ(scheduler_.pending(), 0u) << "replication never went idle";
  }

  // The fingerprint of each cluster's contents, by id.
  std::map<std::string, std::string> AllContents() {
    std::map<std::string, std::string> out;
    for (const std::string& id : replicas_.ClusterIds()) {
      out[id] = Contents(Cluster(id));
    }
    return out;
  }

  // The transport's counters on every link between the instance's zones.
  void AddLinkStats(sim::Fingerprint* out) {
    for (const ClusterSpec& a : specs_) {
      for (const ClusterSpec& b : specs_) {
        const sim::LinkStats s = transport_.StatsOf(a.zone, b.zone);
        out->AddInt(s.sent);
        out->AddInt(s.delivered);
        out->AddInt(s.lost);
        out->AddInt(s.partitioned);
      }
    }
  }

 private:
  static ReplicationOptions RandomOptions(sim::Rng rng) {
    ReplicationOptions o;
    o.batch_entries = 1 + rng.Uniform(6);
    o.initial_retransmit = milliseconds(100 + rng.Uniform(1900));
    o.batches_in_flight = 1 + static_cast<int>(rng.Uniform(8));
    o.table = cluster::TableOptions{4096, 8, 4};
    return o;
  }

  void AddSpec(const ClusterSpec& spec) {
    const Status s = replicas_.AddCluster(spec);
    EXPECT_TRUE(s.ok()) << s.ToString();
    zones_.insert(spec.zone);
  }

  // Removes a random cluster and adds a new one (a new id) in its zone.
  void ReplaceCluster() {
    const std::vector<std::string> ids = replicas_.ClusterIds();
    if (ids.size() < 2) return;
    const std::string id = ids[rng_.Uniform(ids.size())];
    const std::string zone = replicas_.Spec(id)->zone;
    const Status removed = replicas_.RemoveCluster(id);
    EXPECT_TRUE(removed.ok()) << removed.ToString();
    AddSpec({"n" + std::to_string(++replaced_), zone});
  }

  // A random GC rule: version counts and ages (seconds, so that they
  // remove cells during a run), nested.
  GcRule RandomGcRule(int depth = 0) {
    switch (rng_.Uniform(depth == 0 ? 5 : 3)) {
      case 0:
        return GcRule();
      case 1:
        return GcRule::MaxVersions(1 + static_cast<int64_t>(rng_.Uniform(3)));
      case 2:
        return GcRule::MaxAge(
            milliseconds(1000 * (1 + static_cast<int64_t>(rng_.Uniform(30)))));
      case 3:
        return GcRule::Intersection(
            {RandomGcRule(depth + 1), RandomGcRule(depth + 1)});
      default:
        return GcRule::Union(
            {RandomGcRule(depth + 1), RandomGcRule(depth + 1)});
    }
  }

  // A GC rule change of "a", or "c" dropped or created, on a random
  // cluster. Family drops and creations are ordered after every commit and
  // applied everywhere at once, as the admin layer does (changes that only
  // travel the logs: replicas_schema_test.cc); GC rule changes are so half
  // the time, and otherwise travel the logs like any commit.
  void ChangeSchema() {
    const std::string id = RandomId();
    std::vector<FamilyModification> mods;
    if (rng_.Bernoulli(0.6)) {
      mods.push_back(FamilyModification{"a", FamilyModification::Kind::kUpdate,
                                        RandomGcRule()});
    } else {
      auto table = Cluster(id).GetTable("t");
      if (!table.ok()) return;
      if ((*table)->HasFamily("c")) {
        mods.push_back(
            FamilyModification{"c", FamilyModification::Kind::kDrop, {}});
      } else {
        mods.push_back(FamilyModification{
            "c", FamilyModification::Kind::kCreate, RandomGcRule()});
      }
    }
    const bool at_once = mods[0].kind != FamilyModification::Kind::kUpdate ||
                         rng_.Bernoulli(0.5);
    if (at_once) replicas_.OrderAfterEverything(id);
    const Status s = Cluster(id).ModifyColumnFamilies("t", mods);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (at_once) replicas_.ApplyNewestEverywhere(id);
  }

  std::string RandomId() {
    const std::vector<std::string> ids = replicas_.ClusterIds();
    return ids[rng_.Uniform(ids.size())];
  }

  std::pair<std::string, std::string> RandomLink() {
    const size_t a = rng_.Uniform(specs_.size());
    size_t b = rng_.Uniform(specs_.size() - 1);
    if (b >= a) ++b;
    return {specs_[a].zone, specs_[b].zone};
  }

  Mutation RandomMutation() {
    static const char* const kFamilies[] = {"a", "b", "c"};
    static const char* const kQualifiers[] = {"x", "y", "z"};
    const std::string family =
        kFamilies[rng_.Uniform(options_.everything ? 3 : 2)];
    const std::string qualifier = kQualifiers[rng_.Uniform(3)];
    const uint64_t kind = rng_.Uniform(10);
    if (kind < 6) {
      const cluster::Timestamp ts =
          rng_.Bernoulli(0.3) ? cluster::kServerTimestamp : RandomMillisecond();
      return SetCell{family, qualifier, ts,
                     "v" + std::to_string(rng_.Uniform(1000))};
    }
    if (kind < 8) {
      const int64_t start = static_cast<int64_t>(rng_.Uniform(4)) * 1000;
      const int64_t end =
          rng_.Bernoulli(0.5)
              ? 0
              : start + static_cast<int64_t>(1 + rng_.Uniform(3)) * 1000;
      return DeleteFromColumn{family, qualifier,
                              cluster::TimestampFromMicros(start),
                              cluster::TimestampFromMicros(end)};
    }
    if (kind < 9) return DeleteFromFamily{family};
    return DeleteFromRow{};
  }

  // One of the first five milliseconds since the epoch.
  cluster::Timestamp RandomMillisecond() {
    return cluster::TimestampFromMicros(static_cast<int64_t>(rng_.Uniform(5)) *
                                        1000);
  }

  void Write() {
    const std::string id = RandomId();
    std::string key;
    std::vector<Mutation> mutations;
    if (options_.unique_rows) {
      key = "w" + std::to_string(writes_);
      const cluster::Timestamp ts =
          rng_.Bernoulli(0.5) ? cluster::kServerTimestamp : RandomMillisecond();
      mutations.push_back(SetCell{"a", "x", ts, key});
      written_.emplace_back(id, key);
    } else {
      static const char* const kKeys[] = {"k0", "k1", "k2", "k3", "k30", "k4"};
      key = kKeys[rng_.Uniform(6)];
      const int n = 1 + static_cast<int>(rng_.Uniform(3));
      for (int i = 0; i < n; ++i) mutations.push_back(RandomMutation());
    }
    const Status s = Cluster(id).MutateRow("t", key, mutations);
    // Family "c" may be missing on that cluster.
    EXPECT_TRUE(s.ok() || s.code() == StatusCode::kNotFound) << s.ToString();
    ++writes_;
    if (!saw_divergence_) CheckDivergence();
  }

  std::string RandomKey() {
    static const char* const kKeys[] = {"k0", "k1", "k2", "k3", "k30", "k4"};
    return kKeys[rng_.Uniform(6)];
  }

  // An append to "s" or an increment of "n" (kept apart from the random
  // writes' qualifiers, so increments always find 8-byte cells).
  void ReadModifyWrite() {
    cluster::ReadModifyWriteRule rule;
    rule.family = rng_.Bernoulli(0.5) ? "a" : "b";
    if (rng_.Bernoulli(0.5)) {
      rule.qualifier = "s";
      rule.kind = cluster::ReadModifyWriteRule::Kind::kAppend;
      rule.append_value = "+" + std::to_string(rng_.Uniform(10));
    } else {
      rule.qualifier = "n";
      rule.kind = cluster::ReadModifyWriteRule::Kind::kIncrement;
      rule.increment_amount = 1 + static_cast<int64_t>(rng_.Uniform(5));
    }
    auto result =
        Cluster(RandomId()).ReadModifyWriteRow("t", RandomKey(), {&rule, 1});
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    ++writes_;
  }

  // A conditional write: "does the row have any cell?", then one of two
  // random mutation lists.
  void CheckAndMutate() {
    std::vector<Mutation> if_true = {RandomMutation()};
    std::vector<Mutation> if_false = {RandomMutation(), RandomMutation()};
    auto result =
        Cluster(RandomId())
            .CheckAndMutateRow("t", RandomKey(), nullptr, if_true, if_false);
    EXPECT_TRUE(result.ok() || result.status().code() == StatusCode::kNotFound)
        << result.status().ToString();
    ++writes_;
  }

  void DropRange() {
    if (options_.unique_rows) return;
    static const char* const kPrefixes[] = {"k3", "k1", "k"};
    const Status s =
        Cluster(RandomId()).DropRowRange("t", kPrefixes[rng_.Uniform(3)]);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }

  void CheckDivergence() {
    const std::map<std::string, std::string> contents = AllContents();
    for (const auto& [id, c] : contents) {
      if (c != contents.begin()->second) saw_divergence_ = true;
    }
  }

  Options options_;
  sim::Rng rng_;
  sim::VirtualScheduler scheduler_;
  sim::Transport transport_;
  Replicas replicas_;
  std::vector<ClusterSpec> specs_;
  std::set<std::string> zones_;  // every zone a cluster was ever in
  int replaced_ = 0;
  bool gc_rules_ = false;
  int add_at_ = -1;
  int writes_ = 0;
  bool saw_divergence_ = false;
  std::vector<std::pair<std::string, std::string>> written_;
  sim::Fingerprint trace_;
};

// Per cluster count; the whole file must stay well under 10 s (also under
// sanitizers). bench/convergence-soak.sh runs many more
// (BTSIM_CONVERGENCE_SEEDS).
int Seeds() {
  const char* soak = std::getenv("BTSIM_CONVERGENCE_SEEDS");
  return soak != nullptr && std::atoi(soak) > 0 ? std::atoi(soak) : 200;
}
constexpr int kSteps = 400;

struct ConvergenceTotals {
  int runs = 0;
  int non_empty = 0;
  int diverged_during_run = 0;
};

void RunConvergence(int clusters, uint64_t seed, int steps,
                    ConvergenceTotals* totals) {
  SCOPED_TRACE("clusters " + std::to_string(clusters) + ", seed " +
               std::to_string(seed));
  RandomWorld world(seed, {.clusters = clusters,
                           .steps = steps,
                           .unique_rows = false,
                           .late_add = seed % 2 == 0,
                           .compact_often = seed % 3 == 0});
  world.Run();
  ASSERT_GT(world.writes(), 0);
  world.Settle();
  Replicas& replicas = world.replicas();
  ASSERT_EQ(replicas.ClusterIds().size(), static_cast<size_t>(clusters));
  EXPECT_TRUE(replicas.HasApplied(replicas.LogPositions()));
  for (const std::string& a : replicas.ClusterIds()) {
    for (const std::string& b : replicas.ClusterIds()) {
      EXPECT_EQ(replicas.Backlog(a, b), 0u) << a << " -> " << b;
    }
  }
  // Converged before compaction (unless GC rules may have removed cells on
  // some clusters and not yet on others)...
  std::map<std::string, std::string> contents = world.AllContents();
  if (!world.gc_rules()) {
    for (const auto& [id, c] : contents) {
      EXPECT_EQ(c, contents.begin()->second) << id << " diverged";
    }
  }
  // ...and after it.
  replicas.CompactAll();
  contents = world.AllContents();
  for (const auto& [id, c] : contents) {
    EXPECT_EQ(c, contents.begin()->second)
        << id << " diverged after compaction";
  }
  ++totals->runs;
  if (!ReadAll(world.Cluster(replicas.ClusterIds().front())).empty()) {
    ++totals->non_empty;
  }
  if (world.saw_divergence()) ++totals->diverged_during_run;
}

void RunConvergenceSeeds(int clusters, uint64_t first_seed, int seeds,
                         int steps) {
  ConvergenceTotals totals;
  for (uint64_t seed = first_seed; seed < first_seed + seeds; ++seed) {
    RunConvergence(clusters, seed, steps, &totals);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_EQ(totals.runs, seeds);
  // Not vacuous: most runs end with data, and clusters did differ on the
  // way (replication is asynchronous).
  EXPECT_GE(totals.non_empty, seeds * 3 / 4);
  EXPECT_GE(totals.diverged_during_run, seeds * 3 / 4);
}

TEST(ReplicasPropertyTest, TwoClustersConverge) {
  RunConvergenceSeeds(2, 1, Seeds(), kSteps);
}

TEST(ReplicasPropertyTest, ThreeClustersConverge) {
  RunConvergenceSeeds(3, 1'000'001, Seeds(), kSteps);
}

TEST(ReplicasPropertyTest, FourClustersConverge) {
  RunConvergenceSeeds(4, 2'000'001, Seeds(), kSteps);
}

// Whenever HasApplied(positions) is true, every write acknowledged before
// `positions` was taken is readable on every cluster.
TEST(ReplicasPropertyTest, ConsistencyTokensAreSound) {
  int checked = 0;
  int waited = 0;
  for (uint64_t seed = 3001; seed < 3041; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RandomWorld world(seed, {.clusters = 2 + static_cast<int>(seed % 3),
                             .steps = 300,
                             .unique_rows = true,
                             .late_add = seed % 2 == 1,
                             .everything = false});
    sim::Rng rng = sim::Rng(seed).Fork("tokens");
    struct Token {
      std::map<std::string, uint64_t> positions;
      size_t writes;  // written()[0, writes) were acknowledged before it
      bool waited = false;
    };
    std::vector<Token> tokens;
    auto check = [&] {
      std::vector<Token> pending;
      for (Token& token : tokens) {
        if (!world.replicas().HasApplied(token.positions)) {
          token.waited = true;
          pending.push_back(std::move(token));
          continue;
        }
        for (const std::string& id : world.replicas().ClusterIds()) {
          const Rows rows = ReadAll(world.Cluster(id));
          for (size_t i = 0; i < token.writes; ++i) {
            const auto& [origin, key] = world.written()[i];
            EXPECT_TRUE(rows.count(key) > 0)
                << key << " (written on " << origin << ") missing on " << id;
          }
        }
        ++checked;
        if (token.waited) ++waited;
      }
      tokens = std::move(pending);
    };
    for (int step = 0; step < 300; ++step) {
      world.Step(step);
      if (rng.Bernoulli(0.15)) {
        tokens.push_back(
            {world.replicas().LogPositions(), world.written().size()});
      }
      check();
      if (::testing::Test::HasFailure()) return;
    }
    world.Settle();
    check();
    EXPECT_THAT(tokens, IsEmpty()) << "a token never became consistent";
  }
  EXPECT_GT(checked, 100);
  EXPECT_GT(waited, 50);  // not merely true at once
}

sim::Fingerprint RunForFingerprint(uint64_t seed) {
  RandomWorld world(seed, {.clusters = 4, .steps = 200, .late_add = true});
  world.Run();
  world.Settle();
  world.replicas().CompactAll();
  sim::Fingerprint f = world.trace();
  f.AddInt(sim::NanosSinceEpoch(world.scheduler().Now()));
  world.AddLinkStats(&f);
  world.replicas().AddContents(&f);
  return f;
}

TEST(ReplicasPropertyTest, SameSeedSameRunDifferentSeedDifferentRun) {
  const sim::Fingerprint a = RunForFingerprint(42);
  const sim::Fingerprint b = RunForFingerprint(42);
  const sim::Fingerprint c = RunForFingerprint(43);
  EXPECT_EQ(a.Hex(), b.Hex());
  EXPECT_NE(a.Hex(), c.Hex());
}

TEST(ReplicasPropertyTest, SameSeedSameContentsAndTime) {
  // The final contents and clock alone (not only the step trace) repeat.
  auto run = [](uint64_t seed) {
    RandomWorld world(seed, {.clusters = 3, .steps = 150});
    world.Run();
    world.Settle();
    sim::Fingerprint f;
    world.replicas().AddContents(&f);
    return std::make_pair(f.Hex(), world.scheduler().Now());
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7).first, run(8).first);
}

}  // namespace
}  // namespace btsim::replication::test_util
