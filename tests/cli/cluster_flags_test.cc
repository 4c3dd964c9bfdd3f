#include "cli/cluster_flags.h"

#include <gtest/gtest.h>

namespace btsim::cli {
namespace {

TEST(ParseClustersTest, ParsesIdsZonesAndOptionalNodeCounts) {
  auto parsed =
      ParseClusters("c1=us-east1-b,c2=us-east1-c:3,c3=europe-west1-d");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->size(), 3u);
  EXPECT_EQ((*parsed)[0].id, "c1");
  EXPECT_EQ((*parsed)[0].zone, "us-east1-b");
  EXPECT_EQ((*parsed)[0].nodes, 1);
  EXPECT_EQ((*parsed)[1].nodes, 3);
  EXPECT_EQ((*parsed)[2].zone, "europe-west1-d");
}

TEST(ParseClustersTest, RejectsMalformedItemsNamingTheFlag) {
  for (const char* bad : {"", "c1", "=us-east1-b", "c1=", "c1=z:", "c1=z:x",
                          "c1=z:12345", "c1=us-east1-b,"}) {
    auto parsed = ParseClusters(bad);
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(parsed.status().message().find("--clusters"), std::string::npos);
  }
}

}  // namespace
}  // namespace btsim::cli
