// The durable store's test fixture: a "process" (a scheduler, its
// instances and its store) that can be started again on the same
// directory, and a populated two-cluster instance.
#ifndef BTSIM_TESTS_DURABLE_STORE_FIXTURE_H_
#define BTSIM_TESTS_DURABLE_STORE_FIXTURE_H_

#include <stdlib.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cluster/cluster.h"
#include "durable/store.h"
#include "instance/instance.h"
#include "sim/fingerprint.h"
#include "sim/virtual_scheduler.h"

namespace btsim::durable::testing {

using cluster::FamilyModification;
using instance::Instance;
using instance::InstanceConfig;

inline constexpr char kName[] = "projects/p/instances/i";

inline std::string TempDir() {
  std::string pattern = ::testing::TempDir() + "store_XXXXXX";
  EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
  return pattern;
}

inline InstanceConfig TwoClusters() {
  InstanceConfig config;
  config.clusters = {{"c1", "us-east1-b", 1}, {"c2", "us-east1-c", 1}};
  config.replication_latency = std::chrono::milliseconds(100);
  return config;
}

// One "process": a scheduler, its instances and (once opened) its store.
struct Process : InstanceAccess {
  explicit Process(InstanceConfig c, int64_t start_seconds)
      : scheduler(sim::Time(std::chrono::seconds(start_seconds))),
        config(std::move(c)) {}
  ~Process() override {
    if (store) store->StopSnapshots();  // before the instances go
    instances.clear();                  // before the store they report to
    store.reset();
  }
  Status With(const std::string& name,
              const std::function<Status(Instance&)>& fn) override {
    std::lock_guard<std::recursive_mutex> lock(mu);
    auto& slot = instances[name];
    if (slot == nullptr) {
      BTSIM_ASSIGN_OR_RETURN(
          slot, Instance::Create(name, scheduler, sim::Rng(7), config));
      if (store) store->OnInstanceCreated(*slot);
    }
    return fn(*slot);
  }
  Status WithAll(
      const std::function<Status(const std::vector<Instance*>&)>& fn) override {
    std::lock_guard<std::recursive_mutex> lock(mu);
    std::vector<Instance*> all;
    for (auto& [name, instance] : instances) all.push_back(instance.get());
    if (after_listing) std::exchange(after_listing, nullptr)();
    return fn(all);
  }
  Instance& Get() {
    Instance* out = nullptr;
    EXPECT_TRUE(With(kName, [&](Instance& i) {
                  out = &i;
                  return OkStatus();
                }).ok());
    return *out;
  }
  // Snapshots only when asked (Store::Snapshot), unless `options` says.
  Result<Recovery> Open(const std::string& dir,
                        StoreOptions options = {.snapshot_journal_bytes = 0}) {
    BTSIM_ASSIGN_OR_RETURN(store, Store::Open(dir, options));
    return store->Recover(*this);
  }

  // Held by With and WithAll: a test that lets the store take snapshots
  // on its own goes through With for everything it does.
  std::recursive_mutex mu;
  // Run once by the next WithAll, after it has listed the instances (an
  // instance created then is not in its list).
  std::function<void()> after_listing;
  sim::VirtualScheduler scheduler;
  InstanceConfig config;
  std::unique_ptr<Store> store;
  std::map<std::string, std::unique_ptr<Instance>> instances;
};

inline std::string Contents(Instance& instance, const std::string& cluster) {
  sim::Fingerprint fp;
  instance.replicas().Find(cluster)->AddContents(&fp);
  return fp.Hex();
}

inline Status Write(Instance& instance, const std::string& cluster,
                    const std::string& key, const std::string& value) {
  const std::vector<cluster::Mutation> m = {
      cluster::SetCell{"cf", "q", cluster::kServerTimestamp, value}};
  return instance.replicas().Find(cluster)->MutateRow("t", key, m);
}

// Makes a table, a profile, a protected table and rows on both clusters,
// part of them replicated; leaves c1's last writes unreplicated.
inline void Populate(Process& p) {
  Instance& i = p.Get();
  const FamilyModification cf{"cf", FamilyModification::Kind::kCreate,
                              cluster::GcRule::MaxVersions(3)};
  ASSERT_TRUE(i.replicas().Find("c1")->CreateTable("t", {&cf, 1}, {}).ok());
  i.replicas().ApplyNewestEverywhere("c1");
  appprofile::AppProfile profile;
  profile.id = "to-c2";
  profile.routing = appprofile::AppProfile::Routing::kSingleCluster;
  profile.cluster_id = "c2";
  ASSERT_TRUE(i.profiles().Create(profile, true).ok());
  i.SetDeletionProtection("t", true);
  for (int k = 0; k < 20; ++k) {
    ASSERT_TRUE(Write(i, k % 2 ? "c1" : "c2", "row" + std::to_string(k),
                      "v" + std::to_string(k))
                    .ok());
  }
  const std::vector<cluster::ReadModifyWriteRule> rules = {
      {"cf", "n", cluster::ReadModifyWriteRule::Kind::kIncrement, "", 5}};
  ASSERT_TRUE(
      i.replicas().Find("c1")->ReadModifyWriteRow("t", "ctr", rules).ok());
  p.scheduler.RunFor(std::chrono::seconds(2));  // all replicated
  // A backlog: c2 stops and c1 writes on.
  ASSERT_TRUE(i.replicas().SetDown("c2", true).ok());
  for (int k = 0; k < 5; ++k) {
    ASSERT_TRUE(Write(i, "c1", "late" + std::to_string(k), "x").ok());
  }
  p.scheduler.RunFor(std::chrono::seconds(2));
  ASSERT_EQ(i.replicas().Backlog("c1", "c2"), 5u);
}

}  // namespace btsim::durable::testing

#endif  // BTSIM_TESTS_DURABLE_STORE_FIXTURE_H_
