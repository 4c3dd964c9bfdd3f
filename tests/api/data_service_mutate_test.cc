// google.bigtable.v2.Bigtable MutateRow and MutateRows against a real server:
// mutation kinds, timestamps, validation and limits, and GC at compaction.
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/api/api_test_util.h"
#include "tests/api/chunk_merger.h"
#include "tests/api/data_service_test_util.h"

namespace btsim::api_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ================================================================ MutateRow

TEST_F(DataServiceTest, SetCellThenRead) {
  Set("t", "row", "cf", "col", "value", 5000);
  auto row = ReadRow("t", "row");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->Cells("cf", "col"),
            (std::vector<MergedCell>{{5000, "value", {}}}));
}

TEST_F(DataServiceTest, AllFourMutationKinds) {
  ASSERT_GRPC_OK(Mutate("t", "r",
                        {SetCellMutation("cf", "a", "a1", 1000),
                         SetCellMutation("cf", "a", "a2", 2000),
                         SetCellMutation("cf", "a", "a3", 3000),
                         SetCellMutation("cf", "b", "b1", 1000),
                         SetCellMutation("cf2", "c", "c1", 1000)}));
  // delete_from_column with a time range [2000, 3000) removes only a2.
  ASSERT_GRPC_OK(
      Mutate("t", "r", {DeleteFromColumnMutation("cf", "a", 2000, 3000)}));
  auto row = ReadRow("t", "r");
  ASSERT_TRUE(row.has_value());
  EXPECT_THAT(Timestamps(row->Cells("cf", "a")), ElementsAre(3000, 1000));
  // delete_from_column without a range removes the whole column.
  ASSERT_GRPC_OK(Mutate("t", "r", {DeleteFromColumnMutation("cf", "a")}));
  row = ReadRow("t", "r");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->Column("cf", "a"), nullptr);
  EXPECT_EQ(row->Latest("cf", "b"), "b1");
  // delete_from_family.
  ASSERT_GRPC_OK(Mutate("t", "r", {DeleteFromFamilyMutation("cf")}));
  row = ReadRow("t", "r");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->Family("cf"), nullptr);
  EXPECT_EQ(row->Latest("cf2", "c"), "c1");
  // delete_from_row.
  ASSERT_GRPC_OK(Mutate("t", "r", {DeleteFromRowMutation()}));
  EXPECT_FALSE(ReadRow("t", "r").has_value());
  // A write after the delete is visible again.
  Set("t", "r", "cf", "a", "again", 9000);
  row = ReadRow("t", "r");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->Latest("cf", "a"), "again");
}

TEST_F(DataServiceTest, ServerTimestampIsRecentAndMillisecondGranular) {
  const int64_t before = NowMicros();
  ASSERT_GRPC_OK(Mutate("t", "r", {SetCellMutation("cf", "q", "v", -1)}));
  const int64_t after = NowMicros();
  auto row = ReadRow("t", "r");
  ASSERT_TRUE(row.has_value());
  auto cells = row->Cells("cf", "q");
  ASSERT_EQ(cells.size(), 1u);
  const int64_t ts = cells[0].timestamp_micros;
  EXPECT_EQ(ts % 1000, 0) << ts;
  EXPECT_GE(ts, before - before % 1000 - 1000);
  EXPECT_LE(ts, after + 1000);
}

TEST_F(DataServiceTest, InvalidTimestampIsInvalidArgument) {
  for (int64_t ts : {int64_t{1234}, int64_t{-5}, int64_t{1001}}) {
    grpc::Status s = Mutate("t", "r", {SetCellMutation("cf", "q", "v", ts)});
    EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("timestamp_micros")) << ts;
  }
  EXPECT_FALSE(ReadRow("t", "r").has_value());
}

