// The server as a process-level component: lifecycle, transports,
// unimplemented methods, garbage on the wire, concurrent clients.
#include "api/server.h"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include "sim/rng.h"
#include "tests/api/api_test_util.h"

namespace btsim::api_test {
namespace {

using ::testing::HasSubstr;

// Sends `payload` as the raw request of `method` and returns the status.
grpc::Status RawUnaryCall(const std::shared_ptr<grpc::Channel>& channel,
                          const std::string& method,
                          const std::string& payload) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  grpc::Slice slice(payload);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::CompletionQueue cq;
  auto call = stub.PrepareUnaryCall(&context, method, request, &cq);
  call->StartCall();
  grpc::Status status;
  call->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  EXPECT_TRUE(cq.Next(&tag, &ok));
  EXPECT_EQ(tag, reinterpret_cast<void*>(1));
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

class ServerLifecycleTest : public ServerTest {
 protected:
  // A cheap call that proves the server still answers.
  void ExpectServing() {
    v2::PingAndWarmRequest request;
    request.set_name(kInstance);
    grpc::ClientContext context;
    v2::PingAndWarmResponse response;
    EXPECT_GRPC_OK(data_->PingAndWarm(&context, request, &response));
  }
};

TEST_F(ServerLifecycleTest, UnservedMethodsAreUnimplemented) {
  const std::vector<std::string> methods = {
      "/google.bigtable.admin.v2.BigtableInstanceAdmin/PartialUpdateInstance",
      "/google.bigtable.admin.v2.BigtableInstanceAdmin/GetIamPolicy",
      "/google.bigtable.admin.v2.BigtableInstanceAdmin/ListHotTablets",
      "/google.bigtable.admin.v2.BigtableInstanceAdmin/UpdateInstance",
      "/google.bigtable.v2.Bigtable/ReadChangeStream",
      "/google.bigtable.v2.Bigtable/ExecuteQuery",
      "/google.bigtable.v2.Bigtable/PrepareQuery",
      "/google.bigtable.v2.Bigtable/GenerateInitialChangeStreamPartitions",
      "/google.bigtable.admin.v2.BigtableTableAdmin/CreateAuthorizedView",
      "/google.bigtable.admin.v2.BigtableTableAdmin/UndeleteTable",
      "/google.longrunning.Operations/ListOperations",
      "/no.such.Service/Method",
  };
  for (const std::string& method : methods) {
    grpc::Status s = RawUnaryCall(channel_, method, "");
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED)
        << method << ": " << s.error_message();
    ExpectServing();
  }
}

TEST_F(ServerLifecycleTest, InvalidUtf8InANameIsInvalidArgumentNotInternal) {
  // Field 1 (table_name) holding the invalid UTF-8 sequence C3 28.
  const std::string payload("\x0a\x02\xc3\x28", 4);
  grpc::Status s =
      RawUnaryCall(channel_, "/google.bigtable.v2.Bigtable/MutateRow", payload);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << s.error_message();
  EXPECT_THAT(s.error_message(), ::testing::HasSubstr("table_name"));
  ExpectServing();
}

TEST_F(ServerLifecycleTest, GarbageRequestBytesDoNotCrashTheServer) {
  CreateTable("t");
  // The parser logs every invalid UTF-8 string it meets; keep the output
  // clean.
  google::protobuf::LogSilencer silence_parser_errors;
  sim::Rng rng(42);
  std::vector<std::string> payloads = {
      // Field 1 (table_name) claims 255 bytes but only 3 follow.
      std::string("\x0a\xff\x01"
                  "abc",
                  6),
      // A varint that never ends.
      std::string(12, '\xff'),
      // Wire type 7 does not exist.
      std::string("\x0f", 1),
  };
  for (int i = 0; i < 20; ++i) {
    std::string random(1 + rng.Uniform(200), '\0');
    for (char& c : random) c = static_cast<char>(rng.Uniform(256));
    v2::MutateRowRequest probe;
    if (!probe.ParseFromString(random)) payloads.push_back(random);
  }
  ASSERT_GE(payloads.size(), 10u);
  for (const std::string& payload : payloads) {
    v2::MutateRowRequest probe;
    ASSERT_FALSE(probe.ParseFromString(payload));
    for (const char* method : {"/google.bigtable.v2.Bigtable/MutateRow",
                               "/google.bigtable.v2.Bigtable/ReadRows",
                               "/google.bigtable.admin.v2.BigtableTableAdmin/"
                               "CreateTable"}) {
      grpc::Status s = RawUnaryCall(channel_, method, payload);
      // These methods parse their requests themselves.
      EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
          << method << ": " << s.error_message();
      EXPECT_THAT(s.error_message(),
                  ::testing::StartsWith("request: the bytes are not a "
                                        "valid google.bigtable."));
    }
  }
  ExpectServing();
  Set("t", "r", "cf", "q", "still works");
  EXPECT_EQ(ReadTable("t").size(), 1u);
}

TEST_F(ServerLifecycleTest, WellFormedBytesThroughTheGenericStubWork) {
  CreateTable("t");
  v2::MutateRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  *request.add_mutations() = SetCellMutation("cf", "q", "generic");
  EXPECT_GRPC_OK(RawUnaryCall(channel_,
                              "/google.bigtable.v2.Bigtable/MutateRow",
                              request.SerializeAsString()));
  EXPECT_EQ(ReadRow("t", "r")->Latest("cf", "q"), "generic");
}

TEST_F(ServerLifecycleTest, InProcessChannelServesBothServices) {
  auto channel = server_->InProcessChannel();
  auto data = v2::Bigtable::NewStub(channel);
  auto table_admin = admin::BigtableTableAdmin::NewStub(channel);
  admin::CreateTableRequest create;
  create.set_parent(kInstance);
  create.set_table_id("inproc");
  (*create.mutable_table()->mutable_column_families())["cf"];
  {
    grpc::ClientContext context;
    admin::Table table;
    ASSERT_GRPC_OK(table_admin->CreateTable(&context, create, &table));
  }
  {
    v2::MutateRowRequest request;
    request.set_table_name(TableName("inproc"));
    request.set_row_key("r");
    *request.add_mutations() = SetCellMutation("cf", "q", "v");
    grpc::ClientContext context;
    v2::MutateRowResponse response;
    ASSERT_GRPC_OK(data->MutateRow(&context, request, &response));
  }
  v2::ReadRowsRequest read;
  read.set_table_name(TableName("inproc"));
  auto rows = ReadAll(*data, read);
  ASSERT_EQ(rows.size(), 1u);
  // Visible over TCP too: one server, one registry.
  EXPECT_EQ(ReadTable("inproc").size(), 1u);
}

TEST_F(ServerLifecycleTest, InstancesAreIndependent) {
  CreateTable("t");
  admin::CreateTableRequest create;
  create.set_parent("projects/other/instances/x");
  create.set_table_id("t");
  (*create.mutable_table()->mutable_column_families())["cf"];
  ASSERT_GRPC_OK(TryCreateTable(create));
  Set("t", "only-in-i", "cf", "q", "v");
  v2::ReadRowsRequest read;
  read.set_table_name("projects/other/instances/x/tables/t");
  EXPECT_TRUE(ReadAll(*data_, read).empty());
  EXPECT_EQ(ReadTable("t").size(), 1u);
}

TEST_F(ServerLifecycleTest, ARequestAboveTheSizeLimitIsRefused) {
  TearDown();
  api::ServerOptions options = TestOptions();
  options.max_request_bytes = 64 << 10;
  StartServer(options);
  CreateTable("t");
  grpc::Status s = Mutate(
      "t", "r", {SetCellMutation("cf", "q", std::string(100 << 10, 'v'))});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::RESOURCE_EXHAUSTED);
  ExpectServing();
  Set("t", "r", "cf", "q", std::string(10 << 10, 'v'));
  EXPECT_EQ(ReadTable("t").size(), 1u);
}

