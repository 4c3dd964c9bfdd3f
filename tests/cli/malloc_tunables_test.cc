#include "cli/malloc_tunables.h"

#include <sys/prctl.h>

#include <gtest/gtest.h>

namespace btsim::cli {
namespace {

TEST(MallocTunablesTest, StopHugePagesSetsTheProcesssThpDisableFlag) {
  // The flag is per process and only ever set here: this test owns it.
  ASSERT_TRUE(StopHugePages());
  EXPECT_EQ(prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0), 1);
  EXPECT_TRUE(StopHugePages());  // setting it again is harmless
  EXPECT_EQ(prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0), 1);
}

}  // namespace
}  // namespace btsim::cli
