#include "cli/sweep.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "cli/duration.h"
#include "cli/fork_pool.h"
#include "cli/sweep_table.h"
#include "scenarios/loader.h"
#include "scenarios/runner.h"
#include "sim/fingerprint.h"

namespace btsim::cli {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxFailuresListed = 10;

// Everything a sweep needs, validated.
struct SweepPlan {
  explicit SweepPlan(SweepGrid g) : grid(std::move(g)) {}

  SweepGrid grid;
  Shard shard;
  std::vector<scenarios::Override> sets;
  std::optional<sim::Duration> duration;
  int jobs = 1;
  std::vector<scenarios::LoadedScenario> points;  // one per grid point
  std::vector<std::string> metrics;  // check names, then expectation names
};

// Single-quotes `word` for a POSIX shell unless it is plainly safe.
std::string ShellQuote(const std::string& word) {
  const bool safe =
      !word.empty() &&
      std::all_of(word.begin(), word.end(), [](unsigned char c) {
        return std::isalnum(c) || std::strchr("_./=:,-+@%", c) != nullptr;
      });
  if (safe) return word;
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Writes through a temporary file and a rename, so that a reader (or a
// merge on shared storage) never sees half a file.
Status WriteFile(const fs::path& path, const std::string& bytes) {
  const fs::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << bytes;
    out.close();
    if (!out) return Internal(temporary.string() + ": cannot write");
  }
  std::error_code ec;
  fs::rename(temporary, path, ec);
  if (ec) return Internal(path.string() + ": " + ec.message());
  return OkStatus();
}

// The names of a run's columns after `passed`.
std::vector<std::string> MetricNames(const scenarios::RunOutcome& outcome) {
  std::vector<std::string> names;
  for (const auto& check : outcome.checks) names.push_back(check.name);
  for (const auto& e : outcome.expectations) names.push_back(e.name);
  return names;
}

Result<SweepPlan> Plan(const SweepArgs& args) {
  if (args.seeds.empty()) return InvalidArgument("--seeds is required");
  BTSIM_ASSIGN_OR_RETURN(SeedRange seeds, ParseSeeds(args.seeds));
  std::vector<Vary> varies;
  for (const std::string& text : args.varies) {
    BTSIM_ASSIGN_OR_RETURN(Vary vary, ParseVary(text));
    varies.push_back(std::move(vary));
  }
  BTSIM_ASSIGN_OR_RETURN(SweepGrid grid,
                         SweepGrid::Create(std::move(varies), seeds));
  SweepPlan plan(std::move(grid));
  if (!args.shard.empty()) {
    BTSIM_ASSIGN_OR_RETURN(plan.shard, ParseShard(args.shard));
  }
  std::set<std::string> set_paths;
  for (const std::string& text : args.sets) {
    BTSIM_ASSIGN_OR_RETURN(scenarios::Override o,
                           scenarios::ParseOverride(text));
    set_paths.insert(o.path);
    plan.sets.push_back(std::move(o));
  }
  if (set_paths.count("seed") > 0) {
    return InvalidArgument("--set seed: use --seeds to choose the seeds");
  }
  for (const Vary& vary : plan.grid.varies()) {
    if (vary.path == "seed") {
      return InvalidArgument("--vary seed: use --seeds to choose the seeds");
    }
    if (set_paths.count(vary.path) > 0) {
      return InvalidArgument("--vary " + vary.path +
                             ": the path is also given to --set");
    }
  }
  if (!args.duration.empty()) {
    auto duration = ParseDuration(args.duration);
    if (!duration.ok() || duration->count() <= 0) {
      return InvalidArgument("--duration: " +
                             (duration.ok() ? std::string("must be positive")
                                            : duration.status().message()));
    }
    plan.duration = *duration;
  }
  plan.jobs =
      args.jobs > 0
          ? args.jobs
          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));

