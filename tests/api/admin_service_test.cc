// google.bigtable.admin.v2.BigtableTableAdmin through the generated stub
// against a real server.
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "tests/api/api_test_util.h"

namespace btsim::api_test {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class AdminServiceTest : public ServerTest {
 protected:
  grpc::Status Get(const std::string& name, admin::Table::View view,
                   admin::Table* out) {
    admin::GetTableRequest request;
    request.set_name(name);
    request.set_view(view);
    grpc::ClientContext context;
    return admin_->GetTable(&context, request, out);
  }

  grpc::Status List(const admin::ListTablesRequest& request,
                    admin::ListTablesResponse* out) {
    grpc::ClientContext context;
    return admin_->ListTables(&context, request, out);
  }

  grpc::Status Delete(const std::string& id) {
    admin::DeleteTableRequest request;
    request.set_name(TableName(id));
    grpc::ClientContext context;
    google::protobuf::Empty empty;
    return admin_->DeleteTable(&context, request, &empty);
  }

  grpc::Status Modify(const admin::ModifyColumnFamiliesRequest& request,
                      admin::Table* out = nullptr) {
    grpc::ClientContext context;
    admin::Table table;
    grpc::Status s = admin_->ModifyColumnFamilies(&context, request, &table);
    if (out != nullptr) *out = table;
    return s;
  }

  grpc::Status Drop(const admin::DropRowRangeRequest& request) {
    grpc::ClientContext context;
    google::protobuf::Empty empty;
    return admin_->DropRowRange(&context, request, &empty);
  }

  grpc::Status Token(const std::string& name, std::string* token) {
    admin::GenerateConsistencyTokenRequest request;
    request.set_name(name);
    grpc::ClientContext context;
    admin::GenerateConsistencyTokenResponse response;
    grpc::Status s =
        admin_->GenerateConsistencyToken(&context, request, &response);
    *token = response.consistency_token();
    return s;
  }

  grpc::Status Check(const std::string& name, const std::string& token,
                     bool* consistent) {
    admin::CheckConsistencyRequest request;
    request.set_name(name);
    request.set_consistency_token(token);
    grpc::ClientContext context;
    admin::CheckConsistencyResponse response;
    grpc::Status s = admin_->CheckConsistency(&context, request, &response);
    *consistent = response.consistent();
    return s;
  }

  // Family names in a table's schema.
  std::vector<std::string> FamilyNames(const std::string& id) {
    admin::Table t;
    grpc::Status s = Get(TableName(id), admin::Table::SCHEMA_VIEW, &t);
    EXPECT_TRUE(s.ok()) << s.error_message();
    std::set<std::string> names;
    for (const auto& [name, unused] : t.column_families()) names.insert(name);
    return {names.begin(), names.end()};
  }

