#include "api/bigtable_service.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/convert.h"
#include "api/raw_messages.h"
#include "api/read_rows_reactor.h"
#include "api/request_report.h"
#include "api/resource_names.h"
#include "api/served_faults.h"
#include "api/unsupported_target.h"
#include "cluster/limits.h"

namespace btsim::api {

namespace v2 = ::google::bigtable::v2;

namespace {

// Routes a request as Instance::Execute does and runs `op(cluster)` on the
// cluster that serves it, noting that cluster (or the refusal) in `report`
// (whose Send tells the routing front end the outcome). The cluster's
// faults may fail the request, or hold its answer (api/served_faults.h):
// a request not executed returns OK with a hold until the deadline.
template <typename Op>
Status Execute(instance::Instance& instance, RequestReporter& report,
               appprofile::RequestKind kind, std::string_view row_key,
               Op&& op) {
  auto routed = instance.Route(report.app_profile(), kind, row_key);
  if (!routed.ok()) {
    report.set_refused(kind == appprofile::RequestKind::kTransaction &&
                       routed.status().code() ==
                           StatusCode::kFailedPrecondition);
    return routed.status();
  }
  report.set_cluster(std::move(routed).value());
  BTSIM_ASSIGN_OR_RETURN(cluster::Cluster * cluster,
                         ReceiveServed(instance, report));
  if (cluster == nullptr) return OkStatus();  // held: no answer comes
  return op(*cluster);
}

// Charges served work to the node model of the cluster that did it (the
// report's cluster). The model is for metrics only (CPU load, hottest
// node): the response is not held back until the modelled completion time,
// so clients see the engine's real speed.
void Charge(instance::Instance& instance, const RequestReporter& report,
            std::string_view table, std::string_view row_key,
            cluster::OpKind kind) {
  instance.Charge(report.cluster(), table, row_key, kind);
}

// The handlers' work; each reports through `report` (see the public
// methods at the end of this file).

grpc::Status DoSampleRowKeys(
    InstanceRegistry& registry, const v2::SampleRowKeysRequest* request,
    grpc::ServerWriter<v2::SampleRowKeysResponse>* writer,
    std::chrono::system_clock::time_point deadline, HeldCalls& held,
    RequestReporter& report) {
  if (Status s = UnsupportedTarget(*request); !s.ok()) return ToGrpc(s);
  auto name = ParseTableName(request->table_name(), "table_name");
  if (!name.ok()) return ToGrpc(name.status());
  if (request->has_row_range()) {
    return ToGrpc(Unimplemented(
        "row_range: sampling part of a table is not supported by btsim"));
  }
  auto served = registry.GetOrCreate(name->instance);
  if (!served.ok()) return ToGrpc(served.status());
  report.Bind(**served);
  std::vector<cluster::KeySample> samples;
  {
    std::lock_guard<std::mutex> lock((*served)->mu);
    Status s = Execute(*(*served)->instance, report,
                       appprofile::RequestKind::kMultiRow, "",
                       [&](cluster::Cluster& c) {
                         auto table = c.GetTable(name->table_id);
                         if (!table.ok()) return table.status();
                         samples = (*table)->SampleRowKeys();
                         return OkStatus();
                       });
    if (!s.ok()) return ToGrpc(s);
  }
  if (report.hold().held()) {
    // A rare, synchronous RPC: its thread waits the fault out.
    bool hung = false;
    bool done = false;
    std::mutex mu;
    std::condition_variable released;
    held.Hold(report.hold(), deadline, [&](bool h) {
      std::lock_guard<std::mutex> lock(mu);
      hung = h;
      done = true;
      released.notify_one();
    });
    {
      std::unique_lock<std::mutex> lock(mu);
      released.wait(lock, [&] { return done; });
    }
    if (hung) return HeldStatus(true, grpc::Status::OK);
  }
  for (const cluster::KeySample& sample : samples) {
    v2::SampleRowKeysResponse response;
    response.set_row_key(sample.row_key);
    response.set_offset_bytes(sample.offset_bytes);
    if (!writer->Write(response)) break;
  }
  return grpc::Status::OK;
}

grpc::Status DoMutateRow(InstanceRegistry& registry,
                         const v2::MutateRowRequest* request,
                         RequestReporter& report) {
  if (Status s = UnsupportedTarget(*request); !s.ok()) return ToGrpc(s);
  auto name = ParseTableName(request->table_name(), "table_name");
  if (!name.ok()) return ToGrpc(name.status());
  auto mutations = MutationsFromProto(request->mutations(), "mutations");
  if (!mutations.ok()) return ToGrpc(mutations.status());
  auto served = registry.GetOrCreate(name->instance);
  if (!served.ok()) return ToGrpc(served.status());
  report.Bind(**served);
  std::lock_guard<std::mutex> lock((*served)->mu);
  instance::Instance& instance = *(*served)->instance;
  RequestReporter::RecordedRow* recorded = nullptr;
  if (report.Record(name->table_id)) {
    recorded = &report.AddRow(request->row_key());
    recorded->mutations = *mutations;
  }
  return ToGrpc(Execute(instance, report, appprofile::RequestKind::kSingleRow,
                        request->row_key(), [&](cluster::Cluster& c) {
                          const cluster::Version before = c.last_version();
                          Status s = c.MutateRow(
                              name->table_id, request->row_key(), *mutations,
                              IdempotencyFromProto(request->idempotency()));
                          if (s.ok()) {
                            Charge(instance, report, name->table_id,
                                   request->row_key(), cluster::OpKind::kWrite);
                            report.AddModifiedRows(1);
                            // A replay of a token this cluster has seen is
                            // acknowledged without a commit.
                            if (recorded && c.last_version() != before) {
                              report.Committed(c, *recorded);
                            }
                          }
                          return s;
                        }));
}

grpc::Status DoMutateRows(InstanceRegistry& registry,
                          const v2::MutateRowsRequest* request,
                          v2::MutateRowsResponse* response,
                          RequestReporter& report) {
  if (Status s = UnsupportedTarget(*request); !s.ok()) return ToGrpc(s);
  auto name = ParseTableName(request->table_name(), "table_name");
  if (!name.ok()) return ToGrpc(name.status());
  if (request->entries_size() == 0) {
    return ToGrpc(InvalidArgument("entries: at least one entry is required"));
  }
  // Entries that fail conversion get their own status; the rest go to the
  // engine together.
  std::vector<Status> statuses(request->entries_size());
  std::vector<cluster::RowMutations> rows;
  std::vector<int> row_index;
  // For a recorded call: the commit the engine made of `rows` (one version
  // for the batch).
  RequestReporter::RecordedRow commit;
  std::vector<bool> applied;  // per entry of `rows`, from the serving cluster
  int64_t total = 0;
  for (int i = 0; i < request->entries_size(); ++i) {
    const auto& entry = request->entries(i);
    total += entry.mutations_size();
    auto mutations = MutationsFromProto(entry.mutations(), [i] {
      return "entries[" + std::to_string(i) + "].mutations";
    });
    if (!mutations.ok()) {
      statuses[i] = mutations.status();
      continue;
    }
    rows.push_back(
        cluster::RowMutations{entry.row_key(), std::move(mutations).value(),
                              IdempotencyFromProto(entry.idempotency())});
    row_index.push_back(i);
  }
  if (total > cluster::kMaxMutationsPerRequest) {
    return ToGrpc(InvalidArgument(
        "entries: " + std::to_string(total) +
        " mutations in total; the limit is 100000 per request"));
  }
  auto served = registry.GetOrCreate(name->instance);
  if (!served.ok()) return ToGrpc(served.status());
  report.Bind(**served);
  {
    std::lock_guard<std::mutex> lock((*served)->mu);
    instance::Instance& instance = *(*served)->instance;
    const bool recording = report.Record(name->table_id);
    Status routed = Execute(
        instance, report, appprofile::RequestKind::kMultiRow, "",
        [&](cluster::Cluster& c) {
          if (rows.empty()) return c.GetTable(name->table_id).status();
          auto result = c.MutateRows(name->table_id, rows, &applied);
          if (!result.ok()) return result.status();
          std::vector<std::string_view> written;
          written.reserve(rows.size());
          for (size_t k = 0; k < rows.size(); ++k) {
            const Status& s = (*result)[k];
            if (s.ok()) written.push_back(rows[k].key);
            statuses[row_index[k]] =
                s.ok() ? s
                       : Status(s.code(), "entries[" +
                                              std::to_string(row_index[k]) +
                                              "]." + s.message());
          }
          instance.ChargeRows(report.cluster(), name->table_id, written,
                              cluster::OpKind::kWrite);
          report.AddModifiedRows(static_cast<int64_t>(written.size()));
          if (recording && std::find(applied.begin(), applied.end(), true) !=
                               applied.end()) {
            report.Committed(c, commit);
          }
          return OkStatus();
        });
    if (recording) {
      // Entries in order; `rows` holds the converted ones (row_index).
      size_t k = 0;
      for (int i = 0; i < request->entries_size(); ++i) {
        RequestReporter::RecordedRow& row =
            report.AddRow(request->entries(i).row_key());
        row.status = statuses[i];
        if (k < rows.size() && row_index[k] == i) {
          // A replay of a token the cluster has seen is acknowledged
          // without a commit.
          const bool committed =
              routed.ok() && k < applied.size() && applied[k];
          row.mutations = rows[k++].mutations;
          if (committed) {
            row.version = commit.version;
            row.log_position = commit.log_position;
          }
        }
      }
    }
    if (!routed.ok()) return ToGrpc(routed);
  }
  for (int i = 0; i < request->entries_size(); ++i) {
    auto* entry = response->add_entries();
    entry->set_index(i);
    entry->mutable_status()->set_code(static_cast<int>(statuses[i].code()));
    if (!statuses[i].ok()) {
      // google.rpc.Status.message is a string: UTF-8 only.
      entry->mutable_status()->set_message(ValidUtf8(statuses[i].message()));
    }
  }
  return grpc::Status::OK;
}

grpc::Status DoCheckAndMutateRow(InstanceRegistry& registry,
                                 const v2::CheckAndMutateRowRequest* request,
                                 v2::CheckAndMutateRowResponse* response,
                                 RequestReporter& report) {
  if (Status s = UnsupportedTarget(*request); !s.ok()) return ToGrpc(s);
  auto name = ParseTableName(request->table_name(), "table_name");
  if (!name.ok()) return ToGrpc(name.status());
  auto if_true =
      MutationsFromProto(request->true_mutations(), "true_mutations");
  if (!if_true.ok()) return ToGrpc(if_true.status());
  auto if_false =
      MutationsFromProto(request->false_mutations(), "false_mutations");
  if (!if_false.ok()) return ToGrpc(if_false.status());
  std::optional<cluster::Filter> predicate;
  if (request->has_predicate_filter()) {
    auto f = FilterFromProto(request->predicate_filter(), "predicate_filter");
    if (!f.ok()) return ToGrpc(f.status());
    predicate.emplace(std::move(f).value());
  }
  auto served = registry.GetOrCreate(name->instance);
  if (!served.ok()) return ToGrpc(served.status());
  report.Bind(**served);
  std::lock_guard<std::mutex> lock((*served)->mu);
  instance::Instance& instance = *(*served)->instance;
  RequestReporter::RecordedRow* recorded =
      report.Record(name->table_id) ? &report.AddRow(request->row_key())
                                    : nullptr;
  return ToGrpc(Execute(instance, report, appprofile::RequestKind::kTransaction,
                        request->row_key(), [&](cluster::Cluster& c) {
                          auto matched = c.CheckAndMutateRow(
                              name->table_id, request->row_key(),
                              predicate ? &*predicate : nullptr, *if_true,
                              *if_false);
                          if (!matched.ok()) return matched.status();
                          const auto& branch = *matched ? *if_true : *if_false;
                          if (recorded && !branch.empty()) {
                            recorded->mutations = branch;
                            report.Committed(c, *recorded);
                          }
                          Charge(instance, report, name->table_id,
                                 request->row_key(), cluster::OpKind::kWrite);
                          report.AddModifiedRows(1);
                          response->set_predicate_matched(*matched);
                          return OkStatus();
                        }));
}

grpc::Status DoPingAndWarm(InstanceRegistry& registry,
                           const v2::PingAndWarmRequest* request,
                           RequestReporter& report) {
  auto name = ParseInstanceName(request->name(), "name");
  if (!name.ok()) return ToGrpc(name.status());
  auto served = registry.GetOrCreate(*name);
  if (!served.ok()) return ToGrpc(served.status());
  report.Bind(**served);
  std::lock_guard<std::mutex> lock((*served)->mu);
  // Warming succeeds when the profile routes to a cluster that answers.
  auto routed = (*served)->instance->Route(
      request->app_profile_id(), appprofile::RequestKind::kMultiRow, "");
  if (!routed.ok()) return ToGrpc(routed.status());
  report.set_cluster(std::move(routed).value());
  return ToGrpc(ReceiveServed(*(*served)->instance, report).status());
}

grpc::Status DoReadModifyWriteRow(InstanceRegistry& registry,
                                  const v2::ReadModifyWriteRowRequest* request,
                                  v2::ReadModifyWriteRowResponse* response,
                                  RequestReporter& report) {
  if (Status s = UnsupportedTarget(*request); !s.ok()) return ToGrpc(s);
  auto name = ParseTableName(request->table_name(), "table_name");
  if (!name.ok()) return ToGrpc(name.status());
  auto rules = RulesFromProto(request->rules(), "rules");
  if (!rules.ok()) return ToGrpc(rules.status());
  auto served = registry.GetOrCreate(name->instance);
  if (!served.ok()) return ToGrpc(served.status());
  report.Bind(**served);
  std::vector<cluster::ModifiedCell> cells;
  {
    std::lock_guard<std::mutex> lock((*served)->mu);
    instance::Instance& instance = *(*served)->instance;
    RequestReporter::RecordedRow* recorded =
        report.Record(name->table_id) ? &report.AddRow(request->row_key())
                                      : nullptr;
    Status s = Execute(instance, report, appprofile::RequestKind::kTransaction,
                       request->row_key(), [&](cluster::Cluster& c) {
                         auto result = c.ReadModifyWriteRow(
                             name->table_id, request->row_key(), *rules);
                         if (!result.ok()) return result.status();
                         Charge(instance, report, name->table_id,
                                request->row_key(), cluster::OpKind::kWrite);
                         report.AddModifiedRows(1);
                         cells = std::move(result).value();
                         if (recorded) {
                           recorded->cells = cells;
                           report.Committed(c, *recorded);
                         }
                         return OkStatus();
                       });
    if (!s.ok()) return ToGrpc(s);
  }
  v2::Row* row = response->mutable_row();
  row->set_key(request->row_key());
  v2::Family* family = nullptr;
  for (const cluster::ModifiedCell& c : cells) {
    if (family == nullptr || family->name() != c.family) {
      family = row->add_families();
      family->set_name(c.family);
    }
    v2::Column* column = family->add_columns();
    column->set_qualifier(c.qualifier);
    v2::Cell* cell = column->add_cells();
    cell->set_timestamp_micros(cluster::Micros(c.timestamp));
    cell->set_value(c.value);
  }
  return grpc::Status::OK;
}

// Handles one request that has one response: parses `raw` onto an arena,
// does `work` (request, response, report) -> grpc::Status and serializes
// the response into `out`. The RPC is reported before this returns, so
// before the status goes out (a client that has its answer finds the RPC in
// the metrics), unless a fault holds the answer: then the reporter to
// release it with (ReleaseLater) comes back too.
template <typename Request, typename Response, typename Work>
std::pair<grpc::Status, std::shared_ptr<RequestReporter>> Handle(
    const grpc::ServerContextBase* context, std::string_view method,
    const grpc::ByteBuffer& raw, grpc::ByteBuffer* out, Work&& work) {
  google::protobuf::Arena arena;
  auto request = ParseRequest<Request>(raw, arena);
  if (!request.ok()) return {ToGrpc(request.status()), nullptr};
  auto* response = google::protobuf::Arena::CreateMessage<Response>(&arena);
  RequestReporter report(method, (*request)->app_profile_id(), context);
  grpc::Status status = report.Finish(work(**request, response, report));
  if (report.hold().held()) {
    if (status.ok()) status = SerializeResponse(*response, out);
    return {status, report.Detach()};
  }
  report.Send();
  if (status.ok()) status = SerializeResponse(*response, out);
  return {status, nullptr};
}

// Finishes `finish(status)` now, or once the fault holding it is over (the
// report then goes out just before).
template <typename Finish>
void FinishOrHold(std::pair<grpc::Status, std::shared_ptr<RequestReporter>> r,
                  std::chrono::system_clock::time_point deadline,
                  HeldCalls& held, Finish finish) {
  if (r.second == nullptr) {
    finish(std::move(r.first));
    return;
  }
  std::shared_ptr<RequestReporter> report = std::move(r.second);
  held.Hold(report->hold(), deadline,
            [report, status = std::move(r.first), finish](bool hung) {
              grpc::Status held = report->Finish(HeldStatus(hung, status));
              report->Send();
              finish(std::move(held));
            });
}

template <typename Request, typename Response, typename Work>
grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* context,
                                HeldCalls& held, std::string_view method,
                                const grpc::ByteBuffer& raw,
                                grpc::ByteBuffer* out, Work&& work) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  FinishOrHold(Handle<Request, Response>(context, method, raw, out,
                                         std::forward<Work>(work)),
               context->deadline(), held, [reactor](grpc::Status status) {
                 reactor->Finish(std::move(status));
               });
  return reactor;
}