  // Load every grid point, and build its instance with a 1 ns probe run:
  // some errors only show then.
  for (size_t p = 0; p < plan.grid.point_count(); ++p) {
    const auto where = [&] {
      return plan.grid.varies().empty()
                 ? std::string()
                 : " (grid point " + plan.grid.PointLabel(p) + ")";
    };
    std::vector<scenarios::Override> overrides = plan.sets;
    const std::vector<std::string> values = plan.grid.PointValues(p);
    for (size_t v = 0; v < values.size(); ++v) {
      overrides.push_back({plan.grid.varies()[v].path, values[v]});
    }
    auto loaded = scenarios::LoadScenario(args.file, overrides);
    if (!loaded.ok()) {
      return Status(loaded.status().code(),
                    loaded.status().message() + where());
    }
    scenarios::RunOptions probe;
    probe.duration = sim::Duration(1);
    auto outcome = scenarios::RunScenario(*loaded, probe);
    if (!outcome.ok()) {
      return Status(outcome.status().code(),
                    args.file + ": " + outcome.status().message() + where());
    }
    std::vector<std::string> names = MetricNames(*outcome);
    if (p == 0) {
      plan.metrics = std::move(names);
    } else if (names != plan.metrics) {
      return InvalidArgument(args.file +
                             ": the checks and expectations differ between "
                             "grid points" +
                             where());
    }
    plan.points.push_back(std::move(*loaded));
  }
  return plan;
}

// In a child: one run, as the CSV record "fingerprint,passed,values...".
Result<std::string> RunOne(const SweepPlan& plan, const SweepRun& run) {
  scenarios::RunOptions options;
  options.seed = run.seed;
  options.duration = plan.duration;
  BTSIM_ASSIGN_OR_RETURN(
      scenarios::RunOutcome outcome,
      scenarios::RunScenario(plan.points[run.point], options));
  if (MetricNames(outcome) != plan.metrics) {
    return Internal(
        "the run's checks and expectations differ from the probe's");
  }
  std::vector<std::string> fields = {outcome.fingerprint,
                                     outcome.passed ? "1" : "0"};
  for (const auto& check : outcome.checks) {
    fields.push_back(FormatNumber(check.value));
  }
  for (const auto& e : outcome.expectations) {
    fields.push_back(FormatNumber(e.value));
  }
  return CsvRecord(fields);
}

// In the parent: the row of `run` from its child's record.
Result<ResultsTable::Row> ParseRow(const SweepPlan& plan, const SweepRun& run,
                                   const std::string& record) {
  BTSIM_ASSIGN_OR_RETURN(auto records, ParseCsv(record, "child"));
  if (records.size() != 1 || records[0].size() != plan.metrics.size() + 2) {
    return Internal("malformed answer from the child process");
  }
  const std::vector<std::string>& fields = records[0];
  ResultsTable::Row row;
  row.run = run.index;
  row.seed = run.seed;
  row.vary_values = plan.grid.PointValues(run.point);
  row.fingerprint = fields[0];
  row.passed = fields[1] == "1";
  for (size_t i = 2; i < fields.size(); ++i) {
    BTSIM_ASSIGN_OR_RETURN(double value, ParseNumber(fields[i]));
    row.values.push_back(value);
  }
  return row;
}

// What identifies a sweep across its shards: a hash of the scenario file's
// bytes and of the flags that shape its runs (hex).
std::string SweepId(const SweepArgs& args) {
  sim::Fingerprint id;
  auto scenario = ReadFile(args.file);
  id.Add(scenario.ok() ? *scenario : args.file);
  id.Add(args.seeds);
  id.AddInt(static_cast<int64_t>(args.varies.size()));
  for (const std::string& vary : args.varies) id.Add(vary);
  id.AddInt(static_cast<int64_t>(args.sets.size()));
  for (const std::string& set : args.sets) id.Add(set);
  id.Add(args.duration);
  return id.Hex().substr(0, 16);
}

