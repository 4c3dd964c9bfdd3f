#include "scenarios/checks_rows.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "base/check.h"
#include "scenarios/flat_index.h"

namespace btsim::scenarios::checks_internal {
namespace {

// What read `op` saw, for a detail: "'tag'" or "nothing".
std::string ReadText(const History& history, const Operation& op) {
  return op.read().empty() ? "nothing"
                           : "'" + history.names->Text(op.read()) + "'";
}

using sim::Duration;

constexpr size_t kExamples = 5;  // examples named in a detail

// The `limit` entries with the least orders offered, with their texts: the
// first few examples of a check, whichever part finds them.
template <class Order>
class FirstFew {
 public:
  explicit FirstFew(size_t limit) : limit_(limit) {}
  // Whether an entry ordered `order` would be kept (its text is worth
  // making).
  bool Wants(const Order& order) const {
    return kept_.size() < limit_ || order < kept_.back().first;
  }
  void Add(Order order, std::string text) {
    if (!Wants(order)) return;
    auto at = std::upper_bound(
        kept_.begin(), kept_.end(), order,
        [](const Order& o, const auto& entry) { return o < entry.first; });
    kept_.insert(at, {std::move(order), std::move(text)});
    if (kept_.size() > limit_) kept_.pop_back();
  }
  bool empty() const { return kept_.empty(); }
  const std::string& first() const { return kept_.front().second; }
  std::vector<std::string> Texts() const {
    std::vector<std::string> texts;
    for (const auto& entry : kept_) texts.push_back(entry.second);
    return texts;
  }

 private:
  size_t limit_;
  std::vector<std::pair<Order, std::string>> kept_;  // by order
};

class LostWrites : public RowMeasure {
 public:
  explicit LostWrites(Filter filter) : filter_(std::move(filter)) {}

  void Add(const Analysis& analysis) override {
    const History& history = analysis.history();
    const auto& ops = history.operations;
    acked_ += static_cast<int64_t>(analysis.acked_writes().size());
    int64_t previous = -1;
    std::set<uint32_t> lost_ops;
    for (const auto& entry : analysis.lost_writes()) {
      lost_ops.insert(entry.op);
      const Operation& op = ops[entry.op];
      if (!filter_.Selects(op)) continue;
      const std::string& cluster = history.final_state[entry.cluster].id;
      ++per_cluster_[cluster];
      if (entry.op == previous) continue;  // counted once per write
      previous = entry.op;
      ++lost_;
      if (examples_.Wants(op.id)) {
        examples_.Add(
            op.id,
            std::string(op.client()) + " " + std::string(op.table()) + "/" +
                op.row.str() + " '" + history.names->Text(op.written()) +
                "' missing on " + cluster + " (has " +
                RowStateText(history, analysis.State(analysis.RowOf(entry.op),
                                                     entry.cluster)) +
                ")");
      }
    }
    // Writes a cluster had not applied yet when a run that did not settle
    // ended: pending, reported beside the lost ones.
    std::set<uint32_t> pending_ops;
    for (const auto& entry : analysis.pending_writes()) {
      if (filter_.Selects(ops[entry.op]) && lost_ops.count(entry.op) == 0) {
        pending_ops.insert(entry.op);
      }
    }
    pending_ += static_cast<int64_t>(pending_ops.size());
  }

  Measure Result() const override {
    const std::string pending =
        pending_ == 0
            ? ""
            : "; " + std::to_string(pending_) +
                  " pending (not yet replicated when the run ended; it did "
                  "not settle)";
    if (lost_ == 0) {
      return {0, "none of " + std::to_string(acked_) + " acknowledged writes" +
                     pending};
    }
    return {static_cast<double>(lost_),
            std::to_string(lost_) +
                " lost (by cluster: " + Breakdown(per_cluster_) + "); " +
                Join(examples_.Texts()) + pending};
  }

 private:
  Filter filter_;
  int64_t lost_ = 0;
  int64_t acked_ = 0;
  int64_t pending_ = 0;
  std::map<std::string, int64_t> per_cluster_;
  FirstFew<uint32_t> examples_{kExamples};  // by op id
};

class Rpo : public RowMeasure {
 public:
  Rpo(const History& history, Filter filter)
      : events_(history.events),
        filter_(std::move(filter)),
        counts_(events_.size(), 0) {}

  static bool Concerns(const Event& event) {
    return (event.kind == EventKind::kClusterDown ||
            event.kind == EventKind::kRemoveCluster) &&
           !event.refused;
  }

