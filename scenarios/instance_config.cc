#include "scenarios/instance_config.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include "btsim/config/v1/instance_config.pb.h"
#include "replication/replicas.h"

namespace btsim::scenarios {
namespace {

namespace pb = ::btsim::config::v1;

// Delays are capped at a day, like the --replication-latency flag.
constexpr int64_t kMaxDurationSeconds = 24 * 3600;

// Records the first syntax error as "NAME:LINE:COLUMN: message" (1-based).
class Collector : public google::protobuf::io::ErrorCollector {
 public:
  explicit Collector(std::string name) : name_(std::move(name)) {}

  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (!first_.empty()) return;
    first_ = name_ + ":" + std::to_string(line + 1) + ":" +
             std::to_string(column + 1) + ": " + message;
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber,
                  const std::string&) override {}

  const std::string& first() const { return first_; }

 private:
  std::string name_;
  std::string first_;
};

std::string Indexed(const std::string& field, size_t i) {
  return field + "[" + std::to_string(i) + "]";
}

Result<sim::Duration> DurationOf(const google::protobuf::Duration& d,
                                 const std::string& field) {
  if (d.seconds() < 0 || d.nanos() < 0) {
    return InvalidArgument(field + ": must not be negative");
  }
  if (d.nanos() > 999'999'999) {
    return InvalidArgument(field + ": nanos must be below 1,000,000,000");
  }
  if (d.seconds() > kMaxDurationSeconds ||
      (d.seconds() == kMaxDurationSeconds && d.nanos() > 0)) {
    return InvalidArgument(field + ": must be at most 24 hours");
  }
  return sim::Duration(std::chrono::seconds(d.seconds())) +
         sim::Duration(d.nanos());
}

// The detector's fields into config->detector*: unset ones keep the
// defaults; negative counts, a rate outside (0, 1] and non-positive
// durations are refused, naming the field.
Status DetectorOf(const pb::Detector& d, instance::InstanceConfig* config) {
  config->detector = d.mode() == pb::Detector::ORACLE
                         ? instance::InstanceConfig::Detector::kOracle
                         : instance::InstanceConfig::Detector::kObserved;
  appprofile::DetectorOptions& o = config->detector_options;
  auto count = [](int32_t value, const std::string& field, int* out) -> Status {
    if (value < 0) return InvalidArgument(field + ": must not be negative");
    if (value > 0) *out = value;
    return OkStatus();
  };
  BTSIM_RETURN_IF_ERROR(count(d.consecutive_failures(),
                              "detector.consecutive_failures",
                              &o.consecutive_failures));
  BTSIM_RETURN_IF_ERROR(
      count(d.min_requests(), "detector.min_requests", &o.min_requests));
  BTSIM_RETURN_IF_ERROR(
      count(d.readmit_after(), "detector.readmit_after", &o.readmit_after));
  if (d.error_rate() != 0) o.error_rate = d.error_rate();
  o.failover_after = d.failover_after();
  auto duration = [](bool has, const google::protobuf::Duration& value,
                     const std::string& field, sim::Duration* out) -> Status {
    if (!has) return OkStatus();
    BTSIM_ASSIGN_OR_RETURN(*out, DurationOf(value, field));
    return OkStatus();
  };
  BTSIM_RETURN_IF_ERROR(
      duration(d.has_window(), d.window(), "detector.window", &o.window));
  BTSIM_RETURN_IF_ERROR(duration(d.has_base_ejection(), d.base_ejection(),
                                 "detector.base_ejection", &o.base_ejection));
  BTSIM_RETURN_IF_ERROR(duration(d.has_max_ejection(), d.max_ejection(),
                                 "detector.max_ejection", &o.max_ejection));
  BTSIM_RETURN_IF_ERROR(duration(d.has_probe_interval(), d.probe_interval(),
                                 "detector.probe_interval", &o.probe_interval));
  BTSIM_RETURN_IF_ERROR(duration(d.has_probe_timeout(), d.probe_timeout(),
                                 "detector.probe_timeout", &o.probe_timeout));
  return o.Validate("detector");
}

Result<sim::LatencyModel> LatencyOf(const pb::Latency& latency,
                                    const std::string& field) {
  using sim::LatencyModel;
  BTSIM_ASSIGN_OR_RETURN(sim::Duration floor,
                         DurationOf(latency.floor(), field + ".floor"));
  LatencyModel model;
  switch (latency.kind_case()) {
    case pb::Latency::kConstant: {
      BTSIM_ASSIGN_OR_RETURN(
          sim::Duration value,
          DurationOf(latency.constant(), field + ".constant"));
      model = LatencyModel::Constant(value);
      break;
    }
    case pb::Latency::kUniform: {
      const std::string f = field + ".uniform";
      BTSIM_ASSIGN_OR_RETURN(sim::Duration min,
                             DurationOf(latency.uniform().min(), f + ".min"));
      BTSIM_ASSIGN_OR_RETURN(sim::Duration max,
                             DurationOf(latency.uniform().max(), f + ".max"));
      if (min > max) {
        return InvalidArgument(f + ": min must not be greater than max");
      }
      model = LatencyModel::Uniform(min, max);
      break;
    }
    case pb::Latency::kNormal: {
      const std::string f = field + ".normal";
      BTSIM_ASSIGN_OR_RETURN(sim::Duration mean,
                             DurationOf(latency.normal().mean(), f + ".mean"));
      BTSIM_ASSIGN_OR_RETURN(
          sim::Duration stddev,
          DurationOf(latency.normal().stddev(), f + ".stddev"));
      model = LatencyModel::Normal(mean, stddev, floor);
      break;
    }
    case pb::Latency::kLogNormal: {
      const std::string f = field + ".log_normal";
      BTSIM_ASSIGN_OR_RETURN(
          sim::Duration median,
          DurationOf(latency.log_normal().median(), f + ".median"));
      const double sigma = latency.log_normal().sigma();
      // Also rejects NaN.
      if (!(sigma >= 0.0 && sigma <= 10.0)) {
        return InvalidArgument(f + ".sigma: must be between 0 and 10");
      }
      model = LatencyModel::LogNormal(median, sigma, floor);
      break;
    }
    case pb::Latency::kExponential: {
      BTSIM_ASSIGN_OR_RETURN(sim::Duration mean,
                             DurationOf(latency.exponential().mean(),
                                        field + ".exponential.mean"));
      model = LatencyModel::Exponential(mean, floor);
      break;
    }
    case pb::Latency::KIND_NOT_SET:
      return InvalidArgument(field +
                             ": set one of constant, uniform, normal, "
                             "log_normal or exponential");
  }
  model.floor = floor;
  return model;
}

Result<LoadedConfig> Convert(const pb::InstanceConfig& proto) {
  LoadedConfig out;
  instance::InstanceConfig& config = out.config;

  // Clusters.
  if (proto.clusters().empty()) {
    return InvalidArgument("clusters: an instance needs at least one cluster");
  }
  if (proto.clusters_size() > static_cast<int>(replication::kMaxClusters)) {
    return InvalidArgument("clusters: an instance has at most " +
                           std::to_string(replication::kMaxClusters) +
                           " clusters");
  }
  std::map<std::string, std::string> zone_of;     // cluster id -> zone
  std::map<std::string, std::string> cluster_in;  // zone -> cluster id
  for (int i = 0; i < proto.clusters_size(); ++i) {
    const pb::Cluster& c = proto.clusters(i);
    const std::string field = Indexed("clusters", i);
    if (c.id().empty()) return InvalidArgument(field + ".id: required");
    BTSIM_RETURN_IF_ERROR(ConfigClusterId(c.id(), field + ".id"));
    if (zone_of.count(c.id()) != 0) {
      return InvalidArgument(field + ".id: duplicate cluster id '" + c.id() +
                             "'");
    }
    if (c.zone().empty()) return InvalidArgument(field + ".zone: required");
    if (auto it = cluster_in.find(c.zone()); it != cluster_in.end()) {
      return InvalidArgument(field + ".zone: zone " + c.zone() +
                             " already has cluster '" + it->second +
                             "'; an instance has at most one cluster per "
                             "zone");
    }
    if (c.nodes() < 0) {
      return InvalidArgument(field + ".nodes: must not be negative");
    }
    zone_of[c.id()] = c.zone();
    cluster_in[c.zone()] = c.id();
    config.clusters.push_back(instance::ClusterConfig{
        c.id(), c.zone(), c.nodes() == 0 ? 1 : c.nodes()});
  }
  auto check_cluster = [&zone_of](const std::string& id,
                                  const std::string& field) -> Status {
    if (id.empty()) return InvalidArgument(field + ": required");
    if (zone_of.count(id) == 0) {
      return InvalidArgument(field + ": unknown cluster '" + id + "'");
    }
    return OkStatus();
  };

  config.client_zone = proto.client_zone();

  switch (proto.storage_type()) {
    case pb::STORAGE_TYPE_UNSPECIFIED:
    case pb::SSD:
      out.storage_type = StorageType::kSsd;
      config.storage = cluster::StorageType::kSsd;
      break;
    case pb::HDD:
      out.storage_type = StorageType::kHdd;
      config.storage = cluster::StorageType::kHdd;
      break;
    default:
      return InvalidArgument("storage_type: unknown value " +
                             std::to_string(proto.storage_type()));
  }

  // Links.
  const pb::Links& links = proto.links();
  if (links.has_same_zone()) {
    BTSIM_ASSIGN_OR_RETURN(config.links.same_zone,
                           LatencyOf(links.same_zone(), "links.same_zone"));
  }
  if (links.has_same_region()) {
    BTSIM_ASSIGN_OR_RETURN(config.links.same_region,
                           LatencyOf(links.same_region(), "links.same_region"));
  }
  if (links.has_cross_region()) {
    BTSIM_ASSIGN_OR_RETURN(
        config.links.cross_region,
        LatencyOf(links.cross_region(), "links.cross_region"));
  }
  if (links.has_replication_latency()) {
    BTSIM_ASSIGN_OR_RETURN(
        config.replication_latency,
        DurationOf(links.replication_latency(), "links.replication_latency"));
    for (int i = 0; i < links.overrides_size(); ++i) {
      if (links.overrides(i).has_latency()) {
        return InvalidArgument(Indexed("links.overrides", i) +
                               ".latency: cannot be combined with "
                               "links.replication_latency");
      }
    }
  }
  if (links.bandwidth_bytes_per_second() < 0) {
    return InvalidArgument(
        "links.bandwidth_bytes_per_second: must not be negative");
  }
  config.replication_bandwidth = links.bandwidth_bytes_per_second();
  for (int i = 0; i < links.overrides_size(); ++i) {
    const pb::Link& link = links.overrides(i);
    const std::string field = Indexed("links.overrides", i);
    if (Status s = check_cluster(link.from_cluster(), field + ".from_cluster");
        !s.ok()) {
      return s;
    }
    if (Status s = check_cluster(link.to_cluster(), field + ".to_cluster");
        !s.ok()) {
      return s;
    }
    if (link.from_cluster() == link.to_cluster()) {
      return InvalidArgument(field +
                             ".to_cluster: must differ from from_cluster");
    }
    if (link.bandwidth_bytes_per_second() < 0) {
      return InvalidArgument(field +
                             ".bandwidth_bytes_per_second: must not be "
                             "negative");
    }
    if (!link.has_latency() && link.bandwidth_bytes_per_second() == 0) {
      return InvalidArgument(
          field +
          ".latency: required (unless bandwidth_bytes_per_second is "
          "set)");
    }
    instance::LinkOverride o;
    o.from_cluster = link.from_cluster();
    o.to_cluster = link.to_cluster();
    if (link.has_latency()) {
      BTSIM_ASSIGN_OR_RETURN(o.latency,
                             LatencyOf(link.latency(), field + ".latency"));
    }
    o.bandwidth = link.bandwidth_bytes_per_second();
    o.one_way = link.one_way();
    out.link_overrides.push_back(std::move(o));
  }

  if (proto.has_node_queue_limit()) {
    BTSIM_ASSIGN_OR_RETURN(
        config.node_queue_limit,
        DurationOf(proto.node_queue_limit(), "node_queue_limit"));
  }

  if (proto.has_detector()) {
    BTSIM_RETURN_IF_ERROR(DetectorOf(proto.detector(), &config));
  }

  // Replication shipping.
  if (proto.has_replication()) {
    const pb::Replication& r = proto.replication();
    replication::ReplicationOptions& options = config.replication;
    if (r.batch_entries() < 0) {
      return InvalidArgument("replication.batch_entries: must not be negative");
    }
    if (r.batch_entries() > 0) {
      options.batch_entries = static_cast<size_t>(r.batch_entries());
    }
    if (r.batches_in_flight() < 0) {
      return InvalidArgument(
          "replication.batches_in_flight: must not be negative");
    }
    if (r.batches_in_flight() > 0) {
      options.batches_in_flight = r.batches_in_flight();
    }
    // A retransmit timeout must be positive; the batching interval may be
    // zero (no wait).
    auto duration = [](bool has, const google::protobuf::Duration& d,
                       const std::string& field, sim::Duration* out,
                       bool positive = true) -> Status {
      if (!has) return OkStatus();
      BTSIM_ASSIGN_OR_RETURN(*out, DurationOf(d, field));
      if (positive && *out <= sim::Duration(0)) {
        return InvalidArgument(field + ": must be positive");
      }
      return OkStatus();
    };
    BTSIM_RETURN_IF_ERROR(duration(r.has_batch_interval(), r.batch_interval(),
                                   "replication.batch_interval",
                                   &options.batch_interval,
                                   /*positive=*/false));
    BTSIM_RETURN_IF_ERROR(duration(
        r.has_initial_retransmit_timeout(), r.initial_retransmit_timeout(),
        "replication.initial_retransmit_timeout", &options.initial_retransmit));
    BTSIM_RETURN_IF_ERROR(duration(
        r.has_min_retransmit_timeout(), r.min_retransmit_timeout(),
        "replication.min_retransmit_timeout", &options.min_retransmit));
    BTSIM_RETURN_IF_ERROR(duration(
        r.has_max_retransmit_timeout(), r.max_retransmit_timeout(),
        "replication.max_retransmit_timeout", &options.max_retransmit));
  }

  // App profiles.
  std::set<std::string> profile_ids;
  for (int i = 0; i < proto.app_profiles_size(); ++i) {
    const pb::AppProfile& p = proto.app_profiles(i);
    const std::string field = Indexed("app_profiles", i);
    if (Status s = appprofile::ValidateProfileId(p.id()); !s.ok()) {
      return InvalidArgument(field + ".id: " + s.message());
    }
    if (p.id() == appprofile::kDefaultProfileId) {
      return InvalidArgument(field +
                             ".id: the \"default\" profile always exists");
    }
    if (!profile_ids.insert(p.id()).second) {
      return InvalidArgument(field + ".id: duplicate app profile id '" +
                             p.id() + "'");
    }
    appprofile::AppProfile profile;
    profile.id = p.id();
    profile.description = p.description();
    switch (p.routing_case()) {
      case pb::AppProfile::kSingleCluster: {
        const auto& single = p.single_cluster();
        if (Status s = check_cluster(single.cluster_id(),
                                     field + ".single_cluster.cluster_id");
            !s.ok()) {
          return s;
        }
        profile.routing = appprofile::AppProfile::Routing::kSingleCluster;
        profile.cluster_id = single.cluster_id();
        profile.allow_transactional_writes =
            single.allow_transactional_writes();
        break;
      }
      case pb::AppProfile::kMultiCluster: {
        const auto& multi = p.multi_cluster();
        std::set<std::string> seen;
        for (int j = 0; j < multi.cluster_ids_size(); ++j) {
          const std::string f =
              Indexed(field + ".multi_cluster.cluster_ids", j);
          if (Status s = check_cluster(multi.cluster_ids(j), f); !s.ok()) {
            return s;
          }
          if (!seen.insert(multi.cluster_ids(j)).second) {
            return InvalidArgument(f + ": duplicate cluster '" +
                                   multi.cluster_ids(j) + "'");
          }
        }
        profile.routing = appprofile::AppProfile::Routing::kMultiCluster;
        profile.cluster_ids.assign(multi.cluster_ids().begin(),
                                   multi.cluster_ids().end());
        profile.row_affinity = multi.row_affinity();
        break;
      }
      case pb::AppProfile::ROUTING_NOT_SET:
        return InvalidArgument(field + ": set single_cluster or multi_cluster");
    }
    out.profiles.push_back(std::move(profile));
  }

  config.app_profiles = out.profiles;
  config.link_overrides = out.link_overrides;
  return out;
}

}  // namespace

