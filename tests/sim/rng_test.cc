#include "sim/rng.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

namespace btsim::sim {
namespace {

std::vector<uint64_t> Take(Rng& rng, int n) {
  std::vector<uint64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(rng.Next());
  return out;
}

TEST(RngTest, MatchesReferenceXoshiro256StarStarSeededWithSplitMix64) {
  // Values computed independently from the published algorithms; they must
  // be identical on every platform and standard library.
  Rng zero(0);
  EXPECT_EQ(zero.Next(), 0x99ec5f36cb75f2b4ULL);
  EXPECT_EQ(zero.Next(), 0xbf6e1f784956452aULL);
  EXPECT_EQ(zero.Next(), 0x1a5f849d4933e6e0ULL);
  Rng answer(42);
  EXPECT_EQ(answer.Next(), 0x15780b2e0c2ec716ULL);
  EXPECT_EQ(answer.Next(), 0x6104d9866d113a7eULL);
  EXPECT_EQ(answer.Next(), 0xae17533239e499a1ULL);
}

TEST(RngTest, SameSeedGivesSameSequence) {
  Rng a(1234);
  Rng b(1234);
  EXPECT_EQ(Take(a, 100), Take(b, 100));
  EXPECT_EQ(a.seed(), 1234u);
}

TEST(RngTest, DifferentSeedsGiveDifferentSequences) {
  Rng a(1);
  Rng b(2);
  EXPECT_NE(Take(a, 10), Take(b, 10));
}

TEST(RngTest, SequenceDoesNotRepeatQuickly) {
  Rng rng(7);
  std::set<uint64_t> seen;
  for (int i = 0; i < 10000; ++i) seen.insert(rng.Next());
  EXPECT_EQ(seen.size(), 10000u);
}

TEST(RngTest, ForkIsDeterministicAndNamed) {
  Rng parent(99);
  Rng a1 = parent.Fork("a");
  Rng a2 = parent.Fork("a");
  Rng b = parent.Fork("b");
  const std::vector<uint64_t> sa1 = Take(a1, 20);
  EXPECT_EQ(sa1, Take(a2, 20));
  EXPECT_NE(sa1, Take(b, 20));
}

TEST(RngTest, ForkDoesNotAdvanceParent) {
  Rng forked(5);
  Rng plain(5);
  (void)forked.Next();
  (void)plain.Next();
  Rng child = forked.Fork("client-3");
  (void)child.Next();
  EXPECT_EQ(Take(forked, 10), Take(plain, 10));
}

TEST(RngTest, ForkDependsOnSeedNotOnPosition) {
  Rng early(5);
  Rng late(5);
  (void)Take(late, 50);
  Rng c1 = early.Fork("x");
  Rng c2 = late.Fork("x");
  EXPECT_EQ(Take(c1, 5), Take(c2, 5));
}

TEST(RngTest, ForksOfDifferentParentsDiffer) {
  Rng c1 = Rng(1).Fork("x");
  Rng c2 = Rng(2).Fork("x");
  EXPECT_NE(Take(c1, 5), Take(c2, 5));
}

TEST(RngTest, ForkDiffersFromParentStream) {
  Rng parent(11);
  Rng child = parent.Fork("");
  EXPECT_NE(Take(parent, 5), Take(child, 5));
}

TEST(RngTest, UniformStaysInBoundsAndCoversRange) {
  Rng rng(3);
  for (uint64_t n : {1ULL, 2ULL, 3ULL, 7ULL, 10ULL, 1000ULL}) {
    std::set<uint64_t> seen;
    for (int i = 0; i < 5000; ++i) {
      const uint64_t x = rng.Uniform(n);
      ASSERT_LT(x, n);
      seen.insert(x);
    }
    if (n <= 10) {
      EXPECT_EQ(seen.size(), n) << "n=" << n;
    }
  }
}

TEST(RngTest, UniformOfOneIsAlwaysZero) {
  Rng rng(8);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(rng.Uniform(1), 0u);
}

TEST(RngTest, UniformIsRoughlyUnbiased) {
  Rng rng(17);
  int counts[4] = {0, 0, 0, 0};
  const int kDraws = 40000;
  for (int i = 0; i < kDraws; ++i) ++counts[rng.Uniform(4)];
  for (int c : counts) {
    EXPECT_GT(c, kDraws / 4 - 600);
    EXPECT_LT(c, kDraws / 4 + 600);
  }
}

TEST(RngTest, UniformHandlesHugeBound) {
  Rng rng(21);
  const uint64_t n = (1ULL << 63) + 12345;
  bool high = false;
  for (int i = 0; i < 200; ++i) {
    const uint64_t x = rng.Uniform(n);
    ASSERT_LT(x, n);
    high |= x >= (1ULL << 62);
  }
  EXPECT_TRUE(high);
}

TEST(RngDeathTest, UniformOfZeroAborts) {
  Rng rng(1);
  EXPECT_DEATH((void)rng.Uniform(0), "invariant failed");
}

TEST(RngTest, UniformDoubleInHalfOpenUnitInterval) {
  Rng rng(4);
  double sum = 0;
  const int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) {
    const double d = rng.UniformDouble();
    ASSERT_GE(d, 0.0);
    ASSERT_LT(d, 1.0);
    sum += d;
  }
  EXPECT_NEAR(sum / kDraws, 0.5, 0.02);
}

TEST(RngTest, BernoulliExtremesAndFrequency) {
  Rng rng(6);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(rng.Bernoulli(0.0));
    EXPECT_FALSE(rng.Bernoulli(-1.0));
    EXPECT_TRUE(rng.Bernoulli(1.0));
    EXPECT_TRUE(rng.Bernoulli(2.0));
  }
  int hits = 0;
  const int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) hits += rng.Bernoulli(0.25) ? 1 : 0;
  EXPECT_NEAR(static_cast<double>(hits) / kDraws, 0.25, 0.02);
}

TEST(StableHashTest, IsFnv1a64) {
  EXPECT_EQ(StableHash(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(StableHash("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(StableHash("foobar"), 0x85944171f73967e8ULL);
}

TEST(StableHashTest, SeedAndBytesMatter) {
  EXPECT_NE(StableHash("abc", 0), StableHash("abc", 1));
  EXPECT_NE(StableHash("abc"), StableHash("abd"));
  EXPECT_NE(StableHash(std::string_view("a\0b", 3)),
            StableHash(std::string_view("a\0c", 3)));
  EXPECT_EQ(StableHash("abc", 9), StableHash("abc", 9));
}

}  // namespace
}  // namespace btsim::sim
