// Shared set-up for the engine benchmarks: a cluster on a manual clock with
// one table "t" and one family "cf".
#ifndef BTSIM_BENCH_BENCH_UTIL_H_
#define BTSIM_BENCH_BENCH_UTIL_H_

#include <cstdio>
#include <string>

#include "cluster/cluster.h"
#include "sim/clock.h"

namespace btsim::bench {

struct BenchCluster {
  BenchCluster()
      : clock(sim::Time(sim::Duration(1'700'000'000'000'000'000))),
        cluster(clock, sim::Rng(1), cluster::ClusterOptions{}) {
    const cluster::FamilyModification cf{
        "cf", cluster::FamilyModification::Kind::kCreate, {}};
    (void)cluster.CreateTable("t", {&cf, 1}, {});
  }
  sim::ManualClock clock;
  cluster::Cluster cluster;
};

inline std::string RowKey(int64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "row%010lld", static_cast<long long>(i));
  return buf;
}

}  // namespace btsim::bench

#endif  // BTSIM_BENCH_BENCH_UTIL_H_