Result<LoadedConfig> ConvertInstanceConfig(const pb::InstanceConfig& proto) {
  return Convert(proto);
}

Result<sim::Duration> ConfigDuration(const google::protobuf::Duration& duration,
                                     const std::string& field) {
  return DurationOf(duration, field);
}

Result<sim::LatencyModel> ConfigLatency(const pb::Latency& latency,
                                        const std::string& field) {
  return LatencyOf(latency, field);
}

Status ConfigClusterId(const std::string& id, const std::string& field) {
  if (replication::IsValidClusterId(id)) return OkStatus();
  return InvalidArgument(field + ": '" + id +
                         "' is not a valid cluster id; it must match "
                         "[a-z][-a-z0-9]* and be at most 30 characters");
}

Result<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return NotFound(path + ": cannot read the file");
  return text.str();
}

Status ParseTextProto(std::string_view text, const std::string& name,
                      google::protobuf::Message* message,
                      google::protobuf::TextFormat::ParseInfoTree* locations) {
  Collector collector(name);
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  parser.AllowUnknownField(false);
  parser.AllowUnknownExtension(false);
  if (locations != nullptr) parser.WriteLocationsTo(locations);
  if (!parser.ParseFromString(std::string(text), message)) {
    return InvalidArgument(collector.first().empty()
                               ? name + ": not a valid " +
                                     message->GetDescriptor()->name()
                               : collector.first());
  }
  return OkStatus();
}

Result<LoadedConfig> ParseInstanceConfig(std::string_view text,
                                         const std::string& name) {
  pb::InstanceConfig proto;
  BTSIM_RETURN_IF_ERROR(ParseTextProto(text, name, &proto));
  return Convert(proto);
}

Result<LoadedConfig> LoadInstanceConfig(const std::string& path) {
  BTSIM_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseInstanceConfig(text, path);
}

}  // namespace btsim::scenarios
