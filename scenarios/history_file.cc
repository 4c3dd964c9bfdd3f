#include "scenarios/history_file.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <optional>
#include <string_view>
#include <utility>

#include "btsim/report/v1/history.pb.h"
#include "scenarios/json_printer.h"
#include "scenarios/report_json.h"
#include "scenarios/scenario_fields.h"

namespace btsim::scenarios {
namespace {

namespace v1 = ::btsim::report::v1;

// Prints one line at a time.
class LineWriter {
 public:
  explicit LineWriter(std::ostream& out)
      : out_(out), printer_(JsonPrinter::Layout::kOneLine) {}
  // Prints the line's one record as {"<kind>":<record>}: the same JSON as
  // printing the HistoryLine, without the printer's cost of the wrapper.
  Status Write(const v1::HistoryLine& line) {
    const auto* field = line.GetReflection()->GetOneofFieldDescriptor(
        line, v1::HistoryLine::descriptor()->oneof_decl(0));
    if (field == nullptr) return Internal("an empty history line");
    json_.assign("{\"");
    json_.append(field->name());
    json_.append("\":");
    BTSIM_RETURN_IF_ERROR(
        printer_.Print(line.GetReflection()->GetMessage(line, field), json_));
    json_.append("}\n");
    out_.write(json_.data(), static_cast<std::streamsize>(json_.size()));
    return OkStatus();
  }

