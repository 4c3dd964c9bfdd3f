// Randomized cross-check of filter trees against a naive evaluator.
#include "cluster/filter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cluster/cell_view.h"
#include "sim/rng.h"
#include "tests/cluster/filter_test_util.h"

namespace btsim::cluster {
namespace {

using filter_test_util::Ok;
using filter_test_util::Ptr;
using filter_test_util::Render;
using filter_test_util::Row;

// A filter description that builds both the real Filter and a naive model.
struct Spec {
  enum Kind { kLeaf, kSink, kChain, kInterleave, kCondition } kind = kLeaf;
  int leaf = 0;
  std::vector<Spec> children;  // condition: predicate, true, false (may be
                               // kLeaf with leaf == -1 for "null")
};

constexpr int kLeafCount = 9;

Filter BuildLeaf(int leaf, const std::string* label) {
  switch (leaf) {
    case 0:
      return Filter::PassAll();
    case 1:
      return Filter::BlockAll();
    case 2:
      return Filter::StripValue();
    case 3:
      return Filter::ApplyLabel(*label);
    case 4:
      return Ok(Filter::FamilyNameRegex("A"));
    case 5:
      return Ok(Filter::ColumnQualifierRegex("[ab]"));
    case 6:
      return Ok(Filter::CellsPerRowOffset(1));
    case 7:
      return Ok(Filter::CellsPerRowLimit(2));
    default:
      return Ok(Filter::CellsPerColumnLimit(1));
  }
}

using Model = std::vector<std::string>;  // rendered cells

struct ModelCell {
  CellView cell;
  std::string label;  // "" = none
};

bool ModelLess(const ModelCell& a, const ModelCell& b) {
  return CanonicalLess(a.cell, b.cell);
}

std::vector<ModelCell> EvalModel(const Spec& s, std::vector<ModelCell> in,
                                 std::vector<ModelCell>& sunk) {
  if (in.empty()) return {};
  std::vector<ModelCell> out;
  switch (s.kind) {
    case Spec::kSink:
      sunk.insert(sunk.end(), in.begin(), in.end());
      return {};
    case Spec::kChain:
      for (const Spec& c : s.children) in = EvalModel(c, std::move(in), sunk);
      return in;
    case Spec::kInterleave:
      for (const Spec& c : s.children) {
        auto part = EvalModel(c, in, sunk);
        out.insert(out.end(), part.begin(), part.end());
      }
      std::stable_sort(out.begin(), out.end(), ModelLess);
      return out;
    case Spec::kCondition: {
      std::vector<ModelCell> ignored;
      const bool matched = !EvalModel(s.children[0], in, ignored).empty();
      const Spec& branch = s.children[matched ? 1 : 2];
      if (branch.kind == Spec::kLeaf && branch.leaf == -1) return {};
      return EvalModel(branch, std::move(in), sunk);
    }
    case Spec::kLeaf:
      break;
  }
  std::map<std::pair<std::string, std::string>, int> per_column;
  for (size_t i = 0; i < in.size(); ++i) {
    ModelCell c = in[i];
    switch (s.leaf) {
      case 0:
        break;
      case 1:
        continue;
      case 2:
        c.cell.value = {};
        break;
      case 3:
        c.label = "l";
        break;
      case 4:
        if (c.cell.family != "A") continue;
        break;
      case 5:
        if (c.cell.qualifier != "a" && c.cell.qualifier != "b") continue;
        break;
      case 6:
        if (i < 1) continue;
        break;
      case 7:
        if (i >= 2) continue;
        break;
      default:
        if (per_column[{std::string(c.cell.family),
                        std::string(c.cell.qualifier)}]++ >= 1) {
          continue;
        }
    }
    out.push_back(c);
  }
  return out;
}

Filter BuildFilter(const Spec& s, const std::string* label) {
  switch (s.kind) {
    case Spec::kLeaf:
      return BuildLeaf(s.leaf, label);
    case Spec::kSink:
      return Filter::Sink();
    case Spec::kChain:
    case Spec::kInterleave: {
      std::vector<Filter> children;
      for (const Spec& c : s.children)
        children.push_back(BuildFilter(c, label));
      return s.kind == Spec::kChain ? Filter::Chain(std::move(children))
                                    : Filter::Interleave(std::move(children));
    }
    case Spec::kCondition: {
      auto branch = [&](const Spec& b) -> std::unique_ptr<Filter> {
        if (b.kind == Spec::kLeaf && b.leaf == -1) return nullptr;
        return Ptr(BuildFilter(b, label));
      };
      return Filter::Condition(BuildFilter(s.children[0], label),
                               branch(s.children[1]), branch(s.children[2]));
    }
  }
  return Filter::BlockAll();
}

Spec RandomSpec(sim::Rng& rng, int depth, bool allow_sink) {
  const uint64_t roll = rng.Uniform(depth >= 3 ? 5 : 9);
  Spec s;
  if (roll < 4) {
    s.leaf = static_cast<int>(rng.Uniform(kLeafCount));
  } else if (roll == 4) {
    if (allow_sink) {
      s.kind = Spec::kSink;
    } else {
      s.leaf = static_cast<int>(rng.Uniform(kLeafCount));
    }
  } else if (roll <= 6) {
    s.kind = roll == 5 ? Spec::kChain : Spec::kInterleave;
    const uint64_t n = rng.Uniform(4);
    for (uint64_t i = 0; i < n; ++i) {
      s.children.push_back(RandomSpec(rng, depth + 1, allow_sink));
    }
  } else {
    s.kind = Spec::kCondition;
    s.children.push_back(RandomSpec(rng, depth + 1, false));
    for (int i = 0; i < 2; ++i) {
      if (rng.Bernoulli(0.2)) {
        Spec null_branch;
        null_branch.leaf = -1;
        s.children.push_back(null_branch);
      } else {
        s.children.push_back(RandomSpec(rng, depth + 1, false));
      }
    }
  }
  return s;
}

TEST(FilterTest, RandomTreesMatchNaiveModel) {
  Row row("r", {{"A", "a", 3000, "1"},
                {"A", "a", 2000, "2"},
                {"A", "b", 1000, "3"},
                {"A", "c", 4000, "4"},
                {"B", "a", 5000, "5"},
                {"B", "b", 5000, "6"},
                {"B", "b", 1000, "7"}});
  const std::string label = "l";
  sim::Rng rng(2024);
  for (int iter = 0; iter < 3000; ++iter) {
    const Spec spec = RandomSpec(rng, 0, true);
    Filter filter = BuildFilter(spec, &label);

    std::vector<ModelCell> in;
    for (const CellView& c : row.views()) in.push_back({c, ""});
    std::vector<ModelCell> sunk;
    std::vector<ModelCell> expected = EvalModel(spec, in, sunk);
    expected.insert(expected.begin(), sunk.begin(), sunk.end());
    std::stable_sort(expected.begin(), expected.end(), ModelLess);
    Model want;
    for (const ModelCell& c : expected) {
      CellView v = c.cell;
      v.label = nullptr;
      want.push_back(Render(v) + (c.label.empty() ? "" : "[l]"));
    }
    sim::Rng unused(1);
    std::vector<CellView> out;
    filter.Apply(row.key(), row.views(), unused, &out);
    Model got;
    for (CellView& c : out) {
      EXPECT_TRUE(c.label == nullptr || *c.label == "l");
      const bool labelled = c.label != nullptr;
      c.label = nullptr;
      got.push_back(Render(c) + (labelled ? "[l]" : ""));
    }
    ASSERT_EQ(got, want) << "iteration " << iter;
  }
}

}  // namespace
}  // namespace btsim::cluster