  static admin::ModifyColumnFamiliesRequest::Modification* AddCreate(
      admin::ModifyColumnFamiliesRequest* r, const std::string& id) {
    auto* m = r->add_modifications();
    m->set_id(id);
    m->mutable_create();
    return m;
  }
  static admin::ModifyColumnFamiliesRequest::Modification* AddDrop(
      admin::ModifyColumnFamiliesRequest* r, const std::string& id) {
    auto* m = r->add_modifications();
    m->set_id(id);
    m->set_drop(true);
    return m;
  }
};

admin::GcRule MaxVersions(int n) {
  admin::GcRule r;
  r.set_max_num_versions(n);
  return r;
}

admin::GcRule MaxAgeSeconds(int64_t s) {
  admin::GcRule r;
  r.mutable_max_age()->set_seconds(s);
  return r;
}

// ============================================================= CreateTable

TEST_F(AdminServiceTest, CreateTableReturnsTheSchemaWithGcRules) {
  admin::CreateTableRequest request;
  request.set_parent(kInstance);
  request.set_table_id("t");
  auto& families = *request.mutable_table()->mutable_column_families();
  families["plain"];
  *families["versions"].mutable_gc_rule() = MaxVersions(3);
  *families["age"].mutable_gc_rule() = MaxAgeSeconds(86400);
  admin::GcRule u;
  *u.mutable_union_()->add_rules() = MaxVersions(2);
  *u.mutable_union_()->add_rules() = MaxAgeSeconds(7 * 86400);
  *families["union"].mutable_gc_rule() = u;
  admin::GcRule in;
  *in.mutable_intersection()->add_rules() = MaxVersions(5);
  *in.mutable_intersection()->add_rules() = MaxAgeSeconds(3600);
  *families["inter"].mutable_gc_rule() = in;
  admin::Table table;
  ASSERT_GRPC_OK(TryCreateTable(request, &table));
  EXPECT_EQ(table.name(), TableName("t"));
  EXPECT_EQ(table.granularity(), admin::Table::MILLIS);
  ASSERT_EQ(table.column_families_size(), 5);
  EXPECT_EQ(table.column_families().at("plain").gc_rule().rule_case(),
            admin::GcRule::RULE_NOT_SET);
  EXPECT_TRUE(MessageDifferencer::Equals(
      table.column_families().at("versions").gc_rule(), MaxVersions(3)));
  EXPECT_EQ(table.column_families().at("age").gc_rule().max_age().seconds(),
            86400);
  EXPECT_TRUE(MessageDifferencer::Equals(
      table.column_families().at("union").gc_rule(), u));
  EXPECT_TRUE(MessageDifferencer::Equals(
      table.column_families().at("inter").gc_rule(), in));
  // GetTable shows the same schema.
  admin::Table got;
  ASSERT_GRPC_OK(Get(TableName("t"), admin::Table::SCHEMA_VIEW, &got));
  EXPECT_EQ(got.column_families_size(), 5);
  EXPECT_TRUE(MessageDifferencer::Equals(
      got.column_families().at("union").gc_rule(), u));
}

TEST_F(AdminServiceTest, InitialSplitsShowInSampleRowKeys) {
  CreateTable("t", {"cf"}, {"m", "d", "t", "d"});
  for (const char* k : {"a", "e", "f", "n", "u", "z"}) {
    Set("t", k, "cf", "q", std::string(100, 'x'));
  }
  auto samples = SampleRowKeys("t");
  ASSERT_GE(samples.size(), 4u);
  std::vector<std::string> keys;
  for (const auto& s : samples) keys.push_back(s.row_key());
  EXPECT_EQ(keys.back(), "");
  for (const char* split : {"d", "m", "t"}) {
    EXPECT_THAT(keys, testing::Contains(split));
  }
  for (size_t i = 1; i < samples.size(); ++i) {
    EXPECT_GE(samples[i].offset_bytes(), samples[i - 1].offset_bytes());
    if (i + 1 < samples.size()) {
      EXPECT_LT(samples[i - 1].row_key(), samples[i].row_key());
    }
  }
  EXPECT_GT(samples.back().offset_bytes(), 0);
  // All the data is still readable across the tablets.
  EXPECT_EQ(ReadTable("t").size(), 6u);
}

TEST_F(AdminServiceTest, SampleRowKeysOfAnEmptyTable) {
  CreateTable("t");
  auto samples = SampleRowKeys("t");
  ASSERT_GE(samples.size(), 1u);
  EXPECT_EQ(samples.back().row_key(), "");
}

TEST_F(AdminServiceTest, CreateTableTwiceIsAlreadyExists) {
  CreateTable("t");
  admin::CreateTableRequest request;
  request.set_parent(kInstance);
  request.set_table_id("t");
  EXPECT_GRPC_CODE(TryCreateTable(request), grpc::StatusCode::ALREADY_EXISTS);
  // The same id in another instance is a different table.
  request.set_parent("projects/p/instances/other");
  EXPECT_GRPC_OK(TryCreateTable(request));
}

TEST_F(AdminServiceTest, BadTableIdsAreInvalidArgument) {
  for (const std::string& id :
       {std::string(""), std::string("-starts-with-dash"), std::string("a b"),
        std::string("a/b"), std::string(".dot"), std::string("ü"),
        std::string(51, 'x')}) {
    admin::CreateTableRequest request;
    request.set_parent(kInstance);
    request.set_table_id(id);
    grpc::Status s = TryCreateTable(request);
    EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("table_id")) << id;
  }
  for (const std::string& id :
       {std::string(50, 'x'), std::string("_ok-1.2"), std::string("9lives")}) {
    admin::CreateTableRequest request;
    request.set_parent(kInstance);
    request.set_table_id(id);
    EXPECT_GRPC_OK(TryCreateTable(request));
  }
}