TEST_F(ServerLifecycleTest, NewInstancesPastTheLimitAreRefused) {
  TearDown();
  api::ServerOptions options = TestOptions();
  options.max_instances = 3;
  StartServer(options);
  auto create_in = [&](const std::string& instance) {
    admin::CreateTableRequest create;
    create.set_parent("projects/p/instances/" + instance);
    create.set_table_id("t");
    return TryCreateTable(create);
  };
  for (const char* instance : {"a", "b", "c"}) {
    ASSERT_GRPC_OK(create_in(instance));
  }
  // A malformed request is refused as such: it does not reach the limit.
  admin::CreateTableRequest bad;
  bad.set_parent("projects/p/instances/d");
  bad.set_table_id("no such id!");
  EXPECT_GRPC_CODE(TryCreateTable(bad), grpc::StatusCode::INVALID_ARGUMENT);
  grpc::Status s = create_in("d");
  EXPECT_GRPC_CODE(s, grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("projects/p/instances/d"));
  EXPECT_THAT(s.error_message(), HasSubstr("--max-instances"));
  // So is every other call naming a new instance; known ones still work.
  v2::PingAndWarmRequest ping;
  ping.set_name("projects/p/instances/e");
  grpc::ClientContext context;
  v2::PingAndWarmResponse pong;
  EXPECT_GRPC_CODE(data_->PingAndWarm(&context, ping, &pong),
                   grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_GRPC_CODE(create_in("a"), grpc::StatusCode::ALREADY_EXISTS);
}

TEST_F(ServerLifecycleTest, ConcurrentClients) {
  CreateTable("t");
  constexpr int kThreads = 4;
  constexpr int kWrites = 100;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kWrites; ++i) {
        const std::string key =
            "t" + std::to_string(t) + "-" + std::to_string(1000 + i);
        if (!Mutate("t", key, {SetCellMutation("cf", "q", key)}).ok()) {
          ++failures;
        }
        if (i % 10 == 0) {
          v2::ReadRowsRequest read;
          read.set_table_name(TableName("t"));
          ReadOutcome out = ReadRowsRaw(*data_, read);
          if (!out.status.ok() || !out.stream.ok()) ++failures;
        }
      }
    });
  }
  // Compaction runs concurrently with the clients.
  for (int i = 0; i < 5; ++i) server_->CompactNow();
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  auto rows = ReadTable("t");
  ASSERT_EQ(rows.size(), static_cast<size_t>(kThreads * kWrites));
  for (const MergedRow& r : rows) EXPECT_EQ(r.Latest("cf", "q"), r.key);
}

