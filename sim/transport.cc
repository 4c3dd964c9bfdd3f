#include "sim/transport.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "sim/distributions.h"

namespace btsim::sim {
namespace {

// Samples of the continuous models are capped here (about 31 years), so
// that adding one to a Unix-epoch time can never overflow.
constexpr double kMaxSampleNanos = 1e18;

// Rounds a sampled delay in nanoseconds to Duration, within
// [-kMaxSampleNanos, kMaxSampleNanos]; NaN counts as zero.
Duration ToNanos(double ns) {
  if (std::isnan(ns)) return Duration(0);
  ns = std::clamp(ns, -kMaxSampleNanos, kMaxSampleNanos);
  return Duration(std::llround(ns));
}

}  // namespace

std::string_view RegionOf(std::string_view zone) {
  const size_t dash = zone.rfind('-');
  return dash == std::string_view::npos ? zone : zone.substr(0, dash);
}

LatencyModel LatencyModel::Constant(Duration value) {
  LatencyModel m;
  m.kind = Kind::kConstant;
  m.a = value;
  return m;
}

LatencyModel LatencyModel::Uniform(Duration min, Duration max) {
  LatencyModel m;
  m.kind = Kind::kUniform;
  m.a = min;
  m.b = max;
  return m;
}

LatencyModel LatencyModel::Normal(Duration mean, Duration stddev,
                                  Duration floor) {
  LatencyModel m;
  m.kind = Kind::kNormal;
  m.a = mean;
  m.b = stddev;
  m.floor = floor;
  return m;
}

LatencyModel LatencyModel::LogNormal(Duration median, double sigma,
                                     Duration floor) {
  LatencyModel m;
  m.kind = Kind::kLogNormal;
  m.a = median;
  m.sigma = sigma;
  m.floor = floor;
  return m;
}

LatencyModel LatencyModel::Exponential(Duration mean, Duration floor) {
  LatencyModel m;
  m.kind = Kind::kExponential;
  m.a = mean;
  m.floor = floor;
  return m;
}

Duration LatencyModel::Sample(Rng& rng) const {
  Duration value{0};
  switch (kind) {
    case Kind::kConstant:
      value = a;
      break;
    case Kind::kUniform:
      // [min, max): min included, max excluded; an empty range gives min.
      value = b > a ? Duration(UniformInt(rng, a.count(), b.count() - 1)) : a;
      break;
    case Kind::kNormal:
      value = ToNanos(sim::Normal(rng, static_cast<double>(a.count()),
                                  static_cast<double>(b.count())));
      break;
    case Kind::kLogNormal: {
      // The median of exp(N(mu, sigma)) is exp(mu), so mu = ln(median).
      // Draw even for a non-positive median, to keep draws per sample fixed.
      const double mu =
          a.count() > 0 ? std::log(static_cast<double>(a.count())) : 0.0;
      const double sample = sim::LogNormal(rng, mu, sigma);
      value = a.count() > 0 ? ToNanos(sample) : Duration(0);
      break;
    }
    case Kind::kExponential:
      value = floor +
              ToNanos(sim::Exponential(rng, static_cast<double>(a.count())));
      break;
  }
  return std::max(value, floor);
}

Transport::Transport(Scheduler& scheduler, Rng rng, TransportDefaults defaults)
    : scheduler_(scheduler), rng_(rng), defaults_(std::move(defaults)) {}

Transport::Link& Transport::GetLink(std::string_view from,
                                    std::string_view to) {
  auto it = links_.find(std::make_pair(from, to));
  if (it == links_.end()) {
    it =
        links_
            .emplace(std::make_pair(std::string(from), std::string(to)), Link{})
            .first;
  }
  return it->second;
}

const Transport::Link* Transport::FindLink(std::string_view from,
                                           std::string_view to) const {
  auto it = links_.find(std::make_pair(from, to));
  return it == links_.end() ? nullptr : &it->second;
}

const LatencyModel& Transport::ModelFor(std::string_view from,
                                        std::string_view to,
                                        const Link* link) const {
  if (everywhere_) return *everywhere_;
  if (link != nullptr && link->latency) return *link->latency;
  if (from == to) return defaults_.same_zone;
  if (RegionOf(from) == RegionOf(to)) return defaults_.same_region;
  return defaults_.cross_region;
}

void Transport::Send(std::string_view from, std::string_view to, Task deliver,
                     int64_t bytes) {
  Link& link = GetLink(from, to);
  ++link.stats.sent;
  if (link.cut) {
    ++link.stats.partitioned;
    return;
  }
  if (!link.rng) {
    std::string name(from);
    name += "->";
    name += to;
    link.rng.emplace(rng_.Fork(name));
  }
  // The loss draw comes first, and only for 0 < loss < 1 (Bernoulli); a
  // lost message takes no latency sample.
  if (link.rng->Bernoulli(link.loss)) {
    ++link.stats.lost;
    return;
  }
  const Time now = scheduler_.Now();
  const Duration delay =
      std::max(ModelFor(from, to, &link).Sample(*link.rng), Duration(0));
  // With a bandwidth, the message leaves once the wire is free and it has
  // been written onto it.
  Time departure = now;
  const int64_t bandwidth =
      link.bandwidth > 0 ? link.bandwidth : default_bandwidth_;
  if (bandwidth > 0 && bytes > 0) {
    const auto on_wire = ToNanos(std::ceil(static_cast<double>(bytes) * 1e9 /
                                           static_cast<double>(bandwidth)));
    departure = std::max(now, link.wire_free) + on_wire;
    link.wire_free = departure;
  }
  // FIFO: never before the message accepted before this one. Ties keep
  // send order because the scheduler runs same-time tasks in order.
  const Time arrival = std::max(departure + delay, link.last_arrival);
  link.last_arrival = arrival;
  // std::map never moves its nodes and links are never erased, so the
  // pointer stays valid for as long as the Transport.
  Link* target = &link;
  scheduler_.RunAfter(arrival - now,
                      [target, deliver = std::move(deliver)]() mutable {
                        if (target->cut) {
                          ++target->stats.partitioned;
                          return;
                        }
                        ++target->stats.delivered;
                        if (deliver) deliver();
                      });
}

void Transport::SetLatency(std::string_view from, std::string_view to,
                           LatencyModel model, bool one_way) {
  GetLink(from, to).latency = model;
  if (!one_way) GetLink(to, from).latency = model;
  ++latency_version_;
}

void Transport::ClearLatency(std::string_view from, std::string_view to,
                             bool one_way) {
  GetLink(from, to).latency.reset();
  if (!one_way) GetLink(to, from).latency.reset();
  ++latency_version_;
}

void Transport::SetLatencyEverywhere(std::optional<LatencyModel> model) {
  everywhere_ = std::move(model);
  ++latency_version_;
}

void Transport::SetBandwidth(std::string_view from, std::string_view to,
                             int64_t bytes_per_second, bool one_way) {
  GetLink(from, to).bandwidth = std::max<int64_t>(bytes_per_second, 0);
  if (!one_way)
    GetLink(to, from).bandwidth = std::max<int64_t>(bytes_per_second, 0);
}

int64_t Transport::BandwidthOf(std::string_view from,
                               std::string_view to) const {
  const Link* link = FindLink(from, to);
  return link != nullptr && link->bandwidth > 0 ? link->bandwidth
                                                : default_bandwidth_;
}

void Transport::SetDefaultBandwidth(int64_t bytes_per_second) {
  default_bandwidth_ = std::max<int64_t>(bytes_per_second, 0);
}

void Transport::SetLoss(std::string_view from, std::string_view to, double p,
                        bool one_way) {
  GetLink(from, to).loss = p;
  if (!one_way) GetLink(to, from).loss = p;
}

void Transport::Partition(std::string_view a, std::string_view b,
                          bool one_way) {
  GetLink(a, b).cut = true;
  if (!one_way) GetLink(b, a).cut = true;
}

void Transport::Heal(std::string_view a, std::string_view b) {
  GetLink(a, b).cut = false;
  GetLink(b, a).cut = false;
}

bool Transport::IsCut(std::string_view from, std::string_view to) const {
  const Link* link = FindLink(from, to);
  return link != nullptr && link->cut;
}

LatencyModel Transport::LatencyOf(std::string_view from,
                                  std::string_view to) const {
  return ModelFor(from, to, FindLink(from, to));
}

LinkStats Transport::StatsOf(std::string_view from, std::string_view to) const {
  const Link* link = FindLink(from, to);
  return link == nullptr ? LinkStats{} : link->stats;
}

}  // namespace btsim::sim
