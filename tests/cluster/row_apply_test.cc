// Differential tests of applying requests to rows
// (cluster/internal/row_apply.h): random sequences of requests go to two
// copies of each row, one through ApplyRequest (its fast path when it
// applies) and one through ApplyMutations (always the general path). After
// every request both must hold the same bytes and agree on whether
// compaction may change the row.
#include "cluster/internal/row_apply.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cluster/internal/row_edits.h"
#include "cluster/mutation.h"
#include "cluster/row_codec.h"
#include "cluster/version.h"
#include "sim/rng.h"

namespace btsim::cluster::internal {
namespace {

constexpr int64_t kNoLimit = INT64_MAX;

// Families by name and id (the ids a table would give them: not their
// order by name).
struct Family {
  const char* name;
  uint32_t id;
};
constexpr std::array<Family, 3> kFamilies = {Family{"cf", 0}, Family{"a", 3},
                                             Family{"z", 1}};
const char* const kQualifiers[] = {"", "a", "b", "c"};

// A request's mutations with the ids of their families.
struct RandomRequest {
  std::vector<Mutation> mutations;
  std::vector<uint32_t> family_ids;
};

class RequestMaker {
 public:
  explicit RequestMaker(uint64_t seed) : rng_(seed) {}

  sim::Rng& rng() { return rng_; }

  // Mostly one SetCell (the fast path's request), else one to five
  // mutations of every kind.
  RandomRequest Next() {
    RandomRequest r;
    const size_t n = rng_.Bernoulli(0.6) ? 1 : 1 + rng_.Uniform(5);
    for (size_t i = 0; i < n; ++i) {
      const Family& f = kFamilies[rng_.Uniform(kFamilies.size())];
      const char* q = kQualifiers[rng_.Uniform(4)];
      const uint64_t kind = n == 1 && rng_.Bernoulli(0.8) ? 0 : rng_.Uniform(8);
      if (kind <= 3) {
        r.mutations.push_back(SetCell{f.name, q, RandomTimestamp(), Value()});
        r.family_ids.push_back(f.id);
      } else if (kind <= 5) {
        // A range: from 0 or a millisecond, to the end (0) or later.
        const int64_t start =
            rng_.Bernoulli(0.3) ? 0 : 1000 * int64_t(rng_.Uniform(8));
        const int64_t end = rng_.Bernoulli(0.3)
                                ? 0
                                : start + 1000 * int64_t(1 + rng_.Uniform(4));
        r.mutations.push_back(DeleteFromColumn{
            f.name, q, TimestampFromMicros(start), TimestampFromMicros(end)});
        r.family_ids.push_back(f.id);
      } else if (kind == 6) {
        r.mutations.push_back(DeleteFromFamily{f.name});
        r.family_ids.push_back(f.id);
      } else {
        r.mutations.push_back(DeleteFromRow{});
        r.family_ids.push_back(kNoFamily);
      }
    }
    return r;
  }

 private:
  // Server time, or a millisecond from a few (so that cells collide).
  Timestamp RandomTimestamp() {
    if (rng_.Bernoulli(0.5)) return kServerTimestamp;
    return TimestampFromMicros(
        1000 * int64_t(rng_.Uniform(rng_.Bernoulli(0.9) ? 10 : 100000)));
  }
  std::string Value() {
    static const std::string kLong(300, 'v');
    if (rng_.Bernoulli(0.1)) return kLong;
    return "v" + std::to_string(rng_.Uniform(1000));
  }

