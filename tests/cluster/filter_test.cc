// Allocation tests of the filter hot path. This file replaces the global
// operator new to count allocations, so it is an executable of its own.
#include "cluster/filter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "cluster/cell_view.h"
#include "sim/rng.h"
#include "tests/cluster/filter_test_util.h"

// Counts heap allocations so a test can check the hot path allocates nothing.
// Sanitizers supply their own operator new, so counting is off under them.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BTSIM_FILTER_TEST_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define BTSIM_FILTER_TEST_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef BTSIM_FILTER_TEST_COUNT_ALLOCATIONS
#define BTSIM_FILTER_TEST_COUNT_ALLOCATIONS 1
#endif

namespace {
std::atomic<int64_t> g_allocations{0};
}  // namespace

#if BTSIM_FILTER_TEST_COUNT_ALLOCATIONS
void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  std::abort();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace btsim::cluster {
namespace {

using filter_test_util::kAll;
using filter_test_util::List;
using filter_test_util::Ok;
using filter_test_util::Render;
using filter_test_util::Sample;

// ---- Allocations ------------------------------------------------------------

TEST(FilterTest, ChainOfSimpleFiltersDoesNotAllocate) {
  if (!BTSIM_FILTER_TEST_COUNT_ALLOCATIONS) {
    GTEST_SKIP() << "allocation counting is off under sanitizers";
  }
  Filter f = Filter::Chain(List(
      Ok(Filter::FamilyNameRegex("A|B")), Ok(Filter::ColumnQualifierRegex(".")),
      Ok(Filter::TimestampRange(TimestampFromMicros(1000),
                                TimestampFromMicros(0))),
      Ok(Filter::CellsPerColumnLimit(1)), Filter::StripValue(),
      Filter::ApplyLabel("x")));
  sim::Rng rng(1);
  std::vector<CellView> out;
  out.reserve(64);
  f.Apply(Sample().key(), Sample().views(), rng, &out);  // warms RE2 caches
  out.clear();
  const int64_t before = g_allocations.load();
  for (int i = 0; i < 100; ++i) {
    out.clear();
    f.Apply(Sample().key(), Sample().views(), rng, &out);
  }
  EXPECT_EQ(g_allocations.load() - before, 0);
  EXPECT_EQ(out.size(), 4u);
}

TEST(FilterTest, InterleaveAllocatesOnlyScratchBuffers) {
  if (!BTSIM_FILTER_TEST_COUNT_ALLOCATIONS) {
    GTEST_SKIP() << "allocation counting is off under sanitizers";
  }
  Filter f = Filter::Interleave(
      List(Ok(Filter::FamilyNameRegex("B")), Ok(Filter::FamilyNameRegex("A"))));
  sim::Rng rng(1);
  std::vector<CellView> out;
  out.reserve(64);
  f.Apply(Sample().key(), Sample().views(), rng, &out);
  const int64_t before = g_allocations.load();
  out.clear();
  f.Apply(Sample().key(), Sample().views(), rng, &out);
  // One scratch buffer for the merge: the pool slot, the vector, its storage.
  EXPECT_LE(g_allocations.load() - before, 3);
  EXPECT_EQ(Render(out), kAll);
}

}  // namespace
}  // namespace btsim::cluster
