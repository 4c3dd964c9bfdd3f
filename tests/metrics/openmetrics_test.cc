// OpenMetricsRecorder: the exact text for a tiny hand-made registry, and a
// tiny scenario run sampled in virtual time.
#include "metrics/openmetrics.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "metrics/instance_metrics.h"
#include "scenarios/history.h"
#include "scenarios/loader.h"
#include "scenarios/runner.h"

namespace btsim::metrics {
namespace {

constexpr sim::Time kT1{std::chrono::seconds(1767225600)};
constexpr sim::Time kT2 = kT1 + std::chrono::milliseconds(1500);

// The golden text; each line's construction is explained in openmetrics.h.
constexpr char kGolden[] =
    R"(# HELP demo_requests Requests served.
# TYPE demo_requests counter
demo_requests_total{path="/a"} 1 1767225600
demo_requests_total{path="/a"} 4 1767225601.5
demo_requests_total{path="/b"} 2 1767225601.5
# HELP demo_temperature_celsius A \"quoted\" help\nover two lines \\ with a backslash.
# TYPE demo_temperature_celsius gauge
demo_temperature_celsius{room="a\\b\"c\nd"} 21.5 1767225600
demo_temperature_celsius{room="a\\b\"c\nd"} -3.25 1767225601.5
demo_temperature_celsius{room="x"} 0.1 1767225600
# TYPE demo_latency_seconds histogram
demo_latency_seconds_bucket{le="0.5"} 1 1767225600
demo_latency_seconds_bucket{le="1"} 1 1767225600
demo_latency_seconds_bucket{le="+Inf"} 1 1767225600
demo_latency_seconds_count 1 1767225600
demo_latency_seconds_sum 0.25 1767225600
demo_latency_seconds_bucket{le="0.5"} 1 1767225601.5
demo_latency_seconds_bucket{le="1"} 1 1767225601.5
demo_latency_seconds_bucket{le="+Inf"} 2 1767225601.5
demo_latency_seconds_count 2 1767225601.5
demo_latency_seconds_sum 2.25 1767225601.5
# EOF
)";

std::string Golden() {
  prometheus::Registry registry;
  auto& requests = prometheus::BuildCounter()
                       .Name("demo_requests_total")
                       .Help("Requests served.")
                       .Register(registry);
  auto& temperature =
      prometheus::BuildGauge()
          .Name("demo_temperature_celsius")
          .Help("A \"quoted\" help\nover two lines \\ with a backslash.")
          .Register(registry);
  auto& latency = prometheus::BuildHistogram()
                      .Name("demo_latency_seconds")
                      .Register(registry);
  prometheus::Counter& a = requests.Add({{"path", "/a"}});
  prometheus::Gauge& escaped = temperature.Add({{"room", "a\\b\"c\nd"}});
  prometheus::Gauge& x = temperature.Add({{"room", "x"}});
  prometheus::Histogram& h = latency.Add({}, std::vector<double>{0.5, 1});

  OpenMetricsRecorder recorder;
  a.Increment();
  escaped.Set(21.5);
  x.Set(0.1);
  h.Observe(0.25);
  recorder.Record(registry, kT1);

  a.Increment(3);
  requests.Add({{"path", "/b"}}).Increment(2);  // a series appears
  escaped.Set(-3.25);
  temperature.Remove(&x);  // and one disappears
  h.Observe(2);
  recorder.Record(registry, kT2 + std::chrono::microseconds(999));
  EXPECT_EQ(recorder.snapshots(), 2);

  std::ostringstream out;
  recorder.Write(out);
  return out.str();
}

TEST(OpenMetricsTest, GoldenTextOfATinyRegistry) {
  EXPECT_EQ(Golden(), kGolden);
}

TEST(OpenMetricsTest, ARepeatedTimeKeepsTheNewerValues) {
  prometheus::Registry registry;
  auto& g = prometheus::BuildGauge().Name("g").Register(registry).Add({});
  OpenMetricsRecorder recorder;
  g.Set(1);
  recorder.Record(registry, kT1);
  g.Set(2);
  recorder.Record(registry, kT1 + std::chrono::microseconds(10));
  g.Set(1e300);
  recorder.Record(registry, kT2);
  std::ostringstream out;
  recorder.Write(out);
  EXPECT_EQ(out.str(),
            "# TYPE g gauge\n"
            "g 2 1767225600\n"
            "g 1e+300 1767225601.5\n"
            "# EOF\n");
}

TEST(OpenMetricsTest, NothingRecordedIsJustEof) {
  std::ostringstream out;
  OpenMetricsRecorder().Write(out);
  EXPECT_EQ(out.str(), "# EOF\n");
}

// When promtool is installed, the golden text backfills into a TSDB.
TEST(OpenMetricsTest, PromtoolAcceptsTheGoldenText) {
  const char* promtool = "/usr/bin/promtool";
  if (!std::filesystem::exists(promtool)) {
    GTEST_SKIP() << "promtool not installed";
  }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("btsim-om-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    std::ofstream file(dir / "metrics.om");
    file << kGolden;
  }
  const std::string command = std::string(promtool) +
                              " tsdb create-blocks-from openmetrics " +
                              (dir / "metrics.om").string() + " " +
                              (dir / "tsdb").string() + " >/dev/null 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  int blocks = 0;
  if (std::filesystem::exists(dir / "tsdb")) {
    for (const auto& entry :
         std::filesystem::directory_iterator(dir / "tsdb")) {
      blocks += std::filesystem::exists(entry.path() / "meta.json");
    }
  }
  EXPECT_EQ(blocks, 1);
  std::filesystem::remove_all(dir);
}

constexpr char kTinyScenario[] = R"(
name: "tiny"
seed: 7
duration { seconds: 5 }
instance {
  clusters { id: "c1" zone: "us-east1-b" nodes: 1 }
  clusters { id: "c2" zone: "us-west1-a" nodes: 1 }
  app_profiles { id: "east" single_cluster { cluster_id: "c1" } }
}
tables {
  id: "events"
  families { name: "cf" gc_rule { max_num_versions: 1 } }
}
clients {
  name: "writer"
  count: 1
  zone: "us-east1-b"
  app_profile: "east"
  workload {
    mix { read_row: 20 write: 80 }
    keys { uniform {} entities: 50 }
    ops_per_second: 50
  }
}
)";

