// ServerOptions::before_reply: every reply waits for its release (what
// `btsim serve --data-dir` does until the journal is synced), backups'
// included.
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>

#include "tests/api/api_test_util.h"

namespace btsim::api_test {
namespace {

class HeldReplyTest : public ServerTest {
 protected:
  void SetUp() override {
    api::ServerOptions options = TestOptions();
    options.before_reply = [this](std::function<void()> release) {
      std::lock_guard<std::mutex> lock(mu_);
      if (holding_) {
        held_.push_back(std::move(release));
      } else {
        release();
      }
    };
    StartServer(options);
  }
  void TearDown() override {
    ReleaseAll();
    ServerTest::TearDown();
  }
  void Hold() {
    std::lock_guard<std::mutex> lock(mu_);
    holding_ = true;
  }
  size_t ReleaseAll() {
    std::vector<std::function<void()>> held;
    {
      std::lock_guard<std::mutex> lock(mu_);
      holding_ = false;
      held.swap(held_);
    }
    for (auto& release : held) release();  // from this thread
    return held.size();
  }

  std::mutex mu_;
  bool holding_ = false;
  std::vector<std::function<void()>> held_;
};

TEST_F(HeldReplyTest, AReplyGoesOutOnlyOnceReleased) {
  CreateTable("t");
  Hold();
  auto write = std::async(std::launch::async, [&] {
    return Mutate("t", "r", {SetCellMutation("cf", "q", "v")});
  });
  EXPECT_EQ(write.wait_for(std::chrono::milliseconds(300)),
            std::future_status::timeout);
  EXPECT_GE(ReleaseAll(), 1u);
  EXPECT_TRUE(write.get().ok());
  // A read's messages are held and released the same way.
  Hold();
  auto read = std::async(std::launch::async, [&] { return ReadTable("t"); });
  EXPECT_EQ(read.wait_for(std::chrono::milliseconds(300)),
            std::future_status::timeout);
  while (read.wait_for(std::chrono::milliseconds(10)) !=
         std::future_status::ready) {
    ReleaseAll();
  }
  ASSERT_EQ(read.get().size(), 1u);
}

TEST_F(HeldReplyTest, ABackupIsMadeAndItsReplyHeldLikeAnyChange) {
  CreateTable("t");
  admin::CreateBackupRequest request;
  request.set_parent(std::string(kInstance) + "/clusters/i-c1");
  request.set_backup_id("b");
  request.mutable_backup()->set_source_table(TableName("t"));
  request.mutable_backup()->mutable_expire_time()->set_seconds(
      std::chrono::duration_cast<std::chrono::seconds>(
          std::chrono::system_clock::now().time_since_epoch() +
          std::chrono::hours(7))
          .count());
  Hold();
  auto made = std::async(std::launch::async, [&] {
    grpc::ClientContext context;
    google::longrunning::Operation op;
    return admin_->CreateBackup(&context, request, &op);
  });
  EXPECT_EQ(made.wait_for(std::chrono::milliseconds(300)),
            std::future_status::timeout);
  EXPECT_GE(ReleaseAll(), 1u);
  const grpc::Status s = made.get();
  EXPECT_TRUE(s.ok()) << s.error_message();
}

}  // namespace
}  // namespace btsim::api_test