TEST_F(AdminServiceTest, BadParentIsInvalidArgumentNamingParent) {
  for (const char* parent :
       {"", "projects/p", "projects/p/instances/", "projects//instances/i",
        "projects/p/instances/i/", "projects/p/instances/i/tables/t",
        "project/p/instances/i", "projects/../instances/i",
        "projects/p/instances/..", "projects/p/instances/-",
        "projects/p q/instances/i", "projects/p/instances/a\nb"}) {
    admin::CreateTableRequest request;
    request.set_parent(parent);
    request.set_table_id("t");
    grpc::Status s = TryCreateTable(request);
    EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), StartsWith("parent")) << parent;

    admin::ListTablesRequest list;
    list.set_parent(parent);
    admin::ListTablesResponse response;
    s = List(list, &response);
    EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), StartsWith("parent")) << parent;
  }
}

TEST_F(AdminServiceTest, BadSchemaIsInvalidArgument) {
  admin::CreateTableRequest request;
  request.set_parent(kInstance);
  request.set_table_id("t");
  (*request.mutable_table()->mutable_column_families())["bad name"];
  grpc::Status s = TryCreateTable(request);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("column_families"));

  request.mutable_table()->clear_column_families();
  *(*request.mutable_table()->mutable_column_families())["cf"]
       .mutable_gc_rule() = MaxVersions(0);
  s = TryCreateTable(request);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("gc_rule"));

  request.mutable_table()->clear_column_families();
  request.mutable_table()->set_granularity(admin::Table::MICROS);
  s = TryCreateTable(request);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("granularity"));

  request.mutable_table()->clear_granularity();
  request.add_initial_splits()->set_key(std::string(4097, 'k'));
  s = TryCreateTable(request);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("initial_splits[0]"));

  // Nothing was created by the failed calls.
  admin::Table t;
  EXPECT_GRPC_CODE(Get(TableName("t"), admin::Table::NAME_ONLY, &t),
                   grpc::StatusCode::NOT_FOUND);
}

TEST_F(AdminServiceTest, DeeplyNestedGcRuleIsInvalidArgument) {
  for (int depth : {20, 60, 200}) {
    admin::CreateTableRequest request;
    request.set_parent(kInstance);
    request.set_table_id("t" + std::to_string(depth));
    admin::GcRule* rule =
        (*request.mutable_table()->mutable_column_families())["cf"]
            .mutable_gc_rule();
    for (int i = 0; i < depth; ++i) {
      rule = rule->mutable_union_()->add_rules();
    }
    *rule = MaxVersions(1);
    grpc::Status s = TryCreateTable(request);
    if (depth == 20) {
      EXPECT_GRPC_OK(s);
      continue;
    }
    SCOPED_TRACE(depth);
    EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("gc_rule")) << depth;
  }
}

// ================================================================ GetTable

