// The timeline of the HTML report (metrics/report_html.h): a scenario's
// events (History::events) as spans and point markers along virtual time.
//
// A fault (cluster_down, partition, node_failure, remove_cluster) becomes a
// span from the fault to the event that repairs it — the same rule as the
// fail-back check (scenarios/checks.h): cluster_up of the same cluster,
// heal of the same pair in either order, node_recovery of the same
// cluster, or the settle when the settle repairs faults; remove_cluster is
// never repaired. A fault never repaired spans to the end of the axis
// ("(not repaired)"). A wait_for_replication spans from the token to the
// moment the check said consistent. Every other event is a point; repair
// events that closed a span are not repeated.
//
// Deterministic: pure functions of their inputs.
#ifndef BTSIM_METRICS_TIMELINE_STRIP_H_
#define BTSIM_METRICS_TIMELINE_STRIP_H_

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "metrics/svg_chart.h"
#include "scenarios/history.h"

namespace btsim::metrics {

struct TimelineItem {
  size_t event = 0;   // index in History::events
  double start = 0;   // seconds
  double end = 0;     // seconds; == start for a point
  bool open = false;  // never repaired / never consistent within the run
  std::string kind;   // "fault", "action" or "settle"
  std::string text;   // the label (fault and repair: "A → B")
};

// The events of `history` as items, in event order. `settle_repairs`: the
// settle repairs faults (the scenario does not keep them). `end`: the end
// of the axis, in seconds, for spans that never end.
std::vector<TimelineItem> TimelineItems(const scenarios::History& history,
                                        bool settle_repairs, double end);

// The step's label, or "<kind> <cluster>↔<peer> <detail>" when it has none.
std::string EventText(const scenarios::Event& event);

// Writes <svg class="chart timeline" id="timeline-strip">: the items over
// [0, end] seconds, packed into as many lanes as their labels need, with
// `bands` shaded behind them and a time axis. Its plot area lines up with
// WriteLineChart's at the default width.
void WriteTimelineStrip(const std::vector<TimelineItem>& items, double end,
                        const std::vector<Band>& bands, std::ostream& out);

}  // namespace btsim::metrics

#endif  // BTSIM_METRICS_TIMELINE_STRIP_H_
