// Fuzz target: replication apply (replication/replicas.h). The input is a
// schedule on two or three clusters in virtual time: commits of every kind
// on any cluster (writes with server and back-dated timestamps, the three
// deletes, appends, increments, conditional writes, DropRowRange, schema
// changes), time passing between them (so deliveries interleave with
// commits), partitions (one-way ones lose acknowledgements, so batches are
// sent again: duplicates), latency changes with jitter (reordering), loss,
// clusters down and up, replaced, skewed clocks, compaction, and what the
// receiving nodes do with each batch (apply now, later, or refuse it until
// it is sent again). The schedule is the property tests' random world
// (tests/replication/replicas_property_test.cc) with its choices read from
// the input instead of a seeded generator.
//
// Tables are created everywhere at once, as the product creates them (see
// World's constructor); everything else travels the logs. GC rule changes
// do so half the time, although the product (the table admin service, the
// scenarios' set_gc_rule step) always applies them everywhere at once: the
// engine converges either way (GC is a function of the committed history,
// cluster/internal/column_gc.h), and a change through the logs reaches
// more schedules (the finding kept as
// corpus/replication/regression-gc-rule-change-with-skew came that way, and
// its cause, compaction judging past a skewed cluster's own next commit,
// diverged the product's way too).
//
// At the end every link is healed, every cluster brought up and its clock
// set right, and the scheduler run until idle and until the clocks agree;
// then every cluster must have applied every log, with no backlog, and hold
// the same contents (before compaction too, unless a GC rule was set: GC
// may then have removed cells on some clusters and not yet on others).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/check.h"
#include "cluster/mutation.h"
#include "replication/replicas.h"
#include "sim/fingerprint.h"
#include "sim/transport.h"
#include "sim/virtual_scheduler.h"
#include "tests/fuzz/fuzz_input.h"

namespace btsim::replication {
namespace {

using cluster::FamilyModification;
using cluster::GcRule;
using cluster::Mutation;
using fuzz::FuzzInput;
using std::chrono::milliseconds;

constexpr sim::Time kStart{sim::Duration(1'700'000'000'000'000'000)};
constexpr int kMaxSteps = 200;
const char* const kZones[] = {"us-east1-b", "us-east1-c", "europe-west1-d",
                              "asia-east1-a"};
const char* const kKeys[] = {"k0", "k1", "k2", "k3", "k30", "k4"};

class World {
 public:
  explicit World(FuzzInput& in)
      : in_(in),
        scheduler_(kStart),
        transport_(scheduler_, sim::Rng(7)),
        replicas_(scheduler_, transport_, sim::Rng(11), ReadOptions(in)) {
    const int clusters = 2 + static_cast<int>(in_.Below(2));
    for (int i = 0; i < clusters; ++i) {
      Add({"c" + std::to_string(i), kZones[i]});
    }
    replicas_.set_apply_queue(
        [this](uint32_t, std::string_view,
               std::span<const cluster::CommitRecord* const>)
            -> std::optional<sim::Time> {
          const sim::Time now = scheduler_.Now();
          if (settling_) return now;
          switch (in_.Below(4)) {
            case 0:
              return now;
            case 1:
              return now + milliseconds(1 + in_.Below(20));
            case 2:
              return now + milliseconds(in_.Below(2000));
            default:
              return std::nullopt;  // refused: sent again later
          }
        });
    std::vector<FamilyModification> families = {
        {"a", FamilyModification::Kind::kCreate, GcRule()},
        {"b", FamilyModification::Kind::kCreate, GcRule()}};
    if (in_.Bool()) {
      families[0].gc_rule = GcRule::MaxVersions(2);
      families[1].gc_rule = GcRule::MaxAge(milliseconds(2000));
      gc_rules_ = true;
    }
    // Everywhere at once, as the product always creates tables (the
    // table admin service, scenarios/run_setup.cc): a creation that
    // travelled the logs could arrive after a peer's change to the table,
    // which the engine then ignores (Cluster::ApplyReplicated).
    const std::string origin = Id();
    Trace("table t created on " + origin + ", everywhere at once: a (" +
          families[0].gc_rule.ToString() + "), b (" +
          families[1].gc_rule.ToString() + ")");
    const Status s = Cluster(origin).CreateTable("t", families, {"k2"});
    BTSIM_CHECK_MSG(s.ok(), s.ToString());
    replicas_.ApplyNewestEverywhere(origin);
  }

