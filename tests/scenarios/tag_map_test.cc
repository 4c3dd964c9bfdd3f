#include "scenarios/tag_map.h"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace btsim::scenarios {
namespace {

TEST(TagMapTest, KeepsClientTagsAndOtherTagsApart) {
  NamePool names;
  const std::vector<std::string> tags = {"w-0/1",  "w-0/7", "w-1/1",
                                         "w-0/01", "plain", "w-0/100"};
  TagMap<int> map(/*max_slots=*/50, /*absent=*/-1);
  for (size_t i = 0; i < tags.size(); ++i) {
    map[names.MakeTag(tags[i])] = static_cast<int>(i);
  }
  for (size_t i = 0; i < tags.size(); ++i) {
    // Another Tag of the same text: found by its text, not its copy.
    EXPECT_EQ(map.Find(names.MakeTag(tags[i])), static_cast<int>(i)) << tags[i];
  }
  // Never added: by client (a gap, a larger n, an unknown client) or not.
  for (std::string_view absent :
       {"w-0/2", "w-0/8", "w-2/1", "other", "w-0/99", "w-0/001"}) {
    EXPECT_EQ(map.Find(names.MakeTag(absent)), -1) << absent;
  }
}

TEST(TagMapTest, OperatorBracketAddsTheAbsentValueOnce) {
  NamePool names;
  const Tag tag = names.MakeTag("c/3");
  TagMap<uint64_t> map(16, 0);
  map[tag] = std::max<uint64_t>(map[tag], 5);
  map[tag] = std::max<uint64_t>(map[tag], 2);
  EXPECT_EQ(map.Find(tag), 5u);
}

}  // namespace
}  // namespace btsim::scenarios
