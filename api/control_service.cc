#include "api/control_service.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "api/convert.h"
#include "api/resource_names.h"
#include "appprofile/app_profile.h"

namespace btsim::api {

namespace control = ::btsim::control::v1;

namespace {

// The longest delay SetLatency accepts, as `btsim ctl` does.
constexpr std::chrono::hours kMaxLatency{24};

Status RequireCluster(const std::string& id, std::string_view field) {
  if (id.empty()) {
    return InvalidArgument(std::string(field) + ": a cluster id is required");
  }
  return OkStatus();
}

Status RequireTwoClusters(const std::string& a, const std::string& b) {
  BTSIM_RETURN_IF_ERROR(RequireCluster(a, "cluster_a"));
  BTSIM_RETURN_IF_ERROR(RequireCluster(b, "cluster_b"));
  if (a == b) {
    return InvalidArgument("cluster_b: must differ from cluster_a ('" + a +
                           "'); a link joins two clusters");
  }
  return OkStatus();
}

// A non-negative duration of at most kMaxLatency, in field `field`.
Result<sim::Duration> LatencyFromProto(const google::protobuf::Duration& d,
                                       const std::string& field = "latency") {
  if (d.seconds() < 0 || d.nanos() < 0 || d.nanos() >= 1'000'000'000) {
    return InvalidArgument(field + ": must be a non-negative duration, got " +
                           std::to_string(d.seconds()) + "s " +
                           std::to_string(d.nanos()) + "ns");
  }
  const auto max_seconds =
      std::chrono::duration_cast<std::chrono::seconds>(kMaxLatency).count();
  if (d.seconds() > max_seconds ||
      (d.seconds() == max_seconds && d.nanos() > 0)) {
    return InvalidArgument(field + ": at most 24h, got " +
                           std::to_string(d.seconds()) + "s");
  }
  return std::chrono::seconds(d.seconds()) + sim::Duration(d.nanos());
}

void LatencyToProto(sim::Duration ns, google::protobuf::Duration* out) {
  const int64_t count = std::max<int64_t>(ns.count(), 0);
  out->set_seconds(count / 1'000'000'000);
  out->set_nanos(static_cast<int32_t>(count % 1'000'000'000));
}

// A representative one-way delay of a model: its constant, or its median.
sim::Duration Median(const sim::LatencyModel& m) {
  sim::Duration value = m.a;
  switch (m.kind) {
    case sim::LatencyModel::Kind::kConstant:
    case sim::LatencyModel::Kind::kNormal:
    case sim::LatencyModel::Kind::kLogNormal:
      break;
    case sim::LatencyModel::Kind::kUniform:
      if (m.b > m.a) value = m.a + (m.b - m.a) / 2;
      break;
    case sim::LatencyModel::Kind::kExponential:
      value = m.floor + sim::Duration(std::llround(
                            static_cast<double>(m.a.count()) * std::log(2.0)));
      break;
  }
  return std::max({value, m.floor, sim::Duration(0)});
}

std::string Routing(const appprofile::AppProfile& p) {
  if (p.routing == appprofile::AppProfile::Routing::kSingleCluster) {
    return "single-cluster " + p.cluster_id +
           (p.allow_transactional_writes ? " (transactional)" : "");
  }
  std::string clusters;
  for (const std::string& id : p.cluster_ids) {
    clusters += (clusters.empty() ? "" : ",") + id;
  }
  return "multi-cluster " + (clusters.empty() ? "any" : clusters) +
         (p.row_affinity ? " (row affinity)" : "");
}

// The zone of cluster `id`, if the instance has it.
std::optional<std::string> ZoneOf(const instance::Instance& instance,
                                  const std::string& id) {
  for (const instance::ClusterConfig& c : instance.Clusters()) {
    if (c.id == id) return c.zone;
  }
  return std::nullopt;
}

std::vector<std::string> ZonesOf(const instance::Instance& instance) {
  std::vector<std::string> zones;
  for (const instance::ClusterConfig& c : instance.Clusters()) {
    zones.push_back(c.zone);
  }
  return zones;
}

// The cluster's injected faults and the front end's view of it.
void AddFaults(const instance::Instance& instance, const std::string& id,
               control::ClusterStatus& out) {
  const instance::ClusterFaults& faults = instance.faults();
  out.set_down_mode(faults.down_mode(id) == instance::DownMode::kBlackhole
                        ? control::BLACKHOLE
                        : control::REFUSE);
  if (auto it = faults.slowness().find(id); it != faults.slowness().end()) {
    LatencyToProto(Median(it->second), out.mutable_added_latency());
  }
  if (auto it = faults.errors().find(id); it != faults.errors().end()) {
    out.set_error_fraction(it->second.fraction);
    out.set_error_code(std::string(StatusCodeName(it->second.code)));
    out.set_error_method(it->second.method);
  }
  for (const instance::ClientCut& cut : faults.cuts()) {
    if (cut.cluster != id || cut.client_zone != instance.client_zone() ||
        !cut.client.empty()) {
      continue;
    }
    out.set_clients_cut(cut.requests && cut.replies ? "BOTH"
                        : cut.requests              ? "REQUESTS"
                                                    : "REPLIES");
  }
  out.set_replication_stalled(instance.replicas().IsStalled(id));
  if (const sim::Duration offset = instance.replicas().ClockOffset(id);
      offset != sim::Duration(0)) {
    out.mutable_clock_offset()->set_seconds(offset.count() / 1'000'000'000);
    out.mutable_clock_offset()->set_nanos(
        static_cast<int32_t>(offset.count() % 1'000'000'000));
  }
  const auto views = instance.FrontEndViews();
  if (auto it = views.find(instance.client_zone()); it != views.end()) {
    for (const appprofile::ClusterHealth::ClusterView& v : it->second) {
      if (v.cluster != id) continue;
      out.set_ejected(v.ejected);
      out.set_ejections(v.ejections);
      if (v.ejections > 0) {
        LatencyToProto(instance.Now() - v.ejected_at,
                       out.mutable_ejected_ago());
      }
    }
  }
}

}  // namespace

Result<std::vector<ServedInstance*>> ControlService::Targets(
    const std::string& instance) {
  if (instance.empty()) return registry_.All();
  BTSIM_ASSIGN_OR_RETURN(std::string name,
                         ParseInstanceName(instance, "instance"));
  BTSIM_ASSIGN_OR_RETURN(ServedInstance * served, registry_.GetOrCreate(name));
  return std::vector<ServedInstance*>{served};
}

Status ControlService::Apply(const std::string& instance,
                             const std::vector<std::string>& cluster_ids,
                             const Op& op) {
  BTSIM_ASSIGN_OR_RETURN(std::vector<ServedInstance*> targets,
                         Targets(instance));
  if (targets.empty()) {
    return FailedPrecondition(
        "instance: no instance has been used yet; name one "
        "(projects/P/instances/I) to create it");
  }
  std::string missing;  // the first cluster id an instance lacks
  bool applied = false;
  for (ServedInstance* served : targets) {
    std::lock_guard<std::mutex> lock(served->mu);
    Zones zones;
    for (const std::string& id : cluster_ids) {
      std::optional<std::string> zone = ZoneOf(*served->instance, id);
      if (!zone) {
        if (missing.empty()) missing = id;
        break;
      }
      zones.push_back(std::move(*zone));
    }
    if (zones.size() != cluster_ids.size()) {
      if (!instance.empty()) {
        return NotFound("cluster '" + missing + "' not found in instance '" +
                        served->instance->name() + "'");
      }
      continue;  // every instance: skip those without the clusters
    }
    BaseLatency(*served);
    BTSIM_RETURN_IF_ERROR(op(*served, zones));
    applied = true;
  }
  if (!applied) {
    return NotFound("cluster '" + missing + "' not found in any instance");
  }
  return OkStatus();
}

std::optional<sim::LatencyModel> ControlService::BaseLatency(
    ServedInstance& served) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = bases_.find(&served);
  if (it == bases_.end()) return std::nullopt;
  Base& base = it->second;
  sim::Transport& transport = served.instance->transport();
  const std::vector<std::string> zones = ZonesOf(*served.instance);
  for (const std::string& added : zones) {
    if (base.zones.contains(added)) continue;
    for (const std::string& other : zones) {
      if (other != added) transport.SetLatency(added, other, base.model);
    }
    base.zones.insert(added);
  }
  return base.model;
}

void ControlService::ReplaceEverywhereOverride(ServedInstance& served,
                                               const std::string& probe_from,
                                               const std::string& probe_to) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (bases_.contains(&served)) return;  // already replaced
  }
  sim::Transport& transport = served.instance->transport();
  // The Transport does not say whether an everywhere override is in force:
  // probe for it with a per-link model nobody sets (a negative constant). It
  // shows in LatencyOf unless the override hides it.
  const sim::LatencyModel in_force = transport.LatencyOf(probe_from, probe_to);
  sim::LatencyModel probe = sim::LatencyModel::Constant(sim::Duration(-1));
  if (in_force == probe) probe.a = sim::Duration(-2);
  transport.SetLatency(probe_from, probe_to, probe, /*one_way=*/true);
  const bool hidden = !(transport.LatencyOf(probe_from, probe_to) == probe);
  transport.ClearLatency(probe_from, probe_to, /*one_way=*/true);
  if (!hidden) return;
  // `in_force` is the override: give it to every link explicitly instead.
  transport.SetLatencyEverywhere(std::nullopt);
  const std::vector<std::string> zones = ZonesOf(*served.instance);
  for (const std::string& from : zones) {
    for (const std::string& to : zones) {
      if (from != to) transport.SetLatency(from, to, in_force, true);
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  bases_[&served] = Base{in_force, {zones.begin(), zones.end()}};
}

grpc::Status ControlService::SetClusterState(
    grpc::ServerContext*, const control::SetClusterStateRequest* request,
    control::SetClusterStateResponse*) {
  if (Status s = RequireCluster(request->cluster_id(), "cluster_id"); !s.ok()) {
    return ToGrpc(s);
  }
  const bool down = request->down();
  const instance::DownMode mode = request->mode() == control::BLACKHOLE
                                      ? instance::DownMode::kBlackhole
                                      : instance::DownMode::kRefuse;
  return ToGrpc(Apply(request->instance(), {request->cluster_id()},
                      [&](ServedInstance& served, const Zones&) {
                        return served.instance->SetDown(request->cluster_id(),
                                                        down, mode);
                      }));
}

grpc::Status ControlService::SetSlowness(
    grpc::ServerContext*, const control::SetSlownessRequest* request,
    control::SetSlownessResponse*) {
  if (Status s = RequireCluster(request->cluster_id(), "cluster_id"); !s.ok()) {
    return ToGrpc(s);
  }
  sim::Duration added{0};
  if (request->has_added_latency()) {
    auto parsed = LatencyFromProto(request->added_latency(), "added_latency");
    if (!parsed.ok()) return ToGrpc(parsed.status());
    added = *parsed;
  }
  return ToGrpc(
      Apply(request->instance(), {request->cluster_id()},
            [&](ServedInstance& served, const Zones&) {
              served.instance->faults().SetSlowness(
                  request->cluster_id(),
                  added > sim::Duration(0)
                      ? std::optional(sim::LatencyModel::Constant(added))
                      : std::nullopt);
              return OkStatus();
            }));
}

grpc::Status ControlService::InjectErrors(
    grpc::ServerContext*, const control::InjectErrorsRequest* request,
    control::InjectErrorsResponse*) {
  if (Status s = RequireCluster(request->cluster_id(), "cluster_id"); !s.ok()) {
    return ToGrpc(s);
  }
  const double fraction = request->fraction();
  if (!(fraction >= 0 && fraction <= 1)) {
    return ToGrpc(InvalidArgument("fraction: must be in [0, 1], got " +
                                  std::to_string(fraction)));
  }
  instance::InjectedErrors errors;
  errors.fraction = fraction;
  if (!request->code().empty()) {
    const std::optional<StatusCode> code = StatusCodeFromName(request->code());
    if (!code || *code == StatusCode::kOk) {
      return ToGrpc(InvalidArgument("code: '" + request->code() +
                                    "' is not a gRPC error code (e.g. "
                                    "UNAVAILABLE)"));
    }
    errors.code = *code;
  }
  static constexpr std::string_view kMethods[] = {
      "ReadRows",           "MutateRow",     "MutateRows", "CheckAndMutateRow",
      "ReadModifyWriteRow", "SampleRowKeys", "PingAndWarm"};
  if (!request->method().empty() &&
      std::find(std::begin(kMethods), std::end(kMethods), request->method()) ==
          std::end(kMethods)) {
    return ToGrpc(InvalidArgument("method: '" + request->method() +
                                  "' is not a Bigtable data RPC (e.g. "
                                  "ReadRows, MutateRow)"));
  }
  errors.method = request->method();
  return ToGrpc(Apply(request->instance(), {request->cluster_id()},
                      [&](ServedInstance& served, const Zones&) {
                        served.instance->faults().SetErrors(
                            request->cluster_id(), fraction > 0
                                                       ? std::optional(errors)
                                                       : std::nullopt);
                        return OkStatus();
                      }));
}

grpc::Status ControlService::CutClients(
    grpc::ServerContext*, const control::CutClientsRequest* request,
    control::CutClientsResponse*) {
  if (Status s = RequireCluster(request->cluster_id(), "cluster_id"); !s.ok()) {
    return ToGrpc(s);
  }
  return ToGrpc(Apply(request->instance(), {request->cluster_id()},
                      [&](ServedInstance& served, const Zones&) {
                        instance::Instance& instance = *served.instance;
                        if (request->mend()) {
                          instance.faults().Mend(instance.client_zone(), "",
                                                 request->cluster_id());
                          return OkStatus();
                        }
                        instance::ClientCut cut;
                        cut.client_zone = instance.client_zone();
                        cut.cluster = request->cluster_id();
                        cut.requests = request->direction() !=
                                       control::CutClientsRequest::REPLIES;
                        cut.replies = request->direction() !=
                                      control::CutClientsRequest::REQUESTS;
                        instance.faults().Cut(cut);
                        return OkStatus();
                      }));
}

grpc::Status ControlService::SetPartition(
    grpc::ServerContext*, const control::SetPartitionRequest* request,
    control::SetPartitionResponse*) {
  if (Status s = RequireTwoClusters(request->cluster_a(), request->cluster_b());
      !s.ok()) {
    return ToGrpc(s);
  }
  const bool one_way = request->one_way();
  const bool heal = request->heal();
  return ToGrpc(
      Apply(request->instance(), {request->cluster_a(), request->cluster_b()},
            [&](ServedInstance& served, const Zones& zones) {
              sim::Transport& transport = served.instance->transport();
              const std::string& a = zones[0];
              const std::string& b = zones[1];
              if (!heal) {
                transport.Partition(a, b, one_way);
              } else {
                // Transport::Heal restores both directions; a one-way heal
                // keeps b -> a as it was.
                const bool back_cut = transport.IsCut(b, a);
                transport.Heal(a, b);
                if (one_way && back_cut) transport.Partition(b, a, true);
              }
              return OkStatus();
            }));
}

grpc::Status ControlService::SetLatency(
    grpc::ServerContext*, const control::SetLatencyRequest* request,
    control::SetLatencyResponse*) {
  if (Status s = RequireTwoClusters(request->cluster_a(), request->cluster_b());
      !s.ok()) {
    return ToGrpc(s);
  }
  sim::Duration latency{0};
  if (request->has_latency()) {
    auto parsed = LatencyFromProto(request->latency());
    if (!parsed.ok()) return ToGrpc(parsed.status());
    latency = *parsed;
  }
  const bool one_way = request->one_way();
  return ToGrpc(
      Apply(request->instance(), {request->cluster_a(), request->cluster_b()},
            [&](ServedInstance& served, const Zones& zones) {
              sim::Transport& transport = served.instance->transport();
              const std::string& a = zones[0];
              const std::string& b = zones[1];
              if (latency > sim::Duration(0)) {
                ReplaceEverywhereOverride(served, a, b);
                transport.SetLatency(a, b, sim::LatencyModel::Constant(latency),
                                     one_way);
              } else if (std::optional<sim::LatencyModel> base =
                             BaseLatency(served)) {
                transport.SetLatency(a, b, *base, one_way);
              } else {
                transport.ClearLatency(a, b, one_way);
              }
              return OkStatus();
            }));
}

grpc::Status ControlService::SetReplicationStall(
    grpc::ServerContext*, const control::SetReplicationStallRequest* request,
    control::SetReplicationStallResponse*) {
  if (Status s = RequireCluster(request->cluster_id(), "cluster_id"); !s.ok()) {
    return ToGrpc(s);
  }
  return ToGrpc(Apply(request->instance(), {request->cluster_id()},
                      [&](ServedInstance& served, const Zones&) {
                        return served.instance->replicas().SetStalled(
                            request->cluster_id(), request->stalled());
                      }));
}

grpc::Status ControlService::SetClockSkew(
    grpc::ServerContext*, const control::SetClockSkewRequest* request,
    control::SetClockSkewResponse*) {
  if (Status s = RequireCluster(request->cluster_id(), "cluster_id"); !s.ok()) {
    return ToGrpc(s);
  }
  // The range is the Replicas' to check (kMaxClockOffset).
  const google::protobuf::Duration& d = request->offset();
  if ((d.seconds() < 0 && d.nanos() > 0) ||
      (d.seconds() > 0 && d.nanos() < 0) || d.nanos() <= -1'000'000'000 ||
      d.nanos() >= 1'000'000'000 || std::abs(d.seconds()) > 24 * 3600) {
    return ToGrpc(InvalidArgument("offset: not a valid duration"));
  }
  const sim::Duration offset =
      std::chrono::seconds(d.seconds()) + sim::Duration(d.nanos());
  return ToGrpc(Apply(request->instance(), {request->cluster_id()},
                      [&](ServedInstance& served, const Zones&) {
                        return served.instance->replicas().SetClockOffset(
                            request->cluster_id(), offset);
                      }));
}

grpc::Status ControlService::StartScenario(grpc::ServerContext*,
                                           const control::StartScenarioRequest*,
                                           control::StartScenarioResponse*) {
  if (scenario_ == nullptr) {
    return ToGrpc(FailedPrecondition(
        "this server plays no scenario (start it with --scenario FILE)"));
  }
  return ToGrpc(scenario_->Start());
}

grpc::Status ControlService::FinishScenario(
    grpc::ServerContext*, const control::FinishScenarioRequest*,
    control::FinishScenarioResponse*) {
  if (scenario_ == nullptr) {
    return ToGrpc(FailedPrecondition(
        "this server plays no scenario (start it with --scenario FILE)"));
  }
  return ToGrpc(scenario_->Finish());
}

grpc::Status ControlService::GetStatus(grpc::ServerContext*,
                                       const control::GetStatusRequest* request,
                                       control::GetStatusResponse* response) {
  auto targets = Targets(request->instance());
  if (!targets.ok()) return ToGrpc(targets.status());
  for (ServedInstance* served : *targets) {
    std::lock_guard<std::mutex> lock(served->mu);
    BaseLatency(*served);
    instance::Instance& instance = *served->instance;
    replication::Replicas& replicas = instance.replicas();
    sim::Transport& transport = instance.transport();
    control::InstanceStatus* out = response->add_instances();
    out->set_name(instance.name());
    const std::vector<instance::ClusterConfig> clusters = instance.Clusters();
    for (const instance::ClusterConfig& c : clusters) {
      control::ClusterStatus* cluster = out->add_clusters();
      cluster->set_id(c.id);
      cluster->set_zone(c.zone);
      cluster->set_down(replicas.IsDown(c.id));
      cluster->set_nodes(c.nodes);
      if (const cluster::NodeModel* model = instance.Nodes(c.id)) {
        cluster->set_storage_type(model->storage() == cluster::StorageType::kHdd
                                      ? control::HDD
                                      : control::SSD);
      }
      cluster->set_cpu_load(instance.CpuLoad(c.id));
      cluster->set_hottest_node_load(instance.HottestNodeLoad(c.id));
      AddFaults(instance, c.id, *cluster);
    }
    for (const instance::ClusterConfig& from : clusters) {
      for (const instance::ClusterConfig& to : clusters) {
        if (from.id == to.id) continue;
        control::LinkStatus* link = out->add_links();
        link->set_from_cluster(from.id);
        link->set_to_cluster(to.id);
        link->set_backlog(replicas.Backlog(from.id, to.id));
        link->set_cut(transport.IsCut(from.zone, to.zone));
        LatencyToProto(Median(transport.LatencyOf(from.zone, to.zone)),
                       link->mutable_latency());
      }
    }
    for (const appprofile::AppProfile& p : instance.profiles().List()) {
      control::ProfileStatus* profile = out->add_profiles();
      profile->set_id(p.id);
      profile->set_routing(Routing(p));
      profile->set_transactional(p.transactional());
    }
  }
  return grpc::Status::OK;
}

}  // namespace btsim::api
