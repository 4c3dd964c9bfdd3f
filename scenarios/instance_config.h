// Loading of `btsim serve --config FILE.textproto`: a full instance
// description (btsim.config.v1.InstanceConfig, see
// proto/btsim/config/v1/instance_config.proto) converted to the simulator's
// instance::InstanceConfig.
#ifndef BTSIM_SCENARIOS_INSTANCE_CONFIG_H_
#define BTSIM_SCENARIOS_INSTANCE_CONFIG_H_

#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/text_format.h>
#include "appprofile/app_profile.h"
#include "base/result.h"
#include "btsim/config/v1/instance_config.pb.h"
#include "instance/instance.h"

namespace btsim::scenarios {

enum class StorageType { kSsd, kHdd };

struct LoadedConfig {
  // Ready for instance::Instance::Create; app_profiles and link_overrides
  // are filled in too (copies of the two fields below).
  instance::InstanceConfig config;
  // The profiles of `config.app_profiles`, in file order.
  std::vector<appprofile::AppProfile> profiles;
  // The links of `config.link_overrides`, in file order.
  std::vector<instance::LinkOverride> link_overrides;
  // The file's storage type; the same as `config.storage`, which the
  // capacity model uses (an HDD node serves 500 reads/s, an SSD node
  // 17,000; see cluster/node_model.h).
  StorageType storage_type = StorageType::kSsd;
};

// Reads and parses the file (protobuf text format; unknown fields are
// errors) and validates it. INVALID_ARGUMENT with "PATH:LINE:COLUMN: ..." for
// a syntax error, or naming the field for a bad value, e.g.
// "clusters[1].zone: ..."; NOT_FOUND when the file cannot be read.
Result<LoadedConfig> LoadInstanceConfig(const std::string& path);

// Reads a whole file; NOT_FOUND "PATH: cannot read the file".
Result<std::string> ReadTextFile(const std::string& path);

// Parses protobuf text format into `message` (unknown fields are errors),
// recording field locations into `locations` when given. INVALID_ARGUMENT
// "NAME:LINE:COLUMN: ..." (1-based) for the first syntax error.
Status ParseTextProto(
    std::string_view text, const std::string& name,
    google::protobuf::Message* message,
    google::protobuf::TextFormat::ParseInfoTree* locations = nullptr);

// Validates and converts an already parsed description. Errors name the
// field relative to the InstanceConfig message, e.g. "clusters[1].zone: ...".
Result<LoadedConfig> ConvertInstanceConfig(
    const btsim::config::v1::InstanceConfig& proto);

// A Duration field: not negative, at most 24 hours. Errors name `field`.
Result<sim::Duration> ConfigDuration(const google::protobuf::Duration& duration,
                                     const std::string& field);
// A cluster id: [a-z][-a-z0-9]*, at most 30 characters. Errors name `field`.
Status ConfigClusterId(const std::string& id, const std::string& field);
// A Latency message as a sim::LatencyModel. Errors name `field`.
Result<sim::LatencyModel> ConfigLatency(
    const btsim::config::v1::Latency& latency, const std::string& field);

// The same for text already in memory; `name` stands for the path in
// syntax errors.
Result<LoadedConfig> ParseInstanceConfig(std::string_view text,
                                         const std::string& name);

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_INSTANCE_CONFIG_H_
