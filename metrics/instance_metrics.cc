#include "metrics/instance_metrics.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>

#include "base/status.h"
#include "cluster/cluster.h"
#include "replication/replicas.h"

namespace btsim::metrics {
namespace {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;

constexpr char kInstanceLabel[] = "bigtable_instance";
// At most this many distinct app_profile label values per instance; later
// ones are reported as "other" (a server receives arbitrary profile ids).
constexpr size_t kMaxProfiles = 64;
constexpr size_t kMaxProfileIdLength = 50;

using LabelList =
    std::initializer_list<std::pair<std::string_view, std::string_view>>;

double Seconds(sim::Duration d) {
  return std::chrono::duration<double>(d).count();
}

// Bigtable's app profile id syntax: [_a-zA-Z0-9][-_.a-zA-Z0-9]*.
bool IsProfileId(std::string_view id) {
  if (id.empty() || id.size() > kMaxProfileIdLength) return false;
  for (size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9') || c == '_';
    if (!alnum && !(i > 0 && (c == '-' || c == '.'))) return false;
  }
  return true;
}

// Appends `part` to a cache key, length-prefixed so that no two label
// tuples share a key.
void AppendPart(std::string& key, std::string_view part) {
  const auto size = static_cast<uint32_t>(part.size());
  key.append(reinterpret_cast<const char*>(&size), sizeof(size));
  key.append(part);
}

template <typename T>
Family<T>& Build(prometheus::detail::Builder<T> builder,
                 prometheus::Registry& registry, const char* name,
                 const char* help) {
  return builder.Name(name).Help(help).Register(registry);
}

}  // namespace

std::vector<double> LatencyBuckets() {
  return {0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1,
          0.2,    0.5,   1,     2,     5,    10,   30,   60};
}

std::vector<double> ReplicationBuckets() {
  return {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
          2.5,   5,     10,   30,    60,   120, 300,  600, 1800};
}

struct InstanceMetrics::Families {
  explicit Families(prometheus::Registry& r)
      : requests(Build(prometheus::BuildCounter(), r,
                       "bigtable_server_requests_total",
                       "Requests served, by serving cluster, app profile, "
                       "method and status code (cluster=\"\" when routing "
                       "chose none).")),
        latencies(Build(prometheus::BuildHistogram(), r,
                        "bigtable_server_latencies_seconds",
                        "Server-side request latency, from arrival to the "
                        "reply.")),
        modified_rows(Build(prometheus::BuildCounter(), r,
                            "bigtable_server_modified_rows_total",
                            "Rows modified by requests.")),
        returned_rows(Build(prometheus::BuildCounter(), r,
                            "bigtable_server_returned_rows_total",
                            "Rows returned by requests.")),
        replication_latency(
            Build(prometheus::BuildHistogram(), r,
                  "bigtable_replication_latency_seconds",
                  "Time from a mutation's commit on the source cluster to "
                  "its application on the destination cluster.")),
        applied_entries(Build(prometheus::BuildCounter(), r,
                              "bigtable_replication_applied_entries_total",
                              "Replication log entries applied by the "
                              "destination cluster.")),
        failovers(Build(prometheus::BuildCounter(), r,
                        "bigtable_multi_cluster_failovers_total",
                        "Multi-cluster routing skipped the nearest cluster "
                        "(from_cluster) for another (to_cluster).")),
        refused(Build(prometheus::BuildCounter(), r,
                      "bigtable_transactions_refused_total",
                      "Single-row transactions refused with "
                      "FAILED_PRECONDITION: the app profile does not allow "
                      "them.")),
        max_delay(Build(prometheus::BuildGauge(), r,
                        "bigtable_replication_max_delay_seconds",
                        "Age of the oldest committed change of the table "
                        "that some cluster has not applied yet (0: none).")),
        backlog(Build(prometheus::BuildGauge(), r,
                      "bigtable_replication_backlog_entries",
                      "Replication log entries of the source cluster not yet "
                      "acknowledged by the destination cluster.")),
        cpu(Build(prometheus::BuildGauge(), r, "bigtable_cluster_cpu_load",
                  "Average load of the cluster's nodes, as a fraction of "
                  "one node's capacity (above 1: requests queue).")),
        cpu_hottest(Build(prometheus::BuildGauge(), r,
                          "bigtable_cluster_cpu_load_hottest_node",
                          "Load of the cluster's busiest node, as a fraction "
                          "of its capacity (above 1: requests queue).")),
        node_count(Build(prometheus::BuildGauge(), r, "bigtable_cluster_nodes",
                         "Nodes of the cluster.")),
        storage(Build(prometheus::BuildGauge(), r,
                      "bigtable_cluster_storage_bytes",
                      "Bytes stored by the cluster, over all its tables.")),
        up(Build(prometheus::BuildGauge(), r, "bigtable_cluster_up",
                 "1 when the cluster is serving, 0 when it is down.")),
        tablets(Build(prometheus::BuildGauge(), r, "bigtable_tablets",
                      "Tablets of a table on a cluster.")),
        ejections(Build(prometheus::BuildCounter(), r,
                        "btsim_front_end_ejections_total",
                        "Times the routing front end of a client zone "
                        "ejected a cluster after observing failures.")),
        probes(Build(prometheus::BuildCounter(), r,
                     "btsim_front_end_probes_total",
                     "Probes of ejected clusters by the routing front end "
                     "of a client zone, by result (ok, failed).")),
        admitted(Build(prometheus::BuildGauge(), r,
                       "btsim_front_end_cluster_admitted",
                       "1 while the routing front end of a client zone "
                       "routes to the cluster, 0 while it has ejected it.")) {}

