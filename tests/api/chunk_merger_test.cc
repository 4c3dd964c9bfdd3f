// Unit tests of the test-side ReadRows validator: hand-built streams, valid
// and invalid, so that a passing end-to-end test means something.
#include "tests/api/chunk_merger.h"

#include <initializer_list>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace btsim::api_test {
namespace {

using google::bigtable::v2::ReadRowsResponse;
using CellChunk = ReadRowsResponse::CellChunk;
using ::testing::HasSubstr;

// Fluent CellChunk construction.
class Chunk {
 public:
  Chunk& Key(const std::string& k) {
    c_.set_row_key(k);
    return *this;
  }
  Chunk& Family(const std::string& f) {
    c_.mutable_family_name()->set_value(f);
    return *this;
  }
  Chunk& Qual(const std::string& q) {
    c_.mutable_qualifier()->set_value(q);
    return *this;
  }
  Chunk& Ts(int64_t t) {
    c_.set_timestamp_micros(t);
    return *this;
  }
  Chunk& Value(const std::string& v) {
    c_.set_value(v);
    return *this;
  }
  Chunk& ValueSize(int32_t n) {
    c_.set_value_size(n);
    return *this;
  }
  Chunk& Label(const std::string& l) {
    c_.add_labels(l);
    return *this;
  }
  Chunk& Commit() {
    c_.set_commit_row(true);
    return *this;
  }
  Chunk& Reset() {
    c_.set_reset_row(true);
    return *this;
  }
  operator CellChunk() const { return c_; }  // NOLINT: builder

 private:
  CellChunk c_;
};

// A complete one-cell row.
Chunk Row(const std::string& key, const std::string& value = "v",
          int64_t ts = 1000) {
  return std::move(
      Chunk().Key(key).Family("cf").Qual("q").Ts(ts).Value(value).Commit());
}

ReadRowsResponse Resp(std::initializer_list<CellChunk> chunks) {
  ReadRowsResponse r;
  for (const CellChunk& c : chunks) *r.add_chunks() = c;
  return r;
}

Result<std::vector<MergedRow>> Merge(std::vector<ReadRowsResponse> responses,
                                     bool reversed = false) {
  return MergeResponses(responses, reversed);
}

// Expects the stream to be rejected with a message containing `what`.
void ExpectRejected(std::vector<ReadRowsResponse> responses,
                    const std::string& what, bool reversed = false) {
  auto result = Merge(std::move(responses), reversed);
  ASSERT_FALSE(result.ok()) << "stream was accepted";
  EXPECT_EQ(result.status().code(), StatusCode::kInternal);
  EXPECT_THAT(result.status().message(), HasSubstr(what));
}

// ------------------------------------------------------------ valid streams

TEST(ChunkMergerTest, EmptyStreamHasNoRows) {
  auto rows = Merge({});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_TRUE(rows->empty());
  rows = Merge({ReadRowsResponse(), ReadRowsResponse()});
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
}

TEST(ChunkMergerTest, SingleCellRow) {
  auto rows = Merge({Resp({Row("r1", "hello", 5000)})});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  const MergedRow& r = (*rows)[0];
  EXPECT_EQ(r.key, "r1");
  ASSERT_EQ(r.families.size(), 1u);
  EXPECT_EQ(r.families[0].name, "cf");
  ASSERT_EQ(r.families[0].columns.size(), 1u);
  EXPECT_EQ(r.families[0].columns[0].qualifier, "q");
  EXPECT_EQ(r.Cells("cf", "q"), (std::vector<MergedCell>{{5000, "hello", {}}}));
}

TEST(ChunkMergerTest, OmittedFieldsMeanSameAsBefore) {
  // Row key only on the first chunk, family only on the first chunk of each
  // family, qualifier only when it changes.
  auto rows = Merge({Resp({
      Chunk().Key("r").Family("a").Qual("x").Ts(3000).Value("1"),
      Chunk().Ts(2000).Value("2"),
      Chunk().Qual("y").Ts(1000).Value("3"),
      Chunk().Family("b").Qual("x").Ts(1000).Value("4").Commit(),
  })});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  const MergedRow& r = (*rows)[0];
  EXPECT_EQ(r.CellCount(), 4u);
  EXPECT_EQ(r.Cells("a", "x"),
            (std::vector<MergedCell>{{3000, "1", {}}, {2000, "2", {}}}));
  EXPECT_EQ(r.Latest("a", "y"), "3");
  EXPECT_EQ(r.Latest("b", "x"), "4");
  EXPECT_EQ(r.Family("c"), nullptr);
}

TEST(ChunkMergerTest, RepeatingEveryFieldIsAccepted) {
  // The official emulator's style: one response per row, every chunk
  // repeating key, family and qualifier.
  auto rows = Merge({
      Resp({Chunk().Key("r").Family("cf").Qual("q").Ts(2000).Value("a"),
            Chunk().Key("r").Family("cf").Qual("q").Ts(1000).Value("b"),
            Chunk()
                .Key("r")
                .Family("cf")
                .Qual("z")
                .Ts(1000)
                .Value("c")
                .Commit()}),
      Resp({Row("s")}),
  });
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].Cells("cf", "q").size(), 2u);
  EXPECT_EQ((*rows)[0].Latest("cf", "z"), "c");
}

