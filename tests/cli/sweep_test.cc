#include <algorithm>
#include <cmath>
#include <csignal>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/fork_pool.h"
#include "cli/sweep_table.h"

namespace btsim::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// --- flags ---------------------------------------------------------------

TEST(ParseSeedsTest, AcceptsRangesAndSingleSeeds) {
  auto range = ParseSeeds("3..7");
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->first, 3u);
  EXPECT_EQ(range->last, 7u);
  EXPECT_EQ(range->count(), 5u);
  auto one = ParseSeeds("42");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->first, 42u);
  EXPECT_EQ(one->count(), 1u);
}

TEST(ParseSeedsTest, RejectsMalformedRanges) {
  for (const char* bad :
       {"", "..", "1..", "..5", "a..b", "5..3", "0..3", "-1..3", "1...3",
        "1..2..3", "+1..3", " 1..3", "1..99999999999999999999"}) {
    auto parsed = ParseSeeds(bad);
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << bad;
    if (!parsed.ok()) {
      EXPECT_THAT(parsed.status().message(), HasSubstr("--seeds")) << bad;
    }
  }
  EXPECT_THAT(ParseSeeds("0..3").status().message(), HasSubstr("seed 0"));
  EXPECT_THAT(ParseSeeds("5..3").status().message(), HasSubstr("smaller"));
}

TEST(ParseShardTest, AcceptsKOfN) {
  auto shard = ParseShard("1/3");
  ASSERT_TRUE(shard.ok());
  EXPECT_EQ(shard->index, 1u);
  EXPECT_EQ(shard->count, 3u);
  EXPECT_TRUE(shard->Contains(4));
  EXPECT_FALSE(shard->Contains(5));
  EXPECT_TRUE(ParseShard("0/1").ok());
}

