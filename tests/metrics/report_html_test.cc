#include "metrics/report_html.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "metrics/key_heatmap.h"
#include "metrics/svg_chart.h"
#include "metrics/timeline_strip.h"
#include "scenarios/loader.h"
#include "scenarios/runner.h"

namespace btsim::metrics {
namespace {

struct Rendered {
  scenarios::LoadedScenario scenario;
  scenarios::RunOutcome outcome;
  std::string html;
};

Rendered RunAndRender(const std::string& example) {
  Rendered r;
  auto loaded = scenarios::LoadScenario(std::string(BTSIM_SOURCE_DIR) +
                                        "/scenarios/examples/" + example);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return r;
  r.scenario = *std::move(loaded);
  auto outcome = scenarios::RunScenario(r.scenario);
  EXPECT_TRUE(outcome.ok()) << outcome.status().ToString();
  if (!outcome.ok()) return r;
  r.outcome = *std::move(outcome);
  std::ostringstream out;
  WriteReportHtml(r.scenario, r.outcome, out);
  r.html = out.str();
  return r;
}

// Example 07 (a hotspot on one cluster) and example 01 (a zone outage on
// three clusters), run once for the whole suite.
const Rendered& Hotspot() {
  static const Rendered* r =
      new Rendered(RunAndRender("07-hotspot-key-design.textproto"));
  return *r;
}
const Rendered& Outage() {
  static const Rendered* r =
      new Rendered(RunAndRender("01-zone-outage-multi-cluster.textproto"));
  return *r;
}

// The <svg ...>...</svg> element whose id is `id` ("" when absent).
std::string SvgById(const std::string& html, const std::string& id) {
  const size_t at = html.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const size_t start = html.rfind("<svg", at);
  const size_t end = html.find("</svg>", at);
  if (start == std::string::npos || end == std::string::npos) return "";
  return html.substr(start, end + 6 - start);
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

// Checks that the tags of `xml` nest: every element opened is closed in
// order (self-closing and void ones excepted). Returns "" or the first problem.
std::string TagBalance(const std::string& xml) {
  std::vector<std::string> stack;
  size_t at = 0;
  while ((at = xml.find('<', at)) != std::string::npos) {
    const size_t end = xml.find('>', at);
    if (end == std::string::npos) return "unterminated tag";
    const std::string tag = xml.substr(at + 1, end - at - 1);
    at = end + 1;
    if (tag.empty()) return "empty tag";
    if (tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (stack.empty() || stack.back() != name) {
        return "unexpected </" + name + ">";
      }
      stack.pop_back();
      continue;
    }
    if (tag.back() == '/') continue;
    size_t n = 0;
    while (n < tag.size() &&
           !std::isspace(static_cast<unsigned char>(tag[n]))) {
      ++n;
    }
    const std::string name = tag.substr(0, n);
    if (name == "meta" || name == "br" || name == "!DOCTYPE") continue;
    stack.push_back(name);
  }
  return stack.empty() ? "" : "unclosed <" + stack.back() + ">";
}

TEST(ReportHtmlTest, HotspotReportHasEveryChartWithData) {
  const std::string& html = Hotspot().html;
  ASSERT_FALSE(html.empty());
  for (const char* section :
       {"timeline", "throughput", "errors", "latency", "cpu", "heatmap",
        "replication", "staleness", "failover", "checks"}) {
    EXPECT_NE(html.find("<section id=\"" + std::string(section) + "\">"),
              std::string::npos)
        << section;
  }
  // Time charts with data lines.
  for (const char* id :
       {"chart-throughput-cluster", "chart-throughput-profile", "chart-errors",
        "chart-latency", "chart-cpu", "chart-t-visibility"}) {
    const std::string svg = SvgById(html, id);
    ASSERT_FALSE(svg.empty()) << id;
    EXPECT_GE(Count(svg, "<path class=\"series\" d=\"M"), 1u) << id;
    EXPECT_GE(Count(svg, "class=\"tick\""), 3u) << id;  // axes have ticks
  }
  // One profile on one cluster: no second, identical throughput chart.
  EXPECT_NE(html.find("<p class=\"hint\" id=\"chart-throughput-profile\">"),
            std::string::npos);
  // The timeline shows the change of workload at 20 s.
  const std::string timeline = SvgById(html, "timeline-strip");
  EXPECT_NE(timeline.find("switch to field-promoted keys"), std::string::npos);
  EXPECT_GE(Count(timeline, "class=\"point action\""), 1u);
  // One cluster: the replication charts say why they are empty.
  EXPECT_NE(SvgById(html, "chart-replication-delay")
                .find("one cluster: nothing replicates"),
            std::string::npos);
  // Every expectation is in the table, with its verdict as text.
  for (const auto& e : Hotspot().outcome.expectations) {
    EXPECT_NE(html.find(HtmlEscape(e.name)), std::string::npos) << e.name;
  }
  EXPECT_NE(html.find("<table id=\"expectations-table\">"), std::string::npos);
  EXPECT_NE(html.find("<table id=\"checks-table\">"), std::string::npos);
  EXPECT_NE(html.find("<table id=\"k-staleness\">"), std::string::npos);
  EXPECT_NE(html.find(Hotspot().outcome.fingerprint), std::string::npos);
  EXPECT_NE(html.find(Hotspot().outcome.passed ? "PASS" : "FAIL"),
            std::string::npos);
}

TEST(ReportHtmlTest, HotspotHeatmapLightsUpTheTimestampFirstKeys) {
  const std::string& html = Hotspot().html;
  const std::string svg = SvgById(html, "key-heatmap");
  ASSERT_FALSE(svg.empty());
  // Many buckets with data, on many rows: runs are sub-paths
  // "M x y H x1 v h H x z" of one <path> per colour.
  std::set<std::string> ys;
  size_t runs = 0;
  // (std::regex recurses per character: too deep for these attributes.)
  const std::string open = "<path class=\"cell hm";
  for (size_t at = svg.find(open); at != std::string::npos;
       at = svg.find(open, at + 1)) {
    const size_t d = svg.find("d=\"", at) + 3;
    const std::string path = svg.substr(d, svg.find('"', d) - d);
    for (size_t m = path.find('M'); m != std::string::npos;
         m = path.find('M', m + 1)) {
      const size_t space = path.find(' ', m);
      const size_t h = path.find('H', space);
      ASSERT_NE(space, std::string::npos);
      ASSERT_NE(h, std::string::npos);
      ys.insert(path.substr(space + 1, h - space - 1));
      ++runs;
    }
    EXPECT_EQ(Count(path, "M"), Count(path, "z"));
  }
  EXPECT_GT(runs, 100u);
  EXPECT_GT(ys.size(), 100u);
  // The key axis names the field-promoted prefixes.
  EXPECT_NE(svg.find(">I3#\xE2\x80\xA6</text>"), std::string::npos);
  // The brightest cell is among the timestamp-first keys ("1767..." is the
  // virtual clock in ms) and it is drawn in the brightest colour.
  const std::regex hottest(
      "<p id=\"heatmap-hottest\" data-bucket=\"[0-9]+\" "
      "data-table=\"traffic\" data-first=\"([^\"]*)\">");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(html, m, hottest));
  EXPECT_EQ(m[1].str().rfind("1767", 0), 0u) << m[1];
  EXPECT_GE(Count(svg, "<path class=\"cell hm24\""), 1u);
  // And the timestamp-first buckets are far hotter than the field-promoted
  // ones: in the second half of the run no cell reaches half the top
  // colour.
  const KeyHeatmap map =
      BuildKeyHeatmap(Hotspot().outcome.history, std::chrono::seconds(40));
  ASSERT_GT(map.buckets.size(), 1u);
  EXPECT_EQ(map.buckets.size(), 1000u);
  int64_t late_max = 0;
  for (size_t b = 0; b < map.buckets.size(); ++b) {
    for (size_t c = 22; c < map.columns; ++c) {
      late_max = std::max(late_max, map.Count(b, c));
    }
  }
  EXPECT_LT(late_max * 4, map.max);
}

TEST(ReportHtmlTest, HotspotCpuShowsTheHotNode) {
  const std::string svg = SvgById(Hotspot().html, "chart-cpu");
  EXPECT_NE(svg.find("cluster c1 hottest node"), std::string::npos);
  EXPECT_NE(svg.find("cluster c1 average"), std::string::npos);
  EXPECT_NE(svg.find("class=\"reference\""), std::string::npos);  // 100 %
}

TEST(ReportHtmlTest, OutageReportShowsFaultsReplicationAndFailover) {
  const std::string& html = Outage().html;
  ASSERT_FALSE(html.empty());
  const std::string timeline = SvgById(html, "timeline-strip");
  EXPECT_GE(Count(timeline, "class=\"span fault\""), 1u);
  // The fault is shaded on the time charts.
  for (const char* id :
       {"chart-throughput-cluster", "chart-latency", "chart-replication-delay",
        "chart-replication-backlog", "chart-cpu"}) {
    const std::string svg = SvgById(html, id);
    EXPECT_GE(Count(svg, "<rect class=\"band\""), 1u) << id;
    EXPECT_GE(Count(svg, "<path class=\"series\" d=\"M"), 1u) << id;
  }
  EXPECT_NE(SvgById(html, "chart-replication-delay").find("c1\xE2\x86\x92"),
            std::string::npos);
  EXPECT_GE(Count(SvgById(html, "chart-t-visibility"), "class=\"point\""), 3u);
  EXPECT_NE(html.find("<table id=\"failover-table\">"), std::string::npos);
}

TEST(ReportHtmlTest, WellFormedAndFinite) {
  for (const Rendered* r : {&Hotspot(), &Outage()}) {
    const std::string& html = r->html;
    ASSERT_FALSE(html.empty());
    EXPECT_EQ(Count(html, "<svg "), Count(html, "</svg>"));
    EXPECT_GE(Count(html, "<svg "), 9u);
    for (size_t at = html.find("<svg "); at != std::string::npos;
         at = html.find("<svg ", at + 1)) {
      const size_t end = html.find("</svg>", at);
      ASSERT_NE(end, std::string::npos);
      EXPECT_EQ(TagBalance(html.substr(at, end + 6 - at)), "")
          << html.substr(at, 200);
    }
    EXPECT_EQ(TagBalance(html.substr(html.find("<html"))), "");
    for (const char* name : {"x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "r",
                             "width", "height", "d", "viewBox"}) {
      const std::string attribute = " " + std::string(name) + "=\"";
      for (size_t at = html.find(attribute); at != std::string::npos;
           at = html.find(attribute, at + 1)) {
        const size_t start = at + attribute.size();
        std::string value = html.substr(start, html.find('"', start) - start);
        for (char& c : value) c = static_cast<char>(std::tolower(c));
        EXPECT_EQ(value.find("nan"), std::string::npos) << name << value;
        EXPECT_EQ(value.find("inf"), std::string::npos) << name << value;
      }
    }
  }
}

TEST(ReportHtmlTest, SelfContained) {
  for (const Rendered* r : {&Hotspot(), &Outage()}) {
    const std::string& html = r->html;
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("<link"), std::string::npos);
    EXPECT_EQ(html.find("https://"), std::string::npos);
    const std::string xmlns = "http://www.w3.org/2000/svg";
    for (size_t at = html.find("http://"); at != std::string::npos;
         at = html.find("http://", at + 1)) {
      EXPECT_EQ(html.compare(at, xmlns.size(), xmlns), 0)
          << html.substr(at, 60);
    }
  }
}

TEST(ReportHtmlTest, Deterministic) {
  const Rendered& first = Hotspot();
  std::ostringstream again;
  WriteReportHtml(first.scenario, first.outcome, again);
  EXPECT_EQ(again.str(), first.html);
  // A second run of the same scenario renders the same bytes.
  const Rendered second = RunAndRender("07-hotspot-key-design.textproto");
  EXPECT_EQ(second.html, first.html);
}

scenarios::Operation Op(const scenarios::History& h, std::string row,
                        int64_t invoke_ms,
                        scenarios::OpType type = scenarios::OpType::kWrite) {
  scenarios::Operation op;
  op.source = h.names->Source("", "", "", "t");
  op.row = h.names->Store(row);
  op.type = type;
  op.invoke = std::chrono::milliseconds(invoke_ms);
  op.complete = op.invoke + std::chrono::milliseconds(1);
  return op;
}

TEST(KeyHeatmapTest, BucketsByRowCountAndCountsPerStep) {
  scenarios::History h;
  // Rows a..j (10 distinct), 4 buckets of 2 or 3 rows.
  for (char c = 'a'; c <= 'j'; ++c) h.operations.push_back(Op(h, {c}, 100));
  // Three more on "b" in the second second, a scan starting at "i".
  h.operations.push_back(Op(h, "b", 1500));
  h.operations.push_back(Op(h, "b", 1600));
  h.operations.push_back(Op(h, "b", 1700));
  h.operations.push_back(Op(h, "i", 1800, scenarios::OpType::kScan));
  // Outside [0, end): ignored.
  h.operations.push_back(Op(h, "zzz", 5000));
  const KeyHeatmap map = BuildKeyHeatmap(h, std::chrono::seconds(2), 4);
  ASSERT_EQ(map.buckets.size(), 4u);
  EXPECT_EQ(map.step, std::chrono::seconds(1));
  ASSERT_EQ(map.columns, 2u);
  // floor(i * 10 / 4): rows [0,2) [2,5) [5,7) [7,10).
  EXPECT_EQ(map.buckets[0].first, "a");
  EXPECT_EQ(map.buckets[0].last, "b");
  EXPECT_EQ(map.buckets[1].first, "c");
  EXPECT_EQ(map.buckets[1].rows, 3);
  EXPECT_EQ(map.buckets[3].first, "h");
  EXPECT_EQ(map.buckets[3].last, "j");
  EXPECT_EQ(map.Count(0, 0), 2);
  EXPECT_EQ(map.Count(0, 1), 3);
  EXPECT_EQ(map.Count(3, 1), 1);  // the scan, at its start row
  EXPECT_EQ(map.max, 3);
  EXPECT_EQ(map.hottest_bucket, 0);
  EXPECT_EQ(map.hottest_column, 1);
  EXPECT_EQ(map.scale, 3);  // the 99th percentile of the non-zero cells
}

TEST(KeyHeatmapTest, CapsBucketsAndColumns) {
  scenarios::History h;
  for (int i = 0; i < 5000; ++i) {
    h.operations.push_back(Op(h, "k" + std::to_string(100000 + i), i * 100));
  }
  const KeyHeatmap map = BuildKeyHeatmap(h, std::chrono::seconds(500));
  EXPECT_EQ(map.buckets.size(), 1000u);
  EXPECT_EQ(map.step, std::chrono::seconds(5));  // 500 s in <= 200 columns
  EXPECT_EQ(map.columns, 100u);
  int64_t total = 0;
  for (int64_t c : map.counts) total += c;
  EXPECT_EQ(total, 5000);
}

scenarios::Event Ev(int64_t at_s, scenarios::EventKind kind,
                    std::string cluster, std::string peer = "") {
  scenarios::Event e;
  e.at = std::chrono::seconds(at_s);
  e.kind = kind;
  e.cluster = std::move(cluster);
  e.peer = std::move(peer);
  return e;
}

TEST(TimelineStripTest, PairsFaultsWithTheirRepairs) {
  using K = scenarios::EventKind;
  scenarios::History h;
  h.events = {Ev(1, K::kPartition, "a", "b"), Ev(2, K::kClusterDown, "c"),
              Ev(3, K::kHeal, "b", "a"),      Ev(4, K::kNodeFailure, "a"),
              Ev(5, K::kChangeWorkload, ""),  Ev(6, K::kSettle, "")};
  const std::vector<TimelineItem> items = TimelineItems(h, true, 9);
  ASSERT_EQ(items.size(), 5u);  // the heal closed the partition
  EXPECT_EQ(items[0].kind, "fault");
  EXPECT_EQ(items[0].end, 3);  // healed in the other order
  EXPECT_EQ(items[0].text,
            "partition a\xE2\x86\x94"
            "b \xE2\x86\x92 heal "
            "b\xE2\x86\x94"
            "a");
  EXPECT_EQ(items[1].end, 6);  // repaired by the settle
  EXPECT_EQ(items[2].event, 3u);
  EXPECT_EQ(items[3].kind, "action");
  EXPECT_EQ(items[3].end, items[3].start);
  EXPECT_EQ(items[4].kind, "settle");
  // When the scenario keeps faults, they span to the end.
  const std::vector<TimelineItem> kept = TimelineItems(h, false, 9);
  EXPECT_EQ(kept[1].end, 9);
  EXPECT_TRUE(kept[1].open);
  EXPECT_NE(kept[1].text.find("(not repaired)"), std::string::npos);
  std::ostringstream out;
  WriteTimelineStrip(items, 9, {{1, 3}}, out);
  EXPECT_EQ(Count(out.str(), "class=\"span fault\""), 3u);
  EXPECT_EQ(Count(out.str(), "<rect class=\"band\""), 1u);
  EXPECT_EQ(TagBalance(out.str()), "");
}

TEST(SvgChartTest, FormatsNumbersAndColours) {
  EXPECT_EQ(Coord(12.26), "12.3");
  EXPECT_EQ(Coord(3.0), "3");
  EXPECT_EQ(Coord(std::nan("")), "0");
  EXPECT_EQ(FormatValue(0.25), "0.25");
  EXPECT_EQ(FormatValue(1500), "1500");
  EXPECT_EQ(FormatValue(12.345), "12.3");
  EXPECT_EQ(Viridis(0), "#440154");
  EXPECT_EQ(Viridis(1), "#fde725");
  EXPECT_EQ(HtmlEscape("a<b&\"c\x01"), "a&lt;b&amp;&quot;c\\x01");
  EXPECT_EQ(NiceTicks(0, 40, 5), (std::vector<double>{0, 10, 20, 30, 40}));
}

TEST(SvgChartTest, LineChartGapsAndEmptyNote) {
  LineChart c;
  c.id = "x";
  c.x_max = 3;
  c.series.push_back({"s",
                      "#0072B2",
                      false,
                      false,
                      {{0, 1}, {1, std::nan("")}, {2, 2}, {3, 3}}});
  std::ostringstream out;
  WriteLineChart(c, out);
  // Two sub-paths: the NaN breaks the line.
  EXPECT_EQ(Count(out.str(), "M"), 2u + 1u);  // + the axis path
  LineChart empty;
  empty.id = "y";
  empty.empty_note = "nothing here";
  std::ostringstream out2;
  WriteLineChart(empty, out2);
  EXPECT_NE(out2.str().find("nothing here"), std::string::npos);
}

}  // namespace
}  // namespace btsim::metrics