  void Add(const Analysis& analysis) override {
    const History& history = analysis.history();
    const auto& ops = history.operations;
    BTSIM_CHECK(history.events.size() == events_.size());
    std::vector<char> counted(ops.size(), 0);
    for (size_t e = 0; e < history.events.size(); ++e) {
      const Event& event = history.events[e];
      if (!Concerns(event)) continue;
      int64_t count = 0;
      if (event.unreplicated_ops.has_value()) {
        for (uint64_t id : *event.unreplicated_ops) {
          if (id >= ops.size() || counted[id]) continue;
          const Operation& op = ops[id];
          if (!op.ok() || op.type == OpType::kReadRow ||
              op.type == OpType::kScan || !filter_.Selects(op)) {
            continue;
          }
          counted[id] = 1;
          ++count;
        }
      } else {
        // Lower bound: committed there, held by no other surviving cluster
        // at the end.
        for (uint32_t id : analysis.acked_writes()) {
          const Operation& op = ops[id];
          if (counted[id] || op.cluster != event.cluster ||
              op.committed > event.at || !filter_.Selects(op)) {
            continue;
          }
          bool elsewhere = false;
          for (size_t c : analysis.surviving()) {
            if (history.final_state[c].id == event.cluster) continue;
            const RowState* state = analysis.State(analysis.RowOf(id), c);
            if (state != nullptr && !state->tag.empty() &&
                !Newer(op.timestamp, op.version, state->timestamp,
                       state->version)) {
              elsewhere = true;
              break;
            }
          }
          if (elsewhere) continue;
          counted[id] = 1;
          ++count;
        }
      }
      counts_[e] += count;
    }
  }

  Measure Result() const override {
    int64_t total = 0;
    std::vector<std::string> parts;
    for (size_t e = 0; e < events_.size(); ++e) {
      const Event& event = events_[e];
      if (!Concerns(event)) continue;
      total += counts_[e];
      parts.push_back(std::string(EventKindName(event.kind)) + " " +
                      event.cluster + " at " + FormatSeconds(event.at) + ": " +
                      std::to_string(counts_[e]) +
                      (event.unreplicated_ops.has_value()
                           ? ""
                           : " (approximate: not recorded)"));
    }
    if (parts.empty()) return {0, "no cluster went down"};
    return {static_cast<double>(total), Join(parts)};
  }

 private:
  const std::vector<Event>& events_;
  Filter filter_;
  std::vector<int64_t> counts_;  // per event
};

class ReadViolations : public RowMeasure {
 public:
  ReadViolations(const History& history, Filter filter, ReadCheck check)
      : promised_(check != ReadCheck::kStrong || history.strong_reads_promised),
        filter_(std::move(filter)),
        check_(check) {}

  void Add(const Analysis& analysis) override {
    if (!promised_) return;
    const History& history = analysis.history();
    for (const ReadResult& read : analysis.reads()) {
      const Operation& op = history.operations[read.op];
      if (!filter_.Selects(op)) continue;
      ++reads_;
      unknown_ += read.unknown_tag;
      const int64_t missed =
          check_ == ReadCheck::kReadYourWrites ? read.ryw_missed
          : check_ == ReadCheck::kMonotonic    ? read.monotonic_missed
                                               : read.strong_missed;
      if (missed < 0) continue;
      ++violations_;
      if (first_.Wants(op.id)) {
        first_.Add(op.id, "; first: " + DescribeOp(op) + " saw " +
                              ReadText(history, op) + ", older than " +
                              DescribeTag(history, missed));
      }
    }
  }

  Measure Result() const override {
    if (!promised_) return {0, "not promised by the routing"};
    std::string detail = std::to_string(violations_) + " of " +
                         std::to_string(reads_) + " reads" +
                         (first_.empty() ? "" : first_.first());
    if (unknown_ > 0) {
      detail += "; " + std::to_string(unknown_) + " reads saw unknown tags";
    }
    return {static_cast<double>(violations_), detail};
  }

 private:
  bool promised_;
  Filter filter_;
  ReadCheck check_;
  int64_t reads_ = 0;
  int64_t unknown_ = 0;
  int64_t violations_ = 0;
  FirstFew<uint32_t> first_{1};  // by op id
};

class LostUpdates : public RowMeasure {
 public:
  explicit LostUpdates(Filter filter) : filter_(std::move(filter)) {}

