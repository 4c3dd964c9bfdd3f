#include "cluster/internal/key_heads.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/rng.h"

namespace btsim::cluster::internal {
namespace {

TEST(KeyHeadTest, EightBytesAfterTheOffsetBigEndianZeroPadded) {
  EXPECT_EQ(KeyHead("abcdefghij", 2), 0x636465666768696au);  // "cdefghij"
  EXPECT_EQ(KeyHead("ab", 0), 0x6162000000000000u);
  EXPECT_EQ(KeyHead("ab", 5), 0u);
  EXPECT_EQ(KeyHead("\xff", 0), 0xff00000000000000u);  // unsigned bytes
}

// The definition, byte by byte.
uint64_t SlowKeyHead(std::string_view key, size_t offset) {
  uint64_t head = 0;
  for (size_t i = 0; i < 8; ++i) {
    const size_t at = offset + i;
    const uint8_t b = at < key.size() ? static_cast<uint8_t>(key[at]) : 0;
    head = (head << 8) | b;
  }
  return head;
}

TEST(KeyHeadTest, MatchesTheDefinitionForEveryLengthAndOffset) {
  sim::Rng rng(11);
  for (size_t size = 0; size <= 20; ++size) {
    for (int round = 0; round < 20; ++round) {
      std::string key;
      for (size_t i = 0; i < size; ++i) {
        key.push_back(static_cast<char>(rng.Uniform(256)));
      }
      for (size_t offset = 0; offset <= size + 2; ++offset) {
        EXPECT_EQ(KeyHead(key, offset), SlowKeyHead(key, offset))
            << "size " << size << ", offset " << offset;
      }
    }
  }
}

TEST(CommonPrefixLengthTest, Bytes) {
  EXPECT_EQ(CommonPrefixLength("row123", "row129"), 5u);
  EXPECT_EQ(CommonPrefixLength("", "row"), 0u);
  EXPECT_EQ(CommonPrefixLength("row", "row1"), 3u);
}

// Searches `keys` (sorted) both ways and compares with std::lower_bound and
// std::upper_bound for every probe.
void ExpectSameAsStringSearch(std::vector<std::string> keys,
                              const std::vector<std::string>& probes) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  const size_t lcp =
      keys.empty() ? 0 : CommonPrefixLength(keys.front(), keys.back());
  const std::string prefix = keys.empty() ? "" : keys.front().substr(0, lcp);
  std::vector<uint64_t> heads;
  for (const std::string& k : keys) heads.push_back(KeyHead(k, lcp));
  auto key_at = [&keys](size_t i) -> std::string_view { return keys[i]; };
  for (const std::string& p : probes) {
    const auto lower = std::lower_bound(keys.begin(), keys.end(), p);
    const auto upper = std::upper_bound(keys.begin(), keys.end(), p);
    EXPECT_EQ(HeadsBound(heads, prefix, p, false, key_at),
              static_cast<size_t>(lower - keys.begin()))
        << "lower bound of '" << p << "'";
    EXPECT_EQ(HeadsBound(heads, prefix, p, true, key_at),
              static_cast<size_t>(upper - keys.begin()))
        << "upper bound of '" << p << "'";
  }
}

TEST(HeadsBoundTest, MatchesStringSearchOnTiesPrefixesAndShortKeys) {
  // Equal heads: keys that differ after the 8 bytes, or only by trailing
  // zero bytes; keys shorter than the shared prefix; the empty key.
  const std::vector<std::string> keys = {"user#00000001",
                                         "user#00000001a",
                                         "user#00000001b",
                                         "user#0000000",
                                         std::string("user#0000000\0", 13),
                                         "user#00000002",
                                         "user#1",
                                         "user#"};
  const std::vector<std::string> probes = {"",
                                           "a",
                                           "user",
                                           "user#",
                                           "user#0",
                                           "user#00000001",
                                           "user#00000001a",
                                           "user#00000001aa",
                                           "user#0000000",
                                           std::string("user#0000000\0", 13),
                                           std::string("user#0000000\0\0", 14),
                                           "user#00000002",
                                           "user#2",
                                           "uses",
                                           "zzz"};
  ExpectSameAsStringSearch(keys, probes);
  ExpectSameAsStringSearch({}, probes);
  ExpectSameAsStringSearch({"only"}, probes);
}

TEST(HeadsBoundTest, MatchesStringSearchOnRandomKeys) {
  sim::Rng rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::string> keys, probes;
    auto random_key = [&rng] {
      std::string k = "p";
      const size_t n = rng.Uniform(14);
      for (size_t i = 0; i < n; ++i) {
        k.push_back(static_cast<char>("\0abz\xff"[rng.Uniform(5)]));
      }
      return k;
    };
    for (int i = 0; i < 40; ++i) keys.push_back(random_key());
    for (int i = 0; i < 40; ++i) probes.push_back(random_key());
    probes.insert(probes.end(), keys.begin(), keys.end());
    ExpectSameAsStringSearch(keys, probes);
  }
}

}  // namespace
}  // namespace btsim::cluster::internal
