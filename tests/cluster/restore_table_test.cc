// Table::Snapshot and Cluster::RestoreTable: a backup's copy of a table and
// a table made from it, independent of later changes to either.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "cluster/cluster.h"
#include "tests/cluster/engine_test_util.h"

namespace btsim::cluster {
namespace {

using test_util::C;
using test_util::DropFamily;
using test_util::Keys;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ClusterTest = test_util::ClusterTest;

TEST_F(ClusterTest, ASnapshotKeepsTheTableAsItWas) {
  Put("a", "cf", "q", 1000, "old");
  Put("b", "cf2", "q", 1000, "b");
  auto snapshot = (*cluster_.GetTable("t"))->Snapshot("t");
  Put("a", "cf", "q", 1000, "new");  // replaces the stored row
  ASSERT_TRUE(Mutate("b", {test_util::DelRow()}).ok());
  ASSERT_TRUE(
      cluster_.ModifyColumnFamilies("t", std::vector{DropFamily("cf2")}).ok());

  auto version = cluster_.RestoreTable("r", *snapshot);
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_EQ(*version, cluster_.last_version());
  EXPECT_EQ((*cluster_.GetTable("r"))->created_version(), *version);
  EXPECT_THAT(cluster_.ListTables(), ElementsAre("r", "t"));
  const auto rows = Read({}, "r");
  EXPECT_THAT(Keys(rows), ElementsAre("a", "b"));
  EXPECT_THAT(rows[0].cells, ElementsAre(C("cf", "q", 1000, "old")));
  ASSERT_EQ((*cluster_.GetTable("r"))->Families().size(), 2u);
  EXPECT_THAT(Keys(Read()), ElementsAre("a"));

  // Writes to the restored table leave the snapshot as it was.
  Put("c", "cf2", "q", 1000, "c", "r");
  ASSERT_TRUE(cluster_.RestoreTable("r2", *snapshot).ok());
  EXPECT_THAT(Keys(Read({}, "r2")), ElementsAre("a", "b"));
}

TEST_F(ClusterTest, RestoreTableRefusesTakenAndBadIds) {
  auto snapshot = (*cluster_.GetTable("t"))->Snapshot("t");
  EXPECT_EQ(cluster_.RestoreTable("t", *snapshot).status().code(),
            StatusCode::kAlreadyExists);
  Status s = cluster_.RestoreTable("bad id", *snapshot).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("table_id"));
  // At a version given by the instance, which the commit clock passes.
  const Version at = cluster_.last_version() + 1'000'000;
  ASSERT_TRUE(cluster_.RestoreTable("r", *snapshot, at).ok());
  EXPECT_EQ((*cluster_.GetTable("r"))->created_version(), at);
  Put("x", "cf", "q", 1000, "x");
  EXPECT_GT(cluster_.last_version(), at);
}

TEST(BackupIdTest, FollowsTheTableIdRule) {
  EXPECT_TRUE(ValidateBackupId("nightly-2026.01_a").ok());
  Status s = ValidateBackupId(std::string(51, 'a'));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("backup_id"));
  EXPECT_THAT(s.message(), HasSubstr("backup id"));
  EXPECT_FALSE(ValidateBackupId("-a", "backup").ok());
}

}  // namespace
}  // namespace btsim::cluster
