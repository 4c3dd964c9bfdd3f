// Every data RPC is reported once to its instance's observers
// (api/request_report.h): method, app profile, serving cluster, final code,
// rows, refusal. Also the live metrics endpoint of `btsim serve`
// (cli/serve_metrics.h) over a real server.
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/instance_registry.h"
#include "cli/serve_metrics.h"
#include "tests/api/api_test_util.h"

namespace btsim::api_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A RequestReport with owned strings.
struct Recorded {
  std::string cluster;
  std::string app_profile;
  std::string method;
  StatusCode code = StatusCode::kOk;
  sim::Duration latency{0};
  int64_t modified_rows = 0;
  int64_t returned_rows = 0;
  bool refused = false;
};

class Recorder : public instance::InstanceObserver {
 public:
  void OnRequest(const instance::RequestReport& r) override {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(Recorded{std::string(r.cluster),
                                 std::string(r.app_profile),
                                 std::string(r.method), r.code, r.latency,
                                 r.modified_rows, r.returned_rows, r.refused});
  }
  std::vector<Recorded> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(requests_, {});
  }

 private:
  std::mutex mu_;
  std::vector<Recorded> requests_;
};

class RequestReportTest : public ServerTest {
 protected:
  void SetUp() override {
    api::ServerOptions options = TestOptions();
    options.instance.clusters = {{"c1", "us-east1-b", 1},
                                 {"c2", "europe-west1-d", 1}};
    options.on_instance_created = [this](instance::Instance& instance) {
      instance.AddObserver(&recorder_);
    };
    StartServer(options);
    CreateTable("t");
    recorder_.Take();  // CreateTable is an admin call: nothing reported
  }

  // The only request reported since the last call.
  Recorded Only() {
    std::vector<Recorded> all = recorder_.Take();
    EXPECT_EQ(all.size(), 1u);
    return all.empty() ? Recorded{} : all.front();
  }

  Recorder recorder_;  // outlives the server (destroyed after TearDown)
};

TEST_F(RequestReportTest, MutateRowReportsItsClusterAndOneModifiedRow) {
  Set("t", "r1", "cf", "q", "v");
  Recorded r = Only();
  EXPECT_EQ(r.method, "MutateRow");
  EXPECT_EQ(r.app_profile, "");
  EXPECT_EQ(r.cluster, "c1");  // the nearest: the client zone is c1's
  EXPECT_EQ(r.code, StatusCode::kOk);
  EXPECT_EQ(r.modified_rows, 1);
  EXPECT_EQ(r.returned_rows, 0);
  EXPECT_FALSE(r.refused);
  EXPECT_GT(r.latency.count(), 0);
}

TEST_F(RequestReportTest, FailedMutateRowReportsItsCode) {
  EXPECT_GRPC_CODE(Mutate("missing", "r1", {SetCellMutation("cf", "q", "v")}),
                   grpc::StatusCode::NOT_FOUND);
  Recorded r = Only();
  EXPECT_EQ(r.method, "MutateRow");
  EXPECT_EQ(r.cluster, "c1");
  EXPECT_EQ(r.code, StatusCode::kNotFound);
  EXPECT_EQ(r.modified_rows, 0);
}

TEST_F(RequestReportTest, ReadRowsReportsTheRowsSent) {
  for (const char* k : {"a", "b", "c"}) Set("t", k, "cf", "q", k);
  recorder_.Take();
  EXPECT_EQ(ReadTable("t").size(), 3u);
  Recorded r = Only();
  EXPECT_EQ(r.method, "ReadRows");
  EXPECT_EQ(r.cluster, "c1");
  EXPECT_EQ(r.code, StatusCode::kOk);
  EXPECT_EQ(r.returned_rows, 3);
  EXPECT_EQ(r.modified_rows, 0);
}

TEST_F(RequestReportTest, MutateRowsCountsTheEntriesThatSucceeded) {
  v2::MutateRowsRequest request;
  request.set_table_name(TableName("t"));
  request.set_app_profile_id("default");
  for (const char* family : {"cf", "nope", "cf"}) {
    auto* entry = request.add_entries();
    entry->set_row_key(std::string("k-") + family);
    *entry->add_mutations() = SetCellMutation(family, "q", "v");
  }
  grpc::ClientContext context;
  auto reader = data_->MutateRows(&context, request);
  v2::MutateRowsResponse response;
  while (reader->Read(&response)) {
  }
  ASSERT_GRPC_OK(reader->Finish());
  Recorded r = Only();
  EXPECT_EQ(r.method, "MutateRows");
  EXPECT_EQ(r.app_profile, "default");
  EXPECT_EQ(r.cluster, "c1");
  EXPECT_EQ(r.code, StatusCode::kOk);
  // The second entry names a missing family: two of three rows changed.
  EXPECT_EQ(r.modified_rows, 2);
}