TEST(ParseShardTest, RejectsOutOfRangeAndMalformedShards) {
  for (const char* bad : {"", "1", "/", "1/", "/2", "2/2", "3/2", "0/0", "-1/2",
                          "a/b", "1/2/3"}) {
    EXPECT_EQ(ParseShard(bad).status().code(), StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_THAT(ParseShard("2/2").status().message(),
              HasSubstr("K must be smaller than N"));
}

TEST(ParseVaryTest, SplitsPathAndValues) {
  auto vary = ParseVary("clients[0].workload.ops_per_second=50,100,200");
  ASSERT_TRUE(vary.ok());
  EXPECT_EQ(vary->path, "clients[0].workload.ops_per_second");
  EXPECT_THAT(vary->values, ElementsAre("50", "100", "200"));
  // Only the first '=' separates the path.
  auto eq = ParseVary("name=a=b,c");
  ASSERT_TRUE(eq.ok());
  EXPECT_THAT(eq->values, ElementsAre("a=b", "c"));
}

TEST(ParseVaryTest, RejectsEmptyAndRepeatedValues) {
  for (const char* bad : {"", "path", "=1,2", "path=", "path=1,,2", "path=1,",
                          "path=,1", "path=1,1"}) {
    auto vary = ParseVary(bad);
    EXPECT_EQ(vary.status().code(), StatusCode::kInvalidArgument) << bad;
    if (!vary.ok()) {
      EXPECT_THAT(vary.status().message(), HasSubstr("--vary")) << bad;
    }
  }
  EXPECT_THAT(ParseVary("p=1,1").status().message(), HasSubstr("twice"));
}

// --- grid ----------------------------------------------------------------

TEST(SweepGridTest, IsTheCartesianProductGridPointMajorSeedMinor) {
  auto grid = SweepGrid::Create(
      {Vary{"a", {"1", "2"}}, Vary{"b", {"x", "y", "z"}}}, SeedRange{5, 6});
  ASSERT_TRUE(grid.ok());
  EXPECT_EQ(grid->point_count(), 6u);
  EXPECT_EQ(grid->run_count(), 12u);
  EXPECT_THAT(grid->paths(), ElementsAre("a", "b"));
  // The last --vary changes fastest.
  EXPECT_THAT(grid->PointValues(0), ElementsAre("1", "x"));
  EXPECT_THAT(grid->PointValues(1), ElementsAre("1", "y"));
  EXPECT_THAT(grid->PointValues(2), ElementsAre("1", "z"));
  EXPECT_THAT(grid->PointValues(3), ElementsAre("2", "x"));
  EXPECT_THAT(grid->PointValues(5), ElementsAre("2", "z"));
  EXPECT_EQ(grid->PointLabel(4), "a=2, b=y");
  const SweepRun r0 = grid->Run(0);
  EXPECT_EQ(r0.point, 0u);
  EXPECT_EQ(r0.seed, 5u);
  const SweepRun r1 = grid->Run(1);
  EXPECT_EQ(r1.point, 0u);
  EXPECT_EQ(r1.seed, 6u);
  const SweepRun r7 = grid->Run(7);
  EXPECT_EQ(r7.point, 3u);
  EXPECT_EQ(r7.seed, 6u);
  EXPECT_EQ(r7.index, 7u);
}

TEST(SweepGridTest, WithoutVariesHasOnePoint) {
  auto grid = SweepGrid::Create({}, SeedRange{1, 4});
  ASSERT_TRUE(grid.ok());
  EXPECT_EQ(grid->point_count(), 1u);
  EXPECT_EQ(grid->run_count(), 4u);
  EXPECT_TRUE(grid->PointValues(0).empty());
  EXPECT_EQ(grid->PointLabel(0), "(no --vary)");
}

TEST(SweepGridTest, ShardsPartitionTheRuns) {
  auto grid = SweepGrid::Create({Vary{"a", {"1", "2", "3"}}}, SeedRange{1, 3});
  ASSERT_TRUE(grid.ok());
  std::vector<uint64_t> seen;
  for (uint64_t k = 0; k < 4; ++k) {
    for (const SweepRun& run : grid->ShardRuns(Shard{k, 4})) {
      EXPECT_EQ(run.index % 4, k);
      seen.push_back(run.index);
    }
  }
  std::sort(seen.begin(), seen.end());
  ASSERT_EQ(seen.size(), 9u);
  for (uint64_t i = 0; i < 9; ++i) EXPECT_EQ(seen[i], i);
  EXPECT_EQ(grid->ShardRuns(Shard{0, 1}).size(), 9u);
  EXPECT_TRUE(grid->ShardRuns(Shard{10, 20}).empty());
}

TEST(SweepGridTest, RejectsDuplicatePathsAndHugeGrids) {
  EXPECT_THAT(
      SweepGrid::Create({Vary{"a", {"1"}}, Vary{"a", {"2"}}}, SeedRange{1, 1})
          .status()
          .message(),
      HasSubstr("given twice"));
  EXPECT_EQ(
      SweepGrid::Create({Vary{"a", {"1", "2"}}}, SeedRange{1, kMaxSweepRuns})
          .status()
          .code(),
      StatusCode::kInvalidArgument);
}

// --- CSV -----------------------------------------------------------------

TEST(CsvTest, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("clients[0].workload.ops_per_second"),
            "clients[0].workload.ops_per_second");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\r"), "\"cr\r\"");
  EXPECT_EQ(CsvField(" padded"), "\" padded\"");
  EXPECT_EQ(CsvRecord({"a", "b,c", ""}), "a,\"b,c\",\n");
}

TEST(CsvTest, ParseInvertsRecords) {
  const std::vector<std::vector<std::string>> records = {
      {"run", "p99 latency, ms", "quote\"d"},
      {"", "two\nlines", " x "},
      {"only"},
      {""},
  };
  std::string text;
  for (const auto& record : records) text += CsvRecord(record);
  auto parsed = ParseCsv(text, "t.csv");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(*parsed, records);
}

TEST(CsvTest, ParseAcceptsCrLfAndAMissingFinalNewline) {
  auto parsed = ParseCsv("a,b\r\n\"c\",d", "t.csv");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed,
            (std::vector<std::vector<std::string>>{{"a", "b"}, {"c", "d"}}));
  auto trailing = ParseCsv("a,", "t.csv");
  ASSERT_TRUE(trailing.ok());
  EXPECT_EQ(*trailing, (std::vector<std::vector<std::string>>{{"a", ""}}));
  EXPECT_TRUE(ParseCsv("", "t.csv")->empty());
}

