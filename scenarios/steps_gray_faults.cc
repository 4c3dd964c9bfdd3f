// Faults short of an outage: slow_cluster and restore_speed,
// inject_errors and stop_errors, cut_clients and mend_clients
// (instance::ClusterFaults), stall_replication and resume_replication, and
// clock_skew. UndoFaults (steps_faults.cc) ends them all.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <string>
#include <utility>

#include "base/check.h"
#include "scenarios/instance_config.h"
#include "scenarios/steps.h"

namespace btsim::scenarios {
namespace {

namespace v1 = ::btsim::scenario::v1;

constexpr std::string_view kMethods[] = {"ReadRows", "MutateRow",
                                         "CheckAndMutateRow",
                                         "ReadModifyWriteRow", "PingAndWarm"};

// ---- slow_cluster, restore_speed ----

Status ValidateSlowCluster(const v1::Step& step, const std::string& field,
                           StepScope& scope) {
  const std::string f = field + ".slow_cluster";
  BTSIM_RETURN_IF_ERROR(
      scope.ClusterNow(step.slow_cluster().cluster(), f + ".cluster"));
  if (!step.slow_cluster().has_added()) {
    return InvalidArgument(f + ".added: required");
  }
  return ConfigLatency(step.slow_cluster().added(), f + ".added").status();
}

void ApplySlowCluster(const v1::Step& step, Event event, StepRun& run) {
  event.kind = EventKind::kSlowCluster;
  event.cluster = step.slow_cluster().cluster();
  Describe(event, "cluster " + event.cluster + " slow");
  auto added = ConfigLatency(step.slow_cluster().added(), "added");
  BTSIM_CHECK_MSG(added.ok(), added.status().message());  // validated
  run.context->instance->faults().SetSlowness(event.cluster, *added);
  run.AddEvent(std::move(event));
}

void EndSlowCluster(const v1::Step& step, v1::Step* end) {
  end->mutable_restore_speed()->set_cluster(step.slow_cluster().cluster());
}

Status ValidateRestoreSpeed(const v1::Step& step, const std::string& field,
                            StepScope& scope) {
  return scope.ClusterNow(step.restore_speed().cluster(),
                          field + ".restore_speed.cluster");
}

void ApplyRestoreSpeed(const v1::Step& step, Event event, StepRun& run) {
  event.kind = EventKind::kRestoreSpeed;
  event.cluster = step.restore_speed().cluster();
  Describe(event, "cluster " + event.cluster + " at full speed");
  run.context->instance->faults().SetSlowness(event.cluster, std::nullopt);
  run.AddEvent(std::move(event));
}

// ---- inject_errors, stop_errors ----

Status ValidateInjectErrors(const v1::Step& step, const std::string& field,
                            StepScope& scope) {
  const v1::InjectErrors& e = step.inject_errors();
  const std::string f = field + ".inject_errors";
  BTSIM_RETURN_IF_ERROR(scope.ClusterNow(e.cluster(), f + ".cluster"));
  if (!(e.fraction() > 0 && e.fraction() <= 1)) {
    return InvalidArgument(f + ".fraction: must be in (0, 1]");
  }
  if (!e.code().empty()) {
    const std::optional<StatusCode> code = StatusCodeFromName(e.code());
    if (!code || *code == StatusCode::kOk) {
      return InvalidArgument(f + ".code: '" + e.code() +
                             "' is not a gRPC error code (e.g. UNAVAILABLE)");
    }
  }
  if (!e.method().empty() && std::find(std::begin(kMethods), std::end(kMethods),
                                       e.method()) == std::end(kMethods)) {
    return InvalidArgument(f + ".method: '" + e.method() +
                           "' is not ReadRows, MutateRow, CheckAndMutateRow, "
                           "ReadModifyWriteRow or PingAndWarm");
  }
  return OkStatus();
}

void ApplyInjectErrors(const v1::Step& step, Event event, StepRun& run) {
  const v1::InjectErrors& e = step.inject_errors();
  instance::InjectedErrors errors;
  errors.fraction = e.fraction();
  if (!e.code().empty()) errors.code = *StatusCodeFromName(e.code());
  errors.method = e.method();
  event.kind = EventKind::kInjectErrors;
  event.cluster = e.cluster();
  event.detail = std::string(StatusCodeName(errors.code));
  Describe(event, "cluster " + event.cluster + " fails " +
                      std::to_string(static_cast<int>(e.fraction() * 100)) +
                      "% of " + (e.method().empty() ? "requests" : e.method()) +
                      " with " + event.detail);
  run.context->instance->faults().SetErrors(event.cluster, std::move(errors));
  run.AddEvent(std::move(event));
}

void EndInjectErrors(const v1::Step& step, v1::Step* end) {
  end->mutable_stop_errors()->set_cluster(step.inject_errors().cluster());
}

Status ValidateStopErrors(const v1::Step& step, const std::string& field,
                          StepScope& scope) {
  return scope.ClusterNow(step.stop_errors().cluster(),
                          field + ".stop_errors.cluster");
}

void ApplyStopErrors(const v1::Step& step, Event event, StepRun& run) {
  event.kind = EventKind::kStopErrors;
  event.cluster = step.stop_errors().cluster();
  Describe(event, "cluster " + event.cluster + " stops failing requests");
  run.context->instance->faults().SetErrors(event.cluster, std::nullopt);
  run.AddEvent(std::move(event));
}

// ---- cut_clients, mend_clients ----

Status ValidateCut(const v1::ClientCut& cut, const std::string& f,
                   StepScope& scope) {
  BTSIM_RETURN_IF_ERROR(scope.ClusterNow(cut.cluster(), f + ".cluster"));
  if (cut.client_zone().empty() == cut.client().empty()) {
    return InvalidArgument(f + ": set exactly one of client_zone and client");
  }
  if (!cut.client().empty()) {
    return scope.ClientKnown(cut.client(), f + ".client");
  }
  return OkStatus();
}

Status ValidateCutClients(const v1::Step& step, const std::string& field,
                          StepScope& scope) {
  return ValidateCut(step.cut_clients(), field + ".cut_clients", scope);
}

Status ValidateMendClients(const v1::Step& step, const std::string& field,
                           StepScope& scope) {
  return ValidateCut(step.mend_clients(), field + ".mend_clients", scope);
}

// The zone of the cut's clients: its client_zone, or its client's zone.
std::string CutZone(const v1::ClientCut& cut, const StepRun& run) {
  if (!cut.client_zone().empty()) return cut.client_zone();
  auto it = run.groups.find(cut.client());
  BTSIM_CHECK(it != run.groups.end());  // validated
  return it->second.group->zone;
}

void ApplyCutOrMend(const v1::Step& step, Event event, StepRun& run) {
  const bool mend = step.has_mend_clients();
  const v1::ClientCut& c = mend ? step.mend_clients() : step.cut_clients();
  instance::ClusterFaults& faults = run.context->instance->faults();
  instance::ClientCut cut;
  cut.client_zone = CutZone(c, run);
  cut.client = c.client();
  cut.cluster = c.cluster();
  cut.requests = c.direction() != v1::ClientCut::REPLIES;
  cut.replies = c.direction() != v1::ClientCut::REQUESTS;
  event.kind = mend ? EventKind::kMendClients : EventKind::kCutClients;
  event.cluster = cut.cluster;
  event.detail = c.client().empty() ? cut.client_zone : c.client();
  const std::string who = c.client().empty() ? "clients in " + cut.client_zone
                                             : "client " + c.client();
  if (mend) {
    Describe(event, who + " reach " + cut.cluster + " again");
    faults.Mend(cut.client_zone, cut.client, cut.cluster);
  } else {
    const char* how = !cut.replies    ? " (requests lost)"
                      : !cut.requests ? " (replies lost)"
                                      : "";
    Describe(event, who + " cut off from " + cut.cluster + how);
    faults.Cut(cut);
  }
  run.AddEvent(std::move(event));
}

void EndCutClients(const v1::Step& step, v1::Step* end) {
  *end->mutable_mend_clients() = step.cut_clients();
}

// ---- stall_replication, resume_replication ----

Status ValidateStall(const v1::Step& step, const std::string& field,
                     StepScope& scope) {
  const bool stall = step.has_stall_replication();
  return scope.ClusterNow(
      stall ? step.stall_replication().cluster()
            : step.resume_replication().cluster(),
      field + (stall ? ".stall_replication" : ".resume_replication") +
          ".cluster");
}

void ApplyStallOrResume(const v1::Step& step, Event event, StepRun& run) {
  const bool stall = step.has_stall_replication();
  event.kind =
      stall ? EventKind::kStallReplication : EventKind::kResumeReplication;
  event.cluster = stall ? step.stall_replication().cluster()
                        : step.resume_replication().cluster();
  Describe(event,
           "cluster " + event.cluster +
               (stall ? " stops shipping its log" : " ships its log again"));
  if (Status s =
          run.context->instance->replicas().SetStalled(event.cluster, stall);
      !s.ok()) {
    Refused(event, s);
  }
  const size_t index = run.AddEvent(std::move(event));
  if (!stall) run.WatchCatchUp(index);
}

void EndStall(const v1::Step& step, v1::Step* end) {
  end->mutable_resume_replication()->set_cluster(
      step.stall_replication().cluster());
}

// ---- clock_skew ----

// The offset, which may be negative (unlike every other duration), at
// most replication::kMaxClockOffset either way (clients too).
Result<sim::Duration> SkewOf(const google::protobuf::Duration& d,
                             const std::string& field) {
  if ((d.seconds() < 0 && d.nanos() > 0) ||
      (d.seconds() > 0 && d.nanos() < 0) || d.nanos() <= -1'000'000'000 ||
      d.nanos() >= 1'000'000'000 || std::abs(d.seconds()) > 24 * 3600) {
    return InvalidArgument(field + ": not a valid duration");
  }
  const sim::Duration offset =
      std::chrono::seconds(d.seconds()) + sim::Duration(d.nanos());
  if (offset > replication::kMaxClockOffset ||
      offset < -replication::kMaxClockOffset) {
    return InvalidArgument(field + ": at most 1 hour either way");
  }
  return offset;
}

Status ValidateClockSkew(const v1::Step& step, const std::string& field,
                         StepScope& scope) {
  const v1::ClockSkew& skew = step.clock_skew();
  const std::string f = field + ".clock_skew";
  if (skew.cluster().empty() == skew.client().empty()) {
    return InvalidArgument(f + ": set exactly one of cluster and client");
  }
  if (!skew.cluster().empty()) {
    BTSIM_RETURN_IF_ERROR(scope.ClusterNow(skew.cluster(), f + ".cluster"));
  } else {
    BTSIM_RETURN_IF_ERROR(scope.ClientKnown(skew.client(), f + ".client"));
  }
  return SkewOf(skew.offset(), f + ".offset").status();
}

void ApplyClockSkew(const v1::Step& step, Event event, StepRun& run) {
  const v1::ClockSkew& skew = step.clock_skew();
  const sim::Duration offset = *SkewOf(skew.offset(), "offset");  // validated
  event.kind = EventKind::kClockSkew;
  event.cluster = skew.cluster();
  event.detail = skew.client();
  char text[64];
  std::snprintf(text, sizeof text, "%+.3f s",
                std::chrono::duration<double>(offset).count());
  Describe(event, (skew.cluster().empty() ? "client " + skew.client()
                                          : "cluster " + skew.cluster()) +
                      " clock " +
                      (offset == sim::Duration(0) ? std::string("agrees again")
                                                  : std::string(text)));
  if (!skew.cluster().empty()) {
    if (Status s = run.context->instance->replicas().SetClockOffset(
            skew.cluster(), offset);
        !s.ok()) {
      Refused(event, s);
    }
  } else {
    run.groups.at(skew.client()).group->clock_offset = offset;
  }
  run.AddEvent(std::move(event));
}

void EndClockSkew(const v1::Step& step, v1::Step* end) {
  v1::ClockSkew* skew = end->mutable_clock_skew();
  skew->set_cluster(step.clock_skew().cluster());
  skew->set_client(step.clock_skew().client());
}

constexpr StepKind kKinds[] = {
    {v1::Step::kSlowCluster, ValidateSlowCluster, ApplySlowCluster,
     EndSlowCluster},
    {v1::Step::kRestoreSpeed, ValidateRestoreSpeed, ApplyRestoreSpeed, nullptr},
    {v1::Step::kInjectErrors, ValidateInjectErrors, ApplyInjectErrors,
     EndInjectErrors},
    {v1::Step::kStopErrors, ValidateStopErrors, ApplyStopErrors, nullptr},
    {v1::Step::kCutClients, ValidateCutClients, ApplyCutOrMend, EndCutClients},
    {v1::Step::kMendClients, ValidateMendClients, ApplyCutOrMend, nullptr},
    {v1::Step::kStallReplication, ValidateStall, ApplyStallOrResume, EndStall},
    {v1::Step::kResumeReplication, ValidateStall, ApplyStallOrResume, nullptr},
    {v1::Step::kClockSkew, ValidateClockSkew, ApplyClockSkew, EndClockSkew},
};

}  // namespace

std::span<const StepKind> GrayFaultStepKinds() { return kKinds; }

}  // namespace btsim::scenarios
