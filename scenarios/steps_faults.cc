// Faults: what happens to the instance rather than what an operator does
// (cluster_down, cluster_up, partition, heal, latency, node_failure), and
// their repair when the run settles (UndoFaults).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/check.h"
#include "scenarios/instance_config.h"
#include "scenarios/scenario_fields.h"
#include "scenarios/steps.h"

namespace btsim::scenarios {
namespace {

namespace v1 = ::btsim::scenario::v1;
namespace cfg = ::btsim::config::v1;

constexpr sim::Duration kDefaultNodeRecovery = std::chrono::minutes(5);

// The zone of cluster `id` now; NOT_FOUND when the instance has no such
// cluster (one whose add_cluster was refused, say).
Result<std::string> ZoneNow(const StepRun& run, const std::string& id) {
  const std::string_view zone = run.context->ZoneOf(id);
  if (zone.empty()) return NotFound("cluster '" + id + "' not found");
  return std::string(zone);
}

// Both zones of a link, or the first NOT_FOUND.
Result<std::pair<std::string, std::string>> ZonesNow(const StepRun& run,
                                                     const std::string& a,
                                                     const std::string& b) {
  BTSIM_ASSIGN_OR_RETURN(std::string za, ZoneNow(run, a));
  BTSIM_ASSIGN_OR_RETURN(std::string zb, ZoneNow(run, b));
  return std::make_pair(std::move(za), std::move(zb));
}

// ---- cluster_down, cluster_up ----

Status ValidateClusterDown(const v1::Step& step, const std::string& field,
                           StepScope& scope) {
  return scope.ClusterNow(step.cluster_down().cluster(),
                          field + ".cluster_down.cluster");
}

void ApplyClusterDown(const v1::Step& step, Event event, StepRun& run) {
  instance::Instance& instance = *run.context->instance;
  const bool blackhole =
      step.cluster_down().mode() == v1::ClusterDown::BLACKHOLE;
  event.kind = EventKind::kClusterDown;
  event.cluster = step.cluster_down().cluster();
  Describe(event, "cluster " + event.cluster +
                      (blackhole ? " down (black-holed)" : " down"));
  event.unreplicated_ops = run.Unreplicated(event.cluster);
  if (Status s = instance.SetDown(event.cluster, true,
                                  blackhole ? instance::DownMode::kBlackhole
                                            : instance::DownMode::kRefuse);
      !s.ok()) {
    Refused(event, s);
  }
  run.WatchCatchUp(run.AddEvent(std::move(event)));
}

void EndClusterDown(const v1::Step& step, v1::Step* end) {
  end->mutable_cluster_up()->set_cluster(step.cluster_down().cluster());
}

Status ValidateClusterUp(const v1::Step& step, const std::string& field,
                         StepScope& scope) {
  return scope.ClusterNow(step.cluster_up().cluster(),
                          field + ".cluster_up.cluster");
}

void ApplyClusterUp(const v1::Step& step, Event event, StepRun& run) {
  event.kind = EventKind::kClusterUp;
  event.cluster = step.cluster_up().cluster();
  Describe(event, "cluster " + event.cluster + " up");
  if (Status s = run.context->instance->SetDown(event.cluster, false);
      !s.ok()) {
    Refused(event, s);
  }
  run.faults.down_by_node_failure.erase(event.cluster);
  run.WatchCatchUp(run.AddEvent(std::move(event)));
}

// ---- partition, heal ----

Status ValidatePair(const v1::Partition& p, const std::string& field,
                    const StepScope& scope) {
  BTSIM_RETURN_IF_ERROR(scope.ClusterNow(p.a(), field + ".a"));
  BTSIM_RETURN_IF_ERROR(scope.ClusterNow(p.b(), field + ".b"));
  if (p.a() == p.b()) return InvalidArgument(field + ".b: must differ from a");
  return OkStatus();
}

Status ValidatePartition(const v1::Step& step, const std::string& field,
                         StepScope& scope) {
  return ValidatePair(step.partition(), field + ".partition", scope);
}

Status ValidateHeal(const v1::Step& step, const std::string& field,
                    StepScope& scope) {
  return ValidatePair(step.heal(), field + ".heal", scope);
}

void ApplyPartitionOrHeal(const v1::Step& step, Event event, StepRun& run) {
  const bool heal = step.has_heal();
  const v1::Partition& p = heal ? step.heal() : step.partition();
  event.kind = heal ? EventKind::kHeal : EventKind::kPartition;
  event.cluster = p.a();
  event.peer = p.b();
  if (heal) {
    Describe(event, "heal " + p.a() + " <-> " + p.b());
  } else {
    Describe(event,
             "partition " + p.a() + (p.one_way() ? " -> " : " <-> ") + p.b());
  }
  sim::Transport& transport = run.context->instance->transport();
  if (auto zones = ZonesNow(run, p.a(), p.b()); !zones.ok()) {
    Refused(event, zones.status());
  } else if (heal) {
    transport.Heal(zones->first, zones->second);
  } else {
    transport.Partition(zones->first, zones->second, p.one_way());
  }
  run.WatchCatchUp(run.AddEvent(std::move(event)));
}

void EndPartition(const v1::Step& step, v1::Step* end) {
  end->mutable_heal()->set_a(step.partition().a());
  end->mutable_heal()->set_b(step.partition().b());
}

// ---- latency ----

Status ValidateLatency(const v1::Step& step, const std::string& field,
                       StepScope& scope) {
  const cfg::Link& link = step.latency();
  const std::string f = field + ".latency";
  BTSIM_RETURN_IF_ERROR(
      scope.ClusterNow(link.from_cluster(), f + ".from_cluster"));
  BTSIM_RETURN_IF_ERROR(scope.ClusterNow(link.to_cluster(), f + ".to_cluster"));
  if (link.from_cluster() == link.to_cluster()) {
    return InvalidArgument(f + ".to_cluster: must differ from from_cluster");
  }
  if (!link.has_latency()) return InvalidArgument(f + ".latency: required");
  return ConfigLatency(link.latency(), f + ".latency").status();
}

void ApplyLatency(const v1::Step& step, Event event, StepRun& run) {
  const cfg::Link& link = step.latency();
  event.kind = EventKind::kLatency;
  event.cluster = link.from_cluster();
  event.peer = link.to_cluster();
  Describe(event, "latency " + link.from_cluster() +
                      (link.one_way() ? " -> " : " <-> ") + link.to_cluster());
  // The loader has validated the model.
  auto model = ConfigLatency(link.latency(), "latency");
  BTSIM_CHECK_MSG(model.ok(), model.status().message());
  if (auto zones = ZonesNow(run, link.from_cluster(), link.to_cluster());
      !zones.ok()) {
    Refused(event, zones.status());
  } else {
    run.context->instance->transport().SetLatency(zones->first, zones->second,
                                                  *model, link.one_way());
  }
  run.AddEvent(std::move(event));
}

// ---- node_failure ----

Status ValidateNodeFailure(const v1::Step& step, const std::string& field,
                           StepScope& scope) {
  const std::string f = field + ".node_failure";
  BTSIM_RETURN_IF_ERROR(
      scope.ClusterNow(step.node_failure().cluster(), f + ".cluster"));
  return ConfigDuration(step.node_failure().recovery(), f + ".recovery")
      .status();
}

// A replacement for a node of `id` that failed (taking the whole cluster
// down when `whole_cluster`) joins.
void RecoverNode(StepRun& run, const std::string& id, bool whole_cluster) {
  instance::Instance& instance = *run.context->instance;
  Event recovered;
  recovered.at = run.context->Elapsed();
  recovered.kind = EventKind::kNodeRecovery;
  recovered.cluster = id;
  recovered.label = "a replacement node joins " + id;
  Status s;
  if (whole_cluster) {
    if (run.faults.down_by_node_failure.erase(id) != 0) {
      s = instance.SetDown(id, false);
    }
  } else if (run.faults.failed_nodes[id] > 0) {
    --run.faults.failed_nodes[id];
    const cluster::NodeModel* nodes = instance.Nodes(id);
    s = nodes == nullptr ? NotFound("cluster '" + id + "' not found")
                         : instance.SetNodes(id, nodes->nodes() + 1);
  }
  if (!s.ok()) Refused(recovered, s);
  run.AddEvent(std::move(recovered));
}

void ApplyNodeFailure(const v1::Step& step, Event event, StepRun& run) {
  instance::Instance& instance = *run.context->instance;
  const std::string& id = step.node_failure().cluster();
  event.kind = EventKind::kNodeFailure;
  event.cluster = id;
  Describe(event, "a node of " + id + " fails");
  const sim::Duration recovery =
      step.node_failure().has_recovery()
          ? ToDuration(step.node_failure().recovery())
          : kDefaultNodeRecovery;
  const cluster::NodeModel* nodes = instance.Nodes(id);
  const int count = nodes == nullptr ? 1 : nodes->nodes();
  const bool whole_cluster = count <= 1;
  Status s;
  if (whole_cluster) {
    // The only node: the cluster cannot serve until a replacement joins.
    event.unreplicated_ops = run.Unreplicated(id);
    s = instance.SetDown(id, true);
    if (s.ok()) run.faults.down_by_node_failure.insert(id);
  } else {
    s = instance.SetNodes(id, count - 1);
    if (s.ok()) ++run.faults.failed_nodes[id];
  }
  if (!s.ok()) {
    // Nothing failed, so nothing is replaced.
    Refused(event, s);
    run.AddEvent(std::move(event));
    return;
  }
  run.context->scheduler->RunAfter(recovery, [&run, id, whole_cluster] {
    RecoverNode(run, id, whole_cluster);
  });
  const size_t event_index = run.AddEvent(std::move(event));
  if (whole_cluster) run.WatchCatchUp(event_index);
}

constexpr StepKind kKinds[] = {
    {v1::Step::kClusterDown, ValidateClusterDown, ApplyClusterDown,
     EndClusterDown},
    {v1::Step::kClusterUp, ValidateClusterUp, ApplyClusterUp, nullptr},
    {v1::Step::kPartition, ValidatePartition, ApplyPartitionOrHeal,
     EndPartition},
    {v1::Step::kHeal, ValidateHeal, ApplyPartitionOrHeal, nullptr},
    {v1::Step::kLatency, ValidateLatency, ApplyLatency, nullptr},
    {v1::Step::kNodeFailure, ValidateNodeFailure, ApplyNodeFailure, nullptr},
};

}  // namespace

std::span<const StepKind> FaultStepKinds() { return kKinds; }

void UndoFaults(StepRun& run) {
  instance::Instance& instance = *run.context->instance;
  const std::vector<std::string> ids = instance.replicas().ClusterIds();
  for (const std::string& id : ids) {
    // The Replicas' own ids.
    Status s = instance.SetDown(id, false);
    BTSIM_CHECK_MSG(s.ok(), s.message());
    s = instance.replicas().SetStalled(id, false);
    BTSIM_CHECK_MSG(s.ok(), s.message());
    s = instance.replicas().SetClockOffset(id, sim::Duration(0));
    BTSIM_CHECK_MSG(s.ok(), s.message());
  }
  for (auto& [name, group] : run.groups) group.group->clock_offset = {};
  run.faults.down_by_node_failure.clear();
  for (size_t i = 0; i < ids.size(); ++i) {
    for (size_t j = i + 1; j < ids.size(); ++j) {
      instance.transport().Heal(run.context->ZoneOf(ids[i]),
                                run.context->ZoneOf(ids[j]));
    }
  }
  instance.faults().Clear();
  for (auto& [id, failed] : run.faults.failed_nodes) {
    const cluster::NodeModel* nodes = instance.Nodes(id);
    if (failed > 0 && nodes != nullptr) {
      // A cluster the instance has, and more nodes than it has now.
      const Status s = instance.SetNodes(id, nodes->nodes() + failed);
      BTSIM_CHECK_MSG(s.ok(), s.message());
    }
    failed = 0;
  }
}

}  // namespace btsim::scenarios