TEST_F(DataServiceTest, MissingFamilyIsNotFound) {
  grpc::Status s = Mutate("t", "r", {SetCellMutation("nope", "q", "v")});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("nope"));
  EXPECT_GRPC_CODE(Mutate("t", "r", {DeleteFromFamilyMutation("nope")}),
                   grpc::StatusCode::NOT_FOUND);
  EXPECT_GRPC_CODE(Mutate("t", "r", {DeleteFromColumnMutation("nope", "q")}),
                   grpc::StatusCode::NOT_FOUND);
}

TEST_F(DataServiceTest, EmptyFamilyIsInvalidArgument) {
  for (const v2::Mutation& m :
       {SetCellMutation("", "q", "v"), DeleteFromFamilyMutation(""),
        DeleteFromColumnMutation("", "q")}) {
    grpc::Status s = Mutate("t", "r", {m});
    EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("mutations[0]"));
    EXPECT_THAT(s.error_message(), HasSubstr("family name is empty"));
  }
  // A huge unknown family is NOT_FOUND, its name cut short in the message.
  grpc::Status s =
      Mutate("t", "r", {SetCellMutation(std::string(70'000, 'f'), "q", "v")});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("(70000 bytes)"));
  EXPECT_LT(s.error_message().size(), 1024u);
}

TEST_F(DataServiceTest, MissingTableIsNotFound) {
  EXPECT_GRPC_CODE(Mutate("absent", "r", {SetCellMutation("cf", "q", "v")}),
                   grpc::StatusCode::NOT_FOUND);
  ReadOutcome read = ReadRowsRaw(*data_, Request("absent"));
  EXPECT_GRPC_CODE(read.status, grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(read.rows.empty());
  grpc::Status s;
  SampleRowKeys("absent", &s);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::NOT_FOUND);
}

TEST_F(DataServiceTest, BadTableNameIsInvalidArgumentNamingTheField) {
  v2::MutateRowRequest request;
  request.set_table_name("projects/p/instances/i/t");
  request.set_row_key("r");
  *request.add_mutations() = SetCellMutation("cf", "q", "v");
  grpc::ClientContext context;
  v2::MutateRowResponse response;
  grpc::Status s = data_->MutateRow(&context, request, &response);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("table_name"));

  v2::ReadRowsRequest read;
  read.set_table_name("tables/t");
  ReadOutcome out = ReadRowsRaw(*data_, read);
  EXPECT_GRPC_CODE(out.status, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(out.status.error_message(), HasSubstr("table_name"));
}

TEST_F(DataServiceTest, RowKeyLimits) {
  grpc::Status s = Mutate("t", "", {SetCellMutation("cf", "q", "v")});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("row_key"));
  s = Mutate("t", std::string(4097, 'k'), {SetCellMutation("cf", "q", "v")});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("row_key"));
  const std::string max_key(4096, 'k');
  EXPECT_GRPC_OK(Mutate("t", max_key, {SetCellMutation("cf", "q", "v")}));
  EXPECT_TRUE(ReadRow("t", max_key).has_value());
  EXPECT_EQ(ReadTable("t").size(), 1u);
}

TEST_F(DataServiceTest, QualifierLimit) {
  grpc::Status s =
      Mutate("t", "r", {SetCellMutation("cf", std::string(16385, 'q'), "v")});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("column_qualifier"));
  EXPECT_GRPC_OK(
      Mutate("t", "r", {SetCellMutation("cf", std::string(16384, 'q'), "v")}));
}

TEST_F(DataServiceTest, MutateRowIsAtomic) {
  Set("t", "r", "cf", "keep", "old", 1000);
  // The last mutation fails: nothing of the request may be visible.
  grpc::Status s = Mutate(
      "t", "r",
      {SetCellMutation("cf", "keep", "new", 2000),
       DeleteFromFamilyMutation("cf2"), SetCellMutation("cf2", "x", "y", 1000),
       SetCellMutation("missing", "q", "v", 1000)});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("mutations[3]"));
  auto row = ReadRow("t", "r");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->Cells("cf", "keep"),
            (std::vector<MergedCell>{{1000, "old", {}}}));
  EXPECT_EQ(row->Family("cf2"), nullptr);
  // Same with an invalid timestamp last, and with a delete_from_row first.
  s = Mutate("t", "r",
             {DeleteFromRowMutation(), SetCellMutation("cf", "q", "v", 7)});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  row = ReadRow("t", "r");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->Latest("cf", "keep"), "old");
}