  void Add(const Analysis& analysis) override {
    const History& history = analysis.history();
    const auto& ops = history.operations;
    // Each row's acknowledged increments since its last drop: (commit time,
    // the op).
    std::map<int32_t, std::vector<std::pair<Duration, uint32_t>>> increments_of;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Operation& op = ops[i];
      if (op.type != OpType::kReadModifyWrite || !op.ok()) continue;
      const int32_t row = analysis.RowOf(static_cast<uint32_t>(i));
      const Duration committed = op.version != 0 ? op.committed : op.complete;
      if (auto drop = analysis.LastDrop(row); drop && committed <= *drop) {
        continue;
      }
      increments_of[row].emplace_back(committed, static_cast<uint32_t>(i));
    }
    for (auto& [row, increments] : increments_of) {
      std::sort(increments.begin(), increments.end());
      // An age rule may have removed the counter cell whenever the newest
      // one expired before the next increment (or by the end): the counter
      // restarts from 0 after that.
      size_t first = 0;
      for (size_t k = 0; k < increments.size(); ++k) {
        const std::optional<Duration> expiry =
            analysis.ExpiryOf(ops[increments[k].second]);
        if (!expiry) continue;
        const Duration next =
            k + 1 < increments.size() ? increments[k + 1].first : history.ended;
        if (*expiry <= next) first = k + 1;
      }
      int64_t acked = 0;
      int64_t selected = 0;
      for (size_t k = first; k < increments.size(); ++k) {
        ++acked;
        selected += filter_.Selects(ops[increments[k].second]);
      }
      increments_ += selected;
      int64_t final_counter = 0;
      for (size_t c : analysis.surviving()) {
        if (const RowState* state = analysis.State(row, c)) {
          final_counter = std::max(final_counter, state->counter);
        }
      }
      const int64_t row_lost =
          std::min(std::max<int64_t>(0, acked - final_counter), selected);
      if (row_lost == 0) continue;
      lost_ += row_lost;
      ++lossy_rows_;
      const Analysis::RowName& named = analysis.NameOf(row);
      // The worst row; on a tie, the one named first.
      const std::pair<int64_t, uint32_t> order{-row_lost,
                                               ops[named.first_op].id};
      if (worst_.Wants(order)) {
        worst_.Add(order, "; worst row: " + std::string(named.table) + "/" +
                              named.row.str() + ", " + std::to_string(acked) +
                              " acknowledged, final counter " +
                              std::to_string(final_counter));
      }
    }
  }

  Measure Result() const override {
    return {static_cast<double>(lost_),
            std::to_string(lost_) + " of " + std::to_string(increments_) +
                " acknowledged increments lost on " +
                std::to_string(lossy_rows_) + " rows" +
                (worst_.empty() ? "" : worst_.first())};
  }

 private:
  Filter filter_;
  int64_t lost_ = 0;
  int64_t increments_ = 0;
  int64_t lossy_rows_ = 0;
  FirstFew<std::pair<int64_t, uint32_t>> worst_{1};
};

// STALENESS_SECONDS and K_STALENESS: a percentile over the selected reads,
// the stale ones counted, the worst described.
// Value: Duration (staleness) or int64_t (k-staleness).
template <class Value>
class StaleReads : public RowMeasure {
 public:
  static constexpr bool kByCount = std::is_same_v<Value, int64_t>;

  StaleReads(Filter filter, double percentile)
      : filter_(std::move(filter)), percentile_(percentile) {}

  void Add(const Analysis& analysis) override {
    const History& history = analysis.history();
    for (const ReadResult& read : analysis.reads()) {
      const Operation& op = history.operations[read.op];
      if (!filter_.Selects(op)) continue;
      Value value;
      bool is_stale;
      if constexpr (kByCount) {
        value = read.k_stale;
        is_stale = read.k_stale > 0;
      } else {
        value = read.staleness;
        is_stale = read.stale_missed >= 0;
      }
      values_.push_back(value);
      if (!is_stale) continue;
      ++stale_;
      const std::pair<Value, uint32_t> order{-value, op.id};
      if (!worst_.Wants(order)) continue;
      if constexpr (kByCount) {
        worst_.Add(order, "; worst " + std::to_string(read.k_stale) +
                              " writes behind: " + DescribeOp(op) + " saw " +
                              ReadText(history, op));
      } else {
        worst_.Add(order, "; worst " + FormatSeconds(read.staleness) + ": " +
                              DescribeOp(op) + " missed " +
                              DescribeTag(history, read.stale_missed));
      }
    }
  }

  Measure Result() const override {
    if (values_.empty()) return NoSamples();
    const size_t n = values_.size();
    const Value value = Percentile(values_, percentile_);
    std::string detail = "p" + FormatNumber(percentile_) + " of " +
                         std::to_string(n) + " reads; " +
                         std::to_string(stale_) + " stale" +
                         (worst_.empty() ? "" : worst_.first());
    if constexpr (kByCount) {
      return {static_cast<double>(value), detail};
    } else {
      return {Seconds(value), detail};
    }
  }

