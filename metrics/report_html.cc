#include "metrics/report_html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "metrics/key_heatmap.h"
#include "metrics/svg_chart.h"
#include "metrics/timeline_strip.h"
#include "scenarios/report.h"

namespace btsim::metrics {
namespace {

using scenarios::Event;
using scenarios::EventKind;
using scenarios::History;
using scenarios::Operation;

constexpr sim::Duration kSecond = std::chrono::seconds(1);
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double Sec(sim::Duration t) { return std::chrono::duration<double>(t).count(); }

// "12.345 s"; "never" for +infinity.
std::string SecondsText(double s) {
  if (std::isinf(s)) return "never";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3f s", s);
  return buffer;
}
std::string SecondsText(sim::Duration t) { return SecondsText(Sec(t)); }

// "850 µs", "12.3 ms", "1.50 s".
std::string Human(sim::Duration t) {
  const double ns = static_cast<double>(t.count());
  char buffer[64];
  if (ns < 1e6) {
    std::snprintf(buffer, sizeof buffer, "%.0f \xC2\xB5s", ns / 1e3);
  } else if (ns < 1e9) {
    std::snprintf(buffer, sizeof buffer, "%.1f ms", ns / 1e6);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.2f s", ns / 1e9);
  }
  return buffer;
}

// "0", "1 ms", "500 ms", "60 s": an axis label.
std::string ShortDuration(sim::Duration t) {
  const double ms = static_cast<double>(t.count()) / 1e6;
  if (ms == 0) return "0";
  if (ms < 1000) return FormatValue(ms, 4) + " ms";
  return FormatValue(ms / 1000, 4) + " s";
}

// An operation that was still in flight when the run ended.
bool InFlight(const Operation& op) {
  return op.code == StatusCode::kUnknown && op.attempts == 0;
}

// Data for every time chart: the same x range, shading and markers.
struct TimeFrame {
  double end = 1;  // seconds
  std::vector<Band> bands;
  std::vector<Marker> markers;
  LineChart Chart(const std::string& id, const std::string& y_label) const {
    LineChart c;
    c.id = id;
    c.x_min = 0;
    c.x_max = end;
    c.y_label = y_label;
    c.bands = bands;
    c.markers = markers;
    return c;
  }
};

// Per 1 s bucket of invoke time.
size_t BucketOf(sim::Duration t) {
  return static_cast<size_t>(std::max<int64_t>(0, t / kSecond));
}

std::vector<std::pair<double, double>> RatePoints(
    const std::vector<int64_t>& counts) {
  std::vector<std::pair<double, double>> points;
  for (size_t i = 0; i < counts.size(); ++i) {
    points.emplace_back(static_cast<double>(i) + 0.5,
                        static_cast<double>(counts[i]));
  }
  return points;
}

double PercentileMs(std::vector<sim::Duration>& v, double p) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * v.size()));
  rank = std::clamp<size_t>(rank, 1, v.size());
  return static_cast<double>(v[rank - 1].count()) / 1e6;
}

void Section(std::ostream& out, const std::string& id, const std::string& title,
             const std::string& look_for) {
  out << "<section id=\"" << id << "\">\n<h2>" << HtmlEscape(title)
      << "</h2>\n<p class=\"hint\">" << HtmlEscape(look_for) << "</p>\n";
}

