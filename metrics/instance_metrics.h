// InstanceMetrics: the Prometheus series of one instance, in the spirit of
// Bigtable's Cloud Monitoring metrics (reference: Monitoring). It listens to
// the instance's events (InstanceObserver) and reads its gauges when told
// to (Sample). The engine knows nothing of Prometheus; this adapter does.
//
// Every series carries the label bigtable_instance="<name>" (an ordinary
// label, not a family's constant label, so that several instances can share
// one registry's families).
// Counters and histograms (updated on events):
//   bigtable_server_requests_total{cluster,app_profile,method,code}
//     code: the canonical gRPC name ("OK", "UNAVAILABLE", ...)
//   bigtable_server_latencies_seconds{cluster,app_profile,method}  histogram
//     (LatencyBuckets), server-side latency of every request, errors too
//   bigtable_server_modified_rows_total{cluster,app_profile,method}
//   bigtable_server_returned_rows_total{cluster,app_profile,method}
//   bigtable_replication_latency_seconds{source_cluster,destination_cluster}
//     histogram (ReplicationBuckets) of apply time - commit time of every
//     replicated entry (never negative)
//   bigtable_replication_applied_entries_total{source_cluster,
//     destination_cluster}
//   bigtable_multi_cluster_failovers_total{app_profile,from_cluster,
//     to_cluster}
//   bigtable_transactions_refused_total{app_profile,method}: requests whose
//     RequestReport says `refused`
//   btsim_front_end_ejections_total{zone,cluster}: times the routing front
//     end of a client zone ejected a cluster
//   btsim_front_end_probes_total{zone,cluster,result}: its probes of
//     ejected clusters; result "ok" or "failed" (an error or no answer
//     within the probe timeout)
// Gauges (set by Sample):
//   bigtable_replication_max_delay_seconds{table}: the age of the oldest
//     entry of the table that some cluster has not acknowledged (0: none),
//     for every table some cluster holds or some link still owes
//   bigtable_replication_backlog_entries{source_cluster,destination_cluster}
//     for every ordered pair of clusters
//   bigtable_cluster_cpu_load{cluster}, bigtable_cluster_cpu_load_hottest_node
//     {cluster} (fractions of a node, 0..1+; not clamped: above 1 the
//     node's queue grows)
//   bigtable_cluster_nodes{cluster} (Cloud Monitoring's cluster/node_count;
//     not "_count": promtool check metrics reserves that suffix for
//     histograms and summaries), bigtable_cluster_storage_bytes{cluster}
//     (sum of its tables' bytes), bigtable_cluster_up{cluster} (1 up, 0 down)
//   bigtable_tablets{cluster,table}
//   btsim_front_end_cluster_admitted{zone,cluster}: 1 while the front end
//     of the zone routes to the cluster, 0 while it has ejected it (what
//     it believes, not the truth: compare bigtable_cluster_up)
// A request refused by routing before any cluster has cluster="" in its
// labels; an empty app profile id is reported as "default", an id that is
// not a valid app profile id as "invalid", and ids beyond the 64th distinct
// one as "other". Label sets are thus bounded: clusters (<= 4) x profiles
// (<= 64) x methods x codes; zones are the instance's client zones. Gauge
// series of a cluster, link or table that no longer exists are removed at the
// next Sample; counters and histograms are kept (they are history). The
// destructor removes every series this object added.
//
// Thread-safety: observer callbacks and Sample run under the instance's
// serialisation (its owner's lock); prometheus-cpp's metrics may be read
// (Collect) concurrently from any thread. The registry must outlive this
// object. Several InstanceMetrics may share a registry if it merges
// families (InsertBehavior::Merge, the default) and their instance names
// differ. Label names are fixed here, so prometheus-cpp never throws on
// them; label values may be any bytes (the exposition escapes them).
#ifndef BTSIM_METRICS_INSTANCE_METRICS_H_
#define BTSIM_METRICS_INSTANCE_METRICS_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/registry.h>

#include "instance/instance.h"

namespace btsim::metrics {

// Upper bounds (seconds) of the request latency histogram buckets.
std::vector<double> LatencyBuckets();
// Upper bounds (seconds) of the replication latency histogram buckets.
std::vector<double> ReplicationBuckets();

class InstanceMetrics : public instance::InstanceObserver {
 public:
  InstanceMetrics(prometheus::Registry& registry, std::string instance_name);
  ~InstanceMetrics() override;
  InstanceMetrics(const InstanceMetrics&) = delete;
  InstanceMetrics& operator=(const InstanceMetrics&) = delete;

  void OnFailover(std::string_view profile, std::string_view from,
                  std::string_view to) override;
  void OnRequest(const instance::RequestReport& request) override;
  void OnReplicated(const replication::AppliedInfo& info) override;
  void OnHealthChange(std::string_view zone, std::string_view cluster,
                      bool ejected) override;
  void OnProbe(std::string_view zone, std::string_view cluster,
               bool ok) override;

  // Sets every gauge from `instance` now (its scheduler's time). Requires
  // the same serialisation as the instance's own calls.
  void Sample(instance::Instance& instance);

 private:
  struct Families;
  std::unique_ptr<Families> families_;
};

}  // namespace btsim::metrics

#endif  // BTSIM_METRICS_INSTANCE_METRICS_H_
