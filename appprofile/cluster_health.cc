#include "appprofile/cluster_health.h"

#include <algorithm>

namespace btsim::appprofile {

Status DetectorOptions::Validate(const std::string& field) const {
  auto bad = [&](const std::string& name, const std::string& why) {
    return InvalidArgument(field + "." + name + ": " + why);
  };
  if (consecutive_failures < 1) {
    return bad("consecutive_failures", "must be at least 1");
  }
  if (!(error_rate > 0 && error_rate <= 1)) {
    return bad("error_rate", "must be in (0, 1]");
  }
  if (window <= sim::Duration(0)) return bad("window", "must be positive");
  if (min_requests < 1) return bad("min_requests", "must be at least 1");
  if (base_ejection <= sim::Duration(0)) {
    return bad("base_ejection", "must be positive");
  }
  if (max_ejection < base_ejection) {
    return bad("max_ejection", "must be at least base_ejection");
  }
  if (probe_interval <= sim::Duration(0)) {
    return bad("probe_interval", "must be positive");
  }
  if (readmit_after < 1) return bad("readmit_after", "must be at least 1");
  if (probe_timeout <= sim::Duration(0)) {
    return bad("probe_timeout", "must be positive");
  }
  if (!(failover_after >= 0 && failover_after < 1)) {
    return bad("failover_after", "must be in [0, 1)");
  }
  return OkStatus();
}

bool IsHealthFailure(StatusCode code) {
  switch (code) {
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kInternal:
    case StatusCode::kUnknown:
    case StatusCode::kResourceExhausted:
    case StatusCode::kAborted:
      return true;
    default:
      return false;
  }
}

ClusterHealth::State& ClusterHealth::StateOf(std::string_view cluster) {
  for (State& s : states_) {
    if (s.cluster == cluster) return s;
  }
  State& s = states_.emplace_back();
  s.cluster = std::string(cluster);
  return s;
}

const ClusterHealth::State* ClusterHealth::Find(
    std::string_view cluster) const {
  for (const State& s : states_) {
    if (s.cluster == cluster) return &s;
  }
  return nullptr;
}

void ClusterHealth::Eject(State& s, sim::Time now) {
  if (s.ejections > 0 && now - s.last_ejection_end > options_.max_ejection) {
    s.ejections = 0;  // admitted long enough: a fresh start
  }
  ++s.ejections;
  ++s.total_ejections;
  s.ejected = true;
  s.ejected_at = now;
  s.ejected_until = now + std::min(options_.base_ejection * s.ejections,
                                   options_.max_ejection);
  s.next_probe = now + options_.probe_interval;
  s.probe_successes = 0;
  s.consecutive_failures = 0;
  s.recent.clear();
  s.recent_failures = 0;
}

bool ClusterHealth::RecordOutcome(std::string_view cluster, StatusCode code,
                                  sim::Time now) {
  State& s = StateOf(cluster);
  if (s.ejected) return false;
  const bool failed = IsHealthFailure(code);
  s.consecutive_failures = failed ? s.consecutive_failures + 1 : 0;
  s.recent.emplace_back(now, failed);
  s.recent_failures += failed ? 1 : 0;
  while (!s.recent.empty() && s.recent.front().first <= now - options_.window) {
    s.recent_failures -= s.recent.front().second ? 1 : 0;
    s.recent.pop_front();
  }
  const auto outcomes = static_cast<int>(s.recent.size());
  if (s.consecutive_failures >= options_.consecutive_failures ||
      (outcomes >= options_.min_requests &&
       s.recent_failures >= options_.error_rate * outcomes)) {
    Eject(s, now);
    return true;
  }
  return false;
}

bool ClusterHealth::RecordProbe(std::string_view cluster, bool ok,
                                sim::Time now) {
  // A probe of a cluster forgotten since (removed) is ignored.
  auto found =
      std::find_if(states_.begin(), states_.end(),
                   [&](const State& s) { return s.cluster == cluster; });
  if (found == states_.end() || !found->ejected) return false;
  State& s = *found;
  s.probe_successes = ok ? s.probe_successes + 1 : 0;
  if (now >= s.ejected_until && s.probe_successes >= options_.readmit_after) {
    s.ejected = false;
    s.last_ejection_end = now;
    return true;
  }
  return false;
}

std::vector<ClusterHealth::ClusterView> ClusterHealth::Views() const {
  std::vector<ClusterView> views;
  for (const State& s : states_) {
    views.push_back({s.cluster, s.ejected, s.ejected_at, s.total_ejections});
  }
  return views;
}

void ClusterHealth::Forget(std::string_view cluster) {
  std::erase_if(states_, [&](const State& s) { return s.cluster == cluster; });
}

bool ClusterHealth::Admitted(std::string_view cluster) const {
  const State* s = Find(cluster);
  return s == nullptr || !s->ejected;
}

std::vector<std::string> ClusterHealth::ProbesDue(sim::Time now) {
  std::vector<std::string> due;
  for (State& s : states_) {
    if (!s.ejected || s.next_probe > now) continue;
    due.push_back(s.cluster);
    s.next_probe = now + options_.probe_interval;
  }
  std::sort(due.begin(), due.end());
  return due;
}

bool ClusterHealth::AnyEjected() const {
  return std::any_of(states_.begin(), states_.end(),
                     [](const State& s) { return s.ejected; });
}

int ClusterHealth::Ejections(std::string_view cluster) const {
  const State* s = Find(cluster);
  return s == nullptr ? 0 : s->total_ejections;
}

}  // namespace btsim::appprofile
