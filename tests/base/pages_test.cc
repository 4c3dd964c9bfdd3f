// Tests of the small-page hint (base/pages.h): which pages it advises, read
// back from the kernel's own account of the mappings (/proc/self/smaps).
#include "base/pages.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace btsim {
namespace {

constexpr size_t kPage = 4096;

// Whether the mapping holding `address` carries the no-huge-page flag
// ("nh" in its VmFlags line); false when no mapping holds it.
bool NoHugePages(const void* address) {
  const auto at = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t start = 0, end = 0;
    char dash = 0;
    std::istringstream header(line);
    if (header >> std::hex >> start >> dash >> end && dash == '-') {
      inside = start <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return (line + " ").find(" nh ") != std::string::npos;
    }
  }
  return false;
}

class PagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    void* mapped = mmap(nullptr, 16 * kPage, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mapped, MAP_FAILED);
    base_ = static_cast<char*>(mapped);
  }
  void TearDown() override {
    if (base_ != nullptr) munmap(base_, 16 * kPage);
  }
  char* base_ = nullptr;
};

TEST_F(PagesTest, AdvisesOnlyTheWholePagesInsideTheRange) {
  // From byte 100 of page 0 to byte 100 of page 10: pages 1 to 9 are whole.
  if (!PreferSmallPages(base_ + 100, 10 * kPage)) {
    GTEST_SKIP() << "the kernel refused MADV_NOHUGEPAGE (no transparent "
                    "huge pages?)";
  }
  EXPECT_FALSE(NoHugePages(base_));
  EXPECT_TRUE(NoHugePages(base_ + kPage));
  EXPECT_TRUE(NoHugePages(base_ + 9 * kPage + kPage - 1));
  EXPECT_FALSE(NoHugePages(base_ + 10 * kPage));
  EXPECT_FALSE(NoHugePages(base_ + 15 * kPage));
}

TEST_F(PagesTest, MemoryIsUnchanged) {
  base_[kPage] = 'a';
  base_[3 * kPage + 7] = 'b';
  PreferSmallPages(base_, 16 * kPage);
  EXPECT_EQ(base_[kPage], 'a');
  EXPECT_EQ(base_[3 * kPage + 7], 'b');
}

TEST_F(PagesTest, RangesWithoutAWholePageAreRefused) {
  EXPECT_FALSE(PreferSmallPages(base_, 0));
  EXPECT_FALSE(PreferSmallPages(base_ + 1, kPage));  // parts of two pages
  EXPECT_FALSE(PreferSmallPages(base_ + kPage, kPage - 1));
  EXPECT_FALSE(NoHugePages(base_ + kPage));
}

TEST_F(PagesTest, UnmappedMemoryIsRefused) {
  ASSERT_EQ(munmap(base_, 16 * kPage), 0);
  char* const gone = base_;
  base_ = nullptr;
  EXPECT_FALSE(PreferSmallPages(gone, 16 * kPage));
}

}  // namespace
}  // namespace btsim