TEST(ChunkMergerTest, ManyRowsInOneResponseAndOneRowAcrossResponses) {
  auto rows = Merge({
      Resp({Row("a"), Row("b"),
            Chunk().Key("c").Family("cf").Qual("q1").Ts(1000).Value("x")}),
      Resp({Chunk().Qual("q2").Ts(1000).Value("y")}),
      Resp({Chunk().Qual("q3").Ts(1000).Value("z").Commit(), Row("d")}),
  });
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ((*rows)[2].key, "c");
  EXPECT_EQ((*rows)[2].CellCount(), 3u);
  EXPECT_EQ((*rows)[3].key, "d");
}

TEST(ChunkMergerTest, SplitValueIsReassembled) {
  auto rows = Merge({
      Resp({Chunk()
                .Key("r")
                .Family("cf")
                .Qual("q")
                .Ts(7000)
                .Label("L")
                .Value("hel")
                .ValueSize(11)}),
      Resp({Chunk().Value("lo ").ValueSize(11)}),
      Resp({Chunk().Value("world").Commit()}),
  });
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].Cells("cf", "q"),
            (std::vector<MergedCell>{{7000, "hello world", {"L"}}}));
}

TEST(ChunkMergerTest, SplitValueFollowedByMoreCells) {
  auto rows = Merge({Resp({
      Chunk().Key("r").Family("cf").Qual("a").Ts(1000).Value("ab").ValueSize(4),
      Chunk().Value("cd"),
      Chunk().Qual("b").Ts(1000).Value("e").Commit(),
  })});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ((*rows)[0].Latest("cf", "a"), "abcd");
  EXPECT_EQ((*rows)[0].Latest("cf", "b"), "e");
}

TEST(ChunkMergerTest, ResetRowDiscardsTheRowInProgress) {
  auto rows = Merge({Resp({
      Row("a"),
      Chunk().Key("b").Family("cf").Qual("q").Ts(1000).Value("stale"),
      Chunk().Reset(),
      Chunk().Key("b").Family("cf").Qual("q").Ts(1000).Value("fresh").Commit(),
  })});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].Cells("cf", "q"),
            (std::vector<MergedCell>{{1000, "fresh", {}}}));
}

TEST(ChunkMergerTest, ResetRowInsideASplitValue) {
  auto rows = Merge({Resp({
      Chunk().Key("b").Family("cf").Qual("q").Ts(1000).Value("x").ValueSize(3),
      Chunk().Reset(),
      Row("b", "ok"),
  })});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].Latest("cf", "q"), "ok");
}

TEST(ChunkMergerTest, ReversedStreamDescends) {
  auto rows = Merge({Resp({Row("c"), Row("b"), Row("a")})}, /*reversed=*/true);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].key, "c");
  EXPECT_EQ((*rows)[2].key, "a");
}

TEST(ChunkMergerTest, RowKeysCompareAsUnsignedBytes) {
  auto rows = Merge({Resp({Row("a"), Row("\x7f"), Row("\x80"), Row("\xff")})});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->size(), 4u);
  ExpectRejected({Resp({Row("\x80"), Row("\x7f")})}, "not above");
}

TEST(ChunkMergerTest, DuplicateCellsWithEqualTimestampsAreAccepted) {
  // An interleave of two pass_all filters returns every cell twice.
  auto rows = Merge({Resp({
      Chunk().Key("r").Family("cf").Qual("q").Ts(1000).Value("v"),
      Chunk().Ts(1000).Value("v").Commit(),
  })});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ((*rows)[0].Cells("cf", "q").size(), 2u);
}