  Family<Counter>& requests;
  Family<Histogram>& latencies;
  Family<Counter>& modified_rows;
  Family<Counter>& returned_rows;
  Family<Histogram>& replication_latency;
  Family<Counter>& applied_entries;
  Family<Counter>& failovers;
  Family<Counter>& refused;
  Family<Gauge>& max_delay;
  Family<Gauge>& backlog;
  Family<Gauge>& cpu;
  Family<Gauge>& cpu_hottest;
  Family<Gauge>& node_count;
  Family<Gauge>& storage;
  Family<Gauge>& up;
  Family<Gauge>& tablets;
  Family<Counter>& ejections;
  Family<Counter>& probes;
  Family<Gauge>& admitted;

  // Series of one (cluster, app_profile, method).
  struct RequestSeries {
    Histogram* latency = nullptr;
    Counter* modified = nullptr;
    Counter* returned = nullptr;
    std::map<StatusCode, Counter*> by_code;
  };
  // Series of one (source_cluster, destination_cluster).
  struct LinkSeries {
    Histogram* latency = nullptr;
    Counter* applied = nullptr;
  };
  struct GaugeSeries {
    Family<Gauge>* family = nullptr;
    Gauge* gauge = nullptr;
    uint64_t generation = 0;  // of the latest Sample that set it
  };

  std::string instance;
  // Caches by length-prefixed label tuple (see AppendPart); they also list
  // every series this object added, for removal.
  std::map<std::string, RequestSeries, std::less<>> requests_by_key;
  std::map<std::string, LinkSeries, std::less<>> links;
  std::map<std::string, Counter*, std::less<>> failovers_by_key;
  std::map<std::string, Counter*, std::less<>> refused_by_key;
  std::map<std::string, Counter*, std::less<>> ejections_by_key;
  std::map<std::string, Counter*, std::less<>> probes_by_key;
  // Keyed by the family's address, then the labels.
  std::map<std::string, GaugeSeries, std::less<>> gauges;
  std::set<std::string, std::less<>> profiles;  // app_profile values seen
  std::string key;                              // scratch
  uint64_t generation = 0;

  // The bounded app_profile label value of a requested profile id.
  std::string_view ProfileLabel(std::string_view profile) {
    if (profile.empty()) return "default";
    if (!IsProfileId(profile)) return "invalid";
    auto it = profiles.find(profile);
    if (it != profiles.end()) return *it;
    if (profiles.size() >= kMaxProfiles) return "other";
    return *profiles.emplace(profile).first;
  }

  prometheus::Labels MakeLabels(LabelList labels) const {
    prometheus::Labels out{{kInstanceLabel, instance}};
    for (const auto& [name, value] : labels) {
      out.emplace(std::string(name), std::string(value));
    }
    return out;
  }

  const std::string& Key(LabelList parts) {
    key.clear();
    for (const auto& part : parts) AppendPart(key, part.second);
    return key;
  }

