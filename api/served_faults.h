// What the instance's injected faults (instance/cluster_faults.h) do to a
// request `btsim serve` routed to a cluster, in wall time: the same faults
// simulated clients meet in `btsim run`, seen from a real client.
//
// - Down and refusing, or an injected error: the request fails at once.
// - Down and black-holed, or the server's clients cut off from the cluster
//   (requests lost): it is not executed, and no answer comes before the
//   call's deadline (then DEADLINE_EXCEEDED).
// - Replies cut: it executes, and no answer comes before the deadline.
// - Slow: it executes, and its answer leaves `added` later.
// The routing front end learns each outcome when the answer goes out
// (RequestReporter::Send), a held one included.
#ifndef BTSIM_API_SERVED_FAULTS_H_
#define BTSIM_API_SERVED_FAULTS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include <grpcpp/alarm.h>

#include "api/request_report.h"
#include "base/result.h"
#include "cluster/cluster.h"
#include "instance/instance.h"

namespace btsim::api {

// The cluster that serves a request `report` routed (report.cluster()), or
// the error to answer with. nullptr with OK: not to be executed (a hold
// until the deadline is set on `report`). A cluster with a hold set: execute
// it, then hold the answer. Call under the instance's lock.
Result<cluster::Cluster*> ReceiveServed(instance::Instance& instance,
                                        RequestReporter& report);

// The calls faults hold, so that the server can release them all when it
// shuts down (gRPC waits for every call to finish). Thread-safe.
class HeldCalls {
 public:
  HeldCalls() = default;
  HeldCalls(const HeldCalls&) = delete;
  HeldCalls& operator=(const HeldCalls&) = delete;
  // Releases what is still held and waits until every release has run.
  ~HeldCalls();

  // Calls `release(hung)` on a gRPC thread once `hold` is over: after its
  // delay, or at `deadline` for a hold until the deadline or a delay that
  // reaches it (`hung` true: the client has given up). A call without a
  // deadline is held at most 10 minutes. After ReleaseAll, at once.
  void Hold(const RequestReporter::Hold& hold,
            std::chrono::system_clock::time_point deadline,
            std::function<void(bool hung)> release);
  // Releases every held call now, as if its hold were over.
  void ReleaseAll();

 private:
  std::mutex mu_;
  std::condition_variable empty_;  // alarms_ became empty
  uint64_t next_ = 0;
  bool closed_ = false;
  std::map<uint64_t, std::unique_ptr<grpc::Alarm>> alarms_;
};

// The status a held call answers with: DEADLINE_EXCEEDED when it hung,
// else `status`.
grpc::Status HeldStatus(bool hung, grpc::Status status);

}  // namespace btsim::api

#endif  // BTSIM_API_SERVED_FAULTS_H_
