// Throughput of the storage engine's hot paths (one thread, no gRPC).
#include <benchmark/benchmark.h>

#include "bench/bench_util.h"
#include "cluster/filter.h"

namespace btsim::bench {
namespace {

using cluster::Mutation;
using cluster::SetCell;

void BM_MutateRowSequential(benchmark::State& state) {
  BenchCluster b;
  std::vector<Mutation> m{SetCell{"cf", "c", cluster::TimestampFromMicros(1000),
                                  std::string(48, 'v')}};
  int64_t i = 0;
  for (auto _ : state) {
    b.clock.Advance(sim::Duration(1000));
    Require(b.cluster.MutateRow("t", RowKey(i++), m), "MutateRow");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MutateRowSequential);

void BM_MutateRowRandom(benchmark::State& state) {
  BenchCluster b;
  sim::Rng rng(7);
  std::vector<Mutation> m{SetCell{"cf", "c", cluster::TimestampFromMicros(1000),
                                  std::string(48, 'v')}};
  for (auto _ : state) {
    b.clock.Advance(sim::Duration(1000));
    Require(b.cluster.MutateRow(
                "t", RowKey(static_cast<int64_t>(rng.Uniform(1'000'000))), m),
            "MutateRow");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MutateRowRandom);

// One request writing `range(0)` columns of one row, qualifiers descending:
// must stay O(n log n).
void BM_WideRowRequest(benchmark::State& state) {
  BenchCluster b;
  std::vector<Mutation> m;
  for (int64_t i = state.range(0); i > 0; --i) {
    m.push_back(
        SetCell{"cf", RowKey(i), cluster::TimestampFromMicros(1000), "v"});
  }
  int64_t row = 0;
  for (auto _ : state) {
    b.clock.Advance(sim::Duration(1000));
    Require(b.cluster.MutateRow("t", RowKey(row++), m), "MutateRow");
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_WideRowRequest)->Arg(1000)->Arg(100'000);

void Fill(BenchCluster& b, int64_t rows) {
  std::vector<Mutation> m{SetCell{"cf", "c", cluster::TimestampFromMicros(1000),
                                  std::string(48, 'v')}};
  for (int64_t i = 0; i < rows; ++i) {
    Require(b.cluster.MutateRow("t", RowKey(i), m), "MutateRow");
  }
}

void BM_PointRead(benchmark::State& state) {
  BenchCluster b;
  Fill(b, 100'000);
  sim::Rng rng(3);
  for (auto _ : state) {
    cluster::RowSet rows;
    rows.AddKey(RowKey(static_cast<int64_t>(rng.Uniform(100'000))));
    cluster::ReadOptions options;
    options.rows = &rows;
    int64_t n = 0;
    Require(b.cluster.ReadRows("t", options,
                               [&](auto, auto cells) {
                                 n += static_cast<int64_t>(cells.size());
                                 return true;
                               }),
            "ReadRows");
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PointRead);

void BM_FullScan(benchmark::State& state) {
  BenchCluster b;
  Fill(b, 100'000);
  auto filter = cluster::Filter::CellsPerColumnLimit(1);
  for (auto _ : state) {
    cluster::ReadOptions options;
    options.filter = state.range(0) ? &filter.value() : nullptr;
    int64_t n = 0;
    Require(b.cluster.ReadRows("t", options,
                               [&](auto, auto cells) {
                                 n += static_cast<int64_t>(cells.size());
                                 return true;
                               }),
            "ReadRows");
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * 100'000);
}
BENCHMARK(BM_FullScan)->Arg(0)->Arg(1);

}  // namespace
}  // namespace btsim::bench

BENCHMARK_MAIN();