 private:
  Filter filter_;
  double percentile_;
  std::vector<Value> values_;
  int64_t stale_ = 0;
  // The stalest; on a tie, the first read.
  FirstFew<std::pair<Value, uint32_t>> worst_{1};
};

class Visibility : public RowMeasure {
 public:
  Visibility(Filter filter, Duration t) : filter_(std::move(filter)), t_(t) {}

  void Add(const Analysis& analysis) override {
    const History& history = analysis.history();
    Series reads;  // group row, at = invoke
    for (const ReadResult& read : analysis.reads()) {
      const Operation& op = history.operations[read.op];
      if (filter_.Selects(op)) {
        reads.Add(static_cast<uint32_t>(read.row), op.invoke, read.effective,
                  read.op);
      }
    }
    reads.Finish();
    for (uint32_t id : analysis.acked_writes()) {
      const Operation& op = history.operations[id];
      const auto* read = reads.FirstAtOrAfter(
          static_cast<uint32_t>(analysis.RowOf(id)), op.complete + t_);
      if (read == nullptr) continue;
      ++samples_;
      visible_ += !(read->key < KeyOf(op));
    }
  }

  Measure Result() const override {
    if (samples_ == 0) return NoSamples();
    return {static_cast<double>(visible_) / static_cast<double>(samples_),
            std::to_string(visible_) + " of " + std::to_string(samples_) +
                " writes seen by the first read " + FormatSeconds(t_) +
                " after their acknowledgement"};
  }

 private:
  Filter filter_;
  Duration t_;
  int64_t samples_ = 0;
  int64_t visible_ = 0;
};

class Lww : public RowMeasure {
 public:
  explicit Lww(Filter filter) : filter_(std::move(filter)) {}

  void Add(const Analysis& analysis) override {
    const History& history = analysis.history();
    const LwwAnomalies found = FindLwwAnomalies(history, filter_);
    count_ += found.count;
    writes_ += found.writes;
    if (found.count == 0) return;
    const Operation& shadowed = history.operations[found.shadowed];
    const Operation& shadowing = history.operations[found.shadowing];
    // FindLwwAnomalies looks at rows in (table, row) order.
    Order order{std::string(shadowed.table()), shadowed.row.str(), shadowed.id};
    if (!first_.Wants(order)) return;
    const auto ms = [](cluster::Timestamp t) {
      return std::to_string(t.time_since_epoch().count() / 1000);
    };
    first_.Add(std::move(order),
               "; e.g. " + DescribeOp(shadowed) + " with timestamp " +
                   ms(shadowed.timestamp) + " ms, shadowed by " +
                   DescribeOp(shadowing) + " acknowledged at " +
                   FormatSeconds(shadowing.complete) + " with timestamp " +
                   ms(shadowing.timestamp) + " ms");
  }

  Measure Result() const override {
    if (count_ == 0) {
      return {0, "none of " + std::to_string(writes_) + " acknowledged writes"};
    }
    return {static_cast<double>(count_),
            std::to_string(count_) + " of " + std::to_string(writes_) +
                " acknowledged writes" + first_.first()};
  }

 private:
  using Order = std::tuple<std::string, std::string, uint32_t>;
  Filter filter_;
  int64_t count_ = 0;
  int64_t writes_ = 0;
  FirstFew<Order> first_{1};
};

}  // namespace

std::string RowStateText(const History& history, const RowState* state) {
  if (state == nullptr) return "(absent)";
  std::string text = state->tag.empty()
                         ? "no value"
                         : "'" + history.names->Text(state->tag) + "'";
  if (state->counter != 0) {
    text += " counter " + std::to_string(state->counter);
  }
  return text;
}

HistorySplit::HistorySplit(const History& history, size_t parts)
    : history_(history), parts_(parts) {
  BTSIM_CHECK(parts > 0 && parts <= kMaxParts);
  part_of_.reserve(history.operations.size());
  for (const Operation& op : history.operations) {
    part_of_.push_back(
        static_cast<uint8_t>(HashTableRow(op.table(), op.row) % parts));
  }
  rows_.resize(history.final_state.size());
  for (size_t c = 0; c < history.final_state.size(); ++c) {
    const RowStates& rows = history.final_state[c].rows;
    rows_[c].resize(parts);
    uint32_t i = 0;
    for (const auto& [key, state] : rows) {
      rows_[c][HashTableRow(key.first, key.second) % parts].push_back(i++);
    }
  }
}

