// OperationLog: the operations of a run, in id order (History::operations).
// A long run records more operations than memory should hold, so the log
// keeps them in chunks of a fixed number of operations, and once told which
// operations are settled (Settle: they will never change again) it may write
// whole chunks of them to a temporary file (EnableSpilling) and read them
// back when asked. An Operation's fields are plain values and Names whose
// texts live in the History's pool, so a record read back is the record
// written.
//
// Access:
//   - operator[] and back(): references to operations held in memory,
//     which are valid until the log is destroyed or spills them. Asking
//     for an operation that was spilled aborts (a logic error: use Get).
//     Every operation from Settled() on is in memory; a log that never
//     spilled has every operation in memory.
//   - Get(i): a copy of any operation, spilled or not.
//   - Iteration (begin/end): every operation in id order; a reference from
//     the iterator stays valid until the iterator moves to another chunk.
//     A pass over a spilled log reads the file once, a chunk at a time.
//
// Copies of a log share its temporary file (spilled chunks never change);
// the file is removed when the last copy goes. A moved-from log is empty.
// Not thread-safe.
#ifndef BTSIM_SCENARIOS_OPERATION_LOG_H_
#define BTSIM_SCENARIOS_OPERATION_LOG_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <vector>

#include "scenarios/operation.h"

namespace btsim::scenarios {

class OperationLog {
 public:
  // 65,536 operations (6 MB) per chunk.
  static constexpr size_t kDefaultChunkOperations = size_t{1} << 16;

  OperationLog() : OperationLog(kDefaultChunkOperations) {}
  // Requires chunk_operations to be a power of two.
  explicit OperationLog(size_t chunk_operations);
  OperationLog(const OperationLog& other);
  OperationLog& operator=(const OperationLog& other);
  OperationLog(OperationLog&&) noexcept;
  OperationLog& operator=(OperationLog&&) noexcept;
  ~OperationLog();

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Adds an operation at the end (its id is for the caller to set).
  Operation& emplace_back();
  void push_back(const Operation& op) { emplace_back() = op; }

  // In memory only (see above).
  const Operation& operator[](size_t i) const { return *InMemory(i); }
  Operation& operator[](size_t i) { return *InMemory(i); }
  Operation& back() { return (*this)[size_ - 1]; }
  const Operation& back() const { return (*this)[size_ - 1]; }

  // A copy of operation i, wherever it is. Requires i < size().
  Operation Get(size_t i) const;

  // From now on, Settle may write settled chunks to a temporary file (in
  // $TMPDIR, else /tmp), created when the first chunk is written and
  // removed (unlinked) at once, so nothing is left behind.
  void EnableSpilling() { spill_enabled_ = true; }
  // Operations [0, before) will never change again: whole chunks of them
  // may leave memory (when spilling is enabled). `before` never decreases.
  void Settle(size_t before);
  // The bound the last Settle gave (0 before any).
  size_t Settled() const { return settled_; }
  // Whether any operation has left memory.
  bool Spilled() const { return spilled_chunks_ > 0; }

  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Operation;
    using difference_type = std::ptrdiff_t;
    using pointer = const Operation*;
    using reference = const Operation&;

    const_iterator() = default;
    // The position of the operation it points at.
    size_t index() const { return index_; }
    reference operator*() const { return *at_; }
    pointer operator->() const { return at_; }
    const_iterator& operator++();
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.index_ == b.index_;
    }

   private:
    friend class OperationLog;
    const_iterator(const OperationLog* log, size_t index);
    void Enter();  // points at_ into index_'s chunk

    const OperationLog* log_ = nullptr;
    size_t index_ = 0;
    const Operation* at_ = nullptr;
    const Operation* chunk_end_ = nullptr;
    // A spilled chunk read back, while the iterator is in it.
    std::shared_ptr<const Operation[]> loaded_;
  };
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size_); }

 private:
  class SpillFile;
  struct Chunk {
    std::unique_ptr<Operation[]> operations;  // null once spilled
    uint64_t offset = 0;                      // in the file, once spilled
  };

  const Operation* InMemory(size_t i) const;
  Operation* InMemory(size_t i);
  // Chunk c's operations read back from the file (a new buffer).
  std::shared_ptr<const Operation[]> Load(size_t c) const;
  size_t ChunkSize(size_t c) const;  // operations in chunk c

  size_t chunk_operations_;
  int chunk_shift_;
  size_t size_ = 0;
  std::vector<Chunk> chunks_;
  bool spill_enabled_ = false;
  size_t settled_ = 0;
  size_t spilled_chunks_ = 0;  // chunks [0, spilled_chunks_) are in the file
  std::shared_ptr<SpillFile> file_;
};

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_OPERATION_LOG_H_
