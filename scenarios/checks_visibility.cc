// VisibilityCurves (checks_rows.h): for each (write cluster, read cluster),
// the probability that a read on the second cluster, t after a write on the
// first was acknowledged, sees it (TVisibility in checks.h).
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "scenarios/checks.h"
#include "scenarios/checks_analysis.h"
#include "scenarios/checks_rows.h"

namespace btsim::scenarios {

using sim::Duration;

std::vector<Duration> VisibilityBuckets() {
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  return {Duration(0),       milliseconds(1),  milliseconds(5),
          milliseconds(10),  milliseconds(50), milliseconds(100),
          milliseconds(500), seconds(1),       seconds(5),
          seconds(10),       seconds(60)};
}

namespace checks_internal {

void VisibilityCurves::Add(const Analysis& analysis) {
  const History& history = analysis.history();
  const std::vector<Duration> buckets = VisibilityBuckets();
  // Read clusters in name order, a cluster's id its place there; the series
  // groups by (cluster, row). A run has a handful of clusters, so a linear
  // search of interned Names finds one (no string or map per read).
  std::vector<Name> clusters;
  auto place_of = [](const std::vector<Name>& names, Name name) {
    return static_cast<size_t>(std::find(names.begin(), names.end(), name) -
                               names.begin());
  };
  for (const ReadResult& read : analysis.reads()) {
    const Name cluster = history.operations[read.op].cluster;
    if (place_of(clusters, cluster) == clusters.size()) {
      clusters.push_back(cluster);
    }
  }
  std::sort(clusters.begin(), clusters.end());
  Series reads;
  for (const ReadResult& read : analysis.reads()) {
    const Operation& op = history.operations[read.op];
    reads.Add((uint64_t{place_of(clusters, op.cluster)} << 32) |
                  static_cast<uint32_t>(read.row),
              op.invoke, read.effective, read.op);
  }
  reads.Finish();
  // (write cluster, read cluster) -> counts, in name order for the curves;
  // found through `slots` ([writer's place * clusters + reader's]) after
  // the first time.
  std::vector<Name> writers;
  std::vector<Counts*> slots;
  auto counts_of = [&](Name writer, size_t reader) -> Counts& {
    size_t w = place_of(writers, writer);
    if (w == writers.size()) {
      writers.push_back(writer);
      slots.resize(writers.size() * clusters.size(), nullptr);
    }
    Counts*& slot = slots[w * clusters.size() + reader];
    if (slot == nullptr) {
      slot = &pairs_[{writer.str(), clusters[reader].str()}];
      slot->samples.resize(buckets.size(), 0);
      slot->visible.resize(buckets.size(), 0);
    }
    return *slot;
  };
  for (uint32_t id : analysis.acked_writes()) {
    // No read of the row: no sample (every range below is empty).
    if (!analysis.RowHasReads(analysis.RowOf(id))) continue;
    const Operation& op = history.operations[id];
    const auto key = KeyOf(op);
    for (size_t c = 0; c < clusters.size(); ++c) {
      const auto range = reads.Range((uint64_t{c} << 32) |
                                     static_cast<uint32_t>(analysis.RowOf(id)));
      if (range.first == range.second) continue;
      Counts* counts = nullptr;
      for (size_t b = 0; b < buckets.size(); ++b) {
        const auto* read =
            reads.FirstAtOrAfter(range, op.complete + buckets[b]);
        if (read == nullptr) break;  // none later either
        if (counts == nullptr) counts = &counts_of(op.cluster, c);
        ++counts->samples[b];
        counts->visible[b] += !(read->key < key);
      }
    }
  }
}

std::vector<VisibilityCurve> VisibilityCurves::Result() const {
  const std::vector<Duration> buckets = VisibilityBuckets();
  std::vector<VisibilityCurve> curves;
  for (const auto& [names, counts] : pairs_) {
    VisibilityCurve curve;
    curve.write_cluster = names.first;
    curve.read_cluster = names.second;
    curve.t = buckets;
    curve.samples = counts.samples;
    for (size_t b = 0; b < buckets.size(); ++b) {
      curve.probability.push_back(
          counts.samples[b] == 0 ? -1
                                 : static_cast<double>(counts.visible[b]) /
                                       static_cast<double>(counts.samples[b]));
    }
    curves.push_back(std::move(curve));
  }
  return curves;
}

}  // namespace checks_internal

}  // namespace btsim::scenarios
