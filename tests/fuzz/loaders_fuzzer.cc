// Fuzz target: the scenario loader (scenarios/loader.h) and the instance
// configuration loader (scenarios/instance_config.h): protobuf text in, a
// clean error or a valid result out.
//
// The first byte picks the loader:
//   0     btsim serve --config      ParseInstanceConfig
//   1     btsim run                 ParseScenario, ScenarioUse::kRun
//   2     btsim serve --scenario    ParseScenario, ScenarioUse::kServe
//   3     btsim run with --set      the first line holds overrides
//                                   ("path=value" separated by ';')
// The rest is the file's text. An error must be INVALID_ARGUMENT with a
// message. What a loader accepts must be usable: an instance configuration
// must make an instance (Instance::Create), and a scenario must also set
// up and play for one virtual millisecond (RunScenario with that duration:
// building the instance, tables and clients is where a half-validated
// field would show).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/check.h"
#include "instance/instance.h"
#include "scenarios/instance_config.h"
#include "scenarios/loader.h"
#include "scenarios/runner.h"
#include "sim/rng.h"
#include "sim/virtual_scheduler.h"

namespace btsim::scenarios {
namespace {

void CheckRefusal(const Status& status, const char* what) {
  BTSIM_CHECK_MSG(status.code() == StatusCode::kInvalidArgument &&
                      !status.message().empty(),
                  std::string(what) + " refused with " + status.ToString());
}

void CheckInstanceConfig(std::string_view text) {
  auto loaded = ParseInstanceConfig(text, "fuzz.textproto");
  if (!loaded.ok()) {
    CheckRefusal(loaded.status(), "ParseInstanceConfig");
    return;
  }
  sim::VirtualScheduler scheduler{sim::Time{}};
  auto instance = instance::Instance::Create(
      "projects/p/instances/i", scheduler, sim::Rng(1), loaded->config);
  BTSIM_CHECK_MSG(instance.ok(), "a loaded configuration makes no instance: " +
                                     instance.status().ToString());
}

void CheckScenario(std::string_view text, ScenarioUse use,
                   const std::vector<Override>& overrides) {
  auto loaded = ParseScenario(text, "fuzz.textproto", overrides, use);
  if (!loaded.ok()) {
    CheckRefusal(loaded.status(), "ParseScenario");
    return;
  }
  if (use != ScenarioUse::kRun) return;
  RunOptions options;
  options.duration = std::chrono::milliseconds(1);
  auto outcome = RunScenario(*loaded, options);
  if (!outcome.ok()) CheckRefusal(outcome.status(), "RunScenario");
}

void Run(const uint8_t* data, size_t size) {
  if (size == 0) return;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      CheckInstanceConfig(text);
      break;
    case 1:
      CheckScenario(text, ScenarioUse::kRun, {});
      break;
    case 2:
      CheckScenario(text, ScenarioUse::kServe, {});
      break;
    default: {
      const size_t newline = text.find('\n');
      std::string_view line = text.substr(0, newline);
      text = newline == std::string_view::npos ? std::string_view()
                                               : text.substr(newline + 1);
      std::vector<Override> overrides;
      while (!line.empty()) {
        const size_t semicolon = line.find(';');
        auto parsed = ParseOverride(line.substr(0, semicolon));
        if (!parsed.ok()) {
          CheckRefusal(parsed.status(), "ParseOverride");
        } else {
          overrides.push_back(*parsed);
        }
        if (semicolon == std::string_view::npos) break;
        line = line.substr(semicolon + 1);
      }
      CheckScenario(text, ScenarioUse::kRun, overrides);
      break;
    }
  }
}

}  // namespace
}  // namespace btsim::scenarios

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  btsim::scenarios::Run(data, size);
  return 0;
}
