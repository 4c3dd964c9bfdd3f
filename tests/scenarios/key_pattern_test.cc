#include "scenarios/key_pattern.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

namespace btsim::scenarios {
namespace {

using ::btsim::scenario::v1::KeyPattern;
using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

constexpr char kField[] = "clients[0].workload.keys";
// 2023-11-14T22:13:20.123456789Z.
constexpr sim::Time kNow{sim::Duration(1'700'000'000'123'456'789)};
constexpr char kNowMs[] = "1700000000123";
// INT64_MAX - 1700000000123.
constexpr char kNowReverse[] = "9223370336854775684";
constexpr uint64_t kSeed = 20240601;

KeyPattern Parse(const std::string& text) {
  KeyPattern pattern;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &pattern))
      << text;
  return pattern;
}

std::unique_ptr<KeyGenerator> Make(const std::string& text) {
  auto gen = KeyGenerator::Create(Parse(text), kField);
  EXPECT_TRUE(gen.ok()) << gen.status().ToString();
  if (!gen.ok()) return nullptr;
  return std::move(gen).value();
}

Status CreateError(const std::string& text) {
  return KeyGenerator::Create(Parse(text), kField).status();
}

std::string Pad(uint64_t v, size_t width) {
  std::string s = std::to_string(v);
  return std::string(width > s.size() ? width - s.size() : 0, '0') + s;
}

std::string Hex16(uint64_t v) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[i] = kHex[v & 0xf];
  return s;
}

// `count` write keys at times kNow, kNow + 1 ms, ...
std::vector<std::string> Writes(KeyGenerator& gen, sim::Rng& rng, int count) {
  std::vector<std::string> keys;
  for (int i = 0; i < count; ++i) {
    keys.push_back(gen.WriteKey(kNow + milliseconds(i), rng));
  }
  return keys;
}

const char* const kAllPatterns[] = {
    "sequential { start: 7 }",
    "timestamp_first {}",
    "reversed_timestamp {}",
    "field_promotion { fields { prefix: 'I' values: 100 } "
    "fields { values: 500 } reversed_timestamp: true }",
    "field_promotion { fields { prefix: 'r' values: 30 } }",
    "salted { buckets: 8 }",
    "hashed {}",
    "uniform {}",
    "zipf { exponent: 1.2 }",
    "reversed_domain {}",
};

// --- Formats ---------------------------------------------------------------

TEST(KeyPatternTest, SequentialCountsUpFromStart) {
  auto gen = Make("sequential { start: 42 }");
  sim::Rng rng(kSeed);
  EXPECT_TRUE(gen->time_keyed());
  // A read before any write gives the first id, and does not consume it.
  EXPECT_EQ(gen->ReadKey(kNow, rng), "00000042");
  EXPECT_EQ(gen->WriteKey(kNow, rng), "00000042");
  EXPECT_EQ(gen->WriteKey(kNow, rng), "00000043");
  EXPECT_EQ(gen->WriteKey(kNow + milliseconds(5), rng), "00000044");

  auto zero = Make("sequential {}");
  EXPECT_EQ(zero->WriteKey(kNow, rng), "00000000");
}

TEST(KeyPatternTest, SequentialCounterIsSharedByClients) {
  auto gen = Make("sequential {}");
  sim::Rng a = sim::Rng(kSeed).Fork("client-0");
  sim::Rng b = sim::Rng(kSeed).Fork("client-1");
  EXPECT_EQ(gen->WriteKey(kNow, a), "00000000");
  EXPECT_EQ(gen->WriteKey(kNow, b), "00000001");
  EXPECT_EQ(gen->WriteKey(kNow, a), "00000002");
}

