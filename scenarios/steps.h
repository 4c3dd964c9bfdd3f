// The timeline's steps (btsim.scenario.v1.Step): for each case of
// Step.action, one StepKind says how the loader validates a step of that
// kind and how the runner applies it. The kinds live in steps_*.cc, each
// file holding both halves of its kinds:
//   steps_faults.cc    what happens to the instance: cluster_down,
//                      cluster_up, partition, heal, latency, node_failure
//   steps_gray_faults.cc  faults short of an outage: slow_cluster,
//                      inject_errors, cut_clients, stall_replication,
//                      clock_skew, and their ends
//   steps_instance.cc  instance admin: resize, add_cluster, remove_cluster,
//                      update_app_profile
//   steps_tables.cc    table admin: set_gc_rule, drop_row_range,
//                      wait_for_replication
//   steps_clients.cc   the application: start_client, stop_client,
//                      change_workload
//   steps_backups.cc   backups: create_backup, restore_table
// A new kind is a field of the oneof plus one StepKind in one of these
// files; its events need an EventKind (history.h), the record the checkers
// and reports read.
//
// Internal to scenarios/. Single-threaded.
#ifndef BTSIM_SCENARIOS_STEPS_H_
#define BTSIM_SCENARIOS_STEPS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "btsim/scenario/v1/scenario.pb.h"
#include "scenarios/history.h"
#include "scenarios/run_context.h"
#include "scenarios/sim_client.h"

namespace btsim::scenarios {

// What a step may refer to at its time. The loader fills it from the
// scenario and validates the steps in time order; kinds that add or remove
// clusters update it.
struct StepScope {
  std::set<std::string> clusters_now;          // ids
  std::set<std::string> clusters_ever;         // every id, at any time
  std::map<std::string, std::string> zone_of;  // of every cluster ever
  std::set<std::string> profiles;              // app profile ids
  std::map<std::string, std::set<std::string>> families;  // per table id
  std::set<std::string> clients;  // the names of the `clients` entries
  // The `clients` entries whose table has a SUM family (add_to_cell).
  std::set<std::string> clients_that_can_add;
  // Per table id: its aggregate families (which take no GC rule).
  std::map<std::string, std::set<std::string>> aggregate_families;

  // OK when `id` names a cluster that exists now, else INVALID_ARGUMENT
  // "FIELD: required" (empty) or "FIELD: no cluster 'ID' at that time".
  Status ClusterNow(const std::string& id, const std::string& field) const;
  // The same for a table ("FIELD: unknown table 'ID'") and a `clients`
  // entry ("FIELD: unknown client 'NAME'").
  Status TableKnown(const std::string& table, const std::string& field) const;
  Status ClientKnown(const std::string& client, const std::string& field) const;
};

// A `clients` entry at run time: the settings its clients share and its
// clients (one, or `count`). The runner owns both.
struct ClientGroupRun {
  ClientGroup* group = nullptr;
  std::vector<SimClient*> clients;
};

// What fault steps changed that only they know of, for UndoFaults.
struct FaultState {
  std::map<std::string, int> failed_nodes;     // per cluster, not yet replaced
  std::set<std::string> down_by_node_failure;  // their only node failed
};

// The run as the steps see it. The runner owns it and fills `groups` and
// `family_of` before the timeline starts; it outlives every step and every
// task a step schedules.
struct StepRun {
  RunContext* context = nullptr;
  std::map<std::string, ClientGroupRun> groups;  // by `clients` name
  // Each table's first family: the one clients write.
  std::map<std::string, std::string> family_of;
  FaultState faults;
  // wait_for_replication steps not yet consistent, by event index: the
  // token (log positions) and the acknowledged writes from before it.
  struct TokenWait {
    std::map<std::string, uint64_t> token;
    std::vector<uint64_t> writes;
  };
  std::map<size_t, TokenWait> token_waits;
  // Catch-ups not yet complete, by event index: the log positions to reach.
  std::map<size_t, std::map<std::string, uint64_t>> catch_ups;

