// Heap bytes per stored cell: writes N rows of one 48-byte cell each (the
// shape used to compare with the official emulator's ~1,400 B/cell) and
// reports the growth of the allocator's in-use bytes divided by N.
// Usage: cell_memory [N]   (default 1,000,000)
#include <malloc.h>

#include <cstdio>
#include <cstdlib>

#include "bench/bench_util.h"

int main(int argc, char** argv) {
  const long long n = argc > 1 ? std::atoll(argv[1]) : 1'000'000;
  btsim::bench::BenchCluster b;
  const size_t before = mallinfo2().uordblks;
  std::vector<btsim::cluster::Mutation> m{btsim::cluster::SetCell{
      "cf", "c", btsim::cluster::TimestampFromMicros(1000),
      std::string(48, 'v')}};
  for (long long i = 0; i < n; ++i) {
    b.clock.Advance(btsim::sim::Duration(1000));
    btsim::bench::Require(b.cluster.MutateRow("t", btsim::bench::RowKey(i), m),
                          "MutateRow");
  }
  const size_t after = mallinfo2().uordblks;
  const auto stats = (*b.cluster.GetTable("t"))->Stats();
  std::printf("cells=%lld tablets=%lld heap_bytes=%zu bytes_per_cell=%.1f\n", n,
              static_cast<long long>(stats.tablets), after - before,
              static_cast<double>(after - before) / static_cast<double>(n));
  return 0;
}