TEST(KeyPatternTest, TimestampFirstFormat) {
  auto gen = Make("timestamp_first {}");
  sim::Rng rng(kSeed);
  sim::Rng expected(kSeed);
  EXPECT_EQ(gen->WriteKey(kNow, rng),
            std::string(kNowMs) + "#" + Pad(expected.Uniform(10000), 4));
  // Sub-millisecond parts are dropped; the epoch pads to 13 digits.
  auto small = Make("timestamp_first {} entities: 1");
  EXPECT_EQ(small->WriteKey(sim::Time(sim::Duration(1'999'999)), rng),
            "0000000000001#0");
  EXPECT_EQ(small->WriteKey(sim::Time(sim::Duration(-5)), rng),
            "0000000000000#0");
}

TEST(KeyPatternTest, ReversedTimestampFormat) {
  auto gen = Make("reversed_timestamp {} entities: 100");
  sim::Rng rng(kSeed);
  sim::Rng expected(kSeed);
  EXPECT_EQ(gen->WriteKey(kNow, rng),
            Pad(expected.Uniform(100), 2) + "#" + kNowReverse);
  auto one = Make("reversed_timestamp {} entities: 1");
  EXPECT_EQ(one->WriteKey(sim::Time(sim::Duration(0)), rng),
            "0#9223372036854775807");
}

TEST(KeyPatternTest, FieldPromotionFormat) {
  auto gen = Make(
      "field_promotion { fields { prefix: 'I' values: 100 } "
      "fields { values: 500 } reversed_timestamp: true }");
  EXPECT_TRUE(gen->time_keyed());
  sim::Rng rng(kSeed);
  sim::Rng expected(kSeed);
  const std::string key = gen->WriteKey(kNow, rng);
  EXPECT_THAT(key, MatchesRegex("I[0-9]{2}#[0-9]{3}#9223370336854775684"));
  std::string want = "I" + Pad(expected.Uniform(100), 2);
  want += "#" + Pad(expected.Uniform(500), 3) + "#" + kNowReverse;
  EXPECT_EQ(key, want);

  auto plain = Make(
      "field_promotion { fields { prefix: 'dev' values: 1 } "
      "fields { prefix: 'x' values: 11 } }");
  EXPECT_FALSE(plain->time_keyed());
  for (int i = 0; i < 50; ++i) {
    EXPECT_THAT(plain->WriteKey(kNow, rng), MatchesRegex("dev0#x[0-9]{2}"));
  }
}

TEST(KeyPatternTest, SaltedFormat) {
  auto gen = Make("salted { buckets: 16 } entities: 1000");
  sim::Rng rng(kSeed);
  sim::Rng expected(kSeed);
  const uint64_t entity = expected.Uniform(1000);
  EXPECT_EQ(gen->WriteKey(kNow, rng), Pad(EntityHash(entity) % 16, 2) + "#" +
                                          kNowMs + "#" + Pad(entity, 3));
  auto one = Make("salted { buckets: 1 } entities: 5");
  EXPECT_THAT(one->WriteKey(kNow, rng), MatchesRegex("0#1700000000123#[0-4]"));
}

TEST(KeyPatternTest, HashedFormat) {
  auto gen = Make("hashed {}");
  sim::Rng rng(kSeed);
  sim::Rng expected(kSeed);
  EXPECT_EQ(gen->WriteKey(kNow, rng),
            Hex16(EntityHash(expected.Uniform(10000))));
  for (int i = 0; i < 100; ++i) {
    EXPECT_THAT(gen->WriteKey(kNow, rng), MatchesRegex("[0-9a-f]{16}"));
  }
}

TEST(KeyPatternTest, UniformFormat) {
  sim::Rng rng(kSeed);
  sim::Rng expected(kSeed);
  auto gen = Make("uniform {}");  // 10,000 entities by default
  EXPECT_EQ(gen->entities(), 10000u);
  EXPECT_EQ(gen->WriteKey(kNow, rng), "row" + Pad(expected.Uniform(10000), 4));
  auto big = Make("uniform {} entities: 100000000");
  EXPECT_EQ(big->WriteKey(kNow, rng),
            "row" + Pad(expected.Uniform(100000000), 8));
  auto ten = Make("uniform {} entities: 10");
  for (int i = 0; i < 50; ++i) {
    EXPECT_THAT(ten->WriteKey(kNow, rng), MatchesRegex("row[0-9]"));
  }
}

