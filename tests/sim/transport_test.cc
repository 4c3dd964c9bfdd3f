#include "sim/transport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/rng.h"
#include "sim/virtual_scheduler.h"

namespace btsim::sim {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr Time kStart{Duration(1'700'000'000'000'000'000)};
constexpr uint64_t kSeed = 7;

constexpr char kA[] = "us-east1-b";
constexpr char kB[] = "us-east1-c";
constexpr char kC[] = "europe-west1-d";

// (delivery time, message id), in delivery order.
using Trace = std::vector<std::pair<Time, int>>;

class TransportTest : public ::testing::Test {
 protected:
  // Sends one message, runs the scheduler dry and returns its one-way delay;
  // fails the test if the message was dropped.
  Duration OneTrip(std::string_view from, std::string_view to) {
    const Time sent = scheduler_.Now();
    Time arrived = Time::min();
    transport_.Send(from, to, [&] { arrived = scheduler_.Now(); });
    scheduler_.RunUntilIdle();
    EXPECT_NE(arrived, Time::min()) << from << " -> " << to << " dropped";
    return arrived - sent;
  }

  // Sends one message, runs the scheduler dry and says if it arrived.
  bool Delivers(std::string_view from, std::string_view to) {
    bool arrived = false;
    transport_.Send(from, to, [&] { arrived = true; });
    scheduler_.RunUntilIdle();
    return arrived;
  }