// Writes results.csv and summary.csv into `dir` and prints the table.
Status Publish(const ResultsTable& table, const std::string& dir,
               std::ostream& out) {
  const std::vector<PointSummary> summary = Summarize(table);
  BTSIM_RETURN_IF_ERROR(
      WriteFile(fs::path(dir) / "results.csv", FormatResults(table)));
  BTSIM_RETURN_IF_ERROR(WriteFile(fs::path(dir) / "summary.csv",
                                  FormatSummaryCsv(table, summary)));
  PrintSummaryTable(table, summary, out);
  return OkStatus();
}

Status MakeDirectory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return InvalidArgument("--out " + dir + ": " + ec.message());
  return OkStatus();
}

size_t CountPassed(const ResultsTable& table) {
  return static_cast<size_t>(
      std::count_if(table.rows.begin(), table.rows.end(),
                    [](const ResultsTable::Row& row) { return row.passed; }));
}

// The results.csv of a --merge input: the file itself, or the one in the
// directory.
fs::path ResultsPath(const std::string& input) {
  return fs::is_directory(input) ? fs::path(input) / "results.csv"
                                 : fs::path(input);
}

// The shard record beside a --merge input's results.csv.
fs::path RecordPath(const std::string& input) {
  return ResultsPath(input).parent_path() / kShardRecordFile;
}

int Merge(const SweepArgs& args, std::ostream& out, std::ostream& err) {
  // Shards of a sharded sweep carry records (shard.txt): then every input
  // must be one of its finished shards.
  const bool sharded = std::any_of(
      args.merge.begin(), args.merge.end(),
      [](const std::string& input) { return fs::exists(RecordPath(input)); });
  std::vector<ShardRecord> records;
  if (sharded) {
    for (const std::string& dir : args.merge) {
      const std::string path = RecordPath(dir).string();
      auto text = ReadFile(path);
      if (!text.ok()) {
        err << "btsim sweep: --merge: " << dir << ": no " << kShardRecordFile
            << ": the shard did not finish (run it again), or is not a "
               "shard's directory\n";
        return kSweepInvalid;
      }
      auto record = ParseShardRecord(*text, path);
      if (!record.ok()) {
        err << "btsim sweep: --merge: " << record.status().message() << "\n";
        return kSweepInvalid;
      }
      records.push_back(*record);
    }
  }
  std::vector<std::pair<std::string, ResultsTable>> tables;
  for (const std::string& dir : args.merge) {
    const std::string path = ResultsPath(dir).string();
    auto text = ReadFile(path);
    if (!text.ok()) {
      err << "btsim sweep: --merge: " << text.status().message() << "\n";
      return kSweepInvalid;
    }
    auto table = ParseResults(*text, path);
    if (!table.ok()) {
      err << "btsim sweep: --merge: " << table.status().message() << "\n";
      return kSweepInvalid;
    }
    tables.emplace_back(path, std::move(*table));
  }
  if (sharded) {
    if (Status s = CheckShards(tables, records); !s.ok()) {
      err << "btsim sweep: --merge: " << s.message() << "\n";
      return kSweepInvalid;
    }
  }
  auto merged = MergeResults(tables);
  if (!merged.ok()) {
    err << "btsim sweep: --merge: " << merged.status().message() << "\n";
    return kSweepInvalid;
  }
  const std::vector<uint64_t> missing = MissingRuns(*merged);
  if (!missing.empty()) {
    err << "btsim sweep: warning: " << missing.size()
        << " run(s) missing, e.g. run " << missing.front() << "\n";
  }
  if (Status s = MakeDirectory(args.out_dir); !s.ok()) {
    err << "btsim sweep: " << s.message() << "\n";
    return kSweepInvalid;
  }
  out << "merged " << tables.size() << " file(s): " << merged->rows.size()
      << " runs\n";
  if (Status s = Publish(*merged, args.out_dir, out); !s.ok()) {
    err << "btsim sweep: " << s.message() << "\n";
    return kSweepInvalid;
  }
  const size_t passed = CountPassed(*merged);
  out << "result: " << passed << " of " << merged->rows.size()
      << " runs passed\n";
  return passed == merged->rows.size() ? 0 : kSweepFailed;
}

