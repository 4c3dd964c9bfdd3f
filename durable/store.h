// Store: the durable state of `btsim serve --data-dir DIR`. Every served
// instance reports its commits, applies and metadata changes
// (instance::InstanceJournal) to one journal file, DIR/journal.log
// (durable/framed_log.h), written with group commit; Sync() returns once
// everything reported before it is on disk, and the server replies to no
// call before that (api::ServerOptions::before_reply). At start, Recover
// replays the journal into the instances. docs/durability.md has the
// format and the rules.
//
// Thread-safe. The journal of an instance is called under that instance's
// lock; Recover runs before the server accepts calls.
#ifndef BTSIM_DURABLE_STORE_H_
#define BTSIM_DURABLE_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "base/result.h"
#include "durable/framed_log.h"
#include "instance/instance.h"
#include "sim/time.h"

namespace btsim::durable {

// How the store reaches the served instances during recovery.
class InstanceAccess {
 public:
  virtual ~InstanceAccess() = default;
  // Runs `fn` on the instance named `name` (created if new) under its lock.
  virtual Status With(const std::string& name,
                      const std::function<Status(instance::Instance&)>& fn) = 0;
};

struct Recovery {
  size_t records = 0;    // replayed
  size_t instances = 0;  // found in the journal
  bool torn_tail = false;
  uint64_t torn_offset = 0;  // where the dropped torn record began
  // The newest commit time found: new commits must order after it.
  sim::Time high_water{};
};

class Store {
 public:
  // FAILED_PRECONDITION naming `dir` when it is missing, not a directory,
  // not writable, or locked by another running btsim (DIR/LOCK, flock).
  static Result<std::unique_ptr<Store>> Open(const std::string& dir);
  ~Store();

  // Replays DIR/journal.log into the instances through `access` (a torn
  // final record is dropped and the file cut there), then journals them
  // from now on. Once, before serving. DATA_LOSS naming the file and the
  // offset for a corrupt record; FAILED_PRECONDITION when the journal does
  // not fit the instances (e.g. another cluster configuration).
  Result<Recovery> Recover(InstanceAccess& access);
  // An instance the server created (under its lock): journaled from now on.
  // Ignored while Recover runs (it attaches the instances it replays).
  void OnInstanceCreated(instance::Instance& instance);
  // Blocks until everything journaled so far is on disk.
  void Sync();
  // Calls `done` once everything journaled so far is on disk (at once, or
  // on the journal's flusher thread): what the server's replies wait for.
  void AfterSync(std::function<void()> done);

  const std::string& journal_path() const { return journal_path_; }
  uint64_t syncs() const;

 private:
  class InstanceLog;
  Store(std::string dir, int lock_fd);
  // Journals `instance` under number `number`, a new one when absent.
  void Attach(instance::Instance& instance, std::optional<uint32_t> number);
  void Append(const std::string& payload);

  const std::string dir_;
  const std::string journal_path_;
  const int lock_fd_;
  std::mutex mu_;  // guards logs_, next_number_, recovering_
  bool recovering_ = false;
  uint32_t next_number_ = 0;
  std::map<std::string, std::unique_ptr<InstanceLog>> logs_;  // by name
  std::unique_ptr<LogWriter> writer_;
};

}  // namespace btsim::durable

#endif  // BTSIM_DURABLE_STORE_H_