  void Run() {
    for (int step = 0; step < kMaxSteps && !in_.empty(); ++step) Step();
  }

  // Heals, brings everything up, runs until idle, and checks convergence.
  void SettleAndCheck() {
    settling_ = true;
    for (const std::string& a : zones_) {
      for (const std::string& b : zones_) {
        transport_.Heal(a, b);
        transport_.SetLoss(a, b, 0.0);
      }
    }
    for (const std::string& id : replicas_.ClusterIds()) {
      BTSIM_CHECK(replicas_.SetDown(id, false).ok());
      BTSIM_CHECK(replicas_.SetStalled(id, false).ok());
      BTSIM_CHECK(replicas_.SetClockOffset(id, sim::Duration(0)).ok());
    }
    scheduler_.RunUntilIdle(5'000'000);
    // Until every clock agrees again (a clock set back waits for the
    // scheduler's), clusters may judge a cell's age differently, and GC
    // differ for a while, as it may in Bigtable.
    scheduler_.RunFor(kMaxClockOffset + std::chrono::seconds(1));
    BTSIM_CHECK_MSG(scheduler_.pending() == 0, "replication never went idle");
    BTSIM_CHECK_MSG(replicas_.HasApplied(replicas_.LogPositions()),
                    "a cluster has not applied every log");
    for (const std::string& a : replicas_.ClusterIds()) {
      for (const std::string& b : replicas_.ClusterIds()) {
        BTSIM_CHECK_MSG(replicas_.Backlog(a, b) == 0,
                        "backlog left on " + a + " -> " + b);
      }
    }
    if (!gc_rules_) CheckSame("after settling");
    replicas_.CompactAll();
    CheckSame("after compaction");
  }

 private:
  static ReplicationOptions ReadOptions(FuzzInput& in) {
    ReplicationOptions o;
    o.batch_entries = 1 + in.Below(6);
    o.batches_in_flight = 1 + static_cast<int>(in.Below(8));
    o.initial_retransmit = milliseconds(20 + in.Below(2000));
    o.table = cluster::TableOptions{4096, 8, 4};
    return o;
  }

  // Table "t" on cluster `id`, one line per cell, for a finding's report.
  std::string Dump(std::string_view id) {
    std::string out;
    auto table = Cluster(id).GetTable("t");
    if (table.ok()) {
      out += "  families:";
      for (const cluster::ColumnFamily& f : (*table)->Families()) {
        out += " " + f.name + " (" + f.gc_rule.ToString() + ")";
      }
      out += "\n";
    }
    const Status s = Cluster(id).ReadRows(
        "t", cluster::ReadOptions{},
        [&](std::string_view key, std::span<const cluster::CellView> cells) {
          for (const cluster::CellView& c : cells) {
            out += "  " + std::string(key) + " " + std::string(c.family) + ":" +
                   std::string(c.qualifier) + "@" +
                   std::to_string(cluster::Micros(c.timestamp)) + " = " +
                   QuoteForError(c.value) + "\n";
          }
          return true;
        });
    if (!s.ok()) out += "  " + s.ToString() + "\n";
    return out;
  }

  void CheckSame(const char* when) {
    std::string first;
    for (const std::string& id : replicas_.ClusterIds()) {
      sim::Fingerprint f;
      Cluster(id).AddContents(&f);
      if (first.empty()) {
        first = f.Hex();
        continue;
      }
      if (f.Hex() == first) continue;
      std::string report = std::string("a cluster diverged ") + when + ":\n";
      for (const std::string& each : replicas_.ClusterIds()) {
        report += each + ":\n" + Dump(each);
      }
      BTSIM_CHECK_MSG(false, report);
    }
  }