TEST(CsvTest, ParseRejectsBrokenQuotes) {
  EXPECT_THAT(ParseCsv("a\n\"open", "t.csv").status().message(),
              HasSubstr("t.csv:2: unterminated"));
  EXPECT_THAT(ParseCsv("\"a\"b", "t.csv").status().message(),
              HasSubstr("after a closing quote"));
  EXPECT_THAT(ParseCsv("a\"b", "t.csv").status().message(),
              HasSubstr("quote inside"));
}

TEST(NumberTest, RoundTripsShortestText) {
  EXPECT_EQ(FormatNumber(0), "0");
  EXPECT_EQ(FormatNumber(1), "1");
  EXPECT_EQ(FormatNumber(7924), "7924");
  EXPECT_EQ(FormatNumber(0.00342706), "0.00342706");
  EXPECT_EQ(FormatNumber(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(FormatNumber(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatNumber(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(FormatNumber(std::nan("")), "nan");
  for (double v : {0.0, 1.5, 1e-300, 123456789.125, 0.1 + 0.2}) {
    EXPECT_EQ(*ParseNumber(FormatNumber(v)), v);
  }
  EXPECT_TRUE(std::isinf(*ParseNumber("inf")));
  EXPECT_TRUE(std::isnan(*ParseNumber("nan")));
  for (const char* bad : {"", "1x", "x", "1 ", " 1"}) {
    EXPECT_FALSE(ParseNumber(bad).ok()) << bad;
  }
}

// --- results.csv ---------------------------------------------------------

ResultsTable MakeTable() {
  ResultsTable table;
  table.vary_paths = {"clients[0].workload.ops_per_second"};
  table.metrics = {"converged", "tiny RTO, p99"};
  table.rows = {
      {0, 1, {"50"}, "aa", true, {1, 0.25}},
      {1, 2, {"50"}, "bb", false, {1, 0.75}},
      {2, 1, {"100"}, "cc", true, {1, 0.5}},
      {3, 2, {"100"}, "dd", true, {0, std::numeric_limits<double>::infinity()}},
  };
  return table;
}

TEST(ResultsTest, FormatsHeaderAndRows) {
  EXPECT_EQ(FormatResults(MakeTable()),
            "run,seed,clients[0].workload.ops_per_second,fingerprint,passed,"
            "converged,\"tiny RTO, p99\"\n"
            "0,1,50,aa,1,1,0.25\n"
            "1,2,50,bb,0,1,0.75\n"
            "2,1,100,cc,1,1,0.5\n"
            "3,2,100,dd,1,0,inf\n");
}

TEST(ResultsTest, ParseInvertsFormat) {
  const ResultsTable table = MakeTable();
  auto parsed = ParseResults(FormatResults(table), "r.csv");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->vary_paths, table.vary_paths);
  EXPECT_EQ(parsed->metrics, table.metrics);
  EXPECT_EQ(parsed->rows, table.rows);
  EXPECT_EQ(FormatResults(*parsed), FormatResults(table));
}

TEST(ResultsTest, ParseSortsRowsByRun) {
  auto parsed = ParseResults(
      "run,seed,fingerprint,passed,x\n2,3,f,1,0\n0,1,f,1,0\n", "r.csv");
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->rows.size(), 2u);
  EXPECT_EQ(parsed->rows[0].run, 0u);
  EXPECT_EQ(parsed->rows[1].run, 2u);
  EXPECT_TRUE(parsed->vary_paths.empty());
}

TEST(ResultsTest, ParseRejectsMalformedFiles) {
  const struct {
    const char* text;
    const char* error;
  } cases[] = {
      {"", "r.csv:1: empty"},
      {"a,b,c\n", "r.csv:1: not a results.csv header"},
      {"run,seed,fingerprint\n", "not a results.csv header"},
      {"run,seed,fingerprint,passed\n0,1,f,1,9\n", "r.csv:2: 5 fields"},
      {"run,seed,fingerprint,passed,x\nz,1,f,1,0\n", "run: 'z'"},
      {"run,seed,fingerprint,passed,x\n0,1,f,yes,0\n", "passed: 'yes'"},
      {"run,seed,fingerprint,passed,x\n0,1,f,1,fast\n", "r.csv:2: x: 'fast'"},
      {"run,seed,fingerprint,passed,x\n0,1,f,1,0\n0,1,f,1,0\n",
       "r.csv:3: run 0 appears twice"},
  };
  for (const auto& c : cases) {
    auto parsed = ParseResults(c.text, "r.csv");
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr(c.error)) << c.text;
  }
}

// --- merge ---------------------------------------------------------------

TEST(MergeTest, CombinesShardsIntoTheUnshardedTable) {
  const ResultsTable full = MakeTable();
  ResultsTable even = full;
  ResultsTable odd = full;
  even.rows = {full.rows[0], full.rows[2]};
  odd.rows = {full.rows[1], full.rows[3]};
  auto merged = MergeResults({{"b/results.csv", odd}, {"a/results.csv", even}});
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  EXPECT_EQ(FormatResults(*merged), FormatResults(full));
  EXPECT_TRUE(MissingRuns(*merged).empty());
}

// --- shard records ---------------------------------------------------------

TEST(ShardRecordTest, ParseInvertsFormat) {
  const ShardRecord record{{3, 20}, 1000, "00ff"};
  EXPECT_EQ(FormatShardRecord(record), "shard 3/20\nruns 1000\nsweep 00ff\n");
  auto parsed = ParseShardRecord(FormatShardRecord(record), "d/shard.txt");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->shard.index, 3u);
  EXPECT_EQ(parsed->shard.count, 20u);
  EXPECT_EQ(parsed->runs, 1000u);
  EXPECT_EQ(parsed->sweep, "00ff");
  for (const char* bad :
       {"", "shard 3/20\n", "shard 3/20\nruns 10\nsweep ab",
        "shard 3/20\nruns 10\n", "shard 20/3\nruns 10\nsweep ab\n",
        "shard 1/2\nruns x\nsweep ab\n", "shard 1/2\nruns 10\nsweep \n",
        "shard 1/2\nruns 10\nsweep ab\nmore\n",
        "runs 10\nshard 1/2\nsweep ab\n"}) {
    auto refused = ParseShardRecord(bad, "d/shard.txt");
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_THAT(refused.status().message(), HasSubstr("d/shard.txt")) << bad;
  }
}

TEST(CheckShardsTest, AcceptsEveryShardOnceAndComplete) {
  const ResultsTable full = MakeTable();  // runs 0..3
  ResultsTable even = full, odd = full;
  even.rows = {full.rows[0], full.rows[2]};
  odd.rows = {full.rows[1], full.rows[3]};
  EXPECT_TRUE(CheckShards({{"b", odd}, {"a", even}},
                          {{{1, 2}, 4, "s"}, {{0, 2}, 4, "s"}})
                  .ok());
}

TEST(CheckShardsTest, RefusesIncompleteMissingDuplicatedAndForeignShards) {
  const ResultsTable full = MakeTable();
  ResultsTable even = full, odd = full, short_odd = full;
  even.rows = {full.rows[0], full.rows[2]};
  odd.rows = {full.rows[1], full.rows[3]};
  short_odd.rows = {full.rows[1]};
  const struct {
    std::vector<std::pair<std::string, ResultsTable>> tables;
    std::vector<ShardRecord> records;
    const char* error;
  } cases[] = {
      {{{"a", even}, {"b", short_odd}},
       {{{0, 2}, 4, "s"}, {{1, 2}, 4, "s"}},
       "b: shard 1 is incomplete: run 3 is missing"},
      {{{"a", even}}, {{{0, 2}, 4, "s"}}, "shard 1/2 is missing"},
      {{{"a", even}, {"c", even}},
       {{{0, 2}, 4, "s"}, {{0, 2}, 4, "s"}},
       "c: shard 0 given twice (also a)"},
      {{{"a", even}, {"b", odd}},
       {{{0, 2}, 4, "s"}, {{1, 3}, 4, "s"}},
       "b: shard 1/3 of 4 runs is not of the same sweep as a"},
      {{{"a", even}, {"b", even}},
       {{{0, 2}, 4, "s"}, {{1, 2}, 4, "s"}},
       "b: shard 1/2 holds run 0, expected run 1"},
      {{{"a", even}, {"b", odd}},
       {{{0, 2}, 3, "s"}, {{1, 2}, 3, "s"}},
       "holds run 3, beyond its runs"},
      {{{"a", even}, {"b", odd}},
       {{{0, 2}, 4, "seeds 1..2"}, {{1, 2}, 4, "seeds 3..4"}},
       "b: shard 1/2 of 4 runs is not of the same sweep as a"},
  };
  for (const auto& c : cases) {
    const Status status = CheckShards(c.tables, c.records);
    ASSERT_FALSE(status.ok()) << c.error;
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr(c.error));
  }
}

