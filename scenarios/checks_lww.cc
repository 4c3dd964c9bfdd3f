// FindLwwAnomalies (checks_analysis.h): acknowledged writes shadowed by a
// write acknowledged before they were issued that carries a newer
// timestamp.
#include <algorithm>
#include <string_view>
#include <vector>

#include "scenarios/checks_analysis.h"

namespace btsim::scenarios::checks_internal {

LwwAnomalies FindLwwAnomalies(const History& history, const Filter& filter) {
  const OperationLog& ops = history.operations;
  // Acknowledged writes of the value column, grouped by row.
  std::vector<uint32_t> writes;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Operation& op = ops[i];
    if (op.ok() && op.version != 0 &&
        (op.type == OpType::kWrite || op.type == OpType::kCheckAndMutate)) {
      writes.push_back(static_cast<uint32_t>(i));
    }
  }
  // By (table, row), then invoke order.
  auto same_row = [&](uint32_t a, uint32_t b) {
    return ops[a].table() == ops[b].table() &&
           ops[a].row.view() == ops[b].row.view();
  };
  std::sort(writes.begin(), writes.end(), [&](uint32_t a, uint32_t b) {
    const std::string_view ta = ops[a].table(), tb = ops[b].table();
    if (ta != tb) return ta < tb;
    const std::string_view ra = ops[a].row.view(), rb = ops[b].row.view();
    return ra != rb ? ra < rb : a < b;
  });
  LwwAnomalies result;
  std::vector<uint32_t> by_complete;
  for (size_t begin = 0; begin < writes.size();) {
    size_t end = begin + 1;
    while (end < writes.size() && same_row(writes[end], writes[begin])) {
      ++end;
    }
    // The row's writes (of one table) by invoke time (op ids are in invoke
    // order) and by acknowledgement; sweep both, keeping the newest timestamp
    // among the writes acknowledged before the current one was issued.
    by_complete.assign(writes.begin() + static_cast<std::ptrdiff_t>(begin),
                       writes.begin() + static_cast<std::ptrdiff_t>(end));
    std::sort(by_complete.begin(), by_complete.end(),
              [&](uint32_t a, uint32_t b) {
                return ops[a].complete != ops[b].complete
                           ? ops[a].complete < ops[b].complete
                           : a < b;
              });
    size_t acknowledged = 0;
    int64_t newest = -1;  // index in ops
    for (size_t i = begin; i < end; ++i) {
      const Operation& w = ops[writes[i]];
      while (acknowledged < by_complete.size() &&
             ops[by_complete[acknowledged]].complete < w.invoke) {
        const uint32_t a = by_complete[acknowledged++];
        if (newest < 0 || ops[a].timestamp > ops[newest].timestamp) newest = a;
      }
      if (!filter.Selects(w)) continue;
      ++result.writes;
      if (newest >= 0 && ops[newest].timestamp > w.timestamp) {
        ++result.count;
        if (result.count == 1) {
          result.shadowed = writes[i];
          result.shadowing = static_cast<uint32_t>(newest);
        }
      }
    }
    begin = end;
  }
  return result;
}

}  // namespace btsim::scenarios::checks_internal
