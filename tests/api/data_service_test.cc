// google.bigtable.v2.Bigtable through the generated stub against a real
// server. Every read goes through ChunkMerger (ReadAll / ReadRowsRaw).
#include <chrono>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/api/api_test_util.h"

namespace btsim::api_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Keys(const std::vector<MergedRow>& rows) {
  std::vector<std::string> out;
  for (const MergedRow& r : rows) out.push_back(r.key);
  return out;
}

std::vector<int64_t> Timestamps(const std::vector<MergedCell>& cells) {
  std::vector<int64_t> out;
  for (const MergedCell& c : cells) out.push_back(c.timestamp_micros);
  return out;
}

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class DataServiceTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    CreateTable("t", {"cf", "cf2"});
  }

  v2::ReadRowsRequest Request(const std::string& table = "t") {
    v2::ReadRowsRequest r;
    r.set_table_name(TableName(table));
    return r;
  }

  // Writes rows "a".."e" (one cell each, value = key).
  void WriteFiveRows() {
    for (const char* k : {"a", "b", "c", "d", "e"}) Set("t", k, "cf", "q", k);
  }

  grpc::Status MutateRows(const v2::MutateRowsRequest& request,
                          std::vector<v2::MutateRowsResponse::Entry>* out) {
    grpc::ClientContext context;
    auto reader = data_->MutateRows(&context, request);
    v2::MutateRowsResponse response;
    while (reader->Read(&response)) {
      for (const auto& e : response.entries()) out->push_back(e);
    }
    return reader->Finish();
  }

  grpc::Status CheckAndMutate(const v2::CheckAndMutateRowRequest& request,
                              bool* matched) {
    grpc::ClientContext context;
    v2::CheckAndMutateRowResponse response;
    grpc::Status s = data_->CheckAndMutateRow(&context, request, &response);
    *matched = response.predicate_matched();
    return s;
  }

  grpc::Status ReadModifyWrite(const v2::ReadModifyWriteRowRequest& request,
                               v2::ReadModifyWriteRowResponse* response) {
    grpc::ClientContext context;
    return data_->ReadModifyWriteRow(&context, request, response);
  }

  grpc::Status Ping(const std::string& name) {
    v2::PingAndWarmRequest request;
    request.set_name(name);
    grpc::ClientContext context;
    v2::PingAndWarmResponse response;
    return data_->PingAndWarm(&context, request, &response);
  }
};

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
  // add_to_cell (field 5) is not in btsim's proto: it arrives as an unknown
  // field and must be refused, not treated as "no mutation".
  v2::Mutation add_to_cell;
  add_to_cell.GetReflection()
      ->MutableUnknownFields(&add_to_cell)
      ->AddLengthDelimited(5, "");
  grpc::Status s = Mutate("t", "r", {add_to_cell});
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

// ================================================================= ReadRows

TEST_F(DataServiceTest, ReadEmptyTable) {
  ReadOutcome out = ReadRowsRaw(*data_, Request());
  EXPECT_GRPC_OK(out.status);
  EXPECT_TRUE(out.stream.ok()) << out.stream.ToString();
  EXPECT_TRUE(out.rows.empty());
}

TEST_F(DataServiceTest, ReadByKeys) {
  WriteFiveRows();
  auto request = Request();
  for (const char* k : {"d", "b", "zz", "b", "a"}) {
    request.mutable_rows()->add_row_keys(k);
  }
  EXPECT_THAT(Keys(ReadAll(*data_, request)), ElementsAre("a", "b", "d"));
}

TEST_F(DataServiceTest, EmptyRowKeyInRowSetIsInvalidArgument) {
  auto request = Request();
  request.mutable_rows()->add_row_keys("a");
  request.mutable_rows()->add_row_keys("");
  ReadOutcome out = ReadRowsRaw(*data_, request);
  EXPECT_GRPC_CODE(out.status, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(out.status.error_message(), HasSubstr("rows.row_keys[1]"));
}

TEST_F(DataServiceTest, ReadRangesWithEveryBoundKind) {
  WriteFiveRows();
  struct Case {
    const char* name;
    void (*set)(v2::RowRange*);
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"[b,d)",
       [](v2::RowRange* r) {
         r->set_start_key_closed("b");
         r->set_end_key_open("d");
       },
       {"b", "c"}},
      {"(b,d]",
       [](v2::RowRange* r) {
         r->set_start_key_open("b");
         r->set_end_key_closed("d");
       },
       {"c", "d"}},
      {"[b,d]",
       [](v2::RowRange* r) {
         r->set_start_key_closed("b");
         r->set_end_key_closed("d");
       },
       {"b", "c", "d"}},
      {"(b,d)",
       [](v2::RowRange* r) {
         r->set_start_key_open("b");
         r->set_end_key_open("d");
       },
       {"c"}},
      {"(-inf,c)",
       [](v2::RowRange* r) { r->set_end_key_open("c"); },
       {"a", "b"}},
      {"(c,+inf)",
       [](v2::RowRange* r) { r->set_start_key_open("c"); },
       {"d", "e"}},
      {"[c,+inf)",
       [](v2::RowRange* r) { r->set_start_key_closed("c"); },
       {"c", "d", "e"}},
      {"(-inf,c]",
       [](v2::RowRange* r) { r->set_end_key_closed("c"); },
       {"a", "b", "c"}},
      {"all", [](v2::RowRange*) {}, {"a", "b", "c", "d", "e"}},
      {"empty keys are unbounded",
       [](v2::RowRange* r) {
         r->set_start_key_closed("");
         r->set_end_key_open("");
       },
       {"a", "b", "c", "d", "e"}},
      {"empty [c,c)",
       [](v2::RowRange* r) {
         r->set_start_key_closed("c");
         r->set_end_key_open("c");
       },
       {}},
      {"inverted [d,b]",
       [](v2::RowRange* r) {
         r->set_start_key_closed("d");
         r->set_end_key_closed("b");
       },
       {}},
  };
  for (const Case& c : cases) {
    auto request = Request();
    c.set(request.mutable_rows()->add_row_ranges());
    EXPECT_EQ(Keys(ReadAll(*data_, request)), c.want) << c.name;
    // Reversed gives the same rows backwards.
    request.set_reversed(true);
    std::vector<std::string> back(c.want.rbegin(), c.want.rend());
    EXPECT_EQ(Keys(ReadAll(*data_, request)), back) << c.name << " reversed";
  }
}

