// ChunkMerger: a test-side validator and merger for ReadRows response
// streams. Feed it every ReadRowsResponse of one stream, in order, then call
// Finish(). It checks every chunk rule of the ReadRows protocol (see
// bigtable-api-fields.md §2) and assembles the committed rows.
//
// Rules enforced (any violation is an INTERNAL Status naming the chunk):
//   - committed rows strictly increase (decrease when reversed); a row key
//     never repeats; rows also lie strictly beyond any last_scanned_row_key;
//   - a row's first chunk carries a non-empty row_key, a family_name wrapper
//     (with a non-empty name) and a qualifier wrapper;
//   - a chunk carrying a family_name must also carry a qualifier;
//   - a row_key on a later chunk of a row equals the row's key;
//   - reset_row only while a row is in progress, on a chunk with no data;
//   - split values: every non-last chunk carries value_size = total length,
//     the last carries 0, no chunk may commit before the value is complete,
//     and the pieces add up to exactly value_size;
//   - continuation chunks carry only value (and value_size / commit_row):
//     no row_key, family, qualifier, timestamp or labels;
//   - no bare chunk: a chunk that is not a continuation must start a cell,
//     i.e. carry at least one of row_key, family, qualifier, a timestamp, a
//     value, labels or value_size. (Clients would parse a bare chunk as an
//     extra empty cell.) A bare commit_row chunk is the common case;
//   - within a row, each family's cells are contiguous; qualifiers ascend
//     within a family; timestamps do not increase within a column (equal
//     timestamps are allowed: an interleave of two pass_all filters returns
//     every cell twice);
//   - the stream does not end in the middle of a row.
//
// After the first error the merger stays failed and returns that error.
// Not thread-safe.
#ifndef BTSIM_TESTS_API_CHUNK_MERGER_H_
#define BTSIM_TESTS_API_CHUNK_MERGER_H_

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "google/bigtable/v2/bigtable.pb.h"

namespace btsim::api_test {

struct MergedCell {
  int64_t timestamp_micros = 0;
  std::string value;
  std::vector<std::string> labels;
  bool operator==(const MergedCell&) const = default;
};

struct MergedColumn {
  std::string qualifier;
  std::vector<MergedCell> cells;  // newest first
  bool operator==(const MergedColumn&) const = default;
};

struct MergedFamily {
  std::string name;
  std::vector<MergedColumn> columns;  // qualifiers ascending
  bool operator==(const MergedFamily&) const = default;
};

struct MergedRow {
  std::string key;
  std::vector<MergedFamily> families;  // in stream order

  // Null when absent.
  const MergedFamily* Family(std::string_view name) const;
  const MergedColumn* Column(std::string_view family,
                             std::string_view qualifier) const;
  // Cells of one column (empty when absent).
  std::vector<MergedCell> Cells(std::string_view family,
                                std::string_view qualifier) const;
  // Value of the newest cell of a column, or nullopt.
  std::optional<std::string> Latest(std::string_view family,
                                    std::string_view qualifier) const;
  size_t CellCount() const;
  // A readable multi-line rendering, for failure messages.
  std::string DebugString() const;
  bool operator==(const MergedRow&) const = default;
};

class ChunkMerger {
 public:
  explicit ChunkMerger(bool reversed = false) : reversed_(reversed) {}

  // Validates and merges one response. Completed rows become available
  // through rows() / TakeRows().
  Status Feed(const google::bigtable::v2::ReadRowsResponse& response);
  // Declares the end of the stream: an error when a row is unfinished.
  Status Finish();

  // Rows committed so far.
  const std::vector<MergedRow>& rows() const { return rows_; }
  std::vector<MergedRow> TakeRows();
  // Chunks seen so far (for diagnostics).
  int64_t chunks_seen() const { return chunk_index_; }

 private:
  enum class State { kBetweenRows, kInRow, kInValue };

  Status FeedChunk(const google::bigtable::v2::ReadRowsResponse::CellChunk& c);
  Status StartCell(const google::bigtable::v2::ReadRowsResponse::CellChunk& c);
  Status Continue(const google::bigtable::v2::ReadRowsResponse::CellChunk& c);
  Status Commit();
  // True when `a` comes strictly before `b` in scan order.
  bool Before(const std::string& a, const std::string& b) const;
  Status Error(const std::string& message) const;

  const bool reversed_;
  Status failure_;
  State state_ = State::kBetweenRows;
  int64_t chunk_index_ = 0;
  std::vector<MergedRow> rows_;
  std::optional<std::string> last_committed_;
  std::optional<std::string> last_scanned_;

  // The row in progress.
  MergedRow row_;
  std::set<std::string> families_seen_;
  std::string family_;     // current family
  std::string qualifier_;  // current qualifier
  bool have_cell_ = false;
  int64_t last_timestamp_ = 0;
  // The split value in progress.
  int64_t value_size_ = 0;
};

// Feeds `responses` to a fresh merger and finishes it.
Result<std::vector<MergedRow>> MergeResponses(
    std::span<const google::bigtable::v2::ReadRowsResponse> responses,
    bool reversed = false);

}  // namespace btsim::api_test

#endif  // BTSIM_TESTS_API_CHUNK_MERGER_H_
