// The files of a `btsim serve --data-dir` directory (docs/durability.md):
// one generation G at a time, the snapshot it starts from (`snapshot.G`,
// none for generation 0) and the journal after it (`journal.G.log`,
// `journal.log` for 0). Internal to durable/.
#ifndef BTSIM_DURABLE_FILES_H_
#define BTSIM_DURABLE_FILES_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "base/result.h"

namespace btsim::durable {

// The frame type of a journal's records (v1::JournalRecord).
inline constexpr uint8_t kJournalRecordType = 1;

std::string JournalPath(const std::string& dir, uint64_t g);
std::string SnapshotPath(const std::string& dir, uint64_t g);
// Where a snapshot is written before it is put in place.
std::string SnapshotTempPath(const std::string& dir);

// The generation a file name belongs to, for "snapshot.G", "journal.log"
// (0) and "journal.G.log" (G without leading zeros); nullopt for other
// names. Sets *is_snapshot.
std::optional<uint64_t> GenerationOf(const std::string& name,
                                     bool* is_snapshot);

// The snapshots and journals in a directory, by generation.
struct Files {
  std::set<uint64_t> snapshots;
  std::set<uint64_t> journals;
};
// UNAVAILABLE naming `dir` when it cannot be listed.
Result<Files> ListFiles(const std::string& dir);

}  // namespace btsim::durable

#endif  // BTSIM_DURABLE_FILES_H_
