#include "appprofile/app_profile.h"

#include <algorithm>
#include <set>
#include <utility>

#include "base/check.h"

namespace btsim::appprofile {
namespace {

constexpr size_t kMaxProfileIdLength = 50;
constexpr char kWarningsPrefix[] = "The operation has the following warnings:";

bool IsIdStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_';
}

bool IsIdChar(char c) { return IsIdStart(c) || c == '-' || c == '.'; }

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::set<std::string> AsSet(const std::vector<std::string>& v) {
  return std::set<std::string>(v.begin(), v.end());
}

std::string Quote(std::string_view s) { return QuoteForError(s); }

// The routing fields form a oneof in Bigtable's API: keep only those of the
// chosen policy, so that a stored profile is canonical.
void Normalize(AppProfile& p) {
  if (p.routing == AppProfile::Routing::kSingleCluster) {
    p.cluster_ids.clear();
  } else {
    p.cluster_id.clear();
    p.allow_transactional_writes = false;
  }
}

std::string RoutingDescription(const AppProfile& p) {
  if (p.routing == AppProfile::Routing::kSingleCluster) {
    return "single-cluster routing to " + Quote(p.cluster_id);
  }
  if (p.cluster_ids.empty()) return "multi-cluster routing to any cluster";
  std::string s = "multi-cluster routing to {";
  bool first = true;
  for (const std::string& id : AsSet(p.cluster_ids)) {
    if (!first) s += ", ";
    s += Quote(id);
    first = false;
  }
  return s + "}";
}

bool RoutingChanged(const AppProfile& before, const AppProfile& after) {
  if (before.routing != after.routing) return true;
  if (after.routing == AppProfile::Routing::kSingleCluster) {
    return before.cluster_id != after.cluster_id;
  }
  return AsSet(before.cluster_ids) != AsSet(after.cluster_ids);
}

Status WarningsStatus(const std::vector<std::string>& warnings) {
  std::string message = kWarningsPrefix;
  for (size_t i = 0; i < warnings.size(); ++i) {
    message += (i == 0 ? " " : "; ");
    message += warnings[i];
  }
  return FailedPrecondition(std::move(message));
}

Status ProfileNotFound(std::string_view id) {
  return NotFound("App profile " + Quote(id) + " not found");
}

}  // namespace

Status ValidateProfileId(std::string_view id) {
  if (id.empty()) return InvalidArgument("app_profile_id must not be empty");
  if (id.size() > kMaxProfileIdLength) {
    return InvalidArgument("app_profile_id " + Quote(id) +
                           " is longer than 50 characters");
  }
  bool ok = IsIdStart(id[0]);
  for (size_t i = 1; ok && i < id.size(); ++i) ok = IsIdChar(id[i]);
  if (!ok) {
    return InvalidArgument("app_profile_id " + Quote(id) +
                           " must match [_a-zA-Z0-9][-_.a-zA-Z0-9]*");
  }
  return OkStatus();
}

ProfileSet::ProfileSet(const std::vector<std::string>& initial_clusters)
    : clusters_(initial_clusters) {
  BTSIM_CHECK_MSG(!initial_clusters.empty(),
                  "an instance has at least one cluster");
  AppProfile def;
  def.id = kDefaultProfileId;
  if (initial_clusters.size() == 1) {
    def.routing = AppProfile::Routing::kSingleCluster;
    def.cluster_id = initial_clusters[0];
    def.allow_transactional_writes = true;
  } else {
    def.routing = AppProfile::Routing::kMultiCluster;
  }
  def.etag = NextEtag();
  profiles_.emplace(def.id, std::move(def));
}

void ProfileSet::SetClusters(std::vector<std::string> clusters) {
  clusters_ = std::move(clusters);
}

Result<AppProfile> ProfileSet::Create(AppProfile profile,
                                      bool ignore_warnings) {
  BTSIM_RETURN_IF_ERROR(ValidateProfileId(profile.id));
  if (profiles_.contains(profile.id)) {
    return AlreadyExists("App profile " + Quote(profile.id) +
                         " already exists");
  }
  if (profiles_.size() >= static_cast<size_t>(kMaxProfiles)) {
    return InvalidArgument(
        "app_profile_id: an instance has at most 2,000 app profiles");
  }
  BTSIM_RETURN_IF_ERROR(CheckClusters(profile));
  Normalize(profile);
  std::vector<std::string> warnings = Warnings(nullptr, profile);
  if (!warnings.empty() && !ignore_warnings) return WarningsStatus(warnings);
  profile.etag = NextEtag();
  auto [it, inserted] = profiles_.emplace(profile.id, std::move(profile));
  BTSIM_CHECK(inserted);
  if (on_change_) on_change_();
  return it->second;
}

