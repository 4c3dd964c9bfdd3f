#include "cli/run_outputs.h"

#include <filesystem>

#include "metrics/report_html.h"
#include "scenarios/report.h"

namespace btsim::cli {

Status WriteRunOutputs(const scenarios::LoadedScenario& scenario,
                       const scenarios::RunOutcome& outcome,
                       const RunMetrics& metrics, const std::string& dir) {
  const std::filesystem::path root(dir);
  BTSIM_RETURN_IF_ERROR(scenarios::WriteOutputs(scenario, outcome, dir));
  BTSIM_RETURN_IF_ERROR(scenarios::WriteFile(
      root / "metrics.om",
      [&](std::ostream& o) { metrics.recorder.Write(o); }));
  return scenarios::WriteFile(root / "report.html", [&](std::ostream& o) {
    metrics::WriteReportHtml(scenario, outcome, o);
  });
}

}  // namespace btsim::cli
