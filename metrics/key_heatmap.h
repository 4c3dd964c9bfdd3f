// The key heatmap of the HTML report, in the spirit of Bigtable's Key
// Visualizer: the row-key space of every table, split into up to 1,000
// contiguous buckets of roughly equal numbers of distinct rows, against time
// steps; each cell counts the client operations on the bucket's rows that
// were invoked in the step (a scan counts once, at its start row).
//
// The rows are the distinct (table, row key) pairs the operations named,
// sorted by table and then by row key in unsigned byte order (Bigtable's
// order). With N rows and B = min(N, max_buckets) buckets, bucket i holds
// rows [floor(i * N / B), floor((i + 1) * N / B)).
//
// Deterministic: a pure function of the operations.
#ifndef BTSIM_METRICS_KEY_HEATMAP_H_
#define BTSIM_METRICS_KEY_HEATMAP_H_

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "metrics/svg_chart.h"
#include "scenarios/history.h"

namespace btsim::metrics {

struct KeyHeatmap {
  struct Bucket {
    std::string table;
    std::string first;  // the first row key of the bucket
    std::string last;   // the last one
    int64_t rows = 0;   // distinct rows in it
  };
  std::vector<Bucket> buckets;  // in key order
  sim::Duration step{0};        // the width of a column
  size_t columns = 0;           // column c covers [c * step, (c + 1) * step)
  // counts[b * columns + c]: operations on bucket b invoked in column c.
  std::vector<int64_t> counts;
  // The first cell with the largest count (bucket-major order); -1 when
  // every cell is 0.
  int64_t hottest_bucket = -1;
  int64_t hottest_column = -1;
  int64_t max = 0;
  // The top of the colour scale: the 99th percentile (nearest rank) of the
  // non-zero cells, so that a few outliers do not darken everything else;
  // cells above it take the brightest colour. 0 when every cell is 0.
  int64_t scale = 0;

  int64_t Count(size_t bucket, size_t column) const {
    return counts[bucket * columns + column];
  }
};

// Buckets the operations of `history` invoked in [0, end). The step is 1 s,
// or the smallest of 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600 s that
// keeps the columns to at most `max_columns`.
KeyHeatmap BuildKeyHeatmap(const scenarios::History& history, sim::Duration end,
                           size_t max_buckets = 1000, size_t max_columns = 200);

// Writes the heatmap as <svg class="chart heatmap" id="`id`">: one
// <path class="cell hmL"> per colour level L (1..24), with a closed
// sub-path "M x y H x1 v h H x z" per run of that colour in a bucket's row
// (zero cells are the background), a colour legend (ops per bucket per step,
// square-root scale up to `scale`, viridis), a time axis, and a key axis
// labelled with the tables and the hierarchical prefixes of the row keys (split
// on '#'), shown where the prefix changes and as many as fit. `bands` (time in
// seconds) are outlined above the cells, `markers` drawn as vertical lines.
void WriteKeyHeatmap(const KeyHeatmap& heatmap, const std::string& id,
                     const std::vector<Band>& bands,
                     const std::vector<Marker>& markers, std::ostream& out);

// "table: first … last" of a bucket, keys shortened (not escaped).
std::string BucketRange(const KeyHeatmap::Bucket& bucket);

}  // namespace btsim::metrics

#endif  // BTSIM_METRICS_KEY_HEATMAP_H_
