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
#include "scenarios/checks_rows.h"
#include "scenarios/percentile.h"
#include "scenarios/scenario_fields.h"

namespace btsim::scenarios {
namespace {

namespace pb = btsim::scenario::v1;
using checks_internal::Analysis;
using checks_internal::Breakdown;
using checks_internal::Filter;
using checks_internal::FormatNumber;
using checks_internal::FormatSeconds;
using checks_internal::Join;
using checks_internal::Measure;
using checks_internal::NoSamples;
using checks_internal::Outage;
using checks_internal::ReadCheck;
using checks_internal::RowMeasure;
using checks_internal::RowStateText;
using checks_internal::Seconds;
using sim::Duration;

constexpr double kInfinity = std::numeric_limits<double>::infinity();
bool SameRowState(const RowState& a, const RowState& b) {
  return a.tag == b.tag && a.timestamp == b.timestamp &&
         a.version == b.version && a.counter == b.counter;
}

// --- whole-run facts ---------------------------------------------------------

Measure Converged(const History& history) {
  const std::vector<size_t> surviving =
      checks_internal::SurvivingClusters(history);
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
                RowStateText(history, &a->second) + " vs (absent)";
        break;
      }
      if (a == base_rows.end() || b->first < a->first) {
        where = other.id + " differs from " + base.id + " at " +
                b->first.first.str() + "/" + b->first.second.str() +
                ": (absent) vs " + RowStateText(history, &b->second);
        break;
      }
      if (!SameRowState(a->second, b->second)) {
        where = other.id + " differs from " + base.id + " at " +
                a->first.first.str() + "/" + a->first.second.str() + ": " +
                RowStateText(history, &a->second) + " vs " +
                RowStateText(history, &b->second);
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
    ++codes[StatusCodeName(history.operations.Get(id).code)];
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
  // Two passes over the history rather than every latency in memory.
  TwoPassPercentiles latencies({percentile});
  for (const Operation& op : history.operations) {
    if (op.ok() && filter.Selects(op)) {
      latencies.Count((op.complete - op.invoke).count());
    }
  }
  const int64_t n = latencies.EndFirstPass();
  if (n == 0) return NoSamples();
  for (const Operation& op : history.operations) {
    if (op.ok() && filter.Selects(op)) {
      latencies.Collect((op.complete - op.invoke).count());
    }
  }
  const Duration value(latencies.Result(0));
  return {Seconds(value), "p" + FormatNumber(percentile) + " of " +
                              std::to_string(n) + " operations"};
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

}  // namespace

namespace {

// An expectation's filters and percentile, and its row check (when its
// metric is one), fed with the history's parts before EvaluateOn.
struct Prepared {
  Filter filter;
  double percentile = 99;
  std::unique_ptr<RowMeasure> row;
};

Prepared Prepare(const History& history, const pb::Expectation& expectation) {
  Prepared prepared;
  Filter& filter = prepared.filter;
  filter.profile = expectation.app_profile();
  filter.client = expectation.client();
  filter.cluster = expectation.cluster();
  filter.start = ToDuration(expectation.window_start());
  if (expectation.has_window_end() &&
      ToDuration(expectation.window_end()) != Duration(0)) {
    filter.end = ToDuration(expectation.window_end());
  }
  const double percentile = prepared.percentile =
      expectation.percentile() == 0 ? 99 : expectation.percentile();
  const bool percentile_ok = percentile > 0 && percentile <= 100;
  switch (expectation.metric()) {
    case pb::LOST_WRITES:
      prepared.row = checks_internal::LostWritesMeasure(filter);
      break;
    case pb::RPO_WRITES:
      prepared.row = checks_internal::RpoMeasure(history, filter);
      break;
    case pb::READ_YOUR_WRITES_VIOLATIONS:
      prepared.row = checks_internal::ReadViolationsMeasure(
          history, filter, ReadCheck::kReadYourWrites);
      break;
    case pb::MONOTONIC_READ_VIOLATIONS:
      prepared.row = checks_internal::ReadViolationsMeasure(
          history, filter, ReadCheck::kMonotonic);
      break;
    case pb::STRONG_READ_VIOLATIONS:
      prepared.row = checks_internal::ReadViolationsMeasure(history, filter,
                                                            ReadCheck::kStrong);
      break;
    case pb::STALENESS_SECONDS:
      if (percentile_ok) {
        prepared.row = checks_internal::StalenessMeasure(filter, percentile);
      }
      break;
    case pb::K_STALENESS:
      if (percentile_ok) {
        prepared.row = checks_internal::KStalenessMeasure(filter, percentile);
      }
      break;
    case pb::T_VISIBILITY:
      prepared.row = checks_internal::VisibilityMeasure(
          filter, ToDuration(expectation.after()));
      break;
    case pb::LOST_UPDATES:
      prepared.row = checks_internal::LostUpdatesMeasure(filter);
      break;
    case pb::LWW_ANOMALIES:
      prepared.row = checks_internal::LwwMeasure(filter);
      break;
    case pb::DOUBLE_APPLIED_INCREMENTS:
      prepared.row = checks_internal::DoubleAppliedMeasure(filter);
      break;
    default:
      break;
  }
  return prepared;
}

// `prepared[i]`: Prepare(history, expectations[i]), its row check fed with
// every part.
std::vector<ExpectationResult> EvaluateOn(
    const History& history,
    const google::protobuf::RepeatedPtrField<pb::Expectation>& expectations,
    const std::vector<Prepared>& prepared) {
  std::vector<ExpectationResult> results;
  for (int i = 0; i < expectations.size(); ++i) {
    const pb::Expectation& expectation = expectations[i];
    const Filter& filter = prepared[i].filter;
    const double percentile = prepared[i].percentile;
    const RowMeasure* row = prepared[i].row.get();
    ExpectationResult result;
    result.name = expectation.name();
    result.metric = pb::Metric_Name(expectation.metric());

    std::string error;
    Measure measure;
    switch (expectation.metric()) {
      case pb::RTO_SECONDS:
        measure = Rto(history, filter);
        break;
      case pb::LOST_WRITES:
      case pb::RPO_WRITES:
      case pb::READ_YOUR_WRITES_VIOLATIONS:
      case pb::MONOTONIC_READ_VIOLATIONS:
      case pb::STRONG_READ_VIOLATIONS:
      case pb::T_VISIBILITY:
      case pb::LOST_UPDATES:
      case pb::LWW_ANOMALIES:
      case pb::DOUBLE_APPLIED_INCREMENTS:
        measure = row->Result();
        break;
      case pb::LATENCY_SECONDS:
      case pb::STALENESS_SECONDS:
      case pb::K_STALENESS:
        if (!(percentile > 0 && percentile <= 100)) {
          error =
              "percentile must be in (0, 100], got " + FormatNumber(percentile);
        } else if (expectation.metric() == pb::LATENCY_SECONDS) {
          measure = Latency(history, filter, percentile);
        } else {
          measure = row->Result();
        }
        break;
      case pb::FAILBACK_SECONDS:
        measure = FailbackTime(history, filter);
        break;
      case pb::CONVERGED:
        measure = Converged(history);
        break;
      case pb::CATCH_UP_SECONDS:
        measure = LongestEvent(
            history, filter,
            {EventKind::kHeal, EventKind::kClusterUp, EventKind::kAddCluster,
             EventKind::kResumeReplication},
            "no heal, cluster_up, add_cluster or resume_replication");
        break;
      case pb::TOKEN_VIOLATIONS:
        measure = TokenViolations(history, filter);
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

namespace checks_internal {

AllChecks RunAllChecksInParts(
    const History& history,
    const google::protobuf::RepeatedPtrField<pb::Expectation>& expectations,
    size_t parts) {
  const Filter all;
  // The whole-run row checks, in the order of the report; then each
  // expectation's.
  std::vector<std::unique_ptr<RowMeasure>> row;
  row.push_back(LostWritesMeasure(all));
  row.push_back(RpoMeasure(history, all));
  row.push_back(
      ReadViolationsMeasure(history, all, ReadCheck::kReadYourWrites));
  row.push_back(ReadViolationsMeasure(history, all, ReadCheck::kMonotonic));
  row.push_back(ReadViolationsMeasure(history, all, ReadCheck::kStrong));
  row.push_back(LostUpdatesMeasure(all));
  row.push_back(LwwMeasure(all));
  std::vector<Prepared> prepared;
  for (const pb::Expectation& expectation : expectations) {
    prepared.push_back(Prepare(history, expectation));
  }
  VisibilityCurves curves;
  KStalenessCounts k_staleness;
  ForEachPart(history, parts, [&](const Analysis& part) {
    for (auto& measure : row) measure->Add(part);
    for (Prepared& p : prepared) {
      if (p.row != nullptr) p.row->Add(part);
    }
    curves.Add(part);
    k_staleness.Add(part);
  });

  // Found once for the RTO check and the fail-backs.
  const std::vector<Outage> outages = FindOutages(history, all);
  AllChecks out;
  auto add = [&](const std::string& name, Measure measure) {
    out.checks.push_back({name, measure.value, std::move(measure.detail)});
  };
  add("converged", Converged(history));
  add("lost_writes", row[0]->Result());
  add("rpo_writes", row[1]->Result());
  add("read_your_writes_violations", row[2]->Result());
  add("monotonic_read_violations", row[3]->Result());
  add("strong_read_violations", row[4]->Result());
  add("lost_updates", row[5]->Result());
  add("token_violations", TokenViolations(history, all));
  add("lww_anomalies", row[6]->Result());
  add("rto_seconds", Rto(history, outages));
  add("failovers", Failovers(history, all));
  add("errors", CountOps(history, all, false));
  add("successes", CountOps(history, all, true));
  out.expectations = EvaluateOn(history, expectations, prepared);
  out.visibility = curves.Result();
  out.k_staleness = k_staleness.Result();
  out.failbacks = FindFailbacks(history, all, outages);
  return out;
}

}  // namespace checks_internal

namespace {
const google::protobuf::RepeatedPtrField<pb::Expectation> kNoExpectations;
}  // namespace

std::vector<CheckValue> RunChecks(const History& history) {
  return checks_internal::RunAllChecksInParts(history, kNoExpectations, 0)
      .checks;
}

KStaleness ComputeKStaleness(const History& history) {
  return checks_internal::RunAllChecksInParts(history, kNoExpectations, 0)
      .k_staleness;
}

std::vector<VisibilityCurve> TVisibility(const History& history) {
  return checks_internal::RunAllChecksInParts(history, kNoExpectations, 0)
      .visibility;
}

std::vector<Failback> ComputeFailbacks(const History& history) {
  return checks_internal::FindFailbacks(history, Filter{});
}

std::vector<ExpectationResult> Evaluate(
    const History& history,
    const google::protobuf::RepeatedPtrField<pb::Expectation>& expectations) {
  if (expectations.empty()) return {};
  return checks_internal::RunAllChecksInParts(history, expectations, 0)
      .expectations;
}

AllChecks RunAllChecks(
    const History& history,
    const google::protobuf::RepeatedPtrField<pb::Expectation>& expectations) {
  return checks_internal::RunAllChecksInParts(history, expectations, 0);
}

}  // namespace btsim::scenarios
