// Loading of `btsim serve --config FILE.textproto`: a full instance
// description (btsim.config.v1.InstanceConfig, see
// proto/btsim/config/v1/instance_config.proto) converted to the simulator's
// instance::InstanceConfig.
#ifndef BTSIM_SCENARIOS_INSTANCE_CONFIG_H_
#define BTSIM_SCENARIOS_INSTANCE_CONFIG_H_

#include <string>
#include <string_view>
#include <vector>

#include "appprofile/app_profile.h"
#include "base/result.h"
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
  // Not used by the simulator yet: the capacity model will use it (HDD
  // clusters serve fewer reads per node).
  StorageType storage_type = StorageType::kSsd;
};

// Reads and parses the file (protobuf text format; unknown fields are
// errors) and validates it. INVALID_ARGUMENT with "PATH:LINE:COLUMN: ..." for
// a syntax error, or naming the field for a bad value, e.g.
// "clusters[1].zone: ..."; NOT_FOUND when the file cannot be read.
Result<LoadedConfig> LoadInstanceConfig(const std::string& path);

// The same for text already in memory; `name` stands for the path in
// syntax errors.
Result<LoadedConfig> ParseInstanceConfig(std::string_view text,
                                         const std::string& name);

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_INSTANCE_CONFIG_H_
