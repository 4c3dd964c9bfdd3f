// Tests of table management through Cluster: creating, listing and deleting
// tables, their limits, and dropped families.
#include "cluster/cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cluster/limits.h"
#include "tests/cluster/engine_test_util.h"

namespace btsim::cluster {
namespace {

using test_util::C;
using test_util::CreateFamily;
using test_util::DropFamily;
using test_util::kStartMicros;
using test_util::Set;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ClusterTest = test_util::ClusterTest;

// ================================================================ Tables

TEST_F(ClusterTest, CreateTableValidatesTheId) {
  for (const std::string& id :
       {std::string(""), std::string("-a"), std::string(".a"),
        std::string("a b"), std::string("a/b"), std::string("é"),
        std::string(51, 'a')}) {
    Status s = CreateTable(id, {});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << id;
    EXPECT_THAT(s.message(), HasSubstr("table_id"));
  }
  for (const std::string& id : {std::string("_a"), std::string("a-b.c_D9"),
                                std::string("0"), std::string(50, 'a')}) {
    EXPECT_TRUE(CreateTable(id, {}).ok()) << id;
  }
}

TEST_F(ClusterTest, CreateTableValidatesFamilies) {
  Status s = CreateTable("x", {CreateFamily("ok"), CreateFamily("b@d")}, {});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("b@d"));
  s = CreateTable("x", {CreateFamily("dup"), CreateFamily("dup")});
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists);
  s = CreateTable("x", {CreateFamily("f", GcRule::MaxVersions(0))}, {});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("max_num_versions"));
  EXPECT_THAT(cluster_.ListTables(), ElementsAre("t"));
}

TEST_F(ClusterTest, CreateTableRejectsOversizedSplitKeys) {
  Status s = CreateTable("x", {}, {"a", std::string(kMaxRowKeyBytes + 1, 'k')});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("initial_splits[1]"));
  EXPECT_FALSE(cluster_.GetTable("x").ok());
}

TEST_F(ClusterTest, CreateTableTwiceIsAlreadyExists) {
  Put("r", "cf", "q", 1000, "v");
  Status s = CreateTable("t", {});
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", 1000, "v")));
}

TEST_F(ClusterTest, ListTablesIsSorted) {
  for (const char* id : {"zeta", "Alpha", "beta", "_x", "9"}) {
    ASSERT_TRUE(CreateTable(id, {}).ok());
  }
  EXPECT_THAT(cluster_.ListTables(),
              ElementsAre("9", "Alpha", "_x", "beta", "t", "zeta"));
}

TEST_F(ClusterTest, DeleteTable) {
  Put("r", "cf", "q", 1000, "v");
  EXPECT_EQ(cluster_.DeleteTable("missing").code(), StatusCode::kNotFound);
  ASSERT_TRUE(cluster_.DeleteTable("t").ok());
  EXPECT_EQ(cluster_.GetTable("t").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(cluster_.DeleteTable("t").code(), StatusCode::kNotFound);
  EXPECT_THAT(cluster_.ListTables(), IsEmpty());
  ASSERT_TRUE(CreateTable("t", {CreateFamily("cf")}).ok());
  EXPECT_THAT(Read(), IsEmpty());
}

TEST_F(ClusterTest, AnInstanceHoldsAtMost1000Tables) {
  for (int i = 1; i < kMaxTablesPerInstance; ++i) {
    ASSERT_TRUE(CreateTable("t" + std::to_string(i), {}).ok()) << i;
  }
  Status s = CreateTable("one_too_many", {});
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("1000"));
  ASSERT_TRUE(cluster_.DeleteTable("t1").ok());
  EXPECT_TRUE(CreateTable("one_too_many", {}).ok());
}

TEST_F(ClusterTest, TransactionsIgnoreDataOfADroppedFamily) {
  Put("r", "cf", "q", 1000, "old");
  const std::vector<FamilyModification> recreate = {DropFamily("cf"),
                                                    CreateFamily("cf")};
  ASSERT_TRUE(table().ModifyColumnFamilies(recreate).ok());
  const std::vector<Mutation> if_false = {Set("cf2", "seen", 1000, "empty")};
  Result<bool> matched =
      cluster_.CheckAndMutateRow("t", "r", nullptr, {}, if_false);
  ASSERT_TRUE(matched.ok());
  EXPECT_FALSE(*matched);
  const std::vector<ReadModifyWriteRule> rules = {
      {"cf", "q", ReadModifyWriteRule::Kind::kAppend, "+new", 0}};
  auto r = cluster_.ReadModifyWriteRow("t", "r", rules);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].value, "+new");
  EXPECT_EQ(Micros((*r)[0].timestamp), kStartMicros);
}

TEST_F(ClusterTest, TablesAreIndependent) {
  ASSERT_TRUE(CreateTable("u", {CreateFamily("cf")}).ok());
  Put("r", "cf", "q", 1000, "in t");
  Put("r", "cf", "q", 1000, "in u", "u");
  ASSERT_TRUE(cluster_.DropRowRange("t", "").ok());
  EXPECT_THAT(Read(), IsEmpty());
  EXPECT_THAT(ReadRow("r", "u"), ElementsAre(C("cf", "q", 1000, "in u")));
  const Cluster& const_cluster = cluster_;
  ASSERT_TRUE(const_cluster.GetTable("u").ok());
  EXPECT_EQ((*const_cluster.GetTable("u"))->id(), "u");
}

}  // namespace
}  // namespace btsim::cluster
