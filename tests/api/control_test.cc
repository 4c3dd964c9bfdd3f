// btsim.control.v1.Control (live faults) through the generated stub against
// a real replicated server (c1=us-east1-b, c2=us-east1-c, c3=europe-west1-d,
// --replication-latency 200ms), and `btsim ctl`'s client code against it.
#include <chrono>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/instance_registry.h"
#include "btsim/control/v1/control.grpc.pb.h"
#include "cli/ctl.h"
#include "tests/api/api_test_util.h"

namespace btsim::api_test {
namespace {

namespace control = ::btsim::control::v1;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kOther[] = "projects/p/instances/other";

class ControlTest : public ServerTest {
 protected:
  void SetUp() override {
    StartServer(ThreeClusterOptions(std::chrono::milliseconds(200)));
    control_ = control::Control::NewStub(channel_);
  }

  // Creates "t" and app profiles "to-c1" / "to-c2" pinned to one cluster,
  // then waits until the schema has replicated everywhere.
  void SetUpTableAndProfiles() {
    CreateTable("t");
    auto served = server_->registry().GetOrCreate(kInstance);
    ASSERT_TRUE(served.ok());
    {
      std::lock_guard<std::mutex> lock((*served)->mu);
      for (const char* cluster : {"c1", "c2"}) {
        appprofile::AppProfile p;
        p.id = std::string("to-") + cluster;
        p.routing = appprofile::AppProfile::Routing::kSingleCluster;
        p.cluster_id = cluster;
        p.allow_transactional_writes = std::string(cluster) == "c1";
        ASSERT_TRUE((*served)->instance->profiles().Create(p, true).ok());
      }
    }
    WaitFor("schema replicated", [&] { return TotalBacklog() == 0; });
  }

  grpc::Status SetState(const std::string& cluster, bool down,
                        const std::string& instance = "") {
    control::SetClusterStateRequest request;
    request.set_instance(instance);
    request.set_cluster_id(cluster);
    request.set_down(down);
    grpc::ClientContext context;
    control::SetClusterStateResponse response;
    return control_->SetClusterState(&context, request, &response);
  }

  grpc::Status Partition(const std::string& a, const std::string& b,
                         bool one_way, bool heal,
                         const std::string& instance = "") {
    control::SetPartitionRequest request;
    request.set_instance(instance);
    request.set_cluster_a(a);
    request.set_cluster_b(b);
    request.set_one_way(one_way);
    request.set_heal(heal);
    grpc::ClientContext context;
    control::SetPartitionResponse response;
    return control_->SetPartition(&context, request, &response);
  }

  // `millis` < 0 leaves the latency unset.
  grpc::Status Latency(const std::string& a, const std::string& b,
                       int64_t millis, bool one_way = false,
                       const std::string& instance = "") {
    control::SetLatencyRequest request;
    request.set_instance(instance);
    request.set_cluster_a(a);
    request.set_cluster_b(b);
    request.set_one_way(one_way);
    if (millis >= 0) {
      request.mutable_latency()->set_seconds(millis / 1000);
      request.mutable_latency()->set_nanos((millis % 1000) * 1'000'000);
    }
    grpc::ClientContext context;
    control::SetLatencyResponse response;
    return control_->SetLatency(&context, request, &response);
  }

