#include "scenarios/name_pool.h"

#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scenarios/history.h"

namespace btsim::scenarios {
namespace {

TEST(NamePoolTest, InterningTheSameTextTwiceKeepsOneCopy) {
  NamePool pool;
  const Name a = pool.Intern("writer-1");
  const Name b = pool.Intern(std::string("writer-") + "1");
  EXPECT_EQ(pool.size(), 1u);
  EXPECT_EQ(a.view().data(), b.view().data());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.view(), "writer-1");
  EXPECT_EQ(a.size(), 8u);
}

TEST(NamePoolTest, TheEmptyNameNeedsNoPool) {
  NamePool pool;
  const Name none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none, "");
  EXPECT_EQ(pool.Intern(""), none);
  EXPECT_EQ(pool.size(), 0u);
  EXPECT_FALSE(pool.Intern("c1").empty());
}

TEST(NamePoolTest, NamesCompareByContentAcrossPoolsAndWithStrings) {
  NamePool one;
  NamePool two;
  const Name a = one.Intern("c1");
  const Name b = two.Intern("c1");
  EXPECT_NE(a.view().data(), b.view().data());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, std::string("c1"));
  EXPECT_EQ(std::string("c1"), a);
  EXPECT_NE(a, "c2");
  EXPECT_LT(a, one.Intern("c2"));
  EXPECT_LT(Name(), a);
  EXPECT_GT(one.Intern("c10"), std::string_view("c1"));
  std::ostringstream out;
  out << a << "/" << Name();
  EXPECT_EQ(out.str(), "c1/");
}

TEST(NamePoolTest, NamesStayValidAsThePoolGrows) {
  NamePool pool;
  const Name first = pool.Intern("first");
  for (int i = 0; i < 1000; ++i) pool.Intern("n" + std::to_string(i));
  EXPECT_EQ(first.view(), "first");
  EXPECT_EQ(pool.Intern("first").view().data(), first.view().data());
}

TEST(NamePoolTest, StoringKeepsACopyOfEveryTextOfAnyLength) {
  NamePool pool;
  // Lengths around the varint's byte boundaries, a text that gets a block
  // of its own, and enough texts to fill several blocks.
  std::vector<std::string> texts;
  for (size_t n : {1, 126, 127, 128, 129, 16383, 16384, 16385, 70000}) {
    texts.push_back(std::string(n, static_cast<char>('a' + n % 26)));
  }
  for (int i = 0; i < 20000; ++i) texts.push_back("row" + std::to_string(i));
  std::vector<Name> names;
  for (const std::string& text : texts) names.push_back(pool.Store(text));
  for (size_t i = 0; i < texts.size(); ++i) {
    ASSERT_EQ(names[i].view(), texts[i]) << i;
    ASSERT_EQ(names[i].size(), texts[i].size()) << i;
  }
  EXPECT_EQ(pool.size(), 0u);  // stored texts are not interned
  // Storing the same text again makes another copy, equal by content.
  const Name again = pool.Store("row7");
  EXPECT_NE(again.view().data(), names[9 + 7].view().data());
  EXPECT_EQ(again, names[9 + 7]);
  // Interning finds interned texts only.
  const Name interned = pool.Intern("row7");
  EXPECT_NE(interned.view().data(), again.view().data());
  EXPECT_EQ(pool.Intern(std::string(16385, 'x')).size(), 16385u);
  EXPECT_EQ(pool.Intern(std::string(16385, 'x')).view().data(),
            pool.Intern(std::string(16385, 'x')).view().data());
  EXPECT_TRUE(pool.Store("").empty());
  EXPECT_EQ(pool.Store("").view().data(), nullptr);
}

TEST(NamePoolTest, ALongTagIsAHashOfItsText) {
  NamePool pool;
  const std::string at_limit(NamePool::kMaxTagText, 'a');
  EXPECT_EQ(pool.Text(pool.MakeTag(at_limit)), at_limit);

  const std::string big(1 << 20, 'x');
  std::string other = big;
  other.back() = 'y';
  const Tag tag = pool.MakeTag(big);
  const std::string text = pool.Text(tag);
  ASSERT_EQ(text.size(), 33u) << text;
  EXPECT_EQ(text[0], '#');
  EXPECT_EQ(text.find_first_not_of("0123456789abcdef", 1), std::string::npos);
  EXPECT_TRUE(pool.MakeTag(big) == tag);     // equal values, equal tags
  EXPECT_FALSE(pool.MakeTag(other) == tag);  // one byte differs
  EXPECT_EQ(pool.MakeTag(text), pool.MakeTag(text));  // a reloaded history
  EXPECT_EQ(pool.Text(pool.MakeTag(text)), text);

  // A long text of the simulated clients' form: compact while its client
  // name is short, else hashed (the client is not kept).
  const std::string long_tag = std::string(200, 'c') + "/7";
  EXPECT_EQ(pool.Text(pool.MakeTag(long_tag)).size(), 33u);
  const std::string compact = "writer-1/" + std::string(9, '9');
  EXPECT_TRUE(pool.MakeTag(compact).compact());
}

TEST(NamePoolTest, EqualSourcesAreOneSource) {
  NamePool pool;
  const OpSource* a = pool.Source("writer-1", "writer", "default", "t");
  const OpSource* b =
      pool.Source(std::string("writer-") + "1", "writer", "default", "t");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a->client, "writer-1");
  EXPECT_EQ(a->group, "writer");
  EXPECT_EQ(a->profile, "default");
  EXPECT_EQ(a->table, "t");
  // Its names are interned: the same texts as Intern gives.
  EXPECT_EQ(a->client.view().data(), pool.Intern("writer-1").view().data());
  // Any differing name makes another source.
  EXPECT_NE(pool.Source("writer-2", "writer", "default", "t"), a);
  EXPECT_NE(pool.Source("writer-1", "other", "default", "t"), a);
  EXPECT_NE(pool.Source("writer-1", "writer", "multi", "t"), a);
  EXPECT_NE(pool.Source("writer-1", "writer", "default", "u"), a);
  // An operation nobody gave a source has empty names.
  const Operation op;
  EXPECT_TRUE(op.client().empty());
  EXPECT_TRUE(op.table().empty());
}

TEST(NamePoolTest, CopiesOfAHistoryShareItsNames) {
  History original;
  Operation op;
  op.source = original.names->Source("writer-1", "writer", "p", "t");
  original.operations.push_back(op);
  History copy = original;
  original = History();  // the copy keeps the pool alive
  EXPECT_EQ(copy.operations[0].client(), "writer-1");
  EXPECT_EQ(copy.operations[0].table(), "t");
  EXPECT_NE(copy.names, original.names);
}

}  // namespace
}  // namespace btsim::scenarios