TEST_F(AdminServiceTest, GetTableViews) {
  CreateTable("t", {"a", "b"});
  admin::Table t;
  ASSERT_GRPC_OK(Get(TableName("t"), admin::Table::NAME_ONLY, &t));
  EXPECT_EQ(t.name(), TableName("t"));
  EXPECT_EQ(t.column_families_size(), 0);
  EXPECT_EQ(t.cluster_states_size(), 0);

  t.Clear();
  ASSERT_GRPC_OK(Get(TableName("t"), admin::Table::VIEW_UNSPECIFIED, &t));
  EXPECT_EQ(t.name(), TableName("t"));
  EXPECT_EQ(t.column_families_size(), 2);
  EXPECT_EQ(t.cluster_states_size(), 0);
  EXPECT_EQ(t.granularity(), admin::Table::MILLIS);

  admin::Table schema;
  ASSERT_GRPC_OK(Get(TableName("t"), admin::Table::SCHEMA_VIEW, &schema));
  EXPECT_TRUE(MessageDifferencer::Equals(schema, t));

  t.Clear();
  ASSERT_GRPC_OK(Get(TableName("t"), admin::Table::REPLICATION_VIEW, &t));
  EXPECT_EQ(t.column_families_size(), 0);
  ASSERT_EQ(t.cluster_states_size(), 1);
  EXPECT_EQ(t.cluster_states().begin()->first, "i-c1");
  EXPECT_EQ(t.cluster_states().begin()->second.replication_state(),
            admin::Table::ClusterState::READY);

  t.Clear();
  ASSERT_GRPC_OK(Get(TableName("t"), admin::Table::FULL, &t));
  EXPECT_EQ(t.name(), TableName("t"));
  EXPECT_EQ(t.column_families_size(), 2);
  EXPECT_EQ(t.cluster_states_size(), 1);
  EXPECT_EQ(t.granularity(), admin::Table::MILLIS);
}

TEST_F(AdminServiceTest, GetTableErrors) {
  CreateTable("t");
  admin::Table t;
  EXPECT_GRPC_CODE(Get(TableName("absent"), admin::Table::SCHEMA_VIEW, &t),
                   grpc::StatusCode::NOT_FOUND);
  grpc::Status s = Get("projects/p/instances/i/tables", admin::Table::FULL, &t);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), StartsWith("name"));
  s = Get(TableName("t"), static_cast<admin::Table::View>(99), &t);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("view"));
}

// ============================================================== ListTables

TEST_F(AdminServiceTest, ListTablesPages) {
  for (const char* id : {"e", "a", "c", "b", "d"}) CreateTable(id);
  CreateTable("x");
  ASSERT_GRPC_OK(Delete("x"));
  admin::ListTablesRequest request;
  request.set_parent(kInstance);
  request.set_page_size(2);
  std::vector<std::string> names;
  int pages = 0;
  while (true) {
    admin::ListTablesResponse response;
    ASSERT_GRPC_OK(List(request, &response));
    ++pages;
    EXPECT_LE(response.tables_size(), 2);
    for (const auto& t : response.tables()) {
      names.push_back(t.name());
      // The default view is NAME_ONLY.
      EXPECT_EQ(t.column_families_size(), 0);
    }
    if (response.next_page_token().empty()) break;
    request.set_page_token(response.next_page_token());
    ASSERT_LT(pages, 10);
  }
  EXPECT_EQ(pages, 3);
  EXPECT_THAT(names, ElementsAre(TableName("a"), TableName("b"), TableName("c"),
                                 TableName("d"), TableName("e")));
}

TEST_F(AdminServiceTest, ListTablesRejectsForeignPageToken) {
  CreateTable("a");
  admin::ListTablesRequest request;
  request.set_parent(kInstance);
  request.set_page_token("a");
  admin::ListTablesResponse response;
  grpc::Status status = List(request, &response);
  EXPECT_GRPC_CODE(status, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("page_token"));
}

TEST_F(AdminServiceTest, ListTablesWithoutPageSizeAndWithViews) {
  CreateTable("t1", {"cf"});
  CreateTable("t2", {"cf"});
  admin::ListTablesRequest request;
  request.set_parent(kInstance);
  admin::ListTablesResponse response;
  ASSERT_GRPC_OK(List(request, &response));
  EXPECT_EQ(response.tables_size(), 2);
  EXPECT_TRUE(response.next_page_token().empty());
  // An exact last page has no token.
  request.set_page_size(2);
  response.Clear();
  ASSERT_GRPC_OK(List(request, &response));
  EXPECT_EQ(response.tables_size(), 2);
  EXPECT_TRUE(response.next_page_token().empty());
  request.set_page_size(0);
  request.set_view(admin::Table::SCHEMA_VIEW);
  response.Clear();
  ASSERT_GRPC_OK(List(request, &response));
  ASSERT_EQ(response.tables_size(), 2);
  EXPECT_EQ(response.tables(0).column_families_size(), 1);
  // Other instances are separate.
  request.set_parent("projects/p/instances/empty");
  response.Clear();
  ASSERT_GRPC_OK(List(request, &response));
  EXPECT_EQ(response.tables_size(), 0);
  // Negative page sizes are refused.
  request.set_parent(kInstance);
  request.set_page_size(-1);
  grpc::Status s = List(request, &response);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("page_size"));
}