TEST_F(DataServiceTest, OverlappingRangesAndKeysYieldEachRowOnce) {
  WriteFiveRows();
  auto request = Request();
  auto* r1 = request.mutable_rows()->add_row_ranges();
  r1->set_start_key_closed("a");
  r1->set_end_key_closed("c");
  auto* r2 = request.mutable_rows()->add_row_ranges();
  r2->set_start_key_closed("b");
  r2->set_end_key_open("d");
  request.mutable_rows()->add_row_keys("b");
  request.mutable_rows()->add_row_keys("e");
  EXPECT_THAT(Keys(ReadAll(*data_, request)), ElementsAre("a", "b", "c", "e"));
  request.set_reversed(true);
  EXPECT_THAT(Keys(ReadAll(*data_, request)), ElementsAre("e", "c", "b", "a"));
}

TEST_F(DataServiceTest, RowsLimit) {
  WriteFiveRows();
  auto request = Request();
  request.set_rows_limit(2);
  EXPECT_THAT(Keys(ReadAll(*data_, request)), ElementsAre("a", "b"));
  request.set_reversed(true);
  EXPECT_THAT(Keys(ReadAll(*data_, request)), ElementsAre("e", "d"));
  request.set_rows_limit(100);
  EXPECT_EQ(ReadAll(*data_, request).size(), 5u);
  // The limit counts rows that survive the filter.
  request.set_reversed(false);
  request.set_rows_limit(2);
  request.mutable_filter()->set_row_key_regex_filter("[bde]");
  EXPECT_THAT(Keys(ReadAll(*data_, request)), ElementsAre("b", "d"));
}

