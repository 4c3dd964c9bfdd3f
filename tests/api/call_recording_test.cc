// Recorded calls (`btsim serve --scenario`): when an observer of the
// instance records calls, every data RPC's report also names its caller
// (the x-btsim-client header, else the gRPC peer), its table, and what it
// did to each row; otherwise reports carry none of it.
#include <mutex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/request_report.h"
#include "tests/api/api_test_util.h"

namespace btsim::api_test {
namespace {

using ::testing::ElementsAre;
using ::testing::StartsWith;

// A recorded row with owned strings.
struct Row {
  std::string key;
  size_t mutations = 0;
  std::vector<std::string> values;  // of the cells
  StatusCode code = StatusCode::kOk;
  uint64_t version = 0;
};
struct Call {
  bool recorded = false;
  std::string method;
  std::string client;
  std::string table;
  StatusCode code = StatusCode::kOk;
  bool point_read = false;
  bool filtered = false;
  std::vector<Row> rows;
};

class CallRecorder : public instance::InstanceObserver {
 public:
  explicit CallRecorder(bool records) : records_(records) {}
  bool RecordsCalls() const override { return records_; }
  void OnRequest(const instance::RequestReport& r) override {
    Call call{r.recorded,
              std::string(r.method),
              std::string(r.client),
              std::string(r.table),
              r.code,
              r.point_read,
              r.filtered,
              {}};
    for (const instance::RowOutcome& o : r.rows) {
      Row row{std::string(o.key), o.mutations.size(), {}, o.code, o.version};
      for (const cluster::CellView& c : o.cells) {
        row.values.emplace_back(c.value);
      }
      call.rows.push_back(std::move(row));
    }
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(std::move(call));
  }
  std::vector<Call> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(calls_, {});
  }

 private:
  const bool records_;
  std::mutex mu_;
  std::vector<Call> calls_;
};

class CallRecordingTest : public ServerTest {
 protected:
  void Start(bool records) {
    recorder_ = std::make_unique<CallRecorder>(records);
    api::ServerOptions options = TestOptions();
    options.on_instance_created = [this](instance::Instance& instance) {
      instance.AddObserver(recorder_.get());
    };
    StartServer(options);
    CreateTable("t", {"cf", "other"});
  }
  void SetUp() override { Start(/*records=*/true); }

  Call Only() {
    std::vector<Call> all = recorder_->Take();
    EXPECT_EQ(all.size(), 1u);
    return all.empty() ? Call{} : all.front();
  }

  // A ReadRows request for table t.
  static v2::ReadRowsRequest ReadRequest() {
    v2::ReadRowsRequest request;
    request.set_table_name(TableName("t"));
    return request;
  }

