#include "durable/framed_log.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace btsim::durable {
namespace {

std::string TempDir() {
  std::string pattern = ::testing::TempDir() + "framed_log_XXXXXX";
  char* made = ::mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr);
  return pattern;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

std::vector<std::string> Payloads() {
  return {"first", std::string(1000, 'x'), "", std::string("a\0b", 3),
          "last record"};
}

// Writes Payloads() to a fresh journal; returns its path.
std::string WriteJournal(const std::string& dir) {
  const std::string path = dir + "/journal.log";
  auto writer = LogWriter::Open(path, 0);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  uint8_t type = 1;
  for (const std::string& p : Payloads()) (*writer)->Append(type++, p);
  (*writer)->Sync();
  return path;
}

TEST(FramedLogTest, RoundTrip) {
  const std::string path = WriteJournal(TempDir());
  auto scan = ScanLog(path);
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  ASSERT_EQ(scan->frames.size(), Payloads().size());
  for (size_t i = 0; i < Payloads().size(); ++i) {
    EXPECT_EQ(scan->frames[i].payload, Payloads()[i]);
    EXPECT_EQ(scan->frames[i].type, i + 1);
  }
  EXPECT_FALSE(scan->torn_tail);
  EXPECT_EQ(scan->end, std::filesystem::file_size(path));
}

TEST(FramedLogTest, MissingFileIsEmpty) {
  auto scan = ScanLog(TempDir() + "/absent.log");
  ASSERT_TRUE(scan.ok());
  EXPECT_TRUE(scan->frames.empty());
  EXPECT_EQ(scan->end, 0u);
}

TEST(FramedLogTest, TornTailIsDroppedAtEveryTruncationPoint) {
  const std::string path = WriteJournal(TempDir());
  const std::string whole = ReadAll(path);
  auto full = ScanLog(path);
  ASSERT_TRUE(full.ok());
  const uint64_t last_start = full->frames.back().offset;
  for (uint64_t cut = last_start + 1; cut < whole.size(); ++cut) {
    WriteAll(path, whole.substr(0, cut));
    auto scan = ScanLog(path);
    ASSERT_TRUE(scan.ok()) << "cut at " << cut << ": "
                           << scan.status().ToString();
    EXPECT_TRUE(scan->torn_tail) << cut;
    EXPECT_EQ(scan->end, last_start) << cut;
    EXPECT_EQ(scan->frames.size(), Payloads().size() - 1) << cut;
    // The writer cuts the torn record off and appends after the others.
    auto writer = LogWriter::Open(path, scan->end);
    ASSERT_TRUE(writer.ok());
    (*writer)->Append(9, "again");
    (*writer)->Sync();
    writer->reset();
    auto again = ScanLog(path);
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again->torn_tail);
    ASSERT_EQ(again->frames.size(), Payloads().size());
    EXPECT_EQ(again->frames.back().payload, "again");
  }
}

TEST(FramedLogTest, ChecksumMismatchOfTheLastRecordIsATornTail) {
  const std::string path = WriteJournal(TempDir());
  std::string data = ReadAll(path);
  data.back() ^= 0x40;  // inside the last payload
  WriteAll(path, data);
  auto scan = ScanLog(path);
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  EXPECT_TRUE(scan->torn_tail);
  EXPECT_EQ(scan->frames.size(), Payloads().size() - 1);
}