TEST_F(DataServiceTest, NegativeRowsLimitIsInvalidArgument) {
  auto request = Request();
  request.set_rows_limit(-1);
  ReadOutcome out = ReadRowsRaw(*data_, request);
  EXPECT_GRPC_CODE(out.status, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(out.status.error_message(), HasSubstr("rows_limit"));
}

TEST_F(DataServiceTest, ReversedWithAndWithoutFeatureHeader) {
  WriteFiveRows();
  Set("t", "c", "cf2", "x", "more");
  auto request = Request();
  request.set_reversed(true);
  auto* range = request.mutable_rows()->add_row_ranges();
  range->set_start_key_open("a");
  range->set_end_key_closed("d");
  auto plain = ReadAll(*data_, request);
  auto announced = ReadAll(*data_, request, ReverseScanFeatures());
  EXPECT_THAT(Keys(plain), ElementsAre("d", "c", "b"));
  EXPECT_EQ(plain, announced);
  // Cells within a reversed row keep their canonical order.
  ASSERT_EQ(plain.size(), 3u);
  EXPECT_EQ(plain[1].families.size(), 2u);
  EXPECT_EQ(plain[1].Latest("cf2", "x"), "more");
  // Forward reads with the header are unaffected.
  request.set_reversed(false);
  EXPECT_THAT(Keys(ReadAll(*data_, request, ReverseScanFeatures())),
              ElementsAre("b", "c", "d"));
}

// ---------------------------------------------------------------- filters

TEST_F(DataServiceTest, ChainWithTwoLabelsIsInvalidArgument) {
  Set("t", "r", "cf", "q", "v");
  auto request = Request();
  auto* chain = request.mutable_filter()->mutable_chain();
  chain->add_filters()->set_apply_label_transformer("one");
  chain->add_filters()->set_pass_all_filter(true);
  chain->add_filters()->set_apply_label_transformer("two");
  ReadOutcome out = ReadRowsRaw(*data_, request);
  EXPECT_GRPC_CODE(out.status, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(out.status.error_message(), HasSubstr("apply_label"));
  EXPECT_TRUE(out.rows.empty());
}

TEST_F(DataServiceTest, SinkInsideConditionIsInvalidArgument) {
  Set("t", "r", "cf", "q", "v");
  auto request = Request();
  auto* cond = request.mutable_filter()->mutable_condition();
  cond->mutable_predicate_filter()->set_sink(true);
  cond->mutable_true_filter()->set_pass_all_filter(true);
  ReadOutcome out = ReadRowsRaw(*data_, request);
  EXPECT_GRPC_CODE(out.status, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(out.status.error_message(), HasSubstr("sink"));
  // Also inside a branch.
  cond->mutable_predicate_filter()->set_pass_all_filter(true);
  cond->mutable_false_filter()->mutable_chain()->add_filters()->set_sink(true);
  out = ReadRowsRaw(*data_, request);
  EXPECT_GRPC_CODE(out.status, grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(DataServiceTest, InvalidRegexIsInvalidArgumentNamingTheField) {
  Set("t", "r", "cf", "q", "v");
  auto request = Request();
  request.mutable_filter()->set_row_key_regex_filter("a(b");
  ReadOutcome out = ReadRowsRaw(*data_, request);
  EXPECT_GRPC_CODE(out.status, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(out.status.error_message(), HasSubstr("row_key_regex_filter"));
  // Nested: the message names the path to the bad filter.
  request.mutable_filter()->mutable_chain()->add_filters()->set_pass_all_filter(
      true);
  request.mutable_filter()
      ->mutable_chain()
      ->add_filters()
      ->set_value_regex_filter("[z");
  out = ReadRowsRaw(*data_, request);
  EXPECT_GRPC_CODE(out.status, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(out.status.error_message(), HasSubstr("filter.chain.filters[1]"));
  EXPECT_THAT(out.status.error_message(), HasSubstr("value_regex_filter"));
  // And in CheckAndMutateRow's predicate.
  v2::CheckAndMutateRowRequest cam;
  cam.set_table_name(TableName("t"));
  cam.set_row_key("r");
  cam.mutable_predicate_filter()->set_family_name_regex_filter("(");
  bool matched = false;
  grpc::Status s = CheckAndMutate(cam, &matched);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("predicate_filter"));
}

TEST_F(DataServiceTest, OtherInvalidFiltersAreInvalidArgument) {
  std::vector<v2::RowFilter> bad(5);
  bad[0].set_cells_per_column_limit_filter(0);
  bad[1].set_cells_per_row_offset_filter(-1);
  bad[2].set_row_sample_filter(1.5);
  bad[3].mutable_timestamp_range_filter()->set_start_timestamp_micros(1500);
  bad[4].set_apply_label_transformer("Bad Label!");
  for (const v2::RowFilter& f : bad) {
    auto request = Request();
    *request.mutable_filter() = f;
    ReadOutcome out = ReadRowsRaw(*data_, request);
    EXPECT_GRPC_CODE(out.status, grpc::StatusCode::INVALID_ARGUMENT);
  }
}

TEST_F(DataServiceTest, InterleaveOfTwoPassAllDuplicatesCells) {
  Set("t", "r", "cf", "a", "1", 2000);
  Set("t", "r", "cf", "a", "2", 1000);
  Set("t", "r", "cf", "b", "3", 1000);
  auto request = Request();
  auto* inter = request.mutable_filter()->mutable_interleave();
  inter->add_filters()->set_pass_all_filter(true);
  inter->add_filters()->set_pass_all_filter(true);
  auto rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_THAT(Timestamps(rows[0].Cells("cf", "a")),
              ElementsAre(2000, 2000, 1000, 1000));
  EXPECT_EQ(rows[0].Cells("cf", "b").size(), 2u);
  EXPECT_EQ(rows[0].CellCount(), 6u);
}

TEST_F(DataServiceTest, CellsPerColumnLimit) {
  for (int ts = 1; ts <= 4; ++ts) {
    Set("t", "r", "cf", "a", "a" + std::to_string(ts), ts * 1000);
    Set("t", "r", "cf", "b", "b" + std::to_string(ts), ts * 1000);
  }
  auto request = Request();
  request.mutable_filter()->set_cells_per_column_limit_filter(2);
  auto rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_THAT(Timestamps(rows[0].Cells("cf", "a")), ElementsAre(4000, 3000));
  EXPECT_THAT(Timestamps(rows[0].Cells("cf", "b")), ElementsAre(4000, 3000));
  EXPECT_EQ(rows[0].Latest("cf", "b"), "b4");
}

TEST_F(DataServiceTest, CellsPerRowLimitAndOffset) {
  for (const char* q : {"a", "b", "c", "d"}) Set("t", "r", "cf", q, q);
  auto request = Request();
  auto* chain = request.mutable_filter()->mutable_chain();
  chain->add_filters()->set_cells_per_row_offset_filter(1);
  chain->add_filters()->set_cells_per_row_limit_filter(2);
  auto rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(rows[0].families.size(), 1u);
  ASSERT_EQ(rows[0].families[0].columns.size(), 2u);
  EXPECT_EQ(rows[0].families[0].columns[0].qualifier, "b");
  EXPECT_EQ(rows[0].families[0].columns[1].qualifier, "c");
}

TEST_F(DataServiceTest, StripValue) {
  Set("t", "r", "cf", "q", "a long value", 3000);
  Set("t", "r", "cf", "q", "older", 2000);
  auto request = Request();
  request.mutable_filter()->set_strip_value_transformer(true);
  auto rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].Cells("cf", "q"),
            (std::vector<MergedCell>{{3000, "", {}}, {2000, "", {}}}));
}

TEST_F(DataServiceTest, LabelsAppearInTheOutput) {
  Set("t", "r", "cf", "q", "v", 1000);
  Set("t", "r", "cf2", "q", "w", 1000);
  auto request = Request();
  auto* inter = request.mutable_filter()->mutable_interleave();
  auto* c1 = inter->add_filters()->mutable_chain();
  c1->add_filters()->set_family_name_regex_filter("cf");
  c1->add_filters()->set_apply_label_transformer("first");
  auto* c2 = inter->add_filters()->mutable_chain();
  c2->add_filters()->set_family_name_regex_filter("cf2");
  c2->add_filters()->set_apply_label_transformer("second");
  auto rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].Cells("cf", "q"),
            (std::vector<MergedCell>{{1000, "v", {"first"}}}));
  EXPECT_EQ(rows[0].Cells("cf2", "q"),
            (std::vector<MergedCell>{{1000, "w", {"second"}}}));
}

TEST_F(DataServiceTest, RangeAndRegexFiltersThroughTheWire) {
  Set("t", "r1", "cf", "a", "apple", 1000);
  Set("t", "r1", "cf", "b", "banana", 2000);
  Set("t", "r1", "cf", "c", "cherry", 3000);
  Set("t", "r1", "cf2", "b", "blueberry", 2000);
  Set("t", "r2", "cf", "a", "avocado", 1000);
  auto read = [&](const v2::RowFilter& f) {
    auto request = Request();
    *request.mutable_filter() = f;
    return ReadAll(*data_, request);
  };
  v2::RowFilter f;
  // Column range (a, c] in cf only.
  auto* cr = f.mutable_column_range_filter();
  cr->set_family_name("cf");
  cr->set_start_qualifier_open("a");
  cr->set_end_qualifier_closed("c");
  auto rows = read(f);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].key, "r1");
  EXPECT_EQ(rows[0].CellCount(), 2u);
  EXPECT_EQ(rows[0].Family("cf2"), nullptr);
  // Timestamp range [2000, 3000).
  f.Clear();
  f.mutable_timestamp_range_filter()->set_start_timestamp_micros(2000);
  f.mutable_timestamp_range_filter()->set_end_timestamp_micros(3000);
  rows = read(f);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].CellCount(), 2u);
  EXPECT_EQ(rows[0].Latest("cf2", "b"), "blueberry");
  // Value range ["b", "c").
  f.Clear();
  f.mutable_value_range_filter()->set_start_value_closed("b");
  f.mutable_value_range_filter()->set_end_value_open("c");
  rows = read(f);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].CellCount(), 2u);
  // Value regex matches the whole value.
  f.Clear();
  f.set_value_regex_filter("a.*");
  rows = read(f);
  EXPECT_THAT(Keys(rows), ElementsAre("r1", "r2"));
  f.set_value_regex_filter("a");
  EXPECT_TRUE(read(f).empty());
  // Qualifier regex and family regex.
  f.Clear();
  f.set_column_qualifier_regex_filter("b");
  rows = read(f);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].families.size(), 2u);
  f.Clear();
  f.set_family_name_regex_filter("cf2");
  rows = read(f);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].CellCount(), 1u);
  // An empty filter message passes everything.
  f.Clear();
  EXPECT_EQ(read(f).size(), 2u);
  // block_all removes every row.
  f.Clear();
  f.set_block_all_filter(true);
  EXPECT_TRUE(read(f).empty());
}

