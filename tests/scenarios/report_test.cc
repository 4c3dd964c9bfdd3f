#include "scenarios/report.h"

#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scenarios/history_file.h"
#include "scenarios/json_printer.h"
#include "scenarios/loader.h"
#include "scenarios/report_json.h"
#include "tests/scenarios/checks_test_util.h"

namespace btsim::scenarios {
namespace {

using checks_test::Builder;
using checks_test::Ms;
namespace v1 = ::btsim::report::v1;

TEST(PhasesTest, LinesCountEachProfileAndClusterOfEachPhase) {
  Builder b;
  b.history().duration = Ms(20'000);
  Event& cut = b.AddEvent(EventKind::kClusterDown, 10'000, "c1");
  cut.label = "c1 down";
  // Phase 1: a-0 through c1 and c2 (the second c1 a separate copy of the
  // text, as a name from another pool would be), and through a second
  // profile; one error.
  b.Read("a-0", "r", "", 1'000, 1'010, "c1");
  b.Read("a-0", "r", "", 2'000, 2'030, "c2");
  b.Read("a-0", "r", "", 3'000, 3'020, "c1").cluster =
      b.history().names->Store("c1");
  b.SetProfile(b.Read("a-0", "r", "", 4'000, 4'040, "c1"), "other");
  b.Op(OpType::kReadRow, "a-0", "r", 5'000, 5'100, "c1",
       StatusCode::kUnavailable);
  // Phase 2: refused by routing (no cluster), then served by c2.
  b.Op(OpType::kReadRow, "a-0", "r", 11'000, 11'010, "",
       StatusCode::kFailedPrecondition);
  b.Read("a-0", "r", "", 12'000, 12'050, "c2");

  const std::vector<PhaseStats> phases = Phases(b.history());
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].label, "start");
  EXPECT_EQ(phases[1].label, "c1 down");
  ASSERT_EQ(phases[0].lines.size(), 3u);
  EXPECT_EQ(phases[0].lines[0].profile, "default");
  EXPECT_EQ(phases[0].lines[0].cluster, "c1");
  EXPECT_EQ(phases[0].lines[0].ops, 3);
  EXPECT_EQ(phases[0].lines[0].errors, 1);
  EXPECT_EQ(phases[0].lines[0].p99, Ms(20));
  EXPECT_EQ(phases[0].lines[1].profile, "default");
  EXPECT_EQ(phases[0].lines[1].cluster, "c2");
  EXPECT_EQ(phases[0].lines[1].ops, 1);
  EXPECT_EQ(phases[0].lines[2].profile, "other");
  EXPECT_EQ(phases[0].lines[2].cluster, "c1");
  EXPECT_EQ(phases[0].lines[2].p50, Ms(40));
  ASSERT_EQ(phases[1].lines.size(), 2u);
  EXPECT_EQ(phases[1].lines[0].cluster, "-");
  EXPECT_EQ(phases[1].lines[0].errors, 1);
  EXPECT_EQ(phases[1].lines[0].ops, 1);
  EXPECT_EQ(phases[1].lines[1].cluster, "c2");
  EXPECT_EQ(phases[1].lines[1].p50, Ms(50));
}

TEST(PhasesTest, ClusterNamesThatAreNotInternedStillCountTogether) {
  // Every operation's cluster name a separate copy of "c1".
  Builder b;
  b.history().duration = Ms(1'000);
  for (int i = 0; i < 20; ++i) {
    b.Read("a-0", "r", "", i * 10, i * 10 + 5, "c1").cluster =
        b.history().names->Store("c1");
  }
  const std::vector<PhaseStats> phases = Phases(b.history());
  ASSERT_EQ(phases.size(), 1u);
  ASSERT_EQ(phases[0].lines.size(), 1u);
  EXPECT_EQ(phases[0].lines[0].cluster, "c1");
  EXPECT_EQ(phases[0].lines[0].ops, 20);
}

// The operations of history.jsonl for `history`: each operation line's
// object (inside {"operation":...}).
std::vector<std::string> HistoryLines(const History& history) {
  LoadedScenario scenario;
  RunOutcome outcome;
  outcome.history = history;
  std::ostringstream out;
  EXPECT_TRUE(WriteHistoryJsonl(scenario, outcome, out).ok());
  std::vector<std::string> lines;
  std::istringstream in(out.str());
  const std::string prefix = "{\"operation\":";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    EXPECT_EQ(line.back(), '}');
    lines.push_back(
        line.substr(prefix.size(), line.size() - prefix.size() - 1));
  }
  return lines;
}

TEST(HistoryJsonlTest, EachLineCarriesTheFieldsOfItsOperation) {
  Builder b;
  b.Write("w-0", "row\xff\"1", "w-0/0", 0, 2, "c1").timestamp =
      cluster::TimestampFromMicros(1'767'225'600'001'000);
  b.Read("r-0", "row2", "", 3, 5, "c2");
  b.Op(OpType::kScan, "r-0", "a", 6, 9, "c2").set_rows(12);
  b.Increment("i-0", "hot", 11, 7, 10, "c1");
  Operation& refused = b.Op(OpType::kCheckAndMutate, "i-0", "hot", 12, 12, "",
                            StatusCode::kFailedPrecondition);
  refused.message = b.history().names->Store("not allowed");
  Operation& in_flight =
      b.Op(OpType::kWrite, "w-0", "r", 13, 13, "c1", StatusCode::kUnknown);
  in_flight.attempts = 0;
  // Timed out, but its write committed (at 17 ms): the line says when.
  b.Write("w-0", "r", "w-0/1", 14, 20, "c1", StatusCode::kDeadlineExceeded);
  const std::vector<std::string> lines = HistoryLines(b.history());
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(
      lines[0],
      "{\"id\":0,\"invoke\":0,\"complete\":0.002,\"client\":\"w-0\","
      "\"profile\":\"default\",\"cluster\":\"c1\",\"table\":\"t\","
      "\"row\":\"row\xc3\xbf\\\"1\",\"op\":\"write\",\"status\":\"OK\","
      "\"attempts\":1,\"written\":\"w-0/0\","
      "\"timestamp_micros\":\"1767225600001000\",\"committed\":0.001,"
      "\"group\":\"w\",\"invoke_nanos\":\"0\",\"complete_nanos\":\"2000000\","
      "\"committed_nanos\":\"1000000\",\"version\":\"1\","
      "\"log_position\":\"0\"}");
  EXPECT_EQ(lines[1],
            "{\"id\":1,\"invoke\":0.003,\"complete\":0.005,\"client\":\"r-0\","
            "\"profile\":\"default\",\"cluster\":\"c2\",\"table\":\"t\","
            "\"row\":\"row2\",\"op\":\"read_row\",\"status\":\"OK\","
            "\"attempts\":1,\"read\":\"\",\"group\":\"r\","
            "\"invoke_nanos\":\"3000000\",\"complete_nanos\":\"5000000\"}");
  EXPECT_NE(lines[2].find("\"op\":\"scan\",\"status\":\"OK\",\"attempts\":1,"
                          "\"rows\":12,"),
            std::string::npos)
      << lines[2];
  EXPECT_NE(lines[3].find("\"op\":\"read_modify_write\",\"status\":\"OK\","
                          "\"attempts\":1,\"counter\":\"11\","
                          "\"committed\":0.008,"),
            std::string::npos)
      << lines[3];
  EXPECT_NE(lines[4].find("\"cluster\":\"\",\"table\":\"t\",\"row\":\"hot\","
                          "\"op\":\"check_and_mutate\",\"status\":"
                          "\"FAILED_PRECONDITION\",\"attempts\":1,"
                          "\"message\":\"not allowed\","),
            std::string::npos)
      << lines[4];
  EXPECT_NE(lines[5].find("\"status\":\"UNKNOWN\",\"attempts\":0,"),
            std::string::npos)
      << lines[5];
  EXPECT_NE(lines[6].find("\"status\":\"DEADLINE_EXCEEDED\""),
            std::string::npos)
      << lines[6];
  EXPECT_NE(lines[6].find("\"committed\":0.017,"), std::string::npos)
      << lines[6];
}

TEST(HistoryJsonlTest, TimesAreRoundedToTheMillisecondAsPrintfRounds) {
  Builder b;
  const auto at = [&](int64_t nanos) {
    Operation& op = b.Op(OpType::kReadRow, "r-0", "r", 0, 0, "c1");
    op.invoke = sim::Duration(nanos);
    op.complete = sim::Duration(nanos);
  };
  at(1'234'499'999);      // 1.234
  at(1'234'500'001);      // 1.235
  at(13'500'000);         // a tie: 0.0135 is stored below itself, so 0.013
  at(14'500'000);         // a tie: 0.0145 is stored above itself, so 0.015
  at(7'000'000'000'000);  // 7000 s
  const std::vector<std::string> lines = HistoryLines(b.history());
  ASSERT_EQ(lines.size(), 5u);
  const char* expected[] = {"1.234", "1.235", "0.013", "0.015", "7000"};
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_NE(lines[i].find(std::string("\"invoke\":") + expected[i] +
                            ",\"complete\":" + expected[i] + ","),
              std::string::npos)
        << lines[i];
  }
}

TEST(HistoryJsonlTest, ManyOperationsKeepTheirOrderAcrossBatches) {
  Builder b;
  for (int i = 0; i < 2500; ++i) {
    b.Read("r-0", "row}" + std::to_string(i), "", i, i + 1, "c1");
  }
  const std::vector<std::string> lines = HistoryLines(b.history());
  ASSERT_EQ(lines.size(), 2500u);
  for (int i = 0; i < 2500; i += 499) {
    EXPECT_EQ(lines[i].rfind("{\"id\":" + std::to_string(i) + ",", 0), 0u)
        << lines[i];
    EXPECT_NE(lines[i].find("\"row\":\"row}" + std::to_string(i) + "\""),
              std::string::npos);
  }
}

TEST(AvailabilityTest, DowntimeCountsOnlyRunsOfFiveBadMinutes) {
  auto loaded = ParseScenario(R"pb(
                                duration { seconds: 720 }
                                instance {
                                  clusters { id: "c1" zone: "us-east1-b" }
                                  clusters { id: "c2" zone: "us-west1-a" }
                                  clusters { id: "c3" zone: "europe-west1-b" }
                                  app_profiles {
                                    id: "pin"
                                    single_cluster { cluster_id: "c1" }
                                  }
                                }
                                tables {
                                  id: "t"
                                  families { name: "cf" }
                                }
                                clients {
                                  name: "a"
                                  workload {
                                    mix { read_row: 1 }
                                    keys { uniform {} }
                                    ops_per_second: 1
                                  }
                                }
                              )pb",
                              "s.textproto");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  Builder b;
  b.history().duration = Ms(720'000);  // 12 minutes
  // 100 reads a minute. Minutes 2-7 (six in a row) fail 10 %; minute 9
  // alone fails 50 %; minute 11 fails 5 % exactly (not more: up).
  for (int minute = 0; minute < 12; ++minute) {
    const int failing = minute >= 2 && minute <= 7 ? 10
                        : minute == 9              ? 50
                        : minute == 11             ? 5
                                                   : 0;
    for (int i = 0; i < 100; ++i) {
      const int64_t at = minute * 60'000 + i * 600;
      b.Op(OpType::kReadRow, "a-0", "r", at, at + 1, "c1",
           i < failing ? StatusCode::kUnavailable : StatusCode::kOk);
    }
  }
  Operation& pinned = b.Read("p-0", "r", "", 1'000, 1'001, "c1");
  b.SetProfile(pinned, "pin");
  const std::vector<ProfileAvailability> found =
      Availability(*loaded, b.history());
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].profile, "default");
  EXPECT_EQ(found[0].target_percent, "99.999");  // three regions
  EXPECT_EQ(found[0].minutes, 12);
  EXPECT_EQ(found[0].downtime_minutes, 6);
  EXPECT_DOUBLE_EQ(found[0].uptime_percent, 50);
  EXPECT_DOUBLE_EQ(found[0].worst_minute_error_rate, 0.5);
  EXPECT_EQ(found[1].profile, "pin");
  EXPECT_EQ(found[1].target_percent, "99.9");
  EXPECT_EQ(found[1].downtime_minutes, 0);
}

TEST(ReportJsonTest, AbsentValuesAreLeftOutAndTheRestIsThere) {
  Builder b;
  b.history().duration = Ms(20'000);
  b.history().settled = sim::Duration(-1);  // replication did not drain
  Event& down = b.AddEvent(EventKind::kClusterDown, 10'000, "c1");
  down.label = "c1 <down>";
  Event& up = b.AddEvent(EventKind::kClusterUp, 15'000, "c1");
  up.end = Ms(15'250);
  // a-0 fails over (errors, then a success on c2); b-0 never recovers.
  b.Read("a-0", "r", "", 9'000, 9'001, "c1");
  b.Op(OpType::kReadRow, "a-0", "r", 10'000, 10'100, "c1",
       StatusCode::kUnavailable);
  b.Op(OpType::kReadRow, "a-0", "r", 10'200, 10'300, "c1",
       StatusCode::kDeadlineExceeded);
  b.Read("a-0", "r", "", 10'400, 10'450, "c2");
  b.Op(OpType::kReadRow, "b-0", "r", 10'000, 10'100, "c1",
       StatusCode::kUnavailable);
  b.Cluster("c1", "abc");
  b.Cluster("c2", "abc");

  RunOutcome outcome;
  outcome.scenario = "s";
  outcome.seed = 42;
  outcome.history = std::move(b.history());
  outcome.client_ops = 5;
  outcome.expectations.push_back({"rto", "RTO_SECONDS",
                                  std::numeric_limits<double>::infinity(),
                                  "<= 1", false, "b-0 never recovered"});
  outcome.checks.push_back({"lost_writes", 0, "none"});
  outcome.checks.push_back({"ratio", 1.0 / 3, ""});
  outcome.k_staleness.reads = 2;
  outcome.k_staleness.at_most = {1, 2};
  outcome.k_staleness.max = 1;
  outcome.visibility.push_back(
      {"c1", "c2", {Ms(0), Ms(5)}, {-1, 0.75}, {0, 4}});
  Failback a;
  a.client = "a-0";
  a.home = "c1";
  a.repaired = Ms(15'000);
  a.length = Ms(97);
  outcome.failbacks.push_back(a);
  Failback never_repaired;
  never_repaired.client = "b-0";
  never_repaired.home = "c1";
  outcome.failbacks.push_back(never_repaired);
  LoadedScenario scenario;
  scenario.path = "s.textproto";

  const v1::Report r = ReportMessage(scenario, outcome);
  EXPECT_EQ(r.seed(), 42u);
  EXPECT_EQ(r.duration_seconds(), 20);
  EXPECT_FALSE(r.has_settled_seconds());
  ASSERT_EQ(r.expectations_size(), 1);
  EXPECT_FALSE(r.expectations(0).has_value());
  EXPECT_EQ(r.expectations(0).detail(), "b-0 never recovered");
  ASSERT_EQ(r.checks_size(), 2);
  EXPECT_TRUE(r.checks(0).has_value());
  EXPECT_EQ(r.checks(0).value(), 0);
  EXPECT_EQ(r.checks(1).value(), 0.333333);
  ASSERT_EQ(r.events_size(), 2);
  EXPECT_FALSE(r.events(0).has_end());
  EXPECT_EQ(r.events(1).end(), 15.25);
  ASSERT_EQ(r.failover_size(), 1);
  const v1::FaultFailover& fault = r.failover(0);
  EXPECT_EQ(fault.fault_at(), 10);
  EXPECT_EQ(fault.fault(), "c1 <down>");
  ASSERT_EQ(fault.clients_size(), 2);
  const v1::ClientFailover& fa = fault.clients(0);
  EXPECT_EQ(fa.client(), "a-0");
  EXPECT_EQ(fa.rto_seconds(), 0.45);
  // From its first failure's end (10.1 s) to its first success's (10.45 s).
  EXPECT_EQ(fa.error_window_seconds(), 0.35);
  EXPECT_TRUE(fa.recovered());
  EXPECT_EQ(fa.errors().at("UNAVAILABLE"), 1u);
  EXPECT_EQ(fa.errors().at("DEADLINE_EXCEEDED"), 1u);
  EXPECT_EQ(fa.home(), "c1");
  EXPECT_EQ(fa.repaired_at(), 15);
  EXPECT_EQ(fa.failback_seconds(), 0.097);
  EXPECT_TRUE(fa.failed_back());
  const v1::ClientFailover& fb = fault.clients(1);
  EXPECT_FALSE(fb.has_rto_seconds());
  EXPECT_FALSE(fb.has_error_window_seconds());
  EXPECT_FALSE(fb.recovered());
  EXPECT_TRUE(fb.has_home());
  EXPECT_FALSE(fb.has_repaired_at());
  EXPECT_FALSE(fb.has_failback_seconds());
  EXPECT_TRUE(fb.has_failed_back());
  EXPECT_FALSE(fb.failed_back());
  EXPECT_EQ(r.k_staleness().at_most_size(), 2);
  ASSERT_EQ(r.t_visibility_size(), 1);
  EXPECT_FALSE(r.t_visibility(0).points(0).has_p());
  EXPECT_EQ(r.t_visibility(0).points(1).p(), 0.75);
  EXPECT_EQ(r.t_visibility(0).points(1).t(), 0.005);
  ASSERT_EQ(r.clusters_size(), 2);
  EXPECT_EQ(r.clusters(1).digest(), "abc");

  // The file: indented JSON, absent values left out, the rest all there.
  std::ostringstream out;
  ASSERT_TRUE(WriteReportJson(scenario, outcome, out).ok());
  const std::string json = out.str();
  EXPECT_EQ(
      json.rfind("{\n \"scenario\": \"s\",\n \"file\": \"s.textproto\",", 0),
      0u)
      << json;
  EXPECT_EQ(json.substr(json.size() - 3), "\n}\n");
  EXPECT_NE(json.find("\"seed\": \"42\""), std::string::npos);
  EXPECT_EQ(json.find("settled_seconds"), std::string::npos);
  EXPECT_EQ(json.find("null"), std::string::npos);
  EXPECT_NE(json.find("\"description\": \"\""), std::string::npos);
  EXPECT_NE(json.find("\"replication\": []"), std::string::npos);
}

}  // namespace
}  // namespace btsim::scenarios
