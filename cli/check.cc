#include "cli/check.h"

#include <fstream>
#include <utility>

#include "cli/run.h"
#include "cli/run_outputs.h"
#include "scenarios/history_file.h"
#include "scenarios/loader.h"
#include "scenarios/report.h"
#include "scenarios/run_setup.h"

namespace btsim::cli {

CLI::App* AddCheckCommand(CLI::App& app, CheckArgs& args) {
  CLI::App* check = app.add_subcommand(
      "check",
      "Judge a recorded run again, offline: the checks and expectations on "
      "the history.jsonl that `btsim run --out` or `btsim serve --scenario "
      "--out` wrote (exit 0: all held, 1: one failed, 2: invalid input)");
  check->add_option("history", args.history, "The run's history.jsonl")
      ->required();
  check->add_option("--scenario", args.scenario,
                    "Judge against this scenario file's expectations "
                    "(default: the scenario recorded in the history)");
  check->add_option("--out", args.out_dir,
                    "Write report.json, history.jsonl and report.html into "
                    "this directory");
  check
      ->add_option("--export", args.exports,
                   "With --out: also write the history in these formats: "
                   "jepsen, jepsen-edn, elle-rw-register, elle-list-append, "
                   "porcupine (comma-separated or repeated)")
      ->delimiter(',');
  check->add_flag("--quiet", args.quiet, "Print only the fingerprint line");
  return check;
}

int RunCheck(const CheckArgs& args, std::ostream& out, std::ostream& err) {
  auto exports = ParseExports(args.exports);
  if (!exports.ok() || (!args.exports.empty() && args.out_dir.empty())) {
    err << "btsim check: "
        << (exports.ok() ? std::string("--export needs --out")
                         : exports.status().message())
        << "\n";
    return kRunInvalid;
  }
  std::ifstream in(args.history);
  if (!in) {
    err << "btsim check: " << args.history << ": cannot be opened\n";
    return kRunInvalid;
  }
  auto recorded = scenarios::ReadHistoryJsonl(in, args.history);
  if (!recorded.ok()) {
    err << "btsim check: " << recorded.status().message() << "\n";
    return kRunInvalid;
  }
  const scenarios::ScenarioUse use = recorded->outcome.live
                                         ? scenarios::ScenarioUse::kServe
                                         : scenarios::ScenarioUse::kRun;
  // The recorded scenario is parsed under the name of the file the run
  // played, so that an unnamed scenario gets the same name as in the run.
  const std::string played =
      recorded->file.empty() ? args.history : recorded->file;
  auto loaded =
      args.scenario.empty()
          ? scenarios::ParseScenario(recorded->scenario, played, {}, use)
          : scenarios::LoadScenario(args.scenario, {}, use);
  if (!loaded.ok()) {
    err << "btsim check: "
        << (args.scenario.empty() ? args.history + ": its scenario: "
                                  : std::string())
        << loaded.status().message() << "\n";
    return kRunInvalid;
  }
  scenarios::RunOutcome& outcome = recorded->outcome;
  outcome.scenario = loaded->name;
  scenarios::JudgeOutcome(loaded->proto, outcome);
  if (args.quiet) {
    out << "fingerprint: " << outcome.fingerprint << "\n";
  } else {
    scenarios::PrintSummary(*loaded, outcome, out);
  }
  if (!args.out_dir.empty()) {
    Status s =
        WriteRunOutputs(*loaded, outcome, nullptr, args.out_dir, *exports);
    if (!s.ok()) {
      err << "btsim check: " << s.message() << "\n";
      return kRunInvalid;
    }
  }
  return outcome.passed ? 0 : kRunFailed;
}

}  // namespace btsim::cli
