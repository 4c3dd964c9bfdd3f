#include "api/served_faults.h"

#include <algorithm>
#include <memory>
#include <utility>

#include <grpcpp/alarm.h>

namespace btsim::api {
namespace {

constexpr std::chrono::minutes kMaxHang{10};

}  // namespace

Result<cluster::Cluster*> ReceiveServed(instance::Instance& instance,
                                        RequestReporter& report) {
  if (report.settling()) {
    return Unavailable(
        "the scenario has ended: btsim serve refuses calls while replication "
        "settles");
  }
  const std::string& id = report.cluster();
  const instance::ClusterFaults& faults = instance.faults();
  if (faults.RequestLost(instance.client_zone(), "", id)) {
    report.HoldUntilDeadline();
    return nullptr;
  }
  instance::Instance::Reception r = instance.Receive(id, report.method());
  using Kind = instance::Instance::Reception::Kind;
  if (r.kind == Kind::kFailed) return std::move(r.status);
  if (r.kind == Kind::kLost) {
    report.HoldUntilDeadline();
    return nullptr;
  }
  if (faults.ReplyLost(instance.client_zone(), "", id)) {
    report.HoldUntilDeadline();
  } else if (r.added.count() > 0) {
    report.HoldFor(r.added);
  }
  return r.cluster;
}

void HeldCalls::Hold(const RequestReporter::Hold& hold,
                     std::chrono::system_clock::time_point deadline,
                     std::function<void(bool hung)> release) {
  const auto now = std::chrono::system_clock::now();
  const auto longest = std::min(deadline, now + kMaxHang);
  auto when = longest;
  // A delay that reaches the deadline is a hang: the client has given up.
  bool hung = hold.until_deadline;
  if (!hung) {
    const auto delayed =
        now + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                  hold.delay);
    if (delayed >= longest) {
      hung = true;
    } else {
      when = delayed;
    }
  }
  grpc::Alarm* alarm;
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) when = now;
    id = next_++;
    alarm = alarms_.emplace(id, std::make_unique<grpc::Alarm>())
                .first->second.get();
  }
  // Fired or cancelled (ReleaseAll), the alarm releases the call, then
  // forgets itself. Set outside the lock: a due alarm may run at once.
  alarm->Set(when, [this, id, hung, release = std::move(release)](bool) {
    release(hung);
    std::unique_ptr<grpc::Alarm> done;
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = alarms_.find(id); it != alarms_.end()) {
      done = std::move(it->second);
      alarms_.erase(it);
    }
    if (alarms_.empty()) empty_.notify_all();
  });
  // A ReleaseAll between the insertion and Set cancelled nothing.
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) {
    if (auto it = alarms_.find(id); it != alarms_.end()) it->second->Cancel();
  }
}

HeldCalls::~HeldCalls() {
  ReleaseAll();
  std::unique_lock<std::mutex> lock(mu_);
  empty_.wait(lock, [this] { return alarms_.empty(); });
}

void HeldCalls::ReleaseAll() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  for (auto& [id, alarm] : alarms_) alarm->Cancel();
}

grpc::Status HeldStatus(bool hung, grpc::Status status) {
  if (!hung) return status;
  return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                      "no answer from the serving cluster before the "
                      "deadline (btsim fault)");
}

}  // namespace btsim::api