TEST_F(DataServiceTest, ConditionFilterPicksABranchPerRow) {
  Set("t", "yes", "cf", "flag", "1");
  Set("t", "yes", "cf", "data", "d1");
  Set("t", "no", "cf", "data", "d2");
  auto request = Request();
  auto* cond = request.mutable_filter()->mutable_condition();
  cond->mutable_predicate_filter()->set_column_qualifier_regex_filter("flag");
  cond->mutable_true_filter()->set_apply_label_transformer("flagged");
  cond->mutable_false_filter()->set_strip_value_transformer(true);
  auto rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, "no");
  EXPECT_EQ(rows[0].Cells("cf", "data"),
            (std::vector<MergedCell>{{1000, "", {}}}));
  EXPECT_EQ(rows[1].Cells("cf", "data"),
            (std::vector<MergedCell>{{1000, "d1", {"flagged"}}}));
}

TEST_F(DataServiceTest, SinkInsideInterleaveReachesTheOutput) {
  Set("t", "r", "cf", "a", "1");
  Set("t", "r", "cf", "b", "2");
  auto request = Request();
  // chain(interleave(chain(label x, sink), pass_all), block_all): only the
  // sunk cells survive the block_all.
  auto* chain = request.mutable_filter()->mutable_chain();
  auto* inter = chain->add_filters()->mutable_interleave();
  auto* sunk = inter->add_filters()->mutable_chain();
  sunk->add_filters()->set_apply_label_transformer("x");
  sunk->add_filters()->set_sink(true);
  inter->add_filters()->set_pass_all_filter(true);
  chain->add_filters()->set_block_all_filter(true);
  auto rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].Cells("cf", "a"),
            (std::vector<MergedCell>{{1000, "1", {"x"}}}));
  EXPECT_EQ(rows[0].CellCount(), 2u);
}

// ------------------------------------------------------ chunking behaviour

