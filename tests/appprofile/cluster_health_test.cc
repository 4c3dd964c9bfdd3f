#include "appprofile/cluster_health.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace btsim::appprofile {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

sim::Time At(sim::Duration d) { return sim::Time(d); }

constexpr StatusCode kDown = StatusCode::kUnavailable;
constexpr StatusCode kOk = StatusCode::kOk;

TEST(ClusterHealthTest, ConsecutiveFailuresEject) {
  ClusterHealth health;
  for (int i = 0; i < 4; ++i) health.RecordOutcome("c1", kDown, At(seconds(i)));
  health.RecordOutcome("c1", kOk, At(seconds(4)));  // the run is broken
  for (int i = 0; i < 4; ++i) {
    health.RecordOutcome("c1", kDown, At(seconds(5 + i)));
  }
  EXPECT_TRUE(health.Admitted("c1"));
  health.RecordOutcome("c1", StatusCode::kDeadlineExceeded, At(seconds(9)));
  EXPECT_FALSE(health.Admitted("c1"));
  EXPECT_TRUE(health.Admitted("c2"));  // never seen: admitted
  EXPECT_EQ(health.Ejections("c1"), 1);
}

TEST(ClusterHealthTest, AnErrorRateOverTheWindowEjects) {
  ClusterHealth health;
  // Alternating failures never make five in a row; the 20th outcome within
  // 10 s makes half of them failures.
  for (int i = 0; i < 19; ++i) {
    health.RecordOutcome("c1", i % 2 == 0 ? kDown : kOk,
                         At(milliseconds(100 * i)));
  }
  EXPECT_TRUE(health.Admitted("c1"));
  health.RecordOutcome("c1", kOk, At(milliseconds(1900)));
  EXPECT_FALSE(health.Admitted("c1"));
}

TEST(ClusterHealthTest, OutcomesOlderThanTheWindowDoNotCount) {
  ClusterHealth health;
  for (int i = 0; i < 10; ++i) {
    health.RecordOutcome("c1", i % 2 == 0 ? kDown : kOk, At(seconds(i)));
  }
  // Ten more, 20 s later: the first ten are out of the window.
  for (int i = 0; i < 10; ++i) {
    health.RecordOutcome("c1", i % 2 == 0 ? kDown : kOk, At(seconds(30 + i)));
  }
  EXPECT_TRUE(health.Admitted("c1"));
}

TEST(ClusterHealthTest, ErrorsAboutTheRequestAreSuccesses) {
  ClusterHealth health;
  for (StatusCode code :
       {StatusCode::kNotFound, StatusCode::kInvalidArgument,
        StatusCode::kFailedPrecondition, StatusCode::kAlreadyExists,
        StatusCode::kOutOfRange, StatusCode::kPermissionDenied}) {
    for (int i = 0; i < 5; ++i)
      health.RecordOutcome("c1", code, At(seconds(1)));
  }
  EXPECT_TRUE(health.Admitted("c1"));
  EXPECT_TRUE(IsHealthFailure(StatusCode::kResourceExhausted));
  EXPECT_FALSE(IsHealthFailure(StatusCode::kNotFound));
}

// Ejects c1 at `t`.
void Eject(ClusterHealth& health, sim::Duration t) {
  for (int i = 0; i < 5; ++i) health.RecordOutcome("c1", kDown, At(t));
  ASSERT_FALSE(health.Admitted("c1"));
}

TEST(ClusterHealthTest, ProbesReadmitAfterTheEjectionTime) {
  ClusterHealth health;
  Eject(health, seconds(0));
  EXPECT_THAT(health.ProbesDue(At(milliseconds(500))), IsEmpty());
  // Outcomes of requests still in flight change nothing.
  health.RecordOutcome("c1", kOk, At(milliseconds(600)));
  for (int s = 1; s <= 4; ++s) {
    EXPECT_THAT(health.ProbesDue(At(seconds(s))), ElementsAre("c1"));
    EXPECT_THAT(health.ProbesDue(At(seconds(s))), IsEmpty());  // once
    health.RecordProbe("c1", true, At(seconds(s)));
    EXPECT_FALSE(health.Admitted("c1")) << s;  // ejected for 5 s
  }
  EXPECT_THAT(health.ProbesDue(At(seconds(5))), ElementsAre("c1"));
  health.RecordProbe("c1", true, At(seconds(5)));
  EXPECT_TRUE(health.Admitted("c1"));
  EXPECT_FALSE(health.AnyEjected());
}

