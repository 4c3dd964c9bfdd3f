#include "scenarios/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "scenarios/checks_analysis.h"
#include "scenarios/history_file.h"
#include "scenarios/percentile.h"
#include "scenarios/report_json.h"

namespace btsim::scenarios {
namespace {

// History::links samples cover one second each.
constexpr sim::Duration kLinkSampleInterval = std::chrono::seconds(1);

std::string Seconds(sim::Duration t) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3f", t.count() / 1e9);
  return buffer;
}

// "850us", "12.3ms", "1.50s".
std::string Human(sim::Duration t) {
  char buffer[64];
  const double ns = static_cast<double>(t.count());
  if (ns < 1e6) {
    std::snprintf(buffer, sizeof buffer, "%.0fus", ns / 1e3);
  } else if (ns < 1e9) {
    std::snprintf(buffer, sizeof buffer, "%.1fms", ns / 1e6);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.2fs", ns / 1e9);
  }
  return buffer;
}

std::string Number(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  char buffer[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buffer, sizeof buffer, "%.0f", v);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.6g", v);
  }
  return buffer;
}

}  // namespace

namespace {

// Whether `event` is a fault of one cluster that requests could notice.
bool FrontEndsCanNotice(const Event& event) {
  switch (event.kind) {
    case EventKind::kClusterDown:
    case EventKind::kNodeFailure:
    case EventKind::kSlowCluster:
    case EventKind::kInjectErrors:
    case EventKind::kCutClients:
      return !event.refused;
    default:
      return false;
  }
}

// What each front end made of fault `events[e]`.
std::vector<Detection> DetectionsOf(const History& h, size_t e) {
  const Event& fault = h.events[e];
  if (!FrontEndsCanNotice(fault)) return {};
  const std::optional<size_t> repair = checks_internal::RepairOf(h.events, e);
  const sim::Duration repaired =
      repair ? h.events[*repair].at : sim::Duration::max();
  std::map<std::string, Detection> by_zone;
  for (const HealthChange& c : h.health_changes) {
    if (c.cluster != fault.cluster || c.at < fault.at) continue;
    auto it = by_zone.find(c.zone);
    if (c.at < repaired) {
      if (!c.ejected) {
        if (it != by_zone.end()) it->second.ejected_at_repair = false;
        continue;
      }
      if (it == by_zone.end()) {
        Detection d;
        d.zone = c.zone;
        d.cluster = c.cluster;
        d.ejected = c.at - fault.at;
        it = by_zone.emplace(c.zone, std::move(d)).first;
      }
      ++it->second.ejections;
      it->second.ejected_at_repair = true;
    } else if (it != by_zone.end() && it->second.ejected_at_repair &&
               !c.ejected && !it->second.readmitted) {
      it->second.readmitted = c.at - repaired;
    }
  }
  std::vector<Detection> out;
  for (auto& [zone, d] : by_zone) out.push_back(std::move(d));
  return out;
}

}  // namespace