  // A counter of `family` with `labels`, created on first use.
  Counter& CounterOf(Family<Counter>& family,
                     std::map<std::string, Counter*, std::less<>>& cache,
                     LabelList labels) {
    auto it = cache.find(Key(labels));
    if (it == cache.end()) {
      it = cache.emplace(key, &family.Add(MakeLabels(labels))).first;
    }
    return *it->second;
  }

  // Sets a gauge (creating it) and marks it alive in this Sample.
  void SetGauge(Family<Gauge>& family, LabelList labels, double value) {
    key.clear();
    const auto address = reinterpret_cast<uintptr_t>(&family);
    key.append(reinterpret_cast<const char*>(&address), sizeof(address));
    for (const auto& part : labels) AppendPart(key, part.second);
    auto it = gauges.find(key);
    if (it == gauges.end()) {
      GaugeSeries series;
      series.family = &family;
      series.gauge = &family.Add(MakeLabels(labels));
      it = gauges.emplace(key, series).first;
    }
    it->second.gauge->Set(value);
    it->second.generation = generation;
  }

  // Removes the gauges the latest Sample did not set.
  void RemoveStaleGauges() {
    for (auto it = gauges.begin(); it != gauges.end();) {
      if (it->second.generation == generation) {
        ++it;
        continue;
      }
      it->second.family->Remove(it->second.gauge);
      it = gauges.erase(it);
    }
  }

