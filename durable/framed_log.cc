#include "durable/framed_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "base/check.h"

namespace btsim::durable {

namespace {

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    v |= static_cast<uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  return v;
}

uint32_t Checksum(uint8_t type, std::string_view payload) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const Bytef t = type;
  crc = crc32(crc, &t, 1);
  // zlib takes lengths as uInt: feed large payloads in pieces.
  size_t done = 0;
  while (done < payload.size()) {
    const size_t n = std::min<size_t>(payload.size() - done, 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(payload.data() + done),
                static_cast<uInt>(n));
    done += n;
  }
  return static_cast<uint32_t>(crc);
}

std::string Errno(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

Status Corrupt(const std::string& path, uint64_t offset,
               const std::string& why) {
  return Status(StatusCode::kDataLoss,
                path + ": corrupt record at offset " + std::to_string(offset) +
                    " (" + why + "); the journal cannot be replayed past it");
}

}  // namespace

std::string EncodeFrame(uint8_t type, std::string_view payload) {
  std::string frame;
  frame.reserve(kFrameHeader + payload.size());
  PutU32(&frame, static_cast<uint32_t>(payload.size()));
  PutU32(&frame, Checksum(type, payload));
  frame.push_back(static_cast<char>(type));
  frame.append(payload);
  return frame;
}

Result<std::unique_ptr<LogReader>> LogReader::Open(const std::string& path,
                                                   std::string_view magic,
                                                   bool torn_tails) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound(Errno(path));
    return Unavailable(Errno(path));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status s = Unavailable(Errno(path));
    ::close(fd);
    return s;
  }
  auto reader = std::unique_ptr<LogReader>(
      new LogReader(fd, path, static_cast<uint64_t>(st.st_size), torn_tails));
  BTSIM_ASSIGN_OR_RETURN(std::string_view head, reader->Fill(magic.size()));
  if (head.size() < magic.size()) {
    // Torn while being created (the magic is synced before any frame).
    if (magic.substr(0, head.size()) != head) {
      return Corrupt(path, 0, "not a btsim file of this kind");
    }
    reader->torn_tail_ = !head.empty();
    reader->done_ = true;
    return reader;
  }
  if (head != magic) return Corrupt(path, 0, "not a btsim file of this kind");
  reader->offset_ = magic.size();
  return reader;
}

LogReader::LogReader(int fd, std::string path, uint64_t file_size,
                     bool torn_tails)
    : fd_(fd),
      path_(std::move(path)),
      file_size_(file_size),
      torn_tails_(torn_tails) {}

LogReader::~LogReader() { ::close(fd_); }

Status LogReader::ReadAt(uint64_t at, size_t n, std::string* out) const {
  out->resize(n);
  size_t have = 0;
  while (have < n) {
    const ssize_t got = ::pread(fd_, out->data() + have, n - have,
                                static_cast<off_t>(at + have));
    if (got < 0) {
      if (errno == EINTR) continue;
      return Unavailable(Errno(path_));
    }
    if (got == 0) break;  // the file shrank under us: read what is there
    have += static_cast<size_t>(got);
  }
  out->resize(have);
  return OkStatus();
}

Result<std::string_view> LogReader::Fill(size_t n) {
  constexpr size_t kChunk = 1 << 20;
  const uint64_t left = file_size_ > offset_ ? file_size_ - offset_ : 0;
  const size_t want = static_cast<size_t>(std::min<uint64_t>(n, left));
  const uint64_t have_end = buffer_start_ + buffer_.size();
  if (offset_ >= buffer_start_ && offset_ + want <= have_end) {
    return std::string_view(buffer_).substr(offset_ - buffer_start_, want);
  }
  // Refill: keep what is left from offset_ on, read at least a chunk more.
  if (offset_ >= buffer_start_ && offset_ <= have_end) {
    buffer_.erase(0, offset_ - buffer_start_);
  } else {
    buffer_.clear();
  }
  buffer_start_ = offset_;
  if (buffer_.capacity() > 4 * kChunk && want <= kChunk) {
    buffer_.shrink_to_fit();  // after one huge frame
  }
  std::string more;
  const size_t ask = std::max(want - buffer_.size(), kChunk);
  BTSIM_RETURN_IF_ERROR(ReadAt(offset_ + buffer_.size(), ask, &more));
  buffer_ += more;
  return std::string_view(buffer_).substr(0, std::min(want, buffer_.size()));
}

Result<bool> LogReader::ValidFrameFrom(uint64_t from) {
  constexpr size_t kWindow = 1 << 20;
  // Checksums over more than this many bytes in all: report corruption
  // rather than spend longer telling.
  const uint64_t rest = file_size_ > from ? file_size_ - from : 0;
  uint64_t budget = 4 * rest + (64u << 20);
  std::string window, payload;
  for (uint64_t start = from; start + kFrameHeader <= file_size_;
       start += kWindow) {
    BTSIM_RETURN_IF_ERROR(ReadAt(start, kWindow + kFrameHeader - 1, &window));
    for (size_t i = 0; i < kWindow && i + kFrameHeader <= window.size(); ++i) {
      const uint64_t at = start + i;
      const uint32_t length = GetU32(window.data() + i);
      if (length > kMaxFrame || length > file_size_ - at - kFrameHeader) {
        continue;
      }
      if (length > budget) return true;
      budget -= length;
      std::string_view body;
      if (i + kFrameHeader + length <= window.size()) {
        body = std::string_view(window).substr(i + kFrameHeader, length);
      } else {
        BTSIM_RETURN_IF_ERROR(ReadAt(at + kFrameHeader, length, &payload));
        body = payload;
      }
      const auto type = static_cast<uint8_t>(window[i + 8]);
      if (Checksum(type, body) == GetU32(window.data() + i + 4)) return true;
    }
  }
  return false;
}