void WriteHeader(const scenarios::LoadedScenario& scenario,
                 const scenarios::RunOutcome& o, std::ostream& out) {
  const History& h = o.history;
  int passed = 0;
  for (const auto& e : o.expectations) passed += e.pass ? 1 : 0;
  out << "<header>\n<h1>" << HtmlEscape(o.scenario) << " <span class=\"badge "
      << (o.passed ? "pass\">\xE2\x9C\x93 PASS" : "fail\">\xE2\x9C\x97 FAIL")
      << "</span></h1>\n<p class=\"description\">"
      << HtmlEscape(scenario.proto.description()) << "</p>\n<dl>"
      << "<dt>seed</dt><dd>" << o.seed << "</dd>"
      << "<dt>duration</dt><dd>" << SecondsText(h.duration)
      << (o.live ? " of wall time (served)" : " of virtual time")
      << "</dd><dt>settled</dt><dd>"
      << (h.settled < sim::Duration(0)
              ? std::string("replication did not drain")
              : "at " + SecondsText(h.settled))
      << "</dd><dt>client operations</dt><dd>" << h.operations.size()
      << "</dd><dt>expectations</dt><dd>" << passed << " of "
      << o.expectations.size() << " passed</dd><dt>fingerprint</dt><dd><code>"
      << HtmlEscape(o.fingerprint) << "</code></dd></dl>\n</header>\n";
}

void WriteThroughput(const History& h, const TimeFrame& frame, size_t buckets,
                     std::ostream& out) {
  std::map<std::string, std::vector<int64_t>> by_cluster, by_profile, errors;
  std::vector<int64_t> all_errors(buckets, 0);
  for (const Operation& op : h.operations) {
    if (InFlight(op)) continue;
    const size_t b = BucketOf(op.invoke);
    if (b >= buckets) continue;
    if (op.ok()) {
      auto& c = by_cluster[op.cluster.empty() ? "(refused)"
                                              : std::string(op.cluster)];
      auto& p = by_profile[op.profile().empty() ? "(default)"
                                                : std::string(op.profile())];
      c.resize(buckets, 0);
      p.resize(buckets, 0);
      ++c[b];
      ++p[b];
    } else {
      auto& e = errors[std::string(StatusCodeName(op.code))];
      e.resize(buckets, 0);
      ++e[b];
      ++all_errors[b];
    }
  }
  Section(out, "throughput", "Throughput over time",
          "Successful operations per second by invoke time, per serving "
          "cluster and per app profile. Look for dips at faults (shaded) and "
          "for traffic moving between clusters.");
  for (const auto* group : {&by_cluster, &by_profile}) {
    const bool clusters = group == &by_cluster;
    if (!clusters && by_profile.size() <= 1 && by_cluster.size() <= 1) {
      out << "<p class=\"hint\" id=\"chart-throughput-profile\">One app "
             "profile on one cluster: the same line as above.</p>\n";
      continue;
    }
    LineChart c = frame.Chart(
        clusters ? "chart-throughput-cluster" : "chart-throughput-profile",
        "ops/s");
    size_t i = 0;
    for (const auto& [name, counts] : *group) {
      c.series.push_back({(clusters ? "cluster " : "profile ") + name,
                          std::string(SeriesColor(i++)), !clusters, false,
                          RatePoints(counts)});
    }
    out << "<h3>" << (clusters ? "Per serving cluster" : "Per app profile")
        << "</h3>\n";
    WriteLineChart(c, out);
  }
  out << "</section>\n";
  Section(out, "errors", "Errors over time",
          "Failed operations per second by invoke time and status code. A "
          "flat line at 0 means no client saw an error.");
  LineChart c = frame.Chart("chart-errors", "errors/s");
  c.height = 170;
  c.series.push_back(
      {"all errors", "#000000", false, false, RatePoints(all_errors)});
  size_t i = 0;
  for (const auto& [code, counts] : errors) {
    if (i == 6) ++i;  // black is "all errors"
    c.series.push_back(
        {code, std::string(SeriesColor(i++)), true, false, RatePoints(counts)});
  }
  WriteLineChart(c, out);
  out << "</section>\n";
}

