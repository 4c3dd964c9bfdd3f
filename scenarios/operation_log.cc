#include "scenarios/operation_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "base/check.h"

namespace btsim::scenarios {

static_assert(std::is_trivially_copyable_v<Operation>,
              "spilled operations are written and read back as bytes");

// An unlinked temporary file that chunks are appended to and read from.
class OperationLog::SpillFile {
 public:
  SpillFile() {
    const char* dir = std::getenv("TMPDIR");
    std::string path = std::string(dir != nullptr && *dir ? dir : "/tmp") +
                       "/btsim-history-XXXXXX";
    fd_ = mkostemp(path.data(), O_CLOEXEC);
    BTSIM_CHECK_MSG(fd_ >= 0, "cannot create the history's spill file " + path +
                                  ": " + std::strerror(errno));
    unlink(path.c_str());
  }
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;
  ~SpillFile() { close(fd_); }

  // Appends `bytes` bytes; returns where they start.
  uint64_t Append(const void* data, size_t bytes) {
    const uint64_t offset = end_;
    const char* p = static_cast<const char*>(data);
    for (size_t done = 0; done < bytes;) {
      const ssize_t n = pwrite(fd_, p + done, bytes - done,
                               static_cast<off_t>(offset + done));
      BTSIM_CHECK_MSG(n > 0 || (n < 0 && errno == EINTR),
                      std::string("cannot write the history's spill file "
                                  "(in $TMPDIR, else /tmp): ") +
                          std::strerror(errno));
      if (n > 0) done += static_cast<size_t>(n);
    }
    end_ += bytes;
    return offset;
  }

  void Read(uint64_t offset, void* data, size_t bytes) const {
    char* p = static_cast<char*>(data);
    for (size_t done = 0; done < bytes;) {
      const ssize_t n =
          pread(fd_, p + done, bytes - done, static_cast<off_t>(offset + done));
      BTSIM_CHECK_MSG(
          n > 0 || (n < 0 && errno == EINTR),
          std::string("cannot read the history's spill file: ") +
              (n == 0 ? "it is shorter than written" : std::strerror(errno)));
      if (n > 0) done += static_cast<size_t>(n);
    }
  }

