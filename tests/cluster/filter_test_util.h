// Helpers shared by the filter tests: a row that owns its cells, the sample
// row most tests use, evaluation to rendered cells, and result checks.
#ifndef BTSIM_TESTS_CLUSTER_FILTER_TEST_UTIL_H_
#define BTSIM_TESTS_CLUSTER_FILTER_TEST_UTIL_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "cluster/cell_view.h"
#include "cluster/filter.h"
#include "sim/rng.h"

namespace btsim::cluster::filter_test_util {

struct TestCell {
  std::string family;
  std::string qualifier;
  int64_t timestamp_micros;  // since the epoch
  std::string value;
};

// A row that owns its bytes; the views stay valid while the row lives.
class Row {
 public:
  Row(std::string key, std::vector<TestCell> cells)
      : key_(std::move(key)), cells_(std::move(cells)) {
    for (const TestCell& c : cells_) {
      views_.push_back(CellView{c.family, c.qualifier,
                                TimestampFromMicros(c.timestamp_micros),
                                c.value});
    }
  }
  Row(const Row&) = delete;
  Row& operator=(const Row&) = delete;

  const std::string& key() const { return key_; }
  const std::vector<CellView>& views() const { return views_; }

 private:
  std::string key_;
  std::vector<TestCell> cells_;
  std::vector<CellView> views_;
};

inline std::string Render(const CellView& c) {
  std::string s = std::string(c.family) + ":" + std::string(c.qualifier) + "@" +
                  std::to_string(Micros(c.timestamp)) + "=" +
                  std::string(c.value);
  if (c.label != nullptr) s += "[" + *c.label + "]";
  return s;
}

inline std::vector<std::string> Render(const std::vector<CellView>& cells) {
  std::vector<std::string> out;
  for (const CellView& c : cells) out.push_back(Render(c));
  return out;
}

inline std::vector<std::string> Eval(const Filter& filter, const Row& row,
                                     uint64_t seed = 1) {
  sim::Rng rng(seed);
  std::vector<CellView> out;
  filter.Apply(row.key(), row.views(), rng, &out);
  EXPECT_TRUE(std::is_sorted(out.begin(), out.end(), CanonicalLess));
  return Render(out);
}

// The fixed row most tests use, in canonical order.
inline const Row& Sample() {
  static const Row* row = new Row("row1", {
                                              {"A", "A", 3000, "a3"},
                                              {"A", "A", 1000, "a1"},
                                              {"A", "B", 2000, "b2"},
                                              {"B", "A", 5000, "ba5"},
                                              {"B", "C", 4000, ""},
                                          });
  return *row;
}

inline const std::vector<std::string> kAll = {
    "A:A@3000=a3", "A:A@1000=a1", "A:B@2000=b2", "B:A@5000=ba5", "B:C@4000="};

template <typename T>
T Ok(Result<T> result) {
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return std::move(result).value();
}

inline std::unique_ptr<Filter> Ptr(Filter f) {
  return std::make_unique<Filter>(std::move(f));
}

template <typename... F>
std::vector<Filter> List(F... filters) {
  std::vector<Filter> v;
  (v.push_back(std::move(filters)), ...);
  return v;
}

inline void ExpectInvalid(const Status& status, std::string_view needle) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_THAT(status.message(), ::testing::HasSubstr(std::string(needle)));
}

template <typename T>
void ExpectInvalid(const Result<T>& result, std::string_view needle) {
  ASSERT_FALSE(result.ok());
  ExpectInvalid(result.status(), needle);
}

}  // namespace btsim::cluster::filter_test_util

#endif  // BTSIM_TESTS_CLUSTER_FILTER_TEST_UTIL_H_