Result<bool> LogReader::EndAt(std::string_view why) {
  // A crash while a write was under way leaves a prefix of it (or zeros)
  // after the last complete frame, and nothing valid after that; a valid
  // frame further on means the bad one is damage to acknowledged data.
  bool later = true;
  if (torn_tails_) {
    BTSIM_ASSIGN_OR_RETURN(later, ValidFrameFrom(offset_ + 1));
  }
  if (later) return Corrupt(path_, offset_, std::string(why));
  torn_tail_ = true;
  done_ = true;
  return false;
}

Result<bool> LogReader::Next(Frame* frame) {
  if (done_ || offset_ >= file_size_) {
    done_ = true;
    return false;
  }
  const uint64_t left = file_size_ - offset_;
  BTSIM_ASSIGN_OR_RETURN(std::string_view header, Fill(kFrameHeader));
  if (header.size() < kFrameHeader) {
    if (!torn_tails_) return EndAt("the file ends inside a record header");
    torn_tail_ = true;  // not even a header: nothing can follow
    done_ = true;
    return false;
  }
  const uint32_t length = GetU32(header.data());
  const uint32_t crc = GetU32(header.data() + 4);
  const uint8_t type = static_cast<uint8_t>(header[8]);
  if (length > kMaxFrame) {
    return EndAt("length " + std::to_string(length) + " is too large");
  }
  if (left - kFrameHeader < length) {
    return EndAt("length " + std::to_string(length) +
                 " runs past the end of the file");
  }
  BTSIM_ASSIGN_OR_RETURN(std::string_view whole, Fill(kFrameHeader + length));
  if (whole.size() < kFrameHeader + length) {
    return EndAt("the file ends inside the record");
  }
  const std::string_view payload = whole.substr(kFrameHeader);
  if (Checksum(type, payload) != crc) return EndAt("checksum mismatch");
  frame->offset = offset_;
  frame->type = type;
  frame->payload.assign(payload);
  offset_ += kFrameHeader + length;
  return true;
}

Result<Scan> ScanLog(const std::string& path) {
  Scan scan;
  auto reader = LogReader::Open(path, kLogMagic);
  if (!reader.ok()) {
    if (reader.status().code() == StatusCode::kNotFound) return scan;
    return reader.status();
  }
  Frame frame;
  while (true) {
    BTSIM_ASSIGN_OR_RETURN(bool more, (*reader)->Next(&frame));
    if (!more) break;
    scan.frames.push_back(std::move(frame));
  }
  scan.end = (*reader)->end();
  scan.torn_tail = (*reader)->torn_tail();
  scan.file_size = (*reader)->file_size();
  return scan;
}

Result<std::unique_ptr<FrameFileWriter>> FrameFileWriter::Create(
    const std::string& path, std::string_view magic) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Unavailable(Errno(path));
  auto writer = std::unique_ptr<FrameFileWriter>(new FrameFileWriter(fd, path));
  writer->buffer_.assign(magic);
  return writer;
}

FrameFileWriter::FrameFileWriter(int fd, std::string path)
    : fd_(fd), path_(std::move(path)) {}

FrameFileWriter::~FrameFileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Status FrameFileWriter::Add(uint8_t type, std::string_view payload) {
  if (fd_ < 0) return FailedPrecondition(path_ + ": already finished");
  buffer_ += EncodeFrame(type, payload);
  if (buffer_.size() >= (4u << 20)) return Flush();
  return OkStatus();
}

Status FrameFileWriter::Flush() {
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n =
        ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Unavailable(Errno(path_ + ": write"));
    }
    done += static_cast<size_t>(n);
  }
  written_ += buffer_.size();
  buffer_.clear();
  return OkStatus();
}

Status FrameFileWriter::Finish() {
  if (fd_ < 0) return FailedPrecondition(path_ + ": already finished");
  BTSIM_RETURN_IF_ERROR(Flush());
  if (::fsync(fd_) != 0) return Unavailable(Errno(path_ + ": fsync"));
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) return Unavailable(Errno(path_ + ": close"));
  return OkStatus();
}

Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Unavailable(Errno(dir));
  const int rc = ::fsync(fd);
  Status s = rc == 0 ? OkStatus() : Unavailable(Errno(dir));
  ::close(fd);
  return s;
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