TEST_F(RequestReportTest, RefusedTransactionHasNoCluster) {
  // Two clusters: the default profile is multi-cluster, without
  // transactions.
  v2::CheckAndMutateRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r1");
  *request.add_true_mutations() = SetCellMutation("cf", "q", "v");
  grpc::ClientContext context;
  v2::CheckAndMutateRowResponse response;
  EXPECT_GRPC_CODE(data_->CheckAndMutateRow(&context, request, &response),
                   grpc::StatusCode::FAILED_PRECONDITION);
  Recorded r = Only();
  EXPECT_EQ(r.method, "CheckAndMutateRow");
  EXPECT_EQ(r.cluster, "");
  EXPECT_EQ(r.code, StatusCode::kFailedPrecondition);
  EXPECT_TRUE(r.refused);
  EXPECT_EQ(r.modified_rows, 0);
}

TEST_F(RequestReportTest, UnknownProfileIsReportedButNotAsARefusal) {
  Set("t", "r1", "cf", "q", "1");
  recorder_.Take();
  v2::ReadModifyWriteRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_app_profile_id("nope");
  request.set_row_key("r1");
  auto* rule = request.add_rules();
  rule->set_family_name("cf");
  rule->set_column_qualifier("n");
  rule->set_increment_amount(1);
  grpc::ClientContext context;
  v2::ReadModifyWriteRowResponse response;
  EXPECT_GRPC_CODE(data_->ReadModifyWriteRow(&context, request, &response),
                   grpc::StatusCode::NOT_FOUND);
  Recorded r = Only();
  EXPECT_EQ(r.method, "ReadModifyWriteRow");
  EXPECT_EQ(r.app_profile, "nope");
  EXPECT_EQ(r.cluster, "");
  EXPECT_EQ(r.code, StatusCode::kNotFound);
  EXPECT_FALSE(r.refused);
}

TEST_F(RequestReportTest, SampleRowKeysIsReported) {
  grpc::Status status;
  SampleRowKeys("t", &status);
  EXPECT_GRPC_OK(status);
  Recorded r = Only();
  EXPECT_EQ(r.method, "SampleRowKeys");
  EXPECT_EQ(r.cluster, "c1");
  EXPECT_EQ(r.code, StatusCode::kOk);
}

TEST_F(RequestReportTest, MalformedTableNameIsNotReported) {
  EXPECT_GRPC_CODE(Mutate("", "r1", {SetCellMutation("cf", "q", "v")}),
                   grpc::StatusCode::INVALID_ARGUMENT);
  v2::MutateRowRequest request;
  request.set_table_name("not/a/table");
  request.set_row_key("r1");
  *request.add_mutations() = SetCellMutation("cf", "q", "v");
  grpc::ClientContext context;
  v2::MutateRowResponse response;
  EXPECT_GRPC_CODE(data_->MutateRow(&context, request, &response),
                   grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(recorder_.Take().empty());
}

// ---- cli::LiveMetrics over a real server ----

class LiveMetricsTest : public ServerTest {
 protected:
  void SetUp() override {
    api::ServerOptions options = TestOptions();
    options.instance.clusters = {{"c1", "us-east1-b", 1},
                                 {"c2", "europe-west1-d", 1}};
    options.on_instance_created = [this](instance::Instance& instance) {
      live_.OnInstanceCreated(instance);
    };
    StartServer(options);
  }
  void TearDown() override {
    live_.Stop();
    ServerTest::TearDown();
  }

  cli::LiveMetrics live_;  // outlives the server
};

TEST_F(LiveMetricsTest, ScrapeShowsRequestsAndFreshGauges) {
  CreateTable("t");
  Set("t", "r1", "cf", "q", "v");
  const std::string text = live_.Scrape(server_->registry());
  EXPECT_THAT(text, HasSubstr("# TYPE bigtable_server_requests_total counter"));
  EXPECT_THAT(text, HasSubstr("cluster=\"c1\",code=\"OK\",method=\"MutateRow\""
                              "} 1"));
  EXPECT_THAT(text, HasSubstr("bigtable_cluster_up{bigtable_instance=\"" +
                              std::string(kInstance) + "\",cluster=\"c2\"} 1"));
  EXPECT_THAT(text, HasSubstr("bigtable_tablets{"));
}

TEST_F(LiveMetricsTest, StartBindsAFreePortAndRefusesABusyOne) {
  auto port = live_.Start("127.0.0.1", 0, server_->registry());
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  EXPECT_GT(*port, 0);
  cli::LiveMetrics other;
  auto busy = other.Start("127.0.0.1", *port, server_->registry());
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(busy.status().message(),
              HasSubstr("127.0.0.1:" + std::to_string(*port)));
  // A second Start of a running endpoint is refused, not a crash.
  auto again = live_.Start("127.0.0.1", 0, server_->registry());
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(LiveMetricsTest, BadHostIsAnErrorNotACrash) {
  auto port = live_.Start("not a host", 0, server_->registry());
  EXPECT_FALSE(port.ok());
  EXPECT_THAT(port.status().message(), Not(HasSubstr("terminate")));
}

}  // namespace
}  // namespace btsim::api_test
