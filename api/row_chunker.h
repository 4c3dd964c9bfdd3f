// RowChunker: turns engine rows into ReadRowsResponse messages that follow
// the chunk rules: the row key on a row's first chunk only, the family on the
// first chunk of each family, the qualifier whenever family or qualifier
// changes, values larger than `max_chunk_value` split across chunks with
// value_size set on all but the last, and commit_row on each row's last
// chunk. Several rows share one response until it reaches
// `max_response_bytes`; one row may span responses. Not thread-safe.
#ifndef BTSIM_API_ROW_CHUNKER_H_
#define BTSIM_API_ROW_CHUNKER_H_

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "cluster/cell_view.h"
#include "google/bigtable/v2/bigtable.pb.h"

namespace btsim::api {

class RowChunker {
 public:
  RowChunker(size_t max_response_bytes, size_t max_chunk_value)
      : max_response_bytes_(max_response_bytes),
        max_chunk_value_(max_chunk_value) {}

  // Requires a non-empty `cells`, in canonical order.
  void AddRow(std::string_view key, std::span<const cluster::CellView> cells);
  // Responses completed so far, including a partial last one.
  std::vector<google::bigtable::v2::ReadRowsResponse> Take();
  // Approximate bytes buffered.
  size_t buffered_bytes() const { return buffered_bytes_; }

 private:
  google::bigtable::v2::ReadRowsResponse::CellChunk* NewChunk();

  const size_t max_response_bytes_;
  const size_t max_chunk_value_;
  std::vector<google::bigtable::v2::ReadRowsResponse> done_;
  google::bigtable::v2::ReadRowsResponse current_;
  size_t current_bytes_ = 0;
  size_t buffered_bytes_ = 0;
};

}  // namespace btsim::api

#endif  // BTSIM_API_ROW_CHUNKER_H_