// MutateRows answers with one message: the status of every entry.
class MutateRowsReactor final
    : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  MutateRowsReactor(InstanceRegistry& registry,
                    const grpc::CallbackServerContext* context,
                    const grpc::ByteBuffer& raw, HeldCalls& held) {
    FinishOrHold(Handle<v2::MutateRowsRequest, v2::MutateRowsResponse>(
                     context, "MutateRows", raw, &out_,
                     [&](const v2::MutateRowsRequest& r,
                         v2::MutateRowsResponse* out, RequestReporter& report) {
                       return DoMutateRows(registry, &r, out, report);
                     }),
                 context->deadline(), held, [this](grpc::Status status) {
                   if (status.ok()) {
                     StartWriteAndFinish(&out_, grpc::WriteOptions(), status);
                   } else {
                     Finish(std::move(status));
                   }
                 });
  }
  void OnDone() override { delete this; }

 private:
  grpc::ByteBuffer out_;
};

}  // namespace

// Each RPC is reported to its instance once, when its reporter goes out of
// scope (after the work has released the instance lock) or, for ReadRows,
// when the stream ends.

grpc::ServerWriteReactor<grpc::ByteBuffer>* BigtableService::ReadRows(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  return new ReadRowsReactor(registry_, context, *request, held_);
}