 private:
  std::ostream& out_;
  JsonPrinter printer_;
  std::string json_;
};

void FillEvent(const Event& e, v1::HistoryEvent& out) {
  out.Clear();
  out.set_at_nanos(e.at.count());
  AssignJsonText(EventKindName(e.kind), *out.mutable_kind());
  AssignJsonText(e.label, *out.mutable_label());
  AssignJsonText(e.cluster, *out.mutable_cluster());
  AssignJsonText(e.peer, *out.mutable_peer());
  AssignJsonText(e.table, *out.mutable_table());
  AssignJsonText(e.detail, *out.mutable_detail());
  out.set_end_nanos(e.end.count());
  out.set_consistent_nanos(e.consistent.count());
  out.set_violations(static_cast<uint32_t>(e.violations));
  out.set_refused(e.refused);
  if (e.unreplicated_ops) {
    v1::OperationIds& ids = *out.mutable_unreplicated_ops();
    for (uint64_t id : *e.unreplicated_ops) {
      ids.add_ids(static_cast<uint32_t>(id));
    }
  }
}

}  // namespace

Status WriteHistoryJsonl(const LoadedScenario& scenario,
                         const RunOutcome& outcome, std::ostream& out) {
  const History& h = outcome.history;
  LineWriter writer(out);
  v1::HistoryLine line;
  {
    v1::HistoryStart& start = *line.mutable_start();
    std::string text;
    if (!google::protobuf::TextFormat::PrintToString(scenario.proto, &text)) {
      return Internal("cannot print the scenario");
    }
    AssignJsonText(text, *start.mutable_scenario());
    AssignJsonText(scenario.path, *start.mutable_file());
    start.set_seed(outcome.seed);
    start.set_live(outcome.live);
    start.set_start_nanos(h.start.time_since_epoch().count());
    BTSIM_RETURN_IF_ERROR(writer.Write(line));
  }
  auto append = h.appends.begin();
  for (const Operation& op : h.operations) {
    while (append != h.appends.end() && append->op < op.id) ++append;
    const bool has_append = append != h.appends.end() && append->op == op.id;
    FillOperation(op, has_append ? &*append : nullptr, *h.names,
                  *line.mutable_operation());
    BTSIM_RETURN_IF_ERROR(writer.Write(line));
  }
  for (const Event& e : h.events) {
    FillEvent(e, *line.mutable_event());
    BTSIM_RETURN_IF_ERROR(writer.Write(line));
  }
  for (const Failover& f : h.failovers) {
    v1::RoutingFailover& out_f = *line.mutable_failover();
    out_f.Clear();
    out_f.set_at_nanos(f.at.count());
    out_f.set_profile(JsonText(f.profile));
    out_f.set_from(JsonText(f.from));
    out_f.set_to(JsonText(f.to));
    BTSIM_RETURN_IF_ERROR(writer.Write(line));
  }
  for (const HealthChange& c : h.health_changes) {
    v1::HealthChange& out_c = *line.mutable_health_change();
    out_c.Clear();
    out_c.set_at_nanos(c.at.count());
    out_c.set_zone(JsonText(c.zone));
    out_c.set_cluster(JsonText(c.cluster));
    out_c.set_ejected(c.ejected);
    BTSIM_RETURN_IF_ERROR(writer.Write(line));
  }
  for (const CpuSample& c : h.cpu) {
    v1::CpuSample& out_c = *line.mutable_cpu();
    out_c.Clear();
    out_c.set_at_nanos(c.at.count());
    out_c.set_cluster(JsonText(c.cluster));
    out_c.set_average(c.average);
    out_c.set_hottest(c.hottest);
    BTSIM_RETURN_IF_ERROR(writer.Write(line));
  }
  for (const LinkSample& l : h.links) {
    v1::LinkSample& out_l = *line.mutable_link();
    out_l.Clear();
    out_l.set_at_nanos(l.at.count());
    out_l.set_from(JsonText(l.from));
    out_l.set_to(JsonText(l.to));
    out_l.set_applied(l.applied);
    out_l.set_delay_sum_nanos(l.delay_sum.count());
    out_l.set_delay_max_nanos(l.delay_max.count());
    out_l.set_backlog(l.backlog);
    BTSIM_RETURN_IF_ERROR(writer.Write(line));
  }
  for (const GcRuleChange& g : h.gc_rules) {
    v1::GcRuleChange& out_g = *line.mutable_gc_rule();
    out_g.Clear();
    out_g.set_at_nanos(g.at.count());
    out_g.set_table(JsonText(g.table));
    *out_g.mutable_rule() = FromGcRule(g.rule);
    BTSIM_RETURN_IF_ERROR(writer.Write(line));
  }
  for (const ClusterState& c : h.final_state) {
    v1::ClusterState& out_c = *line.mutable_cluster();
    out_c.Clear();
    out_c.set_id(JsonText(c.id));
    out_c.set_digest(JsonText(c.digest));
    if (c.same_as) out_c.set_same_as(static_cast<uint32_t>(*c.same_as));
    for (const auto& [peer, position] : c.applied) {
      (*out_c.mutable_applied())[JsonText(peer)] = position;
    }
    BTSIM_RETURN_IF_ERROR(writer.Write(line));
    const std::string id = JsonText(c.id);
    for (const auto& [key, state] : c.rows) {
      v1::RowState& row = *line.mutable_row();
      row.Clear();
      row.set_cluster(id);
      AssignJsonText(key.first, *row.mutable_table());
      AssignJsonText(key.second, *row.mutable_row());
      AssignJsonText(h.names->Text(state.tag), *row.mutable_tag());
      row.set_timestamp_micros(cluster::Micros(state.timestamp));
      row.set_version(state.version);
      row.set_counter(state.counter);
      BTSIM_RETURN_IF_ERROR(writer.Write(line));
    }
  }
  v1::HistoryEnd& end = *line.mutable_end();
  end.set_duration_nanos(h.duration.count());
  end.set_settled_nanos(h.settled.count());
  end.set_ended_nanos(h.ended.count());
  end.set_strong_reads_promised(h.strong_reads_promised);
  end.set_fingerprint(JsonText(outcome.fingerprint));
  end.set_client_ops(static_cast<uint64_t>(outcome.client_ops));
  end.set_recorded_ops(static_cast<uint64_t>(outcome.recorded_ops));
  return writer.Write(line);
}

namespace {

// Reads the lines of one file in order, into a RecordedRun.
class HistoryReader {
 public:
  explicit HistoryReader(const std::string& path) : path_(path) {
    options_.ignore_unknown_fields = false;
    run_.outcome.history.start = sim::Time{};
    run_.outcome.history.operations.EnableSpilling();
  }

