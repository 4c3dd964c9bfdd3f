#include "scenarios/live_session.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/check.h"
#include "cluster/version.h"
#include "scenarios/row_reader.h"
#include "scenarios/scenario_fields.h"

namespace btsim::scenarios {

namespace {

// Puts `ops` in invoke order (equal invokes keep their order), numbering
// each operation's id by its new position; returns the new id of each of
// `ids` (old ids, ascending and unique). Recorded operations are added when
// they complete, so the log is out of invoke order only within about the
// longest latency: a merge through a heap that holds the operations a later
// one may still precede (those recorded while the longest call was open:
// the calls of a deadline's length at the request rate, not the session's).
std::vector<uint64_t> SortByInvoke(OperationLog& ops,
                                   const std::vector<uint64_t>& ids) {
  constexpr size_t kBlock = size_t{1} << 14;
  // later_min[b]: the earliest invoke of blocks b and after.
  std::vector<sim::Duration> later_min((ops.size() + kBlock - 1) / kBlock + 1,
                                       sim::Duration::max());
  for (auto it = ops.begin(); it != ops.end(); ++it) {
    BTSIM_CHECK(it->id == it.index());
    sim::Duration& earliest = later_min[it.index() / kBlock];
    earliest = std::min(earliest, it->invoke);
  }
  for (size_t b = later_min.size() - 1; b-- > 0;) {
    later_min[b] = std::min(later_min[b], later_min[b + 1]);
  }
  // A min-heap on (invoke, old id).
  auto later = [](const Operation& a, const Operation& b) {
    return a.invoke != b.invoke ? a.invoke > b.invoke : a.id > b.id;
  };
  std::vector<Operation> pending;
  std::vector<uint64_t> new_ids(ids.size());
  OperationLog sorted;
  sorted.EnableSpilling();
  auto emit = [&] {
    std::pop_heap(pending.begin(), pending.end(), later);
    Operation& op = sorted.emplace_back();
    op = pending.back();
    pending.pop_back();
    const uint32_t id = static_cast<uint32_t>(sorted.size() - 1);
    auto wanted = std::lower_bound(ids.begin(), ids.end(), op.id);
    if (wanted != ids.end() && *wanted == op.id) {
      new_ids[static_cast<size_t>(wanted - ids.begin())] = id;
    }
    op.id = id;
    sorted.Settle(sorted.size());
  };
  for (auto it = ops.begin(); it != ops.end(); ++it) {
    if (it.index() % kBlock == 0) {
      // Every later operation has a larger id and invokes no earlier.
      const sim::Duration earliest = later_min[it.index() / kBlock];
      while (!pending.empty() && pending.front().invoke <= earliest) emit();
    }
    pending.push_back(*it);
    std::push_heap(pending.begin(), pending.end(), later);
  }
  while (!pending.empty()) emit();
  ops = std::move(sorted);
  return new_ids;
}

using std::chrono::seconds;

constexpr sim::Duration kSampleInterval = seconds(1);

// What a row's mutations leave of family:kValueColumn: the SetCell the
// row keeps (the last, unless a later mutation deletes the column), and
// otherwise the widest delete of the column (kWrite: none; kDeleteCells
// with `cells`, the last such DeleteFromColumn).
struct ValueChange {
  const cluster::SetCell* set = nullptr;
  OpType deleted = OpType::kWrite;
  const cluster::DeleteFromColumn* cells = nullptr;
};
ValueChange ChangeOf(std::span<const cluster::Mutation> mutations,
                     std::string_view family) {
  ValueChange change;
  for (const cluster::Mutation& m : mutations) {
    const auto* set = std::get_if<cluster::SetCell>(&m);
    const auto* in_family = std::get_if<cluster::DeleteFromFamily>(&m);
    const auto* in_column = std::get_if<cluster::DeleteFromColumn>(&m);
    if (set != nullptr && set->family == family &&
        set->qualifier == kValueColumn) {
      change.set = set;
    } else if (std::holds_alternative<cluster::DeleteFromRow>(m)) {
      change = {nullptr, OpType::kDeleteRow, nullptr};
    } else if (in_family != nullptr && in_family->family == family) {
      change.set = nullptr;
      if (change.deleted != OpType::kDeleteRow) {
        change.deleted = OpType::kDeleteFamily;
      }
    } else if (in_column != nullptr && in_column->family == family &&
               in_column->qualifier == kValueColumn) {
      change.set = nullptr;
      if (change.deleted == OpType::kWrite ||
          change.deleted == OpType::kDeleteCells) {
        change.deleted = OpType::kDeleteCells;
        change.cells = in_column;
      }
    }
  }
  return change;
}

// Whether a row's mutations only add to aggregate cells (AddToCell or
// MergeToCell): an add_to_cell operation of the history.
bool IsAdd(std::span<const cluster::Mutation> mutations) {
  return !mutations.empty() &&
         std::all_of(mutations.begin(), mutations.end(),
                     [](const cluster::Mutation& m) {
                       return std::holds_alternative<cluster::AddToCell>(m);
                     });
}

}  // namespace

LiveSession::LiveSession(const LoadedScenario& scenario,
                         instance::Instance& instance,
                         sim::Scheduler& scheduler)
    : scenario_(scenario),
      scheduler_(scheduler),
      rng_(SeedOf(scenario.proto)),
      observer_(context_) {
  history_.start = scheduler.Now();
  context_.scheduler = &scheduler;
  context_.instance = &instance;
  context_.history = &history_;
  context_.trace = &trace_;
  steps_.context = &context_;
  history_.operations.EnableSpilling();
}

Result<std::unique_ptr<LiveSession>> LiveSession::Create(
    const LoadedScenario& scenario, instance::Instance& instance,
    sim::Scheduler& scheduler) {
  std::unique_ptr<LiveSession> session(
      new LiveSession(scenario, instance, scheduler));
  BTSIM_RETURN_IF_ERROR(CreateTables(scenario.proto, session->steps_));
  BTSIM_ASSIGN_OR_RETURN(
      session->clients_,
      CreateClients(scenario.proto, session->rng_, session->steps_));
  instance.AddObserver(&session->observer_);
  instance.AddObserver(session.get());
  return session;
}

LiveSession::~LiveSession() {
  context_.instance->RemoveObserver(this);
  context_.instance->RemoveObserver(&observer_);
}

void LiveSession::Start() {
  if (started_) return;
  started_ = true;
  history_.start = scheduler_.Now();
  const auto& s = scenario_.proto;
  history_.duration = ToDuration(s.duration());
  for (int i : TimelineOrder(s)) {
    timeline_.push_back(
        scheduler_.RunAfter(ToDuration(s.timeline(i).at()), [this, i] {
          if (!client_phase_over_) {
            ApplyStep(scenario_.proto.timeline(i), steps_);
          }
        }));
  }
  for (const auto& c : s.clients()) {
    if (c.start_stopped()) continue;
    for (SimClient* client : steps_.groups[c.name()].clients) client->Start();
  }
  Sample();
}

bool LiveSession::DurationOver() const {
  return started_ && context_.Elapsed() >= history_.duration;
}

void LiveSession::Sample() {
  if (context_.finished) return;
  SampleClustersAndLinks(context_, observer_);
  SettleOperations(clients_, history_);
  scheduler_.RunAfter(kSampleInterval, [this] { Sample(); });
}

void LiveSession::EndClientPhase() {
  if (client_phase_over_) return;
  client_phase_over_ = true;
  for (sim::TaskId id : timeline_) scheduler_.Cancel(id);
  history_.duration = std::min(history_.duration, context_.Elapsed());
  Event settle;
  settle.at = context_.Elapsed();
  settle.kind = EventKind::kSettle;
  settle.label = "clients stop; the run settles";
  for (auto& client : clients_.clients) client->Stop();
  if (!scenario_.proto.settle().keep_faults()) UndoFaults(steps_);
  steps_.AddEvent(std::move(settle));
}

bool LiveSession::Settled() {
  if (context_.in_flight != 0 ||
      !context_.instance->replicas().HasApplied(
          context_.instance->replicas().LogPositions())) {
    return false;
  }
  if (history_.settled < sim::Duration(0))
    history_.settled = context_.Elapsed();
  return true;
}

RunOutcome LiveSession::Finish() {
  EndClientPhase();
  Settled();
  FinishRun(steps_);
  // Recorded operations were added when they completed: put every
  // operation in invoke order, renumbering the ids events and appends
  // refer to.
  std::vector<uint64_t> ids;
  for (const Event& event : history_.events) {
    if (!event.unreplicated_ops) continue;
    ids.insert(ids.end(), event.unreplicated_ops->begin(),
               event.unreplicated_ops->end());
  }
  for (const Append& append : history_.appends) ids.push_back(append.op);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  const std::vector<uint64_t> new_ids = SortByInvoke(history_.operations, ids);
  auto new_id = [&](uint64_t id) {
    const auto it = std::lower_bound(ids.begin(), ids.end(), id);
    BTSIM_CHECK(it != ids.end() && *it == id &&
                id < history_.operations.size());
    return new_ids[static_cast<size_t>(it - ids.begin())];
  };
  for (Event& event : history_.events) {
    if (!event.unreplicated_ops) continue;
    for (uint64_t& id : *event.unreplicated_ops) id = new_id(id);
  }
  for (Append& append : history_.appends) {
    append.op = static_cast<uint32_t>(new_id(append.op));
  }
  std::sort(history_.appends.begin(), history_.appends.end(),
            [](const Append& a, const Append& b) { return a.op < b.op; });

  auto& replicas = context_.instance->replicas();
  replicas.CompactAll();
  history_.ended = context_.Elapsed();
  sim::Fingerprint fingerprint;
  fingerprint.Add(trace_.Hex());
  ReadFinalState(replicas, steps_.family_of, &history_, &fingerprint);

  RunOutcome out;
  out.scenario = scenario_.name;
  out.seed = SeedOf(scenario_.proto);
  out.fingerprint = fingerprint.Hex();
  out.client_ops = static_cast<int64_t>(history_.operations.size());
  out.live = true;
  for (const Operation& op : history_.operations) {
    if (op.group() == kRecordedGroup) ++out.recorded_ops;
  }
  out.history = std::move(history_);
  JudgeOutcome(scenario_.proto, out);
  return out;
}

void LiveSession::OnRequest(const instance::RequestReport& request) {
  if (!request.recorded || !started_ || client_phase_over_) return;
  Record(request);
}

void LiveSession::Record(const instance::RequestReport& r) {
  OpType base;
  if (r.method == "ReadRows") {
    base = r.point_read ? OpType::kReadRow : OpType::kScan;
  } else if (r.method == "MutateRow" || r.method == "MutateRows") {
    base = OpType::kWrite;
  } else if (r.method == "CheckAndMutateRow") {
    base = OpType::kCheckAndMutate;
  } else if (r.method == "ReadModifyWriteRow") {
    base = OpType::kReadModifyWrite;
  } else {
    return;  // not a data operation of the history (e.g. PingAndWarm)
  }
  // The family the checkers follow ("" for a table not in the scenario:
  // nothing there is followed).
  auto followed = steps_.family_of.find(std::string(r.table));
  const std::string_view family = followed == steps_.family_of.end()
                                      ? std::string_view()
                                      : std::string_view(followed->second);
  NamePool& names = *history_.names;
  // An empty profile id means the default profile.
  const OpSource* source = names.Source(
      r.client, kRecordedGroup,
      r.app_profile.empty() ? std::string_view("default") : r.app_profile,
      r.table);
  const Name cluster = names.Intern(r.cluster);
  const sim::Duration complete = context_.Elapsed();
  const sim::Duration invoke = std::max(sim::Duration(0), complete - r.latency);
  const cluster::Timestamp now = cluster::TimestampOf(scheduler_.Now());

  auto add = [&](OpType type, std::string_view key,
                 const instance::RowOutcome* row) -> Operation& {
    Operation& op = history_.operations.emplace_back();
    op.id = static_cast<uint32_t>(history_.operations.size() - 1);
    op.attempts = 1;
    op.type = type;
    op.source = source;
    op.row = names.Intern(key);
    op.invoke = invoke;
    op.complete = complete;
    op.cluster = cluster;
    op.code = r.code;
    std::string_view message = r.message;
    if (r.code == StatusCode::kOk && row != nullptr) {
      op.code = row->code;
      message = row->message;
    }
    if (!message.empty()) op.message = names.Intern(message);
    if (row != nullptr && row->version != 0) {
      op.version = row->version;
      op.log_position = row->log_position;
      op.committed = complete;
    }
    // A change's time: its commit's, at millisecond granularity (a server
    // timestamp), else now.
    op.timestamp =
        op.version != 0
            ? cluster::TruncateToMillis(cluster::VersionTime(op.version))
            : now;
    return op;
  };

  if (base == OpType::kScan || r.rows.empty()) {
    if (base != OpType::kScan && base != OpType::kReadRow) return;
    Operation& op = add(OpType::kScan, "", nullptr);
    op.set_rows(r.returned_rows);
    return;
  }
  for (const instance::RowOutcome& row : r.rows) {
    switch (base) {
      case OpType::kReadRow: {
        if (r.filtered || family.empty()) {
          // A filter may have hidden the value, or changed it: what the row
          // holds is not known.
          add(OpType::kScan, row.key, &row).set_rows(row.cells.empty() ? 0 : 1);
        } else {
          const std::string_view tag = RowStateOf(family, row.cells).tag;
          Operation& op = add(OpType::kReadRow, row.key, &row);
          if (!tag.empty()) op.set_read(names.MakeTag(tag));
        }
        break;
      }
      case OpType::kWrite:
      case OpType::kCheckAndMutate: {
        if (base == OpType::kWrite && IsAdd(row.mutations)) {
          // Applied once when it committed; a call the server answered
          // without applying (an idempotency token it had seen) or that
          // failed applied nothing. Retries are calls of their own: the
          // server cannot tell them apart.
          Operation& op = add(OpType::kAddToCell, row.key, &row);
          op.set_applied(row.version != 0 ? 1 : 0);
          op.timestamp = cluster::Timestamp{};  // as for simulated adds
          break;
        }
        const ValueChange change =
            family.empty() ? ValueChange() : ChangeOf(row.mutations, family);
        const cluster::SetCell* set = change.set;
        const cluster::DeleteFromColumn* cells = change.cells;
        // A write that only deletes the value is that delete.
        const OpType type =
            set == nullptr && base == OpType::kWrite ? change.deleted : base;
        Operation& op = add(type, row.key, &row);
        if (type == OpType::kDeleteCells) {
          // [start, end), an end of 0 meaning none; `timestamp` is the
          // last deleted.
          op.set_delete_start(cells->start);
          op.timestamp = cells->end == cluster::Timestamp{}
                             ? cluster::Timestamp::max()
                             : cells->end - std::chrono::microseconds(1);
        }
        // A call acknowledged without a commit (a replay of an idempotency
        // token the cluster has seen) wrote nothing itself: no tag, so
        // that no check waits for its value.
        const bool replay = op.ok() && op.version == 0;
        if (set != nullptr && !replay) {
          op.set_written(names.MakeTag(TagOf(set->value)));
          if (set->timestamp != cluster::kServerTimestamp) {
            op.timestamp = set->timestamp;
          }
        }
        break;
      }
      case OpType::kReadModifyWrite: {
        const bool increment =
            std::any_of(row.cells.begin(), row.cells.end(),
                        [&](const cluster::CellView& c) {
                          return !family.empty() && c.family == family &&
                                 c.qualifier == kCounterColumn;
                        });
        if (increment) {
          add(OpType::kReadModifyWrite, row.key, &row)
              .set_counter(RowStateOf(family, row.cells).counter);
        } else {
          add(OpType::kAppend, row.key, &row);
        }
        break;
      }
      default:
        break;
    }
  }
}

}  // namespace btsim::scenarios
