#include "api/request_report.h"

namespace btsim::api {

void RequestReporter::Send() {
  if (served_ == nullptr || sent_) return;
  sent_ = true;
  if (!finished_) Finish(grpc::Status(grpc::StatusCode::UNKNOWN, ""));
  instance::RequestReport report;
  report.cluster = cluster_;
  report.app_profile = app_profile_;
  report.method = method_;
  report.code = code_;
  report.latency = latency_;
  report.modified_rows = modified_rows_;
  report.returned_rows = returned_rows_;
  report.refused = refused_;
  // The recorded rows as views (cells first: their views point into them).
  std::vector<std::vector<cluster::CellView>> cells;
  std::vector<instance::RowOutcome> rows;
  if (recording_) {
    report.recorded = true;
    report.message = message_;
    report.client = client_;
    report.table = table_;
    report.point_read = point_read_;
    report.filtered = filtered_;
    cells.resize(rows_.size());
    rows.resize(rows_.size());
    for (size_t i = 0; i < rows_.size(); ++i) {
      const RecordedRow& from = rows_[i];
      for (const cluster::ModifiedCell& c : from.cells) {
        cells[i].push_back(
            cluster::CellView{c.family, c.qualifier, c.timestamp, c.value});
      }
      instance::RowOutcome& row = rows[i];
      row.key = from.key;
      row.mutations = from.mutations;
      row.cells = cells[i];
      row.code = from.status.code();
      row.message = from.status.message();
      row.version = from.version;
      row.log_position = from.log_position;
    }
    report.rows = rows;
  }
  std::lock_guard<std::mutex> lock(served_->mu);
  served_->instance->ReportRequest(report);
  // The server's routing front end learns from what it routed.
  served_->instance->ObserveOutcome("", report.cluster, report.code);
}

bool RequestReporter::Record(std::string_view table) {
  if (served_ == nullptr || !served_->instance->records_calls()) return false;
  recording_ = true;
  table_ = std::string(table);
  if (context_ != nullptr) {
    const auto& metadata = context_->client_metadata();
    auto named = metadata.find(kClientHeader);
    client_ = named != metadata.end()
                  ? std::string(named->second.data(), named->second.size())
                  : context_->peer();
  }
  return true;
}

RequestReporter::RecordedRow& RequestReporter::AddRow(std::string_view key) {
  RecordedRow& row = rows_.emplace_back();
  row.key = key;
  return row;
}

void RequestReporter::Committed(const cluster::Cluster& cluster,
                                RecordedRow& row) {
  row.version = cluster.last_version();
  row.log_position = served_->instance->replicas().LogPosition(cluster_);
}

}  // namespace btsim::api