TEST(ChunkMergerTest, EmptyQualifierAndEmptyValueAreData) {
  auto rows = Merge({Resp({
      Chunk().Key("r").Family("cf").Qual("").Ts(0).Value(""),
      Chunk().Qual("q").Commit(),
  })});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ((*rows)[0].Cells("cf", ""), (std::vector<MergedCell>{{0, "", {}}}));
  EXPECT_EQ((*rows)[0].Cells("cf", "q"),
            (std::vector<MergedCell>{{0, "", {}}}));
}

TEST(ChunkMergerTest, LabelsAreKept) {
  auto rows = Merge({Resp({
      Chunk().Key("r").Family("cf").Qual("q").Ts(1000).Value("v").Label("a"),
      Chunk().Ts(0).Label("b").Commit(),
  })});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ((*rows)[0].Cells("cf", "q"),
            (std::vector<MergedCell>{{1000, "v", {"a"}}, {0, "", {"b"}}}));
}

TEST(ChunkMergerTest, LastScannedRowKeyIsAProgressMarker) {
  ReadRowsResponse marker;
  marker.set_last_scanned_row_key("m");
  auto rows = Merge({Resp({Row("a")}), marker, Resp({Row("n")})});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->size(), 2u);
}

TEST(ChunkMergerTest, IncrementalFeedExposesCommittedRows) {
  ChunkMerger merger;
  ASSERT_TRUE(
      merger
          .Feed(Resp(
              {Row("a"), Chunk().Key("b").Family("cf").Qual("q").Value("x")}))
          .ok());
  EXPECT_EQ(merger.rows().size(), 1u);
  ASSERT_TRUE(merger.Feed(Resp({Chunk().Commit().Value("y")})).ok());
  EXPECT_EQ(merger.rows().size(), 2u);
  EXPECT_EQ(merger.chunks_seen(), 3);
  EXPECT_TRUE(merger.Finish().ok());
  EXPECT_EQ(merger.TakeRows().size(), 2u);
  EXPECT_TRUE(merger.rows().empty());
}

// ---------------------------------------------------------- row ordering

TEST(ChunkMergerTest, RejectsDecreasingRows) {
  ExpectRejected({Resp({Row("b"), Row("a")})}, "not above");
}

TEST(ChunkMergerTest, RejectsIncreasingRowsWhenReversed) {
  ExpectRejected({Resp({Row("a"), Row("b")})}, "not below",
                 /*reversed=*/true);
}

TEST(ChunkMergerTest, RejectsDuplicateRow) {
  ExpectRejected({Resp({Row("a")}), Resp({Row("a")})}, "duplicate row key");
  ExpectRejected({Resp({Row("a"), Row("a")})}, "duplicate row key",
                 /*reversed=*/true);
}

TEST(ChunkMergerTest, RejectsRowKeyChangeWithoutCommit) {
  ExpectRejected(
      {Resp({Chunk().Key("a").Family("cf").Qual("q").Value("1"),
             Chunk().Key("b").Family("cf").Qual("q").Value("2").Commit()})},
      "row key changes");
}

TEST(ChunkMergerTest, RejectsRowsBehindLastScannedRowKey) {
  ReadRowsResponse marker;
  marker.set_last_scanned_row_key("m");
  ExpectRejected({Resp({Row("a")}), marker, Resp({Row("c")})},
                 "not beyond last_scanned_row_key");
  ReadRowsResponse back;
  back.set_last_scanned_row_key("a");
  ExpectRejected({Resp({Row("b")}), back}, "goes backwards");
}

// ------------------------------------------------------ first-chunk fields

TEST(ChunkMergerTest, RejectsFirstChunkWithoutRowKey) {
  ExpectRejected({Resp({Chunk().Family("cf").Qual("q").Value("v").Commit()})},
                 "no row_key");
  // Also after a committed row.
  ExpectRejected({Resp({Row("a"), Chunk().Family("cf").Qual("q").Commit()})},
                 "no row_key");
}

TEST(ChunkMergerTest, RejectsFirstChunkWithoutFamily) {
  ExpectRejected({Resp({Chunk().Key("r").Qual("q").Value("v").Commit()})},
                 "no family_name");
}

TEST(ChunkMergerTest, RejectsFirstChunkWithoutQualifier) {
  ExpectRejected({Resp({Chunk().Key("r").Family("cf").Value("v").Commit()})},
                 "without a qualifier");
  // Wrapper presence matters, not the contents: an unset wrapper differs
  // from an empty qualifier.
  auto ok = Merge({Resp({Chunk().Key("r").Family("cf").Qual("").Commit()})});
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
}