  VirtualScheduler scheduler_{kStart};
  Transport transport_{scheduler_, Rng(kSeed)};
};

Duration Median(std::vector<Duration> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

TEST(RegionOfTest, DropsTheLastDashPart) {
  EXPECT_EQ(RegionOf("us-east1-b"), "us-east1");
  EXPECT_EQ(RegionOf("europe-west1-d"), "europe-west1");
  EXPECT_EQ(RegionOf("local"), "local");
  EXPECT_EQ(RegionOf(""), "");
}

TEST(LatencyModelTest, FactoriesFillTheFields) {
  const LatencyModel c = LatencyModel::Constant(milliseconds(3));
  EXPECT_EQ(c.kind, LatencyModel::Kind::kConstant);
  EXPECT_EQ(c.a, milliseconds(3));
  EXPECT_EQ(c.floor, Duration(0));
  const LatencyModel u =
      LatencyModel::Uniform(microseconds(1), microseconds(9));
  EXPECT_EQ(u.kind, LatencyModel::Kind::kUniform);
  EXPECT_EQ(u.a, microseconds(1));
  EXPECT_EQ(u.b, microseconds(9));
  const LatencyModel n =
      LatencyModel::Normal(milliseconds(5), milliseconds(1), milliseconds(2));
  EXPECT_EQ(n.kind, LatencyModel::Kind::kNormal);
  EXPECT_EQ(n.a, milliseconds(5));
  EXPECT_EQ(n.b, milliseconds(1));
  EXPECT_EQ(n.floor, milliseconds(2));
  const LatencyModel l =
      LatencyModel::LogNormal(milliseconds(5), 0.25, milliseconds(1));
  EXPECT_EQ(l.kind, LatencyModel::Kind::kLogNormal);
  EXPECT_EQ(l.a, milliseconds(5));
  EXPECT_EQ(l.sigma, 0.25);
  EXPECT_EQ(l.floor, milliseconds(1));
  const LatencyModel e =
      LatencyModel::Exponential(milliseconds(5), milliseconds(1));
  EXPECT_EQ(e.kind, LatencyModel::Kind::kExponential);
  EXPECT_EQ(e.a, milliseconds(5));
  EXPECT_EQ(e.floor, milliseconds(1));
}

TEST(LatencyModelTest, ConstantIsExactAndRespectsTheFloor) {
  Rng rng(kSeed);
  EXPECT_EQ(LatencyModel::Constant(milliseconds(3)).Sample(rng),
            milliseconds(3));
  LatencyModel raised = LatencyModel::Constant(milliseconds(1));
  raised.floor = milliseconds(2);
  EXPECT_EQ(raised.Sample(rng), milliseconds(2));
}

TEST(LatencyModelTest, UniformIncludesMinExcludesMax) {
  Rng rng(kSeed);
  const LatencyModel model = LatencyModel::Uniform(Duration(10), Duration(15));
  std::vector<int> counts(6, 0);
  for (int i = 0; i < 20'000; ++i) {
    const Duration x = model.Sample(rng);
    ASSERT_GE(x, Duration(10));
    ASSERT_LT(x, Duration(15));
    ++counts[x.count() - 10];
  }
  for (int v = 0; v < 5; ++v) EXPECT_NEAR(counts[v], 4000, 300) << v;
  EXPECT_EQ(counts[5], 0);
  EXPECT_EQ(LatencyModel::Uniform(Duration(5), Duration(5)).Sample(rng),
            Duration(5));
}

TEST(LatencyModelTest, NormalClampsAtTheFloor) {
  Rng rng(kSeed);
  const LatencyModel model = LatencyModel::Normal(
      milliseconds(1), microseconds(1000), microseconds(500));
  int at_floor = 0;
  for (int i = 0; i < 20'000; ++i) {
    const Duration x = model.Sample(rng);
    ASSERT_GE(x, microseconds(500));
    if (x == microseconds(500)) ++at_floor;
  }
  // P(Z < -0.5) = 0.3085.
  EXPECT_NEAR(at_floor / 20'000.0, 0.3085, 0.015);
}

TEST(LatencyModelTest, LogNormalHasTheGivenMedian) {
  Rng rng(kSeed);
  const LatencyModel model =
      LatencyModel::LogNormal(milliseconds(1), 0.3, Duration(0));
  std::vector<Duration> samples;
  for (int i = 0; i < 20'000; ++i) samples.push_back(model.Sample(rng));
  const Duration median = Median(samples);
  EXPECT_GT(median, microseconds(980));
  EXPECT_LT(median, microseconds(1020));
}

TEST(LatencyModelTest, ExponentialIsFloorPlusExponential) {
  Rng rng(kSeed);
  const LatencyModel model =
      LatencyModel::Exponential(milliseconds(2), milliseconds(1));
  double sum_ms = 0;
  Duration min = Duration::max();
  for (int i = 0; i < 20'000; ++i) {
    const Duration x = model.Sample(rng);
    ASSERT_GE(x, milliseconds(1));
    min = std::min(min, x);
    sum_ms += std::chrono::duration<double, std::milli>(x).count();
  }
  EXPECT_NEAR(sum_ms / 20'000, 3.0, 0.06);
  EXPECT_LT(min, milliseconds(1) + microseconds(10));
}

TEST_F(TransportTest, DefaultLatencyDependsOnDistance) {
  const TransportDefaults defaults;
  EXPECT_EQ(transport_.LatencyOf(kA, kA), defaults.same_zone);
  EXPECT_EQ(transport_.LatencyOf(kA, kB), defaults.same_region);
  EXPECT_EQ(transport_.LatencyOf(kA, kC), defaults.cross_region);
  EXPECT_EQ(transport_.LatencyOf("x", "y"), defaults.cross_region);

  std::vector<Duration> same_zone, same_region, cross_region;
  for (int i = 0; i < 101; ++i) {
    same_zone.push_back(OneTrip(kA, kA));
    same_region.push_back(OneTrip(kA, kB));
    cross_region.push_back(OneTrip(kA, kC));
  }
  EXPECT_LT(Median(same_zone), Median(same_region));
  EXPECT_LT(Median(same_region), Median(cross_region));
  EXPECT_LT(*std::max_element(same_zone.begin(), same_zone.end()),
            *std::max_element(same_region.begin(), same_region.end()));
  EXPECT_LT(*std::max_element(same_region.begin(), same_region.end()),
            *std::min_element(cross_region.begin(), cross_region.end()));
  // Near the configured medians, never below the floors.
  EXPECT_NEAR(Median(same_zone) / microseconds(1), 250, 25);
  EXPECT_NEAR(Median(same_region) / microseconds(1), 1000, 100);
  EXPECT_NEAR(Median(cross_region) / milliseconds(1), 40, 4);
  EXPECT_GE(*std::min_element(same_zone.begin(), same_zone.end()),
            microseconds(50));
  EXPECT_GE(*std::min_element(same_region.begin(), same_region.end()),
            microseconds(300));
  EXPECT_GE(*std::min_element(cross_region.begin(), cross_region.end()),
            milliseconds(20));
}

TEST_F(TransportTest, LatencyVersionMovesWithEveryLatencyChangeOnly) {
  uint64_t version = transport_.latency_version();
  auto moved = [&] {
    const bool changed = transport_.latency_version() != version;
    version = transport_.latency_version();
    return changed;
  };
  transport_.SetLatency(kA, kC, LatencyModel::Constant(milliseconds(7)));
  EXPECT_TRUE(moved());
  transport_.ClearLatency(kA, kC, /*one_way=*/true);
  EXPECT_TRUE(moved());
  transport_.SetLatencyEverywhere(LatencyModel::Constant(milliseconds(1)));
  EXPECT_TRUE(moved());
  transport_.SetLatencyEverywhere(std::nullopt);
  EXPECT_TRUE(moved());
  // Loss, partitions and traffic leave LatencyOf's answers alone.
  transport_.SetLoss(kA, kB, 0.5);
  transport_.Partition(kA, kB);
  transport_.Heal(kA, kB);
  transport_.Send(kA, kC, [] {});
  scheduler_.RunFor(seconds(1));
  EXPECT_FALSE(moved());
}

TEST_F(TransportTest, ConstantLatencyDeliversExactlyAfterIt) {
  transport_.SetLatency(kA, kC, LatencyModel::Constant(milliseconds(7)));
  std::vector<Time> arrivals;
  transport_.Send(kA, kC, [&] { arrivals.push_back(scheduler_.Now()); });
  scheduler_.RunFor(seconds(1));
  transport_.Send(kA, kC, [&] { arrivals.push_back(scheduler_.Now()); });
  scheduler_.RunUntilIdle();
  ASSERT_EQ(arrivals.size(), 2u);
  EXPECT_EQ(arrivals[0], kStart + milliseconds(7));
  EXPECT_EQ(arrivals[1], kStart + seconds(1) + milliseconds(7));
  const LinkStats stats = transport_.StatsOf(kA, kC);
  EXPECT_EQ(stats.sent, 2);
  EXPECT_EQ(stats.delivered, 2);
}

TEST_F(TransportTest, LinkSamplesComeFromTheNamedFork) {
  const LatencyModel model =
      LatencyModel::Uniform(microseconds(1), milliseconds(100));
  transport_.SetLatency(kA, kB, model);
  Rng expected = Rng(kSeed).Fork(std::string(kA) + "->" + kB);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(OneTrip(kA, kB), model.Sample(expected)) << i;
  }
}

TEST_F(TransportTest, FifoPerLinkUnderHighVariance) {
  const LatencyModel model =
      LatencyModel::Uniform(microseconds(1), milliseconds(100));
  transport_.SetLatency(kA, kB, model);
  Trace trace;
  for (int i = 0; i < 100; ++i) {
    scheduler_.RunAfter(microseconds(100) * i, [this, i, &trace] {
      transport_.Send(kA, kB, [this, i, &trace] {
        trace.emplace_back(scheduler_.Now(), i);
      });
    });
  }
  scheduler_.RunUntilIdle();
  ASSERT_EQ(trace.size(), 100u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(trace[i].second, i);
    if (i > 0) {
      EXPECT_GE(trace[i].first, trace[i - 1].first);
    }
  }
  // Without FIFO the raw samples would have reordered them.
  Rng raw = Rng(kSeed).Fork(std::string(kA) + "->" + kB);
  int inversions = 0;
  Duration previous = Duration::min();
  for (int i = 0; i < 100; ++i) {
    const Duration would_arrive = microseconds(100) * i + model.Sample(raw);
    if (would_arrive < previous) ++inversions;
    previous = would_arrive;
  }
  EXPECT_GT(inversions, 10);
}

TEST_F(TransportTest, FifoHoldsWithinALinkOnlyNotAcrossLinks) {
  // A slow message on A->B does not hold up a fast one on A->C.
  transport_.SetLatency(kA, kB, LatencyModel::Constant(milliseconds(50)));
  transport_.SetLatency(kA, kC, LatencyModel::Constant(milliseconds(5)));
  std::vector<std::string> order;
  transport_.Send(kA, kB, [&] { order.push_back("b"); });
  transport_.Send(kA, kC, [&] { order.push_back("c"); });
  scheduler_.RunUntilIdle();
  EXPECT_EQ(order, (std::vector<std::string>{"c", "b"}));
}

// Delays of 50 messages on A->C, optionally with traffic on other links
// interleaved (and those links created first).
std::vector<Duration> DelaysOnAToC(bool other_traffic) {
  VirtualScheduler scheduler(kStart);
  Transport transport(scheduler, Rng(kSeed));
  transport.SetLoss(kA, kC, 0.2);  // loss draws come from the link too
  if (other_traffic) {
    transport.SetLoss(kA, kB, 0.5);
    for (int i = 0; i < 10; ++i) transport.Send(kB, kA, [] {});
  }
  std::vector<Duration> delays;
  for (int i = 0; i < 50; ++i) {
    if (other_traffic) {
      transport.Send(kA, kB, [] {});
      transport.Send(kA, kB, [] {});
      transport.Send(kC, kA, [] {});
    }
    const Time sent = scheduler.Now();
    bool arrived = false;
    transport.Send(kA, kC, [&] {
      arrived = true;
      delays.push_back(scheduler.Now() - sent);
    });
    scheduler.RunFor(seconds(1));
    if (!arrived) delays.push_back(Duration(-1));  // lost
  }
  return delays;
}

TEST(TransportIndependenceTest, TrafficOnOneLinkDoesNotShiftAnother) {
  const std::vector<Duration> quiet = DelaysOnAToC(false);
  const std::vector<Duration> busy = DelaysOnAToC(true);
  EXPECT_EQ(quiet, busy);
  // The runs did sample something: delays vary and some were lost.
  EXPECT_GT(std::count(quiet.begin(), quiet.end(), Duration(-1)), 0);
  EXPECT_NE(*std::max_element(quiet.begin(), quiet.end()),
            *std::min_element(quiet.begin(), quiet.end()));
}

TEST_F(TransportTest, LossDropsAboutThatFractionAndStatsAddUp) {
  transport_.SetLatency(kA, kB, LatencyModel::Constant(milliseconds(1)));
  transport_.SetLoss(kA, kB, 0.3);
  int64_t delivered = 0;
  for (int i = 0; i < 10'000; ++i) {
    transport_.Send(kA, kB, [&] { ++delivered; });
    scheduler_.RunFor(microseconds(10));
  }
  scheduler_.RunUntilIdle();
  LinkStats stats = transport_.StatsOf(kA, kB);
  EXPECT_EQ(stats.sent, 10'000);
  EXPECT_NEAR(stats.lost, 3000, 200);
  EXPECT_EQ(stats.partitioned, 0);
  EXPECT_EQ(stats.delivered, delivered);
  EXPECT_EQ(stats.sent, stats.delivered + stats.lost + stats.partitioned);

  // Add drops by partition, both at send time and in flight.
  for (int i = 0; i < 100; ++i) transport_.Send(kA, kB, [&] { ++delivered; });
  transport_.Partition(kA, kB);
  for (int i = 0; i < 100; ++i) transport_.Send(kA, kB, [&] { ++delivered; });
  scheduler_.RunUntilIdle();
  stats = transport_.StatsOf(kA, kB);
  EXPECT_EQ(stats.sent, 10'200);
  EXPECT_GE(stats.partitioned, 150);  // 100 at send + the in-flight survivors
  EXPECT_EQ(stats.delivered, delivered);
  EXPECT_EQ(stats.sent, stats.delivered + stats.lost + stats.partitioned);

  // The reverse direction was given the same loss.
  transport_.Heal(kA, kB);
  transport_.SetLatency(kB, kA, LatencyModel::Constant(milliseconds(1)));
  for (int i = 0; i < 1000; ++i) transport_.Send(kB, kA, [] {});
  scheduler_.RunUntilIdle();
  EXPECT_NEAR(transport_.StatsOf(kB, kA).lost, 300, 70);
}

TEST_F(TransportTest, OneWayLossAndExtremes) {
  transport_.SetLoss(kA, kB, 1.0, /*one_way=*/true);
  EXPECT_FALSE(Delivers(kA, kB));
  EXPECT_TRUE(Delivers(kB, kA));
  EXPECT_EQ(transport_.StatsOf(kA, kB).lost, 1);
  transport_.SetLoss(kA, kB, 0.0, /*one_way=*/true);
  EXPECT_TRUE(Delivers(kA, kB));
}

TEST_F(TransportTest, PartitionCutsBothDirections) {
  EXPECT_FALSE(transport_.IsCut(kA, kB));
  transport_.Partition(kA, kB);
  EXPECT_TRUE(transport_.IsCut(kA, kB));
  EXPECT_TRUE(transport_.IsCut(kB, kA));
  EXPECT_FALSE(transport_.IsCut(kA, kC));
  EXPECT_FALSE(Delivers(kA, kB));
  EXPECT_FALSE(Delivers(kB, kA));
  EXPECT_TRUE(Delivers(kA, kC));
  EXPECT_EQ(transport_.StatsOf(kA, kB).partitioned, 1);
  EXPECT_EQ(transport_.StatsOf(kB, kA).partitioned, 1);
  EXPECT_EQ(transport_.StatsOf(kA, kB).sent, 1);
}

TEST_F(TransportTest, OneWayPartitionCutsOnlyThatDirection) {
  transport_.Partition(kA, kB, /*one_way=*/true);
  EXPECT_TRUE(transport_.IsCut(kA, kB));
  EXPECT_FALSE(transport_.IsCut(kB, kA));
  EXPECT_FALSE(Delivers(kA, kB));
  EXPECT_TRUE(Delivers(kB, kA));
}

TEST_F(TransportTest, MessageInFlightWhenPartitionStartsIsDropped) {
  transport_.SetLatency(kA, kB, LatencyModel::Constant(milliseconds(10)));
  bool a_to_b = false;
  bool b_to_a = false;
  transport_.Send(kA, kB, [&] { a_to_b = true; });
  transport_.Send(kB, kA, [&] { b_to_a = true; });
  scheduler_.RunFor(milliseconds(5));
  transport_.Partition(kA, kB, /*one_way=*/true);
  scheduler_.RunUntilIdle();
  EXPECT_FALSE(a_to_b);
  EXPECT_TRUE(b_to_a);
  const LinkStats stats = transport_.StatsOf(kA, kB);
  EXPECT_EQ(stats.sent, 1);
  EXPECT_EQ(stats.partitioned, 1);
  EXPECT_EQ(stats.delivered, 0);
}

TEST_F(TransportTest, PartitionHealedBeforeArrivalDoesNotDrop) {
  transport_.SetLatency(kA, kB, LatencyModel::Constant(milliseconds(10)));
  bool arrived = false;
  transport_.Send(kA, kB, [&] { arrived = true; });
  scheduler_.RunFor(milliseconds(3));
  transport_.Partition(kA, kB);
  scheduler_.RunFor(milliseconds(3));
  transport_.Heal(kA, kB);
  scheduler_.RunUntilIdle();
  EXPECT_TRUE(arrived);
}

TEST_F(TransportTest, HealRestoresDelivery) {
  transport_.Partition(kA, kB);
  EXPECT_FALSE(Delivers(kA, kB));
  transport_.Heal(kB, kA);  // either argument order
  EXPECT_FALSE(transport_.IsCut(kA, kB));
  EXPECT_FALSE(transport_.IsCut(kB, kA));
  EXPECT_TRUE(Delivers(kA, kB));
  EXPECT_TRUE(Delivers(kB, kA));

  transport_.Partition(kA, kB, /*one_way=*/true);
  EXPECT_FALSE(Delivers(kA, kB));
  transport_.Heal(kA, kB);
  EXPECT_TRUE(Delivers(kA, kB));
  EXPECT_TRUE(Delivers(kB, kA));
}

TEST_F(TransportTest, SetLatencyBothDirectionsOrOneWay) {
  const LatencyModel five = LatencyModel::Constant(milliseconds(5));
  const LatencyModel nine = LatencyModel::Constant(milliseconds(9));
  transport_.SetLatency(kA, kC, five);
  EXPECT_EQ(transport_.LatencyOf(kA, kC), five);
  EXPECT_EQ(transport_.LatencyOf(kC, kA), five);
  transport_.SetLatency(kA, kC, nine, /*one_way=*/true);
  EXPECT_EQ(transport_.LatencyOf(kA, kC), nine);
  EXPECT_EQ(transport_.LatencyOf(kC, kA), five);
  EXPECT_EQ(OneTrip(kA, kC), milliseconds(9));
  EXPECT_EQ(OneTrip(kC, kA), milliseconds(5));
  // Other links keep their defaults.
  EXPECT_EQ(transport_.LatencyOf(kA, kB), TransportDefaults{}.same_region);
}

TEST_F(TransportTest, ClearLatencyReturnsToTheDefault) {
  const TransportDefaults defaults;
  transport_.SetLatency(kA, kB, LatencyModel::Constant(milliseconds(5)));
  transport_.ClearLatency(kA, kB, /*one_way=*/true);
  EXPECT_EQ(transport_.LatencyOf(kA, kB), defaults.same_region);
  EXPECT_EQ(transport_.LatencyOf(kB, kA),
            LatencyModel::Constant(milliseconds(5)));
  transport_.ClearLatency(kA, kB);
  EXPECT_EQ(transport_.LatencyOf(kB, kA), defaults.same_region);
  const Duration delay = OneTrip(kB, kA);
  EXPECT_GE(delay, microseconds(300));
  EXPECT_NE(delay, milliseconds(5));
}

TEST_F(TransportTest, SetLatencyEverywhereOverridesAllLinksUntilReset) {
  const LatencyModel five = LatencyModel::Constant(milliseconds(5));
  const LatencyModel slow = LatencyModel::Constant(milliseconds(77));
  transport_.SetLatency(kA, kB, five);
  transport_.SetLatencyEverywhere(slow);
  EXPECT_EQ(transport_.LatencyOf(kA, kB), slow);
  EXPECT_EQ(transport_.LatencyOf(kA, kA), slow);
  EXPECT_EQ(transport_.LatencyOf(kC, kA), slow);
  EXPECT_EQ(OneTrip(kA, kB), milliseconds(77));
  EXPECT_EQ(OneTrip(kC, kA), milliseconds(77));
  // Setting a link while the override is on is remembered for later.
  transport_.SetLatency(kA, kC, five, /*one_way=*/true);
  EXPECT_EQ(transport_.LatencyOf(kA, kC), slow);

  transport_.SetLatencyEverywhere(std::nullopt);
  EXPECT_EQ(transport_.LatencyOf(kA, kB), five);
  EXPECT_EQ(transport_.LatencyOf(kA, kC), five);
  EXPECT_EQ(transport_.LatencyOf(kC, kA), TransportDefaults{}.cross_region);
  EXPECT_EQ(OneTrip(kA, kB), milliseconds(5));
}

TEST_F(TransportTest, LatencyChangeAffectsOnlyLaterSends) {
  transport_.SetLatency(kA, kB, LatencyModel::Constant(milliseconds(10)));
  Trace trace;
  auto record = [&](int id) {
    return [&, id] { trace.emplace_back(scheduler_.Now(), id); };
  };
  transport_.Send(kA, kB, record(1));
  scheduler_.RunFor(milliseconds(1));
  transport_.SetLatency(kA, kB, LatencyModel::Constant(milliseconds(50)));
  transport_.Send(kA, kB, record(2));
  scheduler_.RunUntilIdle();
  EXPECT_EQ(trace, (Trace{{kStart + milliseconds(10), 1},
                          {kStart + milliseconds(51), 2}}));

  // Faster later sends still queue behind earlier ones (FIFO).
  trace.clear();
  const Time t0 = scheduler_.Now();
  transport_.SetLatency(kA, kB, LatencyModel::Constant(milliseconds(100)));
  transport_.Send(kA, kB, record(3));
  transport_.SetLatency(kA, kB, LatencyModel::Constant(milliseconds(1)));
  transport_.Send(kA, kB, record(4));
  scheduler_.RunFor(milliseconds(200));
  transport_.Send(kA, kB, record(5));
  scheduler_.RunUntilIdle();
  EXPECT_EQ(trace, (Trace{{t0 + milliseconds(100), 3},
                          {t0 + milliseconds(100), 4},
                          {t0 + milliseconds(201), 5}}));
}

TEST_F(TransportTest, BandwidthQueuesMessagesAtTheSender) {
  transport_.SetLatency(kA, kC, LatencyModel::Constant(milliseconds(10)));
  transport_.SetBandwidth(kA, kC, 1'000'000, /*one_way=*/true);  // 1 MB/s
  const Time start = scheduler_.Now();
  std::vector<Time> arrivals;
  for (int i = 0; i < 3; ++i) {
    // 100 KB each: 100 ms on the wire, one after the other.
    transport_.Send(
        kA, kC, [&] { arrivals.push_back(scheduler_.Now()); }, 100'000);
  }
  bool back = false;
  transport_.Send(
      kC, kA, [&] { back = true; }, 100'000);  // no limit
  scheduler_.RunUntilIdle();
  ASSERT_EQ(arrivals.size(), 3u);
  EXPECT_EQ(arrivals[0] - start, milliseconds(110));
  EXPECT_EQ(arrivals[1] - start, milliseconds(210));
  EXPECT_EQ(arrivals[2] - start, milliseconds(310));
  EXPECT_TRUE(back);
  // An idle wire: the next message waits only for its own bytes.
  const Time later = scheduler_.Now() + seconds(1);
  scheduler_.RunUntil(later);
  Time arrived;
  transport_.Send(
      kA, kC, [&] { arrived = scheduler_.Now(); }, 1'000);
  scheduler_.RunUntilIdle();
  EXPECT_EQ(arrived - later, milliseconds(11));
}

TEST_F(TransportTest, DefaultBandwidthAppliesToLinksWithoutTheirOwn) {
  transport_.SetLatencyEverywhere(LatencyModel::Constant(milliseconds(1)));
  transport_.SetDefaultBandwidth(1'000);  // 1 KB/s
  transport_.SetBandwidth(kA, kB, 1'000'000);
  const Time start = scheduler_.Now();
  Time slow, fast, free;
  transport_.Send(
      kA, kC, [&] { slow = scheduler_.Now(); }, 500);
  transport_.Send(
      kA, kB, [&] { fast = scheduler_.Now(); }, 500);
  transport_.Send(kB, kC, [&] { free = scheduler_.Now(); });  // no bytes
  scheduler_.RunUntilIdle();
  EXPECT_EQ(slow - start, milliseconds(501));
  EXPECT_EQ(fast - start, microseconds(1'500));
  EXPECT_EQ(free - start, milliseconds(1));
}

TEST_F(TransportTest, DeliveryTasksCanSendAgain) {
  transport_.SetLatency(kA, kC, LatencyModel::Constant(milliseconds(40)));
  int rounds = 0;
  std::function<void()> ping = [&] {
    if (++rounds == 10) return;
    transport_.Send(rounds % 2 ? kC : kA, rounds % 2 ? kA : kC, ping);
  };
  transport_.Send(kA, kC, ping);
  scheduler_.RunUntilIdle();
  EXPECT_EQ(rounds, 10);
  EXPECT_EQ(scheduler_.Now(), kStart + milliseconds(400));
}

TEST_F(TransportTest, StatsOfAnUnusedLinkAreZero) {
  const LinkStats stats = transport_.StatsOf("nowhere-a", "nowhere-b");
  EXPECT_EQ(stats.sent, 0);
  EXPECT_EQ(stats.delivered, 0);
  EXPECT_EQ(stats.lost, 0);
  EXPECT_EQ(stats.partitioned, 0);
}

Trace RunScenario(uint64_t seed) {
  VirtualScheduler scheduler(kStart);
  Transport transport(scheduler, Rng(seed));
  transport.SetLoss(kA, kC, 0.1);
  transport.SetLatency(kB, kC,
                       LatencyModel::Exponential(milliseconds(5), Duration(0)));
  const std::pair<const char*, const char*> links[] = {
      {kA, kB}, {kA, kC}, {kB, kC}, {kC, kA}, {kA, kA}};
  Trace trace;
  for (int i = 0; i < 300; ++i) {
    const auto [from, to] = links[i % 5];
    scheduler.RunAfter(microseconds(100) * i, [&, i, from, to] {
      transport.Send(from, to,
                     [&, i] { trace.emplace_back(scheduler.Now(), i); });
    });
  }
  scheduler.RunAfter(milliseconds(10), [&] { transport.Partition(kA, kB); });
  scheduler.RunAfter(milliseconds(20), [&] { transport.Heal(kA, kB); });
  scheduler.RunUntilIdle();
  return trace;
}

TEST(TransportDeterminismTest, SameSeedSameTrace) {
  const Trace first = RunScenario(kSeed);
  EXPECT_EQ(first, RunScenario(kSeed));
  EXPECT_GT(first.size(), 200u);
  EXPECT_LT(first.size(), 300u);
  EXPECT_NE(first, RunScenario(kSeed + 1));
}

}  // namespace
}  // namespace btsim::sim
