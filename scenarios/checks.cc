#include "scenarios/checks.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "scenarios/checks_analysis.h"
#include "scenarios/scenario_fields.h"

namespace btsim::scenarios {
namespace {

namespace pb = btsim::scenario::v1;
using checks_internal::Analysis;
using checks_internal::DescribeOp;
using checks_internal::DescribeTag;
using checks_internal::Filter;
using checks_internal::FormatNumber;
using checks_internal::FormatSeconds;
using checks_internal::Outage;
using checks_internal::ReadResult;
using checks_internal::Seconds;
using checks_internal::Series;
using sim::Duration;

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr size_t kExamples = 5;  // examples named in a detail

struct Measure {
  double value = 0;
  std::string detail;
  // A distribution or ratio over an empty selection: the expectation fails.
  bool no_samples = false;
};

// What a distribution or ratio measures when nothing was selected.
Measure NoSamples(std::string detail = "no samples") {
  return {0, std::move(detail), true};
}

std::string Join(const std::vector<std::string>& parts,
                 const std::string& separator = "; ") {
  std::string out;
  for (const std::string& part : parts) {
    if (!out.empty()) out += separator;
    out += part;
  }
  return out;
}

template <typename Key>
std::string Breakdown(const std::map<Key, int64_t>& counts) {
  std::vector<std::string> parts;
  for (const auto& [key, count] : counts) {
    parts.push_back(std::string(key) + " " + std::to_string(count));
  }
  return Join(parts, ", ");
}

std::string RowStateText(const RowState* state) {
  if (state == nullptr) return "(absent)";
  std::string text =
      state->tag.empty() ? "no value" : "'" + state->tag.str() + "'";
  if (state->counter != 0) {
    text += " counter " + std::to_string(state->counter);
  }
  return text;
}

bool SameRowState(const RowState& a, const RowState& b) {
  return a.tag == b.tag && a.timestamp == b.timestamp &&
         a.version == b.version && a.counter == b.counter;
}

// --- whole-run facts ---------------------------------------------------------

Measure Converged(const Analysis& analysis) {
  const History& history = analysis.history();
  const auto& surviving = analysis.surviving();
  if (surviving.empty()) return {1, "no clusters"};
  const ClusterState& base = history.final_state[surviving[0]];
  for (size_t i = 1; i < surviving.size(); ++i) {
    const ClusterState& other = history.final_state[surviving[i]];
    if (other.digest == base.digest) continue;
    std::string where = "digests differ (" + base.id + " " + base.digest +
                        ", " + other.id + " " + other.digest +
                        "); value cells and counters equal";
    const RowStates& base_rows = RowsOf(history, surviving[0]);
    const RowStates& other_rows = RowsOf(history, surviving[i]);
    auto a = base_rows.begin();
    auto b = other_rows.begin();
    while (a != base_rows.end() || b != other_rows.end()) {
      if (b == other_rows.end() ||
          (a != base_rows.end() && a->first < b->first)) {
        where = other.id + " differs from " + base.id + " at " +
                a->first.first.str() + "/" + a->first.second.str() + ": " +
                RowStateText(&a->second) + " vs (absent)";
        break;
      }
      if (a == base_rows.end() || b->first < a->first) {
        where = other.id + " differs from " + base.id + " at " +
                b->first.first.str() + "/" + b->first.second.str() +
                ": (absent) vs " + RowStateText(&b->second);
        break;
      }
      if (!SameRowState(a->second, b->second)) {
        where = other.id + " differs from " + base.id + " at " +
                a->first.first.str() + "/" + a->first.second.str() + ": " +
                RowStateText(&a->second) + " vs " + RowStateText(&b->second);
        break;
      }
      ++a;
      ++b;
    }
    return {0, where};
  }
  return {
      1, std::to_string(surviving.size()) + " clusters, digest " + base.digest};
}

Measure LostWrites(const Analysis& analysis, const Filter& filter) {
  const History& history = analysis.history();
  const auto& ops = history.operations;
  int64_t lost = 0;
  int64_t previous = -1;
  std::vector<std::string> examples;
  std::map<std::string, int64_t> per_cluster;
  for (const auto& entry : analysis.lost_writes()) {
    const Operation& op = ops[entry.op];
    if (!filter.Selects(op)) continue;
    const std::string& cluster = history.final_state[entry.cluster].id;
    ++per_cluster[cluster];
    if (entry.op == previous) continue;  // counted once per write
    previous = entry.op;
    ++lost;
    if (examples.size() < kExamples) {
      examples.push_back(std::string(op.client()) + " " +
                         std::string(op.table()) + "/" + op.row.str() + " '" +
                         op.written().str() + "' missing on " + cluster +
                         " (has " +
                         RowStateText(analysis.State(analysis.RowOf(entry.op),
                                                     entry.cluster)) +
                         ")");
    }
  }
  // Writes a cluster had not applied yet when a run that did not settle
  // ended: pending, reported beside the lost ones.
  std::set<uint32_t> lost_ops;
  for (const auto& entry : analysis.lost_writes()) lost_ops.insert(entry.op);
  std::set<uint32_t> pending_ops;
  for (const auto& entry : analysis.pending_writes()) {
    if (filter.Selects(ops[entry.op]) && lost_ops.count(entry.op) == 0) {
      pending_ops.insert(entry.op);
    }
  }
  const std::string pending =
      pending_ops.empty()
          ? ""
          : "; " + std::to_string(pending_ops.size()) +
                " pending (not yet replicated when the run ended; it did "
                "not settle)";
  if (lost == 0) {
    return {0, "none of " + std::to_string(analysis.acked_writes().size()) +
                   " acknowledged writes" + pending};
  }
  return {static_cast<double>(lost),
          std::to_string(lost) + " lost (by cluster: " +
              Breakdown(per_cluster) + "); " + Join(examples) + pending};
}

Measure Rpo(const Analysis& analysis, const Filter& filter) {
  const History& history = analysis.history();
  const auto& ops = history.operations;
  std::vector<char> counted(ops.size(), 0);
  int64_t total = 0;
  std::vector<std::string> parts;
  for (const Event& event : history.events) {
    if ((event.kind != EventKind::kClusterDown &&
         event.kind != EventKind::kRemoveCluster) ||
        event.refused) {
      continue;
    }
    int64_t count = 0;
    if (event.unreplicated_ops.has_value()) {
      for (uint64_t id : *event.unreplicated_ops) {
        if (id >= ops.size() || counted[id]) continue;
        const Operation& op = ops[id];
        if (!op.ok() || op.type == OpType::kReadRow ||
            op.type == OpType::kScan || !filter.Selects(op)) {
          continue;
        }
        counted[id] = 1;
        ++count;
      }
    } else {
      // Lower bound: committed there, held by no other surviving cluster at
      // the end.
      for (uint32_t id : analysis.acked_writes()) {
        const Operation& op = ops[id];
        if (counted[id] || op.cluster != event.cluster ||
            op.committed > event.at || !filter.Selects(op)) {
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
    total += count;
    parts.push_back(
        std::string(EventKindName(event.kind)) + " " + event.cluster + " at " +
        FormatSeconds(event.at) + ": " + std::to_string(count) +
        (event.unreplicated_ops.has_value() ? ""
                                            : " (approximate: not recorded)"));
  }
  if (parts.empty()) return {0, "no cluster went down"};
  return {static_cast<double>(total), Join(parts)};
}

enum class ReadCheck { kReadYourWrites, kMonotonic, kStrong };

Measure ReadViolations(const Analysis& analysis, const Filter& filter,
                       ReadCheck check) {
  const History& history = analysis.history();
  if (check == ReadCheck::kStrong && !history.strong_reads_promised) {
    return {0, "not promised by the routing"};
  }
  int64_t reads = 0;
  int64_t unknown = 0;
  int64_t violations = 0;
  std::string first;
  for (const ReadResult& read : analysis.reads()) {
    const Operation& op = history.operations[read.op];
    if (!filter.Selects(op)) continue;
    ++reads;
    unknown += read.unknown_tag;
    const int64_t missed = check == ReadCheck::kReadYourWrites ? read.ryw_missed
                           : check == ReadCheck::kMonotonic
                               ? read.monotonic_missed
                               : read.strong_missed;
    if (missed < 0) continue;
    if (++violations == 1) {
      first = "; first: " + DescribeOp(op) + " saw " +
              (op.read().empty() ? "nothing" : "'" + op.read().str() + "'") +
              ", older than " + DescribeTag(history, missed);
    }
  }
  std::string detail = std::to_string(violations) + " of " +
                       std::to_string(reads) + " reads" + first;
  if (unknown > 0) {
    detail += "; " + std::to_string(unknown) + " reads saw unknown tags";
  }
  return {static_cast<double>(violations), detail};
}

Measure LostUpdates(const Analysis& analysis, const Filter& filter) {
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
  struct Counts {
    int64_t acked = 0;
    int64_t selected = 0;
  };
  std::map<int32_t, Counts> rows;
  for (auto& [row, increments] : increments_of) {
    std::sort(increments.begin(), increments.end());
    // An age rule may have removed the counter cell whenever the newest one
    // expired before the next increment (or by the end): the counter
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
    Counts& counts = rows[row];
    for (size_t k = first; k < increments.size(); ++k) {
      ++counts.acked;
      counts.selected += filter.Selects(ops[increments[k].second]);
    }
  }
  int64_t lost = 0;
  int64_t increments = 0;
  int64_t lossy_rows = 0;
  std::string worst;
  int64_t worst_lost = 0;
  for (const auto& [row, counts] : rows) {
    increments += counts.selected;
    int64_t final_counter = 0;
    for (size_t c : analysis.surviving()) {
      if (const RowState* state = analysis.State(row, c)) {
        final_counter = std::max(final_counter, state->counter);
      }
    }
    const int64_t row_lost = std::min(
        std::max<int64_t>(0, counts.acked - final_counter), counts.selected);
    if (row_lost == 0) continue;
    lost += row_lost;
    ++lossy_rows;
    if (row_lost > worst_lost) {
      worst_lost = row_lost;
      const Analysis::RowName& named = analysis.NameOf(row);
      worst = "; worst row: " + std::string(named.table) + "/" +
              named.row.str() + ", " + std::to_string(counts.acked) +
              " acknowledged, final counter " + std::to_string(final_counter);
    }
  }
  return {static_cast<double>(lost),
          std::to_string(lost) + " of " + std::to_string(increments) +
              " acknowledged increments lost on " + std::to_string(lossy_rows) +
              " rows" + worst};
}

Measure TokenViolations(const History& history, const Filter& filter) {
  int64_t sum = 0;
  int64_t waits = 0;
  for (const Event& event : history.events) {
    if (event.kind != EventKind::kTokenWait || !filter.InWindow(event.at)) {
      continue;
    }
    ++waits;
    sum += event.violations;
  }
  return {static_cast<double>(sum), std::to_string(sum) + " over " +
                                        std::to_string(waits) + " token waits"};
}

// `outages`: FindOutages(history, some filter).
Measure Rto(const History& history, const std::vector<Outage>& outages) {
  if (outages.empty()) return {0, "no client had errors after a fault"};
  const Outage* worst = &outages[0];
  std::vector<uint32_t> failed;
  for (const Outage& outage : outages) {
    if (outage.length > worst->length) worst = &outage;
    failed.insert(failed.end(), outage.failed.begin(), outage.failed.end());
  }
  std::sort(failed.begin(), failed.end());
  failed.erase(std::unique(failed.begin(), failed.end()), failed.end());
  std::map<std::string_view, int64_t> codes;
  for (uint32_t id : failed) {
    ++codes[StatusCodeName(history.operations[id].code)];
  }
  const Event& event = history.events[worst->event];
  const double value = worst->never ? kInfinity : Seconds(worst->length);
  return {value,
          worst->client + " after " + std::string(EventKindName(event.kind)) +
              " " + event.cluster + (event.peer.empty() ? "" : "-") +
              event.peer + " at " + FormatSeconds(event.at) + ": " +
              FormatSeconds(value) + "; " + std::to_string(outages.size()) +
              " outages; errors during outages: " + Breakdown(codes)};
}

Measure Rto(const History& history, const Filter& filter) {
  return Rto(history, checks_internal::FindOutages(history, filter));
}

Measure Failovers(const History& history, const Filter& filter) {
  std::set<std::string> profiles;  // of the selected clients
  if (!filter.client.empty()) {
    for (const Operation& op : history.operations) {
      if (op.client() == filter.client || op.group() == filter.client) {
        profiles.insert(std::string(op.profile()));
      }
    }
  }
  std::map<std::string, int64_t> pairs;
  int64_t count = 0;
  for (const Failover& failover : history.failovers) {
    if ((!filter.profile.empty() && failover.profile != filter.profile) ||
        (!filter.cluster.empty() && failover.to != filter.cluster) ||
        (!filter.client.empty() && !profiles.contains(failover.profile)) ||
        !filter.InWindow(failover.at)) {
      continue;
    }
    ++count;
    ++pairs[failover.from + "->" + failover.to];
  }
  return {static_cast<double>(count), count == 0 ? "none" : Breakdown(pairs)};
}

Measure CountOps(const History& history, const Filter& filter, bool ok) {
  // Counted by the enum's value first (no map lookup per operation), then
  // by name.
  constexpr int kSmall = 32;
  std::array<int64_t, kSmall> by_value{};
  std::map<std::string_view, int64_t> kinds;
  auto name_of = [ok](int value) {
    return ok ? OpTypeName(static_cast<OpType>(value))
              : StatusCodeName(static_cast<StatusCode>(value));
  };
  int64_t count = 0;
  for (const Operation& op : history.operations) {
    if (op.ok() != ok || !filter.Selects(op)) continue;
    ++count;
    const int value =
        ok ? static_cast<int>(op.type) : static_cast<int>(op.code);
    if (value >= 0 && value < kSmall) {
      ++by_value[value];
    } else {
      ++kinds[name_of(value)];
    }
  }
  for (int value = 0; value < kSmall; ++value) {
    if (by_value[value] != 0) kinds[name_of(value)] += by_value[value];
  }
  return {static_cast<double>(count), count == 0 ? "none" : Breakdown(kinds)};
}

Measure ErrorRate(const History& history, const Filter& filter) {
  int64_t all = 0;
  int64_t failed = 0;
  for (const Operation& op : history.operations) {
    if (!filter.Selects(op)) continue;
    ++all;
    if (!op.ok()) ++failed;
  }
  if (all == 0) return {0, "no operations"};
  return {static_cast<double>(failed) / static_cast<double>(all),
          std::to_string(failed) + " of " + std::to_string(all) +
              " operations failed"};
}

Measure Latency(const History& history, const Filter& filter,
                double percentile) {
  std::vector<Duration> latencies;
  for (const Operation& op : history.operations) {
    if (op.ok() && filter.Selects(op)) {
      latencies.push_back(op.complete - op.invoke);
    }
  }
  if (latencies.empty()) return NoSamples();
  const size_t n = latencies.size();
  const Duration value =
      checks_internal::Percentile(std::move(latencies), percentile);
  return {Seconds(value), "p" + FormatNumber(percentile) + " of " +
                              std::to_string(n) + " operations"};
}

Measure Staleness(const Analysis& analysis, const Filter& filter,
                  double percentile) {
  const History& history = analysis.history();
  std::vector<Duration> values;
  int64_t stale = 0;
  const ReadResult* worst = nullptr;
  for (const ReadResult& read : analysis.reads()) {
    if (!filter.Selects(history.operations[read.op])) continue;
    values.push_back(read.staleness);
    if (read.stale_missed >= 0) {
      ++stale;
      if (worst == nullptr || read.staleness > worst->staleness) worst = &read;
    }
  }
  if (values.empty()) return NoSamples();
  const size_t n = values.size();
  const Duration value =
      checks_internal::Percentile(std::move(values), percentile);
  std::string detail = "p" + FormatNumber(percentile) + " of " +
                       std::to_string(n) + " reads; " + std::to_string(stale) +
                       " stale";
  if (worst != nullptr) {
    detail += "; worst " + FormatSeconds(worst->staleness) + ": " +
              DescribeOp(history.operations[worst->op]) + " missed " +
              DescribeTag(history, worst->stale_missed);
  }
  return {Seconds(value), detail};
}

Measure KStale(const Analysis& analysis, const Filter& filter,
               double percentile) {
  const History& history = analysis.history();
  std::vector<int64_t> values;
  int64_t stale = 0;
  const ReadResult* worst = nullptr;
  for (const ReadResult& read : analysis.reads()) {
    if (!filter.Selects(history.operations[read.op])) continue;
    values.push_back(read.k_stale);
    if (read.k_stale > 0) {
      ++stale;
      if (worst == nullptr || read.k_stale > worst->k_stale) worst = &read;
    }
  }
  if (values.empty()) return NoSamples();
  const size_t n = values.size();
  const int64_t value =
      checks_internal::Percentile(std::move(values), percentile);
  std::string detail = "p" + FormatNumber(percentile) + " of " +
                       std::to_string(n) + " reads; " + std::to_string(stale) +
                       " stale";
  if (worst != nullptr) {
    detail += "; worst " + std::to_string(worst->k_stale) +
              " writes behind: " + DescribeOp(history.operations[worst->op]) +
              " saw " +
              (history.operations[worst->op].read().empty()
                   ? "nothing"
                   : "'" + history.operations[worst->op].read().str() + "'");
  }
  return {static_cast<double>(value), detail};
}

std::string DescribeFault(const Event& event) {
  return std::string(EventKindName(event.kind)) + " " + event.cluster +
         (event.peer.empty() ? "" : "-") + event.peer + " at " +
         FormatSeconds(event.at);
}

Measure FailbackTime(const History& history, const Filter& filter) {
  const std::vector<Failback> failbacks =
      checks_internal::FindFailbacks(history, filter);
  const Failback* worst = nullptr;
  int64_t samples = 0;
  int64_t never = 0;
  int64_t unrepaired = 0;
  int64_t unobserved = 0;
  for (const Failback& failback : failbacks) {
    if (failback.repaired < Duration(0)) {
      ++unrepaired;
      continue;
    }
    if (failback.unobserved) {
      ++unobserved;
      continue;
    }
    ++samples;
    never += failback.never;
    if (worst == nullptr || (failback.never && !worst->never) ||
        (!worst->never && failback.length > worst->length)) {
      worst = &failback;
    }
  }
  std::string counts = std::to_string(samples) + " fail-backs (" +
                       std::to_string(never) + " never)";
  if (unrepaired > 0) {
    counts += "; " + std::to_string(unrepaired) +
              " moved clients of faults never repaired";
  }
  if (unobserved > 0) {
    counts += "; " + std::to_string(unobserved) +
              " moved clients idle after the repair";
  }
  if (worst == nullptr) {
    return NoSamples(failbacks.empty()
                         ? "no client was moved off its home cluster by a fault"
                         : counts);
  }
  const double value = worst->never ? kInfinity : Seconds(worst->length);
  const std::string repair = "the repair at " + FormatSeconds(worst->repaired);
  return {value, worst->client + " after " +
                     DescribeFault(history.events[worst->event]) + ": " +
                     (worst->never
                          ? "never back on " + worst->home + " after " + repair
                          : "back on " + worst->home + " " +
                                FormatSeconds(value) + " after " + repair) +
                     "; " + counts};
}

// The longest end - at of the events `kinds` selects (infinite when one
// never ended).
Measure LongestEvent(const History& history, const Filter& filter,
                     std::initializer_list<EventKind> kinds,
                     const std::string& none) {
  const Event* worst = nullptr;
  double value = 0;
  int64_t count = 0;
  for (const Event& event : history.events) {
    if (std::find(kinds.begin(), kinds.end(), event.kind) == kinds.end() ||
        event.refused || !filter.InWindow(event.at) ||
        (!filter.cluster.empty() && event.cluster != filter.cluster &&
         event.peer != filter.cluster)) {
      continue;
    }
    ++count;
    const double seconds =
        event.end.count() < 0 ? kInfinity : Seconds(event.end - event.at);
    if (worst == nullptr || seconds > value) {
      worst = &event;
      value = seconds;
    }
  }
  if (worst == nullptr) return {0, none};
  return {value, std::to_string(count) + " events; longest: " +
                     std::string(EventKindName(worst->kind)) + " " +
                     worst->cluster + (worst->peer.empty() ? "" : "-") +
                     worst->peer + " at " + FormatSeconds(worst->at) + ": " +
                     FormatSeconds(value)};
}

Measure HottestCpu(const History& history, const Filter& filter) {
  const CpuSample* worst = nullptr;
  for (const CpuSample& sample : history.cpu) {
    if ((!filter.cluster.empty() && sample.cluster != filter.cluster) ||
        !filter.InWindow(sample.at)) {
      continue;
    }
    if (worst == nullptr || sample.hottest > worst->hottest) worst = &sample;
  }
  if (worst == nullptr) return NoSamples();
  return {worst->hottest, worst->cluster + " at " + FormatSeconds(worst->at)};
}

Measure Visibility(const Analysis& analysis, const Filter& filter, Duration t) {
  const History& history = analysis.history();
  Series reads;  // group row, at = invoke
  for (const ReadResult& read : analysis.reads()) {
    const Operation& op = history.operations[read.op];
    if (filter.Selects(op)) {
      reads.Add(static_cast<uint32_t>(read.row), op.invoke, read.effective,
                read.op);
    }
  }
  reads.Finish();
  int64_t samples = 0;
  int64_t visible = 0;
  for (uint32_t id : analysis.acked_writes()) {
    const Operation& op = history.operations[id];
    const auto* read = reads.FirstAtOrAfter(
        static_cast<uint32_t>(analysis.RowOf(id)), op.complete + t);
    if (read == nullptr) continue;
    ++samples;
    visible += !(read->key < checks_internal::KeyOf(op));
  }
  if (samples == 0) return NoSamples();
  return {static_cast<double>(visible) / static_cast<double>(samples),
          std::to_string(visible) + " of " + std::to_string(samples) +
              " writes seen by the first read " + FormatSeconds(t) +
              " after their acknowledgement"};
}

}  // namespace

namespace {

Measure LwwAnomaliesOf(const History& history, const Filter& filter) {
  const checks_internal::LwwAnomalies found =
      checks_internal::FindLwwAnomalies(history, filter);
  if (found.count == 0) {
    return {0,
            "none of " + std::to_string(found.writes) + " acknowledged writes"};
  }
  const Operation& shadowed = history.operations[found.shadowed];
  const Operation& shadowing = history.operations[found.shadowing];
  const auto ms = [](cluster::Timestamp t) {
    return std::to_string(t.time_since_epoch().count() / 1000);
  };
  return {static_cast<double>(found.count),
          std::to_string(found.count) + " of " + std::to_string(found.writes) +
              " acknowledged writes; e.g. " + DescribeOp(shadowed) +
              " with timestamp " + ms(shadowed.timestamp) +
              " ms, shadowed by " + DescribeOp(shadowing) +
              " acknowledged at " + FormatSeconds(shadowing.complete) +
              " with timestamp " + ms(shadowing.timestamp) + " ms"};
}

// `outages`: FindOutages(history, Filter{}).
std::vector<CheckValue> RunChecksOn(const Analysis& analysis,
                                    const std::vector<Outage>& outages) {
  const History& history = analysis.history();
  const Filter all;
  std::vector<CheckValue> checks;
  auto add = [&](const std::string& name, Measure measure) {
    checks.push_back({name, measure.value, std::move(measure.detail)});
  };
  add("converged", Converged(analysis));
  add("lost_writes", LostWrites(analysis, all));
  add("rpo_writes", Rpo(analysis, all));
  add("read_your_writes_violations",
      ReadViolations(analysis, all, ReadCheck::kReadYourWrites));
  add("monotonic_read_violations",
      ReadViolations(analysis, all, ReadCheck::kMonotonic));
  add("strong_read_violations",
      ReadViolations(analysis, all, ReadCheck::kStrong));
  add("lost_updates", LostUpdates(analysis, all));
  add("token_violations", TokenViolations(history, all));
  add("lww_anomalies", LwwAnomaliesOf(history, all));
  add("rto_seconds", Rto(history, outages));
  add("failovers", Failovers(history, all));
  add("errors", CountOps(history, all, false));
  add("successes", CountOps(history, all, true));
  return checks;
}

KStaleness ComputeKStalenessOn(const Analysis& analysis) {
  KStaleness result;
  result.at_most.assign(kKStalenessMax + 1, 0);
  for (const ReadResult& read : analysis.reads()) {
    ++result.reads;
    result.max = std::max(result.max, read.k_stale);
    if (read.k_stale <= kKStalenessMax) ++result.at_most[read.k_stale];
  }
  for (size_t k = 1; k < result.at_most.size(); ++k) {
    result.at_most[k] += result.at_most[k - 1];
  }
  return result;
}

}  // namespace

std::vector<CheckValue> RunChecks(const History& history) {
  return RunChecksOn(Analysis(history),
                     checks_internal::FindOutages(history, Filter{}));
}

KStaleness ComputeKStaleness(const History& history) {
  return ComputeKStalenessOn(Analysis(history));
}

std::vector<Failback> ComputeFailbacks(const History& history) {
  return checks_internal::FindFailbacks(history, Filter{});
}

namespace {

std::vector<ExpectationResult> EvaluateOn(
    const Analysis& analysis,
    const google::protobuf::RepeatedPtrField<pb::Expectation>& expectations) {
  const History& history = analysis.history();
  std::vector<ExpectationResult> results;
  for (const pb::Expectation& expectation : expectations) {
    ExpectationResult result;
    result.name = expectation.name();
    result.metric = pb::Metric_Name(expectation.metric());
    Filter filter;
    filter.profile = expectation.app_profile();
    filter.client = expectation.client();
    filter.cluster = expectation.cluster();
    filter.start = ToDuration(expectation.window_start());
    if (expectation.has_window_end() &&
        ToDuration(expectation.window_end()) != Duration(0)) {
      filter.end = ToDuration(expectation.window_end());
    }
    const double percentile =
        expectation.percentile() == 0 ? 99 : expectation.percentile();

    std::string error;
    Measure measure;
    switch (expectation.metric()) {
      case pb::RTO_SECONDS:
        measure = Rto(history, filter);
        break;
      case pb::LOST_WRITES:
        measure = LostWrites(analysis, filter);
        break;
      case pb::RPO_WRITES:
        measure = Rpo(analysis, filter);
        break;
      case pb::READ_YOUR_WRITES_VIOLATIONS:
        measure = ReadViolations(analysis, filter, ReadCheck::kReadYourWrites);
        break;
      case pb::MONOTONIC_READ_VIOLATIONS:
        measure = ReadViolations(analysis, filter, ReadCheck::kMonotonic);
        break;
      case pb::STRONG_READ_VIOLATIONS:
        measure = ReadViolations(analysis, filter, ReadCheck::kStrong);
        break;
      case pb::LATENCY_SECONDS:
      case pb::STALENESS_SECONDS:
      case pb::K_STALENESS:
        if (!(percentile > 0 && percentile <= 100)) {
          error =
              "percentile must be in (0, 100], got " + FormatNumber(percentile);
        } else if (expectation.metric() == pb::LATENCY_SECONDS) {
          measure = Latency(history, filter, percentile);
        } else if (expectation.metric() == pb::STALENESS_SECONDS) {
          measure = Staleness(analysis, filter, percentile);
        } else {
          measure = KStale(analysis, filter, percentile);
        }
        break;
      case pb::FAILBACK_SECONDS:
        measure = FailbackTime(history, filter);
        break;
      case pb::CONVERGED:
        measure = Converged(analysis);
        break;
      case pb::CATCH_UP_SECONDS:
        measure = LongestEvent(
            history, filter,
            {EventKind::kHeal, EventKind::kClusterUp, EventKind::kAddCluster,
             EventKind::kResumeReplication},
            "no heal, cluster_up, add_cluster or resume_replication");
        break;
      case pb::T_VISIBILITY:
        measure = Visibility(analysis, filter, ToDuration(expectation.after()));
        break;
      case pb::LOST_UPDATES:
        measure = LostUpdates(analysis, filter);
        break;
      case pb::TOKEN_VIOLATIONS:
        measure = TokenViolations(history, filter);
        break;
      case pb::LWW_ANOMALIES:
        measure = LwwAnomaliesOf(history, filter);
        break;
      case pb::ERRORS:
        measure = CountOps(history, filter, false);
        break;
      case pb::SUCCESSES:
        measure = CountOps(history, filter, true);
        break;
      case pb::ERROR_RATE:
        measure = ErrorRate(history, filter);
        break;
      case pb::FAILOVERS:
        measure = Failovers(history, filter);
        break;
      case pb::HOTTEST_NODE_CPU:
        measure = HottestCpu(history, filter);
        break;
      case pb::TOKEN_WAIT_SECONDS: {
        Filter events = filter;
        events.cluster.clear();  // token waits concern a table
        measure = LongestEvent(history, events, {EventKind::kTokenWait},
                               "no token waits");
        break;
      }
      default:
        error = "unknown metric";
        break;
    }
    result.value = measure.value;
    result.detail = measure.detail;
    switch (expectation.bound_case()) {
      case pb::Expectation::kAtMost:
        result.bound = "<= " + FormatNumber(expectation.at_most());
        result.pass =
            result.value <= expectation.at_most() && !std::isinf(result.value);
        break;
      case pb::Expectation::kAtLeast:
        result.bound = ">= " + FormatNumber(expectation.at_least());
        result.pass = result.value >= expectation.at_least();
        break;
      default:
        error = error.empty() ? "no bound" : error;
        break;
    }
    if (error.empty() && measure.no_samples) {
      error = measure.detail == "no samples" ? measure.detail
                                             : "no samples: " + measure.detail;
    }
    if (!error.empty()) {
      result.pass = false;
      result.detail = error;
    }
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace

std::vector<ExpectationResult> Evaluate(
    const History& history,
    const google::protobuf::RepeatedPtrField<pb::Expectation>& expectations) {
  if (expectations.empty()) return {};
  return EvaluateOn(Analysis(history), expectations);
}

AllChecks RunAllChecks(
    const History& history,
    const google::protobuf::RepeatedPtrField<pb::Expectation>& expectations) {
  const Analysis analysis(history);
  // Found once for the RTO check and the fail-backs.
  const std::vector<Outage> outages =
      checks_internal::FindOutages(history, Filter{});
  AllChecks all;
  all.checks = RunChecksOn(analysis, outages);
  if (!expectations.empty()) {
    all.expectations = EvaluateOn(analysis, expectations);
  }
  all.visibility = checks_internal::TVisibilityOn(analysis);
  all.k_staleness = ComputeKStalenessOn(analysis);
  all.failbacks = checks_internal::FindFailbacks(history, Filter{}, outages);
  return all;
}

}  // namespace btsim::scenarios