TEST_F(DataServiceTest, TimestampZeroAndEmptyValueAreNotBareChunks) {
  // The second cell of the column has no qualifier change, timestamp 0 and
  // an empty value: the server must still say something on its chunk, or
  // clients read a bare (data-less) chunk.
  Set("t", "r", "cf", "q", "newer", 2000);
  Set("t", "r", "cf", "q", "", 0);
  Set("t", "s", "cf", "q", "", 0);
  auto rows = ReadTable("t");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].Cells("cf", "q"),
            (std::vector<MergedCell>{{2000, "newer", {}}, {0, "", {}}}));
  // Duplicates of a timestamp-0 empty cell through an interleave.
  auto request = Request();
  auto* inter = request.mutable_filter()->mutable_interleave();
  inter->add_filters()->set_pass_all_filter(true);
  inter->add_filters()->set_pass_all_filter(true);
  request.mutable_rows()->add_row_keys("s");
  rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].Cells("cf", "q"),
            (std::vector<MergedCell>{{0, "", {}}, {0, "", {}}}));
  // And stripped values at timestamp 0.
  Set("t", "u", "cf", "q", "x", 1000);
  Set("t", "u", "cf", "q", "y", 0);
  request = Request();
  request.mutable_rows()->add_row_keys("u");
  request.mutable_filter()->set_strip_value_transformer(true);
  rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].Cells("cf", "q").size(), 2u);
}

TEST_F(DataServiceTest, LargeReadReturnsEveryRowOnceInOrder) {
  constexpr int kRows = 3000;
  const std::string value(1024, 'v');
  // Write through MutateRows in batches of 500.
  for (int start = 0; start < kRows; start += 500) {
    v2::MutateRowsRequest request;
    request.set_table_name(TableName("t"));
    for (int i = start; i < start + 500; ++i) {
      char key[16];
      std::snprintf(key, sizeof(key), "row%05d", i);
      auto* e = request.add_entries();
      e->set_row_key(key);
      *e->add_mutations() = SetCellMutation("cf", "q", value + key);
    }
    std::vector<v2::MutateRowsResponse::Entry> entries;
    ASSERT_GRPC_OK(MutateRows(request, &entries));
    for (const auto& e : entries) ASSERT_EQ(e.status().code(), 0);
  }
  for (bool reversed : {false, true}) {
    auto request = Request();
    request.set_reversed(reversed);
    ReadOutcome out = ReadRowsRaw(*data_, request);
    ASSERT_GRPC_OK(out.status);
    ASSERT_TRUE(out.stream.ok()) << out.stream.ToString();
    ASSERT_EQ(out.rows.size(), static_cast<size_t>(kRows));
    EXPECT_GE(out.responses, 3) << "expected several 1 MiB responses";
    for (int i = 0; i < kRows; ++i) {
      const int n = reversed ? kRows - 1 - i : i;
      char key[16];
      std::snprintf(key, sizeof(key), "row%05d", n);
      ASSERT_EQ(out.rows[i].key, key) << "reversed=" << reversed;
      ASSERT_EQ(out.rows[i].Latest("cf", "q"), value + key);
    }
  }
  // rows_limit across batch boundaries, both directions.
  auto request = Request();
  request.set_rows_limit(2500);
  auto rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 2500u);
  EXPECT_EQ(rows.back().key, "row02499");
  request.set_reversed(true);
  rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 2500u);
  EXPECT_EQ(rows.back().key, "row00500");
  // Several ranges and keys, resumed across batches.
  request = Request();
  auto* r1 = request.mutable_rows()->add_row_ranges();
  r1->set_start_key_closed("row00100");
  r1->set_end_key_open("row01500");
  auto* r2 = request.mutable_rows()->add_row_ranges();
  r2->set_start_key_open("row02000");
  r2->set_end_key_closed("row02999");
  request.mutable_rows()->add_row_keys("row00050");
  request.mutable_rows()->add_row_keys("row01000");  // inside r1
  for (bool reversed : {false, true}) {
    request.set_reversed(reversed);
    rows = ReadAll(*data_, request);
    ASSERT_EQ(rows.size(), 1u + 1400u + 999u) << "reversed=" << reversed;
    EXPECT_EQ(rows[reversed ? rows.size() - 1 : 0].key, "row00050");
    EXPECT_EQ(rows[reversed ? 0 : rows.size() - 1].key, "row02999");
  }
}

TEST_F(DataServiceTest, ClientCancellingMidStreamLeavesTheServerServing) {
  const std::string value(64 * 1024, 'x');
  for (int i = 0; i < 64; ++i) {
    Set("t", "row" + std::to_string(100 + i), "cf", "q", value);
  }
  {
    grpc::ClientContext context;
    auto reader = data_->ReadRows(&context, Request());
    v2::ReadRowsResponse response;
    ASSERT_TRUE(reader->Read(&response));
    ChunkMerger merger;
    EXPECT_TRUE(merger.Feed(response).ok());
    context.TryCancel();
    while (reader->Read(&response)) {
    }
    EXPECT_GRPC_CODE(reader->Finish(), grpc::StatusCode::CANCELLED);
  }
  EXPECT_EQ(ReadTable("t").size(), 64u);
  EXPECT_GRPC_OK(Ping(kInstance));
}

