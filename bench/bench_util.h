// Shared set-up for the engine benchmarks: a cluster on a manual clock with
// one table "t" and one family "cf".
#ifndef BTSIM_BENCH_BENCH_UTIL_H_
#define BTSIM_BENCH_BENCH_UTIL_H_

#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/status.h"
#include "cluster/cluster.h"
#include "sim/clock.h"

namespace btsim::bench {

// A benchmark whose set-up or measured call fails measures nothing: says
// which call failed and why, and aborts.
inline void Require(const Status& status, const char* what) {
  if (status.ok()) return;
  std::fprintf(stderr, "benchmark: %s failed: %s\n", what,
               status.ToString().c_str());
  std::abort();
}

struct BenchCluster {
  BenchCluster()
      : clock(sim::Time(sim::Duration(1'700'000'000'000'000'000))),
        cluster(clock, sim::Rng(1), cluster::ClusterOptions{}) {
    const cluster::FamilyModification cf{
        "cf", cluster::FamilyModification::Kind::kCreate, {}};
    Require(cluster.CreateTable("t", {&cf, 1}, {}), "CreateTable t");
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