void WriteLatency(const History& h, const TimeFrame& frame, size_t buckets,
                  std::ostream& out) {
  std::map<std::string, std::vector<std::vector<sim::Duration>>> by_cluster;
  for (const Operation& op : h.operations) {
    const size_t b = BucketOf(op.invoke);
    if (!op.ok() || b >= buckets) continue;
    auto& v = by_cluster[std::string(op.cluster)];
    v.resize(buckets);
    v[b].push_back(op.complete - op.invoke);
  }
  Section(out, "latency", "Latency over time",
          "p50 (solid) and p99 (dashed) of successful operations, per 1 s of "
          "invoke time and serving cluster, on a log scale. Queueing on a hot "
          "node or retries after a fault raise the p99.");
  LineChart c = frame.Chart("chart-latency", "latency (ms, log scale)");
  c.log_y = true;
  size_t i = 0;
  for (auto& [cluster, per_bucket] : by_cluster) {
    const std::string color(SeriesColor(i++));
    const std::string prefix =
        by_cluster.size() > 1 ? "cluster " + cluster + " " : "";
    Series p50{prefix + "p50", color, false, false, {}};
    Series p99{prefix + "p99", color, true, false, {}};
    for (size_t b = 0; b < per_bucket.size(); ++b) {
      const double x = static_cast<double>(b) + 0.5;
      p50.points.emplace_back(x, PercentileMs(per_bucket[b], 50));
      p99.points.emplace_back(x, PercentileMs(per_bucket[b], 99));
    }
    c.series.push_back(std::move(p50));
    c.series.push_back(std::move(p99));
  }
  WriteLineChart(c, out);
  out << "</section>\n";
}

void WriteReplication(const History& h, const TimeFrame& frame,
                      std::ostream& out) {
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> links;
  for (size_t i = 0; i < h.links.size(); ++i) {
    links[{h.links[i].from, h.links[i].to}].push_back(i);
  }
  Section(out, "replication", "Replication per link",
          "Delay from commit on the source cluster to apply on the "
          "destination, mean (solid) and max (dashed) per second, and the "
          "backlog of entries not yet acknowledged. Partitions and outages "
          "(shaded) make the backlog grow; it should drain after the repair.");
  LineChart delay =
      frame.Chart("chart-replication-delay", "delay (ms, log scale)");
  delay.log_y = true;
  LineChart backlog =
      frame.Chart("chart-replication-backlog", "backlog (entries)");
  delay.empty_note = backlog.empty_note =
      links.empty() ? "one cluster: nothing replicates" : "nothing applied";
  size_t i = 0;
  for (const auto& [link, samples] : links) {
    const std::string name = link.first + "\xE2\x86\x92" + link.second;
    const std::string color(SeriesColor(i++));
    Series mean{name + " mean", color, false, false, {}};
    Series max{name + " max", color, true, false, {}};
    Series queue{name, color, false, false, {}};
    for (size_t s : samples) {
      const scenarios::LinkSample& l = h.links[s];
      const double x = Sec(l.at) - 0.5;
      mean.points.emplace_back(
          x, l.applied > 0 ? static_cast<double>(l.delay_sum.count()) /
                                 static_cast<double>(l.applied) / 1e6
                           : kNaN);
      max.points.emplace_back(
          x, l.applied > 0 ? static_cast<double>(l.delay_max.count()) / 1e6
                           : kNaN);
      queue.points.emplace_back(Sec(l.at), static_cast<double>(l.backlog));
    }
    delay.series.push_back(std::move(mean));
    delay.series.push_back(std::move(max));
    backlog.series.push_back(std::move(queue));
  }
  out << "<h3>Replication delay</h3>\n";
  WriteLineChart(delay, out);
  out << "<h3>Replication backlog</h3>\n";
  WriteLineChart(backlog, out);
  out << "</section>\n";
}

