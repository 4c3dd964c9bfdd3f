// The application: a `clients` entry starts or stops issuing operations
// (start_client, stop_client) or changes its workload (change_workload).
#include <string>
#include <utility>

#include "base/check.h"
#include "scenarios/key_pattern.h"
#include "scenarios/scenario_fields.h"
#include "scenarios/steps.h"

namespace btsim::scenarios {
namespace {

namespace v1 = ::btsim::scenario::v1;

// The clients of the `clients` entry `name` (none when unknown).
std::vector<SimClient*> ClientsOf(const StepRun& run, const std::string& name) {
  auto it = run.groups.find(name);
  return it == run.groups.end() ? std::vector<SimClient*>()
                                : it->second.clients;
}

// ---- start_client, stop_client ----

Status ValidateStartClient(const v1::Step& step, const std::string& field,
                           StepScope& scope) {
  return scope.ClientKnown(step.start_client().client(),
                           field + ".start_client.client");
}

Status ValidateStopClient(const v1::Step& step, const std::string& field,
                          StepScope& scope) {
  return scope.ClientKnown(step.stop_client().client(),
                           field + ".stop_client.client");
}

void ApplyStartOrStopClient(const v1::Step& step, Event event, StepRun& run) {
  const bool start = step.has_start_client();
  const std::string& name =
      start ? step.start_client().client() : step.stop_client().client();
  event.kind = start ? EventKind::kStartClient : EventKind::kStopClient;
  event.detail = name;
  Describe(event, (start ? "start " : "stop ") + name);
  for (SimClient* c : ClientsOf(run, name)) {
    if (start) {
      c->Start();
    } else {
      c->Stop();
    }
  }
  run.AddEvent(std::move(event));
}

// ---- change_workload ----

Status ValidateChangeWorkload(const v1::Step& step, const std::string& field,
                              StepScope& scope) {
  const v1::WorkloadChange& change = step.change_workload();
  const std::string f = field + ".change_workload";
  BTSIM_RETURN_IF_ERROR(scope.ClientKnown(change.client(), f + ".client"));
  if (!change.has_workload()) {
    return InvalidArgument(f + ".workload: required");
  }
  BTSIM_RETURN_IF_ERROR(ValidateWorkload(change.workload(), f + ".workload"));
  if (change.workload().mix().add_to_cell() > 0 &&
      scope.clients_that_can_add.count(change.client()) == 0) {
    return InvalidArgument(f +
                           ".workload.mix.add_to_cell: the client's table "
                           "has no family with aggregate: SUM to add to");
  }
  return OkStatus();
}

void ApplyChangeWorkload(const v1::Step& step, Event event, StepRun& run) {
  const std::string& name = step.change_workload().client();
  event.kind = EventKind::kChangeWorkload;
  event.detail = name;
  Describe(event, "new workload for " + name);
  if (auto it = run.groups.find(name); it != run.groups.end()) {
    ClientGroup& group = *it->second.group;
    group.workload = step.change_workload().workload();
    // The loader has validated the keys.
    auto keys = KeyGenerator::Create(group.workload.keys(), "keys");
    BTSIM_CHECK_MSG(keys.ok(), keys.status().message());
    group.keys = std::move(*keys);
    ++group.generation;
  }
  for (SimClient* c : ClientsOf(run, name)) c->Restart();
  run.AddEvent(std::move(event));
}

constexpr StepKind kKinds[] = {
    {v1::Step::kStartClient, ValidateStartClient, ApplyStartOrStopClient,
     nullptr},
    {v1::Step::kStopClient, ValidateStopClient, ApplyStartOrStopClient,
     nullptr},
    {v1::Step::kChangeWorkload, ValidateChangeWorkload, ApplyChangeWorkload,
     nullptr},
};

}  // namespace

std::span<const StepKind> ClientStepKinds() { return kKinds; }

}  // namespace btsim::scenarios
