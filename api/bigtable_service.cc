#include "api/bigtable_service.h"

#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/convert.h"
#include "api/request_report.h"
#include "api/resource_names.h"
#include "api/row_chunker.h"
#include "cluster/limits.h"

namespace btsim::api {

namespace v2 = ::google::bigtable::v2;

namespace {

// Rows are read under the instance lock in batches of about this many bytes.
constexpr size_t kBatchBytes = 1 << 20;
constexpr size_t kResponseBytes = 1 << 20;
constexpr size_t kChunkValueBytes = 1 << 20;

// Requests may target an authorized or materialized view instead of a
// table; btsim serves tables only. Checked before table_name, which is empty
// when a client targets a view.
template <typename Request>
Status UnsupportedTarget(const Request& request) {
  if (!request.authorized_view_name().empty()) {
    return Unimplemented(
        "authorized_view_name: authorized views are not supported by btsim");
  }
  if constexpr (requires { request.materialized_view_name(); }) {
    if (!request.materialized_view_name().empty()) {
      return Unimplemented(
          "materialized_view_name: materialized views are not supported by "
          "btsim");
    }
  }
  return OkStatus();
}

// Routes a request as Instance::Execute does and runs `op(cluster)` on the
// cluster that serves it, noting that cluster (or the refusal) in `report`.
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
                         instance.ClusterIfUp(report.cluster()));
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

grpc::Status DoReadRows(InstanceRegistry& registry,
                        grpc::ServerContext* context,
                        const v2::ReadRowsRequest* request,
                        grpc::ServerWriter<v2::ReadRowsResponse>* writer,
                        RequestReporter& report) {
  if (Status s = UnsupportedTarget(*request); !s.ok()) return ToGrpc(s);
  auto name = ParseTableName(request->table_name(), "table_name");
  if (!name.ok()) return ToGrpc(name.status());
  if (request->rows_limit() < 0) {
    return ToGrpc(InvalidArgument("rows_limit: must not be negative, got " +
                                  std::to_string(request->rows_limit())));
  }
  auto rows = RowSetFromProto(request->rows(), "rows");
  if (!rows.ok()) return ToGrpc(rows.status());
  std::optional<cluster::Filter> filter;
  if (request->has_filter()) {
    auto f = FilterFromProto(request->filter(), "filter");
    if (!f.ok()) return ToGrpc(f.status());
    filter.emplace(std::move(f).value());
  }
  auto served = registry.GetOrCreate(name->instance);
  if (!served.ok()) return ToGrpc(served.status());
  ServedInstance& instance = **served;
  report.Bind(instance);
  // The cluster is chosen once; a stream that loses it mid-way fails with
  // UNAVAILABLE rather than mixing clusters.
  const bool single_row = request->rows().row_keys_size() == 1 &&
                          request->rows().row_ranges_size() == 0;
  {
    std::lock_guard<std::mutex> lock(instance.mu);
    auto routed = instance.instance->Route(
        request->app_profile_id(),
        single_row ? appprofile::RequestKind::kSingleRow
                   : appprofile::RequestKind::kMultiRow,
        single_row ? request->rows().row_keys(0) : "");
    if (!routed.ok()) return ToGrpc(routed.status());
    report.set_cluster(std::move(routed).value());
  }
  const std::string& cluster_id = report.cluster();

  cluster::ReadOptions options;
  options.rows = &*rows;
  options.filter = filter ? &*filter : nullptr;
  options.reversed = request->reversed();
  int64_t remaining = request->rows_limit() > 0 ? request->rows_limit() : -1;
  RowChunker chunker(kResponseBytes, kChunkValueBytes);
  while (true) {
    bool batch_full = false;
    int64_t batch_rows = 0;
    std::string last_key;
    {
      std::lock_guard<std::mutex> lock(instance.mu);
      auto cluster = instance.instance->ClusterIfUp(cluster_id);
      if (!cluster.ok()) {
        // The cluster went down or away mid-stream: a retryable error.
        return ToGrpc(Unavailable("cluster '" + cluster_id +
                                  "' serving this read became unavailable: " +
                                  cluster.status().message()));
      }
      Status s = (*cluster)->ReadRows(
          name->table_id, options,
          [&](std::string_view key, std::span<const cluster::CellView> cells) {
            chunker.AddRow(key, cells);
            ++batch_rows;
            last_key.assign(key);
            instance.instance->Charge(cluster_id, name->table_id, key,
                                      cluster::OpKind::kRead);
            if (remaining > 0 && --remaining == 0) return false;
            if (chunker.buffered_bytes() >= kBatchBytes) {
              batch_full = true;
              return false;
            }
            return true;
          });
      if (!s.ok()) return ToGrpc(s);
    }
    for (v2::ReadRowsResponse& response : chunker.Take()) {
      if (context->IsCancelled()) {
        return grpc::Status(grpc::StatusCode::CANCELLED, "client cancelled");
      }
      if (!writer->Write(response)) {
        return grpc::Status(grpc::StatusCode::CANCELLED,
                            "the client stopped reading");
      }
    }
    report.AddReturnedRows(batch_rows);
    if (!batch_full) break;
    options.resume_after = std::move(last_key);
  }
  return grpc::Status::OK;
}

grpc::Status DoSampleRowKeys(
    InstanceRegistry& registry, const v2::SampleRowKeysRequest* request,
    grpc::ServerWriter<v2::SampleRowKeysResponse>* writer,
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
  return ToGrpc(Execute(instance, report, appprofile::RequestKind::kSingleRow,
                        request->row_key(), [&](cluster::Cluster& c) {
                          Status s = c.MutateRow(
                              name->table_id, request->row_key(), *mutations);
                          if (s.ok()) {
                            Charge(instance, report, name->table_id,
                                   request->row_key(), cluster::OpKind::kWrite);
                            report.AddModifiedRows(1);
                          }
                          return s;
                        }));
}

grpc::Status DoMutateRows(InstanceRegistry& registry,
                          const v2::MutateRowsRequest* request,
                          grpc::ServerWriter<v2::MutateRowsResponse>* writer,
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
  int64_t total = 0;
  for (int i = 0; i < request->entries_size(); ++i) {
    const auto& entry = request->entries(i);
    total += entry.mutations_size();
    auto mutations = MutationsFromProto(
        entry.mutations(), "entries[" + std::to_string(i) + "].mutations");
    if (!mutations.ok()) {
      statuses[i] = mutations.status();
      continue;
    }
    rows.push_back(
        cluster::RowMutations{entry.row_key(), std::move(mutations).value()});
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
    Status routed = Execute(
        instance, report, appprofile::RequestKind::kMultiRow, "",
        [&](cluster::Cluster& c) {
          if (rows.empty()) return c.GetTable(name->table_id).status();
          auto result = c.MutateRows(name->table_id, rows);
          if (!result.ok()) return result.status();
          for (size_t k = 0; k < rows.size(); ++k) {
            const Status& s = (*result)[k];
            if (s.ok()) {
              Charge(instance, report, name->table_id, rows[k].key,
                     cluster::OpKind::kWrite);
              report.AddModifiedRows(1);
            }
            statuses[row_index[k]] =
                s.ok() ? s
                       : Status(s.code(), "entries[" +
                                              std::to_string(row_index[k]) +
                                              "]." + s.message());
          }
          return OkStatus();
        });
    if (!routed.ok()) return ToGrpc(routed);
  }
  v2::MutateRowsResponse response;
  for (int i = 0; i < request->entries_size(); ++i) {
    auto* entry = response.add_entries();
    entry->set_index(i);
    entry->mutable_status()->set_code(static_cast<int>(statuses[i].code()));
    if (!statuses[i].ok()) {
      entry->mutable_status()->set_message(statuses[i].message());
    }
  }
  writer->Write(response);
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
  return ToGrpc(Execute(instance, report, appprofile::RequestKind::kTransaction,
                        request->row_key(), [&](cluster::Cluster& c) {
                          auto matched = c.CheckAndMutateRow(
                              name->table_id, request->row_key(),
                              predicate ? &*predicate : nullptr, *if_true,
                              *if_false);
                          if (!matched.ok()) return matched.status();
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
  // Warming succeeds when the profile can route somewhere.
  auto routed = (*served)->instance->Route(
      request->app_profile_id(), appprofile::RequestKind::kMultiRow, "");
  if (!routed.ok()) return ToGrpc(routed.status());
  report.set_cluster(std::move(routed).value());
  return grpc::Status::OK;
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
    Status s = Execute(instance, report, appprofile::RequestKind::kTransaction,
                       request->row_key(), [&](cluster::Cluster& c) {
                         auto result = c.ReadModifyWriteRow(
                             name->table_id, request->row_key(), *rules);
                         if (!result.ok()) return result.status();
                         Charge(instance, report, name->table_id,
                                request->row_key(), cluster::OpKind::kWrite);
                         report.AddModifiedRows(1);
                         cells = std::move(result).value();
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
    cell->set_timestamp_micros(c.timestamp_micros);
    cell->set_value(c.value);
  }
  return grpc::Status::OK;
}

}  // namespace

// Each RPC is reported to its instance once, when its reporter goes out of
// scope (after the work has released the instance lock).

grpc::Status BigtableService::ReadRows(
    grpc::ServerContext* context, const v2::ReadRowsRequest* request,
    grpc::ServerWriter<v2::ReadRowsResponse>* writer) {
  RequestReporter report("ReadRows", request->app_profile_id());
  return report.Finish(DoReadRows(registry_, context, request, writer, report));
}

grpc::Status BigtableService::SampleRowKeys(
    grpc::ServerContext*, const v2::SampleRowKeysRequest* request,
    grpc::ServerWriter<v2::SampleRowKeysResponse>* writer) {
  RequestReporter report("SampleRowKeys", request->app_profile_id());
  return report.Finish(DoSampleRowKeys(registry_, request, writer, report));
}

grpc::Status BigtableService::MutateRow(grpc::ServerContext*,
                                        const v2::MutateRowRequest* request,
                                        v2::MutateRowResponse*) {
  RequestReporter report("MutateRow", request->app_profile_id());
  return report.Finish(DoMutateRow(registry_, request, report));
}

grpc::Status BigtableService::MutateRows(
    grpc::ServerContext*, const v2::MutateRowsRequest* request,
    grpc::ServerWriter<v2::MutateRowsResponse>* writer) {
  RequestReporter report("MutateRows", request->app_profile_id());
  return report.Finish(DoMutateRows(registry_, request, writer, report));
}

grpc::Status BigtableService::CheckAndMutateRow(
    grpc::ServerContext*, const v2::CheckAndMutateRowRequest* request,
    v2::CheckAndMutateRowResponse* response) {
  RequestReporter report("CheckAndMutateRow", request->app_profile_id());
  return report.Finish(
      DoCheckAndMutateRow(registry_, request, response, report));
}

grpc::Status BigtableService::PingAndWarm(grpc::ServerContext*,
                                          const v2::PingAndWarmRequest* request,
                                          v2::PingAndWarmResponse*) {
  RequestReporter report("PingAndWarm", request->app_profile_id());
  return report.Finish(DoPingAndWarm(registry_, request, report));
}

grpc::Status BigtableService::ReadModifyWriteRow(
    grpc::ServerContext*, const v2::ReadModifyWriteRowRequest* request,
    v2::ReadModifyWriteRowResponse* response) {
  RequestReporter report("ReadModifyWriteRow", request->app_profile_id());
  return report.Finish(
      DoReadModifyWriteRow(registry_, request, response, report));
}

}  // namespace btsim::api