void WriteCpu(const History& h, const TimeFrame& frame, std::ostream& out) {
  std::map<std::string, std::pair<Series, Series>> by_cluster;
  for (const scenarios::CpuSample& s : h.cpu) {
    auto [it, inserted] = by_cluster.try_emplace(s.cluster);
    if (inserted) {
      it->second.first.name = "cluster " + s.cluster + " hottest node";
      it->second.second.name = "cluster " + s.cluster + " average";
      it->second.second.dashed = true;
    }
    it->second.first.points.emplace_back(Sec(s.at), s.hottest * 100);
    it->second.second.points.emplace_back(Sec(s.at), s.average * 100);
  }
  Section(out, "cpu", "CPU load per cluster",
          "Hottest node (solid) and average over nodes (dashed), in percent "
          "of one node's capacity, sampled every second. A hot node far above "
          "the average means one key range takes the load: see the key "
          "heatmap.");
  LineChart c = frame.Chart("chart-cpu", "CPU load (%)");
  c.y_max_at_least = 100;
  c.y_references = {100};
  size_t i = 0;
  for (auto& [cluster, pair] : by_cluster) {
    pair.first.color = pair.second.color = std::string(SeriesColor(i++));
    c.series.push_back(std::move(pair.first));
    c.series.push_back(std::move(pair.second));
  }
  WriteLineChart(c, out);
  out << "</section>\n";
}

void WriteHeatmap(const History& h, const TimeFrame& frame, std::ostream& out) {
  const sim::Duration end = std::chrono::duration_cast<sim::Duration>(
      std::chrono::duration<double>(frame.end));
  const KeyHeatmap map = BuildKeyHeatmap(h, end);
  Section(out, "heatmap", "Key heatmap",
          "Operations per row-key range and time, in the spirit of Key "
          "Visualizer: rows are " +
              std::to_string(map.buckets.size()) +
              " contiguous buckets of about equal numbers of distinct rows "
              "(first key at the top), columns are " +
              FormatValue(Sec(map.step)) +
              " s steps; bright cells are hot. A bright diagonal or band "
              "is a hotspot: sequential keys writing to one tablet.");
  std::vector<Marker> markers = frame.markers;
  WriteKeyHeatmap(map, "key-heatmap", frame.bands, markers, out);
  if (map.hottest_bucket >= 0) {
    const auto& b = map.buckets[static_cast<size_t>(map.hottest_bucket)];
    const double t = static_cast<double>(map.hottest_column) * Sec(map.step);
    out << "<p id=\"heatmap-hottest\" data-bucket=\"" << map.hottest_bucket
        << "\" data-table=\"" << HtmlEscape(b.table) << "\" data-first=\""
        << HtmlEscape(b.first)
        << "\">Hottest cell: " << HtmlEscape(BucketRange(b)) << " (" << b.rows
        << " rows), " << FormatValue(t) << "\xE2\x80\x93"
        << FormatValue(t + Sec(map.step)) << " s: " << map.max
        << " operations.</p>\n";
  }
  out << "</section>\n";
}

void WriteStaleness(const scenarios::RunOutcome& o, std::ostream& out) {
  const std::vector<sim::Duration> t = scenarios::VisibilityBuckets();
  Section(out, "staleness", "Staleness",
          "t-visibility: the probability that a read started t after a write "
          "was acknowledged returns that write or newer, per (write cluster, "
          "read cluster). Same-cluster pairs should be at 1; cross-cluster "
          "pairs rise to 1 as replication catches up.");
  LineChart c;
  c.id = "chart-t-visibility";
  c.x_min = -0.3;
  c.x_max = static_cast<double>(t.size()) - 0.7;
  c.x_label = "t after the write was acknowledged (log-like spacing)";
  c.y_label = "P(read sees the write)";
  c.y_max_at_least = 1;
  c.y_references = {1};
  c.empty_note = "no read followed a write of the same row";
  for (size_t i = 0; i < t.size(); ++i) {
    c.x_ticks.emplace_back(static_cast<double>(i), ShortDuration(t[i]));
  }
  size_t i = 0;
  for (const scenarios::VisibilityCurve& curve : o.visibility) {
    Series s{"write " + curve.write_cluster + ", read " + curve.read_cluster,
             std::string(SeriesColor(i)),
             i % 2 == 1,
             true,
             {}};
    ++i;
    for (size_t k = 0; k < curve.probability.size(); ++k) {
      const double p = curve.probability[k];
      s.points.emplace_back(static_cast<double>(k), p < 0 ? kNaN : p);
    }
    c.series.push_back(std::move(s));
  }
  WriteLineChart(c, out);

  const scenarios::KStaleness& k = o.k_staleness;
  out << "<h3>k-staleness</h3>\n<p class=\"hint\">How many newer "
         "acknowledged writes a read missed (0: it saw the newest), over "
      << k.reads << " successful single-row reads; the largest k was " << k.max
      << ".</p>\n<table id=\"k-staleness\"><tr><th>k</th><th>reads"
      << "</th><th>share</th><th></th></tr>\n";
  int64_t previous = 0;
  for (size_t j = 0; j <= k.at_most.size(); ++j) {
    const int64_t cumulative = j < k.at_most.size() ? k.at_most[j] : k.reads;
    const int64_t n = cumulative - previous;
    previous = cumulative;
    const double share =
        k.reads > 0 ? static_cast<double>(n) / static_cast<double>(k.reads) : 0;
    out << "<tr><td>"
        << (j < k.at_most.size()
                ? std::to_string(j)
                : "&gt; " + std::to_string(k.at_most.size() - 1))
        << "</td><td class=\"num\">" << n << "</td><td class=\"num\">"
        << FormatValue(share * 100, 3) << " %</td><td><span class=\"bar\" "
        << "style=\"width:" << Coord(share * 200) << "px\"></span></td></tr>\n";
  }
  out << "</table>\n</section>\n";
}