TEST(ChunkMergerTest, RejectsFamilyChangeWithoutQualifier) {
  ExpectRejected({Resp({Chunk().Key("r").Family("a").Qual("q").Value("1"),
                        Chunk().Family("b").Value("2").Commit()})},
                 "without a qualifier");
}

TEST(ChunkMergerTest, RejectsEmptyFamilyName) {
  ExpectRejected({Resp({Chunk().Key("r").Family("").Qual("q").Commit()})},
                 "empty family_name");
}

// --------------------------------------------------------------- reset_row

TEST(ChunkMergerTest, RejectsResetRowWithData) {
  ExpectRejected({Resp({Chunk().Key("r").Family("cf").Qual("q").Value("1"),
                        Chunk().Reset().Value("x")})},
                 "reset_row on a chunk that also carries data");
  ExpectRejected({Resp({Chunk().Key("r").Family("cf").Qual("q").Value("1"),
                        Chunk().Reset().Key("r")})},
                 "reset_row on a chunk that also carries data");
}

TEST(ChunkMergerTest, RejectsResetRowOutsideARow) {
  ExpectRejected({Resp({Chunk().Reset()})}, "reset_row outside a row");
  ExpectRejected({Resp({Row("a"), Chunk().Reset()})},
                 "reset_row outside a row");
}

// ------------------------------------------------------------ split values

TEST(ChunkMergerTest, RejectsSplitValueShorterThanValueSize) {
  ExpectRejected(
      {Resp({Chunk().Key("r").Family("cf").Qual("q").Value("ab").ValueSize(5),
             Chunk().Value("c").Commit()})},
      "value_size announced 5");
}

TEST(ChunkMergerTest, RejectsSplitValueLongerThanValueSize) {
  ExpectRejected(
      {Resp({Chunk().Key("r").Family("cf").Qual("q").Value("ab").ValueSize(3),
             Chunk().Value("cd").Commit()})},
      "value_size announced 3");
  ExpectRejected(
      {Resp({Chunk().Key("r").Family("cf").Qual("q").Value("abcd").ValueSize(
          3)})},
      "more than value_size");
  ExpectRejected(
      {Resp({Chunk().Key("r").Family("cf").Qual("q").Value("ab").ValueSize(3),
             Chunk().Value("cd").ValueSize(3)})},
      "more than value_size");
}

TEST(ChunkMergerTest, RejectsValueSizeChangeWithinACell) {
  ExpectRejected(
      {Resp({Chunk().Key("r").Family("cf").Qual("q").Value("ab").ValueSize(6),
             Chunk().Value("cd").ValueSize(5), Chunk().Value("ef").Commit()})},
      "value_size changes");
}

TEST(ChunkMergerTest, RejectsCommitBeforeTheValueIsComplete) {
  ExpectRejected({Resp({Chunk()
                            .Key("r")
                            .Family("cf")
                            .Qual("q")
                            .Value("ab")
                            .ValueSize(4)
                            .Commit()})},
                 "commit_row on a chunk whose value continues");
  ExpectRejected(
      {Resp({Chunk().Key("r").Family("cf").Qual("q").Value("a").ValueSize(4),
             Chunk().Value("b").ValueSize(4).Commit()})},
      "commit_row on a chunk whose value continues");
}

TEST(ChunkMergerTest, RejectsNegativeValueSize) {
  ExpectRejected({Resp({Chunk()
                            .Key("r")
                            .Family("cf")
                            .Qual("q")
                            .Value("a")
                            .ValueSize(-1)
                            .Commit()})},
                 "negative value_size");
}

TEST(ChunkMergerTest, RejectsTimestampOnContinuation) {
  ExpectRejected({Resp({Chunk()
                            .Key("r")
                            .Family("cf")
                            .Qual("q")
                            .Ts(2000)
                            .Value("a")
                            .ValueSize(2),
                        Chunk().Ts(2000).Value("b").Commit()})},
                 "continuation chunk of a split value carries timestamp");
}

TEST(ChunkMergerTest, RejectsLabelsOnContinuation) {
  ExpectRejected(
      {Resp({Chunk().Key("r").Family("cf").Qual("q").Value("a").ValueSize(2),
             Chunk().Label("l").Value("b").Commit()})},
      "continuation chunk of a split value carries labels");
}

TEST(ChunkMergerTest, RejectsKeyFamilyOrQualifierOnContinuation) {
  for (Chunk bad :
       {Chunk().Key("r"), Chunk().Family("cf").Qual("q"), Chunk().Qual("q")}) {
    ExpectRejected(
        {Resp({Chunk().Key("r").Family("cf").Qual("q").Value("a").ValueSize(2),
               bad.Value("b").Commit()})},
        "continuation chunk of a split value carries row_key");
  }
}