  std::unique_ptr<CallRecorder> recorder_;  // outlives the server
};

TEST_F(CallRecordingTest, TheHeaderNamesTheCallerElseThePeer) {
  v2::MutateRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r1");
  *request.add_mutations() = SetCellMutation("cf", "v", "w1");
  *request.add_mutations() = SetCellMutation("cf", "w", "w2");
  {
    grpc::ClientContext context;
    context.AddMetadata(std::string(api::RequestReporter::kClientHeader),
                        "checkout-1");
    v2::MutateRowResponse response;
    ASSERT_GRPC_OK(data_->MutateRow(&context, request, &response));
  }
  Call call = Only();
  EXPECT_TRUE(call.recorded);
  EXPECT_EQ(call.client, "checkout-1");
  EXPECT_EQ(call.table, "t");
  ASSERT_EQ(call.rows.size(), 1u);
  EXPECT_EQ(call.rows[0].key, "r1");
  EXPECT_EQ(call.rows[0].mutations, 2u);
  EXPECT_NE(call.rows[0].version, 0u);

  Set("t", "r2", "cf", "v", "x");
  EXPECT_THAT(Only().client, StartsWith("ipv4:127.0.0.1:"));
}

TEST_F(CallRecordingTest, AReplayOfAnIdempotencyTokenRecordsNoCommit) {
  v2::MutateRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r1");
  *request.add_mutations() = SetCellMutation("cf", "v", "w1");
  request.mutable_idempotency()->set_token("replay-once");
  for (int i = 0; i < 2; ++i) {
    grpc::ClientContext context;
    v2::MutateRowResponse response;
    ASSERT_GRPC_OK(data_->MutateRow(&context, request, &response));
  }
  std::vector<Call> calls = recorder_->Take();
  ASSERT_EQ(calls.size(), 2u);
  ASSERT_EQ(calls[0].rows.size(), 1u);
  ASSERT_EQ(calls[1].rows.size(), 1u);
  EXPECT_NE(calls[0].rows[0].version, 0u);  // applied
  EXPECT_EQ(calls[1].rows[0].code, StatusCode::kOk);
  EXPECT_EQ(calls[1].rows[0].version, 0u);  // acknowledged, not applied
}

TEST_F(CallRecordingTest, MutateRowsRecordsAReplayedEntryWithoutACommit) {
  v2::MutateRowsRequest request;
  request.set_table_name(TableName("t"));
  auto* once = request.add_entries();
  once->set_row_key("r1");
  *once->add_mutations() = SetCellMutation("cf", "v", "w1");
  once->mutable_idempotency()->set_token("replay-entry");
  for (int i = 0; i < 2; ++i) {
    if (i == 1) {  // the replay, and an entry of its own
      auto* fresh = request.add_entries();
      fresh->set_row_key("r2");
      *fresh->add_mutations() = SetCellMutation("cf", "v", "w2");
    }
    grpc::ClientContext context;
    auto reader = data_->MutateRows(&context, request);
    v2::MutateRowsResponse response;
    while (reader->Read(&response)) {
    }
    ASSERT_GRPC_OK(reader->Finish());
  }
  // All replays: no commit at all.
  request.mutable_entries()->DeleteSubrange(1, 1);
  {
    grpc::ClientContext context;
    auto reader = data_->MutateRows(&context, request);
    v2::MutateRowsResponse response;
    while (reader->Read(&response)) {
    }
    ASSERT_GRPC_OK(reader->Finish());
  }
  std::vector<Call> calls = recorder_->Take();
  ASSERT_EQ(calls.size(), 3u);
  ASSERT_EQ(calls[0].rows.size(), 1u);
  EXPECT_NE(calls[0].rows[0].version, 0u);
  ASSERT_EQ(calls[1].rows.size(), 2u);
  EXPECT_EQ(calls[1].rows[0].code, StatusCode::kOk);
  EXPECT_EQ(calls[1].rows[0].version, 0u);  // acknowledged, not applied
  EXPECT_NE(calls[1].rows[1].version, 0u);
  ASSERT_EQ(calls[2].rows.size(), 1u);
  EXPECT_EQ(calls[2].rows[0].version, 0u);
}

TEST_F(CallRecordingTest, MutateRowsRecordsEachEntryWithItsOutcome) {
  v2::MutateRowsRequest request;
  request.set_table_name(TableName("t"));
  for (const char* family : {"cf", "nope"}) {
    auto* entry = request.add_entries();
    entry->set_row_key(std::string("k-") + family);
    *entry->add_mutations() = SetCellMutation(family, "v", "x");
  }
  grpc::ClientContext context;
  auto reader = data_->MutateRows(&context, request);
  v2::MutateRowsResponse response;
  while (reader->Read(&response)) {
  }
  ASSERT_GRPC_OK(reader->Finish());
  Call call = Only();
  ASSERT_EQ(call.rows.size(), 2u);
  EXPECT_EQ(call.rows[0].key, "k-cf");
  EXPECT_EQ(call.rows[0].code, StatusCode::kOk);
  EXPECT_NE(call.rows[0].version, 0u);
  EXPECT_EQ(call.rows[1].key, "k-nope");
  EXPECT_NE(call.rows[1].code, StatusCode::kOk);
  EXPECT_EQ(call.rows[1].version, 0u);
}

TEST_F(CallRecordingTest, ReadRowsOfOneKeyRecordsTheRowItReturned) {
  Set("t", "r1", "cf", "v", "w1");
  Set("t", "r2", "cf", "v", "w2");
  recorder_->Take();
  v2::ReadRowsRequest one = ReadRequest();
  one.mutable_rows()->add_row_keys("r1");
  ReadAll(*data_, one);
  Call call = Only();
  EXPECT_TRUE(call.point_read);
  EXPECT_FALSE(call.filtered);
  ASSERT_EQ(call.rows.size(), 1u);
  EXPECT_THAT(call.rows[0].values, ElementsAre("w1"));

  one.mutable_filter()->set_family_name_regex_filter("other");
  ReadAll(*data_, one);
  call = Only();
  EXPECT_TRUE(call.filtered);
  EXPECT_TRUE(call.rows[0].values.empty());

  ReadAll(*data_, ReadRequest());  // a scan
  call = Only();
  EXPECT_FALSE(call.point_read);
  EXPECT_TRUE(call.rows.empty());
}

TEST_F(CallRecordingTest, TransactionsRecordWhatTheyWrote) {
  Set("t", "r1", "cf", "v", "w1");
  recorder_->Take();
  v2::CheckAndMutateRowRequest check;
  check.set_table_name(TableName("t"));
  check.set_row_key("r1");
  *check.add_true_mutations() = SetCellMutation("cf", "v", "w2");
  {
    grpc::ClientContext context;
    v2::CheckAndMutateRowResponse response;
    ASSERT_GRPC_OK(data_->CheckAndMutateRow(&context, check, &response));
    ASSERT_TRUE(response.predicate_matched());
  }
  Call call = Only();
  ASSERT_EQ(call.rows.size(), 1u);
  EXPECT_EQ(call.rows[0].mutations, 1u);  // the branch that ran
  EXPECT_NE(call.rows[0].version, 0u);

  v2::ReadModifyWriteRowRequest rmw;
  rmw.set_table_name(TableName("t"));
  rmw.set_row_key("r1");
  auto* rule = rmw.add_rules();
  rule->set_family_name("cf");
  rule->set_column_qualifier("log");
  rule->set_append_value("+");
  {
    grpc::ClientContext context;
    v2::ReadModifyWriteRowResponse response;
    ASSERT_GRPC_OK(data_->ReadModifyWriteRow(&context, rmw, &response));
  }
  call = Only();
  ASSERT_EQ(call.rows.size(), 1u);
  EXPECT_THAT(call.rows[0].values, ElementsAre("+"));
  EXPECT_NE(call.rows[0].version, 0u);
}

TEST_F(CallRecordingTest, ASettlingInstanceRefusesDataCalls) {
  auto served = server_->registry().GetOrCreate(kInstance);
  ASSERT_TRUE(served.ok());
  {
    std::lock_guard<std::mutex> lock((*served)->mu);
    (*served)->settling = true;
  }
  grpc::Status status = Mutate("t", "r1", {SetCellMutation("cf", "v", "x")});
  EXPECT_GRPC_CODE(status, grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(), testing::HasSubstr("scenario has ended"));
  v2::ReadRowsRequest one = ReadRequest();
  one.mutable_rows()->add_row_keys("r1");
  EXPECT_GRPC_CODE(ReadRowsRaw(*data_, one).status,
                   grpc::StatusCode::UNAVAILABLE);
}

TEST_F(CallRecordingTest, NothingIsRecordedWhenNoObserverAsks) {
  TearDown();
  Start(/*records=*/false);
  recorder_->Take();
  Set("t", "r1", "cf", "v", "w1");
  Call call = Only();
  EXPECT_FALSE(call.recorded);
  EXPECT_TRUE(call.client.empty());
  EXPECT_TRUE(call.rows.empty());
}

}  // namespace
}  // namespace btsim::api_test
