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

Result<Scan> ScanLog(const std::string& path) {
  Scan scan;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return scan;
    return Unavailable(Errno(path));
  }
  std::string data;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      Status s = Unavailable(Errno(path));
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    data.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  scan.file_size = data.size();
  if (data.size() < kLogMagic.size()) {
    // Torn while being created (the magic is synced before any frame).
    if (kLogMagic.substr(0, data.size()) != data) {
      return Corrupt(path, 0, "not a btsim journal");
    }
    scan.torn_tail = !data.empty();
    return scan;
  }
  if (std::string_view(data).substr(0, kLogMagic.size()) != kLogMagic) {
    return Corrupt(path, 0, "not a btsim journal");
  }
  uint64_t offset = kLogMagic.size();
  while (offset < data.size()) {
    const uint64_t left = data.size() - offset;
    if (left < kFrameHeader) {
      scan.torn_tail = true;
      break;
    }
    const char* p = data.data() + offset;
    const uint32_t length = GetU32(p);
    const uint32_t crc = GetU32(p + 4);
    const uint8_t type = static_cast<uint8_t>(p[8]);
    if (length > kMaxFrame) {
      return Corrupt(path, offset,
                     "length " + std::to_string(length) + " is too large");
    }
    if (left - kFrameHeader < length) {
      scan.torn_tail = true;  // incomplete: the last frame, cut short
      break;
    }
    std::string_view payload(p + kFrameHeader, length);
    if (Checksum(type, payload) != crc) {
      if (left - kFrameHeader == length) {
        scan.torn_tail = true;  // the last frame, partly written
        break;
      }
      return Corrupt(path, offset, "checksum mismatch");
    }
    scan.frames.push_back(Frame{offset, type, std::string(payload)});
    offset += kFrameHeader + length;
  }
  scan.end = offset;
  return scan;
}

Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Unavailable(Errno(dir));
  const int rc = ::fsync(fd);
  Status s = rc == 0 ? OkStatus() : Unavailable(Errno(dir));
  ::close(fd);
  return s;
}

Result<std::unique_ptr<LogWriter>> LogWriter::Open(const std::string& path,
                                                   uint64_t end) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Unavailable(Errno(path));
  auto fail = [&](const std::string& what) {
    Status s = Unavailable(Errno(path + ": " + what));
    ::close(fd);
    return s;
  };
  if (end < kLogMagic.size()) {
    if (::ftruncate(fd, 0) != 0) return fail("truncate");
    if (::pwrite(fd, kLogMagic.data(), kLogMagic.size(), 0) !=
        static_cast<ssize_t>(kLogMagic.size())) {
      return fail("write");
    }
    end = kLogMagic.size();
  } else if (::ftruncate(fd, static_cast<off_t>(end)) != 0) {
    return fail("truncate");
  }
  if (::fsync(fd) != 0) return fail("fsync");
  if (::lseek(fd, static_cast<off_t>(end), SEEK_SET) < 0) return fail("seek");
  const size_t slash = path.rfind('/');
  BTSIM_RETURN_IF_ERROR(
      SyncDirectory(slash == std::string::npos ? "." : path.substr(0, slash)));
  return std::unique_ptr<LogWriter>(new LogWriter(fd, path, end));
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
    {
      std::unique_lock<std::mutex> lock(mu_);
      queued_cv_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
      if (pending_.empty()) return;  // stopping, nothing left
      batch.swap(pending_);
      pending_.clear();
      end = appended_;
    }
    // One write and one sync for everything queued meanwhile: the group.
    size_t done = 0;
    while (done < batch.size()) {
      const ssize_t n = ::write(fd_, batch.data() + done, batch.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        Fail("write");
      }
      done += static_cast<size_t>(n);
    }
    if (::fdatasync(fd_) != 0) Fail("fdatasync");
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