TEST(MergeTest, KeepsIdenticalDuplicatesOnce) {
  const ResultsTable full = MakeTable();
  auto merged = MergeResults({{"a", full}, {"b", full}});
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->rows.size(), full.rows.size());
}

TEST(MergeTest, RejectsConflictingRows) {
  const ResultsTable full = MakeTable();
  ResultsTable other = full;
  other.rows = {full.rows[1]};
  other.rows[0].fingerprint = "different";
  auto merged =
      MergeResults({{"a/results.csv", full}, {"b/results.csv", other}});
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(merged.status().message(),
              HasSubstr("run 1 differs between a/results.csv and "
                        "b/results.csv"));
  // A value differing only in a metric is a conflict too; NaN equals NaN.
  ResultsTable nan = full;
  nan.rows = {full.rows[0]};
  nan.rows[0].values[1] = std::nan("");
  ResultsTable nan2 = nan;
  EXPECT_TRUE(MergeResults({{"a", nan}, {"b", nan2}}).ok());
  EXPECT_FALSE(MergeResults({{"a", full}, {"b", nan}}).ok());
}

TEST(MergeTest, RejectsDifferentHeaders) {
  const ResultsTable full = MakeTable();
  ResultsTable other = full;
  other.metrics[1] = "another";
  auto merged =
      MergeResults({{"a/results.csv", full}, {"b/results.csv", other}});
  ASSERT_FALSE(merged.ok());
  EXPECT_THAT(merged.status().message(),
              HasSubstr("b/results.csv: header differs"));
  EXPECT_FALSE(MergeResults({}).ok());
}

