// Checkers and expectations over a run's History.
//
// RunChecks computes the whole-run checks that every report shows:
//   converged            1 when every cluster's digest is equal, else 0
//                        (detail: the first differing (cluster, table, row))
//   lost_writes          acknowledged writes neither present nor superseded
//                        in some cluster at the end (writes under a later
//                        DropRowRange prefix, and cells a max_age GC rule
//                        may have removed, are excused)
//   rpo_writes           acknowledged writes that, when a cluster went down,
//                        had committed there and been applied nowhere else
//   read_your_writes_violations, monotonic_read_violations
//   strong_read_violations   only when History::strong_reads_promised
//   lost_updates         acknowledged increments minus the final counters
//   token_violations     sum over kTokenWait events
//   rto_seconds          the longest failover outage of any client
//   failovers, errors, successes
// Each with a value and a human detail, in the order above. The names above
// are stable: they are the columns of `btsim sweep`'s results.csv.
//
// Evaluate computes each Expectation's metric over the operations its
// filters select (app_profile, client or client group, cluster, window) and
// compares it with its bound. See proto/btsim/scenario/v1/scenario.proto
// (enum Metric) for the definitions.
//
// Pure functions of their inputs; deterministic. O(n log n) in the number
// of operations (TVisibility: times the buckets and read clusters). The
// checks that judge each row on its own analyse the history in parts of
// about half a million operations (checks_rows.h): their indexes need
// memory for one part, not the whole run (the values a percentile is taken
// over are still kept whole); the results do not depend on the split.
//
// Definitions shared by every check:
//   acknowledged write  a kWrite or kCheckAndMutate with ok() status and a
//                       non-empty `written` tag; its order key is
//                       (timestamp, version), compared as in Newer().
//   read                a kReadRow with ok() status. What it saw is the write
//                       whose tag it returned, found among the committed
//                       writes (version != 0, acknowledged or not) on its
//                       row (the first, when a recorded application wrote
//                       that value more than once). "" (the row was empty)
//                       and a tag of no committed write there (counted as
//                       "unknown" in details) are older than every write.
//   DropRowRange        a kDropRowRange event at D covering the row (same
//                       table, row starts with `detail`) behaves like a
//                       write newer than every write committed at or before
//                       D: a read completing at or after D counts as having
//                       seen at least the newest such write (its effective
//                       key), and those writes are never reported lost.
//   expiry              the earliest time E at which the GC rule of the
//                       write's table (History::gc_rules) deletes its cell
//                       as its column's newest: a max_age part (alone, in
//                       a union, or in an intersection without a
//                       max_num_versions part) older than the cell while
//                       that rule is in force. Like a DropRowRange at E for
//                       that write: a read completing at or after E counts
//                       as having seen it (compaction may have removed
//                       it), and it is not lost when E <= History::ended.
//   surviving clusters  final_state minus clusters whose last
//                       kAddCluster/kRemoveCluster event is a kRemoveCluster.
//   "X before Y"        X's time <= Y's time (virtual time is exact; a
//                       sequential client invokes its next operation at the
//                       time the previous one completed).
//
// The checks (RunChecks names; Evaluate metrics in parentheses):
//   read_your_writes_violations (READ_YOUR_WRITES_VIOLATIONS): reads by
//     client C of row R whose effective key is older than the newest (by
//     order key) of C's acknowledged writes on R that completed before the
//     read was invoked.
//   monotonic_read_violations (MONOTONIC_READ_VIOLATIONS): reads by client
//     C of row R whose effective key is older than that of some read by C of
//     R that completed before this one was invoked.
//   strong_read_violations (STRONG_READ_VIOLATIONS): reads of R whose
//     effective key is older than some acknowledged write on R (by anyone)
//     that completed before the read was invoked. Only when
//     History::strong_reads_promised; otherwise 0 with the detail "not
//     promised by the routing".
//   (STALENESS_SECONDS): a read's staleness is 0 when it saw the newest
//     write acknowledged before its invoke (or newer); otherwise invoke minus
//     the acknowledgement (`complete`) of the earliest-acknowledged write
//     that was acknowledged before its invoke and is newer than what it saw.
//     The metric is the nearest-rank percentile over the selected reads.
//   (K_STALENESS): a read's k-staleness k is the number of acknowledged
//     writes on its row that were acknowledged (`complete`) at or before its
//     invoke and whose order key is newer than its effective key (a write
//     acknowledged at the very instant the read is invoked counts). k = 0
//     exactly when its staleness is 0 (it saw the newest such write or
//     newer; a DropRowRange can make it so). The metric is the nearest-rank
//     percentile of k over the selected reads (`percentile`, default 99);
//     filters as for STALENESS_SECONDS. ComputeKStaleness summarizes all
//     reads.
//   lost_writes (LOST_WRITES): acknowledged writes such that some surviving
//     cluster's final RowState for (table, row) is older than the write
//     (neither present nor superseded), unless a DropRowRange covering the
//     row happened at or after the write committed. Counted once per write;
//     the detail names the first few (client, row, tag, cluster). Writes
//     whose expiry is at or before History::ended are not lost, nor are
//     writes a max_num_versions limit made surplus at some moment (GC
//     removes those for good, even once the newer versions are deleted;
//     Analysis::MayHaveBeenCollected). In a run
//     that did not settle (History::settled < 0), a write missing on a
//     cluster that had not yet applied it from its origin's log
//     (ClusterState::applied) is pending there, not lost; the detail counts
//     the pending writes that are not lost elsewhere.
//   rpo_writes (RPO_WRITES): distinct acknowledged operations listed in
//     Event::unreplicated_ops of kClusterDown / kRemoveCluster events. When
//     an event has no such list (std::nullopt) a lower bound is used for
//     it: acknowledged writes served by that cluster, committed at or before
//     the event, that no other surviving cluster holds (present or
//     superseded) in the final state; the detail then says "approximate".
//   lost_updates (LOST_UPDATES): per (table, row), the acknowledged
//     kReadModifyWrite operations (each adds 1) committed after the row's
//     last covering DropRowRange (or delete of the row or family) and after
//     the last moment an age rule may have removed the counter cell (the
//     newest one's expiry, Analysis::ExpiryOf, before the next increment or
//     the end), minus the largest final counter over the surviving
//     clusters, clamped at 0; summed over rows. With filters, a
//     row contributes min(its loss, the selected increments on it): an
//     upper bound of how many selected increments can be among the lost.
//   lww_anomalies (LWW_ANOMALIES): acknowledged writes shadowed by a
//     write to the same row acknowledged before they were invoked that
//     carries a newer timestamp (clock skew, or max_backdate); filters
//     select the shadowed writes (window on their invoke); the detail
//     shows the first.
//   double_applied_increments (DOUBLE_APPLIED_INCREMENTS, an expectation
//     only): over kAddToCell operations, the sum of Operation::applied()
//     - 1 where it is above 1: the attempts a cluster applied beyond the
//     first (a retry the idempotency token did not identify: without a
//     token, or on a cluster the original had not reached). The
//     simulator's own count, not read from the final counters (an
//     application only a failed cluster held still counts). Filters
//     select the adds.
//   token_violations (TOKEN_VIOLATIONS): the sum of Event::violations over
//     kTokenWait events (filter: window on `at`).
//   rto_seconds (RTO_SECONDS): faults are kClusterDown, kPartition,
//     kLatency, kNodeFailure, kRemoveCluster, kSlowCluster, kInjectErrors,
//     kCutClients, kStallReplication, kChangeWorkload and kResize events
//     that were not refused
//     (a latency change, more load or fewer nodes count: their errors, e.g.
//     DEADLINE_EXCEEDED or an overloaded node's UNAVAILABLE, are an outage
//     like any other). For a client and a fault at F, the outage ends when
//     the first successful operation of the client invoked at or after F
//     completes; it counts only if an operation of the client failed
//     (completed with an error) at or after F, invoked before that end
//     (one that hung until its deadline counts). A client
//     with failures after F and no success afterwards has an infinite outage
//     (value +infinity, detail "never"; it fails every at_most bound). The
//     value is the longest outage, 0 when none. The detail also gives the
//     error counts by code of the failed operations inside outages. Filters:
//     app_profile and client select the client's operations; cluster selects
//     faults whose `cluster` or `peer` is that cluster; the window applies
//     to the fault time.
//   (FAILBACK_SECONDS): time to fail back. For a client and a fault at F
//     (the faults above except kLatency), the client's home is the cluster
//     (Operation::cluster) that served its last successful operation
//     invoked before F; no home, no sample. The fault's repair is the first
//     later event that undoes it: kClusterUp of the same cluster for
//     kClusterDown, kHeal of the same pair (in either order) for
//     kPartition, kNodeRecovery of the same cluster for kNodeFailure, or
//     else kSettle (the settle phase repairs every fault unless the
//     scenario keeps them); a kRemoveCluster is never repaired. The client
//     was moved off its home when it had an outage after the fault (see
//     rto_seconds) or, for a fault whose `cluster` or `peer` is the home, a
//     successful operation invoked in [F, repair) (F onwards when never
//     repaired) served by another cluster; otherwise no sample. (So a fault
//     elsewhere while the client is away from its home for another reason
//     does not make its temporary cluster a home it must return to.) Its time
//     to fail back is the completion of its first successful operation invoked
//     at or after the repair and served by its home, minus the repair time;
//     "never" (+infinity, failing every at_most bound) when it invoked
//     operations at or after the repair but none of them succeeded on its home.
//     Moved clients of a fault that was never repaired, and clients that
//     invoked nothing at or after the repair (they stopped, or the run ended:
//     e.g. a repair by kSettle, when clients stop), give no sample (the detail
//     counts them). The value is the longest time to fail back over the
//     samples, 0 when none ("no samples"). Filters as for RTO_SECONDS.
//     ComputeFailbacks lists
//     every moved client.
//   failovers (FAILOVERS): History::failovers; filters: app_profile
//     (`profile`), cluster (`to`), window on `at`; client selects the
//     failovers of the profiles the selected clients' operations used (a
//     Failover records no client).
//   errors, successes (ERRORS, SUCCESSES): selected operations of every
//     type that failed / succeeded.
//   (ERROR_RATE): the selected operations that failed over all selected
//     operations; 0 when none is selected.
//   converged (CONVERGED): 1 when the surviving clusters' digests are all
//     equal (also with fewer than two clusters), else 0.
//   (LATENCY_SECONDS): nearest-rank percentile of complete - invoke over the
//     selected successful operations of every type.
//   (CATCH_UP_SECONDS): the longest end - at over kHeal, kClusterUp and
//     kAddCluster events (a new cluster catches up after its seeding) (end ==
//     -1: +infinity, "never"). Filters: cluster (`cluster` or `peer`), window
//     on `at`.
//   (TOKEN_WAIT_SECONDS): the longest end - at over kTokenWait events (end ==
//     -1: +infinity, "never"); window on `at`.
//   (HOTTEST_NODE_CPU): the largest CpuSample::hottest; filters: cluster,
//     window on `at`.
//   (T_VISIBILITY): with t = Expectation.after, over acknowledged writes W:
//     the first selected read of W's row invoked at or after W.complete + t
//     is a sample; it is a success when its effective key is W's or newer.
//     The value is successes / samples.
//
// Filters (Evaluate), unless a check above says otherwise: app_profile
// matches Operation::profile; client matches Operation::client or
// Operation::group; cluster matches Operation::cluster (the serving
// cluster); the window [window_start, window_end) applies to
// Operation::invoke (window_end unset or 0: no end). They apply to the
// operation a check counts: the read for read checks, STALENESS_SECONDS and
// T_VISIBILITY, the write for LOST_WRITES and RPO_WRITES, the increment for
// LOST_UPDATES. Filters a metric does not mention are ignored.
//
// Bounds: "<= X" passes when value <= X (an infinite value fails), ">= X"
// when value >= X. A percentile (0 or absent: 99) outside (0, 100] fails
// with a detail saying so; so does a missing bound or METRIC_UNSPECIFIED.
// Distributions and ratios over an empty selection (LATENCY_SECONDS,
// STALENESS_SECONDS, K_STALENESS, T_VISIBILITY, FAILBACK_SECONDS,
// HOTTEST_NODE_CPU) measure 0 with a detail starting "no samples", and
// their expectations fail whatever the bound: nothing was measured. Counts
// (errors, violations, lost writes, ...) over an empty selection are 0.
#ifndef BTSIM_SCENARIOS_CHECKS_H_
#define BTSIM_SCENARIOS_CHECKS_H_

