#include "scenarios/flat_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace btsim::scenarios {
namespace {

TEST(FlatIndexTest, FindsWhatWasAddedAcrossGrowth) {
  std::vector<std::string> keys;
  FlatIndex index;
  for (int i = 0; i < 10'000; ++i) keys.push_back("key" + std::to_string(i));
  for (uint32_t i = 0; i < keys.size(); ++i) {
    const auto [value, added] = index.Emplace(
        HashString(keys[i]), i, [&](uint32_t v) { return keys[v] == keys[i]; });
    EXPECT_TRUE(added);
    EXPECT_EQ(value, i);
  }
  EXPECT_EQ(index.size(), keys.size());
  for (uint32_t i = 0; i < keys.size(); ++i) {
    const uint32_t* found = index.Find(
        HashString(keys[i]), [&](uint32_t v) { return keys[v] == keys[i]; });
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(*found, i);
  }
  const std::string absent = "absent";
  EXPECT_EQ(index.Find(HashString(absent),
                       [&](uint32_t v) { return keys[v] == absent; }),
            nullptr);
}

TEST(FlatIndexTest, KeepsTheFirstValueOfAKey) {
  FlatIndex index;
  const std::vector<std::string> keys = {"a", "b", "a"};
  auto emplace = [&](uint32_t i) {
    return index.Emplace(HashString(keys[i]), i,
                         [&](uint32_t v) { return keys[v] == keys[i]; });
  };
  EXPECT_TRUE(emplace(0).second);
  EXPECT_TRUE(emplace(1).second);
  const auto [value, added] = emplace(2);
  EXPECT_FALSE(added);
  EXPECT_EQ(value, 0u);
}

TEST(FlatIndexTest, CollidingHashesAreToldApartByThePredicate) {
  FlatIndex index;
  index.Reserve(4);
  for (uint32_t i = 0; i < 100; ++i) {
    EXPECT_TRUE(
        index.Emplace(42, i, [&](uint32_t v) { return v == i; }).second);
  }
  for (uint32_t i = 0; i < 100; ++i) {
    const uint32_t* found = index.Find(42, [&](uint32_t v) { return v == i; });
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(*found, i);
  }
  EXPECT_EQ(index.Find(7, [](uint32_t) { return true; }), nullptr);
}

TEST(FlatIndexTest, StructuredHashesSurviveGrowth) {
  // Raw ids as hashes, as Series uses them: (high << 32) | low, many
  // sharing their high or low half; no Reserve, so the index grows many
  // times and must place every entry again from what it stored.
  std::vector<uint64_t> hashes;
  for (uint64_t high = 0; high < 8; ++high) {
    for (uint64_t low = 0; low < 4096; ++low) {
      hashes.push_back(high << 32 | low);
    }
  }
  FlatIndex index;
  for (uint32_t i = 0; i < hashes.size(); ++i) {
    const auto [value, added] = index.Emplace(
        hashes[i], i, [&](uint32_t v) { return hashes[v] == hashes[i]; });
    EXPECT_TRUE(added);
    EXPECT_EQ(value, i);
  }
  EXPECT_EQ(index.size(), hashes.size());
  for (uint32_t i = 0; i < hashes.size(); ++i) {
    const uint32_t* found = index.Find(
        hashes[i], [&](uint32_t v) { return hashes[v] == hashes[i]; });
    ASSERT_NE(found, nullptr) << i;
    EXPECT_EQ(*found, i);
  }
  const uint64_t absent = uint64_t{9} << 32;
  EXPECT_EQ(index.Find(absent, [&](uint32_t v) { return hashes[v] == absent; }),
            nullptr);
}

TEST(FlatIndexTest, ReserveKeepsEntriesAndTheLargestValueWorks) {
  FlatIndex index;
  const uint32_t largest = FlatIndex::kNoValue - 1;
  EXPECT_TRUE(index.Emplace(1, largest, [](uint32_t) { return false; }).second);
  EXPECT_TRUE(index.Emplace(2, 0, [](uint32_t) { return false; }).second);
  index.Reserve(100'000);
  const uint32_t* found =
      index.Find(1, [&](uint32_t v) { return v == largest; });
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(*found, largest);
  found = index.Find(2, [](uint32_t v) { return v == 0; });
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(*found, 0u);
  EXPECT_EQ(index.size(), 2u);
}

}  // namespace
}  // namespace btsim::scenarios