void WriteFailover(const scenarios::RunOutcome& o, std::ostream& out) {
  const History& h = o.history;
  const std::vector<scenarios::FaultFailover> faults =
      scenarios::FailoversByFault(o);
  Section(out, "failover", "Failover per fault",
          "For every fault, each client that had an outage (RTO: from the "
          "fault to its first success; errors inside it) or was moved off "
          "its home cluster, and how long it took to return there after the "
          "repair (fail-back).");
  if (faults.empty()) {
    out << "<p class=\"empty\">No client had an outage or moved cluster."
        << "</p>\n</section>\n";
    return;
  }
  out << "<table id=\"failover-table\"><tr><th>fault</th><th>client</th>"
         "<th>RTO</th><th>errors</th><th>home</th><th>fail-back</th></tr>\n";
  for (const scenarios::FaultFailover& fault : faults) {
    const Event& e = h.events[fault.event];
    bool first = true;
    for (const scenarios::ClientFailover& row : fault.clients) {
      out << "<tr>";
      if (first) {
        out << "<td rowspan=\"" << fault.clients.size() << "\">"
            << HtmlEscape(SecondsText(e.at) + ": " + EventText(e)) << "</td>";
        first = false;
      }
      out << "<td>" << HtmlEscape(row.client) << "</td><td class=\"num\">";
      std::string errors;
      if (row.rto) {
        out << (*row.rto == sim::Duration::max() ? "never"
                                                 : SecondsText(*row.rto));
        for (const auto& [code, n] : row.errors) {
          errors +=
              (errors.empty() ? "" : ", ") + std::to_string(n) + " " + code;
        }
      } else {
        out << "no outage";
      }
      out << "</td><td>" << HtmlEscape(errors) << "</td><td>";
      if (row.failback) {
        const scenarios::Failback& f = *row.failback;
        out << HtmlEscape(f.home) << "</td><td class=\"num\">";
        if (f.repaired < sim::Duration(0)) {
          out << "not repaired";
        } else if (f.unobserved) {
          out << "not observed (no operation after the repair)";
        } else if (f.never) {
          out << "never";
        } else {
          out << SecondsText(f.length);
        }
      } else {
        out << "</td><td>";
      }
      out << "</td></tr>\n";
    }
  }
  out << "</table>\n</section>\n";
}

