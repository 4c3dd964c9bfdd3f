#include "scenarios/json_printer.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "btsim/report/v1/report.pb.h"

namespace btsim::scenarios {
namespace {

namespace v1 = ::btsim::report::v1;

// Decodes UTF-8 of code points below U+0800 (enough for AssignJsonText).
std::vector<int> CodePoints(const std::string& utf8) {
  std::vector<int> out;
  for (size_t i = 0; i < utf8.size(); ++i) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    if (c < 0x80) {
      out.push_back(c);
    } else {
      out.push_back(((c & 0x1f) << 6) |
                    (static_cast<unsigned char>(utf8[++i]) & 0x3f));
    }
  }
  return out;
}

TEST(JsonTextTest, EveryByteBecomesTheCodePointOfItsValue) {
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<char>(b));
  const std::string text = JsonText(bytes);
  EXPECT_EQ(text.size(), 128u + 2 * 128u);
  const std::vector<int> points = CodePoints(text);
  ASSERT_EQ(points.size(), 256u);
  for (int b = 0; b < 256; ++b) EXPECT_EQ(points[b], b);
  EXPECT_EQ(JsonText("row-17/a"), "row-17/a");
}

TEST(JsonTextTest, AssignReusesTheString) {
  std::string out = "something longer than what comes";
  AssignJsonText("\xe9t\xe9", out);
  EXPECT_EQ(out, "\xc3\xa9t\xc3\xa9");
  AssignJsonText("ab", out);
  EXPECT_EQ(out, "ab");
}

TEST(RoundTest, RoundsAsPrintfDoes) {
  EXPECT_EQ(RoundToDecimals(12.3456789, 3), 12.346);
  // 0.0135 is stored a little below itself, 0.0145 a little above.
  EXPECT_EQ(RoundToDecimals(0.0135, 3), 0.013);
  EXPECT_EQ(RoundToDecimals(0.0145, 3), 0.015);
  EXPECT_EQ(RoundToDecimals(2000, 1), 2000.0);
  EXPECT_EQ(RoundToSignificant(0.097884057, 6), 0.0978841);
  EXPECT_EQ(RoundToSignificant(1234567.0, 6), 1234570.0);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(RoundToDecimals(inf, 3), inf);
  EXPECT_TRUE(std::isnan(RoundToSignificant(std::nan(""), 6)));
}

TEST(JsonPrinterTest, PrintsEveryPlainFieldAndOnlySetOptionalOnes) {
  JsonPrinter printer(JsonPrinter::Layout::kOneLine);
  v1::ClientFailover c;
  c.set_client("a-0");
  // Map keys come out sorted whatever the insertion order.
  (*c.mutable_errors())["UNAVAILABLE"] = 3;
  (*c.mutable_errors())["ABORTED"] = 1;
  (*c.mutable_errors())["DEADLINE_EXCEEDED"] = 2;
  c.set_failback_seconds(0);  // set to zero: still printed
  std::string json;
  ASSERT_TRUE(printer.Print(c, json).ok());
  EXPECT_EQ(json,
            "{\"client\":\"a-0\",\"recovered\":false,\"errors\":{"
            "\"ABORTED\":1,\"DEADLINE_EXCEEDED\":2,\"UNAVAILABLE\":3},"
            "\"failback_seconds\":0}");
}

TEST(JsonPrinterTest, SixtyFourBitIntegersAreStringsAndListsAlwaysThere) {
  JsonPrinter printer(JsonPrinter::Layout::kOneLine);
  v1::Report report;
  report.set_seed(18'446'744'073'709'551'615u);
  report.set_duration_seconds(60);
  std::string json;
  ASSERT_TRUE(printer.Print(report, json).ok());
  EXPECT_NE(json.find("\"seed\":\"18446744073709551615\""), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"duration_seconds\":60,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"expectations\":[]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"passed\":false"), std::string::npos) << json;
  EXPECT_EQ(json.find("settled_seconds"), std::string::npos) << json;
}

// Any bytes print on one line, and protobuf's parser gives them back.
TEST(JsonPrinterTest, AnyRowKeyPrintsOnOneLineAndParsesBack) {
  const std::vector<std::string> rows = {
      "plain", "}",     "{\"a\":[1]},{", "\"",
      "\\",    "\\\"}", "\xff\x00}]\n",  std::string("nul\0byte", 8),
      ""};
  JsonPrinter printer(JsonPrinter::Layout::kOneLine);
  for (size_t i = 0; i < rows.size(); ++i) {
    v1::Operation op;
    op.set_id(static_cast<uint32_t>(i));
    op.set_row(JsonText(rows[i]));
    op.set_counter(-5);
    std::string json;
    ASSERT_TRUE(printer.Print(op, json).ok());
    EXPECT_EQ(json.find('\n'), std::string::npos) << json;
    v1::Operation parsed;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok())
        << json;
    EXPECT_EQ(parsed.row(), op.row()) << json;
    EXPECT_EQ(parsed.counter(), -5);
  }
  v1::Operation op;
  op.set_id(0);
  op.set_row("plain");
  op.set_counter(-5);
  std::string json;
  ASSERT_TRUE(printer.Print(op, json).ok());
  EXPECT_EQ(json, "{\"id\":0,\"row\":\"plain\",\"counter\":\"-5\"}");
}

TEST(JsonPrinterTest, IndentedLayoutIsForPeople) {
  v1::Cluster cluster;
  cluster.set_id("c1");
  cluster.set_rows(7);
  JsonPrinter printer(JsonPrinter::Layout::kIndented);
  std::string json;
  ASSERT_TRUE(printer.Print(cluster, json).ok());
  EXPECT_EQ(json, "{\n \"id\": \"c1\",\n \"digest\": \"\",\n \"rows\": 7\n}");
}

}  // namespace
}  // namespace btsim::scenarios
