#include "cli/load_workloads.h"

#include <cctype>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace btsim::cli {
namespace {

TEST(LoadKeyTest, SixteenBytesDeterministicAndDistinct) {
  std::set<std::string> keys;
  for (uint64_t i = 0; i < 100'000; ++i) {
    const std::string key = LoadKey('w', 1, i);
    ASSERT_EQ(key.size(), 16u);
    ASSERT_EQ(key[0], 'w');
    keys.insert(key);
  }
  EXPECT_EQ(keys.size(), 100'000u);
  EXPECT_EQ(LoadKey('r', 7, 42), LoadKey('r', 7, 42));
  EXPECT_NE(LoadKey('r', 7, 42), LoadKey('r', 8, 42));
}

TEST(LoadValueTest, TwentyBytesDeterministic) {
  EXPECT_EQ(LoadValue(1, 5).size(), 20u);
  EXPECT_EQ(LoadValue(1, 5), LoadValue(1, 5));
  EXPECT_NE(LoadValue(1, 5), LoadValue(1, 6));
}

TEST(LoadKeyTest, AssignWritesTheSameBytesIntoAReusedString) {
  std::string key = "a much longer string that was here before";
  std::string value;
  for (uint64_t i = 0; i < 1000; ++i) {
    AssignLoadKey(&key, 'w', 3, i);
    AssignLoadValue(&value, 3, i);
    ASSERT_EQ(key, LoadKey('w', 3, i));
    ASSERT_EQ(value, LoadValue(3, i));
    for (size_t k = 1; k < key.size(); ++k) {
      ASSERT_TRUE(std::isxdigit(static_cast<unsigned char>(key[k])) &&
                  !std::isupper(static_cast<unsigned char>(key[k])))
          << key;
    }
    for (char c : value) ASSERT_TRUE(c >= '0' && c <= '9') << value;
  }
}

TEST(PercentileTest, NearestRank) {
  std::vector<int64_t> values;
  for (int64_t v = 100; v >= 1; --v) values.push_back(v);
  EXPECT_EQ(Percentile(values, 0.50), 50);
  EXPECT_EQ(Percentile(values, 0.99), 99);
  EXPECT_EQ(Percentile(values, 1.0), 100);
  std::vector<int64_t> one = {7};
  EXPECT_EQ(Percentile(one, 0.5), 7);
  std::vector<int64_t> none;
  EXPECT_EQ(Percentile(none, 0.5), 0);
}

TEST(FormatTest, CsvAndJsonCarryEveryField) {
  WorkloadResult r;
  r.workload = "mutate_rows";
  r.label = "mutate_rows/4t";
  r.threads = 4;
  r.requests = 10;
  r.items = 1000;
  r.unit = "rows/s";
  r.seconds = 0.5;
  r.rate = 2000;
  r.p50_us = 120.5;
  r.p99_us = 900;
  r.errors = 1;
  r.first_error = "UNAVAILABLE: \"down\"";
  EXPECT_EQ(FormatCsv(r),
            "mutate_rows,mutate_rows/4t,4,10,1000,rows/s,0.5000,2000.0,120.5,"
            "900.0,1");
  // The JSON printer gives numbers their shortest form (0.5, not 0.5000).
  Result<std::string> json = FormatJson(r);
  ASSERT_TRUE(json.ok()) << json.status().message();
  EXPECT_EQ(*json,
            "{\"workload\":\"mutate_rows\",\"label\":\"mutate_rows/4t\","
            "\"unit\":\"rows/s\",\"threads\":4,\"requests\":10,"
            "\"items\":1000,\"seconds\":0.5,\"rate\":2000,\"p50_us\":120.5,"
            "\"p99_us\":900,\"errors\":1,"
            "\"first_error\":\"UNAVAILABLE: \\\"down\\\"\"}");
  EXPECT_NE(FormatText(r).find("mutate_rows/4t"), std::string::npos);
  EXPECT_NE(FormatText(r).find("errors 1"), std::string::npos);
}

TEST(FormatTest, JsonRoundsAsTheCsvDoesAndKeepsEveryByte) {
  WorkloadResult r;
  r.workload = "scan";
  r.label = "scan/1t";
  r.threads = 1;
  r.requests = 5'000'000'000;  // past 32 bits, still a JSON number
  r.items = 3;
  r.unit = "rows/s";
  r.seconds = 1.23456;
  r.rate = 2.43;
  r.p50_us = 0.04;
  r.p99_us = 12.345;
  r.errors = 0;
  r.first_error = std::string("row \xff\x01", 6);
  Result<std::string> json = FormatJson(r);
  ASSERT_TRUE(json.ok()) << json.status().message();
  EXPECT_EQ(*json,
            "{\"workload\":\"scan\",\"label\":\"scan/1t\",\"unit\":"
            "\"rows/s\",\"threads\":1,\"requests\":5000000000,\"items\":3,"
            "\"seconds\":1.2346,\"rate\":2.4,\"p50_us\":0,\"p99_us\":12.3,"
            "\"errors\":0,\"first_error\":\"row \xc3\xbf\\u0001\"}");
}

}  // namespace
}  // namespace btsim::cli