void WriteChecks(const scenarios::RunOutcome& o, std::ostream& out) {
  Section(out, "checks", "Expectations and checks",
          "The scenario's expectations (each a metric against a bound) and "
          "the checks every run gets.");
  out << "<table id=\"expectations-table\"><tr><th>result</th><th>"
         "expectation</th><th>metric</th><th>value</th><th>bound</th><th>"
         "detail</th></tr>\n";
  for (const scenarios::ExpectationResult& e : o.expectations) {
    out << "<tr><td><span class=\"badge " << (e.pass ? "pass" : "fail") << "\">"
        << (e.pass ? "PASS" : "FAIL") << "</span></td><td>"
        << HtmlEscape(e.name) << "</td><td>" << HtmlEscape(e.metric)
        << "</td><td class=\"num\">" << FormatValue(e.value, 4)
        << "</td><td class=\"bound\">" << HtmlEscape(e.bound) << "</td><td>"
        << HtmlEscape(e.detail) << "</td></tr>\n";
  }
  if (o.expectations.empty()) {
    out << "<tr><td colspan=\"6\">none</td></tr>\n";
  }
  out << "</table>\n<table id=\"checks-table\"><tr><th>check</th><th>value"
         "</th><th>detail</th></tr>\n";
  for (const scenarios::CheckValue& c : o.checks) {
    out << "<tr><td>" << HtmlEscape(c.name) << "</td><td class=\"num\">"
        << FormatValue(c.value, 4) << "</td><td>" << HtmlEscape(c.detail)
        << "</td></tr>\n";
  }
  out << "</table>\n";
  const std::vector<scenarios::PhaseStats> phases =
      scenarios::Phases(o.history);
  out << "<h3>Phases</h3>\n<p class=\"hint\">The client phase split at "
         "every timeline event.</p>\n<table id=\"phases-table\"><tr><th>phase"
         "</th><th>profile</th><th>cluster</th><th>ops</th><th>errors</th>"
         "<th>p50</th><th>p99</th></tr>\n";
  for (size_t i = 0; i < phases.size(); ++i) {
    for (const scenarios::PhaseStats::Line& l : phases[i].lines) {
      out << "<tr><td>" << i + 1 << ": "
          << HtmlEscape(FormatValue(Sec(phases[i].start), 4) + "\xE2\x80\x93" +
                        FormatValue(Sec(phases[i].end), 4) + " s, " +
                        phases[i].label)
          << "</td><td>" << HtmlEscape(l.profile) << "</td><td>"
          << HtmlEscape(l.cluster) << "</td><td class=\"num\">" << l.ops
          << "</td><td class=\"num\">" << l.errors << "</td><td class=\"num\">"
          << Human(l.p50) << "</td><td class=\"num\">" << Human(l.p99)
          << "</td></tr>\n";
    }
  }
  out << "</table>\n</section>\n";
}

