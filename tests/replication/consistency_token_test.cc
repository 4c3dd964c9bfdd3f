#include "replication/consistency_token.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace btsim::replication {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kTable[] = "projects/p/instances/i/tables/t";

void ExpectRejected(const Result<std::vector<uint64_t>>& r) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("consistency_token"));
}

TEST(ConsistencyTokenTest, RoundTripsPositions) {
  const std::vector<uint64_t> positions = {0, 1, 42, UINT64_MAX};
  const std::string token = EncodeConsistencyToken(kTable, positions);
  Result<std::vector<uint64_t>> decoded = DecodeConsistencyToken(token, kTable);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, positions);
}

TEST(ConsistencyTokenTest, RoundTripsSingleCluster) {
  const std::vector<uint64_t> positions = {123456789};
  Result<std::vector<uint64_t>> decoded =
      DecodeConsistencyToken(EncodeConsistencyToken(kTable, positions), kTable);
  ASSERT_TRUE(decoded.ok());
  EXPECT_THAT(*decoded, ElementsAre(123456789u));
}

TEST(ConsistencyTokenTest, IsDeterministicAndDependsOnInputs) {
  const std::vector<uint64_t> a = {1, 2};
  const std::vector<uint64_t> b = {1, 3};
  EXPECT_EQ(EncodeConsistencyToken(kTable, a),
            EncodeConsistencyToken(kTable, a));
  EXPECT_NE(EncodeConsistencyToken(kTable, a),
            EncodeConsistencyToken(kTable, b));
  EXPECT_NE(EncodeConsistencyToken(kTable, a),
            EncodeConsistencyToken("projects/p/instances/i/tables/u", a));
}

TEST(ConsistencyTokenTest, RejectsMalformedStrings) {
  for (const char* bad :
       {"", "garbage", "btsim1", "btsim1-", "btsim1--", "btsim2-0-0-0",
        "btsim1-zz-00-00", "-------", "btsim1-0000000000000000-x-y"}) {
    SCOPED_TRACE(bad);
    ExpectRejected(DecodeConsistencyToken(bad, kTable));
  }
}

TEST(ConsistencyTokenTest, RejectsTokenForAnotherTable) {
  const std::vector<uint64_t> positions = {5, 6};
  const std::string token = EncodeConsistencyToken(kTable, positions);
  Result<std::vector<uint64_t>> r =
      DecodeConsistencyToken(token, "projects/p/instances/i/tables/other");
  ExpectRejected(r);
  EXPECT_THAT(r.status().message(), HasSubstr("different table"));
}

TEST(ConsistencyTokenTest, RejectsEveryTamperedDigit) {
  const std::vector<uint64_t> positions = {7, 8, 9};
  const std::string token = EncodeConsistencyToken(kTable, positions);
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '-') continue;
    std::string tampered = token;
    tampered[i] = tampered[i] == '0' ? '1' : '0';
    SCOPED_TRACE(tampered);
    ExpectRejected(DecodeConsistencyToken(tampered, kTable));
  }
}

TEST(ConsistencyTokenTest, RejectsTruncatedOrExtendedToken) {
  const std::vector<uint64_t> positions = {7, 8};
  const std::string token = EncodeConsistencyToken(kTable, positions);
  ExpectRejected(
      DecodeConsistencyToken(token.substr(0, token.size() - 1), kTable));
  ExpectRejected(DecodeConsistencyToken(token + "0", kTable));
  ExpectRejected(DecodeConsistencyToken(token + "-0", kTable));
  ExpectRejected(DecodeConsistencyToken(" " + token, kTable));
}

TEST(ConsistencyTokenTest, RejectsUpperCaseHex) {
  const std::vector<uint64_t> positions = {0xabcdef};
  std::string token = EncodeConsistencyToken(kTable, positions);
  for (char& c : token) {
    if (c >= 'a' && c <= 'f') c = static_cast<char>(c - 'a' + 'A');
  }
  ExpectRejected(DecodeConsistencyToken(token, kTable));
}

}  // namespace
}  // namespace btsim::replication
