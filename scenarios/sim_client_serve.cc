// SimClient's calls as the serving cluster sees them: arrival at the
// cluster (refused by a fault, or by a full node), admission to its node's
// queue, and execution against the cluster's storage engine (sim_client.h).
#include <algorithm>
#include <utility>

#include "base/bytes.h"
#include "base/check.h"
#include "cluster/aggregate.h"
#include "cluster/filter.h"
#include "cluster/row_set.h"
#include "scenarios/row_reader.h"
#include "scenarios/sim_client.h"

namespace btsim::scenarios {
namespace {

constexpr int kDefaultScanRows = 10;

}  // namespace

void SimClient::Arrive(uint32_t m) {
  sim::Scheduler& scheduler = *context_.scheduler;
  instance::Instance& instance = *context_.instance;
  Message& message = messages_[m];
  instance::RequestReport report = ReportOf(message);
  instance::Instance::Reception reception =
      instance.Receive(message.cluster_id, report.method, rng_);
  using Kind = instance::Instance::Reception::Kind;
  if (reception.kind == Kind::kLost) {
    free_messages_.push_back(m);  // black-holed: the attempt times out
    return;
  }
  if (reception.kind == Kind::kFailed) {
    Answer(m, report, std::move(reception.status), scheduler.Now());
    return;
  }
  if (reception.added > sim::Duration(0)) {
    // The added latency is the server's: it counts from the arrival.
    messages_[m].arrived = scheduler.Now();
    scheduler.RunAfter(reception.added, [this, m] { Admit(m); });
    return;
  }
  Admit(m);
}

void SimClient::Admit(uint32_t m) {
  sim::Scheduler& scheduler = *context_.scheduler;
  instance::Instance& instance = *context_.instance;
  Message& message = messages_[m];
  const Operation& op = context_.history->operations[message.op_index];
  instance::RequestReport report = ReportOf(message);
  const bool reads = op.type == OpType::kReadRow || op.type == OpType::kScan;
  const cluster::NodeModel::Admission admission =
      instance.Admit(message.cluster_id, op.table(), op.row,
                     reads ? cluster::OpKind::kRead : cluster::OpKind::kWrite,
                     1, message.deadline);
  using Outcome = cluster::NodeModel::Admission::Outcome;
  switch (admission.outcome) {
    case Outcome::kQueueFull:
      Answer(m, report,
             Unavailable("cluster '" + message.cluster_id +
                         "' is overloaded: the queue of the node serving "
                         "the row is full"),
             scheduler.Now());
      return;
    case Outcome::kExpired:
      // Dropped unexecuted when its turn comes; the client times out.
      report.code = StatusCode::kDeadlineExceeded;
      instance.ReportRequest(report);
      free_messages_.push_back(m);
      return;
    case Outcome::kServed:
      break;
  }
  if (message.arrived == sim::Time::min()) message.arrived = scheduler.Now();
  message.done = admission.done;
  scheduler.RunAfter(admission.start - scheduler.Now(),
                     [this, m] { Serve(m); });
}

void SimClient::Serve(uint32_t m) {
  sim::Scheduler& scheduler = *context_.scheduler;
  const std::string& cluster_id = messages_[m].cluster_id;
  Operation& op = context_.history->operations[messages_[m].op_index];
  instance::RequestReport report = ReportOf(messages_[m]);
  // Down (or gone) since the request arrived?
  instance::Instance::Reception reached = context_.instance->Reach(cluster_id);
  using Kind = instance::Instance::Reception::Kind;
  if (reached.kind == Kind::kLost) {
    free_messages_.push_back(m);  // no answer: the attempt times out
    return;
  }
  if (reached.kind == Kind::kFailed) {
    Answer(m, report, std::move(reached.status), scheduler.Now());
    return;
  }
  cluster::Cluster* cluster = reached.cluster;
  // The cluster executes every attempt its node serves, but only the
  // operation's current attempt may record what it returned: the client
  // has given up on the others (timed out or superseded), and so has
  // finished operations. Their writes still commit.
  const Attempt& attempt = attempts_[messages_[m].attempt];
  const bool current = !attempt.done && attempt.token == messages_[m].token &&
                       attempt.cluster == messages_[m].cluster;
  Operation abandoned;
  Operation& result = current ? op : (abandoned = op);
  sim::Time done = messages_[m].done;
  Status status = Execute(*cluster, cluster_id, op, result, &done);
  if (status.ok()) {
    if (op.type == OpType::kReadRow) {
      report.returned_rows = result.read().empty() ? 0 : 1;
    } else if (op.type == OpType::kScan) {
      report.returned_rows = result.rows();
    } else {
      report.modified_rows = 1;
    }
  }
  Answer(m, report, std::move(status), done);
}

void SimClient::Answer(uint32_t m, instance::RequestReport& report,
                       Status status, sim::Time leaves) {
  sim::Scheduler& scheduler = *context_.scheduler;
  Message& message = messages_[m];
  // Reported when it executes (or is refused), with the time from its
  // arrival to its reply.
  report.code = status.code();
  report.latency = message.arrived > sim::Time::min()
                       ? leaves - message.arrived
                       : leaves - scheduler.Now();
  context_.instance->ReportRequest(report);
  if (context_.instance->faults().ReplyLost(group_.zone, group_.name,
                                            message.cluster_id)) {
    free_messages_.push_back(m);  // the attempt times out
    return;
  }
  message.status = std::move(status);
  scheduler.RunAfter(leaves - scheduler.Now() + message.back,
                     [this, m] { DeliverReply(m); });
}

Status SimClient::Execute(cluster::Cluster& cluster,
                          std::string_view cluster_id, Operation& op,
                          Operation& result, sim::Time* done) {
  instance::Instance& instance = *context_.instance;
  const std::string& family = group_.family;
  auto charge = [&](cluster::OpKind kind, int64_t units) {
    *done = std::max(
        *done, instance.Charge(cluster_id, op.table(), op.row, kind, units));
  };
  // Requests were charged at admission; only a scan's bytes remain.
  switch (op.type) {
    case OpType::kReadRow: {
      cluster::RowSet rows;
      rows.AddKey(op.row.str());
      result.set_read(Tag());
      Status s = ReadRowStates(
          cluster, op.table(), family, &rows,
          [&](std::string_view, const RowRead& row) {
            result.set_read(context_.history->names->MakeTag(row.tag));
            return true;
          });
      return s;
    }
    case OpType::kScan: {
      cluster::RowSet rows;
      rows.AddRange(cluster::Interval{cluster::Bound::Closed(op.row.str()),
                                      cluster::Bound::Unbounded()});
      const auto newest_only = cluster::Filter::CellsPerColumnLimit(1);
      cluster::ReadOptions options;
      options.rows = &rows;
      options.filter = &*newest_only;
      const int limit = group_.workload.scan_rows() == 0
                            ? kDefaultScanRows
                            : group_.workload.scan_rows();
      int64_t count = 0;
      int64_t bytes = 0;
      Status s = cluster.ReadRows(
          op.table(), options,
          [&](std::string_view key, std::span<const cluster::CellView> cells) {
            bytes += static_cast<int64_t>(key.size());
            for (const cluster::CellView& cell : cells) {
              bytes += static_cast<int64_t>(cell.value.size());
            }
            return ++count < limit;
          });
      result.set_rows(count);
      charge(cluster::OpKind::kScanBytes, bytes);
      return s;
    }
    case OpType::kWrite: {
      cluster::Mutation set = ValueWrite(op);
      Status s = cluster.MutateRow(op.table(), op.row, {&set, 1});
      KeepValueBuffer(set);
      if (s.ok()) Committed(cluster_id, cluster, op);
      return s;
    }
    case OpType::kCheckAndMutate: {
      auto column =
          cluster::Filter::ColumnQualifierRegex(std::string(kValueColumn));
      std::vector<cluster::Filter> chain;
      chain.push_back(std::move(*column));
      auto newest_only = cluster::Filter::CellsPerColumnLimit(1);
      chain.push_back(std::move(*newest_only));
      const cluster::Filter predicate =
          cluster::Filter::Chain(std::move(chain));
      cluster::Mutation set = ValueWrite(op);
      auto matched = cluster.CheckAndMutateRow(op.table(), op.row, &predicate,
                                               {&set, 1}, {&set, 1});
      KeepValueBuffer(set);
      if (matched.ok()) Committed(cluster_id, cluster, op);
      return matched.status();
    }
    case OpType::kReadModifyWrite: {
      cluster::ReadModifyWriteRule rule;
      rule.family = family;
      rule.qualifier = std::string(kCounterColumn);
      rule.kind = cluster::ReadModifyWriteRule::Kind::kIncrement;
      rule.increment_amount = 1;
      auto cells = cluster.ReadModifyWriteRow(op.table(), op.row, {&rule, 1});
      if (!cells.ok()) return cells.status();
      for (const cluster::ModifiedCell& cell : *cells) {
        result.set_counter(DecodeCounter(cell.value));
      }
      Committed(cluster_id, cluster, op);
      return OkStatus();
    }
    case OpType::kDeleteRow:
    case OpType::kDeleteFamily:
    case OpType::kDeleteCells: {
      cluster::Mutation del;
      if (op.type == OpType::kDeleteRow) {
        del = cluster::DeleteFromRow{};
      } else if (op.type == OpType::kDeleteFamily) {
        del = cluster::DeleteFromFamily{family};
      } else {
        // [start, end): the end is one microsecond past the last deleted.
        del = cluster::DeleteFromColumn{
            family, std::string(kValueColumn), op.delete_start(),
            op.timestamp + std::chrono::microseconds(1)};
      }
      Status s = cluster.MutateRow(op.table(), op.row, {&del, 1});
      if (s.ok()) Committed(cluster_id, cluster, op);
      return s;
    }
    case OpType::kAddToCell: {
      // At timestamp 0 (op.timestamp), so that the row's counter is one
      // cell holding the number of increments applied.
      cluster::Mutation add =
          cluster::AddToCell{group_.add_family, std::string(kCounterColumn),
                             op.timestamp, cluster::EncodeInt64(1)};
      cluster::Idempotency idempotency;
      if (op.idempotent()) {
        // Unique in the run, and the same for every attempt.
        idempotency.token = "btsim-add/" + std::to_string(op.id);
        // When the first attempt was sent, on the client's clock.
        idempotency.start_time = cluster::TruncateToMillis(cluster::TimestampOf(
            context_.history->start + op.invoke + group_.clock_offset));
      }
      const uint64_t before = cluster.last_version();
      Status s = cluster.MutateRow(op.table(), op.row, {&add, 1}, idempotency);
      // A replay the token identified commits nothing.
      if (s.ok() && cluster.last_version() != before) {
        op.set_applied(op.applied() + 1);
        Committed(cluster_id, cluster, op);
      }
      return s;
    }
    case OpType::kAppend: {
      cluster::ReadModifyWriteRule rule;
      rule.family = family;
      rule.qualifier = std::string(kLogColumn);
      rule.kind = cluster::ReadModifyWriteRule::Kind::kAppend;
      Append* append = FindAppend(*context_.history, op.id);
      BTSIM_CHECK(append != nullptr);
      rule.append_value = std::string(append->token) + kAppendSeparator;
      auto cells = cluster.ReadModifyWriteRow(op.table(), op.row, {&rule, 1});
      if (!cells.ok()) return cells.status();
      Committed(cluster_id, cluster, op);
      // A list past kMaxAppendList is not kept (the history would grow
      // with the square of a hot row's appends).
      if (!cells->empty() && cells->front().value.size() <= kMaxAppendList) {
        append->list = context_.history->names->Store(cells->front().value);
      }
      return OkStatus();
    }
  }
  return Internal("unknown operation");
}

void SimClient::Committed(std::string_view cluster_id,
                          const cluster::Cluster& cluster, Operation& op) {
  op.version = cluster.last_version();
  op.committed = context_.Elapsed();
  op.log_position = context_.instance->replicas().LogPosition(cluster_id);
}

}  // namespace btsim::scenarios
