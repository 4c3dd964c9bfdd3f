// DOUBLE_APPLIED_INCREMENTS (checks.h): add_to_cell operations applied by
// more than one of their attempts, summed over a history's parts.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "scenarios/checks_rows.h"

namespace btsim::scenarios::checks_internal {
namespace {

class DoubleApplied : public RowMeasure {
 public:
  explicit DoubleApplied(Filter filter) : filter_(std::move(filter)) {}

  void Add(const Analysis& analysis) override {
    const History& history = analysis.history();
    const auto& ops = history.operations;
    // Per row (in row order): the extra applications of its adds.
    std::map<int32_t, int64_t> extra_of;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Operation& op = ops[i];
      if (op.type != OpType::kAddToCell || !filter_.Selects(op)) continue;
      ++adds_;
      if (op.applied() <= 1) continue;
      ++doubled_;
      extra_of[analysis.RowOf(static_cast<uint32_t>(i))] += op.applied() - 1;
      // The first such add (by id), whichever part holds it.
      if (first_id_ < 0 || op.id < first_id_) {
        first_id_ = op.id;
        first_ = "; first: add " + std::to_string(op.id) + " by " +
                 std::string(op.client().view()) + " to " +
                 std::string(op.table().view()) + "/" + op.row.str() +
                 ", applied by " + std::to_string(op.applied()) + " of " +
                 std::to_string(op.attempts) + " attempts" +
                 (op.idempotent() ? " (with a token)" : "");
      }
    }
    for (const auto& [row, extra] : extra_of) {
      extra_ += extra;
      ++rows_;
    }
  }

  Measure Result() const override {
    return {static_cast<double>(extra_),
            std::to_string(extra_) + " extra applications of " +
                std::to_string(doubled_) + " of " + std::to_string(adds_) +
                " adds, on " + std::to_string(rows_) + " rows" + first_};
  }

 private:
  Filter filter_;
  int64_t adds_ = 0;
  int64_t doubled_ = 0;  // adds applied more than once
  int64_t extra_ = 0;    // their applications beyond the first
  int64_t rows_ = 0;
  int64_t first_id_ = -1;
  std::string first_;
};

}  // namespace

std::unique_ptr<RowMeasure> DoubleAppliedMeasure(const Filter& filter) {
  return std::make_unique<DoubleApplied>(filter);
}

}  // namespace btsim::scenarios::checks_internal