// Runs the tiny scenario with metrics sampled every second; the text.
std::string RunTiny() {
  auto loaded = scenarios::ParseScenario(kTinyScenario, "tiny.textproto");
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return "";
  prometheus::Registry registry;
  InstanceMetrics metrics(registry, loaded->name);
  OpenMetricsRecorder recorder;
  scenarios::RunOptions options;
  options.observers.push_back(&metrics);
  options.sample_every = std::chrono::seconds(1);
  options.on_sample = [&](sim::Time now, instance::Instance& instance) {
    metrics.Sample(instance);
    recorder.Record(registry, now);
  };
  auto outcome = scenarios::RunScenario(*loaded, options);
  EXPECT_TRUE(outcome.ok()) << outcome.status().ToString();
  std::ostringstream out;
  recorder.Write(out);
  return out.str();
}

TEST(OpenMetricsTest, ATinyRunIsSampledEverySecondFromTheEpoch) {
  const std::string text = RunTiny();
  ASSERT_FALSE(text.empty());
  ASSERT_GE(text.size(), 6u);
  EXPECT_EQ(text.substr(text.size() - 6), "# EOF\n");
  std::set<int64_t> seconds;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::string stamp = line.substr(line.rfind(' ') + 1);
    ASSERT_EQ(stamp.find('.'), std::string::npos) << line;
    seconds.insert(std::stoll(stamp));
  }
  ASSERT_FALSE(seconds.empty());
  EXPECT_EQ(*seconds.begin(), std::chrono::duration_cast<std::chrono::seconds>(
                                  scenarios::kRunEpoch.time_since_epoch())
                                  .count());
  EXPECT_EQ(*seconds.begin(), 1767225600);
  // Every second from the epoch to the end of the run (5 s and settling).
  EXPECT_GE(seconds.size(), 6u);
  EXPECT_EQ(*seconds.rbegin() - *seconds.begin() + 1,
            static_cast<int64_t>(seconds.size()));
  EXPECT_NE(text.find("bigtable_cluster_up{bigtable_instance=\"tiny\","
                      "cluster=\"c1\"} 1 1767225600\n"),
            std::string::npos);
  // Labels are sorted by name.
  EXPECT_NE(text.find("bigtable_server_requests_total{app_profile=\"east\","
                      "bigtable_instance=\"tiny\",cluster=\"c1\",code=\"OK\","
                      "method=\"MutateRow\"} "),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE bigtable_replication_latency_seconds "
                      "histogram\n"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE bigtable_server_requests counter\n"),
            std::string::npos);
}

TEST(OpenMetricsTest, TheSameRunGivesTheSameBytes) {
  const std::string first = RunTiny();
  EXPECT_EQ(first, RunTiny());
}

}  // namespace
}  // namespace btsim::metrics