  // Adds line number `number` (from 1).
  Status Add(int64_t number, std::string_view text) {
    number_ = number;
    line_.Clear();
    const auto parsed =
        google::protobuf::util::JsonStringToMessage(text, &line_, options_);
    if (!parsed.ok()) {
      return Error("", "not a HistoryLine: " + std::string(parsed.message()));
    }
    if (line_.line_case() == v1::HistoryLine::LINE_NOT_SET) {
      return Error("", "empty line object");
    }
    if (ended_) return Error("", "a line after the end line");
    if (!started_ && line_.line_case() != v1::HistoryLine::kStart) {
      return Error("", "the first line must be the start line");
    }
    switch (line_.line_case()) {
      case v1::HistoryLine::kStart:
        return AddStart(line_.start());
      case v1::HistoryLine::kOperation:
        return AddOperation(line_.operation());
      case v1::HistoryLine::kEvent:
        return AddEvent(line_.event());
      case v1::HistoryLine::kFailover: {
        const v1::RoutingFailover& f = line_.failover();
        Failover out{Nanos(f.at_nanos()), "", "", ""};
        BTSIM_RETURN_IF_ERROR(
            Text(f.profile(), "failover.profile", out.profile));
        BTSIM_RETURN_IF_ERROR(Text(f.from(), "failover.from", out.from));
        BTSIM_RETURN_IF_ERROR(Text(f.to(), "failover.to", out.to));
        history().failovers.push_back(std::move(out));
        return OkStatus();
      }
      case v1::HistoryLine::kHealthChange: {
        const v1::HealthChange& c = line_.health_change();
        HealthChange out{Nanos(c.at_nanos()), "", "", c.ejected()};
        BTSIM_RETURN_IF_ERROR(Text(c.zone(), "health_change.zone", out.zone));
        BTSIM_RETURN_IF_ERROR(
            Text(c.cluster(), "health_change.cluster", out.cluster));
        history().health_changes.push_back(std::move(out));
        return OkStatus();
      }
      case v1::HistoryLine::kCpu: {
        const v1::CpuSample& c = line_.cpu();
        CpuSample out{Nanos(c.at_nanos()), "", c.average(), c.hottest()};
        BTSIM_RETURN_IF_ERROR(Text(c.cluster(), "cpu.cluster", out.cluster));
        history().cpu.push_back(std::move(out));
        return OkStatus();
      }
      case v1::HistoryLine::kLink: {
        const v1::LinkSample& l = line_.link();
        LinkSample out;
        out.at = Nanos(l.at_nanos());
        BTSIM_RETURN_IF_ERROR(Text(l.from(), "link.from", out.from));
        BTSIM_RETURN_IF_ERROR(Text(l.to(), "link.to", out.to));
        out.applied = l.applied();
        out.delay_sum = Nanos(l.delay_sum_nanos());
        out.delay_max = Nanos(l.delay_max_nanos());
        out.backlog = l.backlog();
        history().links.push_back(std::move(out));
        return OkStatus();
      }
      case v1::HistoryLine::kGcRule: {
        const v1::GcRuleChange& g = line_.gc_rule();
        BTSIM_RETURN_IF_ERROR(ValidateGcRule(g.rule(), Field("gc_rule.rule")));
        GcRuleChange out{Nanos(g.at_nanos()), "", ToGcRule(g.rule())};
        BTSIM_RETURN_IF_ERROR(Text(g.table(), "gc_rule.table", out.table));
        history().gc_rules.push_back(std::move(out));
        return OkStatus();
      }
      case v1::HistoryLine::kCluster:
        return AddCluster(line_.cluster());
      case v1::HistoryLine::kRow:
        return AddRow(line_.row());
      case v1::HistoryLine::kEnd:
        return AddEnd(line_.end());
      case v1::HistoryLine::LINE_NOT_SET:
        break;
    }
    return OkStatus();
  }

  Result<RecordedRun> Finish() && {
    if (!started_) return InvalidArgument(path_ + ": empty: no start line");
    if (!ended_) {
      return InvalidArgument(path_ + ": incomplete: no end line after line " +
                             std::to_string(number_));
    }
    return std::move(run_);
  }