TEST(MergeTest, ReportsMissingRuns) {
  ResultsTable table = MakeTable();
  table.rows = {table.rows[1], table.rows[3]};
  EXPECT_THAT(MissingRuns(table), ElementsAre(0u, 2u));
}

// --- summary -------------------------------------------------------------

TEST(SummaryTest, NearestRankPercentiles) {
  EXPECT_EQ(NearestRank({}, 50), 0);
  EXPECT_EQ(NearestRank({7}, 99), 7);
  const std::vector<double> four = {1, 2, 3, 4};
  EXPECT_EQ(NearestRank(four, 50), 2);
  EXPECT_EQ(NearestRank(four, 99), 4);
  EXPECT_EQ(NearestRank(four, 100), 4);
  EXPECT_EQ(NearestRank(four, 25), 1);
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_EQ(NearestRank(hundred, 99), 99);
  EXPECT_EQ(NearestRank(hundred, 50), 50);
}

TEST(SummaryTest, GroupsByGridPointInOrder) {
  const std::vector<PointSummary> summary = Summarize(MakeTable());
  ASSERT_EQ(summary.size(), 2u);
  EXPECT_THAT(summary[0].vary_values, ElementsAre("50"));
  EXPECT_EQ(summary[0].runs, 2u);
  EXPECT_EQ(summary[0].passed, 1u);
  EXPECT_EQ(summary[0].stats[0].mean, 1);
  EXPECT_EQ(summary[0].stats[1].mean, 0.5);
  EXPECT_EQ(summary[0].stats[1].p50, 0.25);
  EXPECT_EQ(summary[0].stats[1].p99, 0.75);
  EXPECT_THAT(summary[1].vary_values, ElementsAre("100"));
  EXPECT_EQ(summary[1].passed, 2u);
  EXPECT_EQ(summary[1].stats[0].mean, 0.5);
  EXPECT_EQ(summary[1].stats[0].p50, 0);
  EXPECT_TRUE(std::isinf(summary[1].stats[1].mean));
  EXPECT_EQ(summary[1].stats[1].p50, 0.5);
  EXPECT_TRUE(std::isinf(summary[1].stats[1].p99));
}