// ============================================================= DeleteTable

TEST_F(AdminServiceTest, DeleteTableThenNotFound) {
  CreateTable("t");
  Set("t", "r", "cf", "q", "v");
  ASSERT_GRPC_OK(Delete("t"));
  admin::Table t;
  EXPECT_GRPC_CODE(Get(TableName("t"), admin::Table::SCHEMA_VIEW, &t),
                   grpc::StatusCode::NOT_FOUND);
  EXPECT_GRPC_CODE(Delete("t"), grpc::StatusCode::NOT_FOUND);
  EXPECT_GRPC_CODE(Mutate("t", "r", {SetCellMutation("cf", "q", "v")}),
                   grpc::StatusCode::NOT_FOUND);
  v2::ReadRowsRequest read;
  read.set_table_name(TableName("t"));
  EXPECT_GRPC_CODE(ReadRowsRaw(*data_, read).status,
                   grpc::StatusCode::NOT_FOUND);
  // Re-creating the table starts empty.
  CreateTable("t");
  EXPECT_TRUE(ReadTable("t").empty());
}

TEST_F(AdminServiceTest, DeleteTableBadName) {
  admin::DeleteTableRequest request;
  request.set_name("t");
  grpc::ClientContext context;
  google::protobuf::Empty empty;
  grpc::Status s = admin_->DeleteTable(&context, request, &empty);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), StartsWith("name"));
}

// ==================================================== ModifyColumnFamilies

TEST_F(AdminServiceTest, ModifyCreatesUpdatesAndDrops) {
  CreateTable("t", {"cf", "gone"});
  Set("t", "r", "gone", "q", "v");
  Set("t", "r", "cf", "q", "v");
  admin::ModifyColumnFamiliesRequest request;
  request.set_name(TableName("t"));
  *AddCreate(&request, "new")->mutable_create()->mutable_gc_rule() =
      MaxVersions(2);
  auto* update = request.add_modifications();
  update->set_id("cf");
  *update->mutable_update()->mutable_gc_rule() = MaxAgeSeconds(60);
  AddDrop(&request, "gone");
  admin::Table table;
  ASSERT_GRPC_OK(Modify(request, &table));
  EXPECT_EQ(table.name(), TableName("t"));
  ASSERT_EQ(table.column_families_size(), 2);
  EXPECT_EQ(table.column_families().at("new").gc_rule().max_num_versions(), 2);
  EXPECT_EQ(table.column_families().at("cf").gc_rule().max_age().seconds(), 60);
  EXPECT_THAT(FamilyNames("t"), ElementsAre("cf", "new"));
  // The dropped family's data is gone, even if the family comes back.
  auto row = ReadRow("t", "r");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->Family("gone"), nullptr);
  request.Clear();
  request.set_name(TableName("t"));
  AddCreate(&request, "gone");
  ASSERT_GRPC_OK(Modify(request));
  row = ReadRow("t", "r");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->Family("gone"), nullptr);
  EXPECT_EQ(row->Latest("cf", "q"), "v");
}

TEST_F(AdminServiceTest, UpdateHonoursTheMask) {
  CreateTable("t");
  admin::ModifyColumnFamiliesRequest request;
  request.set_name(TableName("t"));
  auto* m = request.add_modifications();
  m->set_id("cf");
  *m->mutable_update()->mutable_gc_rule() = MaxVersions(4);
  m->mutable_update_mask()->add_paths("gc_rule");
  admin::Table table;
  ASSERT_GRPC_OK(Modify(request, &table));
  EXPECT_EQ(table.column_families().at("cf").gc_rule().max_num_versions(), 4);
  // A path btsim cannot update is refused, naming the mask.
  m->mutable_update_mask()->add_paths("value_type");
  grpc::Status s = Modify(request);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("update_mask"));
  EXPECT_THAT(s.error_message(), HasSubstr("value_type"));
  // An empty update with an empty mask clears the rule.
  m->clear_update_mask();
  m->mutable_update()->clear_gc_rule();
  ASSERT_GRPC_OK(Modify(request, &table));
  EXPECT_EQ(table.column_families().at("cf").gc_rule().rule_case(),
            admin::GcRule::RULE_NOT_SET);
}