TEST(KeyPatternTest, ZipfFormat) {
  auto gen = Make("zipf {} entities: 1000");
  sim::Rng rng(kSeed);
  sim::Rng expected(kSeed);
  ZipfSampler sampler(1000, 1.0);  // exponent 0 means 1.0
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(gen->WriteKey(kNow, rng),
              "row" + Pad(sampler.Sample(expected), 3));
  }
}

TEST(KeyPatternTest, ReversedDomainFormat) {
  auto gen = Make("reversed_domain {} entities: 1");
  sim::Rng rng(kSeed);
  const char* const tlds[] = {"com", "org", "net", "io"};
  const std::string domain =
      std::string(tlds[(EntityHash(0) >> 32) % 4]) + ".aaaa.www/page";
  EXPECT_THAT(gen->WriteKey(kNow, rng), MatchesRegex(domain + "[0-9]"));

  // Distinct names per entity, a fixed TLD per name, all four TLDs used.
  auto many = Make("reversed_domain {} entities: 500000");
  std::map<std::string, std::string> tld_of_name;
  std::set<std::string> used_tlds;
  for (int i = 0; i < 2000; ++i) {
    const std::string key = many->WriteKey(kNow, rng);
    ASSERT_THAT(key,
                MatchesRegex("(com|org|net|io)\\.[a-z]{5}\\.www/page[0-9]"));
    const size_t dot = key.find('.');
    const std::string tld = key.substr(0, dot);
    const std::string name = key.substr(dot + 1, 5);
    auto [it, inserted] = tld_of_name.emplace(name, tld);
    EXPECT_EQ(it->second, tld) << name;
    used_tlds.insert(tld);
  }
  EXPECT_EQ(used_tlds.size(), 4u);
  EXPECT_GT(tld_of_name.size(), 1900u);
}

// --- Determinism -----------------------------------------------------------

TEST(KeyPatternTest, SameSeedSameKeysOtherForkOtherKeys) {
  for (const char* text : kAllPatterns) {
    SCOPED_TRACE(text);
    auto run = [&](const std::string& fork) {
      auto gen = Make(text);
      sim::Rng rng = sim::Rng(kSeed).Fork(fork);
      std::vector<std::string> keys;
      for (int i = 0; i < 200; ++i) {
        const sim::Time now = kNow + milliseconds(i / 3);
        keys.push_back(gen->WriteKey(now, rng));
        keys.push_back(gen->ReadKey(now, rng));
        keys.push_back(gen->ScanStart(now, rng));
      }
      return keys;
    };
    EXPECT_EQ(run("client-0"), run("client-0"));
    EXPECT_NE(run("client-0"), run("client-1"));
  }
}

// --- Orderings that matter for hotspotting ---------------------------------

