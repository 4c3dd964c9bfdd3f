// App profiles of one instance: their fields, validation, the default
// profile rule, and the warnings that make risky changes fail unless
// ignore_warnings is set. Not thread-safe; the owner serialises access.
#ifndef BTSIM_APPPROFILE_APP_PROFILE_H_
#define BTSIM_APPPROFILE_APP_PROFILE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace btsim::appprofile {

inline constexpr int kMaxProfiles = 2000;
inline constexpr char kDefaultProfileId[] = "default";

enum class Priority { kUnspecified, kLow, kMedium, kHigh };

struct AppProfile {
  enum class Routing { kSingleCluster, kMultiCluster };

  std::string id;
  std::string description;
  std::string etag;  // set by ProfileSet; changes on every update
  Routing routing = Routing::kMultiCluster;
  // kSingleCluster:
  std::string cluster_id;
  bool allow_transactional_writes = false;
  // kMultiCluster:
  std::vector<std::string> cluster_ids;  // empty: every cluster
  bool row_affinity = false;
  Priority priority = Priority::kUnspecified;  // unset means HIGH

  bool transactional() const {
    return routing == Routing::kSingleCluster && allow_transactional_writes;
  }
  bool operator==(const AppProfile&) const = default;
};

// Ids match [_a-zA-Z0-9][-_.a-zA-Z0-9]* (at most 50 characters).
Status ValidateProfileId(std::string_view id);

// Which fields of an update to apply (UpdateAppProfile's update_mask).
struct ProfileUpdate {
  AppProfile profile;  // id selects the profile; other fields per mask
  bool description = false;
  bool routing = false;  // routing policy, cluster ids, affinity, txn flag
  bool priority = false;
  std::string etag;  // when non-empty, must match the current etag
};

class ProfileSet {
 public:
  // The instance's clusters at creation decide the default profile: one
  // cluster -> single-cluster routing to it with transactional writes;
  // several -> multi-cluster routing to any cluster. Requires at least one.
  explicit ProfileSet(const std::vector<std::string>& initial_clusters);

  // Clusters currently in the instance; profiles may only name these.
  void SetClusters(std::vector<std::string> clusters);

  // ALREADY_EXISTS, INVALID_ARGUMENT (bad id, unknown cluster, empty
  // single-cluster id, limit of 2,000), or FAILED_PRECONDITION listing the
  // warnings when `ignore_warnings` is false.
  Result<AppProfile> Create(AppProfile profile, bool ignore_warnings);
  // NOT_FOUND; ABORTED on an etag mismatch; INVALID_ARGUMENT; or
  // FAILED_PRECONDITION listing the warnings (changing the routing policy,
  // toggling transactional writes, two transactional single-cluster
  // profiles routing to different clusters) unless `ignore_warnings`.
  Result<AppProfile> Update(const ProfileUpdate& update, bool ignore_warnings);
  // NOT_FOUND; FAILED_PRECONDITION (warning: deleting a profile may break
  // applications) unless `ignore_warnings`.
  Status Delete(std::string_view id, bool ignore_warnings);
  // An empty id means the default profile. NOT_FOUND when unknown.
  Result<AppProfile> Get(std::string_view id) const;
  // Get without the copy: nullptr when unknown. Valid until the set
  // changes.
  const AppProfile* Find(std::string_view id) const;
  std::vector<AppProfile> List() const;  // sorted by id

  // Called after every successful Create, Update and Delete (not after
  // Restore or SetClusters). Empty: nothing is called.
  void set_on_change(std::function<void()> on_change) {
    on_change_ = std::move(on_change);
  }
  // The counter behind the etags, for Restore.
  uint64_t etag_counter() const { return etag_counter_; }
  // Replaces every profile (the default one included) with `profiles`,
  // etags as given, and the etag counter (recovery of a served instance;
  // nothing is checked).
  void Restore(std::vector<AppProfile> profiles, uint64_t etag_counter);

 private:
  std::vector<std::string> Warnings(const AppProfile* before,
                                    const AppProfile& after) const;
  Status CheckClusters(const AppProfile& profile) const;
  std::string NextEtag();

  std::vector<std::string> clusters_;
  std::map<std::string, AppProfile, std::less<>> profiles_;
  uint64_t etag_counter_ = 0;
  std::function<void()> on_change_;
};

}  // namespace btsim::appprofile

#endif  // BTSIM_APPPROFILE_APP_PROFILE_H_
