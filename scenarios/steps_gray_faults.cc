// Faults short of an outage (instance::ClusterFaults): slow_cluster and
// restore_speed, inject_errors and stop_errors, cut_clients and
// mend_clients. UndoFaults (steps_faults.cc) ends them all.
#include <algorithm>
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

constexpr StepKind kKinds[] = {
    {v1::Step::kSlowCluster, ValidateSlowCluster, ApplySlowCluster,
     EndSlowCluster},
    {v1::Step::kRestoreSpeed, ValidateRestoreSpeed, ApplyRestoreSpeed, nullptr},
    {v1::Step::kInjectErrors, ValidateInjectErrors, ApplyInjectErrors,
     EndInjectErrors},
    {v1::Step::kStopErrors, ValidateStopErrors, ApplyStopErrors, nullptr},
    {v1::Step::kCutClients, ValidateCutClients, ApplyCutOrMend, EndCutClients},
    {v1::Step::kMendClients, ValidateMendClients, ApplyCutOrMend, nullptr},
};

}  // namespace

std::span<const StepKind> GrayFaultStepKinds() { return kKinds; }

}  // namespace btsim::scenarios
