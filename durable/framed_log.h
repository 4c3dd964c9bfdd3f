// The journal file of `btsim serve --data-dir` (docs/durability.md): an
// 8-byte magic, then frames [length:4][crc:4][type:1][payload:length], the
// integers little-endian, the CRC zlib's CRC-32 of the type byte and the
// payload. LogWriter appends frames with group commit; ScanLog reads them
// back and tells a torn final frame (dropped) from corruption (an error).
#ifndef BTSIM_DURABLE_FRAMED_LOG_H_
#define BTSIM_DURABLE_FRAMED_LOG_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/result.h"

namespace btsim::durable {

inline constexpr std::string_view kLogMagic = "BTSIMJ1\n";
inline constexpr size_t kFrameHeader = 9;
// Frames claiming more are corrupt (a record is at most a row's 256 MiB
// plus its keys).
inline constexpr uint32_t kMaxFrame = 512u << 20;

// The frame for `payload` of `type`, header included.
std::string EncodeFrame(uint8_t type, std::string_view payload);

struct Frame {
  uint64_t offset = 0;  // of its header in the file
  uint8_t type = 0;
  std::string payload;
};

struct Scan {
  std::vector<Frame> frames;
  // Where the valid frames end: the next frame goes there.
  uint64_t end = 0;
  // A torn final frame was found at `end` and is to be dropped: it was
  // incomplete, or its checksum failed and it reached the end of the file.
  bool torn_tail = false;
  uint64_t file_size = 0;
};

// Reads a file of frames front to back, one frame at a time: the file is
// never in memory as a whole. Not thread-safe.
class LogReader {
 public:
  // Opens `path`, which must start with `magic` (a shorter file must be a
  // prefix of it: torn while being created). NOT_FOUND when absent. With
  // `torn_tails` false (a file synced before use: a snapshot), every bad
  // frame is corruption.
  static Result<std::unique_ptr<LogReader>> Open(const std::string& path,
                                                 std::string_view magic,
                                                 bool torn_tails = true);
  ~LogReader();
  LogReader(const LogReader&) = delete;
  LogReader& operator=(const LogReader&) = delete;

  // The next frame into *frame: true; false once the valid frames end
  // (then end() and torn_tail() say how). A bad frame (checksum mismatch,
  // impossible length, cut short by the end of the file) ends the frames
  // as a torn tail when no valid frame starts at any byte after its
  // start, since a process killed during a write leaves only a prefix of
  // it (or zeros); else, or when telling would take reading more than
  // about four times the rest of the file, it is DATA_LOSS "PATH: corrupt
  // record at offset N (...)". (After a power loss, pages written out of
  // order can make a torn batch look like corruption: the start then
  // stops rather than guess. User data that happens to hold a valid frame
  // inside a torn one does the same.)
  Result<bool> Next(Frame* frame);
  uint64_t end() const { return offset_; }  // after the last valid frame
  bool torn_tail() const { return torn_tail_; }
  uint64_t file_size() const { return file_size_; }

 private:
  LogReader(int fd, std::string path, uint64_t file_size, bool torn_tails);
  // The file's bytes from offset_ on, `n` of them (fewer at the end of the
  // file); valid until the next call.
  Result<std::string_view> Fill(size_t n);
  // Whether a frame with a valid checksum starts at any byte from `from`
  // on, reading the file in windows (only once a frame is bad); also true
  // when telling would cost too much.
  Result<bool> ValidFrameFrom(uint64_t from);
  // Reads [at, at + n) into *out (fewer at the end of the file).
  Status ReadAt(uint64_t at, size_t n, std::string* out) const;
  // The end of the frames at offset_, torn or corrupt (see Next).
  Result<bool> EndAt(std::string_view why);

