// The pure part of `btsim sweep` (cli/sweep.h): flag parsing, the grid of
// runs, results.csv and summary.csv. No processes, no files: every function
// here is a deterministic function of its arguments.
//
// results.csv: a header, then one row per run sorted by run index:
//   run, seed, <one column per --vary path>, fingerprint, passed,
//   <one column per check (RunChecks order)>,
//   <one column per expectation (scenario order)>
// `passed` is 1 or 0; numbers use the shortest text that reads back to the
// same double ("inf", "-inf", "nan" for the special values). Fields are
// quoted as in RFC 4180 when they hold a comma, a quote, CR or LF.
//
// summary.csv: a header, then per grid point (in grid order) one row per
// check and expectation column:
//   <one column per --vary path>, column, runs, pass_rate, mean, p50, p99
// where runs counts the grid point's rows, pass_rate is the fraction of
// them that passed, and p50 / p99 are nearest-rank percentiles over them.
#ifndef BTSIM_CLI_SWEEP_TABLE_H_
#define BTSIM_CLI_SWEEP_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace btsim::cli {

// The most runs one sweep may have (before sharding).
inline constexpr uint64_t kMaxSweepRuns = 10'000'000;

// --seeds "A..B" (inclusive, 1 <= A <= B) or "A" (A..A). Seed 0 is refused:
// a scenario treats it as seed 1.
struct SeedRange {
  uint64_t first = 1;
  uint64_t last = 1;
  uint64_t count() const { return last - first + 1; }
};
Result<SeedRange> ParseSeeds(std::string_view text);

// --shard "K/N" with 0 <= K < N: the runs whose index % N == K.
struct Shard {
  uint64_t index = 0;
  uint64_t count = 1;
  bool Contains(uint64_t run) const { return run % count == index; }
};
Result<Shard> ParseShard(std::string_view text);

// --vary "path=v1,v2,...": at least one value, no empty or repeated value.
// The path is split at the first '='; values cannot contain ','.
struct Vary {
  std::string path;
  std::vector<std::string> values;
};
Result<Vary> ParseVary(std::string_view text);

// One run of the grid.
struct SweepRun {
  uint64_t index = 0;  // grid point * seed count + (seed - first seed)
  size_t point = 0;    // index of the grid point
  uint64_t seed = 0;
};

// The cartesian product of the varies' values (the first --vary outermost,
// the last changing fastest) times the seeds. Runs are numbered grid point
// major, seed minor.
class SweepGrid {
 public:
  // INVALID_ARGUMENT when two varies share a path or the grid has more
  // than kMaxSweepRuns runs.
  static Result<SweepGrid> Create(std::vector<Vary> varies, SeedRange seeds);

  const std::vector<Vary>& varies() const { return varies_; }
  std::vector<std::string> paths() const;
  const SeedRange& seeds() const { return seeds_; }
  size_t point_count() const { return point_count_; }
  uint64_t run_count() const { return point_count_ * seeds_.count(); }

  // The value of each vary at grid point `point` (< point_count()).
  std::vector<std::string> PointValues(size_t point) const;
  // "path=value, path=value", or "(no --vary)" without varies.
  std::string PointLabel(size_t point) const;
  // Requires index < run_count().
  SweepRun Run(uint64_t index) const;
  // The runs of one shard, by increasing index.
  std::vector<SweepRun> ShardRuns(const Shard& shard) const;

 private:
  SweepGrid(std::vector<Vary> varies, SeedRange seeds, size_t point_count)
      : varies_(std::move(varies)), seeds_(seeds), point_count_(point_count) {}

  std::vector<Vary> varies_;
  SeedRange seeds_;
  size_t point_count_;
};

// CSV (RFC 4180). A field is quoted when it contains ',', '"', CR or LF, or
// begins or ends with a space; quotes inside are doubled.
std::string CsvField(std::string_view field);
// The fields joined by ',' and terminated by "\n".
std::string CsvRecord(const std::vector<std::string>& fields);
// Parses records separated by "\n" or "\r\n" (a final terminator is
// optional); INVALID_ARGUMENT "NAME:LINE: ..." for an unterminated quote or
// text after a closing quote.
Result<std::vector<std::vector<std::string>>> ParseCsv(std::string_view text,
                                                       std::string_view name);