TEST_F(DataServiceTest, ThreeMebibyteCellIsSplitAndReassembled) {
  std::string big(3 * 1024 * 1024 + 17, '\0');
  for (size_t i = 0; i < big.size(); ++i) {
    big[i] = static_cast<char>((i * 131 + i / 7) & 0xff);
  }
  Set("t", "big", "cf", "a", "small-before", 1000);
  Set("t", "big", "cf", "b", big, 5000);
  Set("t", "big", "cf", "c", "small-after", 1000);
  Set("t", "next", "cf", "a", "x", 1000);
  ReadOutcome out = ReadRowsRaw(*data_, Request());
  ASSERT_GRPC_OK(out.status);
  ASSERT_TRUE(out.stream.ok()) << out.stream.ToString();
  EXPECT_GE(out.chunks, 3 + 3) << "the big value should span several chunks";
  ASSERT_EQ(out.rows.size(), 2u);
  auto cells = out.rows[0].Cells("cf", "b");
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].timestamp_micros, 5000);
  EXPECT_EQ(cells[0].value.size(), big.size());
  EXPECT_TRUE(cells[0].value == big);
  EXPECT_EQ(out.rows[0].Latest("cf", "c"), "small-after");
  EXPECT_EQ(out.rows[1].key, "next");
}

// ======================================================== CheckAndMutateRow

TEST_F(DataServiceTest, CheckAndMutateMatched) {
  Set("t", "r", "cf", "flag", "on");
  v2::CheckAndMutateRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  request.mutable_predicate_filter()->set_value_regex_filter("on");
  *request.add_true_mutations() = SetCellMutation("cf", "result", "true");
  *request.add_false_mutations() = SetCellMutation("cf", "result", "false");
  bool matched = false;
  ASSERT_GRPC_OK(CheckAndMutate(request, &matched));
  EXPECT_TRUE(matched);
  EXPECT_EQ(ReadRow("t", "r")->Latest("cf", "result"), "true");
}

TEST_F(DataServiceTest, CheckAndMutateNotMatched) {
  Set("t", "r", "cf", "flag", "off");
  v2::CheckAndMutateRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  request.mutable_predicate_filter()->set_value_regex_filter("on");
  *request.add_true_mutations() = SetCellMutation("cf", "result", "true");
  *request.add_false_mutations() = SetCellMutation("cf", "result", "false");
  *request.add_false_mutations() = DeleteFromColumnMutation("cf", "flag");
  bool matched = true;
  ASSERT_GRPC_OK(CheckAndMutate(request, &matched));
  EXPECT_FALSE(matched);
  auto row = ReadRow("t", "r");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->Latest("cf", "result"), "false");
  EXPECT_EQ(row->Column("cf", "flag"), nullptr);
}

TEST_F(DataServiceTest, CheckAndMutateWithoutPredicateTestsRowExistence) {
  v2::CheckAndMutateRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  *request.add_true_mutations() = SetCellMutation("cf", "seen", "again");
  *request.add_false_mutations() = SetCellMutation("cf", "seen", "first");
  bool matched = true;
  ASSERT_GRPC_OK(CheckAndMutate(request, &matched));
  EXPECT_FALSE(matched);
  EXPECT_EQ(ReadRow("t", "r")->Latest("cf", "seen"), "first");
  ASSERT_GRPC_OK(CheckAndMutate(request, &matched));
  EXPECT_TRUE(matched);
  EXPECT_EQ(ReadRow("t", "r")->Latest("cf", "seen"), "again");
  // No mutations on the chosen side is fine.
  request.clear_true_mutations();
  ASSERT_GRPC_OK(CheckAndMutate(request, &matched));
  EXPECT_TRUE(matched);
}

TEST_F(DataServiceTest, CheckAndMutateErrors) {
  Set("t", "r", "cf", "q", "v");
  v2::CheckAndMutateRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  // An invalid mutation on the side that is not taken still fails the call.
  *request.add_true_mutations() = SetCellMutation("cf", "q", "new");
  *request.add_false_mutations() = SetCellMutation("missing", "q", "v");
  bool matched = false;
  grpc::Status s = CheckAndMutate(request, &matched);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("false_mutations[0]"));
  EXPECT_EQ(ReadRow("t", "r")->Latest("cf", "q"), "v");
  request.clear_false_mutations();
  request.set_row_key("");
  EXPECT_GRPC_CODE(CheckAndMutate(request, &matched),
                   grpc::StatusCode::INVALID_ARGUMENT);
  request.set_row_key("r");
  request.set_table_name(TableName("absent"));
  EXPECT_GRPC_CODE(CheckAndMutate(request, &matched),
                   grpc::StatusCode::NOT_FOUND);
}

// ======================================================= ReadModifyWriteRow