  void RemoveAll() {
    for (auto& [k, s] : requests_by_key) {
      latencies.Remove(s.latency);
      modified_rows.Remove(s.modified);
      returned_rows.Remove(s.returned);
      for (auto& [code, counter] : s.by_code) requests.Remove(counter);
    }
    for (auto& [k, s] : links) {
      replication_latency.Remove(s.latency);
      applied_entries.Remove(s.applied);
    }
    for (auto& [k, c] : failovers_by_key) failovers.Remove(c);
    for (auto& [k, c] : refused_by_key) refused.Remove(c);
    for (auto& [k, c] : ejections_by_key) ejections.Remove(c);
    for (auto& [k, c] : probes_by_key) probes.Remove(c);
    for (auto& [k, g] : gauges) g.family->Remove(g.gauge);
  }
};

InstanceMetrics::InstanceMetrics(prometheus::Registry& registry,
                                 std::string instance_name)
    : families_(std::make_unique<Families>(registry)) {
  families_->instance = std::move(instance_name);
}

InstanceMetrics::~InstanceMetrics() { families_->RemoveAll(); }

void InstanceMetrics::OnFailover(std::string_view profile,
                                 std::string_view from, std::string_view to) {
  Families& f = *families_;
  f.CounterOf(f.failovers, f.failovers_by_key,
              {{"app_profile", f.ProfileLabel(profile)},
               {"from_cluster", from},
               {"to_cluster", to}})
      .Increment();
}

void InstanceMetrics::OnHealthChange(std::string_view zone,
                                     std::string_view cluster, bool ejected) {
  Families& f = *families_;
  if (!ejected) return;  // the admitted gauge shows readmissions
  f.CounterOf(f.ejections, f.ejections_by_key,
              {{"zone", zone}, {"cluster", cluster}})
      .Increment();
}

void InstanceMetrics::OnProbe(std::string_view zone, std::string_view cluster,
                              bool ok) {
  Families& f = *families_;
  f.CounterOf(
       f.probes, f.probes_by_key,
       {{"zone", zone}, {"cluster", cluster}, {"result", ok ? "ok" : "failed"}})
      .Increment();
}

void InstanceMetrics::OnRequest(const instance::RequestReport& request) {
  Families& f = *families_;
  const std::string_view profile = f.ProfileLabel(request.app_profile);
  const LabelList labels = {{"cluster", request.cluster},
                            {"app_profile", profile},
                            {"method", request.method}};
  auto it = f.requests_by_key.find(f.Key(labels));
  if (it == f.requests_by_key.end()) {
    Families::RequestSeries series;
    const prometheus::Labels full = f.MakeLabels(labels);
    series.latency = &f.latencies.Add(full, LatencyBuckets());
    series.modified = &f.modified_rows.Add(full);
    series.returned = &f.returned_rows.Add(full);
    it = f.requests_by_key.emplace(f.key, std::move(series)).first;
  }
  Families::RequestSeries& series = it->second;
  auto code = series.by_code.find(request.code);
  if (code == series.by_code.end()) {
    prometheus::Labels full = f.MakeLabels(labels);
    full.emplace("code", std::string(StatusCodeName(request.code)));
    code = series.by_code.emplace(request.code, &f.requests.Add(full)).first;
  }
  code->second->Increment();
  series.latency->Observe(Seconds(std::max(request.latency, sim::Duration(0))));
  if (request.modified_rows > 0) {
    series.modified->Increment(static_cast<double>(request.modified_rows));
  }
  if (request.returned_rows > 0) {
    series.returned->Increment(static_cast<double>(request.returned_rows));
  }
  if (request.refused) {
    f.CounterOf(f.refused, f.refused_by_key,
                {{"app_profile", profile}, {"method", request.method}})
        .Increment();
  }
}

void InstanceMetrics::OnReplicated(const replication::AppliedInfo& info) {
  Families& f = *families_;
  const LabelList labels = {{"source_cluster", info.origin},
                            {"destination_cluster", info.peer}};
  auto it = f.links.find(f.Key(labels));
  if (it == f.links.end()) {
    Families::LinkSeries series;
    const prometheus::Labels full = f.MakeLabels(labels);
    series.latency = &f.replication_latency.Add(full, ReplicationBuckets());
    series.applied = &f.applied_entries.Add(full);
    it = f.links.emplace(f.key, series).first;
  }
  // The commit version may run slightly ahead of the clock (it is bumped
  // past the previous one); a delay is never negative.
  const sim::Duration delay =
      std::max(info.applied_at - info.committed_at(), sim::Duration(0));
  it->second.latency->Observe(Seconds(delay));
  it->second.applied->Increment();
}

void InstanceMetrics::Sample(instance::Instance& instance) {
  Families& f = *families_;
  ++f.generation;
  const sim::Time now = instance.Now();
  replication::Replicas& replicas = instance.replicas();
  const std::vector<instance::ClusterConfig> clusters = instance.Clusters();
  // Every table any cluster holds or some link still owes, with its delay.
  std::map<std::string, sim::Duration> max_delay;
  for (const instance::ClusterConfig& c : clusters) {
    const LabelList labels = {{"cluster", c.id}};
    f.SetGauge(f.up, labels, replicas.IsDown(c.id) ? 0 : 1);
    f.SetGauge(f.cpu, labels, instance.CpuLoad(c.id));
    f.SetGauge(f.cpu_hottest, labels, instance.HottestNodeLoad(c.id));
    const cluster::NodeModel* nodes = instance.Nodes(c.id);
    f.SetGauge(f.node_count, labels, nodes != nullptr ? nodes->nodes() : 0);
    int64_t bytes = 0;
    if (const cluster::Cluster* engine = replicas.Find(c.id);
        engine != nullptr) {
      for (const std::string& table : engine->ListTables()) {
        auto t = engine->GetTable(table);
        if (!t.ok()) continue;
        const cluster::TableStats stats = (*t)->Stats();
        bytes += stats.bytes;
        f.SetGauge(f.tablets, {{"cluster", c.id}, {"table", table}},
                   static_cast<double>(stats.tablets));
        max_delay.try_emplace(table, sim::Duration(0));
      }
    }
    f.SetGauge(f.storage, labels, static_cast<double>(bytes));
  }
  for (const auto& [zone, views] : instance.FrontEndViews()) {
    for (const appprofile::ClusterHealth::ClusterView& v : views) {
      f.SetGauge(f.admitted, {{"zone", zone}, {"cluster", v.cluster}},
                 v.ejected ? 0 : 1);
    }
  }
  for (const instance::ClusterConfig& from : clusters) {
    for (const instance::ClusterConfig& to : clusters) {
      if (from.id == to.id) continue;
      f.SetGauge(f.backlog,
                 {{"source_cluster", from.id}, {"destination_cluster", to.id}},
                 static_cast<double>(replicas.Backlog(from.id, to.id)));
      for (const auto& [table, since] : replicas.PendingSince(from.id, to.id)) {
        sim::Duration& delay = max_delay[table];
        delay = std::max(delay, now - since);
      }
    }
  }
  for (const auto& [table, delay] : max_delay) {
    f.SetGauge(f.max_delay, {{"table", table}},
               Seconds(std::max(delay, sim::Duration(0))));
  }
  f.RemoveStaleGauges();
}

}  // namespace btsim::metrics
