#include "api/row_chunker.h"

#include <algorithm>
#include <utility>

namespace btsim::api {

using google::bigtable::v2::ReadRowsResponse;

ReadRowsResponse::CellChunk* RowChunker::NewChunk() {
  if (current_bytes_ >= max_response_bytes_ && current_.chunks_size() > 0) {
    done_.push_back(std::move(current_));
    current_ = ReadRowsResponse();
    current_bytes_ = 0;
  }
  return current_.add_chunks();
}

void RowChunker::AddRow(std::string_view key,
                        std::span<const cluster::CellView> cells) {
  const cluster::CellView* prev = nullptr;
  ReadRowsResponse::CellChunk* chunk = nullptr;
  for (const cluster::CellView& cell : cells) {
    const bool new_family = prev == nullptr || prev->family != cell.family;
    const bool new_column = new_family || prev->qualifier != cell.qualifier;
    // A later cell of the same column with timestamp 0, an empty value and
    // no label would otherwise be a chunk with no data at all, which the
    // chunk rules forbid: repeat its qualifier.
    const bool would_be_bare = !new_column &&
                               cell.timestamp == cluster::Timestamp{} &&
                               cell.value.empty() && cell.label == nullptr;
    size_t offset = 0;
    const size_t total = cell.value.size();
    do {
      chunk = NewChunk();
      const size_t piece = std::min(max_chunk_value_, total - offset);
      size_t bytes = piece + 16;
      if (offset == 0) {
        if (prev == nullptr) {
          chunk->set_row_key(key.data(), key.size());
          bytes += key.size();
        }
        if (new_family) {
          chunk->mutable_family_name()->set_value(cell.family.data(),
                                                  cell.family.size());
          bytes += cell.family.size();
        }
        if (new_column || would_be_bare) {
          chunk->mutable_qualifier()->set_value(cell.qualifier.data(),
                                                cell.qualifier.size());
          bytes += cell.qualifier.size();
        }
        chunk->set_timestamp_micros(cluster::Micros(cell.timestamp));
        if (cell.label != nullptr) chunk->add_labels(*cell.label);
      }
      chunk->set_value(cell.value.data() + offset, piece);
      offset += piece;
      if (offset < total) chunk->set_value_size(static_cast<int32_t>(total));
      current_bytes_ += bytes;
      buffered_bytes_ += bytes;
    } while (offset < total);
    prev = &cell;
  }
  chunk->set_commit_row(true);
}

std::vector<ReadRowsResponse> RowChunker::Take() {
  if (current_.chunks_size() > 0) {
    done_.push_back(std::move(current_));
    current_ = ReadRowsResponse();
    current_bytes_ = 0;
  }
  buffered_bytes_ = 0;
  return std::exchange(done_, {});
}

}  // namespace btsim::api