 private:
  History& history() { return run_.outcome.history; }

  std::string Field(std::string_view field) const {
    return path_ + ":" + std::to_string(number_) + ": " + std::string(field);
  }
  Status Error(std::string_view field, const std::string& what) const {
    return InvalidArgument(
        field.empty() ? path_ + ":" + std::to_string(number_) + ": " + what
                      : Field(field) + ": " + what);
  }
  static sim::Duration Nanos(int64_t n) { return sim::Duration(n); }

  // `text` as bytes into `out`.
  Status Text(std::string_view text, std::string_view field,
              std::string& out) const {
    if (!BytesOfJsonText(text, out)) {
      return Error(field, "not text of characters U+0000..U+00FF");
    }
    return OkStatus();
  }
  // The tag with that text, made by the history's pool.
  Result<Tag> PoolTag(std::string_view text, std::string_view field) {
    BTSIM_RETURN_IF_ERROR(Text(text, field, bytes_));
    if (bytes_.empty()) return Tag();
    return history().names->MakeTag(bytes_);
  }
  // The same, stored in the history's pool (interned when `intern`).
  Result<Name> PoolText(std::string_view text, std::string_view field,
                        bool intern) {
    BTSIM_RETURN_IF_ERROR(Text(text, field, bytes_));
    if (bytes_.empty()) return Name();
    return intern ? history().names->Intern(bytes_)
                  : history().names->Store(bytes_);
  }

  Status AddStart(const v1::HistoryStart& start) {
    if (started_) return Error("start", "a second start line");
    started_ = true;
    BTSIM_RETURN_IF_ERROR(
        Text(start.scenario(), "start.scenario", run_.scenario));
    BTSIM_RETURN_IF_ERROR(Text(start.file(), "start.file", run_.file));
    run_.outcome.seed = start.seed();
    run_.outcome.live = start.live();
    history().start = sim::Time(sim::Duration(start.start_nanos()));
    return OkStatus();
  }

  Status AddOperation(const v1::Operation& in);
  Status AddEvent(const v1::HistoryEvent& in);
  Status AddCluster(const v1::ClusterState& in);
  Status AddRow(const v1::RowState& in);
  Status AddEnd(const v1::HistoryEnd& in);