// The `btsim run` command line that replays one run.
std::string ReplayCommand(const SweepArgs& args, const SweepPlan& plan,
                          const SweepRun& run) {
  std::string command = "btsim run " + ShellQuote(args.file) + " --seed " +
                        std::to_string(run.seed);
  if (!args.duration.empty()) command += " --duration " + args.duration;
  for (const std::string& set : args.sets)
    command += " --set " + ShellQuote(set);
  const std::vector<std::string> values = plan.grid.PointValues(run.point);
  for (size_t v = 0; v < values.size(); ++v) {
    command +=
        " --set " + ShellQuote(plan.grid.varies()[v].path + "=" + values[v]);
  }
  return command;
}

int Sweep(const SweepArgs& args, std::ostream& out, std::ostream& err) {
  auto plan = Plan(args);
  if (!plan.ok()) {
    err << "btsim sweep: " << plan.status().message() << "\n";
    return kSweepInvalid;
  }
  if (Status s = MakeDirectory(args.out_dir); !s.ok()) {
    err << "btsim sweep: " << s.message() << "\n";
    return kSweepInvalid;
  }
  // A shard's record says it finished: an earlier attempt's goes first,
  // with what it wrote, so that nothing of it can be merged.
  const fs::path record_path = fs::path(args.out_dir) / kShardRecordFile;
  if (!args.shard.empty()) {
    for (const fs::path& stale :
         {record_path, fs::path(args.out_dir) / "results.csv",
          fs::path(args.out_dir) / "summary.csv"}) {
      if (std::error_code ec; fs::remove(stale, ec), ec) {
        err << "btsim sweep: " << stale.string() << ": " << ec.message()
            << "\n";
        return kSweepInvalid;
      }
    }
  }
  const std::vector<SweepRun> runs = plan->grid.ShardRuns(plan->shard);
  const int jobs = static_cast<int>(std::min<size_t>(
      static_cast<size_t>(plan->jobs), std::max<size_t>(runs.size(), 1)));
  out << "sweep: " << plan->points[0].name << ": " << plan->grid.run_count()
      << " runs (" << plan->grid.point_count() << " grid point(s) x "
      << plan->grid.seeds().count() << " seed(s))";
  if (!args.shard.empty()) {
    out << ", shard " << plan->shard.index << "/" << plan->shard.count << ": "
        << runs.size() << " runs";
  }
  out << ", " << jobs << " job(s)\n";

  const SweepPlan& p = *plan;
  auto answers = ForkEach(runs.size(), jobs,
                          [&p, &runs](size_t i) { return RunOne(p, runs[i]); });
  if (!answers.ok()) {
    err << "btsim sweep: " << answers.status().message() << "\n";
    return kSweepInvalid;
  }
  ResultsTable table;
  table.vary_paths = plan->grid.paths();
  table.metrics = plan->metrics;
  size_t broken = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    Result<ResultsTable::Row> row =
        (*answers)[i].ok() ? ParseRow(*plan, runs[i], *(*answers)[i])
                           : Result<ResultsTable::Row>((*answers)[i].status());
    if (!row.ok()) {
      ++broken;
      err << "btsim sweep: run " << runs[i].index << " ("
          << ReplayCommand(args, *plan, runs[i])
          << "): " << row.status().message() << "\n";
      continue;
    }
    table.rows.push_back(std::move(*row));
  }
  if (Status s = Publish(table, args.out_dir, out); !s.ok()) {
    err << "btsim sweep: " << s.message() << "\n";
    return kSweepInvalid;
  }
  if (!args.shard.empty() && broken == 0) {
    const ShardRecord record{plan->shard, plan->grid.run_count(),
                             SweepId(args)};
    if (Status s = WriteFile(record_path, FormatShardRecord(record)); !s.ok()) {
      err << "btsim sweep: " << s.message() << "\n";
      return kSweepInvalid;
    }
  }
  size_t listed = 0;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const ResultsTable::Row& row = table.rows[i];
    if (row.passed) continue;
    if (listed == 0) out << "failed runs (replay with the command shown):\n";
    if (++listed > kMaxFailuresListed) continue;
    out << "  run " << row.run << ": "
        << ReplayCommand(args, *plan, plan->grid.Run(row.run)) << "\n";
  }
  if (listed > kMaxFailuresListed) {
    out << "  ... and " << listed - kMaxFailuresListed << " more\n";
  }
  const size_t passed = CountPassed(table);
  out << "results: " << (fs::path(args.out_dir) / "results.csv").string()
      << ", " << (fs::path(args.out_dir) / "summary.csv").string() << "\n";
  out << "result: " << passed << " of " << runs.size() << " runs passed";
  if (broken > 0) out << ", " << broken << " could not complete";
  out << "\n";
  if (broken > 0) return kSweepInvalid;
  return passed == runs.size() ? 0 : kSweepFailed;
}

}  // namespace