TEST_F(DataServiceTest, MutationWithoutKindIsInvalidArgument) {
  grpc::Status s =
      Mutate("t", "r", {SetCellMutation("cf", "q", "v"), v2::Mutation()});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("mutations[1]"));
  EXPECT_FALSE(ReadRow("t", "r").has_value());
  // No mutations at all.
  s = Mutate("t", "r", {});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("mutations"));
}

TEST_F(DataServiceTest, UndeclaredMutationKindIsUnimplemented) {
  // A mutation kind btsim's proto does not declare (a future field) arrives
  // as an unknown field and must be refused, not treated as "no mutation".
  v2::Mutation future;
  future.GetReflection()->MutableUnknownFields(&future)->AddLengthDelimited(99,
                                                                            "");
  grpc::Status s = Mutate("t", "r", {future});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(s.error_message(), HasSubstr("mutations[0]"));
}

TEST_F(DataServiceTest, AuthorizedViewsAreUnimplemented) {
  v2::MutateRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_authorized_view_name(TableName("t") + "/authorizedViews/v");
  request.set_row_key("r");
  *request.add_mutations() = SetCellMutation("cf", "q", "v");
  grpc::ClientContext context;
  v2::MutateRowResponse response;
  grpc::Status s = data_->MutateRow(&context, request, &response);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(s.error_message(), HasSubstr("authorized_view_name"));
}

TEST_F(DataServiceTest, SameTimestampOverwrites) {
  Set("t", "r", "cf", "q", "first", 1000);
  Set("t", "r", "cf", "q", "second", 1000);
  auto row = ReadRow("t", "r");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->Cells("cf", "q"),
            (std::vector<MergedCell>{{1000, "second", {}}}));
}

TEST_F(DataServiceTest, BinaryKeysQualifiersAndValues) {
  const std::string key("\x00\xff\x80k", 4);
  const std::string qual("\x00q\xfe", 3);
  const std::string value("\x00\x01\x02\xff", 4);
  Set("t", key, "cf", qual, value);
  Set("t", std::string("\x01", 1), "cf", "q", "v");
  Set("t", std::string("\xff\xff", 2), "cf", "q", "v");
  auto rows = ReadTable("t");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].key, key);  // 0x00 sorts first, 0xff last (unsigned)
  EXPECT_EQ(rows[2].key, std::string("\xff\xff", 2));
  EXPECT_EQ(rows[0].Latest("cf", qual), value);
}

TEST_F(DataServiceTest, BadDeleteTimeRangeIsInvalidArgument) {
  Set("t", "r", "cf", "q", "v", 2000);
  grpc::Status s =
      Mutate("t", "r", {DeleteFromColumnMutation("cf", "q", 5000, 3000)});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("time_range"));
  s = Mutate("t", "r", {DeleteFromColumnMutation("cf", "q", -1000, 0)});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(ReadRow("t", "r")->Latest("cf", "q"), "v");
  // An open-ended range [1000, inf) deletes the cell.
  ASSERT_GRPC_OK(Mutate("t", "r", {DeleteFromColumnMutation("cf", "q", 1000)}));
  EXPECT_FALSE(ReadRow("t", "r").has_value());
}

// =============================================================== MutateRows