  sim::Rng rng_;
};

// One row kept twice: by ApplyRequest and by ApplyMutations.
struct RowPair {
  RowRecord fast;
  RowRecord general;
};

const RowRecord* OrNull(const RowRecord& r) { return r.valid() ? &r : nullptr; }

TEST(RowApplyTest, TheFastPathGivesTheGeneralPathsRowsByteForByte) {
  const std::string keys[] = {"k", "row-0001", std::string(300, 'x')};
  int requests = 0, fast = 0, cells_over_one = 0, superseded = 0;
  for (uint64_t seed = 1; seed <= 25; ++seed) {
    RequestMaker maker(seed);
    sim::Rng& rng = maker.rng();
    std::array<RowPair, 3> rows;
    // Commit times in microseconds; versions mostly increasing, sometimes
    // older (a replicated change arriving late) or repeated (entries of one
    // batch commit at one version).
    int64_t micros = 1'000'000;
    Version version = MakeVersion(TimestampFromMicros(micros), 1);
    for (int step = 0; step < 1500; ++step) {
      const size_t which = rng.Uniform(rows.size());
      RowPair& row = rows[which];
      const std::string& key = keys[which];
      if (rng.Bernoulli(0.01)) {  // the row is dropped and compacted away
        row = RowPair{};
        continue;
      }
      const uint64_t when = rng.Uniform(10);
      if (when < 7) {
        micros += 1 + static_cast<int64_t>(rng.Uniform(3000));
        version = MakeVersion(TimestampFromMicros(micros),
                              static_cast<uint32_t>(rng.Uniform(3)));
      }
      const Version commit_version =
          when == 9 ? MakeVersion(TimestampFromMicros(micros - 5000), 2)
                    : version;
      const RandomRequest r = maker.Next();
      const Request request{r.mutations, r.family_ids, commit_version,
                            TruncateToMillis(VersionTime(commit_version))};
      if (r.mutations.size() == 1) {
        if (const auto* set = std::get_if<SetCell>(&r.mutations[0])) {
          const Timestamp ts = set->timestamp == kServerTimestamp
                                   ? request.server_time
                                   : set->timestamp;
          Version superseded = kNoVersion;
          fast += WithCellWritten(key, OrNull(row.fast), r.family_ids[0],
                                  set->qualifier, ts, commit_version,
                                  set->value, &superseded)
                      .valid();
        }
      }
      WrittenRow a = ApplyRequest(key, OrNull(row.fast), request, kNoLimit);
      WrittenRow b =
          ApplyMutations(key, OrNull(row.general), request, kNoLimit);
      ++requests;
      ASSERT_TRUE(a.row.valid());
      ASSERT_TRUE(b.row.valid());
      ASSERT_EQ(a.row.key(), key);
      ASSERT_EQ(a.row.encoded(), b.row.encoded())
          << "seed " << seed << " step " << step;
      ASSERT_EQ(a.size, b.size);
      ASSERT_EQ(a.size, a.row.encoded().size() + key.size());
      ASSERT_EQ(a.dirty, b.dirty) << "seed " << seed << " step " << step;
      ASSERT_EQ(a.superseded.size(), b.superseded.size())
          << "seed " << seed << " step " << step;
      for (size_t i = 0; i < a.superseded.size(); ++i) {
        const SupersededCell& x = a.superseded[i];
        const SupersededCell& y = b.superseded[i];
        ASSERT_EQ(x.family_id, y.family_id);
        ASSERT_EQ(x.qualifier, y.qualifier);
        ASSERT_EQ(x.timestamp, y.timestamp);
        ASSERT_EQ(x.version, y.version);
        ASSERT_EQ(x.until, y.until);
        superseded += 1;
      }
      ASSERT_EQ(a.dirty, MayNeedCompaction(a.row.encoded()));
      cells_over_one += a.dirty ? 1 : 0;
      row.fast = std::move(a.row);
      row.general = std::move(b.row);
    }
  }
  // The fast path took a good share of the requests, on rows of every
  // shape.
  EXPECT_GT(fast, requests / 5);
  EXPECT_GT(requests - fast, requests / 4);
  EXPECT_GT(cells_over_one, requests / 4);
  EXPECT_GT(superseded, 100);  // rewrites of a timestamp, in both orders
}

TEST(RowApplyTest, BothPathsRefuseARowOverTheLimitAlike) {
  const std::vector<Mutation> first = {
      SetCell{"cf", "q", TimestampFromMicros(1000), "small"}};
  const std::vector<uint32_t> ids = {0};
  const Request one{first, ids, MakeVersion(TimestampFromMicros(1000), 0),
                    TimestampFromMicros(1000)};
  const WrittenRow row = ApplyMutations("k", nullptr, one, kNoLimit);
  ASSERT_TRUE(row.row.valid());
  const std::vector<Mutation> big = {
      SetCell{"cf", "q", TimestampFromMicros(2000), std::string(1000, 'b')}};
  const Request grow{big, ids, MakeVersion(TimestampFromMicros(2000), 0),
                     TimestampFromMicros(2000)};
  for (int64_t limit : {int64_t{100}, int64_t{1000}}) {
    const WrittenRow a = ApplyRequest("k", &row.row, grow, limit);
    const WrittenRow b = ApplyMutations("k", &row.row, grow, limit);
    EXPECT_FALSE(a.row.valid()) << limit;
    EXPECT_FALSE(b.row.valid()) << limit;
    EXPECT_EQ(a.size, b.size);
    EXPECT_GT(a.size, 1000u);
  }
  const WrittenRow fits = ApplyRequest("k", &row.row, grow, 2000);
  ASSERT_TRUE(fits.row.valid());
  EXPECT_EQ(fits.size, ApplyMutations("k", &row.row, grow, 2000).size);
}

}  // namespace
}  // namespace btsim::cluster::internal
