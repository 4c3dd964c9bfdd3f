// The HTML report of a scenario run (`btsim run --out DIR` writes it as
// DIR/report.html): one self-contained page — inline SVG and CSS, no
// script, no network — readable offline and printable. It shows:
//   - a header: scenario, seed, description, pass/fail, fingerprint;
//   - a timeline strip of the scenario's faults and actions (History::events),
//     whose spans (fault to repair) are shaded on every time chart;
//   - throughput and errors over time per cluster and per profile;
//   - latency p50 / p99 over time;
//   - replication delay per link over time, and backlog (History::links);
//   - CPU per cluster over time, average and hottest node (History::cpu);
//   - a key heatmap in the spirit of Key Visualizer: the row-key space in
//     up to 1,000 buckets of roughly equal row count x time, operations per
//     bucket per step, hierarchical key prefixes ("a#b#c") labelled;
//   - staleness curves: t-visibility per (write, read) cluster pair;
//   - the checks and expectations table.
// Axes carry units; series colours are Okabe-Ito (with dashes telling
// p50/p99, mean/max, average/hottest apart), the heatmap is viridis, and a
// verdict is always spelled out (PASS / FAIL), never colour alone.
//
// Sections are <section id="..."> (timeline, throughput, errors, latency,
// cpu, heatmap, replication, staleness, failover, checks); each chart is an
// <svg class="chart" id="chart-..."> (see metrics/svg_chart.h,
// metrics/key_heatmap.h, metrics/timeline_strip.h for what they draw). The
// time charts share one axis: the client phase plus up to a quarter of it
// (at least 5 s) of settling.
// Deterministic: the same outcome gives the same bytes.
#ifndef BTSIM_METRICS_REPORT_HTML_H_
#define BTSIM_METRICS_REPORT_HTML_H_

#include <ostream>

#include "scenarios/loader.h"
#include "scenarios/runner.h"

namespace btsim::metrics {

void WriteReportHtml(const scenarios::LoadedScenario& scenario,
                     const scenarios::RunOutcome& outcome, std::ostream& out);

}  // namespace btsim::metrics

#endif  // BTSIM_METRICS_REPORT_HTML_H_
