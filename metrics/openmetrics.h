// OpenMetricsRecorder: snapshots of a Prometheus registry taken at virtual
// times, written as one OpenMetrics text exposition with timestamps, which
// `promtool tsdb create-blocks-from openmetrics` turns into TSDB blocks.
//
// Output format (OpenMetrics 1.0 text): each family once, in the order it
// was first seen, with "# HELP" and "# TYPE" lines (a counter's family name
// drops its "_total" suffix; its samples keep it); then every series of the
// family (label sets in the order first seen), each with its samples in
// time order: "name{labels} value timestamp", the timestamp in seconds with
// millisecond precision. Histograms give _bucket (with le="+Inf"), _count
// and _sum. Ends with "# EOF". Values are written with the shortest form
// that round-trips; the same recordings give the same bytes.
//
// Not thread-safe. Memory grows with series x snapshots.
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

  // Appends every sample `source` holds now, stamped `at` (absolute time:
  // nanoseconds since the Unix epoch, truncated to milliseconds). Times
  // must not decrease between calls.
  void Record(const prometheus::Collectable& source, sim::Nanos at);
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