TEST(ClusterHealthTest, AFailedProbeStartsTheCountAgain) {
  ClusterHealth health;
  Eject(health, seconds(0));
  for (int s = 1; s <= 5; ++s) health.RecordProbe("c1", s != 4, At(seconds(s)));
  EXPECT_FALSE(health.Admitted("c1"));  // only one success since the failure
  health.RecordProbe("c1", true, At(seconds(6)));
  EXPECT_FALSE(health.Admitted("c1"));
  health.RecordProbe("c1", true, At(seconds(7)));
  EXPECT_TRUE(health.Admitted("c1"));
}

TEST(ClusterHealthTest, AFlappingClusterStaysOutLongerEachTime) {
  ClusterHealth health;
  Eject(health, seconds(0));
  for (int s = 1; s <= 5; ++s) health.RecordProbe("c1", true, At(seconds(s)));
  ASSERT_TRUE(health.Admitted("c1"));
  Eject(health, seconds(6));  // again soon after: 10 s this time
  for (int s = 7; s <= 15; ++s) health.RecordProbe("c1", true, At(seconds(s)));
  EXPECT_FALSE(health.Admitted("c1"));
  health.RecordProbe("c1", true, At(seconds(16)));
  EXPECT_TRUE(health.Admitted("c1"));
  // Admitted for longer than max_ejection: back to 5 s.
  Eject(health, seconds(100));
  health.RecordProbe("c1", true, At(seconds(103)));
  health.RecordProbe("c1", true, At(seconds(104)));
  health.RecordProbe("c1", true, At(seconds(105)));
  EXPECT_TRUE(health.Admitted("c1"));
  EXPECT_EQ(health.Ejections("c1"), 3);
}

TEST(ClusterHealthTest, AForgottenClusterIsAdmittedAndNotProbed) {
  ClusterHealth health;
  Eject(health, seconds(0));
  health.Forget("c1");
  EXPECT_TRUE(health.Admitted("c1"));
  EXPECT_FALSE(health.AnyEjected());
  EXPECT_THAT(health.ProbesDue(At(seconds(2))), IsEmpty());
  // A probe sent before it was forgotten ends later: still forgotten.
  EXPECT_FALSE(health.RecordProbe("c1", false, At(seconds(3))));
  EXPECT_THAT(health.Views(), IsEmpty());
}

TEST(ClusterHealthTest, ViewsShowEjectionsAndWhen) {
  ClusterHealth health;
  health.RecordOutcome("c2", kOk, At(seconds(0)));
  Eject(health, seconds(4));
  const std::vector<ClusterHealth::ClusterView> views = health.Views();
  ASSERT_EQ(views.size(), 2u);
  EXPECT_EQ(views[0].cluster, "c2");
  EXPECT_FALSE(views[0].ejected);
  EXPECT_EQ(views[0].ejections, 0);
  EXPECT_EQ(views[1].cluster, "c1");
  EXPECT_TRUE(views[1].ejected);
  EXPECT_EQ(views[1].ejected_at, At(seconds(4)));
  EXPECT_EQ(views[1].ejections, 1);
}

TEST(ClusterHealthTest, OptionsNameTheirField) {
  EXPECT_TRUE(DetectorOptions{}.Validate("detector").ok());
  DetectorOptions o;
  o.error_rate = 1.5;
  EXPECT_THAT(o.Validate("detector").message(),
              HasSubstr("detector.error_rate"));
  o = {};
  o.max_ejection = seconds(1);
  EXPECT_THAT(o.Validate("detector").message(),
              HasSubstr("detector.max_ejection"));
  o = {};
  o.readmit_after = 0;
  EXPECT_EQ(o.Validate("detector").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace btsim::appprofile