CLI::App* AddSweepCommand(CLI::App& app, SweepArgs& args) {
  CLI::App* sweep = app.add_subcommand(
      "sweep",
      "Run a scenario over a grid of --vary values x seeds in parallel local "
      "processes; write results.csv and summary.csv (exit 0: every run "
      "passed, 1: an expectation failed somewhere, 2: invalid input)");
  sweep->add_option("file", args.file,
                    "The scenario (see `btsim run`); omit with --merge");
  sweep->add_option("--seeds", args.seeds,
                    "Seeds A..B (inclusive), e.g. 1..100");
  sweep
      ->add_option("--vary", args.varies,
                   "A grid axis: path=v1,v2,... where path is as for --set, "
                   "e.g. clients[0].workload.ops_per_second=100,200 "
                   "(repeatable: the grid is the cartesian product)")
      ->allow_extra_args(false);
  sweep
      ->add_option("--set", args.sets,
                   "Override one scalar field in every run, e.g. "
                   "--set instance.clusters[0].nodes=5 (repeatable)")
      ->allow_extra_args(false);
  sweep->add_option("--duration", args.duration,
                    "Override the scenario's duration in every run, e.g. 10s");
  sweep
      ->add_option("--jobs", args.jobs,
                   "Runs at once, each in its own process (default: one per "
                   "CPU)")
      ->check(CLI::Range(1, 4096));
  sweep->add_option("--shard", args.shard,
                    "K/N: run only the runs whose index % N == K (0 <= K < "
                    "N), e.g. one shard per machine; combine with --merge");
  sweep->add_option("--merge", args.merge,
                    "Merge the results.csv of these shard directories into "
                    "--out instead of running anything");
  sweep
      ->add_option("--out", args.out_dir,
                   "Directory for results.csv and summary.csv")
      ->required();
  return sweep;
}

int RunSweep(const SweepArgs& args, std::ostream& out, std::ostream& err) {
  if (!args.merge.empty()) {
    if (!args.file.empty() || !args.seeds.empty() || !args.varies.empty() ||
        !args.sets.empty() || !args.duration.empty() || !args.shard.empty() ||
        args.jobs != 0) {
      err << "btsim sweep: --merge takes only --out (no FILE, --seeds, "
             "--vary, --set, --duration, --jobs or --shard)\n";
      return kSweepInvalid;
    }
    return Merge(args, out, err);
  }
  if (args.file.empty()) {
    err << "btsim sweep: FILE (a scenario) or --merge DIR... is required\n";
    return kSweepInvalid;
  }
  return Sweep(args, out, err);
}

}  // namespace btsim::cli