TEST_F(DataServiceTest, ReadModifyWriteAppend) {
  Set("t", "r", "cf", "s", "abc", 1000);
  v2::ReadModifyWriteRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  auto* r1 = request.add_rules();
  r1->set_family_name("cf");
  r1->set_column_qualifier("s");
  r1->set_append_value("def");
  auto* r2 = request.add_rules();
  r2->set_family_name("cf");
  r2->set_column_qualifier("s");
  r2->set_append_value("!");
  auto* r3 = request.add_rules();
  r3->set_family_name("cf");
  r3->set_column_qualifier("new");
  r3->set_append_value("fresh");
  v2::ReadModifyWriteRowResponse response;
  ASSERT_GRPC_OK(ReadModifyWrite(request, &response));
  EXPECT_EQ(response.row().key(), "r");
  ASSERT_EQ(response.row().families_size(), 1);
  const v2::Family& f = response.row().families(0);
  EXPECT_EQ(f.name(), "cf");
  ASSERT_EQ(f.columns_size(), 2);
  EXPECT_EQ(f.columns(0).qualifier(), "new");
  EXPECT_EQ(f.columns(0).cells(0).value(), "fresh");
  EXPECT_EQ(f.columns(1).qualifier(), "s");
  ASSERT_EQ(f.columns(1).cells_size(), 1);
  EXPECT_EQ(f.columns(1).cells(0).value(), "abcdef!");
  EXPECT_EQ(ReadRow("t", "r")->Latest("cf", "s"), "abcdef!");
}

TEST_F(DataServiceTest, ReadModifyWriteIncrementReturnsOnlyModifiedCells) {
  Set("t", "r", "cf", "other", "untouched");
  Set("t", "r", "cf2", "x", "untouched");
  v2::ReadModifyWriteRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  auto* rule = request.add_rules();
  rule->set_family_name("cf");
  rule->set_column_qualifier("n");
  rule->set_increment_amount(5);
  v2::ReadModifyWriteRowResponse response;
  ASSERT_GRPC_OK(ReadModifyWrite(request, &response));
  ASSERT_EQ(response.row().families_size(), 1);
  ASSERT_EQ(response.row().families(0).columns_size(), 1);
  EXPECT_EQ(response.row().families(0).columns(0).qualifier(), "n");
  EXPECT_EQ(response.row().families(0).columns(0).cells(0).value(),
            BigEndian(5));
  const int64_t ts =
      response.row().families(0).columns(0).cells(0).timestamp_micros();
  EXPECT_EQ(ts % 1000, 0);
  EXPECT_GT(ts, 0);
  // Increment again, by a negative amount, twice in one request.
  rule->set_increment_amount(-2);
  *request.add_rules() = *rule;
  response.Clear();
  ASSERT_GRPC_OK(ReadModifyWrite(request, &response));
  EXPECT_EQ(response.row().families(0).columns(0).cells(0).value(),
            BigEndian(1));
  auto row = ReadRow("t", "r");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->Latest("cf", "n"), BigEndian(1));
  EXPECT_EQ(row->Latest("cf", "other"), "untouched");
}

TEST_F(DataServiceTest, IncrementOfNonEightByteValueIsInvalidArgument) {
  Set("t", "r", "cf", "n", "abc");
  v2::ReadModifyWriteRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  auto* ok = request.add_rules();
  ok->set_family_name("cf");
  ok->set_column_qualifier("other");
  ok->set_append_value("x");
  auto* rule = request.add_rules();
  rule->set_family_name("cf");
  rule->set_column_qualifier("n");
  rule->set_increment_amount(1);
  v2::ReadModifyWriteRowResponse response;
  grpc::Status s = ReadModifyWrite(request, &response);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("rules[1]"));
  // The whole request failed: the append did not happen either.
  auto row = ReadRow("t", "r");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->Latest("cf", "n"), "abc");
  EXPECT_EQ(row->Column("cf", "other"), nullptr);
}