namespace {

// Opens a journal file for appending at `*end`: created with the magic
// when *end is 0 (then *end is the magic's size), else truncated to *end.
// The file and its directory are synced. Returns the descriptor.
Result<int> OpenJournalFile(const std::string& path, uint64_t* end) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Unavailable(Errno(path));
  auto fail = [&](const std::string& what) {
    Status s = Unavailable(Errno(path + ": " + what));
    ::close(fd);
    return s;
  };
  if (*end < kLogMagic.size()) {
    if (::ftruncate(fd, 0) != 0) return fail("truncate");
    if (::pwrite(fd, kLogMagic.data(), kLogMagic.size(), 0) !=
        static_cast<ssize_t>(kLogMagic.size())) {
      return fail("write");
    }
    *end = kLogMagic.size();
  } else if (::ftruncate(fd, static_cast<off_t>(*end)) != 0) {
    return fail("truncate");
  }
  if (::fsync(fd) != 0) return fail("fsync");
  if (::lseek(fd, static_cast<off_t>(*end), SEEK_SET) < 0) {
    return fail("seek");
  }
  Status synced = SyncDirectory(DirectoryOf(path));
  if (!synced.ok()) {
    ::close(fd);
    return synced;
  }
  return fd;
}

}  // namespace

Result<std::unique_ptr<LogWriter>> LogWriter::Open(const std::string& path,
                                                   uint64_t end) {
  BTSIM_ASSIGN_OR_RETURN(int fd, OpenJournalFile(path, &end));
  return std::unique_ptr<LogWriter>(new LogWriter(fd, path, end));
}

Status LogWriter::Switch(const std::string& path) {
  uint64_t end = 0;
  BTSIM_ASSIGN_OR_RETURN(int fd, OpenJournalFile(path, &end));
  Sync();
  int old_fd;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Nothing was appended since Sync (the caller's promise): the flusher
    // is idle and picks up the new descriptor with its next batch.
    BTSIM_CHECK(pending_.empty() && durable_ == appended_);
    old_fd = fd_;
    fd_ = fd;
    path_ = path;
  }
  ::close(old_fd);
  return OkStatus();
}

LogWriter::LogWriter(int fd, std::string path, uint64_t end)
    : fd_(fd), path_(std::move(path)), appended_(end), durable_(end) {
  flusher_ = std::thread([this] { FlushLoop(); });
}

LogWriter::~LogWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  queued_cv_.notify_all();
  flusher_.join();
  ::close(fd_);
}

uint64_t LogWriter::Append(uint8_t type, std::string_view payload) {
  std::string frame = EncodeFrame(type, payload);
  uint64_t end;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ += frame;
    appended_ += frame.size();
    end = appended_;
  }
  queued_cv_.notify_one();
  return end;
}

void LogWriter::WaitDurable(uint64_t end) {
  std::unique_lock<std::mutex> lock(mu_);
  durable_cv_.wait(lock, [&] { return durable_ >= end; });
}

void LogWriter::Sync() {
  uint64_t end;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (durable_ >= appended_) return;
    end = appended_;
  }
  WaitDurable(end);
}

void LogWriter::AfterSync(std::function<void()> done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (durable_ < appended_) {
      waiting_.emplace_back(appended_, std::move(done));
      return;
    }
  }
  done();
}

uint64_t LogWriter::appended_end() const {
  std::lock_guard<std::mutex> lock(mu_);
  return appended_;
}

uint64_t LogWriter::durable_end() const {
  std::lock_guard<std::mutex> lock(mu_);
  return durable_;
}

uint64_t LogWriter::syncs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return syncs_;
}

// Fail-stop: after a failed write or fdatasync nothing appended since the
// last sync can be promised (and retrying an fdatasync on Linux may report
// success for pages it dropped), so no reply may go out and no destructor
// may flush more: the process ends at once, with the exit code
// docs/durability.md gives.
void LogWriter::Fail(const char* what) {
  std::fprintf(stderr,
               "btsim: journal %s: %s failed: %s; stopping (writes not yet "
               "synced were never acknowledged)\n",
               path_.c_str(), what, std::strerror(errno));
  std::fflush(stderr);
  std::_Exit(1);
}

void LogWriter::FlushLoop() {
  std::string batch;
  while (true) {
    uint64_t end;
    int fd;
    {
      std::unique_lock<std::mutex> lock(mu_);
      queued_cv_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
      if (pending_.empty()) return;  // stopping, nothing left
      batch.swap(pending_);
      pending_.clear();
      end = appended_;
      fd = fd_;
    }
    // One write and one sync for everything queued meanwhile: the group.
    size_t done = 0;
    while (done < batch.size()) {
      const ssize_t n = ::write(fd, batch.data() + done, batch.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        Fail("write");
      }
      done += static_cast<size_t>(n);
    }
    if (::fdatasync(fd) != 0) Fail("fdatasync");
    batch.clear();
    std::vector<std::function<void()>> released;
    {
      std::lock_guard<std::mutex> lock(mu_);
      durable_ = end;
      ++syncs_;
      while (!waiting_.empty() && waiting_.front().first <= end) {
        released.push_back(std::move(waiting_.front().second));
        waiting_.pop_front();
      }
    }
    durable_cv_.notify_all();
    for (auto& done : released) done();
  }
}

}  // namespace btsim::durable