#include <cstddef>
#include <cstdint>
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
  std::vector<sim::Duration> t;     // kVisibilityBuckets
  std::vector<double> probability;  // NaN-free: -1 where no sample
  std::vector<int64_t> samples;
};
// 0, 1 ms, 5 ms, 10 ms, 50 ms, 100 ms, 500 ms, 1 s, 5 s, 10 s, 60 s.
std::vector<sim::Duration> VisibilityBuckets();
// Curves for every pair with samples, sorted by (write, read) cluster.
// Writes are acknowledged writes (serving cluster = write_cluster); the
// sample for (write, t, read cluster) is the first read of the row served
// by that cluster invoked at or after ack + t; it succeeds when its
// effective key (see above) is the write's or newer.
std::vector<VisibilityCurve> TVisibility(const History& history);

// k-staleness: over successful single-row reads, how many acknowledged
// writes newer than what the read saw had been acknowledged before it
// started (K_STALENESS above).
inline constexpr int kKStalenessMax = 5;
struct KStaleness {
  int64_t reads = 0;
  // at_most[k]: reads with k-staleness <= k, for k = 0..kKStalenessMax
  // (inclusive); reads - at_most[kKStalenessMax] were staler.
  std::vector<int64_t> at_most;
  int64_t max = 0;  // the largest k-staleness of any read
};
KStaleness ComputeKStaleness(const History& history);