constexpr char kStyle[] = R"(<style>
body{font:14px/1.4 system-ui,"DejaVu Sans",Helvetica,Arial,sans-serif;color:#1a1a1a;background:#fff;margin:24px auto;max-width:1000px;padding:0 16px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 2px;border-bottom:1px solid #ddd}h3{font-size:14px;margin:12px 0 2px}
.description{margin:2px 0 8px;color:#333}.hint{margin:2px 0 6px;color:#555;font-size:13px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:1px 12px;margin:0}dt{color:#555}dd{margin:0}
.badge{display:inline-block;padding:1px 8px;border-radius:4px;font-size:13px;font-weight:bold;color:#fff;vertical-align:middle}
.badge.pass{background:#0072B2}.badge.fail{background:#D55E00}
table{border-collapse:collapse;margin:6px 0;font-size:13px}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.bound{white-space:nowrap}
.bar{display:inline-block;height:10px;background:#0072B2}
svg.chart{display:block;width:100%;height:auto;margin:4px 0 8px}
svg text{font-size:11px;fill:#222}.tick{fill:#444}.axis-label{font-size:12px;fill:#333}
.axis{stroke:#444;fill:none}.grid{stroke:#e6e6e6}.reference{stroke:#888;stroke-dasharray:4 4}
.series{fill:none;stroke-width:1.8;stroke-linejoin:round}.point{stroke:#fff;stroke-width:.8}
.band{fill:#D55E00;fill-opacity:.12}.marker{stroke:#666;stroke-dasharray:2 3}.marker-label{font-size:10px;fill:#444;paint-order:stroke;stroke:#fff;stroke-width:3px}
.empty{fill:#888;font-style:italic}
.timeline .span.fault{fill:#D55E00;fill-opacity:.35;stroke:#D55E00}.timeline .span.action{fill:#0072B2;fill-opacity:.25;stroke:#0072B2}
.timeline path.point.fault{fill:#D55E00}.timeline path.point.action{fill:#0072B2}.timeline path.point.settle{fill:#555}
.key-label{font:10px "DejaVu Sans Mono",monospace;fill:#222}.key-label.depth2,.key-label.depth3{fill:#666}.table-label{font-weight:bold}
.table-boundary{stroke:#fff;stroke-width:1.5}.heatmap-marker{stroke:#fff;stroke-opacity:.8;stroke-dasharray:4 3}.band-strip{fill:#D55E00}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
@media print{body{max-width:none;margin:0;padding:0;font-size:11px}section{break-inside:avoid}h2{break-after:avoid}svg.chart{max-width:100%}}
</style>
)";

}  // namespace

void WriteReportHtml(const scenarios::LoadedScenario& scenario,
                     const scenarios::RunOutcome& o, std::ostream& out) {
  const History& h = o.history;
  // The time axis: the client phase and the operations' completions, plus
  // the settling samples up to a quarter of that (at least 5 s) more.
  sim::Duration ops_end = h.duration;
  for (const Operation& op : h.operations) {
    if (!InFlight(op)) ops_end = std::max(ops_end, op.complete);
  }
  sim::Duration samples_end{0};
  if (!h.cpu.empty()) samples_end = h.cpu.back().at;
  if (!h.links.empty()) samples_end = std::max(samples_end, h.links.back().at);
  const sim::Duration tail =
      std::max<sim::Duration>(std::chrono::seconds(5), ops_end / 4);
  const sim::Duration end =
      std::max({kSecond, ops_end, std::min(samples_end, ops_end + tail)});
  TimeFrame frame;
  frame.end = Sec(end);
  const bool settle_repairs = !scenario.proto.settle().keep_faults();
  const std::vector<TimelineItem> items =
      TimelineItems(h, settle_repairs, frame.end);
  for (const TimelineItem& item : items) {
    if (item.kind == "fault") {
      frame.bands.push_back({item.start, item.end});
    } else if (item.end == item.start || item.kind == "action") {
      frame.markers.push_back(
          {item.start, item.kind == "settle" ? "settle" : item.text});
    }
  }
  const size_t buckets =
      static_cast<size_t>((ops_end + kSecond - sim::Duration(1)) / kSecond);

  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
         "charset=\"utf-8\">\n<title>btsim report: "
      << HtmlEscape(o.scenario) << "</title>\n"
      << kStyle << "</head>\n<body>\n";
  WriteHeader(scenario, o, out);
  Section(out, "timeline", "Timeline",
          "Faults from start to repair (orange spans, shaded on every chart "
          "below) and actions (blue), in virtual time. Hover for details.");
  WriteTimelineStrip(items, frame.end, frame.bands, out);
  out << "</section>\n";
  WriteThroughput(h, frame, buckets, out);
  WriteLatency(h, frame, buckets, out);
  WriteCpu(h, frame, out);
  WriteHeatmap(h, frame, out);
  WriteReplication(h, frame, out);
  WriteStaleness(o, out);
  WriteFailover(o, out);
  WriteChecks(o, out);
  out << "<footer><p class=\"hint\">Generated by btsim from scenario "
      << HtmlEscape(scenario.path) << ". Virtual time; the same scenario and "
      << "seed give the same report.</p></footer>\n</body>\n</html>\n";
}

}  // namespace btsim::metrics
