// Store: the durable state of `btsim serve --data-dir DIR`. Every served
// instance reports its commits, applies and metadata changes
// (instance::InstanceJournal) to one journal file (durable/framed_log.h),
// written with group commit; Sync() returns once everything reported
// before it is on disk, and the server replies to no call before that
// (api::ServerOptions::before_reply). Once the journal has grown past
// StoreOptions::snapshot_journal_bytes and past the last snapshot's size,
// a snapshot of every instance (durable/snapshot.h) replaces the journal
// so far, and a new journal starts after it. At start, Recover loads the
// newest snapshot and replays the journal after it. docs/durability.md has
// the files, the format and the rules.
//
// Thread-safe. The journal of an instance is called under that instance's
// lock; Recover runs before the server accepts calls.
#ifndef BTSIM_DURABLE_STORE_H_
#define BTSIM_DURABLE_STORE_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/result.h"
#include "durable/framed_log.h"
#include "durable/instance_access.h"
#include "durable/snapshot.h"
#include "instance/instance.h"
#include "sim/time.h"

namespace btsim::durable {

// A snapshot taken (Store::Snapshot).
struct SnapshotReport {
  uint64_t generation = 0;
  uint64_t bytes = 0;
  size_t instances = 0;
  // How long every instance was locked: what calls waited.
  std::chrono::nanoseconds paused{0};
};

struct StoreOptions {
  // A snapshot is taken once the journal holds more than this many bytes
  // and more than the last snapshot's size (so snapshots cost, in all, at
  // most about what the journal wrote); 0: never on its own (Snapshot()).
  uint64_t snapshot_journal_bytes = 64 << 20;
  // Called after each snapshot (empty: nothing), on the thread that took
  // it, with no lock held.
  std::function<void(const SnapshotReport&)> on_snapshot;
};

struct Recovery {
  uint64_t generation = 0;      // of the snapshot loaded (0: none)
  size_t snapshot_records = 0;  // loaded from it
  size_t records = 0;           // replayed from the journal after it
  size_t instances = 0;         // found in the snapshot and the journal
  bool torn_tail = false;
  uint64_t torn_offset = 0;  // where the dropped torn record began
  // The newest commit time found: new commits must order after it.
  sim::Time high_water{};
};

class Store {
 public:
  // FAILED_PRECONDITION naming `dir` when it is missing, not a directory,
  // not writable, or locked by another running btsim (DIR/LOCK, flock).
  static Result<std::unique_ptr<Store>> Open(const std::string& dir,
                                             StoreOptions options = {});
  ~Store();  // stops taking snapshots, syncs what is queued

  // Loads the newest snapshot and replays the journal after it into the
  // instances through `access` (a torn final record is dropped and the
  // file cut there), then journals them from now on and takes snapshots
  // through `access`, which must outlive the store or StopSnapshots.
  // Once, before serving. DATA_LOSS naming the file and the offset for a
  // corrupt record; FAILED_PRECONDITION when the files do not fit the
  // instances (e.g. another cluster configuration).
  Result<Recovery> Recover(InstanceAccess& access);
  // An instance the server created (under its lock): journaled from now on.
  // Ignored while Recover runs (it attaches the instances it replays).
  void OnInstanceCreated(instance::Instance& instance);
  // Blocks until everything journaled so far is on disk.
  void Sync();
  // Calls `done` once everything journaled so far is on disk (at once, or
  // on the journal's flusher thread): what the server's replies wait for.
  void AfterSync(std::function<void()> done);

  // Takes a snapshot now (locking every instance meanwhile) and starts a
  // new journal after it; then removes the files it replaces. UNAVAILABLE
  // when the snapshot cannot be written (the journal goes on as before).
  Status Snapshot();
  // Takes no more snapshots; waits for one under way. Before `access` goes.
  void StopSnapshots();

  std::string journal_path() const;
  uint64_t generation() const;  // of the current journal
  uint64_t snapshots() const;   // taken since Open
  uint64_t syncs() const;

 private:
  class InstanceLog;
  Store(std::string dir, int lock_fd, StoreOptions options);
  // Journals `instance` under number `number`, a new one when absent.
  void Attach(instance::Instance& instance, std::optional<uint32_t> number,
              const v1::Metadata* created_with);
  void Append(const std::string& payload);
  void SnapshotLoop();
  // Replays the journal of generation_ after a snapshot's `instances`.
  Status ReplayJournal(InstanceAccess& access,
                       std::map<uint32_t, InstanceEntry>& instances,
                       Recovery& recovery, uint64_t* end);
  // Removes every snapshot and journal but generation_'s.
  void RemoveOtherGenerations();

  const std::string dir_;
  const int lock_fd_;
  const StoreOptions options_;
  std::mutex snapshot_run_mu_;  // one Snapshot() at a time
  // Held while a snapshot is taken and while a new instance is attached:
  // nothing is journaled meanwhile (the instances' locks stop the rest).
  std::mutex snapshot_mu_;
  mutable std::mutex mu_;  // guards the fields below
  bool recovering_ = false;
  uint32_t next_number_ = 0;
  std::map<std::string, std::unique_ptr<InstanceLog>> logs_;  // by name
  uint64_t generation_ = 0;
  uint64_t journal_start_ = 0;   // the writer's sequence where it began
  uint64_t snapshot_bytes_ = 0;  // the last snapshot's size
  uint64_t snapshots_ = 0;
  bool snapshot_wanted_ = false;
  bool stopping_ = false;
  InstanceAccess* access_ = nullptr;
  std::condition_variable snapshot_cv_;
  std::thread snapshotter_;
  std::unique_ptr<LogWriter> writer_;  // set once by Recover
};

}  // namespace btsim::durable

#endif  // BTSIM_DURABLE_STORE_H_
