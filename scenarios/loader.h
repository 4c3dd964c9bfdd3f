// Loading of `btsim run` scenario files (btsim.scenario.v1.Scenario, see
// proto/btsim/scenario/v1/scenario.proto): parse, apply `--set` overrides,
// validate every field and every reference (clusters, profiles, tables,
// clients), and convert the instance description.
//
// Every error is INVALID_ARGUMENT with a message "FILE:LINE: FIELD: what",
// e.g. "s.textproto:14: clients[0].app_profile: unknown app profile 'x'"
// (the line of the field, or of its enclosing message when the field is
// absent; line 0 for errors in --set overrides). A missing file is
// NOT_FOUND.
#ifndef BTSIM_SCENARIOS_LOADER_H_
#define BTSIM_SCENARIOS_LOADER_H_

#include <span>
#include <string>
#include <string_view>

#include "base/result.h"
#include "btsim/scenario/v1/scenario.pb.h"
#include "scenarios/instance_config.h"

namespace btsim::scenarios {

// `--set path=value`: a path of field names and [index]es from the scenario
// root to one scalar field, e.g. "clients[0].workload.ops_per_second=500"
// or "instance.clusters[1].nodes=3" or "seed=7". Enum values by name.
struct Override {
  std::string path;
  std::string value;
};
// Splits "path=value"; INVALID_ARGUMENT when there is no '='.
Result<Override> ParseOverride(std::string_view text);

// What the scenario is loaded for: `btsim run` plays simulated clients
// only (at least one is required); `btsim serve --scenario` also records
// real applications' calls, so it needs no simulated client, and an
// expectation's `client` may name a recorded client (any caller identity)
// or "recorded" (all of them).
enum class ScenarioUse { kRun, kServe };

struct LoadedScenario {
  std::string path;  // as given
  std::string name;  // Scenario.name, or the file name without extension
  // Overrides applied; the timeline as it plays (`for` and `repeat`
  // expanded into plain steps).
  btsim::scenario::v1::Scenario proto;
  LoadedConfig instance;  // proto.instance, converted
};

Result<LoadedScenario> LoadScenario(const std::string& path,
                                    std::span<const Override> overrides = {},
                                    ScenarioUse use = ScenarioUse::kRun);
// The same for text in memory; `path` names it in errors.
Result<LoadedScenario> ParseScenario(std::string_view text,
                                     const std::string& path,
                                     std::span<const Override> overrides = {},
                                     ScenarioUse use = ScenarioUse::kRun);

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_LOADER_H_
