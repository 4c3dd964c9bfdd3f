// What a scenario run and a live session (scenarios/live_session.h) share:
// the history observer, setting up tables and clients, the once-a-second
// samples, and judging the outcome. Internal to scenarios/. Single-threaded
// (a live session calls under the instance's lock).
#ifndef BTSIM_SCENARIOS_RUN_SETUP_H_
#define BTSIM_SCENARIOS_RUN_SETUP_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "btsim/scenario/v1/scenario.pb.h"
#include "instance/instance.h"
#include "scenarios/run_context.h"
#include "scenarios/runner.h"
#include "scenarios/sim_client.h"
#include "scenarios/steps.h"
#include "sim/rng.h"

namespace btsim::scenarios {

// Records into the context's history what routing does (failovers, the
// front ends' health changes) and what replication applies per link (read
// by TakeLink).
class HistoryObserver : public instance::InstanceObserver {
 public:
  explicit HistoryObserver(RunContext& context) : context_(context) {}
  void OnFailover(std::string_view profile, std::string_view from,
                  std::string_view to) override;
  void OnHealthChange(std::string_view zone, std::string_view cluster,
                      bool ejected) override;
  void OnReplicated(const replication::AppliedInfo& info) override;
  // What happened on `from` -> `to` since the last call (then reset).
  LinkSample TakeLink(const std::string& from, const std::string& to);

 private:
  struct Link {
    int64_t applied = 0;
    sim::Duration delay_sum{0};
    sim::Duration delay_max{0};
  };
  using PeerLinks = std::map<std::string, Link, std::less<>>;
  // A link of links_ by the numbers of its clusters (AppliedInfo), which
  // are never reused: an id re-added later gets new numbers and finds its
  // old entry in links_ by name.
  struct NumberedLink {
    uint32_t origin;
    uint32_t peer;
    Link* link;  // a node of links_ (never erased)
  };
  RunContext& context_;
  // By names; the sampler reads it by name (TakeLink).
  std::map<std::string, PeerLinks, std::less<>> links_;  // origin -> peer
  std::vector<NumberedLink> by_number_;
};

// The scenario's seed (1 when it sets none).
inline uint64_t SeedOf(const btsim::scenario::v1::Scenario& scenario) {
  return scenario.seed() == 0 ? 1 : scenario.seed();
}

// Creates the scenario's tables on one cluster and applies them everywhere
// at once; fills run.family_of and the history's initial GC rules.
// INVALID_ARGUMENT naming tables[i] when the engine refuses one.
Status CreateTables(const btsim::scenario::v1::Scenario& scenario,
                    StepRun& run);

// The scenario's simulated clients, not started: their groups and clients
// (owned here) and run.groups filled.
struct ScenarioClients {
  std::vector<std::unique_ptr<ClientGroup>> groups;
  std::vector<std::unique_ptr<SimClient>> clients;
};
Result<ScenarioClients> CreateClients(
    const btsim::scenario::v1::Scenario& scenario, sim::Rng& rng, StepRun& run);

// The timeline's steps in the order they play: by time, in file order at
// one time.
std::vector<int> TimelineOrder(const btsim::scenario::v1::Scenario& scenario);

// Ends the run at the context's time: checks pending token waits and
// catch-ups once more, marks the context finished (periodic tasks stop
// rescheduling), and completes every operation still in flight as UNKNOWN
// "still in flight when the run ended".
void FinishRun(StepRun& run);

// Settles (OperationLog::Settle) the operations no client of `clients` can
// still change: they may leave memory.
void SettleOperations(const ScenarioClients& clients, History& history);

// Appends to the history each cluster's CPU load and each link's
// replication since the last sample (at the context's time).
void SampleClustersAndLinks(RunContext& context, HistoryObserver& observer);

// Fills out.checks, expectations, the curves and `passed` from
// out.history (a run that did not settle does not pass).
void JudgeOutcome(const btsim::scenario::v1::Scenario& scenario,
                  RunOutcome& out);

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_RUN_SETUP_H_
