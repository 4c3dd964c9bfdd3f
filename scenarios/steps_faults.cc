// Faults: what happens to the instance rather than what an operator does
// (cluster_down, cluster_up, partition, heal, latency, node_failure), and
// their repair when the run settles (UndoFaults).
#include <string>
#include <utility>
#include <vector>

#include "scenarios/instance_config.h"
#include "scenarios/scenario_fields.h"
#include "scenarios/steps.h"

namespace btsim::scenarios {
namespace {

namespace v1 = ::btsim::scenario::v1;
namespace cfg = ::btsim::config::v1;

constexpr sim::Nanos kDefaultNodeRecovery = std::chrono::minutes(5);

// ---- cluster_down, cluster_up ----

Status ValidateClusterDown(const v1::Step& step, const std::string& field,
                           StepScope& scope) {
  return scope.ClusterNow(step.cluster_down().cluster(),
                          field + ".cluster_down.cluster");
}

void ApplyClusterDown(const v1::Step& step, Event event, StepRun& run) {
  event.kind = EventKind::kClusterDown;
  event.cluster = step.cluster_down().cluster();
  Describe(event, "cluster " + event.cluster + " down");
  event.unreplicated_ops = run.Unreplicated(event.cluster);
  (void)run.context->instance->fabric().SetDown(event.cluster, true);
  run.WatchCatchUp(run.AddEvent(std::move(event)));
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
  (void)run.context->instance->fabric().SetDown(event.cluster, false);
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
  const std::string za(run.context->ZoneOf(p.a()));
  const std::string zb(run.context->ZoneOf(p.b()));
  if (heal) {
    run.context->instance->transport().Heal(za, zb);
    Describe(event, "heal " + p.a() + " <-> " + p.b());
  } else {
    run.context->instance->transport().Partition(za, zb, p.one_way());
    Describe(event,
             "partition " + p.a() + (p.one_way() ? " -> " : " <-> ") + p.b());
  }
  run.WatchCatchUp(run.AddEvent(std::move(event)));
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
  auto model = ConfigLatency(link.latency(), "latency");
  if (model.ok()) {
    run.context->instance->transport().SetLatency(
        run.context->ZoneOf(link.from_cluster()),
        run.context->ZoneOf(link.to_cluster()), *model, link.one_way());
  }
  Describe(event, "latency " + link.from_cluster() +
                      (link.one_way() ? " -> " : " <-> ") + link.to_cluster());
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
  if (whole_cluster) {
    if (run.faults.down_by_node_failure.erase(id) != 0) {
      (void)instance.fabric().SetDown(id, false);
    }
  } else if (run.faults.failed_nodes[id] > 0) {
    --run.faults.failed_nodes[id];
    const cluster::NodeModel* nodes = instance.Nodes(id);
    if (nodes != nullptr) (void)instance.SetNodes(id, nodes->nodes() + 1);
  }
  run.AddEvent(std::move(recovered));
}

void ApplyNodeFailure(const v1::Step& step, Event event, StepRun& run) {
  instance::Instance& instance = *run.context->instance;
  const std::string& id = step.node_failure().cluster();
  event.kind = EventKind::kNodeFailure;
  event.cluster = id;
  Describe(event, "a node of " + id + " fails");
  const sim::Nanos recovery = step.node_failure().has_recovery()
                                  ? ToNanos(step.node_failure().recovery())
                                  : kDefaultNodeRecovery;
  const cluster::NodeModel* nodes = instance.Nodes(id);
  const int count = nodes == nullptr ? 1 : nodes->nodes();
  const bool whole_cluster = count <= 1;
  if (whole_cluster) {
    // The only node: the cluster cannot serve until a replacement joins.
    event.unreplicated_ops = run.Unreplicated(id);
    (void)instance.fabric().SetDown(id, true);
    run.faults.down_by_node_failure.insert(id);
  } else {
    (void)instance.SetNodes(id, count - 1);
    ++run.faults.failed_nodes[id];
  }
  run.context->scheduler->RunAfter(recovery, [&run, id, whole_cluster] {
    RecoverNode(run, id, whole_cluster);
  });
  const size_t event_index = run.AddEvent(std::move(event));
  if (whole_cluster) run.WatchCatchUp(event_index);
}

constexpr StepKind kKinds[] = {
    {v1::Step::kClusterDown, ValidateClusterDown, ApplyClusterDown},
    {v1::Step::kClusterUp, ValidateClusterUp, ApplyClusterUp},
    {v1::Step::kPartition, ValidatePartition, ApplyPartitionOrHeal},
    {v1::Step::kHeal, ValidateHeal, ApplyPartitionOrHeal},
    {v1::Step::kLatency, ValidateLatency, ApplyLatency},
    {v1::Step::kNodeFailure, ValidateNodeFailure, ApplyNodeFailure},
};

}  // namespace

std::span<const StepKind> FaultStepKinds() { return kKinds; }

void UndoFaults(StepRun& run) {
  instance::Instance& instance = *run.context->instance;
  const std::vector<std::string> ids = instance.fabric().ClusterIds();
  for (const std::string& id : ids) (void)instance.fabric().SetDown(id, false);
  run.faults.down_by_node_failure.clear();
  for (size_t i = 0; i < ids.size(); ++i) {
    for (size_t j = i + 1; j < ids.size(); ++j) {
      instance.transport().Heal(run.context->ZoneOf(ids[i]),
                                run.context->ZoneOf(ids[j]));
    }
  }
  for (auto& [id, failed] : run.faults.failed_nodes) {
    const cluster::NodeModel* nodes = instance.Nodes(id);
    if (failed > 0 && nodes != nullptr) {
      (void)instance.SetNodes(id, nodes->nodes() + failed);
    }
    failed = 0;
  }
}

}  // namespace btsim::scenarios