TEST_F(DataServiceTest, ReadModifyWriteErrors) {
  v2::ReadModifyWriteRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  v2::ReadModifyWriteRowResponse response;
  EXPECT_GRPC_CODE(ReadModifyWrite(request, &response),
                   grpc::StatusCode::INVALID_ARGUMENT);  // no rules
  auto* rule = request.add_rules();
  rule->set_family_name("cf");
  rule->set_column_qualifier("q");
  EXPECT_GRPC_CODE(ReadModifyWrite(request, &response),
                   grpc::StatusCode::INVALID_ARGUMENT);  // no rule kind
  rule->set_family_name("missing");
  rule->set_append_value("x");
  EXPECT_GRPC_CODE(ReadModifyWrite(request, &response),
                   grpc::StatusCode::NOT_FOUND);
  rule->set_family_name("cf");
  request.set_table_name(TableName("absent"));
  EXPECT_GRPC_CODE(ReadModifyWrite(request, &response),
                   grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(ReadTable("t").empty());
}

TEST_F(DataServiceTest, ReadModifyWriteKeepsANewerExistingTimestamp) {
  // A cell from the future: the new cell takes max(existing, now) and so
  // replaces it rather than hiding behind it.
  const int64_t future = int64_t{4102444800} * 1000000;  // year 2100
  Set("t", "r", "cf", "s", "abc", future);
  v2::ReadModifyWriteRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  auto* rule = request.add_rules();
  rule->set_family_name("cf");
  rule->set_column_qualifier("s");
  rule->set_append_value("d");
  v2::ReadModifyWriteRowResponse response;
  ASSERT_GRPC_OK(ReadModifyWrite(request, &response));
  const v2::Cell& cell = response.row().families(0).columns(0).cells(0);
  EXPECT_EQ(cell.timestamp_micros(), future);
  EXPECT_EQ(cell.value(), "abcd");
  EXPECT_EQ(ReadRow("t", "r")->Cells("cf", "s"),
            (std::vector<MergedCell>{{future, "abcd", {}}}));
}

// ============================================================== PingAndWarm

TEST_F(DataServiceTest, PingAndWarm) {
  EXPECT_GRPC_OK(Ping(kInstance));
  EXPECT_GRPC_OK(Ping("projects/other/instances/new-one"));
  for (const char* bad : {"", "projects/p", "projects/p/instances/",
                          "projects/p/instances/i/tables/t", "instances/i"}) {
    grpc::Status s = Ping(bad);
    EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("name")) << bad;
  }
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

namespace btsim::api_test {
namespace {

using ::testing::HasSubstr;

class RefusalTest : public ServerTest {};

TEST_F(RefusalTest, AuthorizedViewWithoutTableNameIsUnimplemented) {
  // Clients targeting a view leave table_name empty.
  v2::MutateRowRequest request;
  request.set_authorized_view_name(TableName("t") + "/authorizedViews/v");
  request.set_row_key("r");
  *request.add_mutations() = SetCellMutation("cf", "q", "v");
  v2::MutateRowResponse response;
  grpc::ClientContext context;
  grpc::Status s = data_->MutateRow(&context, request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(s.error_message(), HasSubstr("authorized_view_name"));
}

TEST_F(RefusalTest, MaterializedViewReadIsUnimplemented) {
  CreateTable("t");
  v2::ReadRowsRequest request;
  request.set_materialized_view_name(std::string(kInstance) +
                                     "/materializedViews/m");
  ReadOutcome out = ReadRowsRaw(*data_, request);
  EXPECT_EQ(out.status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
}

TEST_F(RefusalTest, SampleRowKeysOfARangeIsUnimplemented) {
  CreateTable("t");
  v2::SampleRowKeysRequest request;
  request.set_table_name(TableName("t"));
  request.mutable_row_range()->set_start_key_closed("a");
  grpc::ClientContext context;
  auto reader = data_->SampleRowKeys(&context, request);
  v2::SampleRowKeysResponse response;
  while (reader->Read(&response)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNIMPLEMENTED);
}

TEST_F(RefusalTest, MutateRowsEntryErrorsNameTheEntry) {
  CreateTable("t");
  v2::MutateRowsRequest request;
  request.set_table_name(TableName("t"));
  auto* good = request.add_entries();
  good->set_row_key("a");
  *good->add_mutations() = SetCellMutation("cf", "q", "v");
  auto* bad = request.add_entries();
  bad->set_row_key("b");
  *bad->add_mutations() = SetCellMutation("nofamily", "q", "v");
  grpc::ClientContext context;
  auto reader = data_->MutateRows(&context, request);
  v2::MutateRowsResponse response;
  std::string message;
  while (reader->Read(&response)) {
    for (const auto& e : response.entries()) {
      if (e.index() == 1) message = e.status().message();
    }
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_THAT(message, HasSubstr("entries[1].mutations[0]"));
}

TEST_F(RefusalTest, ExponentialFilterIsInvalidArgument) {
  CreateTable("t");
  Set("t", "r", "cf", "q", "v");
  v2::ReadRowsRequest request;
  request.set_table_name(TableName("t"));
  auto* chain = request.mutable_filter()->mutable_chain();
  for (int i = 0; i < 40; ++i) {
    auto* interleave = chain->add_filters()->mutable_interleave();
    interleave->add_filters()->set_pass_all_filter(true);
    interleave->add_filters()->set_pass_all_filter(true);
  }
  ReadOutcome out = ReadRowsRaw(*data_, request);
  EXPECT_EQ(out.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(out.status.error_message(), HasSubstr("filter"));
}

TEST_F(RefusalTest, DeletionProtectionIsUnimplemented) {
  admin::CreateTableRequest request;
  request.set_parent(kInstance);
  request.set_table_id("t");
  request.mutable_table()->set_deletion_protection(true);
  EXPECT_EQ(TryCreateTable(request).error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
}

TEST_F(RefusalTest, AggregateFamilyValueTypeIsUnimplemented) {
  admin::CreateTableRequest request;
  request.set_parent(kInstance);
  request.set_table_id("t");
  admin::ColumnFamily family;
  // ColumnFamily.value_type (field 3) with an int64 aggregate: unknown to us.
  family.GetReflection()->MutableUnknownFields(&family)->AddLengthDelimited(
      3, std::string("\x2a\x00", 2));
  (*request.mutable_table()->mutable_column_families())["sum"] = family;
  grpc::Status s = TryCreateTable(request);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(s.error_message(), HasSubstr("column_families['sum']"));
}

TEST_F(RefusalTest, EmptyInitialSplitIsInvalidArgument) {
  admin::CreateTableRequest request;
  request.set_parent(kInstance);
  request.set_table_id("t");
  request.add_initial_splits()->set_key("");
  grpc::Status s = TryCreateTable(request);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("initial_splits[0]"));
}

TEST_F(RefusalTest, MaxAgeWithOutOfRangeNanosIsInvalidArgument) {
  admin::CreateTableRequest request;
  request.set_parent(kInstance);
  request.set_table_id("t");
  auto& family = (*request.mutable_table()->mutable_column_families())["cf"];
  family.mutable_gc_rule()->mutable_max_age()->set_seconds(10);
  family.mutable_gc_rule()->mutable_max_age()->set_nanos(1'500'000'000);
  grpc::Status s = TryCreateTable(request);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("max_age"));
}

}  // namespace
}  // namespace btsim::api_test