  void Add(const ClusterSpec& spec) {
    const Status s = replicas_.AddCluster(spec);
    BTSIM_CHECK_MSG(s.ok(), s.ToString());
    zones_.insert(spec.zone);
  }

  cluster::Cluster& Cluster(std::string_view id) {
    cluster::Cluster* c = replicas_.Find(id);
    BTSIM_CHECK(c != nullptr);
    return *c;
  }

  std::string Id() {
    const std::vector<std::string> ids = replicas_.ClusterIds();
    return ids[in_.Below(ids.size())];
  }

  std::pair<std::string, std::string> Link() {
    const std::vector<std::string> ids = replicas_.ClusterIds();
    const size_t a = in_.Below(ids.size());
    size_t b = in_.Below(ids.size() - 1);
    if (b >= a) ++b;
    return {replicas_.Spec(ids[a])->zone, replicas_.Spec(ids[b])->zone};
  }

  std::string Key() { return kKeys[in_.Below(6)]; }

  cluster::Timestamp Millisecond() {
    return cluster::TimestampFromMicros(static_cast<int64_t>(in_.Below(5)) *
                                        1000);
  }

  Mutation ReadMutation() {
    static const char* const kFamilies[] = {"a", "b", "c"};
    static const char* const kQualifiers[] = {"x", "y", "z"};
    const std::string family = kFamilies[in_.Below(3)];
    const std::string qualifier = kQualifiers[in_.Below(3)];
    const uint64_t kind = in_.Below(10);
    if (kind < 6) {
      const cluster::Timestamp ts =
          in_.Below(3) == 0 ? cluster::kServerTimestamp : Millisecond();
      return cluster::SetCell{family, qualifier, ts,
                              "v" + std::to_string(in_.Below(100))};
    }
    if (kind < 8) {
      const int64_t start = static_cast<int64_t>(in_.Below(4)) * 1000;
      const int64_t end =
          in_.Bool() ? 0
                     : start + static_cast<int64_t>(1 + in_.Below(3)) * 1000;
      return cluster::DeleteFromColumn{family, qualifier,
                                       cluster::TimestampFromMicros(start),
                                       cluster::TimestampFromMicros(end)};
    }
    if (kind < 9) return cluster::DeleteFromFamily{family};
    return cluster::DeleteFromRow{};
  }

  // Family "c" may be missing on a cluster, and the table itself on one
  // that its creation has not reached yet: NOT_FOUND is an answer.
  static void CheckWrite(const Status& s) {
    BTSIM_CHECK_MSG(s.ok() || s.code() == StatusCode::kNotFound, s.ToString());
  }

  GcRule ReadGcRule(int depth = 0) {
    switch (in_.Below(depth == 0 ? 5 : 3)) {
      case 0:
        return GcRule();
      case 1:
        return GcRule::MaxVersions(1 + static_cast<int64_t>(in_.Below(3)));
      case 2:
        return GcRule::MaxAge(
            milliseconds(1000 * (1 + static_cast<int64_t>(in_.Below(30)))));
      case 3:
        return GcRule::Intersection(
            {ReadGcRule(depth + 1), ReadGcRule(depth + 1)});
      default:
        return GcRule::Union({ReadGcRule(depth + 1), ReadGcRule(depth + 1)});
    }
  }

  // As the property tests: a GC rule change of "a" (through the logs or
  // everywhere at once), or "c" dropped or created everywhere at once, as
  // the admin layer does.
  void ChangeSchema() {
    const std::string id = Id();
    std::vector<FamilyModification> mods;
    if (in_.Below(5) < 3) {
      mods.push_back({"a", FamilyModification::Kind::kUpdate, ReadGcRule()});
    } else {
      auto table = Cluster(id).GetTable("t");
      if (!table.ok()) return;
      if ((*table)->HasFamily("c")) {
        mods.push_back({"c", FamilyModification::Kind::kDrop, {}});
      } else {
        mods.push_back({"c", FamilyModification::Kind::kCreate, ReadGcRule()});
      }
    }
    gc_rules_ = true;
    const bool at_once =
        mods[0].kind != FamilyModification::Kind::kUpdate || in_.Bool();
    Trace("schema change of " + mods[0].name + " on " + id +
          (mods[0].kind == FamilyModification::Kind::kDrop
               ? ": dropped"
               : ": " + mods[0].gc_rule.ToString()) +
          (at_once ? ", everywhere at once" : ""));
    if (at_once) replicas_.OrderAfterEverything(id);
    const Status s = Cluster(id).ModifyColumnFamilies("t", mods);
    CheckWrite(s);
    if (at_once && s.ok()) replicas_.ApplyNewestEverywhere(id);
  }