Result<AppProfile> ProfileSet::Update(const ProfileUpdate& update,
                                      bool ignore_warnings) {
  auto it = profiles_.find(update.profile.id);
  if (it == profiles_.end()) return ProfileNotFound(update.profile.id);
  const AppProfile& before = it->second;
  if (!update.etag.empty() && update.etag != before.etag) {
    return Aborted("etag mismatch for app profile " + Quote(before.id) +
                   ": the profile was changed since it was read");
  }
  AppProfile after = before;
  if (update.description) after.description = update.profile.description;
  if (update.priority) after.priority = update.profile.priority;
  if (update.routing) {
    const AppProfile& p = update.profile;
    after.routing = p.routing;
    after.cluster_id = p.cluster_id;
    after.allow_transactional_writes = p.allow_transactional_writes;
    after.cluster_ids = p.cluster_ids;
    after.row_affinity = p.row_affinity;
    // An unchanged routing is not re-checked, so that a profile naming a
    // cluster removed since can still have its description edited.
    BTSIM_RETURN_IF_ERROR(CheckClusters(after));
    Normalize(after);
  }
  std::vector<std::string> warnings = Warnings(&before, after);
  if (!warnings.empty() && !ignore_warnings) return WarningsStatus(warnings);
  after.etag = NextEtag();
  it->second = std::move(after);
  if (on_change_) on_change_();
  return it->second;
}

Status ProfileSet::Delete(std::string_view id, bool ignore_warnings) {
  auto it = profiles_.find(std::string(id));
  if (it == profiles_.end()) return ProfileNotFound(id);
  if (!ignore_warnings) {
    return WarningsStatus({"Deleting app profile " + Quote(id) +
                           " may break applications that use it"});
  }
  profiles_.erase(it);
  if (on_change_) on_change_();
  return OkStatus();
}

void ProfileSet::Restore(std::vector<AppProfile> profiles,
                         uint64_t etag_counter) {
  profiles_.clear();
  for (AppProfile& profile : profiles) {
    std::string id = profile.id;
    profiles_.insert_or_assign(std::move(id), std::move(profile));
  }
  etag_counter_ = etag_counter;
}

Result<AppProfile> ProfileSet::Get(std::string_view id) const {
  const AppProfile* profile = Find(id);
  if (profile == nullptr) {
    return ProfileNotFound(id.empty() ? kDefaultProfileId : id);
  }
  return *profile;
}

const AppProfile* ProfileSet::Find(std::string_view id) const {
  if (id.empty()) id = kDefaultProfileId;
  auto it = profiles_.find(id);
  return it == profiles_.end() ? nullptr : &it->second;
}

std::vector<AppProfile> ProfileSet::List() const {
  std::vector<AppProfile> out;
  out.reserve(profiles_.size());
  for (const auto& [id, profile] : profiles_) out.push_back(profile);
  return out;
}

std::vector<std::string> ProfileSet::Warnings(const AppProfile* before,
                                              const AppProfile& after) const {
  std::vector<std::string> warnings;
  if (before != nullptr && RoutingChanged(*before, after)) {
    warnings.push_back("Changing the routing policy of app profile " +
                       Quote(after.id) + " from " +
                       RoutingDescription(*before) + " to " +
                       RoutingDescription(after) +
                       " changes which clusters serve its applications");
  }
  if (before != nullptr && before->transactional() != after.transactional()) {
    warnings.push_back(
        std::string(after.transactional() ? "Allowing" : "Disallowing") +
        " single-row transactions in app profile " + Quote(after.id) +
        (after.transactional()
             ? " can lose updates if they also run on another cluster"
             : " makes CheckAndMutateRow and ReadModifyWriteRow fail"));
  }
  // btsim rule: transactions running on two clusters lose updates. Warn when
  // this change creates such a pair, not for one that already existed.
  const bool pair_may_be_new = before == nullptr || !before->transactional() ||
                               before->cluster_id != after.cluster_id;
  if (after.transactional() && pair_may_be_new) {
    for (const auto& [id, other] : profiles_) {
      if (id == after.id || !other.transactional()) continue;
      if (other.cluster_id == after.cluster_id) continue;
      warnings.push_back(
          "App profiles " + Quote(after.id) + " and " + Quote(id) +
          " both allow single-row transactions but route to different "
          "clusters (" +
          Quote(after.cluster_id) + " and " + Quote(other.cluster_id) +
          "); transactions on both can lose updates");
    }
  }
  return warnings;
}

Status ProfileSet::CheckClusters(const AppProfile& profile) const {
  if (profile.routing == AppProfile::Routing::kSingleCluster) {
    if (profile.row_affinity) {
      return InvalidArgument(
          "multi_cluster_routing_use_any.row_affinity: row affinity requires "
          "multi-cluster routing");
    }
    if (profile.cluster_id.empty()) {
      return InvalidArgument(
          "single_cluster_routing.cluster_id must not be empty");
    }
    if (!Contains(clusters_, profile.cluster_id)) {
      return InvalidArgument("single_cluster_routing.cluster_id: cluster " +
                             Quote(profile.cluster_id) +
                             " is not in the instance");
    }
    return OkStatus();
  }
  std::set<std::string> seen;
  for (const std::string& id : profile.cluster_ids) {
    if (!Contains(clusters_, id)) {
      return InvalidArgument(
          "multi_cluster_routing_use_any.cluster_ids: "
          "cluster " +
          Quote(id) + " is not in the instance");
    }
    if (!seen.insert(id).second) {
      return InvalidArgument(
          "multi_cluster_routing_use_any.cluster_ids: "
          "cluster " +
          Quote(id) + " is listed twice");
    }
  }
  return OkStatus();
}

std::string ProfileSet::NextEtag() {
  return "btsim-etag-" + std::to_string(++etag_counter_);
}

}  // namespace btsim::appprofile
