// Instance admin: an operator changes the clusters (resize, add_cluster,
// remove_cluster) or an app profile's routing (update_app_profile).
#include <string>
#include <utility>

#include "appprofile/app_profile.h"
#include "base/check.h"
#include "scenarios/instance_config.h"
#include "scenarios/scenario_fields.h"
#include "scenarios/steps.h"

namespace btsim::scenarios {
namespace {

namespace v1 = ::btsim::scenario::v1;
namespace cfg = ::btsim::config::v1;

constexpr size_t kMaxClusters = 4;

// ---- resize ----

Status ValidateResize(const v1::Step& step, const std::string& field,
                      StepScope& scope) {
  BTSIM_RETURN_IF_ERROR(
      scope.ClusterNow(step.resize().cluster(), field + ".resize.cluster"));
  if (step.resize().nodes() < 1 || step.resize().nodes() > 1000) {
    return InvalidArgument(field + ".resize.nodes: must be in 1..1000");
  }
  return OkStatus();
}

void ApplyResize(const v1::Step& step, Event event, StepRun& run) {
  event.kind = EventKind::kResize;
  event.cluster = step.resize().cluster();
  event.detail = std::to_string(step.resize().nodes());
  Describe(event, "resize " + event.cluster + " to " + event.detail + " nodes");
  if (Status s =
          run.context->instance->SetNodes(event.cluster, step.resize().nodes());
      !s.ok()) {
    Refused(event, s);
  }
  run.AddEvent(std::move(event));
}

// ---- add_cluster, remove_cluster ----

Status ValidateAddCluster(const v1::Step& step, const std::string& field,
                          StepScope& scope) {
  const cfg::Cluster& c = step.add_cluster();
  const std::string f = field + ".add_cluster";
  if (c.id().empty()) return InvalidArgument(f + ".id: required");
  BTSIM_RETURN_IF_ERROR(ConfigClusterId(c.id(), f + ".id"));
  if (scope.clusters_now.count(c.id()) != 0) {
    return InvalidArgument(f + ".id: cluster '" + c.id() +
                           "' already exists at that time");
  }
  if (!ValidZone(c.zone())) {
    return InvalidArgument(f + ".zone: '" + c.zone() +
                           "' is not a zone name such as us-east1-b");
  }
  for (const auto& [id, zone] : scope.zone_of) {
    if (zone == c.zone() && scope.clusters_now.count(id) != 0) {
      return InvalidArgument(f + ".zone: zone " + c.zone() +
                             " already has cluster '" + id + "'");
    }
  }
  if (c.nodes() < 0) return InvalidArgument(f + ".nodes: must not be negative");
  if (scope.clusters_now.size() >= kMaxClusters) {
    return InvalidArgument(f + ": an instance has at most 4 clusters");
  }
  scope.clusters_now.insert(c.id());
  scope.clusters_ever.insert(c.id());
  scope.zone_of[c.id()] = c.zone();
  return OkStatus();
}

void ApplyAddCluster(const v1::Step& step, Event event, StepRun& run) {
  const cfg::Cluster& c = step.add_cluster();
  event.kind = EventKind::kAddCluster;
  event.cluster = c.id();
  Describe(event, "add cluster " + c.id() + " in " + c.zone());
  Status s = run.context->instance->AddCluster(instance::ClusterConfig{
      c.id(), c.zone(), c.nodes() == 0 ? 1 : c.nodes()});
  if (!s.ok()) Refused(event, s);
  run.WatchCatchUp(run.AddEvent(std::move(event)));
}

Status ValidateRemoveCluster(const v1::Step& step, const std::string& field,
                             StepScope& scope) {
  const std::string& id = step.remove_cluster().cluster();
  const std::string f = field + ".remove_cluster.cluster";
  BTSIM_RETURN_IF_ERROR(scope.ClusterNow(id, f));
  if (scope.clusters_now.size() == 1) {
    return InvalidArgument(f + ": cannot remove the last cluster");
  }
  scope.clusters_now.erase(id);
  return OkStatus();
}

void ApplyRemoveCluster(const v1::Step& step, Event event, StepRun& run) {
  event.kind = EventKind::kRemoveCluster;
  event.cluster = step.remove_cluster().cluster();
  Describe(event, "remove cluster " + event.cluster);
  event.unreplicated_ops = run.Unreplicated(event.cluster);
  if (Status s = run.context->instance->RemoveCluster(event.cluster); !s.ok()) {
    Refused(event, s);
  }
  run.AddEvent(std::move(event));
}

// ---- update_app_profile ----

Status ValidateRouting(const cfg::AppProfile& p, const std::string& field,
                       const StepScope& scope) {
  switch (p.routing_case()) {
    case cfg::AppProfile::kSingleCluster:
      return scope.ClusterNow(p.single_cluster().cluster_id(),
                              field + ".single_cluster.cluster_id");
    case cfg::AppProfile::kMultiCluster:
      for (int i = 0; i < p.multi_cluster().cluster_ids_size(); ++i) {
        BTSIM_RETURN_IF_ERROR(
            scope.ClusterNow(p.multi_cluster().cluster_ids(i),
                             Indexed(field + ".multi_cluster.cluster_ids", i)));
      }
      return OkStatus();
    case cfg::AppProfile::ROUTING_NOT_SET:
      return InvalidArgument(field + ": set single_cluster or multi_cluster");
  }
  return OkStatus();
}

Status ValidateUpdateAppProfile(const v1::Step& step, const std::string& field,
                                StepScope& scope) {
  const cfg::AppProfile& p = step.update_app_profile();
  const std::string f = field + ".update_app_profile";
  if (scope.profiles.count(p.id()) == 0) {
    return InvalidArgument(f + ".id: unknown app profile '" + p.id() + "'");
  }
  return ValidateRouting(p, f, scope);
}

void ApplyUpdateAppProfile(const v1::Step& step, Event event, StepRun& run) {
  instance::Instance& instance = *run.context->instance;
  const cfg::AppProfile& p = step.update_app_profile();
  event.kind = EventKind::kUpdateAppProfile;
  event.detail = p.id();
  Describe(event, "update app profile " + p.id());
  // Convert through the instance description's own rules.
  cfg::InstanceConfig probe;
  for (const instance::ClusterConfig& c : instance.Clusters()) {
    cfg::Cluster* added = probe.add_clusters();
    added->set_id(c.id);
    added->set_zone(c.zone);
  }
  cfg::AppProfile* copy = probe.add_app_profiles();
  *copy = p;
  copy->set_id("update");
  auto converted = ConvertInstanceConfig(probe);
  if (!converted.ok()) {
    Refused(event, converted.status());
    run.AddEvent(std::move(event));
    return;
  }
  BTSIM_CHECK(converted->profiles.size() == 1);
  appprofile::ProfileUpdate update;
  update.profile = converted->profiles[0];
  update.profile.id = p.id();
  update.routing = true;
  update.description = !p.description().empty();
  auto updated = instance.profiles().Update(update, /*ignore_warnings=*/true);
  if (!updated.ok()) Refused(event, updated.status());
  run.AddEvent(std::move(event));
}

constexpr StepKind kKinds[] = {
    {v1::Step::kResize, ValidateResize, ApplyResize, nullptr},
    {v1::Step::kAddCluster, ValidateAddCluster, ApplyAddCluster, nullptr},
    {v1::Step::kRemoveCluster, ValidateRemoveCluster, ApplyRemoveCluster,
     nullptr},
    {v1::Step::kUpdateAppProfile, ValidateUpdateAppProfile,
     ApplyUpdateAppProfile, nullptr},
};

}  // namespace

std::span<const StepKind> InstanceStepKinds() { return kKinds; }

}  // namespace btsim::scenarios