std::vector<ProfileAvailability> Availability(const LoadedScenario& scenario,
                                              const History& history) {
  constexpr sim::Duration kMinute = std::chrono::minutes(1);
  constexpr int64_t kDowntimeRun = 5;
  constexpr double kDownRate = 0.05;
  const int64_t minutes = std::max<int64_t>(
      1, (history.duration + kMinute - sim::Duration(1)) / kMinute);
  // Per profile, per minute: (operations, errors).
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> counts;
  for (const Operation& op : history.operations) {
    if (op.invoke >= history.duration) continue;
    auto& per_minute = counts[std::string(op.profile())];
    per_minute.resize(static_cast<size_t>(minutes));
    auto& [ops, errors] = per_minute[static_cast<size_t>(op.invoke / kMinute)];
    ++ops;
    if (!op.ok()) ++errors;
  }
  const instance::InstanceConfig& config = scenario.instance.config;
  auto regions = [&](const std::vector<std::string>& ids) {
    std::set<std::string_view> found;
    for (const instance::ClusterConfig& c : config.clusters) {
      if (ids.empty() || std::find(ids.begin(), ids.end(), c.id) != ids.end()) {
        found.insert(sim::RegionOf(c.zone));
      }
    }
    return found.size();
  };
  std::vector<ProfileAvailability> out;
  for (const auto& [profile, per_minute] : counts) {
    ProfileAvailability a;
    a.profile = profile;
    bool multi = config.clusters.size() > 1;  // the default profile
    std::vector<std::string> ids;
    for (const appprofile::AppProfile& p : scenario.instance.profiles) {
      if (p.id != profile) continue;
      multi = p.routing == appprofile::AppProfile::Routing::kMultiCluster;
      ids = p.cluster_ids;
    }
    a.target_percent = !multi ? "99.9" : regions(ids) >= 3 ? "99.999" : "99.99";
    a.minutes = minutes;
    int64_t run = 0;
    for (int64_t m = 0; m <= minutes; ++m) {
      bool down = false;
      if (m < minutes) {
        const auto& [ops, errors] = per_minute[static_cast<size_t>(m)];
        const double rate =
            ops == 0 ? 0
                     : static_cast<double>(errors) / static_cast<double>(ops);
        a.worst_minute_error_rate = std::max(a.worst_minute_error_rate, rate);
        down = rate > kDownRate;
      }
      if (down) {
        ++run;
      } else {
        if (run >= kDowntimeRun) a.downtime_minutes += run;
        run = 0;
      }
    }
    a.uptime_percent = 100.0 *
                       static_cast<double>(minutes - a.downtime_minutes) /
                       static_cast<double>(minutes);
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<FaultFailover> FailoversByFault(const RunOutcome& outcome) {
  const History& h = outcome.history;
  std::map<size_t, std::map<std::string, ClientFailover>> by_fault;
  for (const checks_internal::Outage& o :
       checks_internal::FindOutages(h, checks_internal::Filter{})) {
    ClientFailover& c = by_fault[o.event][o.client];
    c.client = o.client;
    c.rto = o.never ? sim::Duration::max() : o.length;
    sim::Duration first_failure = sim::Duration::max();
    for (uint32_t op : o.failed) {
      const Operation failed = h.operations.Get(op);
      ++c.errors[std::string(StatusCodeName(failed.code))];
      first_failure = std::min(first_failure, failed.complete);
    }
    const sim::Duration recovered = h.events[o.event].at + o.length;
    c.error_window =
        o.never ? sim::Duration::max()
                : std::max(sim::Duration(0), recovered - first_failure);
  }
  for (const Failback& f : outcome.failbacks) {
    ClientFailover& c = by_fault[f.event][f.client];
    c.client = f.client;
    c.failback = f;
  }
  std::map<size_t, std::vector<Detection>> detections;
  for (size_t e = 0; e < h.events.size(); ++e) {
    std::vector<Detection> found = DetectionsOf(h, e);
    if (found.empty()) continue;
    by_fault[e];  // listed even if no client noticed
    detections[e] = std::move(found);
  }
  std::vector<FaultFailover> out;
  for (auto& [event, clients] : by_fault) {
    FaultFailover fault;
    fault.event = event;
    for (auto& [name, c] : clients) fault.clients.push_back(std::move(c));
    if (auto it = detections.find(event); it != detections.end()) {
      fault.detections = std::move(it->second);
    }
    out.push_back(std::move(fault));
  }
  return out;
}

std::vector<PhaseStats> Phases(const History& history) {
  std::vector<PhaseStats> phases;
  PhaseStats first;
  first.label = "start";
  phases.push_back(first);
  for (const Event& e : history.events) {
    if (e.kind == EventKind::kSettle || e.at >= history.duration) continue;
    if (e.at == phases.back().start) {
      phases.back().label = phases.back().label == "start"
                                ? e.label
                                : phases.back().label + "; " + e.label;
      continue;
    }
    phases.back().end = e.at;
    PhaseStats next;
    next.start = e.at;
    next.label = e.label;
    phases.push_back(next);
  }
  phases.back().end = history.duration;
  // Per phase, per (profile, cluster): latencies of successes (their p50
  // and p99, read in two passes over the history), errors. Keys view the
  // history's names.
  struct Bucket {
    TwoPassPercentiles latencies{{50, 99}};
    int64_t errors = 0;
  };
  std::vector<std::map<std::pair<std::string_view, std::string_view>, Bucket>>
      buckets(phases.size());
  // Calls visit(bucket, op) for each operation of the client phase. The
  // current phase's buckets are found by source, then by the copy of the
  // cluster name (a source sees one or two): a pointer hash per operation
  // instead of a tree search by strings. For lookups only; a source's list
  // stays short even when cluster names are not interned (then every
  // operation brings a new copy, and the ones past the list search the
  // tree).
  auto for_each_op = [&](auto visit) {
    checks_internal::LookupMap<const OpSource*,
                               std::vector<std::pair<const char*, Bucket*>>>
        bucket_of;
    constexpr size_t kCopiesPerSource = 8;
    size_t phase = 0;
    for (const Operation& op : history.operations) {
      if (op.invoke >= history.duration) continue;
      while (phase + 1 < phases.size() && op.invoke >= phases[phase].end) {
        ++phase;
        bucket_of.clear();
      }
      const std::string_view cluster = op.cluster.view();
      auto& seen = bucket_of[op.source];
      auto cached = std::find_if(seen.begin(), seen.end(), [&](const auto& e) {
        return e.first == cluster.data();
      });
      Bucket* found = cached == seen.end() ? nullptr : cached->second;
      if (found == nullptr) {
        found = &buckets[phase]
                        [{op.profile().view(),
                          cluster.empty() ? std::string_view("-") : cluster}];
        if (seen.size() < kCopiesPerSource) {
          seen.push_back({cluster.data(), found});
        }
      }
      visit(*found, op);
    }
  };
  for_each_op([](Bucket& b, const Operation& op) {
    if (op.ok()) {
      b.latencies.Count((op.complete - op.invoke).count());
    } else {
      ++b.errors;
    }
  });
  for (auto& phase_buckets : buckets) {
    for (auto& [key, b] : phase_buckets) b.latencies.EndFirstPass();
  }
  for_each_op([](Bucket& b, const Operation& op) {
    if (op.ok()) b.latencies.Collect((op.complete - op.invoke).count());
  });
  for (size_t i = 0; i < phases.size(); ++i) {
    for (auto& [key, b] : buckets[i]) {
      PhaseStats::Line line;
      line.profile = std::string(key.first);
      line.cluster = std::string(key.second);
      line.errors = b.errors;
      line.ops = b.latencies.count() + b.errors;
      if (b.latencies.count() > 0) {
        line.p50 = sim::Duration(b.latencies.Result(0));
        line.p99 = sim::Duration(b.latencies.Result(1));
      }
      phases[i].lines.push_back(line);
    }
  }
  std::vector<std::map<std::pair<std::string, std::string>, PhaseStats::Link>>
      links(phases.size());
  std::vector<std::map<std::pair<std::string, std::string>, sim::Duration>>
      delay_sums(phases.size());
  size_t phase = 0;
  for (const LinkSample& sample : history.links) {
    const sim::Duration start = sample.at - kLinkSampleInterval;
    if (start < sim::Duration(0) || start >= history.duration) continue;
    while (phase + 1 < phases.size() && start >= phases[phase].end) ++phase;
    PhaseStats::Link& link = links[phase][{sample.from, sample.to}];
    link.from = sample.from;
    link.to = sample.to;
    link.applied += sample.applied;
    link.max = std::max(link.max, sample.delay_max);
    link.max_backlog = std::max(link.max_backlog, sample.backlog);
    delay_sums[phase][{sample.from, sample.to}] += sample.delay_sum;
  }
  for (size_t i = 0; i < phases.size(); ++i) {
    for (auto& [key, link] : links[i]) {
      if (link.applied == 0 && link.max_backlog == 0) continue;  // idle
      if (link.applied > 0) link.mean = delay_sums[i][key] / link.applied;
      phases[i].links.push_back(link);
    }
  }
  return phases;
}

void PrintSummary(const LoadedScenario& scenario, const RunOutcome& outcome,
                  std::ostream& out) {
  const History& h = outcome.history;
  out << "scenario: " << outcome.scenario << " (seed " << outcome.seed << ", "
      << Seconds(h.duration)
      << (outcome.live ? " s of wall time, " : " s of virtual time, ")
      << h.final_state.size() << " clusters)\n";
  if (!scenario.proto.description().empty()) {
    std::string first_line = scenario.proto.description();
    first_line = first_line.substr(0, first_line.find('\n'));
    out << "  " << first_line << "\n";
  }
  const std::vector<PhaseStats> phases = Phases(h);
  for (size_t i = 0; i < phases.size(); ++i) {
    const PhaseStats& p = phases[i];
    const double seconds = (p.end - p.start).count() / 1e9;
    out << "phase " << i + 1 << "  " << Seconds(p.start) << "s - "
        << Seconds(p.end) << "s  " << p.label << "\n";
    for (const PhaseStats::Line& line : p.lines) {
      char buffer[256];
      std::snprintf(buffer, sizeof buffer,
                    "  %-14s %-6s %8lld ops %9.1f/s  errors %-7lld p50 %-8s "
                    "p99 %s\n",
                    line.profile.c_str(), line.cluster.c_str(),
                    static_cast<long long>(line.ops),
                    seconds > 0 ? line.ops / seconds : 0.0,
                    static_cast<long long>(line.errors),
                    Human(line.p50).c_str(), Human(line.p99).c_str());
      out << buffer;
    }
    for (const PhaseStats::Link& link : p.links) {
      char buffer[256];
      std::snprintf(buffer, sizeof buffer,
                    "  replication %s -> %s  %lld applied", link.from.c_str(),
                    link.to.c_str(), static_cast<long long>(link.applied));
      out << buffer;
      if (link.applied > 0) {
        out << "  lag mean " << Human(link.mean) << " max " << Human(link.max);
      }
      out << "  backlog max " << link.max_backlog << "\n";
    }
  }
  // Failovers per (profile, from, to).
  std::map<std::tuple<std::string, std::string, std::string>, int64_t>
      failovers;
  for (const Failover& f : h.failovers) ++failovers[{f.profile, f.from, f.to}];
  if (!failovers.empty()) {
    out << "failovers:\n";
    for (const auto& [key, count] : failovers) {
      out << "  " << std::get<0>(key) << ": " << std::get<1>(key) << " -> "
          << std::get<2>(key) << "  " << count << "\n";
    }
  }
  for (const FaultFailover& fault : FailoversByFault(outcome)) {
    const Event& e = h.events[fault.event];
    // Latency, load and capacity changes are not faults, but may cause
    // outages as faults do.
    const bool change = e.kind == EventKind::kLatency ||
                        e.kind == EventKind::kChangeWorkload ||
                        e.kind == EventKind::kResize;
    out << (change ? "change at " : "fault at ") << Seconds(e.at) << "s ("
        << e.label << "): " << fault.clients.size()
        << " clients moved off their cluster or failed\n";
    sim::Duration rto_max{0};
    sim::Duration window_max{0};
    bool rto_never = false;
    std::map<std::string, int64_t> errors;
    int64_t outages = 0, failbacks = 0, never = 0;
    sim::Duration failback_max{0};
    sim::Duration repaired{-1};
    for (const ClientFailover& c : fault.clients) {
      if (c.rto) {
        ++outages;
        if (*c.rto == sim::Duration::max()) {
          rto_never = true;
        } else {
          rto_max = std::max(rto_max, *c.rto);
          window_max =
              std::max(window_max, c.error_window.value_or(sim::Duration(0)));
        }
      }
      for (const auto& [code, n] : c.errors) errors[code] += n;
      if (c.failback && c.failback->repaired.count() >= 0 &&
          !c.failback->unobserved) {
        repaired = c.failback->repaired;
        if (c.failback->never) {
          ++never;
        } else {
          ++failbacks;
          failback_max = std::max(failback_max, c.failback->length);
        }
      }
    }
    for (const Detection& d : fault.detections) {
      out << "  front end in " << d.zone << " ejected " << d.cluster;
      if (d.ejections > 1) out << " " << d.ejections << " times, first";
      out << " after " << Human(d.ejected);
      if (!d.ejected_at_repair) {
        out << "; admitted again when the fault ended";
      } else if (d.readmitted) {
        out << ", readmitted it " << Human(*d.readmitted)
            << " after the repair";
      }
      out << "\n";
    }
    if (outages > 0) {
      out << "  RTO max " << (rto_never ? "never" : Human(rto_max));
      if (!rto_never) out << " (errors seen for " << Human(window_max) << ")";
      out << " over " << outages << " clients with errors:";
      for (const auto& [code, n] : errors) out << " " << code << " " << n;
      out << "\n";
    } else {
      out << "  no client saw an error\n";
    }
    if (failbacks + never > 0) {
      out << "  fail-back after the repair at " << Seconds(repaired)
          << "s: " << failbacks << " clients back home";
      if (failbacks > 0) out << " (max " << Human(failback_max) << ")";
      if (never > 0) out << ", " << never << " never returned";
      out << "\n";
    }
  }
  for (const ProfileAvailability& a : Availability(scenario, h)) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "availability %s: %.3f%% (SLA target %s%%): %lld of %lld "
                  "minutes down; worst minute %.1f%% errors\n",
                  a.profile.c_str(), a.uptime_percent, a.target_percent.c_str(),
                  static_cast<long long>(a.downtime_minutes),
                  static_cast<long long>(a.minutes),
                  100.0 * a.worst_minute_error_rate);
    out << line;
  }
  {
    const KStaleness& k = outcome.k_staleness;
    if (k.reads > 0) {
      out << "k-staleness over " << k.reads << " reads:";
      for (size_t i = 0; i < k.at_most.size(); ++i) {
        char buffer[64];
        std::snprintf(buffer, sizeof buffer, " k<=%zu %.2f%%", i,
                      100.0 * k.at_most[i] / k.reads);
        out << buffer;
      }
      out << "  max " << k.max << "\n";
    }
  }
  for (const Event& e : h.events) {
    if (e.kind == EventKind::kTokenWait) {
      out << "token wait at " << Seconds(e.at) << "s on " << e.table << ": "
          << (e.consistent.count() < 0
                  ? std::string("never consistent")
                  : "consistent after " + Human(e.consistent - e.at))
          << "; the polling check saw it after "
          << (e.end.count() < 0 ? std::string("never") : Human(e.end - e.at))
          << ", violations " << e.violations << "\n";
    }
  }
  out << "settled: "
      << (h.settled.count() < 0 ? std::string("no (replication did not drain)")
                                : "at " + Seconds(h.settled) + "s")
      << "\n";
  out << "checks:\n";
  for (const CheckValue& c : outcome.checks) {
    char buffer[128];
    std::snprintf(buffer, sizeof buffer, "  %-30s %10s  ", c.name.c_str(),
                  Number(c.value).c_str());
    out << buffer << c.detail << "\n";
  }
  out << "expectations:\n";
  if (outcome.expectations.empty()) out << "  (none)\n";
  for (const ExpectationResult& e : outcome.expectations) {
    out << "  " << (e.pass ? "PASS" : "FAIL") << "  " << e.name << ": "
        << e.metric << " = " << Number(e.value) << " (" << e.bound << ")";
    if (!e.detail.empty()) out << "  " << e.detail;
    out << "\n";
  }
  out << "result: " << (outcome.passed ? "PASS" : "FAIL")
      << (h.settled.count() < 0
              ? " (the run did not settle: replication had not drained by "
                "the end of settling; writes not yet replicated are pending, "
                "not lost)"
              : "")
      << "\n";
  if (outcome.live) {
    out << "served: " << outcome.recorded_ops
        << " operations of recorded calls, "
        << outcome.client_ops - outcome.recorded_ops
        << " of simulated clients, in " << Seconds(h.ended)
        << " s (settling included)\n";
  } else if (outcome.wall_seconds > 0) {
    char buffer[256];
    const double simulated = (h.duration.count()) / 1e9;
    std::snprintf(buffer, sizeof buffer,
                  "sim: %lld client ops in %.2f s wall (%.0f ops/s), "
                  "%.1fx real time",
                  static_cast<long long>(outcome.client_ops),
                  outcome.wall_seconds,
                  outcome.client_ops / outcome.wall_seconds,
                  simulated / outcome.wall_seconds);
    out << buffer;
    if (outcome.check_wall_seconds > 0) {
      std::snprintf(buffer, sizeof buffer, " (run %.2f s, checks %.2f s)",
                    outcome.wall_seconds - outcome.check_wall_seconds,
                    outcome.check_wall_seconds);
      out << buffer;
    }
    out << "\n";
  }
  out << "fingerprint: " << outcome.fingerprint << "\n";
}

Status WriteFile(const std::filesystem::path& path,
                 const std::function<void(std::ostream&)>& write) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Internal(path.string() + ": cannot write the file");
  write(out);
  out.flush();
  if (!out) return Internal(path.string() + ": write failed");
  return OkStatus();
}

Status WriteOutputs(const LoadedScenario& scenario, const RunOutcome& outcome,
                    const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return InvalidArgument("--out " + dir + ": " + error.message());
  }
  const std::filesystem::path root(dir);
  Status printed = OkStatus();
  BTSIM_RETURN_IF_ERROR(WriteFile(root / "report.json", [&](std::ostream& o) {
    printed = WriteReportJson(scenario, outcome, o);
  }));
  BTSIM_RETURN_IF_ERROR(printed);
  BTSIM_RETURN_IF_ERROR(WriteFile(root / "history.jsonl", [&](std::ostream& o) {
    printed = WriteHistoryJsonl(scenario, outcome, o);
  }));
  return printed;
}

}  // namespace btsim::scenarios