  void ReadModifyWrite() {
    cluster::ReadModifyWriteRule rule;
    rule.family = in_.Bool() ? "a" : "b";
    if (in_.Bool()) {
      rule.qualifier = "s";
      rule.kind = cluster::ReadModifyWriteRule::Kind::kAppend;
      rule.append_value = "+" + std::to_string(in_.Below(10));
    } else {
      rule.qualifier = "n";
      rule.kind = cluster::ReadModifyWriteRule::Kind::kIncrement;
      rule.increment_amount = 1 + static_cast<int64_t>(in_.Below(5));
    }
    const std::string id = Id();
    const std::string key = Key();
    Trace("read-modify-write on " + id + " row " + key + ": " + rule.family +
          ":" + rule.qualifier +
          (rule.kind == cluster::ReadModifyWriteRule::Kind::kAppend
               ? " append " + rule.append_value
               : " increment " + std::to_string(rule.increment_amount)));
    CheckWrite(Cluster(id).ReadModifyWriteRow("t", key, {&rule, 1}).status());
  }

  void ReplaceCluster() {
    const std::vector<std::string> ids = replicas_.ClusterIds();
    const std::string id = ids[in_.Below(ids.size())];
    const std::string zone = replicas_.Spec(id)->zone;
    BTSIM_CHECK(replicas_.RemoveCluster(id).ok());
    Add({"n" + std::to_string(++replaced_), zone});
    Trace("removed " + id + ", added n" + std::to_string(replaced_));
  }

  // With BTSIM_FUZZ_TRACE set, prints what each step does (to read a
  // finding's schedule); it changes nothing else.
  void Trace(const std::string& what) {
    static const bool on = std::getenv("BTSIM_FUZZ_TRACE") != nullptr;
    if (!on) return;
    std::fprintf(
        stderr, "%.3f s: %s\n",
        std::chrono::duration<double>(scheduler_.Now() - kStart).count(),
        what.c_str());
  }

  static std::string Describe(const Mutation& m) {
    if (const auto* set = std::get_if<cluster::SetCell>(&m)) {
      return "set " + set->family + ":" + set->qualifier + "@" +
             std::to_string(cluster::Micros(set->timestamp)) + "=" + set->value;
    }
    if (const auto* col = std::get_if<cluster::DeleteFromColumn>(&m)) {
      return "delete " + col->family + ":" + col->qualifier + " [" +
             std::to_string(cluster::Micros(col->start)) + ", " +
             std::to_string(cluster::Micros(col->end)) + ")";
    }
    if (const auto* fam = std::get_if<cluster::DeleteFromFamily>(&m)) {
      return "delete family " + fam->family;
    }
    if (const auto* add = std::get_if<cluster::AddToCell>(&m)) {
      return "add " + add->family + ":" + add->qualifier + "@" +
             std::to_string(cluster::Micros(add->timestamp));
    }
    return "delete row";
  }

