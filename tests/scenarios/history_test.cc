#include "scenarios/history.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace btsim::scenarios {
namespace {

TEST(RowStatesTest, KeepsKeysInOrderWhicheverWayRowsArrive) {
  NamePool names;
  auto key = [&](std::string_view table, std::string_view row) {
    return RowStates::Key{names.Intern(table), names.Store(row)};
  };
  RowStates rows;
  rows.Append(key("a", "r1"), RowState{names.MakeTag("x/1"),
                                       cluster::TimestampFromMicros(5), 7, 0});
  rows.Append(key("a", "r3"), RowState{});
  rows.Append(key("b", "r0"), RowState{});
  rows[key("a", "r2")].counter = 4;  // between existing keys
  rows[key("a", "r1")].counter = 9;  // present: found, not added
  ASSERT_EQ(rows.size(), 4u);
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& [k, state] : rows) {
    keys.emplace_back(k.first.str(), k.second.str());
  }
  EXPECT_EQ(keys, (std::vector<std::pair<std::string, std::string>>{
                      {"a", "r1"}, {"a", "r2"}, {"a", "r3"}, {"b", "r0"}}));
  const RowState* r1 = rows.Find("a", "r1");
  ASSERT_NE(r1, nullptr);
  EXPECT_EQ(names.Text(r1->tag), "x/1");
  EXPECT_EQ(r1->counter, 9);
  EXPECT_EQ(rows.Find("a", "r4"), nullptr);
  EXPECT_EQ(rows.Find("b", "r1"), nullptr);
  EXPECT_EQ(rows.Find("a", "r"), nullptr);  // a prefix of a key
  EXPECT_EQ(rows.Find("", "r1"), nullptr);
  EXPECT_EQ(rows.Find("c", ""), nullptr);  // past the end
  // Keys order by table, then row, as strings.
  EXPECT_NE(rows.Find("b", "r0"), nullptr);
  EXPECT_EQ(rows.Find("b", "r0")->counter, 0);
}

TEST(RowStatesDeathTest, AppendOutOfOrderAborts) {
  NamePool names;
  RowStates rows;
  rows.Append({names.Intern("t"), names.Store("b")}, RowState{});
  EXPECT_DEATH(rows.Append({names.Intern("t"), names.Store("a")}, RowState{}),
               "");
  EXPECT_DEATH(rows.Append({names.Intern("t"), names.Store("b")}, RowState{}),
               "");
}

TEST(RowsOfTest, FollowsSameAs) {
  History history;
  history.final_state.push_back({"c1", "d", {}, std::nullopt, {}});
  history.final_state[0].rows.Append(
      {history.names->Intern("t"), history.names->Store("r")},
      RowState{history.names->MakeTag("w/1"), cluster::TimestampFromMicros(1),
               1, 0});
  history.final_state.push_back({"c2", "d", {}, 0, {}});
  EXPECT_EQ(&RowsOf(history, 1), &history.final_state[0].rows);
  EXPECT_EQ(&RowsOf(history, 0), &history.final_state[0].rows);
}

TEST(ParseTagTest, SplitsClientTagsAndRejectsOthers) {
  std::string_view client;
  uint64_t n = 0;
  ASSERT_TRUE(ParseTag("writer-3/42", &client, &n));
  EXPECT_EQ(client, "writer-3");
  EXPECT_EQ(n, 42u);
  ASSERT_TRUE(ParseTag("a/b/0", &client, &n));  // the last slash splits
  EXPECT_EQ(client, "a/b");
  EXPECT_EQ(n, 0u);
  ASSERT_TRUE(ParseTag("/999999999", &client, &n));
  EXPECT_EQ(client, "");
  EXPECT_EQ(n, 999999999u);
  for (std::string_view other :
       {"", "w", "w/", "w/01", "w/1x", "w/-1", "w/1000000000"}) {
    EXPECT_FALSE(ParseTag(other, &client, &n)) << other;
  }
}

}  // namespace
}  // namespace btsim::scenarios
