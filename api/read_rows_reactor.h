// ReadRowsReactor: one ReadRows call on gRPC's callback API. It validates
// and routes the request when constructed (the cluster is chosen once; a
// stream that loses it mid-way fails with UNAVAILABLE rather than mixing
// clusters), then reads rows in batches under the instance lock (about
// kBatchBytes of output, at most kBatchRowsExamined stored rows examined)
// and writes the batch's responses one at a time, so neither a slow reader
// nor a filter that drops every row holds the lock for long. A batch that
// returns no row answers with last_scanned_row_key. The last response of the
// stream goes out together with the status.
//
// The serving cluster's faults may fail the call or hold its first response
// (api/served_faults.h).
//
// Ownership: created with `new` by the service's ReadRows handler and
// returned to gRPC; it deletes itself in OnDone. It parses the raw request
// into its own copy (api/raw_messages.h). `registry` and `held` must outlive it
// (the registry outlives the server). Reactions run on gRPC's threads, one at a
// time.
#ifndef BTSIM_API_READ_ROWS_REACTOR_H_
#define BTSIM_API_READ_ROWS_REACTOR_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "api/instance_registry.h"
#include "api/request_report.h"
#include "api/resource_names.h"
#include "api/row_chunker.h"
#include "api/served_faults.h"
#include "cluster/filter.h"
#include "cluster/row_set.h"
#include "google/bigtable/v2/bigtable.pb.h"

namespace btsim::api {

class ReadRowsReactor final
    : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  // `context`: the call's (a fault may hold the answer until its
  // deadline; a recorded call names its caller from it).
  ReadRowsReactor(InstanceRegistry& registry,
                  const grpc::CallbackServerContext* context,
                  const grpc::ByteBuffer& raw, HeldCalls& held);

  void OnWriteDone(bool ok) override;
  void OnCancel() override { cancelled_ = true; }
  void OnDone() override { delete this; }

 private:
  // Validates and routes; an error ends the call.
  grpc::Status Start(InstanceRegistry& registry);
  // Reads the next batch under the instance lock into pending_.
  grpc::Status ReadBatch();
  // Writes the next pending response, reading another batch when needed,
  // or finishes the call.
  void WriteNext();
  void End(grpc::Status status);

  google::bigtable::v2::ReadRowsRequest request_;
  std::optional<RequestReporter> report_;  // set once the request parsed
  // The row of a recorded point read (in report_), else null.
  RequestReporter::RecordedRow* point_row_ = nullptr;
  ServedInstance* instance_ = nullptr;
  TableName name_;
  cluster::RowSet rows_;
  std::optional<cluster::Filter> filter_;
  cluster::ReadOptions options_;
  int64_t remaining_ = -1;  // rows still allowed by rows_limit; -1: no limit
  bool more_ = true;        // the last batch stopped before the end of the read
  // Where the last batch stopped when it had examined its share of rows.
  std::optional<std::string> stopped_at_;
  RowChunker chunker_;
  std::vector<google::bigtable::v2::ReadRowsResponse> pending_;
  size_t next_ = 0;       // index of the next response of pending_ to write
  grpc::ByteBuffer out_;  // the response being written
  std::atomic<bool> cancelled_{false};
};

}  // namespace btsim::api

#endif  // BTSIM_API_READ_ROWS_REACTOR_H_
