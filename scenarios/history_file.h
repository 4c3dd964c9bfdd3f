// history.jsonl: a run's whole record as JSON lines (one
// btsim.report.v1.HistoryLine each; the format is
// proto/btsim/report/v1/history.proto): the scenario played, every
// operation, event and sample, the final state of every cluster, and the
// run's fingerprint. Reading it back gives the History the checkers judged,
// exactly: `btsim check` judges it again offline.
//
// Deterministic: the same run gives the same bytes. Not thread-safe.
#ifndef BTSIM_SCENARIOS_HISTORY_FILE_H_
#define BTSIM_SCENARIOS_HISTORY_FILE_H_

#include <istream>
#include <ostream>
#include <string>

#include "base/result.h"
#include "base/status.h"
#include "scenarios/loader.h"
#include "scenarios/runner.h"

namespace btsim::scenarios {

// Writes the record of `outcome`, a run of `scenario`. INTERNAL if the JSON
// printer fails; the stream's state is the caller's to check.
Status WriteHistoryJsonl(const LoadedScenario& scenario,
                         const RunOutcome& outcome, std::ostream& out);

// What a history file holds.
struct RecordedRun {
  std::string scenario;  // the scenario as played, protobuf text format
  std::string file;      // the scenario file as given to the run
  // The run as recorded: seed, fingerprint, live, client_ops,
  // recorded_ops and the history. The checks, expectations and verdict are
  // not recorded (judge them again); `scenario` (the name) is empty.
  RunOutcome outcome;
};

// Reads a history file; `path` names it in errors. INVALID_ARGUMENT
// "PATH:LINE: FIELD: what" for a line that is not a HistoryLine or does
// not fit the lines before it, and for a file without its start or end
// line.
Result<RecordedRun> ReadHistoryJsonl(std::istream& in, const std::string& path);

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_HISTORY_FILE_H_