grpc::Status BigtableService::SampleRowKeys(
    grpc::ServerContext* context, const v2::SampleRowKeysRequest* request,
    grpc::ServerWriter<v2::SampleRowKeysResponse>* writer) {
  RequestReporter report("SampleRowKeys", request->app_profile_id());
  return report.Finish(DoSampleRowKeys(registry_, request, writer,
                                       context->deadline(), held_, report));
}

grpc::ServerUnaryReactor* BigtableService::MutateRow(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return Unary<v2::MutateRowRequest, v2::MutateRowResponse>(
      context, held_, "MutateRow", *request, response,
      [&](const v2::MutateRowRequest& r, v2::MutateRowResponse*,
          RequestReporter& report) {
        return DoMutateRow(registry_, &r, report);
      });
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* BigtableService::MutateRows(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  return new MutateRowsReactor(registry_, context, *request, held_);
}

grpc::ServerUnaryReactor* BigtableService::CheckAndMutateRow(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return Unary<v2::CheckAndMutateRowRequest, v2::CheckAndMutateRowResponse>(
      context, held_, "CheckAndMutateRow", *request, response,
      [&](const v2::CheckAndMutateRowRequest& r,
          v2::CheckAndMutateRowResponse* out, RequestReporter& report) {
        return DoCheckAndMutateRow(registry_, &r, out, report);
      });
}

grpc::ServerUnaryReactor* BigtableService::PingAndWarm(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return Unary<v2::PingAndWarmRequest, v2::PingAndWarmResponse>(
      context, held_, "PingAndWarm", *request, response,
      [&](const v2::PingAndWarmRequest& r, v2::PingAndWarmResponse*,
          RequestReporter& report) {
        return DoPingAndWarm(registry_, &r, report);
      });
}

grpc::ServerUnaryReactor* BigtableService::ReadModifyWriteRow(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return Unary<v2::ReadModifyWriteRowRequest, v2::ReadModifyWriteRowResponse>(
      context, held_, "ReadModifyWriteRow", *request, response,
      [&](const v2::ReadModifyWriteRowRequest& r,
          v2::ReadModifyWriteRowResponse* out, RequestReporter& report) {
        return DoReadModifyWriteRow(registry_, &r, out, report);
      });
}

}  // namespace btsim::api
