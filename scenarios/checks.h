// Checkers and expectations over a run's History.
//
// RunChecks computes the whole-run checks that every report shows:
//   converged            1 when every cluster's digest is equal, else 0
//                        (detail: the first differing (cluster, table, row))
//   lost_writes          acknowledged writes neither present nor superseded
//                        in some cluster at the end (writes under a later
//                        DropRowRange prefix are excused)
//   rpo_writes           acknowledged writes that, when a cluster went down,
//                        had committed there and been applied nowhere else
//   read_your_writes_violations, monotonic_read_violations
//   strong_read_violations   only when History::strong_reads_promised
//   lost_updates         acknowledged increments minus the final counters
//   token_violations     sum over kTokenWait events
//   rto_seconds          the longest failover outage of any client
//   failovers, errors, successes
// Each with a value and a human detail. The names above are stable: they
// are the columns of `btsim sweep`'s results.csv.
//
// Evaluate computes each Expectation's metric over the operations its
// filters select (app_profile, client or client group, cluster, window) and
// compares it with its bound. See proto/btsim/scenario/v1/scenario.proto
// (enum Metric) for the definitions.
//
// Pure functions of their inputs; deterministic.
#ifndef BTSIM_SCENARIOS_CHECKS_H_
#define BTSIM_SCENARIOS_CHECKS_H_

#include <string>
#include <vector>

#include "btsim/scenario/v1/scenario.pb.h"
#include "scenarios/history.h"

namespace btsim::scenarios {

struct CheckValue {
  std::string name;
  double value = 0;
  std::string detail;
};

struct ExpectationResult {
  std::string name;
  std::string metric;  // the enum name, e.g. "RTO_SECONDS"
  double value = 0;
  std::string bound;  // e.g. "<= 0.5"
  bool pass = false;
  std::string detail;
};

std::vector<CheckValue> RunChecks(const History& history);

// PBS-style t-visibility for one (write cluster, read cluster) pair: for
// each t, P(a successful single-row read started at least t after a
// write's acknowledgement, on the same row, returns that write or newer).
// Pairs are taken over successful writes and the first read of the row
// after ack + t (per write, per t, per read cluster).
struct VisibilityCurve {
  std::string write_cluster;
  std::string read_cluster;
  std::vector<sim::Nanos> t;        // kVisibilityBuckets
  std::vector<double> probability;  // NaN-free: -1 where no sample
  std::vector<int64_t> samples;
};
// 0, 1 ms, 5 ms, 10 ms, 50 ms, 100 ms, 500 ms, 1 s, 5 s, 10 s, 60 s.
std::vector<sim::Nanos> VisibilityBuckets();
// Curves for every pair with samples, sorted by (write, read) cluster.
std::vector<VisibilityCurve> TVisibility(const History& history);

std::vector<ExpectationResult> Evaluate(
    const History& history,
    const google::protobuf::RepeatedPtrField<
        btsim::scenario::v1::Expectation>& expectations);

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_CHECKS_H_