TEST(KeyPatternTest, SequentialAndTimestampFirstWritesSortInTimeOrder) {
  for (const char* text :
       {"sequential { start: 12345 }", "timestamp_first {}"}) {
    SCOPED_TRACE(text);
    auto gen = Make(text);
    sim::Rng rng(kSeed);
    const std::vector<std::string> keys = Writes(*gen, rng, 1000);
    EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  }
  // Across the 10^12 ms boundary too (13 digits throughout).
  auto gen = Make("timestamp_first {}");
  sim::Rng rng(kSeed);
  EXPECT_LT(
      gen->WriteKey(sim::Time(sim::Duration(999'999'999'999'000'000)), rng),
      gen->WriteKey(sim::Time(sim::Duration(1'000'000'000'000'000'000)), rng));
}

TEST(KeyPatternTest, ReversedTimestampNewerSortsFirstWithinEntity) {
  auto gen = Make("reversed_timestamp {} entities: 3");
  sim::Rng rng(kSeed);
  std::map<std::string, std::vector<std::string>> by_entity;
  for (const std::string& key : Writes(*gen, rng, 300)) {
    by_entity[key.substr(0, key.find('#'))].push_back(key);
  }
  ASSERT_EQ(by_entity.size(), 3u);
  for (const auto& [entity, keys] : by_entity) {
    EXPECT_TRUE(std::is_sorted(keys.rbegin(), keys.rend())) << entity;
  }
}

TEST(KeyPatternTest, SaltedSpreadsConsecutiveWritesOverAllBuckets) {
  auto gen = Make("salted { buckets: 8 }");
  sim::Rng rng(kSeed);
  std::map<std::string, int> per_bucket;
  for (const std::string& key : Writes(*gen, rng, 400)) {
    ++per_bucket[key.substr(0, key.find('#'))];
  }
  ASSERT_EQ(per_bucket.size(), 8u);
  for (const auto& [bucket, count] : per_bucket) {
    EXPECT_GT(count, 20) << bucket;  // 50 expected
  }
}

TEST(KeyPatternTest, HashedAndUniformSpreadOverTheKeySpace) {
  sim::Rng rng(kSeed);
  {
    auto gen = Make("hashed {}");
    std::map<char, int> first_digit;
    for (int i = 0; i < 16000; ++i) ++first_digit[gen->WriteKey(kNow, rng)[0]];
    ASSERT_EQ(first_digit.size(), 16u);
    for (const auto& [digit, count] : first_digit) {
      EXPECT_GT(count, 800) << digit;  // 1000 expected
      EXPECT_LT(count, 1200) << digit;
    }
  }
  {
    auto gen = Make("uniform {}");
    std::map<char, int> first_digit;  // "row" + 4 digits
    for (int i = 0; i < 10000; ++i) ++first_digit[gen->WriteKey(kNow, rng)[3]];
    ASSERT_EQ(first_digit.size(), 10u);
    for (const auto& [digit, count] : first_digit) {
      EXPECT_GT(count, 850) << digit;  // 1000 expected
      EXPECT_LT(count, 1150) << digit;
    }
  }
}

// --- Reads and scans -------------------------------------------------------

TEST(KeyPatternTest, TimeKeyedReadsPickRecentlyWrittenKeys) {
  for (const char* text :
       {"sequential {}", "timestamp_first {}", "reversed_timestamp {}",
        "salted { buckets: 4 }",
        "field_promotion { fields { values: 1000 } reversed_timestamp: "
        "true }"}) {
    SCOPED_TRACE(text);
    auto gen = Make(text);
    ASSERT_TRUE(gen->time_keyed());
    sim::Rng rng(kSeed);
    const std::vector<std::string> keys = Writes(*gen, rng, 3000);
    const std::set<std::string> recent(keys.end() - KeyGenerator::kRecentKeys,
                                       keys.end());
    std::set<std::string> seen;
    for (int i = 0; i < 5000; ++i) {
      const std::string key = gen->ReadKey(kNow + milliseconds(3000), rng);
      EXPECT_TRUE(recent.contains(key)) << key;
      seen.insert(key);
    }
    EXPECT_GT(seen.size(), 900u);  // uniform over the ring
  }
}

TEST(KeyPatternTest, ReadsBeforeAnyWriteAreNotRecorded) {
  auto gen = Make("timestamp_first {} entities: 1000000");
  sim::Rng rng(kSeed);
  std::set<std::string> reads;
  for (int i = 0; i < 20; ++i) {
    const std::string key = gen->ReadKey(kNow, rng);
    EXPECT_THAT(key, MatchesRegex("1700000000123#[0-9]{6}"));
    reads.insert(key);
  }
  EXPECT_GT(reads.size(), 15u);  // fresh draws, not a recorded key
  const std::string written = gen->WriteKey(kNow, rng);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(gen->ReadKey(kNow, rng), written);
}

TEST(KeyPatternTest, EntityKeyedReadsDrawLikeWrites) {
  for (const char* text :
       {"uniform {}", "hashed {}", "zipf {}", "reversed_domain {}",
        "field_promotion { fields { values: 7 } }"}) {
    SCOPED_TRACE(text);
    auto gen = Make(text);
    EXPECT_FALSE(gen->time_keyed());
    sim::Rng a(kSeed);
    sim::Rng b(kSeed);
    for (int i = 0; i < 20; ++i) {
      EXPECT_EQ(gen->ReadKey(kNow, a), gen->WriteKey(kNow, b));
    }
  }
}

TEST(KeyPatternTest, ScanStartsArePrefixAligned) {
  sim::Rng rng(kSeed);
  auto fp = Make(
      "field_promotion { fields { prefix: 'I' values: 100 } "
      "fields { values: 500 } reversed_timestamp: true }");
  auto salted = Make("salted { buckets: 16 }");
  auto reversed = Make("reversed_timestamp {} entities: 100");
  auto domain = Make("reversed_domain {}");
  auto single = Make("field_promotion { fields { prefix: 'I' values: 100 } }");
  auto uniform = Make("uniform {}");
  for (int i = 0; i < 50; ++i) {
    EXPECT_THAT(fp->ScanStart(kNow, rng), MatchesRegex("I[0-9]{2}#"));
    EXPECT_THAT(salted->ScanStart(kNow, rng), MatchesRegex("[0-9]{2}#"));
    EXPECT_THAT(reversed->ScanStart(kNow, rng), MatchesRegex("[0-9]{2}#"));
    EXPECT_THAT(domain->ScanStart(kNow, rng),
                MatchesRegex("(com|org|net|io)\\.[a-z]{4}\\.www/"));
    EXPECT_THAT(single->ScanStart(kNow, rng), MatchesRegex("I[0-9]{2}"));
    EXPECT_THAT(uniform->ScanStart(kNow, rng), MatchesRegex("row[0-9]{4}"));
  }
  // Time-keyed patterns without groups start at a recent key.
  auto ts = Make("timestamp_first {}");
  const std::string written = ts->WriteKey(kNow, rng);
  EXPECT_EQ(ts->ScanStart(kNow, rng), written);
}

// --- Validation ------------------------------------------------------------

TEST(KeyPatternTest, ValidationErrorsNameTheField) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"", "clients[0].workload.keys: a key pattern is required"},
      {"entities: 7", "clients[0].workload.keys: a key pattern is required"},
      {"uniform {} entities: 100000001",
       "clients[0].workload.keys.entities: must be in 1..100000000"},
      {"salted {}",
       "clients[0].workload.keys.salted.buckets: must be in 1..1000"},
      {"salted { buckets: -1 }",
       "clients[0].workload.keys.salted.buckets: must be in 1..1000"},
      {"salted { buckets: 1001 }",
       "clients[0].workload.keys.salted.buckets: must be in 1..1000"},
      {"zipf { exponent: -1 }",
       "clients[0].workload.keys.zipf.exponent: must be > 0 and at most 5"},
      {"zipf { exponent: 5.01 }",
       "clients[0].workload.keys.zipf.exponent: must be > 0 and at most 5"},
      {"zipf { exponent: nan }",
       "clients[0].workload.keys.zipf.exponent: must be > 0 and at most 5"},
      {"zipf { exponent: inf }",
       "clients[0].workload.keys.zipf.exponent: must be > 0 and at most 5"},
      {"field_promotion {}",
       "clients[0].workload.keys.field_promotion.fields: at least one field "
       "is required"},
      {"field_promotion { fields { values: 3 } fields { prefix: 'x' } }",
       "clients[0].workload.keys.field_promotion.fields[1].values: must be at "
       "least 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const Status status = CreateError(c.text);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message(), c.message);
  }

  const std::string long_prefix(4090, 'p');
  const Status too_long =
      CreateError("field_promotion { fields { prefix: '" + long_prefix +
                  "' values: 10 } reversed_timestamp: true }");
  EXPECT_EQ(too_long.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(too_long.message(),
              HasSubstr("clients[0].workload.keys.field_promotion.fields: the "
                        "keys would exceed 4 KiB"));
}

TEST(KeyPatternTest, LimitsAreInclusive) {
  EXPECT_TRUE(
      KeyGenerator::Create(Parse("salted { buckets: 1000 }"), kField).ok());
  EXPECT_TRUE(KeyGenerator::Create(Parse("zipf { exponent: 5 }"), kField).ok());
  EXPECT_TRUE(
      KeyGenerator::Create(Parse("hashed {} entities: 100000000"), kField)
          .ok());
  auto gen = Make("zipf { exponent: 0.0001 } entities: 1");
  sim::Rng rng(kSeed);
  EXPECT_EQ(gen->WriteKey(kNow, rng), "row0");
}

// --- Zipf ------------------------------------------------------------------

// Checks the empirical frequencies of the top ranks (and the tail beyond
// them) against the Zipf pmf, within 5 standard deviations.
void ExpectZipfFrequencies(uint64_t n, double exponent) {
  SCOPED_TRACE("n=" + std::to_string(n) + " s=" + std::to_string(exponent));
  double norm = 0;
  for (uint64_t k = 1; k <= n; ++k) norm += std::pow(double(k), -exponent);
  ZipfSampler sampler(n, exponent);
  sim::Rng rng = sim::Rng(kSeed).Fork("zipf");
  constexpr int kDraws = 200'000;
  constexpr uint64_t kTop = 10;
  std::vector<int> counts(kTop + 1, 0);  // the last: every rank >= kTop
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t rank = sampler.Sample(rng);
    ASSERT_LT(rank, n);
    ++counts[std::min(rank, kTop)];
  }
  double top_mass = 0;
  for (uint64_t k = 0; k <= kTop; ++k) {
    double p;
    if (k < kTop) {
      p = k < n ? std::pow(double(k + 1), -exponent) / norm : 0.0;
      top_mass += p;
    } else {
      p = std::max(0.0, 1.0 - top_mass);
    }
    const double expected = p * kDraws;
    const double sigma = std::sqrt(kDraws * p * (1 - p));
    EXPECT_NEAR(counts[k], expected, 5 * sigma + 1) << "rank " << k;
  }
}

TEST(KeyPatternZipfTest, FrequenciesMatchThePmf) {
  ExpectZipfFrequencies(1000, 1.0);
  ExpectZipfFrequencies(1000, 0.5);
  ExpectZipfFrequencies(1000, 2.0);
  ExpectZipfFrequencies(100000, 1.2);
  ExpectZipfFrequencies(5, 0.8);
  ExpectZipfFrequencies(1, 1.0);
  ExpectZipfFrequencies(1000, 5.0);
}

TEST(KeyPatternZipfTest, ExponentNearOne) {
  ExpectZipfFrequencies(1000, 1.0 + 1e-9);
  ExpectZipfFrequencies(1000, 1.0 - 1e-9);
  ExpectZipfFrequencies(1000, 1.0 + 1e-6);
  ExpectZipfFrequencies(1000, 0.99999);
}

TEST(KeyPatternZipfTest, HundredMillionEntitiesWithoutTables) {
  constexpr uint64_t kN = 100'000'000;
  ZipfSampler sampler(kN, 1.0);
  sim::Rng rng(kSeed);
  constexpr int kDraws = 200'000;
  int top = 0;
  uint64_t max_rank = 0;
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t rank = sampler.Sample(rng);
    ASSERT_LT(rank, kN);
    max_rank = std::max(max_rank, rank);
    if (rank == 0) ++top;
  }
  // H(1e8, 1) = ln(1e8) + Euler's gamma + 1/(2e8) - ..., so P(rank 0) ~ 1/19.
  const double p = 1.0 / (std::log(double(kN)) + 0.5772156649015329);
  const double sigma = std::sqrt(kDraws * p * (1 - p));
  EXPECT_NEAR(top, p * kDraws, 5 * sigma);
  EXPECT_GT(max_rank, kN / 100);  // the long tail is reached
}

}  // namespace
}  // namespace btsim::scenarios
