#include "replication/log.h"

#include <memory>
#include <utility>

#include "base/check.h"
#include "base/prefetch.h"

namespace btsim::replication {

LogEntry& ReplicationLog::Slot(uint64_t position) const {
  const uint64_t index = position - chunks_start_;
  return chunks_[index / kChunkEntries][index % kChunkEntries];
}

uint64_t ReplicationLog::Append(cluster::CommitRecord&& record) {
  Emplace() = std::move(record);
  return last_position();
}

cluster::CommitRecord& ReplicationLog::Emplace() {
  const uint64_t position = end_position_;
  if (position - chunks_start_ == chunks_.size() * kChunkEntries) {
    chunks_.push_back(spare_ != nullptr
                          ? std::move(spare_)
                          : std::make_unique<LogEntry[]>(kChunkEntries));
  }
  LogEntry& slot = Slot(position);
  slot.position = position;
  ++end_position_;
  // The next entry's slot is usually cold by the time it is written (other
  // work runs between commits): request it now, for writing.
  if ((position + 1 - chunks_start_) % kChunkEntries != 0) {
    PrefetchForWrite(&slot + 1, sizeof(LogEntry));
  }
  return slot.record;
}

const LogEntry& ReplicationLog::At(uint64_t position) const {
  BTSIM_CHECK(position > truncated_through() && position <= last_position());
  return Slot(position);
}

void ReplicationLog::SetSource(uint64_t position, uint32_t origin,
                               uint64_t source_position) {
  BTSIM_CHECK(position > truncated_through() && position <= last_position());
  LogEntry& entry = Slot(position);
  entry.source_origin = origin;
  entry.source_position = source_position;
}

std::vector<const LogEntry*> ReplicationLog::Read(uint64_t after,
                                                  size_t max) const {
  BTSIM_CHECK(after >= truncated_through());
  std::vector<const LogEntry*> out;
  for (uint64_t p = after + 1; p < end_position_ && out.size() < max; ++p) {
    out.push_back(&Slot(p));
  }
  return out;
}

void ReplicationLog::Skip() {
  BTSIM_CHECK(size() == 0);
  ++first_position_;
  ++end_position_;
  // Every slot is empty: the chunks may start anywhere.
  chunks_start_ = first_position_;
}

void ReplicationLog::StartAfter(uint64_t position) {
  BTSIM_CHECK(size() == 0);
  first_position_ = end_position_ = position + 1;
  // Every slot is empty: the chunks may start anywhere.
  chunks_start_ = first_position_;
}

void ReplicationLog::TruncateThrough(uint64_t position) {
  // What destroying an entry frees was last touched long ago (its commit):
  // requested a few entries ahead, so that those cache misses overlap.
  constexpr uint64_t kAhead = 8;
  for (uint64_t p = first_position_;
       p < first_position_ + kAhead && p < end_position_ && p <= position;
       ++p) {
    cluster::PrefetchForDestroy(Slot(p).record);
  }
  while (first_position_ < end_position_ && first_position_ <= position) {
    const uint64_t ahead = first_position_ + kAhead;
    if (ahead < end_position_ && ahead <= position) {
      cluster::PrefetchForDestroy(Slot(ahead).record);
    }
    // Destroyed and default-constructed again: assigning an empty record
    // would keep the capacity of some of its strings.
    LogEntry* slot = &Slot(first_position_);
    std::destroy_at(slot);
    std::construct_at(slot);
    ++first_position_;
  }
  if (first_position_ == end_position_) {
    // Empty: every slot holds a default entry, so the first chunk can start
    // at the next position and keep serving.
    while (chunks_.size() > 1) {
      spare_ = std::move(chunks_.back());
      chunks_.pop_back();
    }
    chunks_start_ = first_position_;
    return;
  }
  while (first_position_ - chunks_start_ >= kChunkEntries) {
    spare_ = std::move(chunks_.front());
    chunks_.pop_front();
    chunks_start_ += kChunkEntries;
  }
}

}  // namespace btsim::replication