History HistorySplit::Part(size_t part) const {
  BTSIM_CHECK(part < parts_);
  const History& history = history_;
  History out;
  out.start = history.start;
  out.names = history.names;
  for (auto it = history.operations.begin(); it != history.operations.end();
       ++it) {
    if (part_of_[it.index()] == part) out.operations.push_back(*it);
  }
  out.events = history.events;
  for (Event& event : out.events) {
    if (!event.unreplicated_ops.has_value()) continue;
    std::vector<uint64_t> local;
    for (uint64_t id : *event.unreplicated_ops) {
      // The part's operations are in id order: find `id` by bisection.
      size_t low = 0, high = out.operations.size();
      while (low < high) {
        const size_t mid = low + (high - low) / 2;
        if (out.operations[mid].id < id) {
          low = mid + 1;
        } else {
          high = mid;
        }
      }
      if (low < out.operations.size() && out.operations[low].id == id) {
        local.push_back(low);
      }
    }
    event.unreplicated_ops = std::move(local);
  }
  for (size_t c = 0; c < history.final_state.size(); ++c) {
    const ClusterState& cluster = history.final_state[c];
    ClusterState& copy = out.final_state.emplace_back();
    copy.id = cluster.id;
    copy.digest = cluster.digest;
    copy.same_as = cluster.same_as;
    copy.applied = cluster.applied;
    copy.rows.reserve(rows_[c][part].size());
    for (uint32_t i : rows_[c][part]) {
      const auto& [key, state] = *(cluster.rows.begin() + i);
      copy.rows.Append(key, state);
    }
  }
  out.gc_rules = history.gc_rules;
  out.duration = history.duration;
  out.settled = history.settled;
  out.ended = history.ended;
  out.strong_reads_promised = history.strong_reads_promised;
  return out;
}

void ForEachPart(const History& history, size_t parts,
                 const std::function<void(const Analysis&)>& visit) {
  if (parts == 0) {
    parts = std::clamp<size_t>(
        (history.operations.size() + kOperationsPerPart - 1) /
            kOperationsPerPart,
        1, HistorySplit::kMaxParts);
  }
  // A history all in memory is analysed in place; a spilled one is read
  // back, part by part.
  if (parts == 1 && !history.operations.Spilled()) {
    visit(Analysis(history));
    return;
  }
  const HistorySplit split(history, parts);
  for (size_t part = 0; part < parts; ++part) {
    const History sub = split.Part(part);
    visit(Analysis(sub));
  }
}

std::unique_ptr<RowMeasure> LostWritesMeasure(const Filter& filter) {
  return std::make_unique<LostWrites>(filter);
}
std::unique_ptr<RowMeasure> RpoMeasure(const History& history,
                                       const Filter& filter) {
  return std::make_unique<Rpo>(history, filter);
}
std::unique_ptr<RowMeasure> ReadViolationsMeasure(const History& history,
                                                  const Filter& filter,
                                                  ReadCheck check) {
  return std::make_unique<ReadViolations>(history, filter, check);
}
std::unique_ptr<RowMeasure> LostUpdatesMeasure(const Filter& filter) {
  return std::make_unique<LostUpdates>(filter);
}
std::unique_ptr<RowMeasure> StalenessMeasure(const Filter& filter,
                                             double percentile) {
  return std::make_unique<StaleReads<Duration>>(filter, percentile);
}
std::unique_ptr<RowMeasure> KStalenessMeasure(const Filter& filter,
                                              double percentile) {
  return std::make_unique<StaleReads<int64_t>>(filter, percentile);
}
std::unique_ptr<RowMeasure> VisibilityMeasure(const Filter& filter,
                                              Duration t) {
  return std::make_unique<Visibility>(filter, t);
}
std::unique_ptr<RowMeasure> LwwMeasure(const Filter& filter) {
  return std::make_unique<Lww>(filter);
}

void KStalenessCounts::Add(const Analysis& analysis) {
  std::vector<int64_t> at_most(kKStalenessMax + 1, 0);
  for (const ReadResult& read : analysis.reads()) {
    ++counts_.reads;
    counts_.max = std::max(counts_.max, read.k_stale);
    if (read.k_stale <= kKStalenessMax) ++at_most[read.k_stale];
  }
  int64_t sum = 0;
  for (size_t k = 0; k < at_most.size(); ++k) {
    sum += at_most[k];
    counts_.at_most[k] += sum;
  }
}

}  // namespace btsim::scenarios::checks_internal
