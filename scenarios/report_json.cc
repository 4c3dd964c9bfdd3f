#include "scenarios/report_json.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "scenarios/json_printer.h"
#include "scenarios/report.h"

namespace btsim::scenarios {
namespace {

namespace v1 = ::btsim::report::v1;

// `t` in seconds, rounded to the millisecond as printf's "%.3f" rounds
// t / 1e9 (the text summary prints times that way).
double MsSeconds(sim::Duration t) {
  constexpr int64_t kNanosPerMs = 1'000'000;
  const int64_t ns = t.count();
  // Below 1e15 ns, t / 1e9 as a double is within far less than a nanosecond
  // of the exact value: only an exact half millisecond needs printf's
  // judgement.
  if (ns >= 0 && ns < 1'000'000'000'000'000 &&
      ns % kNanosPerMs != kNanosPerMs / 2) {
    const int64_t ms = ns / kNanosPerMs + (ns % kNanosPerMs > kNanosPerMs / 2);
    return static_cast<double>(ms) / 1000.0;
  }
  return RoundToDecimals(static_cast<double>(ns) / 1e9, 3);
}

// Whole numbers below 1e15 as they are, others to six significant digits
// (the text summary's rule).
double SixDigits(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return v;
  return RoundToSignificant(v, 6);
}

double SixDigitSeconds(sim::Duration t) {
  return SixDigits(static_cast<double>(t.count()) / 1e9);
}

void AddFailover(const History& h, const FaultFailover& fault,
                 v1::FaultFailover& out) {
  const Event& e = h.events[fault.event];
  out.set_fault_at(MsSeconds(e.at));
  out.set_fault(JsonText(e.label));
  for (const ClientFailover& c : fault.clients) {
    v1::ClientFailover& client = *out.add_clients();
    client.set_client(JsonText(c.client));
    const bool never = c.rto && *c.rto == sim::Duration::max();
    if (c.rto && !never) client.set_rto_seconds(SixDigitSeconds(*c.rto));
    if (c.error_window && !never) {
      client.set_error_window_seconds(SixDigitSeconds(*c.error_window));
    }
    client.set_recovered(!never);
    for (const auto& [code, n] : c.errors) {
      (*client.mutable_errors())[JsonText(code)] = static_cast<uint32_t>(n);
    }
    if (c.failback) {
      const Failback& f = *c.failback;
      const bool repaired = f.repaired.count() >= 0;
      const bool failed_back = repaired && !f.never && !f.unobserved;
      client.set_home(JsonText(f.home));
      if (repaired) client.set_repaired_at(MsSeconds(f.repaired));
      if (failed_back) client.set_failback_seconds(SixDigitSeconds(f.length));
      client.set_failed_back(failed_back);
    }
  }
  for (const Detection& d : fault.detections) {
    v1::Detection& detection = *out.add_detections();
    detection.set_zone(JsonText(d.zone));
    detection.set_cluster(JsonText(d.cluster));
    detection.set_ejected_after_seconds(SixDigitSeconds(d.ejected));
    detection.set_ejections(static_cast<uint32_t>(d.ejections));
    if (d.readmitted) {
      detection.set_readmitted_after_seconds(SixDigitSeconds(*d.readmitted));
    }
  }
}

void AddPhase(const PhaseStats& p, v1::Phase& out) {
  out.set_start(MsSeconds(p.start));
  out.set_end(MsSeconds(p.end));
  out.set_label(JsonText(p.label));
  for (const PhaseStats::Line& l : p.lines) {
    v1::PhaseLine& line = *out.add_lines();
    line.set_profile(JsonText(l.profile));
    line.set_cluster(JsonText(l.cluster));
    line.set_ops(static_cast<uint32_t>(l.ops));
    line.set_errors(static_cast<uint32_t>(l.errors));
    line.set_p50_seconds(MsSeconds(l.p50));
    line.set_p99_seconds(MsSeconds(l.p99));
  }
  for (const PhaseStats::Link& l : p.links) {
    v1::PhaseLink& link = *out.add_replication();
    link.set_from(JsonText(l.from));
    link.set_to(JsonText(l.to));
    link.set_applied(static_cast<uint32_t>(l.applied));
    link.set_mean_lag_seconds(SixDigitSeconds(l.mean));
    link.set_max_lag_seconds(SixDigitSeconds(l.max));
    link.set_max_backlog(static_cast<uint32_t>(l.max_backlog));
  }
}

}  // namespace

v1::Report ReportMessage(const LoadedScenario& scenario, const RunOutcome& o) {
  const History& h = o.history;
  v1::Report r;
  r.set_scenario(JsonText(o.scenario));
  r.set_file(JsonText(scenario.path));
  r.set_description(JsonText(scenario.proto.description()));
  r.set_seed(o.seed);
  r.set_fingerprint(JsonText(o.fingerprint));
  r.set_passed(o.passed);
  r.set_duration_seconds(MsSeconds(h.duration));
  if (h.settled.count() >= 0) r.set_settled_seconds(MsSeconds(h.settled));
  r.set_client_ops(static_cast<uint32_t>(o.client_ops));
  for (const ExpectationResult& e : o.expectations) {
    v1::Expectation& out = *r.add_expectations();
    out.set_name(JsonText(e.name));
    out.set_metric(JsonText(e.metric));
    if (std::isfinite(e.value)) out.set_value(SixDigits(e.value));
    out.set_bound(JsonText(e.bound));
    out.set_pass(e.pass);
    out.set_detail(JsonText(e.detail));
  }
  for (const CheckValue& c : o.checks) {
    v1::Check& out = *r.add_checks();
    out.set_name(JsonText(c.name));
    if (std::isfinite(c.value)) out.set_value(SixDigits(c.value));
    out.set_detail(JsonText(c.detail));
  }
  for (const Event& e : h.events) {
    v1::Event& out = *r.add_events();
    out.set_at(MsSeconds(e.at));
    out.set_kind(JsonText(EventKindName(e.kind)));
    out.set_label(JsonText(e.label));
    out.set_cluster(JsonText(e.cluster));
    out.set_peer(JsonText(e.peer));
    out.set_table(JsonText(e.table));
    out.set_detail(JsonText(e.detail));
    if (e.end.count() >= 0) out.set_end(MsSeconds(e.end));
    if (e.consistent.count() >= 0) out.set_consistent(MsSeconds(e.consistent));
    out.set_violations(static_cast<uint32_t>(e.violations));
  }
  for (const PhaseStats& p : Phases(h)) AddPhase(p, *r.add_phases());
  for (const FaultFailover& fault : FailoversByFault(o)) {
    AddFailover(h, fault, *r.add_failover());
  }
  for (const ProfileAvailability& a : Availability(scenario, h)) {
    v1::Availability& out = *r.add_availability();
    out.set_profile(JsonText(a.profile));
    out.set_target_percent(a.target_percent);
    out.set_minutes(static_cast<uint32_t>(a.minutes));
    out.set_downtime_minutes(static_cast<uint32_t>(a.downtime_minutes));
    out.set_uptime_percent(SixDigits(a.uptime_percent));
    out.set_worst_minute_error_rate(SixDigits(a.worst_minute_error_rate));
  }
  v1::KStaleness& k = *r.mutable_k_staleness();
  k.set_reads(static_cast<uint32_t>(o.k_staleness.reads));
  k.set_max(static_cast<uint32_t>(o.k_staleness.max));
  for (int64_t n : o.k_staleness.at_most) {
    k.add_at_most(static_cast<uint32_t>(n));
  }
  for (const VisibilityCurve& c : o.visibility) {
    v1::VisibilityCurve& curve = *r.add_t_visibility();
    curve.set_write_cluster(JsonText(c.write_cluster));
    curve.set_read_cluster(JsonText(c.read_cluster));
    for (size_t j = 0; j < c.t.size(); ++j) {
      v1::VisibilityPoint& point = *curve.add_points();
      point.set_t(MsSeconds(c.t[j]));
      if (c.probability[j] >= 0 && std::isfinite(c.probability[j])) {
        point.set_p(SixDigits(c.probability[j]));
      }
      point.set_samples(static_cast<uint32_t>(c.samples[j]));
    }
  }
  for (size_t i = 0; i < h.final_state.size(); ++i) {
    v1::Cluster& cluster = *r.add_clusters();
    cluster.set_id(JsonText(h.final_state[i].id));
    cluster.set_digest(JsonText(h.final_state[i].digest));
    cluster.set_rows(static_cast<uint32_t>(RowsOf(h, i).size()));
  }
  return r;
}

void FillOperation(const Operation& op, const Append* append,
                   const NamePool& names, v1::Operation& line) {
  line.Clear();
  line.set_id(op.id);
  line.set_invoke(MsSeconds(op.invoke));
  line.set_complete(MsSeconds(op.complete));
  line.set_invoke_nanos(op.invoke.count());
  line.set_complete_nanos(op.complete.count());
  AssignJsonText(op.client(), *line.mutable_client());
  AssignJsonText(op.group(), *line.mutable_group());
  AssignJsonText(op.profile(), *line.mutable_profile());
  AssignJsonText(op.cluster, *line.mutable_cluster());
  AssignJsonText(op.table(), *line.mutable_table());
  AssignJsonText(op.row, *line.mutable_row());
  AssignJsonText(OpTypeName(op.type), *line.mutable_op());
  AssignJsonText(StatusCodeName(op.code), *line.mutable_status());
  line.set_attempts(op.attempts);
  if (!op.message.empty()) AssignJsonText(op.message, *line.mutable_message());
  if (!op.written().empty()) {
    AssignJsonText(names.Text(op.written()), *line.mutable_written());
    line.set_timestamp_micros(cluster::Micros(op.timestamp));
  }
  if (op.version != 0) {
    line.set_committed(MsSeconds(op.committed));
    line.set_committed_nanos(op.committed.count());
    line.set_version(op.version);
    line.set_log_position(op.log_position);
  }
  if (!line.has_timestamp_micros() && op.timestamp != cluster::Timestamp{}) {
    line.set_timestamp_micros(cluster::Micros(op.timestamp));
  }
  if (append != nullptr) {
    AssignJsonText(append->token, *line.mutable_append_token());
    AssignJsonText(append->list, *line.mutable_append_list());
  }
  switch (op.type) {
    case OpType::kReadRow:
      AssignJsonText(names.Text(op.read()), *line.mutable_read());
      break;
    case OpType::kScan:
      line.set_rows(static_cast<uint32_t>(op.rows()));
      break;
    case OpType::kReadModifyWrite:
      line.set_counter(op.counter());
      break;
    case OpType::kDeleteCells:
      line.set_delete_from_micros(cluster::Micros(op.delete_start()));
      [[fallthrough]];
    case OpType::kDeleteRow:
    case OpType::kDeleteFamily:
      line.set_timestamp_micros(cluster::Micros(op.timestamp));
      break;
    case OpType::kAddToCell:
      line.set_applied(static_cast<int32_t>(op.applied()));
      if (op.idempotent()) line.set_idempotent(true);
      break;
    case OpType::kWrite:
    case OpType::kCheckAndMutate:
    case OpType::kAppend:
      break;
  }
}

Status WriteReportJson(const LoadedScenario& scenario,
                       const RunOutcome& outcome, std::ostream& out) {
  JsonPrinter printer(JsonPrinter::Layout::kIndented);
  std::string json;
  BTSIM_RETURN_IF_ERROR(printer.Print(ReportMessage(scenario, outcome), json));
  out << json << "\n";
  return OkStatus();
}

}  // namespace btsim::scenarios