TEST_F(AdminServiceTest, ModifyIsAtomic) {
  CreateTable("t", {"cf", "keep"});
  admin::Table before;
  ASSERT_GRPC_OK(Get(TableName("t"), admin::Table::SCHEMA_VIEW, &before));
  // A later modification fails: the earlier ones must not apply.
  admin::ModifyColumnFamiliesRequest request;
  request.set_name(TableName("t"));
  AddCreate(&request, "new");
  AddDrop(&request, "keep");
  AddDrop(&request, "missing");
  grpc::Status s = Modify(request);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("modifications[2]"));
  admin::Table after;
  ASSERT_GRPC_OK(Get(TableName("t"), admin::Table::SCHEMA_VIEW, &after));
  EXPECT_TRUE(MessageDifferencer::Equals(after, before))
      << after.DebugString() << "\nvs\n"
      << before.DebugString();

  request.Clear();
  request.set_name(TableName("t"));
  AddCreate(&request, "new");
  AddCreate(&request, "cf");
  s = Modify(request);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_THAT(FamilyNames("t"), ElementsAre("cf", "keep"));

  // Creating then dropping the same family in one call is fine.
  request.Clear();
  request.set_name(TableName("t"));
  AddCreate(&request, "tmp");
  AddDrop(&request, "tmp");
  EXPECT_GRPC_OK(Modify(request));
  EXPECT_THAT(FamilyNames("t"), ElementsAre("cf", "keep"));
}

TEST_F(AdminServiceTest, ModifyErrorCodes) {
  CreateTable("t");
  admin::ModifyColumnFamiliesRequest request;
  request.set_name(TableName("t"));
  auto* m = request.add_modifications();
  m->set_id("missing");
  m->mutable_update()->mutable_gc_rule()->set_max_num_versions(1);
  EXPECT_GRPC_CODE(Modify(request), grpc::StatusCode::NOT_FOUND);
  m->set_drop(true);
  EXPECT_GRPC_CODE(Modify(request), grpc::StatusCode::NOT_FOUND);
  m->set_id("cf");
  m->mutable_create();
  EXPECT_GRPC_CODE(Modify(request), grpc::StatusCode::ALREADY_EXISTS);
  m->set_id("bad id");
  grpc::Status s = Modify(request);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("modifications[0].id"));
  m->set_id("ok");
  m->clear_mod();
  s = Modify(request);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("modifications[0]"));
  m->mutable_create()->mutable_gc_rule()->set_max_num_versions(-1);
  s = Modify(request);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("gc_rule"));
  request.clear_modifications();
  EXPECT_GRPC_CODE(Modify(request), grpc::StatusCode::INVALID_ARGUMENT);
  AddCreate(&request, "x");
  request.set_name(TableName("absent"));
  EXPECT_GRPC_CODE(Modify(request), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(FamilyNames("t"), ElementsAre("cf"));
}

// ============================================================ DropRowRange

TEST_F(AdminServiceTest, DropRowRangeByPrefix) {
  CreateTable("t", {"cf"}, {"b"});
  for (const char* k : {"a", "ab1", "ab2", "abc", "b", "ba", "c"}) {
    Set("t", k, "cf", "q", k);
  }
  admin::DropRowRangeRequest request;
  request.set_name(TableName("t"));
  request.set_row_key_prefix("ab");
  ASSERT_GRPC_OK(Drop(request));
  std::vector<std::string> keys;
  for (const MergedRow& r : ReadTable("t")) keys.push_back(r.key);
  EXPECT_THAT(keys, ElementsAre("a", "b", "ba", "c"));
  request.set_row_key_prefix("b");
  ASSERT_GRPC_OK(Drop(request));
  keys.clear();
  for (const MergedRow& r : ReadTable("t")) keys.push_back(r.key);
  EXPECT_THAT(keys, ElementsAre("a", "c"));
  // Writes after the drop are visible.
  Set("t", "abz", "cf", "q", "new");
  EXPECT_EQ(ReadTable("t").size(), 3u);
}