 private:
  int fd_ = -1;
  uint64_t end_ = 0;
};

OperationLog::OperationLog(size_t chunk_operations)
    : chunk_operations_(chunk_operations),
      chunk_shift_(std::countr_zero(chunk_operations)) {
  BTSIM_CHECK(std::has_single_bit(chunk_operations));
}

OperationLog::OperationLog(const OperationLog& other) { *this = other; }

OperationLog& OperationLog::operator=(const OperationLog& other) {
  if (this == &other) return *this;
  chunk_operations_ = other.chunk_operations_;
  chunk_shift_ = other.chunk_shift_;
  size_ = other.size_;
  spill_enabled_ = other.spill_enabled_;
  settled_ = other.settled_;
  spilled_chunks_ = other.spilled_chunks_;
  file_ = other.file_;
  chunks_.clear();
  chunks_.reserve(other.chunks_.size());
  for (size_t c = 0; c < other.chunks_.size(); ++c) {
    Chunk& chunk = chunks_.emplace_back();
    chunk.offset = other.chunks_[c].offset;
    if (other.chunks_[c].operations != nullptr) {
      chunk.operations = std::make_unique<Operation[]>(chunk_operations_);
      std::copy_n(other.chunks_[c].operations.get(), ChunkSize(c),
                  chunk.operations.get());
    }
  }
  return *this;
}

OperationLog::OperationLog(OperationLog&& other) noexcept {
  *this = std::move(other);
}

// A moved-from log is empty (with its chunk size kept).
OperationLog& OperationLog::operator=(OperationLog&& other) noexcept {
  if (this == &other) return *this;
  chunk_operations_ = other.chunk_operations_;
  chunk_shift_ = other.chunk_shift_;
  size_ = std::exchange(other.size_, 0);
  chunks_ = std::move(other.chunks_);
  other.chunks_.clear();
  spill_enabled_ = other.spill_enabled_;
  settled_ = std::exchange(other.settled_, 0);
  spilled_chunks_ = std::exchange(other.spilled_chunks_, 0);
  file_ = std::move(other.file_);
  return *this;
}
OperationLog::~OperationLog() = default;

size_t OperationLog::ChunkSize(size_t c) const {
  return std::min(chunk_operations_, size_ - (c << chunk_shift_));
}

Operation& OperationLog::emplace_back() {
  if ((size_ & (chunk_operations_ - 1)) == 0) {
    // Zeroed (padding included: chunks are written to the spill file as
    // bytes, and uninitialised bytes would make its contents vary).
    chunks_.emplace_back().operations =
        std::make_unique<Operation[]>(chunk_operations_);
  }
  Operation& op = chunks_.back().operations[size_ & (chunk_operations_ - 1)];
  op = Operation();
  ++size_;
  return op;
}

const Operation* OperationLog::InMemory(size_t i) const {
  BTSIM_CHECK(i < size_);
  const Chunk& chunk = chunks_[i >> chunk_shift_];
  BTSIM_CHECK_MSG(chunk.operations != nullptr,
                  "operation " + std::to_string(i) +
                      " left memory: read it with OperationLog::Get");
  return &chunk.operations[i & (chunk_operations_ - 1)];
}

Operation* OperationLog::InMemory(size_t i) {
  return const_cast<Operation*>(std::as_const(*this).InMemory(i));
}

Operation OperationLog::Get(size_t i) const {
  BTSIM_CHECK(i < size_);
  const Chunk& chunk = chunks_[i >> chunk_shift_];
  const size_t at = i & (chunk_operations_ - 1);
  if (chunk.operations != nullptr) return chunk.operations[at];
  Operation op;
  file_->Read(chunk.offset + at * sizeof(Operation), &op, sizeof(Operation));
  return op;
}

void OperationLog::Settle(size_t before) {
  BTSIM_CHECK(before >= settled_ && before <= size_);
  settled_ = before;
  if (!spill_enabled_) return;
  // Whole chunks below `before`, never the one being filled.
  const size_t settled_chunks = before >> chunk_shift_;
  for (;
       spilled_chunks_ < settled_chunks && spilled_chunks_ + 1 < chunks_.size();
       ++spilled_chunks_) {
    Chunk& chunk = chunks_[spilled_chunks_];
    if (file_ == nullptr) file_ = std::make_shared<SpillFile>();
    chunk.offset = file_->Append(chunk.operations.get(),
                                 chunk_operations_ * sizeof(Operation));
    chunk.operations.reset();
  }
}

std::shared_ptr<const Operation[]> OperationLog::Load(size_t c) const {
  const size_t n = ChunkSize(c);
  std::shared_ptr<Operation[]> ops =
      std::make_shared_for_overwrite<Operation[]>(n);
  file_->Read(chunks_[c].offset, ops.get(), n * sizeof(Operation));
  return ops;
}

OperationLog::const_iterator::const_iterator(const OperationLog* log,
                                             size_t index)
    : log_(log), index_(index) {
  if (index_ < log_->size_) Enter();
}

void OperationLog::const_iterator::Enter() {
  const size_t c = index_ >> log_->chunk_shift_;
  const Chunk& chunk = log_->chunks_[c];
  const Operation* base;
  if (chunk.operations != nullptr) {
    loaded_.reset();
    base = chunk.operations.get();
  } else {
    loaded_ = log_->Load(c);
    base = loaded_.get();
  }
  at_ = base + (index_ & (log_->chunk_operations_ - 1));
  chunk_end_ = base + log_->ChunkSize(c);
}

OperationLog::const_iterator& OperationLog::const_iterator::operator++() {
  ++index_;
  if (++at_ == chunk_end_) {
    if (index_ < log_->size_) {
      Enter();
    } else {
      loaded_.reset();
    }
  }
  return *this;
}

}  // namespace btsim::scenarios
