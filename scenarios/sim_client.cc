#include "scenarios/sim_client.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "base/bytes.h"
#include "base/check.h"
#include "scenarios/instance_config.h"
#include "scenarios/scenario_fields.h"
#include "sim/distributions.h"

namespace btsim::scenarios {
namespace {

namespace v1 = ::btsim::scenario::v1;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr sim::Duration kDefaultDeadline = seconds(10);
constexpr sim::Duration kDefaultInitialBackoff = milliseconds(10);
constexpr sim::Duration kDefaultMaxBackoff = seconds(1);
constexpr int kDefaultMaxAttempts = 10;
constexpr int kDefaultValueBytes = 100;

sim::Duration OrDefault(const google::protobuf::Duration& d, bool has,
                        sim::Duration fallback) {
  if (!has) return fallback;
  return seconds(d.seconds()) + sim::Duration(d.nanos());
}

bool IsTransaction(OpType type) {
  return type == OpType::kCheckAndMutate || type == OpType::kReadModifyWrite ||
         type == OpType::kAppend;
}

appprofile::RequestKind KindOf(OpType type) {
  switch (type) {
    case OpType::kScan:
      return appprofile::RequestKind::kMultiRow;
    case OpType::kCheckAndMutate:
    case OpType::kReadModifyWrite:
    case OpType::kAppend:
      return appprofile::RequestKind::kTransaction;
    default:
      return appprofile::RequestKind::kSingleRow;
  }
}

// The Bigtable RPC a client library would send.
std::string_view MethodOf(OpType type) {
  switch (type) {
    case OpType::kReadRow:
    case OpType::kScan:
      return "ReadRows";
    case OpType::kWrite:
    case OpType::kDeleteRow:
    case OpType::kDeleteFamily:
    case OpType::kDeleteCells:
    case OpType::kAddToCell:
      return "MutateRow";
    case OpType::kCheckAndMutate:
      return "CheckAndMutateRow";
    case OpType::kReadModifyWrite:
    case OpType::kAppend:
      return "ReadModifyWriteRow";
  }
  return "Unknown";
}

bool Retryable(StatusCode code) {
  return code == StatusCode::kUnavailable ||
         code == StatusCode::kDeadlineExceeded || code == StatusCode::kAborted;
}

OpType PickOp(const v1::OpMix& mix, sim::Rng& rng) {
  // In OpType order.
  const uint64_t weights[] = {mix.read_row(),
                              mix.scan(),
                              mix.write(),
                              mix.check_and_mutate(),
                              mix.read_modify_write(),
                              mix.delete_row(),
                              mix.delete_family(),
                              mix.delete_cells(),
                              mix.append(),
                              mix.add_to_cell()};
  uint64_t total = 0;
  for (uint64_t w : weights) total += w;
  uint64_t pick = rng.Uniform(total);
  for (int i = 0; i < static_cast<int>(std::size(weights)); ++i) {
    if (pick < weights[i]) return static_cast<OpType>(i);
    pick -= weights[i];
  }
  return OpType::kReadRow;
}

}  // namespace

Result<std::unique_ptr<ClientGroup>> MakeClientGroup(
    const v1::Client& client, const v1::Scenario& scenario,
    const std::string& default_zone) {
  auto group = std::make_unique<ClientGroup>();
  group->name = client.name();
  group->zone = client.zone().empty() ? default_zone : client.zone();
  group->profile = client.app_profile().empty()
                       ? std::string(appprofile::kDefaultProfileId)
                       : client.app_profile();
  const v1::Table* table = &scenario.tables(0);
  for (const v1::Table& t : scenario.tables()) {
    if (t.id() == client.table()) table = &t;
  }
  group->table = table->id();
  group->family = table->families(0).name();
  if (const v1::Family* sum = AddFamily(*table))
    group->add_family = sum->name();
  group->deadline =
      OrDefault(client.deadline(), client.has_deadline(), kDefaultDeadline);
  const v1::RetryPolicy& retry = client.retry();
  group->max_attempts =
      retry.max_attempts() == 0 ? kDefaultMaxAttempts : retry.max_attempts();
  group->initial_backoff =
      OrDefault(retry.initial_backoff(), retry.has_initial_backoff(),
                kDefaultInitialBackoff);
  group->multiplier = retry.multiplier() == 0 ? 2.0 : retry.multiplier();
  group->max_backoff = OrDefault(retry.max_backoff(), retry.has_max_backoff(),
                                 kDefaultMaxBackoff);
  group->attempt_timeout = OrDefault(
      retry.attempt_timeout(), retry.has_attempt_timeout(), sim::Duration(0));

  group->bypass_gating = client.bypass_transaction_gating();
  group->workload = client.workload();
  BTSIM_ASSIGN_OR_RETURN(
      group->keys,
      KeyGenerator::Create(client.workload().keys(),
                           "clients." + client.name() + ".workload.keys"));
  return group;
}

SimClient::SimClient(RunContext& context, ClientGroup& group, std::string name,
                     sim::Rng rng)
    : context_(context),
      group_(group),
      name_(std::move(name)),
      rng_(rng),
      source_(context.history->names->Source(name_, group.name, group.profile,
                                             group.table)) {}

void SimClient::Start() {
  if (active_) return;
  active_ = true;
  ++generation_;
  const v1::Workload& w = group_.workload;
  if (w.rate_case() == v1::Workload::kOpsPerSecond) {
    ScheduleArrival();
    return;
  }
  const uint64_t generation = generation_;
  for (int i = 0; i < w.in_flight(); ++i) {
    context_.scheduler->RunAfter(sim::Duration(0),
                                 [this, generation] { Issue(generation); });
  }
}

void SimClient::Stop() {
  if (!active_) return;
  active_ = false;
  ++generation_;
  if (arrival_pending_) {
    context_.scheduler->Cancel(arrival_);
    arrival_pending_ = false;
  }
}

void SimClient::Restart() {
  if (!active_) return;
  Stop();
  Start();
}

void SimClient::ScheduleArrival() {
  const double mean_seconds = 1.0 / group_.workload.ops_per_second();
  const double gap = sim::Exponential(rng_, mean_seconds);
  const auto delay = sim::Duration(static_cast<int64_t>(std::ceil(gap * 1e9)));
  arrival_pending_ = true;
  const uint64_t generation = generation_;
  arrival_ = context_.scheduler->RunAfter(delay, [this, generation] {
    arrival_pending_ = false;
    if (!active_ || generation != generation_) return;
    Issue(generation);
    ScheduleArrival();
  });
}

cluster::Mutation SimClient::ValueWrite(const Operation& op) {
  cluster::SetCell set{group_.family, std::string(kValueColumn), op.timestamp,
                       std::move(value_buffer_)};
  FillValue(context_.history->names->Text(op.written()), &set.value);
  return set;
}

void SimClient::KeepValueBuffer(cluster::Mutation& write) {
  value_buffer_ = std::move(std::get<cluster::SetCell>(write).value);
}

void SimClient::FillValue(std::string_view tag, std::string* value) const {
  int64_t min = kDefaultValueBytes, max = kDefaultValueBytes;
  if (group_.workload.has_value_bytes()) {
    min = group_.workload.value_bytes().min();
    max = group_.workload.value_bytes().max();
  }
  // Derived from the tag, so a retried write sends the same bytes.
  const int64_t size =
      min + static_cast<int64_t>(sim::StableHash(tag) %
                                 static_cast<uint64_t>(max - min + 1));
  value->assign(tag);
  value->push_back('|');
  if (static_cast<int64_t>(value->size()) < size) value->resize(size, 'x');
}

void SimClient::Issue(uint64_t loop_generation) {
  if (!active_ || loop_generation != generation_) return;
  const sim::Time now = context_.scheduler->Now();
  History& history = *context_.history;
  Operation op;
  // Operation::id is 32 bits.
  BTSIM_CHECK(history.operations.size() < std::numeric_limits<uint32_t>::max());
  op.id = static_cast<uint32_t>(history.operations.size());
  op.source = source_;
  op.type = PickOp(group_.workload.mix(), rng_);
  NamePool& texts = *history.names;
  // The client's own clock (skewed by clock_skew) sets its keys and
  // timestamps.
  const sim::Time clock = now + group_.clock_offset;
  switch (op.type) {
    case OpType::kWrite:
      op.row = texts.Intern(group_.keys->WriteKey(clock, rng_));
      break;
    case OpType::kScan:
      op.row = texts.Intern(group_.keys->ScanStart(clock, rng_));
      break;
    default:
      op.row = texts.Intern(group_.keys->ReadKey(clock, rng_));
      break;
  }
  op.invoke = context_.Elapsed();
  // Bigtable timestamps are milliseconds, in microseconds.
  const cluster::Timestamp now_ms =
      std::max(cluster::Timestamp{},
               cluster::TruncateToMillis(cluster::TimestampOf(clock)));
  if (op.type == OpType::kWrite || op.type == OpType::kCheckAndMutate) {
    op.set_written(texts.MakeTag(name_ + "/" + std::to_string(sequence_++)));
    op.timestamp = now_ms;
    const v1::Workload& w = group_.workload;
    const sim::Duration max_backdate =
        OrDefault(w.max_backdate(), w.has_max_backdate(), sim::Duration(0));
    if (max_backdate >= milliseconds(1)) {
      const int64_t back =
          sim::UniformInt(rng_, 0, max_backdate / milliseconds(1));
      op.timestamp = std::max(cluster::Timestamp{},
                              now_ms - std::chrono::milliseconds(back));
    }
  } else if (op.type == OpType::kAddToCell) {
    // Its cell timestamp is 0 (see Execute).
    op.set_idempotent(group_.workload.idempotent_adds());
  } else if (op.type == OpType::kAppend) {
    history.appends.push_back(Append{
        op.id, texts.Store(name_ + "/a" + std::to_string(appends_++)), Name()});
  } else if (IsDelete(op.type)) {
    op.timestamp = now_ms;
    if (op.type == OpType::kDeleteCells) {
      const v1::Workload& w = group_.workload;
      const sim::Duration range =
          OrDefault(w.delete_range(), w.has_delete_range(), seconds(1));
      op.set_delete_start(std::max(
          cluster::Timestamp{},
          now_ms -
              std::chrono::duration_cast<std::chrono::microseconds>(range)));
    }
  }
  const uint64_t index = op.id;
  history.operations.push_back(op);
  ++context_.in_flight;
  const uint32_t slot = NewAttempt();
  Attempt& attempt = attempts_[slot];
  attempt.op_index = index;
  attempt.loop_generation = loop_generation;
  attempt.deadline = now + group_.deadline;
  RunAttempt(slot);
}

uint32_t SimClient::NewAttempt() {
  uint32_t slot;
  if (free_attempts_.empty()) {
    slot = static_cast<uint32_t>(attempts_.size());
    attempts_.emplace_back();
  } else {
    slot = free_attempts_.back();
    free_attempts_.pop_back();
  }
  attempts_[slot] = Attempt{};
  attempts_[slot].done = false;
  return slot;
}

uint64_t SimClient::OldestOpenOperation() const {
  uint64_t oldest = std::numeric_limits<uint64_t>::max();
  for (const Attempt& a : attempts_) {
    if (!a.done) oldest = std::min(oldest, a.op_index);
  }
  std::vector<bool> free(messages_.size(), false);
  for (uint32_t m : free_messages_) free[m] = true;
  for (size_t m = 0; m < messages_.size(); ++m) {
    if (!free[m]) oldest = std::min(oldest, messages_[m].op_index);
  }
  return oldest;
}

uint32_t SimClient::NewMessage(uint32_t slot, uint32_t token, Name cluster) {
  uint32_t m;
  if (free_messages_.empty()) {
    messages_.emplace_back();
    m = static_cast<uint32_t>(messages_.size() - 1);
  } else {
    m = free_messages_.back();
    free_messages_.pop_back();
  }
  const Attempt& a = attempts_[slot];
  Message& message = messages_[m];
  message.attempt = slot;
  message.token = token;
  message.op_index = a.op_index;
  message.deadline = a.attempt_deadline;
  message.arrived = sim::Time::min();
  message.cluster = cluster;
  return m;
}

instance::RequestReport SimClient::ReportOf(const Message& message) const {
  const Operation& op = context_.history->operations[message.op_index];
  instance::RequestReport report;
  report.cluster = message.cluster_id;
  report.app_profile = op.profile();
  report.method = MethodOf(op.type);
  return report;
}

void SimClient::Reply(uint32_t slot, uint32_t token, Status status,
                      const Name* from) {
  Attempt& a = attempts_[slot];
  if (a.done || a.token != token) return;
  // After a latency-aware failover the operation follows the cluster it
  // was sent on to: the first cluster's answer is ignored (its write may
  // still commit).
  if (from != nullptr && *from != a.cluster) return;
  context_.scheduler->Cancel(a.timer);
  // The routing front end in the client's zone learns from what the
  // current attempt ended with: its reply, or its timeout (the client then
  // cancels it, and its reply never comes back).
  context_.instance->ObserveOutcome(group_.zone, a.cluster.view(),
                                    status.code());
  Finish(slot, std::move(status));
}

void SimClient::DeliverReply(uint32_t m) {
  Message& message = messages_[m];
  const uint32_t slot = message.attempt;
  const uint32_t token = message.token;
  const Name from = message.cluster;
  Status status = std::move(message.status);
  message.status = OkStatus();
  free_messages_.push_back(m);
  Reply(slot, token, std::move(status), from.view().empty() ? nullptr : &from);
}

void SimClient::FailOver(uint32_t slot, uint32_t token) {
  Attempt& a = attempts_[slot];
  if (a.done || a.token != token || a.failed_over) return;
  instance::Instance& instance = *context_.instance;
  Operation& op = context_.history->operations[a.op_index];
  auto next = instance.RouteAround(op.profile(), KindOf(op.type), op.row,
                                   group_.zone, a.cluster.view());
  if (!next.ok()) return;
  // The front end counts the unanswered attempt as a failure of its
  // cluster, and sends the request on (the first may still commit; its
  // answer no longer counts).
  instance.ObserveOutcome(group_.zone, a.cluster.view(),
                          StatusCode::kDeadlineExceeded);
  a.failed_over = true;
  ++a.attempts;
  Send(slot, token, std::move(*next));
}

void SimClient::RunAttempt(uint32_t slot) {
  sim::Scheduler& scheduler = *context_.scheduler;
  instance::Instance& instance = *context_.instance;
  const sim::Time now = scheduler.Now();
  Attempt& a = attempts_[slot];
  ++a.attempts;
  const uint32_t token = a.token = ++next_token_;
  const uint64_t op_index = a.op_index;
  sim::Time attempt_deadline = a.deadline;
  if (group_.attempt_timeout > sim::Duration(0)) {
    attempt_deadline = std::min(attempt_deadline, now + group_.attempt_timeout);
  }
  a.attempt_deadline = attempt_deadline;
  // Replies of this attempt count unless a newer one or the timeout came
  // first (Reply checks the token).
  a.timer = scheduler.RunAfter(attempt_deadline - now, [this, slot, token] {
    Reply(
        slot, token,
        Status(StatusCode::kDeadlineExceeded, "the attempt's deadline passed"));
  });

  Operation& op = context_.history->operations[op_index];
  auto routed =
      instance.Route(op.profile(), KindOf(op.type), op.row, group_.zone);
  if (!routed.ok() && group_.bypass_gating && IsTransaction(op.type) &&
      routed.status().code() == StatusCode::kFailedPrecondition) {
    // Demonstrations only: send the transaction where a read would go.
    routed = instance.Route(op.profile(), appprofile::RequestKind::kSingleRow,
                            op.row, group_.zone);
  }
  if (!routed.ok()) {
    a.cluster = Name();  // the front end answers itself
    const uint32_t m = NewMessage(slot, token, Name());
    Message& message = messages_[m];
    message.cluster_id.clear();
    const sim::LatencyModel local =
        instance.transport().LatencyOf(group_.zone, group_.zone);
    instance::RequestReport report = ReportOf(message);
    report.code = routed.status().code();
    report.refused = routed.status().code() == StatusCode::kFailedPrecondition;
    instance.ReportRequest(report);
    // The frontend in the client's zone answers.
    const sim::Duration rtt = local.Sample(rng_) + local.Sample(rng_);
    message.status = routed.status();
    scheduler.RunAfter(rtt, [this, m] { DeliverReply(m); });
    return;
  }
  a.failed_over = false;
  const double failover_after = instance.detector_options().failover_after;
  if (failover_after > 0) {
    const auto wait = sim::Duration(static_cast<int64_t>(
        failover_after *
        static_cast<double>((attempt_deadline - now).count())));
    scheduler.RunAfter(wait, [this, slot, token] { FailOver(slot, token); });
  }
  Send(slot, token, std::move(*routed));
}

void SimClient::Send(uint32_t slot, uint32_t token, std::string cluster_id) {
  Attempt& a = attempts_[slot];
  Operation& op = context_.history->operations[a.op_index];
  if (routed_name_ != cluster_id) {
    routed_name_ = context_.history->names->Intern(cluster_id);
  }
  op.cluster = routed_name_;
  a.cluster = routed_name_;
  if (context_.instance->faults().RequestLost(group_.zone, group_.name,
                                              cluster_id)) {
    return;  // the attempt times out
  }
  const uint32_t m = NewMessage(slot, token, routed_name_);
  Message& message = messages_[m];
  message.cluster_id = std::move(cluster_id);
  const sim::LatencyModel& link = LinkTo(message.cluster_id);
  const sim::Duration there = link.Sample(rng_);
  message.back = link.Sample(rng_);
  context_.scheduler->RunAfter(there, [this, m] { Arrive(m); });
}

const sim::LatencyModel& SimClient::LinkTo(const std::string& cluster_id) {
  instance::Instance& instance = *context_.instance;
  const uint64_t latency_version = instance.transport().latency_version();
  const uint64_t members_version = instance.replicas().members_version();
  if (!link_ || !SameBytes(link_cluster_, cluster_id) ||
      link_latency_version_ != latency_version ||
      link_members_version_ != members_version) {
    link_ = instance.transport().LatencyOf(group_.zone,
                                           context_.ZoneOf(cluster_id));
    link_cluster_ = cluster_id;
    link_latency_version_ = latency_version;
    link_members_version_ = members_version;
  }
  return *link_;
}

void SimClient::Finish(uint32_t slot, Status status) {
  sim::Scheduler& scheduler = *context_.scheduler;
  Attempt& a = attempts_[slot];
  Operation& op = context_.history->operations[a.op_index];
  const bool idempotent = !IsTransaction(op.type);
  if (!status.ok() && idempotent && Retryable(status.code()) &&
      a.attempts < group_.max_attempts) {
    // Backoff b = initial * multiplier^(attempts - 1), capped; jitter in
    // [b/2, b].
    double b = static_cast<double>(group_.initial_backoff.count()) *
               std::pow(group_.multiplier, a.attempts - 1);
    b = std::min(b, static_cast<double>(group_.max_backoff.count()));
    const auto half = static_cast<int64_t>(b / 2);
    const sim::Duration backoff(half + sim::UniformInt(rng_, 0, half));
    if (scheduler.Now() + backoff < a.deadline) {
      // A late reply of the last attempt is now ignored.
      const uint32_t token = a.token = ++next_token_;
      scheduler.RunAfter(backoff, [this, slot, token] {
        // Only this task continues the operation (no reply counts now).
        if (!attempts_[slot].done && attempts_[slot].token == token) {
          RunAttempt(slot);
        }
      });
      return;
    }
  }
  a.done = true;
  const uint64_t loop_generation = a.loop_generation;
  const int attempts = a.attempts;
  free_attempts_.push_back(slot);
  op.complete = context_.Elapsed();
  op.code = status.code();
  op.message = context_.history->names->Intern(status.message());
  op.attempts = static_cast<int16_t>(attempts);
  --context_.in_flight;

  sim::Fingerprint& trace = *context_.trace;
  trace.AddInt(static_cast<int64_t>(op.id));
  trace.Add(op.client());
  trace.Add(op.row);
  trace.AddInt(static_cast<int64_t>(op.type));
  trace.AddInt(op.invoke.count());
  trace.AddInt(op.complete.count());
  trace.AddInt(static_cast<int64_t>(op.code));
  trace.Add(op.cluster);
  trace.Add(context_.history->names->Text(op.read()));
  trace.AddInt(static_cast<int64_t>(op.version));
  trace.AddInt(op.counter());
  if (op.type == OpType::kAddToCell) trace.AddInt(op.applied());

  if (group_.workload.rate_case() == v1::Workload::kInFlight &&
      loop_generation == generation_ && active_) {
    const uint64_t generation = loop_generation;
    scheduler.RunAfter(sim::Duration(0),
                       [this, generation] { Issue(generation); });
  }
}

}  // namespace btsim::scenarios
