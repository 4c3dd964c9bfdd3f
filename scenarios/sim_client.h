// SimClient: one simulated application client of a scenario. It issues
// operations (open loop: Poisson arrivals; closed loop: N in flight) through
// its app profile, models the network between its zone and the serving
// cluster and the serving node's queue (Instance::Admit), retries like the
// client libraries, and records each operation in the History.
//
// One attempt: route (Instance::Route) -> one-way delay to the cluster
// (lost if the client is cut from it) -> what the cluster's faults do to it
// (Instance::Receive: UNAVAILABLE if it is down and refusing, no answer if
// black-holed, an injected error, added latency) -> the serving node's
// queue, which refuses
// the request when full (UNAVAILABLE) and drops it unexecuted if it would
// start after the attempt's deadline (the client then times out) -> the
// cluster executes it when the node starts serving it (UNAVAILABLE if the
// cluster went down meanwhile), and the reply leaves when the node is done
// -> one-way delay back (lost if the client is cut from the cluster's
// replies). The attempt times out at min(attempt_timeout,
// what is left of the deadline), a deadline the server knows as gRPC
// servers do; a late reply is ignored (the write may have committed:
// History records it). Retryable
// codes (UNAVAILABLE, DEADLINE_EXCEEDED, ABORTED) are retried for reads and
// writes (writes carry explicit timestamps, so they are idempotent) after
// an exponential backoff with jitter in [b/2, b]; CheckAndMutateRow and
// ReadModifyWriteRow are never retried. AddToCell is retried like a write
// whether or not it is idempotent: with `idempotent_adds` every attempt
// carries the same token and start time, without, a retry after an
// attempt that committed counts the increment again (Operation::applied).
// With latency-aware failover (DetectorOptions::failover_after), a
// multi-cluster attempt not answered in time is also sent on to the next
// cluster, and from then on the operation follows that cluster: only its
// answer counts (the first may still commit a write, as with a timed-out
// attempt).
//
// Not thread-safe; runs on the RunContext's scheduler. The client group's
// state is shared by every client of one scenario `clients` entry.
#ifndef BTSIM_SCENARIOS_SIM_CLIENT_H_
#define BTSIM_SCENARIOS_SIM_CLIENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "btsim/scenario/v1/scenario.pb.h"
#include "cluster/mutation.h"
#include "scenarios/key_pattern.h"
#include "scenarios/run_context.h"
#include "sim/rng.h"
#include "sim/transport.h"

namespace btsim::scenarios {

// Settings shared by the clients of one scenario `clients` entry.
struct ClientGroup {
  std::string name;
  std::string zone;
  std::string profile;
  std::string table;
  std::string family;  // the table's first family
  // The table's first SUM family, where `add_to_cell` adds ("": none).
  std::string add_family;
  sim::Duration deadline{0};
  int max_attempts = 10;
  sim::Duration initial_backoff{0};
  double multiplier = 2;
  sim::Duration max_backoff{0};
  sim::Duration attempt_timeout{0};  // 0: the whole deadline
  bool bypass_gating = false;
  // Added to the clients' clock (clock_skew): the timestamps they write
  // and their time-based row keys.
  sim::Duration clock_offset{0};
  btsim::scenario::v1::Workload workload;
  std::unique_ptr<KeyGenerator> keys;
  // Bumped on every workload change; loops of an older generation end.
  uint64_t generation = 0;
};

// The group's settings from the (validated) scenario entry.
Result<std::unique_ptr<ClientGroup>> MakeClientGroup(
    const btsim::scenario::v1::Client& client,
    const btsim::scenario::v1::Scenario& scenario,
    const std::string& default_zone);

class SimClient {
 public:
  SimClient(RunContext& context, ClientGroup& group, std::string name,
            sim::Rng rng);
  SimClient(const SimClient&) = delete;
  SimClient& operator=(const SimClient&) = delete;

  const std::string& name() const { return name_; }
  bool active() const { return active_; }

  // Starts issuing operations (no-op if active).
  void Start();
  // Stops issuing new operations; those in flight finish.
  void Stop();
  // The group's workload changed: restart the issuing loops.
  void Restart();

  // The smallest id of this client's operations that may still change (an
  // attempt or a message of it is under way); UINT64_MAX when none.
  uint64_t OldestOpenOperation() const;

