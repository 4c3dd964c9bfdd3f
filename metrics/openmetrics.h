// OpenMetricsRecorder: snapshots of a Prometheus registry taken at virtual
// times, written as one OpenMetrics text exposition with timestamps, which
// `promtool tsdb create-blocks-from openmetrics` turns into TSDB blocks.
//
// Output format (OpenMetrics 1.0 text): each family once, in the order it
// was first seen, with "# HELP" (when the help is not empty) and "# TYPE"
// lines (a counter's family name drops its "_total" suffix; its samples
// keep it, or gain it); then every series of the family, sorted by label
// set (labels as collected: independent of prometheus-cpp's hash order),
// each with its samples in time order: "name{labels} value timestamp", the
// timestamp in seconds with millisecond precision ("1767225600",
// "1767225600.25"). Histograms give, per point, _bucket{...,le="bound"}
// for every bound then le="+Inf", _count and _sum; summaries give
// {...,quantile="q"}, _count and _sum. Label values and help are escaped
// (\\, \", \n). Ends with "# EOF". Values are written with the shortest
// form that round-trips (std::to_chars; NaN, +Inf, -Inf), le bounds too
// ("0.005", "1"); the same recordings give the same bytes.
// A series that disappears from the source simply has no later samples.
//
// Not thread-safe. Memory grows with series x snapshots: 8 bytes per
// snapshot per series, plus 8 per value (one for a counter or gauge,
// buckets + 2 for a histogram).
#ifndef BTSIM_METRICS_OPENMETRICS_H_
#define BTSIM_METRICS_OPENMETRICS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <prometheus/collectable.h>

#include "sim/clock.h"

namespace btsim::metrics {

class OpenMetricsRecorder {
 public:
  OpenMetricsRecorder();
  ~OpenMetricsRecorder();

  // Appends every sample `source` holds now, stamped `at` (truncated to
  // milliseconds). Times
  // must not decrease between calls; a series recorded twice in the same
  // millisecond keeps the newer values. A family whose type changes keeps
  // its first type (later samples of another type are ignored).
  void Record(const prometheus::Collectable& source, sim::Time at);
  void Write(std::ostream& out) const;
  int64_t snapshots() const { return snapshots_; }

 private:
  struct Family;
  std::vector<Family*> order_;  // families in first-seen order
  std::map<std::string, std::unique_ptr<Family>> families_;
  int64_t snapshots_ = 0;
};

}  // namespace btsim::metrics

#endif  // BTSIM_METRICS_OPENMETRICS_H_
