// What `btsim run` prints and writes: the human summary on stdout and, in
// the output directory (`--out DIR`), the files made from the outcome alone:
//   report.json    scenario, seed, fingerprint, passed, expectations,
//                  checks, events, phases (machine-readable)
//   history.jsonl  the run's whole record: the scenario, every operation
//                  and event, the final state (scenarios/history_file.h)
// (their format: proto/btsim/report/v1/report.proto and history.proto).
// (metrics.om and report.html come from the metrics layer; cli/run.cc
// writes them.)
// Deterministic: the same outcome gives the same bytes (wall-clock figures
// appear only in the summary's "sim:" line).
#ifndef BTSIM_SCENARIOS_REPORT_H_
#define BTSIM_SCENARIOS_REPORT_H_

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "scenarios/loader.h"
#include "scenarios/runner.h"

namespace btsim::scenarios {

// A stretch of the run between two timeline events (or the start / end).
struct PhaseStats {
  sim::Duration start{0};
  sim::Duration end{0};
  std::string label;  // what started the phase
  struct Line {
    std::string profile;
    std::string cluster;  // "-" when routing refused the operation
    int64_t ops = 0;
    int64_t errors = 0;
    sim::Duration p50{0};
    sim::Duration p99{0};
  };
  std::vector<Line> lines;  // sorted by (profile, cluster)
  // Replication per link, from the 1 s samples whose interval starts in
  // the phase; links that applied nothing and had no backlog are left out.
  struct Link {
    std::string from;
    std::string to;
    int64_t applied = 0;
    sim::Duration mean{0};  // mean delay of the entries applied
    sim::Duration max{0};
    int64_t max_backlog = 0;
  };
  std::vector<Link> links;  // sorted by (from, to)
};
// Operations by invoke time, split at every event of the client phase.
std::vector<PhaseStats> Phases(const History& history);

// Per fault (an event FindOutages or ComputeFailbacks names) and client:
// the outage (RTO, errors by code) and the fail-back.
struct ClientFailover {
  std::string client;
  std::optional<sim::Duration> rto;  // nullopt: no outage; max(): never
  // What the client saw of the outage: from its first failed operation's
  // end to the end of its first success after the fault (max(): never).
  std::optional<sim::Duration> error_window;
  std::map<std::string, int64_t> errors;  // failed ops by code name
  std::optional<Failback> failback;
};
// How one routing front end learned of a fault of a cluster
// (History::health_changes): its first ejection of the cluster after the
// fault and before the repair, how many times it ejected it then, and,
// when the cluster was still ejected at the repair, its readmission.
struct Detection {
  std::string zone;
  std::string cluster;
  sim::Duration ejected{0};  // after the fault
  int ejections = 0;         // between the fault and the repair
  bool ejected_at_repair = false;
  // After the repair; nullopt when not ejected then, or not readmitted
  // within the run.
  std::optional<sim::Duration> readmitted;
};
struct FaultFailover {
  size_t event = 0;                     // index in History::events
  std::vector<ClientFailover> clients;  // sorted by client
  std::vector<Detection> detections;    // sorted by zone
};
// Sorted by event; from the outcome's history and failbacks. A fault that
// no client noticed and no front end ejected for has no entry.
std::vector<FaultFailover> FailoversByFault(const RunOutcome& outcome);

// Availability per app profile as Bigtable's SLA counts it: each minute
// of the run (by invoke time) with operations of the profile and more than
// 5 % of them failed is down, counted only in runs of 5 or more
// consecutive such minutes. The target follows the profile's routing as
// the scenario created it (multi-cluster across 3+ regions: 99.999 %;
// fewer: 99.99 %; single-cluster or a one-cluster instance: 99.9 %).
struct ProfileAvailability {
  std::string profile;
  std::string target_percent;
  int64_t minutes = 0;
  int64_t downtime_minutes = 0;
  double uptime_percent = 100;
  double worst_minute_error_rate = 0;
};
// Sorted by profile; profiles with no operation are left out.
std::vector<ProfileAvailability> Availability(const LoadedScenario& scenario,
                                              const History& history);

// The summary; its last line is "fingerprint: <hex>". `wall_seconds` > 0
// adds the "sim: N client ops in X s wall (Y ops/s)" line before it.
void PrintSummary(const LoadedScenario& scenario, const RunOutcome& outcome,
                  std::ostream& out);

// Creates `dir` if needed and writes report.json and history.jsonl.
Status WriteOutputs(const LoadedScenario& scenario, const RunOutcome& outcome,
                    const std::string& dir);

// Writes a file (created or truncated) with `write`; INTERNAL naming the
// path when it cannot be written.
Status WriteFile(const std::filesystem::path& path,
                 const std::function<void(std::ostream&)>& write);

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_REPORT_H_
