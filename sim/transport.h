// Transport: the simulated network between zones. Every message is a task
// delivered at the destination after the link's latency, unless it is lost
// or the link is cut. Links are directed (from zone -> to zone): latency,
// loss and partitions can differ per direction and change at run time.
//
// - Latency: a LatencyModel per link. Links without an explicit model use
//   the defaults for their distance: same zone, same region (zones sharing
//   a region, see RegionOf), or different regions.
// - Order: per-link FIFO, as over one TCP connection: a message never
//   arrives before one sent earlier on the same link.
// - Loss: each message is dropped with the link's loss probability.
// - Partitions: a message is dropped if its link is cut when it is sent or
//   when it would arrive. Partition(a, b) cuts both directions; with
//   one_way only a -> b.
// - Bandwidth (optional, off by default): a link with a bandwidth of B
//   bytes/s puts a message of n bytes on the wire for n / B after the
//   previous one has left it, and the message's latency counts from then. A
//   backlog of messages on a slow link therefore queues at its sender.
// - Randomness comes from named forks of the Rng given at construction (one
//   per link), so traffic on one link never shifts another link's samples.
//
// Runs on the Scheduler's thread; not thread-safe.
#ifndef BTSIM_SIM_TRANSPORT_H_
#define BTSIM_SIM_TRANSPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "sim/rng.h"
#include "sim/scheduler.h"

namespace btsim::sim {

// "us-east1-b" -> "us-east1": the zone name without its last "-x" part (a
// view into `zone`); a zone without a '-' is its own region.
std::string_view RegionOf(std::string_view zone);

// A one-way delay distribution. Samples below `floor` are raised to it.
struct LatencyModel {
  enum class Kind { kConstant, kUniform, kNormal, kLogNormal, kExponential };
  Kind kind = Kind::kConstant;
  Duration a{0};       // constant: value; uniform: min; normal: mean;
                       // log-normal: median; exponential: mean (above floor)
  Duration b{0};       // uniform: max; normal: standard deviation
  double sigma = 0.0;  // log-normal: sigma of the underlying normal
  Duration floor{0};

  static LatencyModel Constant(Duration value);
  static LatencyModel Uniform(Duration min, Duration max);
  static LatencyModel Normal(Duration mean, Duration stddev, Duration floor);
  static LatencyModel LogNormal(Duration median, double sigma, Duration floor);
  // floor + an exponential with the given mean.
  static LatencyModel Exponential(Duration mean, Duration floor);

  Duration Sample(Rng& rng) const;
  bool operator==(const LatencyModel&) const = default;
};

struct TransportDefaults {
  LatencyModel same_zone = LatencyModel::LogNormal(
      std::chrono::microseconds(250), 0.3, std::chrono::microseconds(50));
  LatencyModel same_region = LatencyModel::LogNormal(
      std::chrono::milliseconds(1), 0.3, std::chrono::microseconds(300));
  LatencyModel cross_region = LatencyModel::LogNormal(
      std::chrono::milliseconds(40), 0.2, std::chrono::milliseconds(20));
};

struct LinkStats {
  int64_t sent = 0;
  int64_t delivered = 0;
  int64_t lost = 0;         // dropped by the loss probability
  int64_t partitioned = 0;  // dropped by a cut link
};

class Transport {
 public:
  // `scheduler` must outlive the Transport.
  Transport(Scheduler& scheduler, Rng rng, TransportDefaults defaults = {});

  // Sends a message of `bytes` bytes from `from` to `to`; `deliver` runs at
  // the destination time unless the message is dropped. `bytes` matters
  // only on a link with a bandwidth.
  void Send(std::string_view from, std::string_view to, Task deliver,
            int64_t bytes = 0);

  // Overrides a link's latency (both directions unless `one_way`).
  void SetLatency(std::string_view from, std::string_view to,
                  LatencyModel model, bool one_way = false);
  // Back to the distance default (both directions unless `one_way`).
  void ClearLatency(std::string_view from, std::string_view to,
                    bool one_way = false);
  // Overrides every link's latency, e.g. `serve --replication-latency`.
  void SetLatencyEverywhere(std::optional<LatencyModel> model);
  void SetLoss(std::string_view from, std::string_view to, double p,
               bool one_way = false);
  // Bytes per second the link carries (both directions unless `one_way`);
  // 0 removes its own limit. Links without one of their own use the
  // default (0 at construction: unlimited).
  void SetBandwidth(std::string_view from, std::string_view to,
                    int64_t bytes_per_second, bool one_way = false);
  void SetDefaultBandwidth(int64_t bytes_per_second);
  // The bandwidth in force on a link (0: unlimited).
  int64_t BandwidthOf(std::string_view from, std::string_view to) const;
  void Partition(std::string_view a, std::string_view b, bool one_way = false);
  void Heal(std::string_view a, std::string_view b);  // both directions
  bool IsCut(std::string_view from, std::string_view to) const;

  // The model in force on a link.
  LatencyModel LatencyOf(std::string_view from, std::string_view to) const;
  // Changes whenever SetLatency, ClearLatency or SetLatencyEverywhere is
  // called: LatencyOf answers cached along with it hold while it stays the
  // same.
  uint64_t latency_version() const { return latency_version_; }
  LinkStats StatsOf(std::string_view from, std::string_view to) const;

 private:
  // The state of one directed link. Defined here rather than in
  // transport.cc: destroying links_ (in Transport's implicit destructor, in
  // every includer) needs the complete type.
  struct Link {
    std::optional<LatencyModel> latency;  // explicit override, if any
    double loss = 0.0;
    bool cut = false;
    // Arrival time of the last message accepted on this link (FIFO).
    Time last_arrival = Time::min();
    int64_t bandwidth = 0;  // bytes/s; 0: the default
    // When the last message accepted has left the sender (with a bandwidth).
    Time wire_free = Time::min();
    LinkStats stats;
    // rng_.Fork(from + "->" + to), made on the link's first Send.
    std::optional<Rng> rng;
  };

  Link& GetLink(std::string_view from, std::string_view to);
  const Link* FindLink(std::string_view from, std::string_view to) const;
  // The model in force on the link, given its state (null: no state yet).
  const LatencyModel& ModelFor(std::string_view from, std::string_view to,
                               const Link* link) const;

  Scheduler& scheduler_;
  Rng rng_;
  TransportDefaults defaults_;
  std::optional<LatencyModel> everywhere_;
  int64_t default_bandwidth_ = 0;
  uint64_t latency_version_ = 0;
  // Orders (from, to) keys as string views, so that lookups need no copy.
  struct LinkLess {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return std::pair<std::string_view, std::string_view>(a.first, a.second) <
             std::pair<std::string_view, std::string_view>(b.first, b.second);
    }
  };
  std::map<std::pair<std::string, std::string>, Link, LinkLess> links_;
};

}  // namespace btsim::sim

#endif  // BTSIM_SIM_TRANSPORT_H_
