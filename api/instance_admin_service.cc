#include "api/instance_admin_service.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <google/protobuf/timestamp.pb.h>

#include "api/convert.h"
#include "api/resource_names.h"
#include "replication/replicas.h"

namespace btsim::api {

namespace admin = ::google::bigtable::admin::v2;
namespace lro = ::google::longrunning;

namespace {

constexpr std::string_view kProfilePageTokenPrefix =
    "btsim-app-profiles-after:";

// The instances a List call covers: the one `parent` names (created on first
// use, like every instance), or with instance id "-" every instance of the
// project that exists, in name order.
Result<std::vector<ServedInstance*>> InstancesFor(InstanceRegistry& registry,
                                                  const std::string& parent) {
  std::vector<ServedInstance*> out;
  if (LastSegment(parent) != kAllInstances) {
    BTSIM_ASSIGN_OR_RETURN(ServedInstance * served,
                           registry.GetOrCreate(parent));
    out.push_back(served);
    return out;
  }
  const std::string prefix = "projects/" + ProjectOf(parent) + "/instances/";
  std::vector<std::pair<std::string, ServedInstance*>> named;
  for (ServedInstance* served : registry.All()) {
    std::lock_guard<std::mutex> lock(served->mu);
    const std::string& name = served->instance->name();
    if (name.rfind(prefix, 0) == 0) named.emplace_back(name, served);
  }
  std::sort(named.begin(), named.end());
  for (auto& [name, served] : named) out.push_back(served);
  return out;
}

// ---------------------------------------------------------------- messages

void FillInstance(const std::string& name, admin::Instance* out) {
  out->set_name(name);
  out->set_display_name(std::string(LastSegment(name)));
  out->set_state(admin::Instance::READY);
  out->set_type(admin::Instance::PRODUCTION);
}

// Caller holds the instance lock.
void FillCluster(instance::Instance& instance,
                 const instance::ClusterConfig& cluster, admin::Cluster* out) {
  out->set_name(instance.name() + "/clusters/" + cluster.id);
  out->set_location("projects/" + ProjectOf(instance.name()) + "/locations/" +
                    cluster.zone);
  out->set_state(instance.replicas().IsDown(cluster.id)
                     ? admin::Cluster::DISABLED
                     : admin::Cluster::READY);
  out->set_serve_nodes(cluster.nodes);
  out->set_node_scaling_factor(admin::Cluster::NODE_SCALING_FACTOR_1X);
  out->set_default_storage_type(admin::SSD);
}

Result<instance::ClusterConfig> FindCluster(instance::Instance& instance,
                                            std::string_view id) {
  for (const instance::ClusterConfig& c : instance.Clusters()) {
    if (c.id == id) return c;
  }
  return NotFound("cluster '" + std::string(id) + "' not found in instance " +
                  instance.name());
}

bool WantsAutoscaling(const admin::Cluster& cluster) {
  return cluster.has_cluster_config() &&
         cluster.cluster_config().has_cluster_autoscaling_config();
}

Status NoAutoscaling(const admin::Cluster& cluster, const std::string& field) {
  if (WantsAutoscaling(cluster)) {
    return Unimplemented(field +
                         "cluster_config.cluster_autoscaling_config: "
                         "autoscaling is not supported by btsim; set "
                         "serve_nodes instead");
  }
  return OkStatus();
}

Status ValidNodes(int32_t nodes, const std::string& field) {
  if (nodes < 1) {
    return InvalidArgument(field + ": a cluster needs at least one node, got " +
                           std::to_string(nodes));
  }
  return OkStatus();
}

Result<appprofile::Priority> PriorityFromProto(admin::AppProfile::Priority p,
                                               const std::string& field) {
  switch (p) {
    case admin::AppProfile::PRIORITY_UNSPECIFIED:
      return appprofile::Priority::kUnspecified;
    case admin::AppProfile::PRIORITY_LOW:
      return appprofile::Priority::kLow;
    case admin::AppProfile::PRIORITY_MEDIUM:
      return appprofile::Priority::kMedium;
    case admin::AppProfile::PRIORITY_HIGH:
      return appprofile::Priority::kHigh;
    default:
      return InvalidArgument(field + ": unknown priority " +
                             std::to_string(static_cast<int>(p)));
  }
}

admin::AppProfile::Priority PriorityToProto(appprofile::Priority p) {
  switch (p) {
    case appprofile::Priority::kLow:
      return admin::AppProfile::PRIORITY_LOW;
    case appprofile::Priority::kMedium:
      return admin::AppProfile::PRIORITY_MEDIUM;
    case appprofile::Priority::kUnspecified:  // unset means HIGH
    case appprofile::Priority::kHigh:
      break;
  }
  return admin::AppProfile::PRIORITY_HIGH;
}

// Reads the routing policy of `proto` (at path `field`) into `out`.
Status RoutingFromProto(const admin::AppProfile& proto,
                        const std::string& field, appprofile::AppProfile* out) {
  using Routing = appprofile::AppProfile::Routing;
  switch (proto.routing_policy_case()) {
    case admin::AppProfile::kMultiClusterRoutingUseAny: {
      const auto& multi = proto.multi_cluster_routing_use_any();
      out->routing = Routing::kMultiCluster;
      out->cluster_ids.assign(multi.cluster_ids().begin(),
                              multi.cluster_ids().end());
      out->row_affinity = multi.has_row_affinity();
      out->cluster_id.clear();
      out->allow_transactional_writes = false;
      return OkStatus();
    }
    case admin::AppProfile::kSingleClusterRouting: {
      const auto& single = proto.single_cluster_routing();
      out->routing = Routing::kSingleCluster;
      out->cluster_id = single.cluster_id();
      out->allow_transactional_writes = single.allow_transactional_writes();
      out->cluster_ids.clear();
      out->row_affinity = false;
      return OkStatus();
    }
    case admin::AppProfile::ROUTING_POLICY_NOT_SET:
      break;
  }
  return InvalidArgument(field +
                         ".routing_policy: an app profile needs a routing "
                         "policy (multi_cluster_routing_use_any or "
                         "single_cluster_routing)");
}

// Reads the isolation of `proto` (at path `field`) into `out`.
Status IsolationFromProto(const admin::AppProfile& proto,
                          const std::string& field,
                          appprofile::AppProfile* out) {
  switch (proto.isolation_case()) {
    case admin::AppProfile::kPriority: {
      BTSIM_ASSIGN_OR_RETURN(
          out->priority,
          PriorityFromProto(proto.priority(), field + ".priority"));
      return OkStatus();
    }
    case admin::AppProfile::kStandardIsolation: {
      BTSIM_ASSIGN_OR_RETURN(
          out->priority,
          PriorityFromProto(proto.standard_isolation().priority(),
                            field + ".standard_isolation.priority"));
      return OkStatus();
    }
    case admin::AppProfile::kDataBoostIsolationReadOnly:
      return Unimplemented(field +
                           ".data_boost_isolation_read_only: Data Boost "
                           "isolation is not supported by btsim");
    case admin::AppProfile::ISOLATION_NOT_SET:
      break;
  }
  out->priority = appprofile::Priority::kUnspecified;
  return OkStatus();
}

void FillAppProfile(const std::string& instance_name,
                    const appprofile::AppProfile& p, admin::AppProfile* out) {
  out->set_name(instance_name + "/appProfiles/" + p.id);
  out->set_etag(p.etag);
  out->set_description(p.description);
  if (p.routing == appprofile::AppProfile::Routing::kSingleCluster) {
    auto* single = out->mutable_single_cluster_routing();
    single->set_cluster_id(p.cluster_id);
    single->set_allow_transactional_writes(p.allow_transactional_writes);
  } else {
    auto* multi = out->mutable_multi_cluster_routing_use_any();
    for (const std::string& id : p.cluster_ids) multi->add_cluster_ids(id);
    if (p.row_affinity) multi->mutable_row_affinity();
  }
  out->mutable_standard_isolation()->set_priority(PriorityToProto(p.priority));
}

Status EmptyMask(const google::protobuf::FieldMask& mask) {
  if (mask.paths_size() == 0) {
    return InvalidArgument("update_mask: must name at least one field");
  }
  return OkStatus();
}

}  // namespace

// ----------------------------------------------------------------- instances

grpc::Status InstanceAdminService::CreateInstance(
    grpc::ServerContext*, const admin::CreateInstanceRequest* request,
    lro::Operation* response) {
  auto project = ParseProjectName(request->parent(), "parent");
  if (!project.ok()) return ToGrpc(project.status());
  if (Status s = ValidateInstanceId(request->instance_id(), "instance_id");
      !s.ok()) {
    return ToGrpc(s);
  }
  // Instances are implicit in btsim (any name a request uses exists), and
  // every instance gets the clusters of the server's configuration
  // (`btsim serve --clusters`). The requested clusters are therefore
  // ignored, but the request must still be well formed: at least one.
  if (request->clusters().empty()) {
    return ToGrpc(
        InvalidArgument("clusters: an instance needs at least one cluster"));
  }
  const std::string name =
      "projects/" + *project + "/instances/" + request->instance_id();
  {
    std::lock_guard<std::mutex> lock(create_instance_mu_);
    for (ServedInstance* served : registry_.All()) {
      std::lock_guard<std::mutex> instance_lock(served->mu);
      if (served->instance->name() == name) {
        return ToGrpc(AlreadyExists("instance " + name + " already exists"));
      }
    }
    auto served = registry_.GetOrCreate(name);
    if (!served.ok()) return ToGrpc(served.status());
  }
  admin::Instance instance;
  FillInstance(name, &instance);
  admin::CreateInstanceMetadata metadata;
  *metadata.mutable_original_request() = *request;
  *metadata.mutable_request_time() = OperationTime();
  *metadata.mutable_finish_time() = OperationTime();
  *response = operations_.Finish(name, instance, &metadata);
  return grpc::Status::OK;
}

grpc::Status InstanceAdminService::GetInstance(
    grpc::ServerContext*, const admin::GetInstanceRequest* request,
    admin::Instance* response) {
  auto name = ParseInstanceName(request->name(), "name");
  if (!name.ok()) return ToGrpc(name.status());
  auto served = registry_.GetOrCreate(*name);
  if (!served.ok()) return ToGrpc(served.status());
  FillInstance(*name, response);
  return grpc::Status::OK;
}

grpc::Status InstanceAdminService::ListInstances(
    grpc::ServerContext*, const admin::ListInstancesRequest* request,
    admin::ListInstancesResponse* response) {
  auto project = ParseProjectName(request->parent(), "parent");
  if (!project.ok()) return ToGrpc(project.status());
  auto instances =
      InstancesFor(registry_, "projects/" + *project + "/instances/-");
  if (!instances.ok()) return ToGrpc(instances.status());
  for (ServedInstance* served : *instances) {
    std::lock_guard<std::mutex> lock(served->mu);
    FillInstance(served->instance->name(), response->add_instances());
  }
  return grpc::Status::OK;
}

grpc::Status InstanceAdminService::DeleteInstance(
    grpc::ServerContext*, const admin::DeleteInstanceRequest* request,
    google::protobuf::Empty*) {
  auto name = ParseInstanceName(request->name(), "name");
  if (!name.ok()) return ToGrpc(name.status());
  return ToGrpc(Unimplemented(
      "DeleteInstance is not supported by btsim: instances exist for the "
      "lifetime of the server"));
}

// ------------------------------------------------------------------ clusters

grpc::Status InstanceAdminService::CreateCluster(
    grpc::ServerContext*, const admin::CreateClusterRequest* request,
    lro::Operation* response) {
  const google::protobuf::Timestamp request_time = OperationTime();
  auto parent = ParseInstanceName(request->parent(), "parent");
  if (!parent.ok()) return ToGrpc(parent.status());
  const admin::Cluster& cluster = request->cluster();
  // Checked before the instance is created on first use.
  if (!replication::IsValidClusterId(request->cluster_id())) {
    return ToGrpc(InvalidArgument(
        "cluster_id: " + QuoteForError(request->cluster_id()) +
        " is not a valid cluster id; it must match [a-z][-a-z0-9]* and be "
        "at most 30 characters"));
  }
  auto zone = ParseLocation(cluster.location(), "cluster.location");
  if (!zone.ok()) return ToGrpc(zone.status());
  if (Status s = NoAutoscaling(cluster, "cluster."); !s.ok()) return ToGrpc(s);
  if (Status s = ValidNodes(cluster.serve_nodes(), "cluster.serve_nodes");
      !s.ok()) {
    return ToGrpc(s);
  }
  switch (cluster.default_storage_type()) {
    case admin::STORAGE_TYPE_UNSPECIFIED:
    case admin::SSD:
      break;
    case admin::HDD:
      return ToGrpc(InvalidArgument(
          "cluster.default_storage_type: every cluster of an instance has "
          "the same storage type, and btsim instances use SSD"));
    default:
      return ToGrpc(InvalidArgument(
          "cluster.default_storage_type: unknown storage type " +
          std::to_string(static_cast<int>(cluster.default_storage_type()))));
  }
  auto served = registry_.GetOrCreate(*parent);
  if (!served.ok()) return ToGrpc(served.status());
  admin::Cluster created;
  admin::CreateClusterMetadata metadata;
  {
    std::lock_guard<std::mutex> lock((*served)->mu);
    instance::Instance& instance = *(*served)->instance;
    // Validates the id, the zone (one cluster per zone) and the limit of
    // four clusters, and seeds the new cluster with a copy of the data.
    Status s = instance.AddCluster(instance::ClusterConfig{
        request->cluster_id(), *zone, cluster.serve_nodes()});
    if (!s.ok()) return ToGrpc(s);
    auto config = FindCluster(instance, request->cluster_id());
    if (!config.ok()) return ToGrpc(config.status());
    FillCluster(instance, *config, &created);
    if (cluster::Cluster* c = instance.replicas().Find(request->cluster_id());
        c != nullptr) {
      for (const std::string& table : c->ListTables()) {
        auto& progress =
            (*metadata.mutable_tables())[instance.name() + "/tables/" + table];
        progress.set_state(
            admin::CreateClusterMetadata::TableProgress::COMPLETED);
      }
    }
  }
  *metadata.mutable_original_request() = *request;
  *metadata.mutable_request_time() = request_time;
  *metadata.mutable_finish_time() = OperationTime();
  *response = operations_.Finish(created.name() + "/locations/" + *zone,
                                 created, &metadata);
  return grpc::Status::OK;
}

grpc::Status InstanceAdminService::GetCluster(
    grpc::ServerContext*, const admin::GetClusterRequest* request,
    admin::Cluster* response) {
  auto name = ParseClusterName(request->name(), "name");
  if (!name.ok()) return ToGrpc(name.status());
  auto instance_name = ParseInstanceName(name->instance, "name");
  if (!instance_name.ok()) return ToGrpc(instance_name.status());
  auto locked = registry_.Lock(name->instance);
  if (!locked.ok()) return ToGrpc(locked.status());
  instance::Instance& instance = *locked->instance;
  auto config = FindCluster(instance, name->id);
  if (!config.ok()) return ToGrpc(config.status());
  FillCluster(instance, *config, response);
  return grpc::Status::OK;
}

grpc::Status InstanceAdminService::ListClusters(
    grpc::ServerContext*, const admin::ListClustersRequest* request,
    admin::ListClustersResponse* response) {
  auto parent = ParseInstanceNameOrAll(request->parent(), "parent");
  if (!parent.ok()) return ToGrpc(parent.status());
  auto instances = InstancesFor(registry_, *parent);
  if (!instances.ok()) return ToGrpc(instances.status());
  for (ServedInstance* served : *instances) {
    std::lock_guard<std::mutex> lock(served->mu);
    instance::Instance& instance = *served->instance;
    for (const instance::ClusterConfig& c : instance.Clusters()) {
      FillCluster(instance, c, response->add_clusters());
    }
  }
  return grpc::Status::OK;
}

namespace {

// A cluster after an update: its resource and its zone.
struct UpdatedCluster {
  admin::Cluster cluster;
  std::string zone;
};

// Sets the node count of cluster `name` (when `nodes` is given) under the
// instance lock. A non-empty `required_zone` must be the cluster's zone,
// which never changes.
Result<UpdatedCluster> ResizeCluster(InstanceRegistry& registry,
                                     const ChildName& name,
                                     std::optional<int> nodes,
                                     std::string_view required_zone) {
  BTSIM_ASSIGN_OR_RETURN(auto locked, registry.Lock(name.instance));
  instance::Instance& instance = *locked.instance;
  BTSIM_ASSIGN_OR_RETURN(instance::ClusterConfig config,
                         FindCluster(instance, name.id));
  if (!required_zone.empty() && required_zone != config.zone) {
    return InvalidArgument("location: cluster '" + name.id + "' is in zone " +
                           config.zone + "; a cluster's zone cannot change");
  }
  if (nodes) {
    BTSIM_RETURN_IF_ERROR(instance.SetNodes(name.id, *nodes));
    BTSIM_ASSIGN_OR_RETURN(config, FindCluster(instance, name.id));
  }
  UpdatedCluster out;
  FillCluster(instance, config, &out.cluster);
  out.zone = config.zone;
  return out;
}

// The done operation of a cluster update, with its metadata.
template <typename Metadata, typename Request>
lro::Operation FinishClusterUpdate(
    OperationsService& operations, const Request& request,
    const google::protobuf::Timestamp& request_time,
    const UpdatedCluster& updated) {
  Metadata metadata;
  *metadata.mutable_original_request() = request;
  *metadata.mutable_request_time() = request_time;
  *metadata.mutable_finish_time() = OperationTime();
  return operations.Finish(
      updated.cluster.name() + "/locations/" + updated.zone, updated.cluster,
      &metadata);
}

}  // namespace

grpc::Status InstanceAdminService::UpdateCluster(grpc::ServerContext*,
                                                 const admin::Cluster* request,
                                                 lro::Operation* response) {
  const google::protobuf::Timestamp request_time = OperationTime();
  auto name = ParseClusterName(request->name(), "name");
  if (!name.ok()) return ToGrpc(name.status());
  auto instance_name = ParseInstanceName(name->instance, "name");
  if (!instance_name.ok()) return ToGrpc(instance_name.status());
  if (Status s = NoAutoscaling(*request, ""); !s.ok()) return ToGrpc(s);
  if (Status s = ValidNodes(request->serve_nodes(), "serve_nodes"); !s.ok()) {
    return ToGrpc(s);
  }
  std::string zone;
  if (!request->location().empty()) {
    auto parsed = ParseLocation(request->location(), "location");
    if (!parsed.ok()) return ToGrpc(parsed.status());
    zone = std::move(parsed).value();
  }
  auto resized = ResizeCluster(registry_, *name, request->serve_nodes(), zone);
  if (!resized.ok()) return ToGrpc(resized.status());
  *response = FinishClusterUpdate<admin::UpdateClusterMetadata>(
      operations_, *request, request_time, *resized);
  return grpc::Status::OK;
}

grpc::Status InstanceAdminService::PartialUpdateCluster(
    grpc::ServerContext*, const admin::PartialUpdateClusterRequest* request,
    lro::Operation* response) {
  const google::protobuf::Timestamp request_time = OperationTime();
  const admin::Cluster& cluster = request->cluster();
  auto name = ParseClusterName(cluster.name(), "cluster.name");
  if (!name.ok()) return ToGrpc(name.status());
  auto instance_name = ParseInstanceName(name->instance, "cluster.name");
  if (!instance_name.ok()) return ToGrpc(instance_name.status());
  if (Status s = EmptyMask(request->update_mask()); !s.ok()) return ToGrpc(s);
  bool set_nodes = false;
  for (const std::string& path : request->update_mask().paths()) {
    if (path == "serve_nodes") {
      if (Status s = ValidNodes(cluster.serve_nodes(), "cluster.serve_nodes");
          !s.ok()) {
        return ToGrpc(s);
      }
      set_nodes = true;
    } else if (path == "cluster_config.cluster_autoscaling_config" ||
               path == "cluster_config") {
      // Clients clear autoscaling together with setting serve_nodes (cbt
      // updatecluster sends both paths with no autoscaling config). btsim
      // clusters are never autoscaled, so clearing it changes nothing;
      // enabling it is not supported.
      if (Status s = NoAutoscaling(cluster, "cluster."); !s.ok()) {
        return ToGrpc(s);
      }
    } else {
      return ToGrpc(
          InvalidArgument("update_mask: unsupported path '" + path +
                          "'; btsim can update serve_nodes (and clear "
                          "cluster_config.cluster_autoscaling_config)"));
    }
  }
  auto resized = ResizeCluster(
      registry_, *name,
      set_nodes ? std::optional<int>(cluster.serve_nodes()) : std::nullopt, "");
  if (!resized.ok()) return ToGrpc(resized.status());
  *response = FinishClusterUpdate<admin::PartialUpdateClusterMetadata>(
      operations_, *request, request_time, *resized);
  return grpc::Status::OK;
}

grpc::Status InstanceAdminService::DeleteCluster(
    grpc::ServerContext*, const admin::DeleteClusterRequest* request,
    google::protobuf::Empty*) {
  auto name = ParseClusterName(request->name(), "name");
  if (!name.ok()) return ToGrpc(name.status());
  auto instance_name = ParseInstanceName(name->instance, "name");
  if (!instance_name.ok()) return ToGrpc(instance_name.status());
  auto locked = registry_.Lock(name->instance);
  if (!locked.ok()) return ToGrpc(locked.status());
  return ToGrpc(locked->instance->RemoveCluster(name->id));
}

// -------------------------------------------------------------- app profiles

grpc::Status InstanceAdminService::CreateAppProfile(
    grpc::ServerContext*, const admin::CreateAppProfileRequest* request,
    admin::AppProfile* response) {
  auto parent = ParseInstanceName(request->parent(), "parent");
  if (!parent.ok()) return ToGrpc(parent.status());
  if (Status s = appprofile::ValidateProfileId(request->app_profile_id());
      !s.ok()) {
    return ToGrpc(s);
  }
  appprofile::AppProfile profile;
  profile.id = request->app_profile_id();
  profile.description = request->app_profile().description();
  if (Status s =
          RoutingFromProto(request->app_profile(), "app_profile", &profile);
      !s.ok()) {
    return ToGrpc(s);
  }
  if (Status s =
          IsolationFromProto(request->app_profile(), "app_profile", &profile);
      !s.ok()) {
    return ToGrpc(s);
  }
  auto locked = registry_.Lock(*parent);
  if (!locked.ok()) return ToGrpc(locked.status());
  instance::Instance& instance = *locked->instance;
  auto created = instance.profiles().Create(std::move(profile),
                                            request->ignore_warnings());
  if (!created.ok()) return ToGrpc(created.status());
  FillAppProfile(instance.name(), *created, response);
  return grpc::Status::OK;
}

grpc::Status InstanceAdminService::GetAppProfile(
    grpc::ServerContext*, const admin::GetAppProfileRequest* request,
    admin::AppProfile* response) {
  auto name = ParseAppProfileName(request->name(), "name");
  if (!name.ok()) return ToGrpc(name.status());
  auto instance_name = ParseInstanceName(name->instance, "name");
  if (!instance_name.ok()) return ToGrpc(instance_name.status());
  auto locked = registry_.Lock(name->instance);
  if (!locked.ok()) return ToGrpc(locked.status());
  instance::Instance& instance = *locked->instance;
  auto profile = instance.profiles().Get(name->id);
  if (!profile.ok()) return ToGrpc(profile.status());
  FillAppProfile(instance.name(), *profile, response);
  return grpc::Status::OK;
}

grpc::Status InstanceAdminService::ListAppProfiles(
    grpc::ServerContext*, const admin::ListAppProfilesRequest* request,
    admin::ListAppProfilesResponse* response) {
  auto parent = ParseInstanceNameOrAll(request->parent(), "parent");
  if (!parent.ok()) return ToGrpc(parent.status());
  if (request->page_size() < 0) {
    return ToGrpc(InvalidArgument("page_size: must not be negative, got " +
                                  std::to_string(request->page_size())));
  }
  // A page token is kProfilePageTokenPrefix + the full name of the last
  // profile returned. Within an instance, name order is id order.
  std::string after;
  if (!request->page_token().empty()) {
    if (request->page_token().rfind(kProfilePageTokenPrefix, 0) != 0) {
      return ToGrpc(InvalidArgument(
          "page_token: not a token returned by ListAppProfiles"));
    }
    after = request->page_token().substr(kProfilePageTokenPrefix.size());
  }
  auto instances = InstancesFor(registry_, *parent);
  if (!instances.ok()) return ToGrpc(instances.status());
  std::vector<admin::AppProfile> all;
  for (ServedInstance* served : *instances) {
    std::lock_guard<std::mutex> lock(served->mu);
    instance::Instance& instance = *served->instance;
    for (const appprofile::AppProfile& p : instance.profiles().List()) {
      FillAppProfile(instance.name(), p, &all.emplace_back());
    }
  }
  std::sort(all.begin(), all.end(),
            [](const admin::AppProfile& a, const admin::AppProfile& b) {
              return a.name() < b.name();
            });
  int count = 0;
  for (admin::AppProfile& p : all) {
    if (!after.empty() && p.name() <= after) continue;
    if (request->page_size() > 0 && count == request->page_size()) {
      response->set_next_page_token(std::string(kProfilePageTokenPrefix) +
                                    response->app_profiles(count - 1).name());
      break;
    }
    *response->add_app_profiles() = std::move(p);
    ++count;
  }
  return grpc::Status::OK;
}

grpc::Status InstanceAdminService::UpdateAppProfile(
    grpc::ServerContext*, const admin::UpdateAppProfileRequest* request,
    lro::Operation* response) {
  const admin::AppProfile& proto = request->app_profile();
  auto name = ParseAppProfileName(proto.name(), "app_profile.name");
  if (!name.ok()) return ToGrpc(name.status());
  auto instance_name = ParseInstanceName(name->instance, "app_profile.name");
  if (!instance_name.ok()) return ToGrpc(instance_name.status());
  if (Status s = EmptyMask(request->update_mask()); !s.ok()) return ToGrpc(s);
  appprofile::ProfileUpdate update;
  update.profile.id = name->id;
  update.etag = proto.etag();
  for (const std::string& path : request->update_mask().paths()) {
    if (path == "description") {
      update.description = true;
      update.profile.description = proto.description();
    } else if (path == "multi_cluster_routing_use_any" ||
               path == "single_cluster_routing") {
      update.routing = true;
    } else if (path == "priority" || path == "standard_isolation" ||
               path == "standard_isolation.priority") {
      update.priority = true;
    } else if (path == "data_boost_isolation_read_only") {
      return ToGrpc(
          Unimplemented("update_mask: data_boost_isolation_read_only: Data "
                        "Boost isolation is not supported by btsim"));
    } else {
      return ToGrpc(InvalidArgument(
          "update_mask: unsupported path '" + path +
          "'; btsim can update description, multi_cluster_routing_use_any, "
          "single_cluster_routing, priority and standard_isolation"));
    }
  }
  if (update.routing) {
    if (Status s = RoutingFromProto(proto, "app_profile", &update.profile);
        !s.ok()) {
      return ToGrpc(s);
    }
  }
  if (update.priority) {
    if (Status s = IsolationFromProto(proto, "app_profile", &update.profile);
        !s.ok()) {
      return ToGrpc(s);
    }
  }
  auto served = registry_.GetOrCreate(name->instance);
  if (!served.ok()) return ToGrpc(served.status());
  admin::AppProfile updated;
  {
    std::lock_guard<std::mutex> lock((*served)->mu);
    instance::Instance& instance = *(*served)->instance;
    auto result =
        instance.profiles().Update(update, request->ignore_warnings());
    if (!result.ok()) return ToGrpc(result.status());
    FillAppProfile(instance.name(), *result, &updated);
  }
  admin::UpdateAppProfileMetadata metadata;
  *response = operations_.Finish(updated.name(), updated, &metadata);
  return grpc::Status::OK;
}

grpc::Status InstanceAdminService::DeleteAppProfile(
    grpc::ServerContext*, const admin::DeleteAppProfileRequest* request,
    google::protobuf::Empty*) {
  auto name = ParseAppProfileName(request->name(), "name");
  if (!name.ok()) return ToGrpc(name.status());
  auto instance_name = ParseInstanceName(name->instance, "name");
  if (!instance_name.ok()) return ToGrpc(instance_name.status());
  auto locked = registry_.Lock(name->instance);
  if (!locked.ok()) return ToGrpc(locked.status());
  return ToGrpc(locked->instance->profiles().Delete(
      name->id, request->ignore_warnings()));
}

}  // namespace btsim::api