// The shortest text that parses back to `value`; "inf", "-inf", "nan".
std::string FormatNumber(double value);
// Inverse of FormatNumber (also any strtod-style decimal number);
// INVALID_ARGUMENT when `text` is not a whole number.
Result<double> ParseNumber(std::string_view text);

// A results.csv in memory.
struct ResultsTable {
  struct Row {
    uint64_t run = 0;
    uint64_t seed = 0;
    std::vector<std::string> vary_values;  // one per vary path
    std::string fingerprint;
    bool passed = false;
    std::vector<double> values;  // one per metric
    bool operator==(const Row&) const = default;
  };
  std::vector<std::string> vary_paths;
  std::vector<std::string> metrics;  // check names, then expectation names
  std::vector<Row> rows;             // by increasing run

  std::vector<std::string> Header() const;
};

// The file's bytes: the header, then the rows in their order.
std::string FormatResults(const ResultsTable& table);
// Parses a results.csv; INVALID_ARGUMENT "NAME:LINE: ..." when the header
// is not of the shape above, a row has the wrong number of fields or a
// malformed number, or run indexes repeat. Rows come back sorted by run.
Result<ResultsTable> ParseResults(std::string_view text, std::string_view name);

// Merges tables read from the named files: INVALID_ARGUMENT when the headers
// differ or one run index appears with different contents (naming both
// files); identical duplicates are kept once. Rows sorted by run.
Result<ResultsTable> MergeResults(
    const std::vector<std::pair<std::string, ResultsTable>>& tables);

// Run indexes in [0, last run] absent from `table` (for a warning).
std::vector<uint64_t> MissingRuns(const ResultsTable& table);

// shard.txt: what a sweep run with --shard writes into its --out directory
// after results.csv, once every one of its runs has completed: "shard K/N",
// "runs TOTAL" (the whole sweep's run count) and "sweep ID" (a hash of the
// scenario file's bytes, the seeds, --vary, --set and --duration: the same
// for every shard of one sweep). A sharded run removes it, results.csv and
// summary.csv when it starts, so a directory without it holds a shard that
// did not finish: `--merge` refuses it, and running the shard again
// replaces what it left.
inline constexpr char kShardRecordFile[] = "shard.txt";
struct ShardRecord {
  Shard shard;
  uint64_t runs = 0;
  std::string sweep;  // hex
};
std::string FormatShardRecord(const ShardRecord& record);
// INVALID_ARGUMENT naming `path` for anything FormatShardRecord does not
// write.
Result<ShardRecord> ParseShardRecord(std::string_view text,
                                     const std::string& path);
// Checks that `tables` (results.csv files `tables[i].first`) with their
// shard records are all the shards of one sweep (same shard count, run count
// and sweep id), each complete and each once: INVALID_ARGUMENT naming the
// file otherwise (another sweep's shard, a shard given twice, a run missing
// or foreign, a shard missing).
Status CheckShards(
    const std::vector<std::pair<std::string, ResultsTable>>& tables,
    const std::vector<ShardRecord>& records);

struct MetricStats {
  double mean = 0;
  double p50 = 0;
  double p99 = 0;
};
struct PointSummary {
  std::vector<std::string> vary_values;
  size_t runs = 0;
  size_t passed = 0;
  std::vector<MetricStats> stats;  // one per metric
};
// Groups rows by vary values, in order of first appearance (grid order for
// a sorted table). The mean is summed in row order; NaN sorts above +inf.
std::vector<PointSummary> Summarize(const ResultsTable& table);
// Nearest rank: sorted[ceil(p / 100 * n) - 1]; 0 for an empty vector.
// Requires `sorted` ascending and 0 < p <= 100.
double NearestRank(const std::vector<double>& sorted, double p);

std::string FormatSummaryCsv(const ResultsTable& table,
                             const std::vector<PointSummary>& summary);
// The human table: per grid point a title line with its runs and pass rate,
// then one line per metric with mean, p50 and p99.
void PrintSummaryTable(const ResultsTable& table,
                       const std::vector<PointSummary>& summary,
                       std::ostream& out);

}  // namespace btsim::cli

#endif  // BTSIM_CLI_SWEEP_TABLE_H_
