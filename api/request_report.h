// RequestReporter: reports one data RPC to the instance that served it
// (instance::Instance::ReportRequest, which passes it to the instance's
// observers, e.g. the Prometheus metrics), exactly once, when it goes out of
// scope.
//
// Usage, in a gRPC handler:
//   RequestReporter report("MutateRow", request->app_profile_id());
//   return report.Finish(DoMutateRow(..., report));
// The work (DoMutateRow) calls Bind once the instance is known, set_cluster
// once routing chose a cluster (or set_refused), and counts rows; Finish
// records the RPC's final code and the latency (wall time since
// construction). The report is sent by Send, or else by the destructor,
// under the instance's lock, which the caller must not hold then. A
// reporter never bound (a request that failed before naming a valid
// instance) reports nothing.
//
// Recording: when the instance records calls (`btsim serve --scenario`,
// Instance::records_calls), the handler calls Record under the instance's
// lock and adds each row it touches (AddRow); the report then carries the
// caller's identity and the rows (instance::RequestReport::recorded).
//
// Cheap when not recording: no allocation of its own (the cluster id is
// moved in); one extra lock of the instance per RPC. Not thread-safe: one
// handler's object.
#ifndef BTSIM_API_REQUEST_REPORT_H_
#define BTSIM_API_REQUEST_REPORT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "api/instance_registry.h"
#include "base/status.h"
#include "cluster/mutation.h"
#include "cluster/table.h"
#include "instance/instance.h"

namespace btsim::api {

class RequestReporter {
 public:
  // The metadata header a test harness may set to name its client in a
  // recorded history.
  static constexpr char kClientHeader[] = "x-btsim-client";

  // `method` (the RPC name) and `app_profile` (as requested) must outlive
  // the reporter: a string literal and a view into the request. `context`
  // (the call's; optional) names the caller of a recorded call and must
  // outlive the reporter.
  RequestReporter(std::string_view method, std::string_view app_profile,
                  const grpc::ServerContextBase* context = nullptr)
      : method_(method),
        app_profile_(app_profile),
        context_(context),
        start_(std::chrono::steady_clock::now()) {}
  ~RequestReporter() { Send(); }
  RequestReporter& operator=(const RequestReporter&) = delete;

  // Reports the RPC now (once; later calls do nothing). A callback handler
  // calls it before finishing the RPC, so that a client that has its
  // answer finds the RPC in the metrics.
  void Send();

  std::string_view app_profile() const { return app_profile_; }
  std::string_view method() const { return method_; }

  // A fault of the serving cluster holds the answer back
  // (api/served_faults.h): until the call's deadline (the request or its
  // reply was lost), or by `delay` (a slow cluster).
  struct Hold {
    bool until_deadline = false;
    std::chrono::nanoseconds delay{0};
    bool held() const { return until_deadline || delay.count() > 0; }
  };
  void HoldUntilDeadline() { hold_.until_deadline = true; }
  void HoldFor(std::chrono::nanoseconds delay) { hold_.delay = delay; }
  const Hold& hold() const { return hold_; }
  // For a held answer: a reporter on the heap that reports this RPC
  // instead, with its own copy of the app profile id (it may outlive the
  // request); this one then reports nothing.
  std::shared_ptr<RequestReporter> Detach() {
    std::shared_ptr<RequestReporter> detached(new RequestReporter(*this));
    detached->kept_profile_ = std::string(app_profile_);
    detached->app_profile_ = detached->kept_profile_;
    sent_ = true;
    return detached;
  }
  // Under the instance's lock: whether the instance refuses data calls
  // while a scenario settles (ServedInstance::settling).
  bool settling() const { return served_ != nullptr && served_->settling; }
  // The serving cluster's id; "" until set.
  const std::string& cluster() const { return cluster_; }

  // The instance the request is for; the report goes to it.
  void Bind(ServedInstance& served) { served_ = &served; }
  void set_cluster(std::string cluster) { cluster_ = std::move(cluster); }
  // Routing refused the request (a transaction through a profile without
  // single-row transactions).
  void set_refused(bool refused) { refused_ = refused; }
  void AddModifiedRows(int64_t rows) { modified_rows_ += rows; }
  void AddReturnedRows(int64_t rows) { returned_rows_ += rows; }

  // A row of a recorded call: what the handler asked of it and, once
  // known, its outcome (see instance::RowOutcome).
  struct RecordedRow {
    std::string key;
    std::vector<cluster::Mutation> mutations;
    std::vector<cluster::ModifiedCell> cells;
    Status status;
    uint64_t version = 0;
    uint64_t log_position = 0;
  };
  // Under the instance's lock (after Bind): starts recording this call on
  // `table` if its instance records calls; returns whether it does.
  bool Record(std::string_view table);
  bool recording() const { return recording_; }
  // A row of this recorded call; the reference stays valid until the next
  // AddRow. Requires recording().
  RecordedRow& AddRow(std::string_view key);
  // For a ReadRows of one key: that it is a point read, and whether it
  // had a filter.
  void set_point_read(bool filtered) {
    point_read_ = true;
    filtered_ = filtered;
  }
  // Notes the commit that `cluster` (the serving one) just made into `row`.
  void Committed(const cluster::Cluster& cluster, RecordedRow& row);

  // Records the RPC's final status and the latency so far; returns `status`.
  grpc::Status Finish(grpc::Status status) {
    finished_ = true;
    code_ = static_cast<StatusCode>(status.error_code());
    if (recording_) message_ = status.error_message();
    latency_ = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now() - start_);
    return status;
  }

 private:
  // Copies only for Detach (a reporter reports once).
  RequestReporter(const RequestReporter&) = default;

  const std::string_view method_;
  std::string_view app_profile_;
  const grpc::ServerContextBase* context_;
  std::string kept_profile_;  // see Detach
  Hold hold_;
  std::chrono::steady_clock::time_point start_;
  ServedInstance* served_ = nullptr;
  std::string cluster_;
  // UNKNOWN if Finish was never called.
  bool finished_ = false;
  bool sent_ = false;
  StatusCode code_ = StatusCode::kUnknown;
  std::chrono::nanoseconds latency_{0};
  int64_t modified_rows_ = 0;
  int64_t returned_rows_ = 0;
  bool refused_ = false;
  // Recording.
  bool recording_ = false;
  bool point_read_ = false;
  bool filtered_ = false;
  std::string client_;
  std::string table_;
  std::string message_;
  std::vector<RecordedRow> rows_;
};

}  // namespace btsim::api

#endif  // BTSIM_API_REQUEST_REPORT_H_
