#include "api/read_rows_reactor.h"

#include <mutex>
#include <string>
#include <utility>

#include "api/convert.h"
#include "api/raw_messages.h"
#include "api/served_faults.h"
#include "api/unsupported_target.h"

namespace btsim::api {

namespace v2 = ::google::bigtable::v2;

namespace {

// Rows are read under the instance lock in batches of about this many bytes,
// examining at most this many stored rows (a filter may drop them all).
constexpr size_t kBatchBytes = 1 << 20;
constexpr int64_t kBatchRowsExamined = 4096;
constexpr size_t kResponseBytes = 1 << 20;
constexpr size_t kChunkValueBytes = 1 << 20;

}  // namespace

ReadRowsReactor::ReadRowsReactor(InstanceRegistry& registry,
                                 const grpc::CallbackServerContext* context,
                                 const grpc::ByteBuffer& raw, HeldCalls& held)
    : chunker_(kResponseBytes, kChunkValueBytes) {
  if (Status parsed = ParseRaw(raw, &request_); !parsed.ok()) {
    Finish(ToGrpc(parsed));
    return;
  }
  report_.emplace("ReadRows", request_.app_profile_id(), context);
  grpc::Status status = Start(registry);
  if (!status.ok()) {
    End(std::move(status));
    return;
  }
  if (report_->hold().held()) {
    held.Hold(report_->hold(), context->deadline(), [this](bool hung) {
      if (hung) {
        End(HeldStatus(true, grpc::Status::OK));
      } else {
        WriteNext();
      }
    });
    return;
  }
  WriteNext();
}

grpc::Status ReadRowsReactor::Start(InstanceRegistry& registry) {
  if (Status s = UnsupportedTarget(request_); !s.ok()) return ToGrpc(s);
  auto name = ParseTableName(request_.table_name(), "table_name");
  if (!name.ok()) return ToGrpc(name.status());
  name_ = std::move(name).value();
  if (request_.rows_limit() < 0) {
    return ToGrpc(InvalidArgument("rows_limit: must not be negative, got " +
                                  std::to_string(request_.rows_limit())));
  }
  auto rows = RowSetFromProto(request_.rows(), "rows");
  if (!rows.ok()) return ToGrpc(rows.status());
  rows_ = std::move(rows).value();
  if (request_.has_filter()) {
    auto f = FilterFromProto(request_.filter(), "filter");
    if (!f.ok()) return ToGrpc(f.status());
    filter_.emplace(std::move(f).value());
  }
  auto served = registry.GetOrCreate(name_.instance);
  if (!served.ok()) return ToGrpc(served.status());
  instance_ = *served;
  report_->Bind(*instance_);
  const bool single_row = request_.rows().row_keys_size() == 1 &&
                          request_.rows().row_ranges_size() == 0;
  {
    std::lock_guard<std::mutex> lock(instance_->mu);
    if (report_->Record(name_.table_id) && single_row) {
      report_->set_point_read(request_.has_filter());
      point_row_ = &report_->AddRow(request_.rows().row_keys(0));
    }
    auto routed = instance_->instance->Route(
        request_.app_profile_id(),
        single_row ? appprofile::RequestKind::kSingleRow
                   : appprofile::RequestKind::kMultiRow,
        single_row ? request_.rows().row_keys(0) : "");
    if (!routed.ok()) return ToGrpc(routed.status());
    report_->set_cluster(std::move(routed).value());
    auto received = ReceiveServed(*instance_->instance, *report_);
    if (!received.ok()) return ToGrpc(received.status());
  }
  options_.rows = &rows_;
  options_.filter = filter_ ? &*filter_ : nullptr;
  options_.reversed = request_.reversed();
  options_.max_rows_examined = kBatchRowsExamined;
  options_.stopped_at = &stopped_at_;
  remaining_ = request_.rows_limit() > 0 ? request_.rows_limit() : -1;
  return grpc::Status::OK;
}

grpc::Status ReadRowsReactor::ReadBatch() {
  const std::string& cluster_id = report_->cluster();
  bool batch_full = false;
  int64_t batch_rows = 0;
  std::string last_key;
  {
    std::lock_guard<std::mutex> lock(instance_->mu);
    auto cluster = instance_->instance->ClusterIfUp(cluster_id);
    if (!cluster.ok()) {
      // The cluster went down or away mid-stream: a retryable error.
      return ToGrpc(Unavailable("cluster '" + cluster_id +
                                "' serving this read became unavailable: " +
                                cluster.status().message()));
    }
    Status s = (*cluster)->ReadRows(
        name_.table_id, options_,
        [&](std::string_view key, std::span<const cluster::CellView> cells) {
          chunker_.AddRow(key, cells);
          if (point_row_ != nullptr) {
            for (const cluster::CellView& cell : cells) {
              point_row_->cells.push_back(cluster::ModifiedCell{
                  std::string(cell.family), std::string(cell.qualifier),
                  cell.timestamp, std::string(cell.value)});
            }
          }
          ++batch_rows;
          last_key.assign(key);
          instance_->instance->Charge(cluster_id, name_.table_id, key,
                                      cluster::OpKind::kRead);
          if (remaining_ > 0 && --remaining_ == 0) return false;
          if (chunker_.buffered_bytes() >= kBatchBytes) {
            batch_full = true;
            return false;
          }
          return true;
        });
    if (!s.ok()) return ToGrpc(s);
  }
  report_->AddReturnedRows(batch_rows);
  pending_ = chunker_.Take();
  next_ = 0;
  more_ = batch_full || stopped_at_.has_value();
  if (batch_full) {
    options_.resume_after = std::move(last_key);
  } else if (stopped_at_) {
    options_.resume_after = *stopped_at_;
    // The batch examined its share of rows and returned none: say how far
    // the scan got (as Bigtable does), which also lets other calls take
    // the lock while this response is written.
    if (pending_.empty()) {
      pending_.emplace_back().set_last_scanned_row_key(*stopped_at_);
    }
  }
  return grpc::Status::OK;
}

void ReadRowsReactor::WriteNext() {
  while (next_ == pending_.size()) {
    if (!more_) {
      End(grpc::Status::OK);
      return;
    }
    if (grpc::Status s = ReadBatch(); !s.ok()) {
      End(std::move(s));
      return;
    }
  }
  if (cancelled_) {
    End(grpc::Status(grpc::StatusCode::CANCELLED, "client cancelled"));
    return;
  }
  if (grpc::Status s = SerializeResponse(pending_[next_++], &out_); !s.ok()) {
    End(std::move(s));
    return;
  }
  if (next_ == pending_.size() && !more_) {
    // The stream's last message: send it with the status. The report goes
    // out first, so a client that sees the status also sees the metrics.
    report_->Finish(grpc::Status::OK);
    report_->Send();
    StartWriteAndFinish(&out_, grpc::WriteOptions(), grpc::Status::OK);
    return;
  }
  StartWrite(&out_);
}

void ReadRowsReactor::OnWriteDone(bool ok) {
  if (!ok) {
    End(grpc::Status(grpc::StatusCode::CANCELLED,
                     "the client stopped reading"));
    return;
  }
  WriteNext();
}

void ReadRowsReactor::End(grpc::Status status) {
  status = report_->Finish(std::move(status));
  report_->Send();
  Finish(std::move(status));
}

}  // namespace btsim::api
