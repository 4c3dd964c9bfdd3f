// Throughput of the virtual-time simulator's building blocks (one thread):
// the scheduler's event queue, RowFilter evaluation, and replication apply
// (shipping committed writes between clusters over a virtual transport and
// applying them). The engine's own apply and read paths are in
// engine_bench.cc. Run with bench/run.sh.
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "cluster/filter.h"
#include "replication/replicas.h"
#include "sim/rng.h"
#include "sim/transport.h"
#include "sim/virtual_scheduler.h"

namespace btsim::bench {
namespace {

using cluster::Mutation;
using cluster::SetCell;

constexpr sim::Time kStart{std::chrono::seconds(1'700'000'000)};

// ---------------------------------------------------------------- Scheduler

// Schedules range(0) tasks at random delays (up to 100 ms), then runs them
// all: the queue's steady state with range(0) pending tasks. Items: tasks.
void BM_SchedulerScheduleAndRun(benchmark::State& state) {
  const int64_t n = state.range(0);
  sim::VirtualScheduler scheduler(kStart);
  sim::Rng rng(1);
  int64_t ran = 0;
  for (auto _ : state) {
    for (int64_t i = 0; i < n; ++i) {
      scheduler.RunAfter(sim::Duration(rng.Uniform(100'000'000)),
                         [&ran] { ++ran; });
    }
    scheduler.RunUntilIdle();
  }
  benchmark::DoNotOptimize(ran);
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_SchedulerScheduleAndRun)->Arg(1'000)->Arg(100'000);

// A simulation's pattern: each task schedules its successor and a timeout
// that is almost always cancelled (an RPC and its deadline), with
// range(0) chains in flight. Items: tasks run.
void BM_SchedulerChainsWithTimeouts(benchmark::State& state) {
  const int64_t chains = state.range(0);
  sim::VirtualScheduler scheduler(kStart);
  sim::Rng rng(2);
  struct Chain {
    sim::TaskId timeout = 0;
  };
  std::vector<Chain> state_of(static_cast<size_t>(chains));
  std::function<void(size_t)> step = [&](size_t c) {
    scheduler.Cancel(state_of[c].timeout);
    state_of[c].timeout = scheduler.RunAfter(std::chrono::seconds(10), [] {});
    scheduler.RunAfter(sim::Duration(1 + rng.Uniform(1'000'000)),
                       [&step, c] { step(c); });
  };
  for (size_t c = 0; c < state_of.size(); ++c) step(c);
  for (auto _ : state) {
    scheduler.Step();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SchedulerChainsWithTimeouts)->Arg(100)->Arg(10'000);

// ---------------------------------------------------------------- Filters

// A row of 10 columns x 5 versions, run through the filters a simulated
// read and a typical application use. Items: cells in.
std::vector<cluster::CellView> MakeRow(std::vector<std::string>* storage) {
  storage->clear();
  for (int c = 0; c < 10; ++c) storage->push_back("col" + std::to_string(c));
  storage->push_back(std::string(48, 'v'));
  std::vector<cluster::CellView> cells;
  for (int c = 0; c < 10; ++c) {
    for (int v = 0; v < 5; ++v) {
      cells.push_back(cluster::CellView{
          "cf", (*storage)[static_cast<size_t>(c)],
          cluster::TimestampFromMicros((5 - v) * 1000), storage->back()});
    }
  }
  return cells;
}

void RunFilter(benchmark::State& state, const cluster::Filter& filter) {
  std::vector<std::string> storage;
  const std::vector<cluster::CellView> cells = MakeRow(&storage);
  sim::Rng rng(3);
  std::vector<cluster::CellView> out;
  for (auto _ : state) {
    out.clear();
    filter.Apply("row0000000042", cells, rng, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() *
                          static_cast<int64_t>(cells.size()));
}

void BM_FilterCellsPerColumnLimit(benchmark::State& state) {
  RunFilter(state, *cluster::Filter::CellsPerColumnLimit(1));
}
BENCHMARK(BM_FilterCellsPerColumnLimit);

void BM_FilterChainRegexAndLimit(benchmark::State& state) {
  auto family = cluster::Filter::FamilyNameRegex("cf");
  auto column = cluster::Filter::ColumnQualifierRegex("col[0-4]");
  auto limit = cluster::Filter::CellsPerColumnLimit(2);
  std::vector<cluster::Filter> chain;
  chain.push_back(std::move(*family));
  chain.push_back(std::move(*column));
  chain.push_back(std::move(*limit));
  RunFilter(state, cluster::Filter::Chain(std::move(chain)));
}
BENCHMARK(BM_FilterChainRegexAndLimit);

void BM_FilterInterleaveValueRegex(benchmark::State& state) {
  auto value = cluster::Filter::ValueRegex("v+");
  std::vector<cluster::Filter> branches;
  branches.push_back(std::move(*value));
  branches.push_back(cluster::Filter::StripValue());
  RunFilter(state, cluster::Filter::Interleave(std::move(branches)));
}
BENCHMARK(BM_FilterInterleaveValueRegex);

// ---------------------------------------------------------------- Replication

// range(0) clusters (in three regions), one table; each iteration commits
// 1,000 single-cell writes on random rows of 1,000,000 at the first cluster
// and runs the virtual network until every peer has applied them. Items:
// replicated applies (writes x peers).
void BM_ReplicationApply(benchmark::State& state) {
  const int clusters = static_cast<int>(state.range(0));
  constexpr int kWrites = 1000;
  sim::VirtualScheduler scheduler(kStart);
  sim::Transport transport(scheduler, sim::Rng(4));
  replication::Replicas replicas(scheduler, transport, sim::Rng(5));
  const char* zones[] = {"us-east1-b", "us-east1-c", "us-west1-a",
                         "europe-west1-b"};
  for (int i = 0; i < clusters; ++i) {
    Require(replicas.AddCluster(
                {"c" + std::to_string(i + 1), zones[static_cast<size_t>(i)]}),
            "AddCluster");
  }
  cluster::Cluster* origin = replicas.Find("c1");
  const cluster::FamilyModification cf{
      "cf", cluster::FamilyModification::Kind::kCreate, {}};
  Require(origin->CreateTable("t", {&cf, 1}, {}), "CreateTable t");
  replicas.ApplyNewestEverywhere("c1");
  sim::Rng rng(6);
  cluster::Timestamp ts = cluster::TimestampFromMicros(1000);
  for (auto _ : state) {
    for (int i = 0; i < kWrites; ++i) {
      const Mutation m = SetCell{"cf", "v", ts += std::chrono::milliseconds(1),
                                 std::string(48, 'v')};
      Require(origin->MutateRow(
                  "t", RowKey(static_cast<int64_t>(rng.Uniform(1'000'000))),
                  {&m, 1}),
              "MutateRow");
      scheduler.RunFor(std::chrono::microseconds(50));
    }
    while (!replicas.HasApplied(replicas.LogPositions())) {
      scheduler.RunFor(std::chrono::milliseconds(10));
    }
  }
  state.SetItemsProcessed(state.iterations() * kWrites * (clusters - 1));
}
BENCHMARK(BM_ReplicationApply)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond);

// Cluster::ApplyReplicated alone: a peer applying records of random rows
// (1,000,000 of them). Items: records applied.
void BM_ClusterApplyReplicated(benchmark::State& state) {
  BenchCluster b;
  sim::Rng rng(7);
  cluster::CommitRecord record;
  record.table = "t";
  record.mutations.push_back(
      SetCell{"cf", "v", cluster::Timestamp{}, std::string(48, 'v')});
  cluster::Timestamp commit_time =
      cluster::TimestampFromMicros(1'700'000'000'000'000);
  for (auto _ : state) {
    commit_time += std::chrono::microseconds(1);
    record.version = cluster::MakeVersion(commit_time, 1);
    std::get<SetCell>(record.mutations[0]).timestamp =
        cluster::TruncateToMillis(commit_time);
    record.row_key = RowKey(static_cast<int64_t>(rng.Uniform(1'000'000)));
    b.cluster.ApplyReplicated(record);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ClusterApplyReplicated);

}  // namespace
}  // namespace btsim::bench

BENCHMARK_MAIN();