 private:
  // One operation's progress across its attempts, in a slot of attempts_
  // (reused once the operation finishes).
  struct Attempt {
    uint64_t op_index = 0;
    uint64_t loop_generation = 0;
    sim::Time deadline;
    int attempts = 0;
    // The current attempt (unique within this client); replies of older
    // ones, or of the slot's earlier operations, are ignored.
    uint32_t token = 0;
    sim::TaskId timer = 0;
    bool done = true;
    Name cluster;                // where the current attempt went ("": nowhere)
    sim::Time attempt_deadline;  // the current attempt's
    // The current attempt was sent on to another cluster (latency-aware
    // failover).
    bool failed_over = false;
  };
  // One request on its way to a cluster and its reply on the way back, in
  // a slot of messages_ (reused once the reply is delivered).
  struct Message {
    uint32_t attempt = 0;  // slot in attempts_
    uint32_t token = 0;    // the attempt's token when it was sent
    uint64_t op_index = 0;
    std::string cluster_id;
    Name cluster;           // the same, interned in the history
    sim::Time deadline;     // the attempt's
    sim::Time arrived;      // at the cluster
    sim::Time done;         // when its node finishes it (once admitted)
    sim::Duration back{0};  // the reply's one-way delay
    Status status;          // the reply
  };
  // Tasks capture only `this` and two 32-bit numbers, so that
  // std::function holds them without allocating.
  uint32_t NewAttempt();
  // A message of attempt `token` of attempts_[slot] to `cluster` ("" for
  // the front end's own answer); the caller sets cluster_id and the rest.
  uint32_t NewMessage(uint32_t slot, uint32_t token, Name cluster);
  // The report of messages_[m]'s request (cluster, profile, method).
  instance::RequestReport ReportOf(const Message& message) const;
  // Delivers a reply of attempt `token` of attempts_[slot], from cluster
  // `from` (null: the attempt's own timeout, or the front end); ignored
  // unless `from` is where the attempt now goes.
  void Reply(uint32_t slot, uint32_t token, Status status,
             const Name* from = nullptr);
  // Sends attempt `token` of attempts_[slot] to `cluster_id`.
  void Send(uint32_t slot, uint32_t token, std::string cluster_id);
  // Latency-aware failover: attempt `token` of attempts_[slot] has not been
  // answered in time; sends it on to the next cluster, once.
  void FailOver(uint32_t slot, uint32_t token);
  // Delivers messages_[m]'s reply and frees it.
  void DeliverReply(uint32_t m);
  // messages_[m] arrived at its cluster: what its faults do to it
  // (Instance::Receive), then Admit.
  void Arrive(uint32_t m);
  // messages_[m]'s node admits it, or refuses it.
  void Admit(uint32_t m);
  // messages_[m]'s node starts serving it: the cluster executes it.
  void Serve(uint32_t m);
  // Reports messages_[m]'s request with `status` and sends it back as the
  // reply, leaving at `leaves`.
  void Answer(uint32_t m, instance::RequestReport& report, Status status,
              sim::Time leaves);

  void ScheduleArrival();
  void Issue(uint64_t loop_generation);
  void RunAttempt(uint32_t slot);
  void Finish(uint32_t slot, Status s);
  // Executes `op` on `cluster` (a write commits and records it in `op`);
  // what it returns goes to `result` (`op`, or a copy nobody reads). The
  // node was charged for the request at admission; a scan's bytes are
  // charged here and may move *done later.
  Status Execute(cluster::Cluster& cluster, std::string_view cluster_id,
                 Operation& op, Operation& result, sim::Time* done);
  // Records the commit of `op`'s write on `cluster_id`.
  void Committed(std::string_view cluster_id, const cluster::Cluster& cluster,
                 Operation& op);
  // Sets *value to the value written for `tag`: the tag, '|', and padding
  // to a size in the workload's value_bytes range.
  void FillValue(std::string_view tag, std::string* value) const;
  // The SetCell writing `op`'s value (FillValue), built in value_buffer_;
  // KeepValueBuffer takes the buffer back once the write is done, so that
  // writes reuse one allocation.
  cluster::Mutation ValueWrite(const Operation& op);
  void KeepValueBuffer(cluster::Mutation& write);
  // The latency from this client's zone to cluster `cluster_id`'s:
  // Transport::LatencyOf, remembered for the last cluster asked about
  // while the transport's latencies and the instance's membership (and so the
  // cluster's zone) are unchanged.
  const sim::LatencyModel& LinkTo(const std::string& cluster_id);

  RunContext& context_;
  ClientGroup& group_;
  std::string name_;
  sim::Rng rng_;
  // The names operations record, interned in the history once.
  const OpSource* source_;
  Name routed_name_;  // the cluster last routed to
  bool active_ = false;
  uint64_t generation_ = 0;  // bumped by Stop/Restart
  uint64_t sequence_ = 0;    // tags written
  uint64_t appends_ = 0;     // append tokens made
  sim::TaskId arrival_ = 0;
  bool arrival_pending_ = false;
  std::vector<Attempt> attempts_;
  std::vector<uint32_t> free_attempts_;
  uint32_t next_token_ = 0;
  std::vector<Message> messages_;
  std::vector<uint32_t> free_messages_;
  std::string value_buffer_;  // see ValueWrite
  // LinkTo's answer, for link_cluster_ at those two versions.
  std::string link_cluster_;
  uint64_t link_latency_version_ = 0;
  uint64_t link_members_version_ = 0;
  std::optional<sim::LatencyModel> link_;
};

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_SIM_CLIENT_H_
