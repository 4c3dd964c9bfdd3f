#include "base/status.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace btsim {
namespace {

using ::testing::HasSubstr;

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_EQ(s, OkStatus());
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = InvalidArgument("row_key: must not be empty");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "row_key: must not be empty");
  EXPECT_EQ(s.ToString(), "INVALID_ARGUMENT: row_key: must not be empty");
}

TEST(StatusTest, HelpersProduceTheirCodes) {
  EXPECT_EQ(NotFound("x").code(), StatusCode::kNotFound);
  EXPECT_EQ(AlreadyExists("x").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(FailedPrecondition("x").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Unavailable("x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(Unimplemented("x").code(), StatusCode::kUnimplemented);
  EXPECT_EQ(Aborted("x").code(), StatusCode::kAborted);
  EXPECT_EQ(Internal("x").code(), StatusCode::kInternal);
}

TEST(StatusTest, EqualityComparesCodeAndMessage) {
  EXPECT_EQ(NotFound("a"), NotFound("a"));
  EXPECT_NE(NotFound("a"), NotFound("b"));
  EXPECT_NE(NotFound("a"), Internal("a"));
  EXPECT_NE(NotFound(""), OkStatus());
}

TEST(StatusTest, CodesMatchGrpcNumbering) {
  EXPECT_EQ(static_cast<int>(StatusCode::kOk), 0);
  EXPECT_EQ(static_cast<int>(StatusCode::kInvalidArgument), 3);
  EXPECT_EQ(static_cast<int>(StatusCode::kNotFound), 5);
  EXPECT_EQ(static_cast<int>(StatusCode::kFailedPrecondition), 9);
  EXPECT_EQ(static_cast<int>(StatusCode::kUnavailable), 14);
  EXPECT_EQ(static_cast<int>(StatusCode::kUnauthenticated), 16);
}

TEST(StatusCodeNameTest, NamesEveryCanonicalCode) {
  const std::vector<std::pair<StatusCode, std::string>> expected = {
      {StatusCode::kOk, "OK"},
      {StatusCode::kCancelled, "CANCELLED"},
      {StatusCode::kUnknown, "UNKNOWN"},
      {StatusCode::kInvalidArgument, "INVALID_ARGUMENT"},
      {StatusCode::kDeadlineExceeded, "DEADLINE_EXCEEDED"},
      {StatusCode::kNotFound, "NOT_FOUND"},
      {StatusCode::kAlreadyExists, "ALREADY_EXISTS"},
      {StatusCode::kPermissionDenied, "PERMISSION_DENIED"},
      {StatusCode::kResourceExhausted, "RESOURCE_EXHAUSTED"},
      {StatusCode::kFailedPrecondition, "FAILED_PRECONDITION"},
      {StatusCode::kAborted, "ABORTED"},
      {StatusCode::kOutOfRange, "OUT_OF_RANGE"},
      {StatusCode::kUnimplemented, "UNIMPLEMENTED"},
      {StatusCode::kInternal, "INTERNAL"},
      {StatusCode::kUnavailable, "UNAVAILABLE"},
      {StatusCode::kDataLoss, "DATA_LOSS"},
      {StatusCode::kUnauthenticated, "UNAUTHENTICATED"},
  };
  for (const auto& [code, name] : expected) {
    EXPECT_EQ(StatusCodeName(code), name) << static_cast<int>(code);
  }
}

TEST(StatusCodeNameTest, OutOfRangeValueIsUnknown) {
  EXPECT_EQ(StatusCodeName(static_cast<StatusCode>(99)), "UNKNOWN");
}

Status FailIf(bool fail) {
  if (fail) return Aborted("failed");
  return OkStatus();
}

Status ReturnIfErrorCaller(bool fail, int* reached) {
  BTSIM_RETURN_IF_ERROR(FailIf(fail));
  ++*reached;
  return OkStatus();
}

TEST(StatusTest, ReturnIfErrorPropagatesErrorsOnly) {
  int reached = 0;
  EXPECT_TRUE(ReturnIfErrorCaller(false, &reached).ok());
  EXPECT_EQ(reached, 1);
  Status s = ReturnIfErrorCaller(true, &reached);
  EXPECT_EQ(s, Aborted("failed"));
  EXPECT_EQ(reached, 1);
}

TEST(ResultTest, HoldsValue) {
  Result<int> r = 42;
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.status().ok());
  EXPECT_EQ(r.value(), 42);
  EXPECT_EQ(*r, 42);
}

TEST(ResultTest, HoldsError) {
  Result<int> r = NotFound("table 't' not found");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("table 't'"));
}

TEST(ResultTest, ArrowAndMoveOutOfValue) {
  Result<std::string> r = std::string("hello");
  EXPECT_EQ(r->size(), 5u);
  r->append("!");
  std::string moved = std::move(r).value();
  EXPECT_EQ(moved, "hello!");

  Result<std::unique_ptr<int>> p = std::make_unique<int>(7);
  std::unique_ptr<int> owned = std::move(p).value();
  ASSERT_NE(owned, nullptr);
  EXPECT_EQ(*owned, 7);
}

TEST(ResultDeathTest, ValueOfErrorAborts) {
  Result<int> r = Internal("boom");
  EXPECT_DEATH((void)r.value(), "invariant failed");
}

TEST(ResultDeathTest, ConstructingFromOkStatusAborts) {
  EXPECT_DEATH(
      {
        Result<int> r = OkStatus();
        (void)r;
      },
      "invariant failed");
}

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  BTSIM_ASSIGN_OR_RETURN(int half, Half(x));
  BTSIM_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

TEST(AssignOrReturnTest, AssignsOnSuccess) {
  Result<int> r = Quarter(12);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 3);
}

TEST(AssignOrReturnTest, ReturnsFirstError) {
  Result<int> r = Quarter(7);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status(), InvalidArgument("odd: 7"));
}

TEST(AssignOrReturnTest, ReturnsLaterError) {
  Result<int> r = Quarter(6);  // 6 -> 3 -> odd
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status(), InvalidArgument("odd: 3"));
}

Status UseMoveOnly(Result<std::unique_ptr<int>> in, int* out) {
  BTSIM_ASSIGN_OR_RETURN(std::unique_ptr<int> p, std::move(in));
  *out = *p;
  return OkStatus();
}

TEST(AssignOrReturnTest, WorksWithMoveOnlyTypesAndStatusReturn) {
  int out = 0;
  EXPECT_TRUE(UseMoveOnly(std::make_unique<int>(5), &out).ok());
  EXPECT_EQ(out, 5);
  EXPECT_EQ(UseMoveOnly(Unavailable("down"), &out), Unavailable("down"));
}

TEST(QuoteForErrorTest, QuotesPrintableTextAsItIs) {
  EXPECT_EQ(QuoteForError("my-table_1"), "'my-table_1'");
}

TEST(QuoteForErrorTest, EscapesBytesOutsidePrintableAscii) {
  // The quote is ASCII, so that it is valid UTF-8 wherever it goes.
  EXPECT_EQ(QuoteForError(std::string("a\xe3\n\0\\b", 6)),
            "'a\\xe3\\x0a\\x00\\\\b'");
}

TEST(QuoteForErrorTest, CutsLongTextAndSaysHowLong) {
  EXPECT_EQ(QuoteForError(std::string(200, 'x')),
            "'" + std::string(kMaxQuotedBytes, 'x') + "...' (200 bytes)");
}

}  // namespace
}  // namespace btsim