// One client moved off its home cluster by one fault (FAILBACK_SECONDS
// above).
struct Failback {
  std::string client;
  size_t event = 0;            // the fault, index in History::events
  std::string home;            // the cluster it returns to
  sim::Duration repaired{-1};  // the repair time (-1: never repaired)
  bool never = false;          // repaired, but it never returned
  // Repaired, but the client invoked nothing at or after the repair: not a
  // sample.
  bool unobserved = false;
  // Completion of the first op served by home - repaired (when repaired,
  // not never and observed).
  sim::Duration length{0};
};
// Every (client, fault) where the client was moved off its home, sorted by
// (event, client).
std::vector<Failback> ComputeFailbacks(const History& history);

std::vector<ExpectationResult> Evaluate(
    const History& history,
    const google::protobuf::RepeatedPtrField<btsim::scenario::v1::Expectation>&
        expectations);

// Everything above at once, sharing one analysis of the history (each
// function above analyses it on its own): the same results as RunChecks,
// Evaluate, TVisibility, ComputeKStaleness and ComputeFailbacks.
struct AllChecks {
  std::vector<CheckValue> checks;
  std::vector<ExpectationResult> expectations;
  std::vector<VisibilityCurve> visibility;
  KStaleness k_staleness;
  std::vector<Failback> failbacks;
};
AllChecks RunAllChecks(
    const History& history,
    const google::protobuf::RepeatedPtrField<btsim::scenario::v1::Expectation>&
        expectations);

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_CHECKS_H_