TEST_F(AdminServiceTest, DropAllRows) {
  CreateTable("t", {"cf"}, {"m"});
  for (const char* k : {"a", "m", "z"}) Set("t", k, "cf", "q", k);
  admin::DropRowRangeRequest request;
  request.set_name(TableName("t"));
  request.set_delete_all_data_from_table(true);
  ASSERT_GRPC_OK(Drop(request));
  EXPECT_TRUE(ReadTable("t").empty());
  // The schema survives.
  EXPECT_THAT(FamilyNames("t"), ElementsAre("cf"));
}

TEST_F(AdminServiceTest, DropRowRangeErrors) {
  CreateTable("t");
  Set("t", "r", "cf", "q", "v");
  admin::DropRowRangeRequest request;
  request.set_name(TableName("t"));
  request.set_row_key_prefix("");
  grpc::Status s = Drop(request);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("row_key_prefix"));
  request.clear_target();
  EXPECT_GRPC_CODE(Drop(request), grpc::StatusCode::INVALID_ARGUMENT);
  request.set_delete_all_data_from_table(false);
  EXPECT_GRPC_CODE(Drop(request), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(ReadTable("t").size(), 1u);
  request.set_name(TableName("absent"));
  request.set_delete_all_data_from_table(true);
  EXPECT_GRPC_CODE(Drop(request), grpc::StatusCode::NOT_FOUND);
}

// ===================================================== Consistency tokens

TEST_F(AdminServiceTest, ConsistencyTokenRoundTrip) {
  CreateTable("t");
  Set("t", "r", "cf", "q", "v");
  std::string token;
  ASSERT_GRPC_OK(Token(TableName("t"), &token));
  EXPECT_FALSE(token.empty());
  bool consistent = false;
  ASSERT_GRPC_OK(Check(TableName("t"), token, &consistent));
  EXPECT_TRUE(consistent);
  // Still consistent after more writes.
  Set("t", "r2", "cf", "q", "v");
  ASSERT_GRPC_OK(Check(TableName("t"), token, &consistent));
  EXPECT_TRUE(consistent);
}

TEST_F(AdminServiceTest, BadConsistencyTokensAreInvalidArgument) {
  CreateTable("t");
  CreateTable("u");
  std::string token;
  ASSERT_GRPC_OK(Token(TableName("u"), &token));
  bool consistent = true;
  for (const std::string& bad :
       {std::string(""), std::string("garbage"), token + "x",
        token.substr(0, token.size() / 2)}) {
    grpc::Status s = Check(TableName("t"), bad, &consistent);
    EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("consistency_token")) << bad;
  }
  // A token generated for another table.
  grpc::Status s = Check(TableName("t"), token, &consistent);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("consistency_token"));
  // The same table id in another instance is another table too.
  std::string other;
  admin::CreateTableRequest create;
  create.set_parent("projects/p/instances/j");
  create.set_table_id("t");
  ASSERT_GRPC_OK(TryCreateTable(create));
  ASSERT_GRPC_OK(Token("projects/p/instances/j/tables/t", &other));
  EXPECT_GRPC_CODE(Check(TableName("t"), other, &consistent),
                   grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(AdminServiceTest, ConsistencyCallsOnMissingTables) {
  std::string token;
  EXPECT_GRPC_CODE(Token(TableName("absent"), &token),
                   grpc::StatusCode::NOT_FOUND);
  bool consistent = false;
  EXPECT_GRPC_CODE(Check(TableName("absent"), "x", &consistent),
                   grpc::StatusCode::NOT_FOUND);
  grpc::Status s = Token("bad", &token);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), StartsWith("name"));
}

}  // namespace
}  // namespace btsim::api_test
