#include "cli/run_outputs.h"

#include <algorithm>
#include <filesystem>

#include "metrics/report_html.h"
#include "scenarios/report.h"

namespace btsim::cli {

Result<std::vector<scenarios::HistoryFormat>> ParseExports(
    const std::vector<std::string>& values) {
  std::vector<scenarios::HistoryFormat> formats;
  for (const std::string& value : values) {
    auto format = scenarios::ParseHistoryFormat(value);
    if (!format.ok()) {
      return InvalidArgument("--export: " + format.status().message());
    }
    if (std::find(formats.begin(), formats.end(), *format) == formats.end()) {
      formats.push_back(*format);
    }
  }
  return formats;
}

Status WriteRunOutputs(const scenarios::LoadedScenario& scenario,
                       const scenarios::RunOutcome& outcome,
                       const RunMetrics* metrics, const std::string& dir,
                       const std::vector<scenarios::HistoryFormat>& exports) {
  const std::filesystem::path root(dir);
  BTSIM_RETURN_IF_ERROR(scenarios::WriteOutputs(scenario, outcome, dir));
  if (metrics != nullptr) {
    BTSIM_RETURN_IF_ERROR(scenarios::WriteFile(
        root / "metrics.om",
        [&](std::ostream& o) { metrics->recorder.Write(o); }));
  }
  for (scenarios::HistoryFormat format : exports) {
    BTSIM_RETURN_IF_ERROR(scenarios::WriteFile(
        root / std::string(scenarios::HistoryFileName(format)),
        [&](std::ostream& o) {
          scenarios::WriteHistory(outcome.history, format, o);
        }));
  }
  return scenarios::WriteFile(root / "report.html", [&](std::ostream& o) {
    metrics::WriteReportHtml(scenario, outcome, o);
  });
}

}  // namespace btsim::cli
