#include "scenarios/steps.h"

#include <algorithm>
#include <utility>

#include "base/check.h"

namespace btsim::scenarios {
namespace {

namespace v1 = ::btsim::scenario::v1;

constexpr sim::Duration kCatchUpPollInterval = std::chrono::milliseconds(100);

const StepKind* FindStepKind(v1::Step::ActionCase action) {
  for (const StepKind& kind : StepKinds()) {
    if (kind.action == action) return &kind;
  }
  return nullptr;
}

}  // namespace

Status StepScope::ClusterNow(const std::string& id,
                             const std::string& field) const {
  if (id.empty()) return InvalidArgument(field + ": required");
  if (clusters_now.count(id) == 0) {
    return InvalidArgument(field + ": no cluster '" + id + "' at that time");
  }
  return OkStatus();
}

Status StepScope::TableKnown(const std::string& table,
                             const std::string& field) const {
  if (table.empty()) return InvalidArgument(field + ": required");
  if (families.count(table) == 0) {
    return InvalidArgument(field + ": unknown table '" + table + "'");
  }
  return OkStatus();
}

Status StepScope::ClientKnown(const std::string& client,
                              const std::string& field) const {
  if (client.empty()) return InvalidArgument(field + ": required");
  if (clients.count(client) == 0) {
    return InvalidArgument(field + ": unknown client '" + client + "'");
  }
  return OkStatus();
}

size_t StepRun::AddEvent(Event event) {
  sim::Fingerprint& trace = *context->trace;
  trace.AddInt(event.at.count());
  trace.Add(EventKindName(event.kind));
  trace.Add(event.cluster);
  trace.Add(event.peer);
  trace.Add(event.detail);
  std::vector<Event>& events = context->history->events;
  events.push_back(std::move(event));
  return events.size() - 1;
}

namespace {

// Ends catch-up `event_index` if every cluster has applied its positions;
// true when it is no longer pending.
bool FinishCatchUp(StepRun& run, size_t event_index) {
  auto it = run.catch_ups.find(event_index);
  if (it == run.catch_ups.end()) return true;
  if (!run.context->instance->replicas().HasApplied(it->second)) return false;
  run.context->history->events[event_index].end = run.context->Elapsed();
  run.catch_ups.erase(it);
  return true;
}

void PollCatchUp(StepRun& run, size_t event_index) {
  if (FinishCatchUp(run, event_index) || run.context->finished) return;
  run.context->scheduler->RunAfter(kCatchUpPollInterval, [&run, event_index] {
    PollCatchUp(run, event_index);
  });
}

}  // namespace

void StepRun::WatchCatchUp(size_t event_index) {
  catch_ups[event_index] = context->instance->replicas().LogPositions();
  PollCatchUp(*this, event_index);
}

void StepRun::FinishCatchUps() {
  std::vector<size_t> pending;
  for (const auto& [event_index, positions] : catch_ups) {
    pending.push_back(event_index);
  }
  for (size_t event_index : pending) FinishCatchUp(*this, event_index);
}

std::vector<uint64_t> StepRun::Unreplicated(const std::string& cluster) const {
  auto& replicas = context->instance->replicas();
  uint64_t replicated = 0;  // the furthest any peer has applied
  for (const std::string& peer : replicas.ClusterIds()) {
    if (peer != cluster) {
      replicated = std::max(replicated, replicas.Applied(cluster, peer));
    }
  }
  std::vector<uint64_t> ids;
  for (const Operation& op : context->history->operations) {
    if (op.version != 0 && op.cluster == cluster &&
        op.log_position > replicated) {
      ids.push_back(op.id);
    }
  }
  return ids;
}

std::span<const StepKind> StepKinds() {
  static const std::vector<StepKind> kinds = [] {
    std::vector<StepKind> all;
    for (std::span<const StepKind> file :
         {FaultStepKinds(), InstanceStepKinds(), TableStepKinds(),
          ClientStepKinds()}) {
      for (const StepKind& kind : file) {
        BTSIM_CHECK_MSG(std::none_of(all.begin(), all.end(),
                                     [&](const StepKind& k) {
                                       return k.action == kind.action;
                                     }),
                        "Step.action case " + std::to_string(kind.action) +
                            " has two kinds");
        all.push_back(kind);
      }
    }
    return all;
  }();
  return kinds;
}

Status ValidateStep(const v1::Step& step, const std::string& field,
                    StepScope& scope) {
  if (step.action_case() == v1::Step::ACTION_NOT_SET) {
    return InvalidArgument(field +
                           ": set one action (cluster_down, "
                           "partition, resize, ...)");
  }
  const StepKind* kind = FindStepKind(step.action_case());
  BTSIM_CHECK_MSG(kind != nullptr, "Step.action case " +
                                       std::to_string(step.action_case()) +
                                       " has no kind");
  return kind->validate(step, field, scope);
}

void ApplyStep(const v1::Step& step, StepRun& run) {
  const StepKind* kind = FindStepKind(step.action_case());
  BTSIM_CHECK_MSG(kind != nullptr, "Step.action case " +
                                       std::to_string(step.action_case()) +
                                       " has no kind");
  Event event;
  event.at = run.context->Elapsed();
  event.label = step.label();
  kind->apply(step, std::move(event), run);
}

void Describe(Event& event, std::string text) {
  if (event.label.empty()) event.label = std::move(text);
}

void Refused(Event& event, const Status& status) {
  BTSIM_CHECK(!status.ok());
  event.label += " (refused: " + status.message() + ")";
  event.refused = true;
}

}  // namespace btsim::scenarios