TEST_F(DataServiceTest, MutateRowsReportsEachEntry) {
  v2::MutateRowsRequest request;
  request.set_table_name(TableName("t"));
  auto add = [&](const std::string& key, std::vector<v2::Mutation> ms) {
    auto* e = request.add_entries();
    e->set_row_key(key);
    for (auto& m : ms) *e->add_mutations() = m;
  };
  add("good1", {SetCellMutation("cf", "q", "1")});
  add("bad-family",
      {SetCellMutation("cf", "q", "x"), SetCellMutation("nope", "q", "x")});
  add("good2", {SetCellMutation("cf", "q", "2")});
  add("bad-ts", {SetCellMutation("cf", "q", "x", 1)});
  add("bad-kind", {v2::Mutation()});
  add("", {SetCellMutation("cf", "q", "x")});
  add("no-mutations", {});
  std::vector<v2::MutateRowsResponse::Entry> entries;
  ASSERT_GRPC_OK(MutateRows(request, &entries));
  ASSERT_EQ(entries.size(), 7u);
  std::map<int64_t, int> code;
  for (const auto& e : entries) code[e.index()] = e.status().code();
  ASSERT_EQ(code.size(), 7u);
  EXPECT_EQ(code[0], grpc::StatusCode::OK);
  EXPECT_EQ(code[1], grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(code[2], grpc::StatusCode::OK);
  EXPECT_EQ(code[3], grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code[4], grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code[5], grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code[6], grpc::StatusCode::INVALID_ARGUMENT);
  for (const auto& e : entries) {
    if (e.status().code() != 0) {
      EXPECT_FALSE(e.status().message().empty());
    }
  }
  EXPECT_THAT(Keys(ReadTable("t")), ElementsAre("good1", "good2"));
}

// Found by fuzzing (tests/fuzz/corpus/mutate_rows/regression-binary-family):
// an entry's error echoed a family name that is not UTF-8 into
// google.rpc.Status.message, a string field, and the client could not parse
// the response at all.
TEST_F(DataServiceTest, MutateRowsEntryErrorsAreUtf8ForBinaryNames) {
  v2::MutateRowsRequest request;
  request.set_table_name(TableName("t"));
  auto* bad = request.add_entries();
  bad->set_row_key("k\xff");
  *bad->add_mutations() = SetCellMutation(
      "\xe3"
      "f",
      "q", "x");
  auto* good = request.add_entries();
  good->set_row_key("ok");
  *good->add_mutations() = SetCellMutation("cf", "q", "x");
  std::vector<v2::MutateRowsResponse::Entry> entries;
  ASSERT_GRPC_OK(MutateRows(request, &entries));
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].status().code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(entries[0].status().message(), HasSubstr("'\\xe3f'"));
  EXPECT_EQ(entries[1].status().code(), grpc::StatusCode::OK);
}

TEST_F(DataServiceTest, MutateRowsAppliesRepeatedKeysInOrder) {
  v2::MutateRowsRequest request;
  request.set_table_name(TableName("t"));
  for (const char* v : {"first", "second", "third"}) {
    auto* e = request.add_entries();
    e->set_row_key("r");
    *e->add_mutations() = SetCellMutation("cf", "q", v, 1000);
  }
  std::vector<v2::MutateRowsResponse::Entry> entries;
  ASSERT_GRPC_OK(MutateRows(request, &entries));
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(ReadRow("t", "r")->Cells("cf", "q"),
            (std::vector<MergedCell>{{1000, "third", {}}}));
}

TEST_F(DataServiceTest, MutateRowsOverTheMutationLimitIsRejected) {
  v2::MutateRowsRequest request;
  request.set_table_name(TableName("t"));
  for (int i = 0; i < 2; ++i) {
    auto* e = request.add_entries();
    e->set_row_key("r" + std::to_string(i));
    for (int j = 0; j < 50001; ++j)
      *e->add_mutations() = DeleteFromRowMutation();
  }
  auto* ok = request.add_entries();
  ok->set_row_key("small");
  *ok->add_mutations() = SetCellMutation("cf", "q", "v");
  std::vector<v2::MutateRowsResponse::Entry> entries;
  grpc::Status s = MutateRows(request, &entries);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("100000"));
  EXPECT_TRUE(ReadTable("t").empty());
}

