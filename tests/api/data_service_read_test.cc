// google.bigtable.v2.Bigtable ReadRows against a real server: row sets,
// ranges, limits, reversed scans, and how rows are cut into chunks.
#include <cstdio>
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

// A scan whose filter drops every row examines a bounded share of the
// table per batch under the instance lock, answering each empty batch with
// last_scanned_row_key (so other calls get the lock in between).
TEST_F(DataServiceTest, AScanThatReturnsNothingYieldsBetweenBatches) {
  v2::MutateRowsRequest batch;
  batch.set_table_name(TableName("t"));
  for (int i = 0; i < 10'000; ++i) {
    auto* entry = batch.add_entries();
    char key[16];
    std::snprintf(key, sizeof key, "row%05d", i);
    entry->set_row_key(key);
    *entry->add_mutations() = SetCellMutation("cf", "q", "v");
  }
  {
    grpc::ClientContext context;
    auto reader = data_->MutateRows(&context, batch);
    v2::MutateRowsResponse response;
    while (reader->Read(&response)) {
    }
    ASSERT_GRPC_OK(reader->Finish());
  }
  for (bool reversed : {false, true}) {
    SCOPED_TRACE(reversed);
    v2::ReadRowsRequest request = Request();
    request.mutable_filter()->set_block_all_filter(true);
    request.set_reversed(reversed);
    ReadOutcome out =
        ReadRowsRaw(*data_, request, reversed ? ReverseScanFeatures() : "");
    ASSERT_GRPC_OK(out.status);
    EXPECT_TRUE(out.stream.ok()) << out.stream.message();
    EXPECT_TRUE(out.rows.empty());
    // 10,000 rows at 4,096 per batch: three batches, each answered.
    EXPECT_GE(out.responses, 2);
    EXPECT_EQ(out.chunks, 0);
  }
  // Without the filter every row comes back, once.
  ReadOutcome all = ReadRowsRaw(*data_, Request());
  ASSERT_GRPC_OK(all.status);
  EXPECT_EQ(all.rows.size(), 10'000u);
}

}  // namespace
}  // namespace btsim::api_test
