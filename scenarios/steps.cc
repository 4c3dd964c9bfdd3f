#include "scenarios/steps.h"

#include <algorithm>
#include <utility>

#include "base/check.h"
#include "scenarios/instance_config.h"
#include "scenarios/scenario_fields.h"

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
         {FaultStepKinds(), GrayFaultStepKinds(), InstanceStepKinds(),
          TableStepKinds(), ClientStepKinds(), BackupStepKinds()}) {
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

Result<std::vector<TimedStep>> ExpandTimeline(
    const google::protobuf::RepeatedPtrField<v1::Step>& timeline,
    sim::Duration duration) {
  constexpr int kMaxCopies = 1000;
  std::vector<TimedStep> out;
  for (int i = 0; i < timeline.size(); ++i) {
    const v1::Step& step = timeline[i];
    const std::string field = Indexed("timeline", i);
    BTSIM_ASSIGN_OR_RETURN(sim::Duration at,
                           ConfigDuration(step.at(), field + ".at"));
    if (at > duration) {
      return InvalidArgument(field +
                             ".at: after the end of the run (duration)");
    }
    const StepKind* kind = FindStepKind(step.action_case());
    sim::Duration lasts{0};
    if (step.has_for_()) {
      BTSIM_ASSIGN_OR_RETURN(lasts,
                             ConfigDuration(step.for_(), field + ".for"));
      if (lasts <= sim::Duration(0)) {
        return InvalidArgument(field + ".for: must be positive");
      }
      if (kind == nullptr || kind->counterpart == nullptr) {
        return InvalidArgument(field +
                               ".for: only for cluster_down, partition, "
                               "slow_cluster, inject_errors, cut_clients, "
                               "stall_replication and clock_skew");
      }
    }
    int times = 1;
    sim::Duration every{0};
    if (step.has_repeat()) {
      const v1::Repeat& r = step.repeat();
      times = r.times();
      if (times < 2 || times > kMaxCopies) {
        return InvalidArgument(field + ".repeat.times: must be in 2..1000");
      }
      BTSIM_ASSIGN_OR_RETURN(
          every, ConfigDuration(r.every(), field + ".repeat.every"));
      if (every <= sim::Duration(0)) {
        return InvalidArgument(field + ".repeat.every: must be positive");
      }
      if (lasts >= every) {
        return InvalidArgument(field +
                               ".for: must be shorter than repeat.every (a "
                               "copy's end would cut the next copy short)");
      }
      if (at + every * (times - 1) > duration) {
        return InvalidArgument(field +
                               ".repeat: the last copy is after the end of "
                               "the run (duration)");
      }
    }
    for (int copy = 0; copy < times; ++copy) {
      TimedStep& t = out.emplace_back();
      t.step = step;
      t.step.clear_for_();
      t.step.clear_repeat();
      t.at = at + every * copy;
      *t.step.mutable_at() = ToProtoDuration(t.at);
      t.field = field;
      if (lasts > sim::Duration(0) && t.at + lasts <= duration) {
        TimedStep end;
        kind->counterpart(step, &end.step);
        end.step.set_label(step.label().empty() ? "" : step.label() + " ends");
        end.at = t.at + lasts;
        *end.step.mutable_at() = ToProtoDuration(end.at);
        end.field = field;
        out.push_back(std::move(end));
      }
    }
  }
  return out;
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
