// Filter: Bigtable's RowFilter algebra, evaluated one row at a time.
//
// Build a tree with the factory functions (those that can fail on bad input
// return Result and name the offending field), then call Validate() on the
// root before use: it enforces the rules that depend on the whole tree
// (at most one apply_label along any chain, no sink inside a condition).
// All regexes are RE2 in Latin-1 mode and must match the whole input, so they
// work on arbitrary bytes.
//
// A Filter is immutable after construction; Apply is const and may run on
// many threads at once only if each thread passes its own Rng.
#ifndef BTSIM_CLUSTER_FILTER_H_
#define BTSIM_CLUSTER_FILTER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "cluster/bound.h"
#include "cluster/cell_view.h"
#include "cluster/timestamp.h"
#include "sim/rng.h"

namespace btsim::cluster {

class Filter {
 public:
  enum class Kind {
    kPassAll,
    kBlockAll,
    kSink,
    kStripValue,
    kApplyLabel,
    kRowKeyRegex,
    kFamilyNameRegex,
    kColumnQualifierRegex,
    kValueRegex,
    kColumnRange,
    kTimestampRange,
    kValueRange,
    kCellsPerRowOffset,
    kCellsPerRowLimit,
    kCellsPerColumnLimit,
    kRowSample,
    kChain,
    kInterleave,
    kCondition,
  };

  static Filter PassAll();
  static Filter BlockAll();
  static Filter Sink();
  static Filter StripValue();
  static Filter ApplyLabel(std::string label);
  static Result<Filter> RowKeyRegex(std::string pattern);
  static Result<Filter> FamilyNameRegex(std::string pattern);
  static Result<Filter> ColumnQualifierRegex(std::string pattern);
  static Result<Filter> ValueRegex(std::string pattern);
  // Qualifiers of `family` (exact name) within [start, end].
  static Filter ColumnRange(std::string family, Bound start, Bound end);
  // Timestamps in [start, end); an end of Timestamp{} (the epoch, 0 on the
  // wire) means unbounded. Requires timestamps not before the epoch and at
  // millisecond granularity, else INVALID_ARGUMENT.
  static Result<Filter> TimestampRange(Timestamp start, Timestamp end);
  static Filter ValueRange(Bound start, Bound end);
  // `n` must be >= 0 (offset) / > 0 (limits), else INVALID_ARGUMENT.
  static Result<Filter> CellsPerRowOffset(int64_t n);
  static Result<Filter> CellsPerRowLimit(int64_t n);
  static Result<Filter> CellsPerColumnLimit(int64_t n);
  // Keeps a whole row with probability p; p must be in (0, 1) exclusive.
  static Result<Filter> RowSample(double p);
  static Filter Chain(std::vector<Filter> filters);
  static Filter Interleave(std::vector<Filter> filters);
  // A missing branch is null: it outputs nothing.
  static Filter Condition(Filter predicate, std::unique_ptr<Filter> on_true,
                          std::unique_ptr<Filter> on_false);

  Filter(Filter&&) noexcept;
  Filter& operator=(Filter&&) noexcept;
  ~Filter();

  Kind kind() const;

  // Whole-tree checks; call once on the root. INVALID_ARGUMENT names the rule.
  Status Validate() const;

  // Evaluates the filter on one row. `cells` must be in canonical order
  // (see CanonicalLess). Appends the output cells to `*out` in canonical
  // order (stable: equal cells keep the order the algebra produced them in,
  // so an interleave of two pass_all yields every cell twice). Output views
  // point into `cells` and into this Filter (labels). `rng` is used only by
  // row_sample.
  void Apply(std::string_view row_key, std::span<const CellView> cells,
             sim::Rng& rng, std::vector<CellView>* out) const;

 private:
  struct Node;
  explicit Filter(std::unique_ptr<Node> node);
  std::unique_ptr<Node> node_;
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_FILTER_H_