TEST(FramedLogTest, FlippedByteMidFileNamesFileAndOffset) {
  const std::string path = WriteJournal(TempDir());
  auto full = ScanLog(path);
  ASSERT_TRUE(full.ok());
  const Frame& second = full->frames[1];  // 1000 'x'
  std::string data = ReadAll(path);
  data[second.offset + kFrameHeader + 500] ^= 0x01;
  WriteAll(path, data);
  auto scan = ScanLog(path);
  ASSERT_FALSE(scan.ok());
  EXPECT_EQ(scan.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(scan.status().message().find(path), std::string::npos)
      << scan.status().ToString();
  EXPECT_NE(
      scan.status().message().find("offset " + std::to_string(second.offset)),
      std::string::npos)
      << scan.status().ToString();
}

TEST(FramedLogTest, EveryBitOfEveryHeaderButTheLastIsCorruption) {
  // A damaged length may claim a frame running past the end of the file,
  // as a torn final write does: the valid frames after it tell them apart.
  const std::string path = WriteJournal(TempDir());
  auto full = ScanLog(path);
  ASSERT_TRUE(full.ok());
  const std::string whole = ReadAll(path);
  for (size_t f = 0; f + 1 < full->frames.size(); ++f) {
    const uint64_t at = full->frames[f].offset;
    for (uint64_t byte = at; byte < at + kFrameHeader; ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string data = whole;
        data[byte] ^= static_cast<char>(1 << bit);
        WriteAll(path, data);
        auto scan = ScanLog(path);
        ASSERT_FALSE(scan.ok()) << "byte " << byte << " bit " << bit;
        EXPECT_NE(scan.status().message().find("offset " + std::to_string(at)),
                  std::string::npos)
            << scan.status().ToString();
      }
    }
  }
}

TEST(FramedLogTest, ZerosAfterTheLastRecordAreATornTail) {
  // What some file systems leave of a write cut short: its length, zeros.
  const std::string path = WriteJournal(TempDir());
  const std::string whole = ReadAll(path);
  WriteAll(path, whole + std::string(300, '\0'));
  auto scan = ScanLog(path);
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  EXPECT_TRUE(scan->torn_tail);
  EXPECT_EQ(scan->end, whole.size());
  EXPECT_EQ(scan->frames.size(), Payloads().size());
}

TEST(FramedLogTest, BadMagicIsCorruption) {
  const std::string path = TempDir() + "/journal.log";
  WriteAll(path, "NOTAJOURNAL-----");
  auto scan = ScanLog(path);
  ASSERT_FALSE(scan.ok());
  EXPECT_NE(scan.status().message().find("offset 0"), std::string::npos);
}

TEST(FramedLogTest, GroupCommitAcknowledgesOnlyAfterTheSync) {
  const std::string path = TempDir() + "/journal.log";
  auto writer = LogWriter::Open(path, 0);
  ASSERT_TRUE(writer.ok());
  LogWriter& log = **writer;
  constexpr int kThreads = 8;
  constexpr int kEach = 50;
  std::vector<std::thread> threads;
  std::atomic<int> early{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const uint64_t end =
            log.Append(1, "t" + std::to_string(t) + "-" + std::to_string(i));
        log.Sync();
        // Acknowledged: synced and in the file.
        if (log.durable_end() < end) ++early;
        struct stat st;
        if (::stat(path.c_str(), &st) != 0 ||
            static_cast<uint64_t>(st.st_size) < end) {
          ++early;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(early.load(), 0);
  EXPECT_EQ(log.durable_end(), log.appended_end());
  // Frames queued while a sync runs share the next one.
  const uint64_t before = log.syncs();
  for (int i = 0; i < 200; ++i) log.Append(2, "grouped");
  log.Sync();
  EXPECT_LT(log.syncs() - before, 20u);
  writer->reset();
  auto scan = ScanLog(path);
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(scan->frames.size(), static_cast<size_t>(kThreads * kEach + 200));
}

TEST(FramedLogTest, AfterSyncReleasesOnlyOnceSynced) {
  const std::string path = TempDir() + "/journal.log";
  auto writer = LogWriter::Open(path, 0);
  ASSERT_TRUE(writer.ok());
  LogWriter& log = **writer;
  // Nothing pending: released at once.
  bool at_once = false;
  log.AfterSync([&] { at_once = true; });
  EXPECT_TRUE(at_once);
  std::mutex mu;
  std::vector<std::pair<uint64_t, uint64_t>> seen;  // (wanted, durable)
  for (int i = 0; i < 100; ++i) {
    const uint64_t end = log.Append(1, "record " + std::to_string(i));
    log.AfterSync([&, end] {
      std::lock_guard<std::mutex> lock(mu);
      seen.emplace_back(end, log.durable_end());
    });
  }
  log.Sync();
  writer->reset();  // every callback has run
  ASSERT_EQ(seen.size(), 100u);
  for (const auto& [wanted, durable] : seen) EXPECT_GE(durable, wanted);
}

}  // namespace
}  // namespace btsim::durable