  void Step() {
    const uint64_t action = in_.Below(20);
    Trace("step " + std::to_string(action));
    switch (action) {
      case 0:
      case 1:
      case 2:
      case 3:
      case 4: {
        std::vector<Mutation> mutations;
        for (uint64_t n = 1 + in_.Below(3); n > 0; --n) {
          mutations.push_back(ReadMutation());
        }
        const std::string id = Id();
        const std::string key = Key();
        std::string what = "write on " + id + " row " + key + ":";
        for (const Mutation& m : mutations) what += " " + Describe(m) + ";";
        Trace(what);
        CheckWrite(Cluster(id).MutateRow("t", key, mutations));
        break;
      }
      case 5:
        ReadModifyWrite();
        break;
      case 6: {
        const std::vector<Mutation> if_true = {ReadMutation()};
        const std::vector<Mutation> if_false = {ReadMutation(), ReadMutation()};
        const std::string id = Id();
        const std::string key = Key();
        Trace("check-and-mutate on " + id + " row " + key + ": if any cell " +
              Describe(if_true[0]) + "; else " + Describe(if_false[0]) + "; " +
              Describe(if_false[1]) + ";");
        CheckWrite(Cluster(id)
                       .CheckAndMutateRow("t", key, nullptr, if_true, if_false)
                       .status());
        break;
      }
      case 7: {
        static const char* const kPrefixes[] = {"k3", "k1", "k"};
        const std::string id = Id();
        const std::string prefix = kPrefixes[in_.Below(3)];
        Trace("drop rows '" + prefix + "' on " + id);
        CheckWrite(Cluster(id).DropRowRange("t", prefix));
        break;
      }
      case 8:
      case 9:
        scheduler_.RunFor(milliseconds(in_.Below(300)));
        break;
      case 10:
        scheduler_.RunFor(milliseconds(1000 + in_.Below(5000)));
        break;
      case 11: {
        const auto [a, b] = Link();
        const bool one_way = in_.Bool();
        Trace("partition " + a + (one_way ? " -> " : " <-> ") + b);
        transport_.Partition(a, b, one_way);
        break;
      }
      case 12: {
        const auto [a, b] = Link();
        transport_.Heal(a, b);
        break;
      }
      case 13: {
        const auto [a, b] = Link();
        const bool one_way = in_.Bool();
        if (in_.Bool()) {
          transport_.SetLatency(
              a, b, sim::LatencyModel::Constant(milliseconds(in_.Below(2000))),
              one_way);
        } else {
          transport_.SetLatency(
              a, b,
              sim::LatencyModel::Uniform(milliseconds(1),
                                         milliseconds(2 + in_.Below(1500))),
              one_way);
        }
        break;
      }
      case 14: {
        const auto [a, b] = Link();
        static constexpr double kLoss[] = {0.0, 0.2, 0.5, 0.8};
        transport_.SetLoss(a, b, kLoss[in_.Below(4)], in_.Bool());
        break;
      }
      case 15: {
        const std::string id = Id();
        Trace((replicas_.IsDown(id) ? "up " : "down ") + id);
        BTSIM_CHECK(replicas_.SetDown(id, !replicas_.IsDown(id)).ok());
        break;
      }
      case 16:
        ChangeSchema();
        break;
      case 17: {
        const std::string id = Id();
        if (in_.Bool()) {
          Trace((replicas_.IsStalled(id) ? "unstall " : "stall ") + id);
          BTSIM_CHECK(replicas_.SetStalled(id, !replicas_.IsStalled(id)).ok());
        } else {
          const auto offset =
              milliseconds(static_cast<int64_t>(in_.Below(4001)) - 2000);
          Trace("clock of " + id + " off by " + std::to_string(offset.count()) +
                " ms");
          BTSIM_CHECK(replicas_.SetClockOffset(id, offset).ok());
        }
        break;
      }
      case 18:
        ReplaceCluster();
        break;
      default:
        replicas_.CompactAll();
        break;
    }
  }

  FuzzInput& in_;
  sim::VirtualScheduler scheduler_;
  sim::Transport transport_;
  Replicas replicas_;
  std::set<std::string> zones_;
  int replaced_ = 0;
  bool gc_rules_ = false;
  bool settling_ = false;
};

}  // namespace
}  // namespace btsim::replication

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  btsim::fuzz::FuzzInput in(data, size);
  btsim::replication::World world(in);
  world.Run();
  world.SettleAndCheck();
  return 0;
}
