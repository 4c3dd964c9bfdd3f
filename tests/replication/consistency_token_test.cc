#include "replication/consistency_token.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace btsim::replication {
namespace {

using ::testing::HasSubstr;

constexpr char kTable[] = "projects/p/instances/i/tables/t";

void ExpectRejected(const Result<LogPositions>& r) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("consistency_token"));
}

TEST(ConsistencyTokenTest, RoundTripsPositions) {
  const LogPositions positions = {
      {"c1", 0}, {"c2", 1}, {"europe-c3", 42}, {"z9", UINT64_MAX}};
  const std::string token = EncodeConsistencyToken(kTable, positions);
  Result<LogPositions> decoded = DecodeConsistencyToken(token, kTable);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, positions);
}

TEST(ConsistencyTokenTest, RoundTripsSingleCluster) {
  const LogPositions positions = {{"i-c1", 123456789}};
  Result<LogPositions> decoded =
      DecodeConsistencyToken(EncodeConsistencyToken(kTable, positions), kTable);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, positions);
}

TEST(ConsistencyTokenTest, IsDeterministicAndDependsOnInputs) {
  const LogPositions a = {{"c1", 1}, {"c2", 2}};
  const LogPositions b = {{"c1", 1}, {"c2", 3}};
  EXPECT_EQ(EncodeConsistencyToken(kTable, a),
            EncodeConsistencyToken(kTable, a));
  EXPECT_NE(EncodeConsistencyToken(kTable, a),
            EncodeConsistencyToken(kTable, b));
  EXPECT_NE(EncodeConsistencyToken(kTable, a),
            EncodeConsistencyToken("projects/p/instances/i/tables/u", a));
}

TEST(ConsistencyTokenTest, RejectsMalformedStrings) {
  for (const char* bad :
       {"", "garbage", "btsim2", "btsim2.", "btsim2..", "btsim1.0.0.0",
        "btsim2.zz.c1=00.00", ".......", "btsim2.0000000000000000.x.y",
        "btsim2.0000000000000000.C1=1.0000000000000000"}) {
    SCOPED_TRACE(bad);
    ExpectRejected(DecodeConsistencyToken(bad, kTable));
  }
}

TEST(ConsistencyTokenTest, RejectsTokenForAnotherTable) {
  const LogPositions positions = {{"c1", 5}, {"c2", 6}};
  const std::string token = EncodeConsistencyToken(kTable, positions);
  Result<LogPositions> r =
      DecodeConsistencyToken(token, "projects/p/instances/i/tables/other");
  ExpectRejected(r);
  EXPECT_THAT(r.status().message(), HasSubstr("different table"));
}

TEST(ConsistencyTokenTest, RejectsEveryTamperedDigit) {
  const LogPositions positions = {{"c1", 7}, {"c2", 8}, {"c3", 9}};
  const std::string token = EncodeConsistencyToken(kTable, positions);
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '.' || token[i] == '=') continue;
    std::string tampered = token;
    tampered[i] = tampered[i] == '0' ? '1' : '0';
    SCOPED_TRACE(tampered);
    ExpectRejected(DecodeConsistencyToken(tampered, kTable));
  }
}

TEST(ConsistencyTokenTest, RejectsTruncatedOrExtendedToken) {
  const LogPositions positions = {{"c1", 7}, {"c2", 8}};
  const std::string token = EncodeConsistencyToken(kTable, positions);
  ExpectRejected(
      DecodeConsistencyToken(token.substr(0, token.size() - 1), kTable));
  ExpectRejected(DecodeConsistencyToken(token + "0", kTable));
  ExpectRejected(DecodeConsistencyToken(token + ".0", kTable));
  ExpectRejected(DecodeConsistencyToken(" " + token, kTable));
}

TEST(ConsistencyTokenTest, RejectsUpperCaseHex) {
  const LogPositions positions = {{"c1", 0xabcdef}};
  std::string token = EncodeConsistencyToken(kTable, positions);
  for (char& c : token) {
    if (c >= 'a' && c <= 'f') c = static_cast<char>(c - 'a' + 'A');
  }
  ExpectRejected(DecodeConsistencyToken(token, kTable));
}

}  // namespace
}  // namespace btsim::replication
