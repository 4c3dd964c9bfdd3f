// Internal to the checks (checks.cc): the checks that judge each row on its
// own — lost writes, RPO, read violations, lost updates, staleness,
// t-visibility, LWW anomalies — computed over a history's parts. A part
// holds every operation of some rows and is analysed on its own, so the
// analysis needs memory for the largest part, not for the whole run.
// Results do not depend on how the rows are split (the tests compare
// splits). Not a public API; checks.h has the semantics.
#ifndef BTSIM_SCENARIOS_CHECKS_ROWS_H_
#define BTSIM_SCENARIOS_CHECKS_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "scenarios/checks.h"
#include "scenarios/checks_analysis.h"
#include "scenarios/history.h"

namespace btsim::scenarios::checks_internal {

// What a check measured.
struct Measure {
  double value = 0;
  std::string detail;
  // A distribution or ratio over an empty selection: the expectation fails.
  bool no_samples = false;
};

// What a distribution or ratio measures when nothing was selected.
inline Measure NoSamples(std::string detail = "no samples") {
  return {0, std::move(detail), true};
}

// A row's final state in a detail: "'tag' counter 3", "(absent)", ...
std::string RowStateText(const History& history, const RowState* state);

// Operations per part when the split is left to ForEachPart.
inline constexpr size_t kOperationsPerPart = size_t{1} << 19;

// A split of `history` into `parts` parts, by row: part p holds the
// operations on the rows whose HashTableRow(table, row) % parts is p (a
// scan goes by its start row), in id order. Operation::id keeps the
// operation's id in `history`; every other reference to an operation
// (Event::unreplicated_ops, the Analysis's indexes) is a position in the
// part's operations. A part's final state keeps its rows only; events, GC
// rules, times and flags are the history's; there are no appends,
// failovers, health changes, CPU or link samples. The split costs one pass,
// one byte per operation and four per stored row; each Part() reads the
// history once more. `history` must outlive it.
class HistorySplit {
 public:
  static constexpr size_t kMaxParts = 256;

  // Requires 0 < parts <= kMaxParts.
  HistorySplit(const History& history, size_t parts);
  History Part(size_t part) const;  // requires part < parts

 private:
  const History& history_;
  size_t parts_;
  std::vector<uint8_t> part_of_;  // per operation
  // Per cluster, per part: indexes in final_state[cluster].rows.
  std::vector<std::vector<std::vector<uint32_t>>> rows_;
};

// Calls `visit` with the analysis of each part of `history`, in part
// order: `parts` of them (0: one per kOperationsPerPart operations, at
// least one and at most HistorySplit::kMaxParts). With one part the history is
// analysed in place.
void ForEachPart(const History& history, size_t parts,
                 const std::function<void(const Analysis&)>& visit);

// A row check summed over parts: Add() each part's analysis (the parts of
// one split, each once), then Result().
class RowMeasure {
 public:
  virtual ~RowMeasure() = default;
  virtual void Add(const Analysis& part) = 0;
  virtual Measure Result() const = 0;
};

enum class ReadCheck { kReadYourWrites, kMonotonic, kStrong };

// The checks of checks.h over the operations `filter` selects. RpoMeasure
// reads `history`'s events, which must outlive it; so do the parts' until
// Add() returns.
std::unique_ptr<RowMeasure> LostWritesMeasure(const Filter& filter);
std::unique_ptr<RowMeasure> RpoMeasure(const History& history,
                                       const Filter& filter);
std::unique_ptr<RowMeasure> ReadViolationsMeasure(const History& history,
                                                  const Filter& filter,
                                                  ReadCheck check);
std::unique_ptr<RowMeasure> LostUpdatesMeasure(const Filter& filter);
std::unique_ptr<RowMeasure> StalenessMeasure(const Filter& filter,
                                             double percentile);
std::unique_ptr<RowMeasure> KStalenessMeasure(const Filter& filter,
                                              double percentile);
std::unique_ptr<RowMeasure> VisibilityMeasure(const Filter& filter,
                                              sim::Duration t);
std::unique_ptr<RowMeasure> LwwMeasure(const Filter& filter);
// In checks_adds.cc.
std::unique_ptr<RowMeasure> DoubleAppliedMeasure(const Filter& filter);

// TVisibility (checks.h) summed over parts.
class VisibilityCurves {
 public:
  void Add(const Analysis& part);
  std::vector<VisibilityCurve> Result() const;

  // Per (write cluster, read cluster): per bucket, samples and visible.
  struct Counts {
    std::vector<int64_t> samples, visible;
  };

 private:
  std::map<std::pair<std::string, std::string>, Counts> pairs_;
};

// ComputeKStaleness (checks.h) summed over parts.
class KStalenessCounts {
 public:
  void Add(const Analysis& part);
  KStaleness Result() const { return counts_; }

 private:
  KStaleness counts_{0, std::vector<int64_t>(kKStalenessMax + 1, 0), 0};
};

// RunAllChecks (checks.h) with the row checks computed over `parts` parts
// (0: as ForEachPart chooses). The results do not depend on `parts`.
AllChecks RunAllChecksInParts(
    const History& history,
    const google::protobuf::RepeatedPtrField<btsim::scenario::v1::Expectation>&
        expectations,
    size_t parts);

}  // namespace btsim::scenarios::checks_internal

#endif  // BTSIM_SCENARIOS_CHECKS_ROWS_H_