  const std::string path_;
  google::protobuf::util::JsonParseOptions options_;
  RecordedRun run_;
  v1::HistoryLine line_;
  int64_t number_ = 0;
  bool started_ = false;
  bool ended_ = false;
  std::string bytes_;  // reused by PoolText
  // The strings of an operation's source.
  std::string client_, group_, profile_, table_;
  sim::Duration last_invoke_ = sim::Duration::min();  // of the last operation
};

// A time of an operation: exact when `nanos` is there, else from the
// rounded seconds.
sim::Duration OpTime(bool has_nanos, int64_t nanos, double seconds) {
  if (has_nanos) return sim::Duration(nanos);
  return sim::Duration(static_cast<int64_t>(std::llround(seconds * 1e9)));
}

Status HistoryReader::AddOperation(const v1::Operation& in) {
  History& h = history();
  if (!in.has_id() || in.id() != h.operations.size()) {
    return Error("operation.id",
                 "expected " + std::to_string(h.operations.size()) +
                     " (operations come in invoke order, from 0)");
  }
  Operation op;
  op.id = in.id();
  const auto type = OpTypeFromName(in.op());
  if (!type)
    return Error("operation.op", "unknown operation '" + in.op() + "'");
  op.type = *type;
  const auto code = StatusCodeFromName(in.status());
  if (!code) {
    return Error("operation.status", "unknown status '" + in.status() + "'");
  }
  op.code = *code;
  if (in.attempts() < 0 || in.attempts() > INT16_MAX) {
    return Error("operation.attempts", "out of range");
  }
  op.attempts = static_cast<int16_t>(in.attempts());
  BTSIM_RETURN_IF_ERROR(Text(in.client(), "operation.client", client_));
  BTSIM_RETURN_IF_ERROR(Text(in.group(), "operation.group", group_));
  BTSIM_RETURN_IF_ERROR(Text(in.profile(), "operation.profile", profile_));
  BTSIM_RETURN_IF_ERROR(Text(in.table(), "operation.table", table_));
  op.source = h.names->Source(client_, group_, profile_, table_);
  BTSIM_ASSIGN_OR_RETURN(op.row, PoolText(in.row(), "operation.row", true));
  BTSIM_ASSIGN_OR_RETURN(op.cluster,
                         PoolText(in.cluster(), "operation.cluster", true));
  BTSIM_ASSIGN_OR_RETURN(op.message,
                         PoolText(in.message(), "operation.message", true));
  op.invoke = OpTime(in.has_invoke_nanos(), in.invoke_nanos(), in.invoke());
  op.complete =
      OpTime(in.has_complete_nanos(), in.complete_nanos(), in.complete());
  if (op.invoke < last_invoke_) {
    return Error("operation.invoke",
                 "before the previous operation's (operations come in invoke "
                 "order)");
  }
  if (op.complete < op.invoke) {
    return Error("operation.complete", "before its invoke");
  }
  last_invoke_ = op.invoke;
  op.committed =
      OpTime(in.has_committed_nanos(), in.committed_nanos(), in.committed());
  op.version = in.version();
  op.log_position = in.log_position();
  op.timestamp = cluster::TimestampFromMicros(in.timestamp_micros());
  switch (op.type) {
    case OpType::kWrite:
    case OpType::kCheckAndMutate: {
      BTSIM_ASSIGN_OR_RETURN(Tag tag,
                             PoolTag(in.written(), "operation.written"));
      if (!tag.empty()) op.set_written(tag);
      break;
    }
    case OpType::kReadRow: {
      BTSIM_ASSIGN_OR_RETURN(Tag tag, PoolTag(in.read(), "operation.read"));
      if (!tag.empty()) op.set_read(tag);
      break;
    }
    case OpType::kScan:
      op.set_rows(in.rows());
      break;
    case OpType::kReadModifyWrite:
      op.set_counter(in.counter());
      break;
    case OpType::kDeleteCells:
      op.set_delete_start(
          cluster::TimestampFromMicros(in.delete_from_micros()));
      break;
    case OpType::kAddToCell:
      if (in.applied() < 0) {
        return Error("operation.applied", "must not be negative");
      }
      op.set_applied(in.applied());
      op.set_idempotent(in.idempotent());
      break;
    case OpType::kDeleteRow:
    case OpType::kDeleteFamily:
    case OpType::kAppend:
      break;
  }
  if (in.has_append_token()) {
    if (op.type != OpType::kAppend) {
      return Error("operation.append_token", "only an append has one");
    }
    Append append;
    append.op = op.id;
    BTSIM_ASSIGN_OR_RETURN(
        append.token,
        PoolText(in.append_token(), "operation.append_token", false));
    BTSIM_ASSIGN_OR_RETURN(
        append.list,
        PoolText(in.append_list(), "operation.append_list", false));
    h.appends.push_back(append);
  }
  h.operations.push_back(op);
  h.operations.Settle(h.operations.size());  // read once, never changed
  return OkStatus();
}

Status HistoryReader::AddEvent(const v1::HistoryEvent& in) {
  Event e;
  e.at = Nanos(in.at_nanos());
  const auto kind = EventKindFromName(in.kind());
  if (!kind) return Error("event.kind", "unknown kind '" + in.kind() + "'");
  e.kind = *kind;
  BTSIM_RETURN_IF_ERROR(Text(in.label(), "event.label", e.label));
  BTSIM_RETURN_IF_ERROR(Text(in.cluster(), "event.cluster", e.cluster));
  BTSIM_RETURN_IF_ERROR(Text(in.peer(), "event.peer", e.peer));
  BTSIM_RETURN_IF_ERROR(Text(in.table(), "event.table", e.table));
  BTSIM_RETURN_IF_ERROR(Text(in.detail(), "event.detail", e.detail));
  e.refused = in.refused();
  e.end = Nanos(in.end_nanos());
  e.consistent = Nanos(in.consistent_nanos());
  e.violations = in.violations();
  if (in.has_unreplicated_ops()) {
    e.unreplicated_ops.emplace();
    for (uint32_t id : in.unreplicated_ops().ids()) {
      e.unreplicated_ops->push_back(id);
    }
  }
  history().events.push_back(std::move(e));
  return OkStatus();
}

Status HistoryReader::AddCluster(const v1::ClusterState& in) {
  History& h = history();
  ClusterState c;
  BTSIM_RETURN_IF_ERROR(Text(in.id(), "cluster.id", c.id));
  BTSIM_RETURN_IF_ERROR(Text(in.digest(), "cluster.digest", c.digest));
  if (in.has_same_as()) {
    if (in.same_as() >= h.final_state.size() ||
        h.final_state[in.same_as()].same_as) {
      return Error("cluster.same_as",
                   "must name an earlier cluster that has its own rows");
    }
    c.same_as = in.same_as();
  }
  for (const auto& [peer, position] : in.applied()) {
    std::string id;
    BTSIM_RETURN_IF_ERROR(Text(peer, "cluster.applied", id));
    c.applied[id] = position;
  }
  h.final_state.push_back(std::move(c));
  return OkStatus();
}

Status HistoryReader::AddRow(const v1::RowState& in) {
  History& h = history();
  std::string cluster;
  BTSIM_RETURN_IF_ERROR(Text(in.cluster(), "row.cluster", cluster));
  if (h.final_state.empty() || h.final_state.back().id != cluster ||
      h.final_state.back().same_as) {
    return Error("row.cluster",
                 "rows follow their cluster's line (one without same_as)");
  }
  RowStates& rows = h.final_state.back().rows;
  BTSIM_RETURN_IF_ERROR(Text(in.table(), "row.table", table_));
  BTSIM_RETURN_IF_ERROR(Text(in.row(), "row.row", bytes_));
  if (!rows.empty()) {
    const RowStates::Key& last = std::prev(rows.end())->first;
    if (std::pair<std::string_view, std::string_view>(last.first.view(),
                                                      last.second.view()) >=
        std::pair<std::string_view, std::string_view>(table_, bytes_)) {
      return Error("row.row", "rows come in ascending (table, row) order");
    }
  }
  RowStates::Key key(h.names->Intern(table_), h.names->Intern(bytes_));
  RowState state;
  BTSIM_ASSIGN_OR_RETURN(state.tag, PoolTag(in.tag(), "row.tag"));
  state.timestamp = cluster::TimestampFromMicros(in.timestamp_micros());
  state.version = in.version();
  state.counter = in.counter();
  rows.Append(key, state);
  return OkStatus();
}

Status HistoryReader::AddEnd(const v1::HistoryEnd& in) {
  History& h = history();
  ended_ = true;
  h.duration = Nanos(in.duration_nanos());
  h.settled = Nanos(in.settled_nanos());
  h.ended = Nanos(in.ended_nanos());
  h.strong_reads_promised = in.strong_reads_promised();
  BTSIM_RETURN_IF_ERROR(
      Text(in.fingerprint(), "end.fingerprint", run_.outcome.fingerprint));
  if (in.client_ops() > INT64_MAX || in.recorded_ops() > in.client_ops()) {
    return Error("end", "client_ops and recorded_ops out of range");
  }
  run_.outcome.client_ops = static_cast<int64_t>(in.client_ops());
  run_.outcome.recorded_ops = static_cast<int64_t>(in.recorded_ops());
  std::sort(h.appends.begin(), h.appends.end(),
            [](const Append& a, const Append& b) { return a.op < b.op; });
  return OkStatus();
}

}  // namespace

Result<RecordedRun> ReadHistoryJsonl(std::istream& in,
                                     const std::string& path) {
  HistoryReader reader(path);
  std::string text;
  int64_t number = 0;
  while (std::getline(in, text)) {
    ++number;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    BTSIM_RETURN_IF_ERROR(reader.Add(number, text));
  }
  if (in.bad()) return InvalidArgument(path + ": cannot be read");
  return std::move(reader).Finish();
}

}  // namespace btsim::scenarios