  control::GetStatusResponse AllStatus(const std::string& instance = "") {
    control::GetStatusRequest request;
    request.set_instance(instance);
    grpc::ClientContext context;
    control::GetStatusResponse response;
    grpc::Status s = control_->GetStatus(&context, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response;
  }

  control::InstanceStatus OneStatus() {
    control::GetStatusResponse status = AllStatus(kInstance);
    EXPECT_EQ(status.instances_size(), 1);
    return status.instances_size() == 1 ? status.instances(0)
                                        : control::InstanceStatus();
  }

  control::LinkStatus Link(const std::string& from, const std::string& to) {
    const control::InstanceStatus status = OneStatus();
    for (const control::LinkStatus& link : status.links()) {
      if (link.from_cluster() == from && link.to_cluster() == to) return link;
    }
    ADD_FAILURE() << "no link " << from << " -> " << to;
    return {};
  }

  static int64_t Millis(const control::LinkStatus& link) {
    return link.latency().seconds() * 1000 + link.latency().nanos() / 1'000'000;
  }

  uint64_t TotalBacklog() {
    uint64_t total = 0;
    const control::InstanceStatus status = OneStatus();
    for (const control::LinkStatus& link : status.links()) {
      total += link.backlog();
    }
    return total;
  }

  // Polls `done` every 50 ms for up to 10 s of real time.
  void WaitFor(const std::string& what, const std::function<bool()>& done) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) {
        FAIL() << "timed out waiting for: " << what;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  // `deadline` 0: none.
  grpc::Status WriteVia(const std::string& profile, const std::string& key,
                        const std::string& value,
                        std::chrono::milliseconds deadline = {}) {
    v2::MutateRowRequest request;
    request.set_table_name(TableName("t"));
    request.set_app_profile_id(profile);
    request.set_row_key(key);
    *request.add_mutations() = SetCellMutation("cf", "q", value);
    grpc::ClientContext context;
    if (deadline.count() > 0) {
      context.set_deadline(std::chrono::system_clock::now() + deadline);
    }
    v2::MutateRowResponse response;
    return data_->MutateRow(&context, request, &response);
  }

  ReadOutcome ReadVia(const std::string& profile, const std::string& key) {
    v2::ReadRowsRequest request;
    request.set_table_name(TableName("t"));
    request.set_app_profile_id(profile);
    request.mutable_rows()->add_row_keys(key);
    return ReadRowsRaw(*data_, request);
  }

  // Whether `key` is readable through `profile`.
  bool Visible(const std::string& profile, const std::string& key) {
    ReadOutcome out = ReadVia(profile, key);
    return out.status.ok() && out.rows.size() == 1;
  }

  // Runs `btsim ctl` (parsed arguments) against the server.
  int Ctl(cli::CtlArgs args, std::string* out, std::string* err) {
    args.target = "127.0.0.1:" + std::to_string(port_);
    std::ostringstream o, e;
    const int code = cli::RunCtl(args, o, e);
    *out = o.str();
    *err = e.str();
    return code;
  }

  std::unique_ptr<control::Control::Stub> control_;
};

TEST_F(ControlTest, StatusListsClustersLinksAndProfiles) {
  SetUpTableAndProfiles();
  control::GetStatusResponse status = AllStatus();  // every instance
  ASSERT_EQ(status.instances_size(), 1);
  const control::InstanceStatus& instance = status.instances(0);
  EXPECT_EQ(instance.name(), kInstance);
  ASSERT_EQ(instance.clusters_size(), 3);
  EXPECT_EQ(instance.clusters(0).id(), "c1");
  EXPECT_EQ(instance.clusters(0).zone(), "us-east1-b");
  EXPECT_EQ(instance.clusters(2).id(), "c3");
  EXPECT_EQ(instance.clusters(2).zone(), "europe-west1-d");
  for (const control::ClusterStatus& c : instance.clusters()) {
    EXPECT_FALSE(c.down()) << c.id();
    EXPECT_EQ(c.nodes(), 1) << c.id();
    EXPECT_EQ(c.storage_type(), control::SSD) << c.id();
    EXPECT_EQ(c.cpu_load(), 0) << c.id();  // no data request yet
    EXPECT_EQ(c.hottest_node_load(), 0) << c.id();
  }
  ASSERT_EQ(instance.links_size(), 6);  // every ordered pair
  for (const control::LinkStatus& link : instance.links()) {
    EXPECT_NE(link.from_cluster(), link.to_cluster());
    EXPECT_FALSE(link.cut());
    EXPECT_EQ(link.backlog(), 0u);
    EXPECT_EQ(Millis(link), 200)
        << link.from_cluster() << "->" << link.to_cluster();
  }
  ASSERT_EQ(instance.profiles_size(), 3);
  EXPECT_EQ(instance.profiles(0).id(), "default");
  EXPECT_EQ(instance.profiles(0).routing(), "multi-cluster any");
  EXPECT_FALSE(instance.profiles(0).transactional());
  EXPECT_EQ(instance.profiles(1).id(), "to-c1");
  EXPECT_EQ(instance.profiles(1).routing(),
            "single-cluster c1 (transactional)");
  EXPECT_TRUE(instance.profiles(1).transactional());
  EXPECT_EQ(instance.profiles(2).routing(), "single-cluster c2");
}

TEST_F(ControlTest, StatusShowsTheNodeLoadOfServedAndReplicatedWrites) {
  SetUpTableAndProfiles();
  // Writes through c1 load c1's nodes, and c2's and c3's once replicated.
  // Loads cover the last second of real time, so keep writing until every
  // cluster shows some.
  int i = 0;
  WaitFor("every cluster loaded", [&] {
    EXPECT_GRPC_OK(WriteVia("to-c1", "row" + std::to_string(i++), "v"));
    const control::InstanceStatus status = OneStatus();
    for (const control::ClusterStatus& c : status.clusters()) {
      if (c.cpu_load() <= 0) return false;
    }
    return true;
  });
  const control::InstanceStatus status = OneStatus();
  for (const control::ClusterStatus& c : status.clusters()) {
    EXPECT_GT(c.cpu_load(), 0) << c.id();
    EXPECT_LT(c.cpu_load(), 1) << c.id();  // a few writes, far from full
    // One node: its load is the average (read a few microseconds apart,
    // as the server's clock runs).
    EXPECT_NEAR(c.hottest_node_load(), c.cpu_load(), c.cpu_load() * 1e-3)
        << c.id();
  }
}

TEST_F(ControlTest, StatusOfANamedInstanceCreatesIt) {
  EXPECT_EQ(AllStatus().instances_size(), 0);  // nothing used yet
  control::GetStatusResponse status = AllStatus(kOther);
  ASSERT_EQ(status.instances_size(), 1);
  EXPECT_EQ(status.instances(0).name(), kOther);
  EXPECT_EQ(status.instances(0).clusters_size(), 3);
  EXPECT_EQ(AllStatus().instances_size(), 1);
}

TEST_F(ControlTest, ClusterDownFailsPinnedProfileAndUpCatchesUp) {
  SetUpTableAndProfiles();
  ASSERT_GRPC_OK(WriteVia("default", "before", "v0"));
  WaitFor("'before' replicated", [&] { return Visible("to-c2", "before"); });

  ASSERT_GRPC_OK(SetState("c1", true));
  EXPECT_TRUE(OneStatus().clusters(0).down());
  // The profile pinned to c1 fails; the multi-cluster default fails over.
  EXPECT_GRPC_CODE(ReadVia("to-c1", "before").status,
                   grpc::StatusCode::UNAVAILABLE);
  EXPECT_GRPC_CODE(WriteVia("to-c1", "x", "v"), grpc::StatusCode::UNAVAILABLE);
  // The default profile's requests go to c1 until the server's front end
  // has seen it fail five times in a row (the pinned profile's two
  // refusals above count), then to c2.
  int failed = 0;
  while (!WriteVia("default", "during", "v1").ok() && failed < 10) ++failed;
  EXPECT_EQ(failed, 3);
  EXPECT_TRUE(Visible("default", "before"));
  EXPECT_TRUE(Visible("default", "during"));
  // c1 receives nothing while down: the write waits in the backlog.
  WaitFor("c2 -> c3 drained", [&] { return Link("c2", "c3").backlog() == 0; });
  EXPECT_EQ(Link("c2", "c1").backlog(), 1u);

  ASSERT_GRPC_OK(SetState("c1", false));
  EXPECT_FALSE(OneStatus().clusters(0).down());
  // About one second of real time later, c1 has caught up.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  WaitFor("c1 caught up", [&] { return Visible("to-c1", "during"); });
  ReadOutcome out = ReadVia("to-c1", "during");
  ASSERT_GRPC_OK(out.status);
  ASSERT_EQ(out.rows.size(), 1u);
  EXPECT_EQ(out.rows[0].Latest("cf", "q"), "v1");
  WaitFor("backlog drained", [&] { return TotalBacklog() == 0; });
}

TEST_F(ControlTest, PartitionHoldsBackReplicationUntilHealed) {
  SetUpTableAndProfiles();
  ASSERT_GRPC_OK(Partition("c1", "c2", /*one_way=*/false, /*heal=*/false));
  EXPECT_TRUE(Link("c1", "c2").cut());
  EXPECT_TRUE(Link("c2", "c1").cut());
  EXPECT_FALSE(Link("c1", "c3").cut());

  ASSERT_GRPC_OK(WriteVia("to-c1", "k", "v"));
  WaitFor("c1 -> c3 drained", [&] { return Link("c1", "c3").backlog() == 0; });
  EXPECT_EQ(Link("c1", "c2").backlog(), 1u);
  EXPECT_FALSE(Visible("to-c2", "k"));

  ASSERT_GRPC_OK(Partition("c1", "c2", false, /*heal=*/true));
  EXPECT_FALSE(Link("c1", "c2").cut());
  EXPECT_FALSE(Link("c2", "c1").cut());
  WaitFor("c1 -> c2 drained", [&] { return Link("c1", "c2").backlog() == 0; });
  EXPECT_TRUE(Visible("to-c2", "k"));
}

TEST_F(ControlTest, OneWayPartitionAndHeal) {
  SetUpTableAndProfiles();
  ASSERT_GRPC_OK(Partition("c1", "c2", /*one_way=*/true, false));
  EXPECT_TRUE(Link("c1", "c2").cut());
  EXPECT_FALSE(Link("c2", "c1").cut());

  ASSERT_GRPC_OK(Partition("c2", "c1", /*one_way=*/true, false));
  EXPECT_TRUE(Link("c2", "c1").cut());
  // A one-way heal restores only cluster_a -> cluster_b.
  ASSERT_GRPC_OK(Partition("c1", "c2", /*one_way=*/true, /*heal=*/true));
  EXPECT_FALSE(Link("c1", "c2").cut());
  EXPECT_TRUE(Link("c2", "c1").cut());
  ASSERT_GRPC_OK(Partition("c2", "c1", false, /*heal=*/true));
  EXPECT_FALSE(Link("c2", "c1").cut());
}

TEST_F(ControlTest, LatencyOverridesTheReplicationLatencyPerLink) {
  SetUpTableAndProfiles();
  ASSERT_GRPC_OK(Latency("c1", "c3", 2000));
  EXPECT_EQ(Millis(Link("c1", "c3")), 2000);
  EXPECT_EQ(Millis(Link("c3", "c1")), 2000);
  // Every other link keeps --replication-latency.
  EXPECT_EQ(Millis(Link("c1", "c2")), 200);
  EXPECT_EQ(Millis(Link("c2", "c3")), 200);

  ASSERT_GRPC_OK(Latency("c1", "c2", 3000, /*one_way=*/true));
  EXPECT_EQ(Millis(Link("c1", "c2")), 3000);
  EXPECT_EQ(Millis(Link("c2", "c1")), 200);

  // The delay is in force: c1 -> c3 (200 ms) drains long before c1 -> c2.
  ASSERT_GRPC_OK(Latency("c1", "c3", 0));  // back to 200 ms
  EXPECT_EQ(Millis(Link("c1", "c3")), 200);
  EXPECT_EQ(Millis(Link("c3", "c1")), 200);
  ASSERT_GRPC_OK(WriteVia("to-c1", "slow", "v"));
  WaitFor("c1 -> c3 drained", [&] { return Link("c1", "c3").backlog() == 0; });
  EXPECT_EQ(Link("c1", "c2").backlog(), 1u);
  EXPECT_FALSE(Visible("to-c2", "slow"));
  WaitFor("c1 -> c2 drained", [&] { return Link("c1", "c2").backlog() == 0; });

  // An unset latency resets too.
  ASSERT_GRPC_OK(Latency("c1", "c2", -1, /*one_way=*/true));
  EXPECT_EQ(Millis(Link("c1", "c2")), 200);
}

TEST_F(ControlTest, LatencyWithoutReplicationLatencyGoesBackToTheModel) {
  TearDown();
  api::ServerOptions options;
  options.port = 0;
  options.compaction_interval = std::chrono::milliseconds(0);
  options.instance.clusters = {{"c1", "us-east1-b", 1},
                               {"c3", "europe-west1-d", 1}};
  server_ = std::make_unique<api::Server>(options);
  auto port = server_->Start();
  ASSERT_TRUE(port.ok());
  port_ = *port;
  channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                                 grpc::InsecureChannelCredentials());
  control_ = control::Control::NewStub(channel_);
  // The cross-region default has a 40 ms median.
  EXPECT_EQ(Millis(Link("c1", "c3")), 40);
  ASSERT_GRPC_OK(Latency("c1", "c3", 1500, false, kInstance));
  EXPECT_EQ(Link("c3", "c1").latency().seconds(), 1);
  EXPECT_EQ(Link("c3", "c1").latency().nanos(), 500'000'000);
  ASSERT_GRPC_OK(Latency("c1", "c3", 0, false, kInstance));
  EXPECT_EQ(Millis(Link("c1", "c3")), 40);
  EXPECT_EQ(Millis(Link("c3", "c1")), 40);
}

TEST_F(ControlTest, EmptyInstanceMeansEveryInstance) {
  SetUpTableAndProfiles();
  ASSERT_TRUE(server_->registry().GetOrCreate(kOther).ok());
  ASSERT_GRPC_OK(SetState("c3", true));
  ASSERT_GRPC_OK(Latency("c1", "c2", 700));
  const control::GetStatusResponse all = AllStatus();
  ASSERT_EQ(all.instances_size(), 2);
  for (const control::InstanceStatus& instance : all.instances()) {
    EXPECT_TRUE(instance.clusters(2).down()) << instance.name();
    EXPECT_EQ(instance.links(0).from_cluster(), "c1");
    EXPECT_EQ(instance.links(0).to_cluster(), "c2");
    EXPECT_EQ(Millis(instance.links(0)), 700) << instance.name();
  }
  // A named instance leaves the others alone.
  ASSERT_GRPC_OK(SetState("c3", false, kOther));
  EXPECT_TRUE(AllStatus(kInstance).instances(0).clusters(2).down());
  EXPECT_FALSE(AllStatus(kOther).instances(0).clusters(2).down());
}

TEST_F(ControlTest, Errors) {
  // No instance yet: an empty instance names nothing to change.
  EXPECT_GRPC_CODE(SetState("c1", true), grpc::StatusCode::FAILED_PRECONDITION);
  SetUpTableAndProfiles();

  grpc::Status s = SetState("c9", true);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("'c9'"));
  s = SetState("c9", true, kInstance);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("'c9'"));
  s = Partition("c1", "nope", false, false);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("'nope'"));
  s = Latency("zz", "c1", 100);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("'zz'"));

  EXPECT_GRPC_CODE(Partition("c1", "c1", false, false),
                   grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_GRPC_CODE(Latency("c2", "c2", 100),
                   grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_GRPC_CODE(SetState("", true), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_GRPC_CODE(Partition("", "c1", false, false),
                   grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_GRPC_CODE(SetState("c1", true, "projects/p"),
                   grpc::StatusCode::INVALID_ARGUMENT);
  control::GetStatusRequest bad;
  bad.set_instance("instances/i");
  grpc::ClientContext context;
  control::GetStatusResponse response;
  EXPECT_GRPC_CODE(control_->GetStatus(&context, bad, &response),
                   grpc::StatusCode::INVALID_ARGUMENT);

  control::SetLatencyRequest negative;
  negative.set_cluster_a("c1");
  negative.set_cluster_b("c2");
  negative.mutable_latency()->set_seconds(-1);
  grpc::ClientContext context2;
  control::SetLatencyResponse ignored;
  EXPECT_GRPC_CODE(control_->SetLatency(&context2, negative, &ignored),
                   grpc::StatusCode::INVALID_ARGUMENT);

  // Nothing changed.
  const control::InstanceStatus status = OneStatus();
  for (const control::ClusterStatus& c : status.clusters()) {
    EXPECT_FALSE(c.down());
  }
}

// Milliseconds `f` took.
template <typename F>
int64_t MillisOf(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now() - start)
      .count();
}

TEST_F(ControlTest, GrayFaultsAsAClientSeesThem) {
  SetUpTableAndProfiles();
  using std::chrono::milliseconds;
  // Slow: answered later.
  {
    control::SetSlownessRequest request;
    request.set_cluster_id("c1");
    request.mutable_added_latency()->set_nanos(300'000'000);
    grpc::ClientContext context;
    control::SetSlownessResponse response;
    ASSERT_GRPC_OK(control_->SetSlowness(&context, request, &response));
  }
  EXPECT_EQ(OneStatus().clusters(0).added_latency().nanos(), 300'000'000);
  EXPECT_GE(MillisOf([&] { EXPECT_GRPC_OK(WriteVia("to-c1", "slow", "v")); }),
            300);
  {
    control::SetSlownessRequest request;
    request.set_cluster_id("c1");
    grpc::ClientContext context;
    control::SetSlownessResponse response;
    ASSERT_GRPC_OK(control_->SetSlowness(&context, request, &response));
  }
  EXPECT_LT(MillisOf([&] { EXPECT_GRPC_OK(WriteVia("to-c1", "fast", "v")); }),
            200);
  // Slower than the call's deadline: the call times out at its deadline
  // (the server does not hold it for the whole delay).
  {
    control::SetSlownessRequest request;
    request.set_cluster_id("c1");
    request.mutable_added_latency()->set_seconds(3600);
    grpc::ClientContext context;
    control::SetSlownessResponse response;
    ASSERT_GRPC_OK(control_->SetSlowness(&context, request, &response));
  }
  EXPECT_GRPC_CODE(WriteVia("to-c1", "late", "v", milliseconds(200)),
                   grpc::StatusCode::DEADLINE_EXCEEDED);
  {
    control::SetSlownessRequest request;
    request.set_cluster_id("c1");
    grpc::ClientContext context;
    control::SetSlownessResponse response;
    ASSERT_GRPC_OK(control_->SetSlowness(&context, request, &response));
  }

  // Injected errors: only the method named.
  {
    control::InjectErrorsRequest request;
    request.set_cluster_id("c1");
    request.set_fraction(1);
    request.set_code("INTERNAL");
    request.set_method("MutateRow");
    grpc::ClientContext context;
    control::InjectErrorsResponse response;
    ASSERT_GRPC_OK(control_->InjectErrors(&context, request, &response));
  }
  EXPECT_GRPC_CODE(WriteVia("to-c1", "x", "v"), grpc::StatusCode::INTERNAL);
  EXPECT_GRPC_OK(ReadVia("to-c1", "slow").status);
  EXPECT_EQ(OneStatus().clusters(0).error_code(), "INTERNAL");
  {
    control::InjectErrorsRequest request;
    request.set_cluster_id("c1");
    grpc::ClientContext context;
    control::InjectErrorsResponse response;
    ASSERT_GRPC_OK(control_->InjectErrors(&context, request, &response));
  }
  EXPECT_GRPC_OK(WriteVia("to-c1", "x", "v"));

  // Replies cut: the write executes, the call times out.
  {
    control::CutClientsRequest request;
    request.set_cluster_id("c2");
    request.set_direction(control::CutClientsRequest::REPLIES);
    grpc::ClientContext context;
    control::CutClientsResponse response;
    ASSERT_GRPC_OK(control_->CutClients(&context, request, &response));
  }
  EXPECT_EQ(OneStatus().clusters(1).clients_cut(), "REPLIES");
  EXPECT_GRPC_CODE(WriteVia("to-c2", "cut", "v", milliseconds(300)),
                   grpc::StatusCode::DEADLINE_EXCEEDED);
  {
    control::CutClientsRequest request;
    request.set_cluster_id("c2");
    request.set_mend(true);
    grpc::ClientContext context;
    control::CutClientsResponse response;
    ASSERT_GRPC_OK(control_->CutClients(&context, request, &response));
  }
  EXPECT_TRUE(Visible("to-c2", "cut"));

  // Black-holed: calls hang until their deadline; after five, the front
  // end has ejected c1 and the default profile goes to c2.
  {
    control::SetClusterStateRequest request;
    request.set_cluster_id("c1");
    request.set_down(true);
    request.set_mode(control::BLACKHOLE);
    grpc::ClientContext context;
    control::SetClusterStateResponse response;
    ASSERT_GRPC_OK(control_->SetClusterState(&context, request, &response));
  }
  for (int i = 0; i < 5; ++i) {
    EXPECT_GE(MillisOf([&] {
                EXPECT_GRPC_CODE(
                    WriteVia("default", "bh", "v", milliseconds(200)),
                    grpc::StatusCode::DEADLINE_EXCEEDED);
              }),
              195);
  }
  // The server learns of a timeout when the call's deadline passes, as the
  // client does: the fifth may still be on its way.
  WaitFor("c1 ejected", [&] { return OneStatus().clusters(0).ejected(); });
  const control::ClusterStatus c1 = OneStatus().clusters(0);
  EXPECT_EQ(c1.down_mode(), control::BLACKHOLE);
  EXPECT_TRUE(c1.ejected());
  EXPECT_EQ(c1.ejections(), 1);
  EXPECT_GRPC_OK(WriteVia("default", "bh", "v", milliseconds(200)));
  // A call held when the server shuts down is answered at once.
  std::thread held([&] {
    EXPECT_GRPC_CODE(WriteVia("to-c1", "held", "v"),
                     grpc::StatusCode::DEADLINE_EXCEEDED);
  });
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_LT(MillisOf([&] { server_->Shutdown(); }), 2000);
  held.join();
}

// `btsim ctl`'s client code (cli/ctl.h) against the server.
TEST_F(ControlTest, CtlCommands) {
  SetUpTableAndProfiles();
  std::string out, err;
  cli::CtlArgs args;
  args.command = "cluster-down";
  args.cluster_a = "c3";
  ASSERT_EQ(Ctl(args, &out, &err), 0) << err;
  EXPECT_EQ(out, "cluster c3 is down (every instance)\n");
  EXPECT_TRUE(OneStatus().clusters(2).down());

  args = {};
  args.command = "partition";
  args.instance = kInstance;
  args.cluster_a = "c1";
  args.cluster_b = "c2";
  args.one_way = true;
  ASSERT_EQ(Ctl(args, &out, &err), 0) << err;
  EXPECT_EQ(out, "link c1 -> c2 cut in projects/p/instances/i\n");

  args = {};
  args.command = "latency";
  args.cluster_a = "c1";
  args.cluster_b = "c3";
  args.duration = "3s";
  ASSERT_EQ(Ctl(args, &out, &err), 0) << err;
  EXPECT_EQ(out, "link c1 <-> c3 latency set to 3s (every instance)\n");

  args = {};
  args.command = "status";
  ASSERT_EQ(Ctl(args, &out, &err), 0) << err;
  EXPECT_EQ(out,
            "instance projects/p/instances/i\n"
            "  clusters:\n"
            "    c1  us-east1-b      up    1 node(s)  front end: admitted\n"
            "    c2  us-east1-c      up    1 node(s)  front end: admitted\n"
            "    c3  europe-west1-d  DOWN  1 node(s)  front end: admitted\n"
            "  capacity (storage, CPU average, hottest node):\n"
            "    c1  SSD  cpu 0.0%  hottest 0.0%\n"
            "    c2  SSD  cpu 0.0%  hottest 0.0%\n"
            "    c3  SSD  cpu 0.0%  hottest 0.0%\n"
            "  replication (backlog entries, latency):\n"
            "    c1 -> c2  0  200ms  CUT\n"
            "    c1 -> c3  0  3s\n"
            "    c2 -> c1  0  200ms\n"
            "    c2 -> c3  0  200ms\n"
            "    c3 -> c1  0  3s\n"
            "    c3 -> c2  0  200ms\n"
            "  profiles:\n"
            "    default  multi-cluster any\n"
            "    to-c1    single-cluster c1 (transactional)\n"
            "    to-c2    single-cluster c2\n");

  args = {};
  args.command = "cluster-up";
  args.cluster_a = "c9";
  EXPECT_EQ(Ctl(args, &out, &err), cli::kCtlRpcError);
  EXPECT_THAT(err, HasSubstr("btsim ctl: NOT_FOUND: cluster 'c9'"));

  args = {};
  args.command = "latency";
  args.cluster_a = "c1";
  args.cluster_b = "c3";
  args.duration = "soon";
  EXPECT_EQ(Ctl(args, &out, &err), cli::kCtlUsageError);
  EXPECT_THAT(err, HasSubstr("btsim ctl: latency:"));
  EXPECT_EQ(Millis(Link("c1", "c3")), 3000);

  args.duration = "0";
  ASSERT_EQ(Ctl(args, &out, &err), 0) << err;
  EXPECT_EQ(out, "link c1 <-> c3 latency reset (every instance)\n");
  EXPECT_EQ(Millis(Link("c1", "c3")), 200);
}

TEST(CtlTest, UnreachableServerIsAnRpcError) {
  cli::CtlArgs args;
  args.target = "127.0.0.1:1";  // nothing listens there
  args.command = "status";
  std::ostringstream out, err;
  EXPECT_EQ(cli::RunCtl(args, out, err), cli::kCtlRpcError);
  EXPECT_THAT(err.str(), HasSubstr("btsim ctl: UNAVAILABLE: "));
  EXPECT_EQ(out.str(), "");
}

TEST(CtlTest, FormatStatusShowsLoadsAsPercentagesClampedAt100) {
  control::GetStatusResponse status;
  control::InstanceStatus* instance = status.add_instances();
  instance->set_name("projects/p/instances/i");
  control::ClusterStatus* c = instance->add_clusters();
  c->set_id("c1");
  c->set_zone("us-east1-b");
  c->set_nodes(3);
  c->set_storage_type(control::HDD);
  c->set_cpu_load(0.3333);
  c->set_hottest_node_load(1.25);  // over capacity: its queue grows
  EXPECT_EQ(cli::FormatStatus(status),
            "instance projects/p/instances/i\n"
            "  clusters:\n"
            "    c1  us-east1-b  up  3 node(s)  front end: admitted\n"
            "  capacity (storage, CPU average, hottest node):\n"
            "    c1  HDD  cpu 33.3%  hottest 100.0%\n"
            "  profiles:\n");
}

TEST(CtlTest, FormatStatusWithoutInstances) {
  EXPECT_THAT(cli::FormatStatus({}), HasSubstr("no instances yet"));
}

}  // namespace
}  // namespace btsim::api_test