TEST_F(DataServiceTest, MutateRowsExactlyAtTheLimitIsAccepted) {
  v2::MutateRowsRequest request;
  request.set_table_name(TableName("t"));
  for (int i = 0; i < 2; ++i) {
    auto* e = request.add_entries();
    e->set_row_key("r" + std::to_string(i));
    for (int j = 0; j < 49999; ++j)
      *e->add_mutations() = DeleteFromRowMutation();
    *e->add_mutations() = SetCellMutation("cf", "q", "v");
  }
  std::vector<v2::MutateRowsResponse::Entry> entries;
  ASSERT_GRPC_OK(MutateRows(request, &entries));
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(ReadTable("t").size(), 2u);
}

TEST_F(DataServiceTest, MutateRowsTableErrors) {
  v2::MutateRowsRequest request;
  request.set_table_name(TableName("absent"));
  auto* e = request.add_entries();
  e->set_row_key("r");
  *e->add_mutations() = SetCellMutation("cf", "q", "v");
  std::vector<v2::MutateRowsResponse::Entry> entries;
  EXPECT_GRPC_CODE(MutateRows(request, &entries), grpc::StatusCode::NOT_FOUND);
  // Missing table even when every entry is invalid.
  request.mutable_entries(0)->clear_mutations();
  EXPECT_GRPC_CODE(MutateRows(request, &entries), grpc::StatusCode::NOT_FOUND);
  request.clear_entries();
  request.set_table_name(TableName("t"));
  EXPECT_GRPC_CODE(MutateRows(request, &entries),
                   grpc::StatusCode::INVALID_ARGUMENT);
}

// ===================================================================== GC

TEST_F(DataServiceTest, MaxVersionsGcAppliesAtCompaction) {
  admin::ModifyColumnFamiliesRequest modify;
  modify.set_name(TableName("t"));
  auto* m = modify.add_modifications();
  m->set_id("cf");
  m->mutable_update()->mutable_gc_rule()->set_max_num_versions(1);
  m->mutable_update_mask()->add_paths("gc_rule");
  grpc::ClientContext context;
  admin::Table table;
  ASSERT_GRPC_OK(admin_->ModifyColumnFamilies(&context, modify, &table));
  for (int ts = 1; ts <= 3; ++ts) {
    Set("t", "r", "cf", "q", "v" + std::to_string(ts), ts * 1000);
  }
  Set("t", "r", "cf2", "q", "a", 1000);
  Set("t", "r", "cf2", "q", "b", 2000);
  EXPECT_EQ(ReadRow("t", "r")->Cells("cf", "q").size(), 3u);
  server_->CompactNow();
  auto row = ReadRow("t", "r");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->Cells("cf", "q"), (std::vector<MergedCell>{{3000, "v3", {}}}));
  // A family without a rule keeps everything.
  EXPECT_EQ(row->Cells("cf2", "q").size(), 2u);
}

TEST_F(DataServiceTest, MaxAgeGcAppliesAtCompaction) {
  admin::CreateTableRequest create;
  create.set_parent(kInstance);
  create.set_table_id("aged");
  auto& family = (*create.mutable_table()->mutable_column_families())["cf"];
  family.mutable_gc_rule()->mutable_max_age()->set_seconds(3600);
  ASSERT_GRPC_OK(TryCreateTable(create));
  Set("aged", "old", "cf", "q", "ancient", 1000);  // 1970
  ASSERT_GRPC_OK(
      Mutate("aged", "new", {SetCellMutation("cf", "q", "now", -1)}));
  EXPECT_EQ(ReadTable("aged").size(), 2u);
  server_->CompactNow();
  EXPECT_THAT(Keys(ReadTable("aged")), ElementsAre("new"));
}

}  // namespace
}  // namespace btsim::api_test