// ----------------------------------------------------------- bare chunks

TEST(ChunkMergerTest, RejectsBareCommitChunk) {
  ExpectRejected({Resp({Chunk().Key("r").Family("cf").Qual("q").Value("v"),
                        Chunk().Commit()})},
                 "bare commit_row chunk");
  // Also across a response boundary.
  ExpectRejected({Resp({Chunk().Key("r").Family("cf").Qual("q").Value("v")}),
                  Resp({Chunk().Commit()})},
                 "bare commit_row chunk");
}

TEST(ChunkMergerTest, RejectsBareChunkWithoutCommit) {
  ExpectRejected({Resp({Chunk().Key("r").Family("cf").Qual("q").Value("v"),
                        Chunk(), Chunk().Value("w").Commit()})},
                 "bare chunk");
}

TEST(ChunkMergerTest, EndOfSplitValueIsNotABareChunk) {
  // The last piece of a split value may be empty and carry only commit_row.
  auto rows = Merge({Resp({
      Chunk().Key("r").Family("cf").Qual("q").Value("ab").ValueSize(2),
      Chunk().Commit(),
  })});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ((*rows)[0].Latest("cf", "q"), "ab");
}

// ------------------------------------------------------- cell ordering

TEST(ChunkMergerTest, RejectsNonContiguousFamily) {
  ExpectRejected({Resp({Chunk().Key("r").Family("a").Qual("q").Value("1"),
                        Chunk().Family("b").Qual("q").Value("2"),
                        Chunk().Family("a").Qual("z").Value("3").Commit()})},
                 "are not contiguous");
}

TEST(ChunkMergerTest, FamiliesMayComeInAnyOrder) {
  auto rows =
      Merge({Resp({Chunk().Key("r").Family("z").Qual("q").Value("1"),
                   Chunk().Family("a").Qual("q").Value("2").Commit()})});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ((*rows)[0].families.size(), 2u);
  EXPECT_EQ((*rows)[0].families[0].name, "z");
}

TEST(ChunkMergerTest, RejectsDescendingQualifiers) {
  ExpectRejected({Resp({Chunk().Key("r").Family("cf").Qual("b").Value("1"),
                        Chunk().Qual("a").Value("2").Commit()})},
                 "is below the previous qualifier");
  // Also when the family is repeated explicitly.
  ExpectRejected({Resp({Chunk().Key("r").Family("cf").Qual("b").Value("1"),
                        Chunk().Family("cf").Qual("a").Value("2").Commit()})},
                 "is below the previous qualifier");
}

TEST(ChunkMergerTest, RejectsAscendingTimestampsWithinAColumn) {
  ExpectRejected(
      {Resp({Chunk().Key("r").Family("cf").Qual("q").Ts(1000).Value("1"),
             Chunk().Ts(2000).Value("2").Commit()})},
      "is above the previous cell's 1000");
  // A new column restarts the order.
  auto ok = Merge({Resp({Chunk().Key("r").Family("cf").Qual("a").Ts(1000),
                         Chunk().Qual("b").Ts(2000).Commit()})});
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
}

// ------------------------------------------------------------ stream end

TEST(ChunkMergerTest, RejectsStreamEndingMidRow) {
  ExpectRejected(
      {Resp({Row("a"), Chunk().Key("b").Family("cf").Qual("q").Value("v")})},
      "stream ended in the middle of a row");
}

TEST(ChunkMergerTest, RejectsStreamEndingMidValue) {
  ExpectRejected(
      {Resp({Chunk().Key("b").Family("cf").Qual("q").Value("v").ValueSize(9)})},
      "stream ended in the middle of a split value");
}

TEST(ChunkMergerTest, StaysFailedAfterAnError) {
  ChunkMerger merger;
  Status first = merger.Feed(Resp({Chunk().Reset()}));
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(merger.Feed(Resp({Row("a")})), first);
  EXPECT_EQ(merger.Finish(), first);
  EXPECT_TRUE(merger.rows().empty());
}

TEST(ChunkMergerTest, ErrorNamesTheChunkAndRow) {
  auto result =
      Merge({Resp({Row("a"), Chunk().Key("b").Family("cf").Qual("q").Value("v"),
                   Chunk().Commit()})});
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("chunk 2"));
  EXPECT_THAT(result.status().message(), HasSubstr("row 'b'"));
}

}  // namespace
}  // namespace btsim::api_test
