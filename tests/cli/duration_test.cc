#include "cli/duration.h"

#include <gtest/gtest.h>

namespace btsim::cli {
namespace {

using std::chrono::milliseconds;

TEST(ParseDurationTest, AcceptsEveryUnit) {
  EXPECT_EQ(*ParseDuration("250ms"), milliseconds(250));
  EXPECT_EQ(*ParseDuration("5s"), milliseconds(5000));
  EXPECT_EQ(*ParseDuration("2m"), milliseconds(120'000));
  EXPECT_EQ(*ParseDuration("1h"), milliseconds(3'600'000));
  EXPECT_EQ(*ParseDuration("0"), milliseconds(0));
}

TEST(ParseDurationTest, RejectsMalformedText) {
  for (const char* bad : {"", "s", "5", "5x", "-5s", "1.5s", "5 s", "ms"}) {
    EXPECT_EQ(ParseDuration(bad).status().code(), StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(ParseDurationTest, RejectsDurationsAboveTheMaximum) {
  EXPECT_TRUE(ParseDuration("24h").ok());
  EXPECT_EQ(ParseDuration("25h").status().code(), StatusCode::kInvalidArgument);
  // Would overflow if multiplied without a bound.
  EXPECT_EQ(ParseDuration("999999999999h").status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace btsim::cli