  // Adds `event` to the history and to the trace; returns its index in
  // history->events.
  size_t AddEvent(Event event);
  // Sets history->events[event_index].end once every cluster has applied
  // everything committed (anywhere) before now; checks every 100 ms until
  // the run has finished, and once more when it settles
  // (FinishCatchUps).
  void WatchCatchUp(size_t event_index);
  // Ends every watched catch-up that is complete now (the runner calls it
  // when the run settles, before the last poll of each would have come).
  void FinishCatchUps();
  // The ids of the write operations committed on `cluster` that no other
  // cluster has applied yet (see Event::unreplicated_ops).
  std::vector<uint64_t> Unreplicated(const std::string& cluster) const;
};

// How to validate and apply one case of Step.action.
struct StepKind {
  btsim::scenario::v1::Step::ActionCase action;
  // Checks a step of this kind named `field` (e.g. "timeline[3]") against
  // `scope` at the step's time, and updates `scope` with what the step
  // changes. INVALID_ARGUMENT naming the field below `field`, e.g.
  // "timeline[3].resize.nodes: must be in 1..1000".
  Status (*validate)(const btsim::scenario::v1::Step& step,
                     const std::string& field, StepScope& scope);
  // Applies a validated step of this kind now: acts on the run and adds
  // the step's event to the history, starting from `event` (its time and
  // the step's label set). An action the instance refuses does not stop
  // the run: Refused() records it in the event.
  void (*apply)(const btsim::scenario::v1::Step& step, Event event,
                StepRun& run);
  // For a fault a `for` may end: sets *end's action to the step that ends
  // `step` (the same target). Null: the kind takes no `for`.
  void (*counterpart)(const btsim::scenario::v1::Step& step,
                      btsim::scenario::v1::Step* end);
};

// A step of the timeline as it plays: a step of the file, a copy of it
// (`repeat`), or the counterpart that ends it (`for`). `step` has neither
// `for` nor `repeat`; `field` is the file's step ("timeline[3]").
struct TimedStep {
  btsim::scenario::v1::Step step;
  sim::Duration at{0};
  std::string field;
};

// The steps `timeline` plays in a run of `duration`, in file order (each
// step's copies and counterparts right after it). INVALID_ARGUMENT naming
// the field for a negative or late `at`, a `repeat` copy after the end, a
// bad `repeat`, or a `for` that is not positive or is on a kind without a
// counterpart. A counterpart after the end is left out (the settle ends
// the fault).
Result<std::vector<TimedStep>> ExpandTimeline(
    const google::protobuf::RepeatedPtrField<btsim::scenario::v1::Step>&
        timeline,
    sim::Duration duration);

// Checks every pending token wait once more (the runner calls it when the
// run has settled, so that a poll due after the end is not lost).
void CheckTokenWaits(StepRun& run);

// Every kind, one per case of Step.action (none for ACTION_NOT_SET).
std::span<const StepKind> StepKinds();

// Validates `step` with its kind; INVALID_ARGUMENT "FIELD: set one action
// (...)" when no action is set.
Status ValidateStep(const btsim::scenario::v1::Step& step,
                    const std::string& field, StepScope& scope);
// Applies a validated `step` now with its kind.
void ApplyStep(const btsim::scenario::v1::Step& step, StepRun& run);

// Repairs what the fault steps did: every cluster up, every link between
// clusters healed, failed nodes replaced, slowness, injected errors,
// client cuts, replication stalls and clock skews ended (the settle phase,
// unless keep_faults).
void UndoFaults(StepRun& run);

// ---- For the kinds (steps_*.cc) ----

// Sets the event's label to `text` unless the step has a label of its own.
void Describe(Event& event, std::string text);
// Records that the instance refused the step's action: appends
// " (refused: MESSAGE)" to the label. Requires !status.ok().
void Refused(Event& event, const Status& status);

// The kinds of each file, for StepKinds().
std::span<const StepKind> FaultStepKinds();
std::span<const StepKind> GrayFaultStepKinds();
std::span<const StepKind> InstanceStepKinds();
std::span<const StepKind> TableStepKinds();
std::span<const StepKind> ClientStepKinds();
std::span<const StepKind> BackupStepKinds();

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_STEPS_H_
