// The machine-readable report of `btsim run --out DIR`: report.json (one
// btsim.report.v1.Report), and the operations as history.jsonl carries them
// (scenarios/history_file.h). Their format is the schema in
// proto/btsim/report/v1/report.proto, printed by JsonPrinter. Deterministic:
// the same outcome gives the same bytes.
#ifndef BTSIM_SCENARIOS_REPORT_JSON_H_
#define BTSIM_SCENARIOS_REPORT_JSON_H_

#include <ostream>

#include "base/status.h"
#include "btsim/report/v1/report.pb.h"
#include "scenarios/history.h"
#include "scenarios/loader.h"
#include "scenarios/runner.h"

namespace btsim::scenarios {

// The report of a run, as report.json carries it.
btsim::report::v1::Report ReportMessage(const LoadedScenario& scenario,
                                        const RunOutcome& outcome);

// Sets `line` (cleared first, its storage reused) to `op` as history.jsonl
// carries it (scenarios/history_file.h); `append` is op's Append, or null;
// `names` is the pool of op's history.
void FillOperation(const Operation& op, const Append* append,
                   const NamePool& names, btsim::report::v1::Operation& line);

// Writes report.json (indented, with a final newline) to `out`. INTERNAL if
// the JSON printer fails; the stream's state is the caller's to check.
Status WriteReportJson(const LoadedScenario& scenario,
                       const RunOutcome& outcome, std::ostream& out);

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_REPORT_JSON_H_