  const int fd_;
  const std::string path_;
  const uint64_t file_size_;
  const bool torn_tails_;
  uint64_t offset_ = 0;  // of the next frame
  std::string buffer_;   // the file's bytes from buffer_start_ on
  uint64_t buffer_start_ = 0;
  bool torn_tail_ = false;
  bool done_ = false;
};

// Reads the journal at `path` (absent: no frames, end 0) into memory: for
// tests and tools; recovery streams with LogReader. Errors as
// LogReader's.
Result<Scan> ScanLog(const std::string& path);

// Writes a new file of frames in one go (a snapshot), buffered. Not
// thread-safe.
class FrameFileWriter {
 public:
  // Creates (or truncates) `path` and writes `magic`.
  static Result<std::unique_ptr<FrameFileWriter>> Create(
      const std::string& path, std::string_view magic);
  ~FrameFileWriter();  // closes the file (without syncing) if not Finished
  FrameFileWriter(const FrameFileWriter&) = delete;
  FrameFileWriter& operator=(const FrameFileWriter&) = delete;

  Status Add(uint8_t type, std::string_view payload);
  // Writes what is buffered, fsyncs and closes the file.
  Status Finish();
  uint64_t size() const { return written_ + buffer_.size(); }

 private:
  FrameFileWriter(int fd, std::string path);
  Status Flush();

  int fd_;
  const std::string path_;
  std::string buffer_;
  uint64_t written_ = 0;
};

// Appends frames to one file with group commit: Append queues a frame in
// memory, one flusher thread writes what is queued and fdatasyncs it, and
// WaitDurable blocks until a frame is on disk. A write or sync failure
// cannot be recovered from (what was acknowledged would no longer be
// promised): it prints an error naming the file and ends the process
// (exit code 1). Thread-safe.
class LogWriter {
 public:
  // Opens `path`, creating it with the magic when `end` is 0, and
  // truncates it to `end` (dropping a torn tail). The new file and the
  // directory entry are fsynced before it returns.
  static Result<std::unique_ptr<LogWriter>> Open(const std::string& path,
                                                 uint64_t end);
  ~LogWriter();  // writes and syncs what is queued, stops the flusher
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  // Queues a frame; returns where it ends in the file (its sequence).
  uint64_t Append(uint8_t type, std::string_view payload);
  // Continues in a new file `path`: creates it with the magic, syncs it and
  // its directory, waits until everything appended so far is on disk,
  // then writes later frames there (sequences continue). The caller
  // appends nothing while it runs. On an error nothing has changed.
  Status Switch(const std::string& path);
  // Blocks until every byte before `end` is on disk.
  void WaitDurable(uint64_t end);
  // Blocks until everything appended before the call is on disk.
  void Sync();
  // Calls `done` once everything appended before the call is on disk: at
  // once (on this thread) when it is, else on the flusher's thread right
  // after the sync. `done` must not wait for the writer, nor take a lock
  // that is held while the writer is waited for (an instance's: a snapshot
  // waits for the writer holding them all).
  void AfterSync(std::function<void()> done);
  uint64_t appended_end() const;
  uint64_t durable_end() const;
  uint64_t syncs() const;  // fdatasyncs done

 private:
  LogWriter(int fd, std::string path, uint64_t end);
  void FlushLoop();
  [[noreturn]] void Fail(const char* what);

  int fd_;            // guarded by mu_ (Switch changes it)
  std::string path_;  // guarded by mu_
  mutable std::mutex mu_;
  std::condition_variable queued_cv_;   // the flusher waits for work
  std::condition_variable durable_cv_;  // writers wait for their sync
  std::string pending_;                 // guarded by mu_
  uint64_t appended_ = 0;               // guarded by mu_
  uint64_t durable_ = 0;                // guarded by mu_
  uint64_t syncs_ = 0;                  // guarded by mu_
  bool stopping_ = false;               // guarded by mu_
  // AfterSync's callbacks with the end each waits for, oldest first.
  std::deque<std::pair<uint64_t, std::function<void()>>> waiting_;
  std::thread flusher_;
};

// fsyncs the directory `dir` (after creating or renaming a file in it).
Status SyncDirectory(const std::string& dir);
// The directory part of `path` ("." when it has none).
std::string DirectoryOf(const std::string& path);

}  // namespace btsim::durable

#endif  // BTSIM_DURABLE_FRAMED_LOG_H_