TEST_F(ServerLifecycleTest, SecondServerOnTheSamePortFails) {
  api::ServerOptions options;
  options.host = "127.0.0.1";
  options.port = port_;
  options.compaction_interval = std::chrono::milliseconds(0);
  api::Server second(options);
  auto port = second.Start();
  ASSERT_FALSE(port.ok());
  EXPECT_EQ(port.status().code(), StatusCode::kUnavailable);
  second.Shutdown();
  ExpectServing();
}

TEST_F(ServerLifecycleTest, ShutdownIsIdempotentAndWaitReturns) {
  server_->Shutdown();
  server_->Shutdown();
  server_->Wait();
  v2::PingAndWarmRequest request;
  request.set_name(kInstance);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(500));
  v2::PingAndWarmResponse response;
  EXPECT_FALSE(data_->PingAndWarm(&context, request, &response).ok());
}

TEST(ServerStandaloneTest, BackgroundCompactionAppliesGc) {
  api::ServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.compaction_interval = std::chrono::milliseconds(20);
  api::Server server(options);
  ASSERT_TRUE(server.Start().ok());
  auto channel = server.InProcessChannel();
  auto data = v2::Bigtable::NewStub(channel);
  auto table_admin = admin::BigtableTableAdmin::NewStub(channel);
  admin::CreateTableRequest create;
  create.set_parent("projects/p/instances/i");
  create.set_table_id("t");
  (*create.mutable_table()->mutable_column_families())["cf"]
      .mutable_gc_rule()
      ->set_max_num_versions(1);
  {
    grpc::ClientContext context;
    admin::Table table;
    ASSERT_GRPC_OK(table_admin->CreateTable(&context, create, &table));
  }
  v2::MutateRowRequest write;
  write.set_table_name("projects/p/instances/i/tables/t");
  write.set_row_key("r");
  for (int ts = 1; ts <= 3; ++ts) {
    *write.add_mutations() = SetCellMutation("cf", "q", "v", ts * 1000);
  }
  {
    grpc::ClientContext context;
    v2::MutateRowResponse response;
    ASSERT_GRPC_OK(data->MutateRow(&context, write, &response));
  }
  v2::ReadRowsRequest read;
  read.set_table_name("projects/p/instances/i/tables/t");
  size_t cells = 0;
  for (int attempt = 0; attempt < 200; ++attempt) {
    auto rows = ReadAll(*data, read);
    ASSERT_EQ(rows.size(), 1u);
    cells = rows[0].CellCount();
    if (cells == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(cells, 1u);
  server.Shutdown();
}

}  // namespace
}  // namespace btsim::api_test
