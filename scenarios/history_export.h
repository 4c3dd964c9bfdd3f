// A run's History in formats that other tools read (docs/history-formats.md
// has each mapping with a worked example):
//
//   jepsen            Jepsen's operation format (jepsen-io/history) as JSON
//                     lines: every operation as an `invoke` and its
//                     completion (`ok`, `fail`, or `info` when it may have
//                     taken effect), `f` the operation's type, faults as
//                     `nemesis` `info` operations.
//   jepsen-edn        the same records in EDN, one map per line.
//   elle-rw-register  Elle's rw-register encoding, JSON lines: each write of
//                     the followed column and each read of one row is a
//                     transaction of one micro-op on the key "TABLE/ROW",
//                     values numbered per key in the order written.
//   elle-list-append  Elle's list-append encoding, JSON lines: each append
//                     of a simulated client (its unique token appended by
//                     ReadModifyWriteRow) is a transaction [append, r] that
//                     reads the whole list back; tokens numbered per key.
//   porcupine         Porcupine's operations {ClientId, Input, Call, Output,
//                     Return} of a key-value model, with the faults as
//                     annotations {ClientId, Tag, Start, End, Description},
//                     as one JSON object.
//
// Outcomes. A failed write that committed (the reply was lost or came after
// the deadline) may have taken effect: `info` (Porcupine: its Return is
// the end of the history). A failed operation that did not commit is
// `fail` (Porcupine: left out). An operation still in flight at the end is
// `info`. Processes (Porcupine's client ids) number the clients; after an
// `info` a client goes on as a new process, as Jepsen requires.
//
// Deterministic: the same History gives the same bytes.
#ifndef BTSIM_SCENARIOS_HISTORY_EXPORT_H_
#define BTSIM_SCENARIOS_HISTORY_EXPORT_H_

#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "base/result.h"
#include "scenarios/history.h"

namespace btsim::scenarios {

enum class HistoryFormat {
  kJepsen,
  kJepsenEdn,
  kElleRwRegister,
  kElleListAppend,
  kPorcupine
};

// Every format, in the order above.
std::span<const HistoryFormat> HistoryFormats();
// "jepsen", "jepsen-edn", "elle-rw-register", "elle-list-append",
// "porcupine".
std::string_view HistoryFormatName(HistoryFormat format);
// The inverse; INVALID_ARGUMENT listing the names for an unknown one.
Result<HistoryFormat> ParseHistoryFormat(std::string_view name);
// The file a format is written to in an --out directory, e.g.
// "history.jepsen.jsonl".
std::string_view HistoryFileName(HistoryFormat format);

// Writes `history` in `format` to `out`.
void WriteHistory(const History& history, HistoryFormat format,
                  std::ostream& out);

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_HISTORY_EXPORT_H_