TEST(SummaryTest, NanSortsAboveInfinity) {
  ResultsTable table;
  table.metrics = {"m"};
  table.rows = {{0, 1, {}, "f", true, {std::nan("")}},
                {1, 2, {}, "f", true, {2}},
                {2, 3, {}, "f", true, {1}}};
  const std::vector<PointSummary> summary = Summarize(table);
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0].stats[0].p50, 2);
  EXPECT_TRUE(std::isnan(summary[0].stats[0].p99));
}

TEST(SummaryTest, FormatsSummaryCsv) {
  const ResultsTable table = MakeTable();
  EXPECT_EQ(FormatSummaryCsv(table, Summarize(table)),
            "clients[0].workload.ops_per_second,column,runs,pass_rate,mean,"
            "p50,p99\n"
            "50,converged,2,0.5,1,1,1\n"
            "50,\"tiny RTO, p99\",2,0.5,0.5,0.25,0.75\n"
            "100,converged,2,1,0.5,0,1\n"
            "100,\"tiny RTO, p99\",2,1,inf,0.5,inf\n");
}

TEST(SummaryTest, PrintsOneBlockPerGridPoint) {
  const ResultsTable table = MakeTable();
  std::ostringstream out;
  PrintSummaryTable(table, Summarize(table), out);
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("clients[0].workload.ops_per_second=50: 2 runs, "
                              "1 passed (pass rate 50.0%)"));
  EXPECT_THAT(text, HasSubstr("clients[0].workload.ops_per_second=100: 2 "
                              "runs, 2 passed (pass rate 100.0%)"));
  EXPECT_THAT(text, HasSubstr("tiny RTO, p99"));
  EXPECT_THAT(text, HasSubstr("mean"));
}

// --- fork pool -----------------------------------------------------------

TEST(ForkEachTest, ReturnsEachChildsAnswerInOrder) {
  std::vector<size_t> done;
  auto answers = ForkEach(
      7, 3,
      [](size_t i) -> Result<std::string> {
        if (i == 4) return InvalidArgument("four is bad");
        return std::string(i * 3000, 'x') + std::to_string(i);
      },
      [&done](size_t i) { done.push_back(i); });
  ASSERT_TRUE(answers.ok()) << answers.status().message();
  ASSERT_EQ(answers->size(), 7u);
  for (size_t i = 0; i < 7; ++i) {
    if (i == 4) {
      EXPECT_EQ((*answers)[i].status().code(), StatusCode::kInvalidArgument);
      EXPECT_EQ((*answers)[i].status().message(), "four is bad");
      continue;
    }
    ASSERT_TRUE((*answers)[i].ok());
    EXPECT_EQ(*(*answers)[i], std::string(i * 3000, 'x') + std::to_string(i));
  }
  std::sort(done.begin(), done.end());
  EXPECT_THAT(done, ElementsAre(0, 1, 2, 3, 4, 5, 6));
}

TEST(ForkEachTest, ReportsAChildThatCrashed) {
  auto answers = ForkEach(2, 2, [](size_t i) -> Result<std::string> {
    if (i == 1) std::raise(SIGKILL);
    return std::string("fine");
  });
  ASSERT_TRUE(answers.ok());
  EXPECT_EQ(*(*answers)[0], "fine");
  EXPECT_EQ((*answers)[1].status().code(), StatusCode::kInternal);
  EXPECT_THAT((*answers)[1].status().message(), HasSubstr("signal"));
}

TEST(ForkEachTest, ChildrenDoNotShareTheParentsMemory) {
  int counter = 0;
  auto answers = ForkEach(3, 1, [&counter](size_t) -> Result<std::string> {
    return std::to_string(++counter);
  });
  ASSERT_TRUE(answers.ok());
  for (const auto& answer : *answers) EXPECT_EQ(*answer, "1");
  EXPECT_EQ(counter, 0);
}

}  // namespace
}  // namespace btsim::cli
