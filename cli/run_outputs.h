// What `btsim run --out` and `btsim serve --scenario --out` write: the
// instance's metrics sampled over the run (RunMetrics), and every output
// file of a judged run.
#ifndef BTSIM_CLI_RUN_OUTPUTS_H_
#define BTSIM_CLI_RUN_OUTPUTS_H_

#include <string>
#include <vector>

#include <prometheus/registry.h>

#include "base/result.h"
#include "base/status.h"
#include "metrics/instance_metrics.h"
#include "metrics/openmetrics.h"
#include "scenarios/history_export.h"
#include "scenarios/loader.h"
#include "scenarios/runner.h"

namespace btsim::cli {

// The instance's Prometheus series (bigtable_instance = `instance_name`)
// and their samples. Add `instance` as an observer of the instance; call
// Sample under the instance's lock.
struct RunMetrics {
  explicit RunMetrics(const std::string& instance_name)
      : instance(registry, instance_name) {}
  void Sample(sim::Time now, instance::Instance& served) {
    instance.Sample(served);
    recorder.Record(registry, now);
  }
  prometheus::Registry registry;
  metrics::InstanceMetrics instance;
  metrics::OpenMetricsRecorder recorder;
};

// The history formats named by --export values (one name each; the flag
// splits "jepsen,porcupine"), without repeats; INVALID_ARGUMENT
// "--export: ..." for an unknown name.
Result<std::vector<scenarios::HistoryFormat>> ParseExports(
    const std::vector<std::string>& values);

// Writes report.json, history.jsonl, metrics.om (from `metrics`, when not
// null), report.html and the history in each of `exports`
// (HistoryFileName) into `dir`, creating it if needed.
Status WriteRunOutputs(const scenarios::LoadedScenario& scenario,
                       const scenarios::RunOutcome& outcome,
                       const RunMetrics* metrics, const std::string& dir,
                       const std::vector<scenarios::HistoryFormat>& exports);

}  // namespace btsim::cli

#endif  // BTSIM_CLI_RUN_OUTPUTS_H_
