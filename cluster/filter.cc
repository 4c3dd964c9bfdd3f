#include "cluster/filter.h"

#include <re2/re2.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <utility>

#include "base/check.h"

namespace btsim::cluster {
namespace {

using Cells = std::vector<CellView>;

constexpr size_t kMaxLabelLength = 15;

// State of one Apply call: the row, the cells that reached a sink, and a
// stack of scratch buffers reused by nested interleaves and conditions.
struct Context {
  Context(std::string_view row_key, sim::Rng& rng)
      : row_key(row_key), rng(rng) {}

  std::string_view row_key;
  sim::Rng& rng;
  Cells sunk;
  std::vector<std::unique_ptr<Cells>> pool;
  size_t pool_used = 0;
};

// Borrows an empty buffer from the context for the lifetime of this object.
class ScratchBuffer {
 public:
  explicit ScratchBuffer(Context& ctx) : ctx_(ctx) {
    if (ctx_.pool_used == ctx_.pool.size()) {
      ctx_.pool.push_back(std::make_unique<Cells>());
    }
    cells_ = ctx_.pool[ctx_.pool_used++].get();
    cells_->clear();
  }
  ~ScratchBuffer() { --ctx_.pool_used; }
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;

  Cells& cells() { return *cells_; }

 private:
  Context& ctx_;
  Cells* cells_;
};

bool FullMatch(std::string_view text, const re2::RE2& regex) {
  return re2::RE2::FullMatch(re2::StringPiece(text.data(), text.size()), regex);
}

bool IsValidLabel(std::string_view label) {
  if (label.empty() || label.size() > kMaxLabelLength) return false;
  return std::all_of(label.begin(), label.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

std::string FormatDouble(double d) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof(buf), d);
  return std::string(buf, result.ptr);
}

// Cells in out[begin, mid) and out[mid, end) are each in canonical order;
// merges them stably (the first run wins ties).
void MergeTail(Cells& out, size_t begin, size_t mid, Context& ctx) {
  if (mid == begin || mid == out.size()) return;
  if (!CanonicalLess(out[mid], out[mid - 1])) return;
  const auto first = std::upper_bound(out.begin() + begin, out.begin() + mid,
                                      out[mid], CanonicalLess);
  ScratchBuffer scratch(ctx);
  Cells& merged = scratch.cells();
  merged.reserve(static_cast<size_t>(out.end() - first));
  std::merge(first, out.begin() + mid, out.begin() + mid, out.end(),
             std::back_inserter(merged), CanonicalLess);
  std::copy(merged.begin(), merged.end(), first);
}

}  // namespace

struct Filter::Node {
  Kind kind = Kind::kPassAll;
  std::vector<Filter> children;       // chain, interleave
  std::unique_ptr<Filter> predicate;  // condition
  std::unique_ptr<Filter> on_true;    // condition; null outputs nothing
  std::unique_ptr<Filter> on_false;   // condition; null outputs nothing
  std::string label;                  // apply_label
  std::string family;                 // column_range
  std::unique_ptr<re2::RE2> regex;    // *_regex
  Interval range;                     // column_range (qualifier), value_range
  int64_t n = 0;                      // cells_per_*
  Timestamp start;                    // timestamp_range, inclusive
  Timestamp end;                      // timestamp_range, exclusive; {}: none
  double probability = 0;             // row_sample

  static std::unique_ptr<Node> Make(Kind kind) {
    auto node = std::make_unique<Node>();
    node->kind = kind;
    return node;
  }
  static const Node& Of(const Filter& filter) {
    BTSIM_CHECK(filter.node_ != nullptr);
    return *filter.node_;
  }
  static Result<Filter> MakeRegex(Kind kind, std::string pattern,
                                  std::string_view field);
  static Result<Filter> MakeCount(Kind kind, int64_t n, int64_t min,
                                  std::string_view field);

  // Appends this node's output for `input` to `*out`; `input` must not point
  // into `*out`.
  void Eval(std::span<const CellView> input, Context& ctx, Cells* out) const;
  // Replaces buf[begin, end) with this node's output for it.
  void EvalInPlace(Cells& buf, size_t begin, Context& ctx) const;
  // Calls emit(cell) for each output cell of a leaf node, in order. Never
  // emits more cells than it has read, so emit may overwrite `input` in place.
  template <typename Emit>
  void EmitLeaf(std::span<const CellView> input, Context& ctx,
                Emit&& emit) const;
  bool PredicateMatches(std::span<const CellView> input, Context& ctx) const;
  // Sets *max_labels to the most labels one output cell can carry.
  Status Validate(bool in_condition, int* max_labels) const;
  int64_t Fanout(bool* too_large) const;
};

Result<Filter> Filter::Node::MakeRegex(Kind kind, std::string pattern,
                                       std::string_view field) {
  re2::RE2::Options options;
  options.set_encoding(re2::RE2::Options::EncodingLatin1);
  options.set_log_errors(false);
  auto regex = std::make_unique<re2::RE2>(pattern, options);
  if (!regex->ok()) {
    return InvalidArgument("Invalid regex in " + std::string(field) + ": " +
                           regex->error());
  }
  auto node = Make(kind);
  node->regex = std::move(regex);
  return Filter(std::move(node));
}

Result<Filter> Filter::Node::MakeCount(Kind kind, int64_t n, int64_t min,
                                       std::string_view field) {
  if (n < min) {
    return InvalidArgument(std::string(field) + " must be " +
                           (min == 0 ? ">= 0" : "> 0") + ", got " +
                           std::to_string(n));
  }
  auto node = Make(kind);
  node->n = n;
  return Filter(std::move(node));
}

template <typename Emit>
void Filter::Node::EmitLeaf(std::span<const CellView> input, Context& ctx,
                            Emit&& emit) const {
  switch (kind) {
    case Kind::kPassAll:
      for (const CellView& cell : input) emit(cell);
      return;
    case Kind::kBlockAll:
      return;
    case Kind::kStripValue:
      for (const CellView& cell : input) {
        CellView copy = cell;
        copy.value = {};
        emit(copy);
      }
      return;
    case Kind::kApplyLabel:
      for (const CellView& cell : input) {
        CellView copy = cell;
        copy.label = &label;
        emit(copy);
      }
      return;
    case Kind::kRowKeyRegex:
      if (FullMatch(ctx.row_key, *regex)) {
        for (const CellView& cell : input) emit(cell);
      }
      return;
    case Kind::kFamilyNameRegex: {
      // Cells of one family are adjacent: match each family once.
      std::string_view family_seen;
      bool matched = false;
      for (size_t i = 0; i < input.size(); ++i) {
        const CellView& cell = input[i];
        if (i == 0 || cell.family != family_seen) {
          family_seen = cell.family;
          matched = FullMatch(cell.family, *regex);
        }
        if (matched) emit(cell);
      }
      return;
    }
    case Kind::kColumnQualifierRegex: {
      std::string_view family_seen;
      std::string_view qualifier_seen;
      bool matched = false;
      for (size_t i = 0; i < input.size(); ++i) {
        const CellView& cell = input[i];
        if (i == 0 || cell.qualifier != qualifier_seen ||
            cell.family != family_seen) {
          family_seen = cell.family;
          qualifier_seen = cell.qualifier;
          matched = FullMatch(cell.qualifier, *regex);
        }
        if (matched) emit(cell);
      }
      return;
    }
    case Kind::kValueRegex:
      for (const CellView& cell : input) {
        if (FullMatch(cell.value, *regex)) emit(cell);
      }
      return;
    case Kind::kColumnRange:
      for (const CellView& cell : input) {
        if (cell.family == family && range.Contains(cell.qualifier)) {
          emit(cell);
        }
      }
      return;
    case Kind::kTimestampRange:
      for (const CellView& cell : input) {
        if (cell.timestamp >= start &&
            (end == Timestamp{} || cell.timestamp < end)) {
          emit(cell);
        }
      }
      return;
    case Kind::kValueRange:
      for (const CellView& cell : input) {
        if (range.Contains(cell.value)) emit(cell);
      }
      return;
    case Kind::kCellsPerRowOffset:
      for (size_t i = static_cast<size_t>(
               std::min<int64_t>(n, static_cast<int64_t>(input.size())));
           i < input.size(); ++i) {
        emit(input[i]);
      }
      return;
    case Kind::kCellsPerRowLimit: {
      const size_t limit = static_cast<size_t>(
          std::min<int64_t>(n, static_cast<int64_t>(input.size())));
      for (size_t i = 0; i < limit; ++i) emit(input[i]);
      return;
    }
    case Kind::kCellsPerColumnLimit: {
      std::string_view family_seen;
      std::string_view qualifier_seen;
      int64_t count = 0;
      for (size_t i = 0; i < input.size(); ++i) {
        const CellView& cell = input[i];
        if (i == 0 || cell.qualifier != qualifier_seen ||
            cell.family != family_seen) {
          family_seen = cell.family;
          qualifier_seen = cell.qualifier;
          count = 0;
        }
        if (count++ < n) emit(cell);
      }
      return;
    }
    case Kind::kRowSample:
      if (ctx.rng.Bernoulli(probability)) {
        for (const CellView& cell : input) emit(cell);
      }
      return;
    case Kind::kSink:
    case Kind::kChain:
    case Kind::kInterleave:
    case Kind::kCondition:
      break;
  }
  BTSIM_CHECK_MSG(false, "EmitLeaf called on a composite filter");
}

bool Filter::Node::PredicateMatches(std::span<const CellView> input,
                                    Context& ctx) const {
  // Predicate output never reaches the read, not even through a sink.
  const size_t sunk_before = ctx.sunk.size();
  ScratchBuffer scratch(ctx);
  Of(*predicate).Eval(input, ctx, &scratch.cells());
  ctx.sunk.resize(sunk_before);
  return !scratch.cells().empty();
}

void Filter::Node::Eval(std::span<const CellView> input, Context& ctx,
                        Cells* out) const {
  if (input.empty()) return;
  switch (kind) {
    case Kind::kSink:
      ctx.sunk.insert(ctx.sunk.end(), input.begin(), input.end());
      return;
    case Kind::kChain: {
      if (children.empty()) {
        out->insert(out->end(), input.begin(), input.end());
        return;
      }
      const size_t begin = out->size();
      Of(children[0]).Eval(input, ctx, out);
      for (size_t i = 1; i < children.size() && out->size() > begin; ++i) {
        Of(children[i]).EvalInPlace(*out, begin, ctx);
      }
      return;
    }
    case Kind::kInterleave: {
      const size_t begin = out->size();
      for (const Filter& child : children) {
        const size_t mid = out->size();
        Of(child).Eval(input, ctx, out);
        MergeTail(*out, begin, mid, ctx);
      }
      return;
    }
    case Kind::kCondition: {
      const Filter* branch =
          PredicateMatches(input, ctx) ? on_true.get() : on_false.get();
      if (branch != nullptr) Of(*branch).Eval(input, ctx, out);
      return;
    }
    default:
      EmitLeaf(input, ctx,
               [out](const CellView& cell) { out->push_back(cell); });
      return;
  }
}

void Filter::Node::EvalInPlace(Cells& buf, size_t begin, Context& ctx) const {
  if (buf.size() == begin) return;
  const auto input = std::span<const CellView>(buf).subspan(begin);
  switch (kind) {
    case Kind::kSink:
      ctx.sunk.insert(ctx.sunk.end(), input.begin(), input.end());
      buf.resize(begin);
      return;
    case Kind::kChain:
      for (const Filter& child : children) {
        if (buf.size() == begin) return;
        Of(child).EvalInPlace(buf, begin, ctx);
      }
      return;
    case Kind::kInterleave: {
      ScratchBuffer scratch(ctx);
      Cells& result = scratch.cells();
      Eval(input, ctx, &result);
      buf.resize(begin);
      buf.insert(buf.end(), result.begin(), result.end());
      return;
    }
    case Kind::kCondition: {
      const Filter* branch =
          PredicateMatches(input, ctx) ? on_true.get() : on_false.get();
      if (branch == nullptr) {
        buf.resize(begin);
      } else {
        Of(*branch).EvalInPlace(buf, begin, ctx);
      }
      return;
    }
    default: {
      CellView* const first = buf.data() + begin;
      CellView* write = first;
      EmitLeaf(input, ctx, [&write](const CellView& cell) { *write++ = cell; });
      buf.resize(begin + static_cast<size_t>(write - first));
      return;
    }
  }
}

Status Filter::Node::Validate(bool in_condition, int* max_labels) const {
  *max_labels = 0;
  switch (kind) {
    case Kind::kApplyLabel:
      if (!IsValidLabel(label)) {
        return InvalidArgument(
            "Invalid apply_label_transformer: a label must match "
            "[a-z0-9\\-]+ and be at most 15 characters");
      }
      *max_labels = 1;
      return OkStatus();
    case Kind::kSink:
      if (in_condition) {
        return InvalidArgument("sink cannot be used inside a condition filter");
      }
      return OkStatus();
    case Kind::kChain: {
      int sum = 0;
      for (const Filter& child : children) {
        int child_labels = 0;
        BTSIM_RETURN_IF_ERROR(Of(child).Validate(in_condition, &child_labels));
        sum += child_labels;
        if (sum > 1) {
          return InvalidArgument(
              "A chain may contain at most one apply_label_transformer");
        }
      }
      *max_labels = sum;
      return OkStatus();
    }
    case Kind::kInterleave:
      for (const Filter& child : children) {
        int child_labels = 0;
        BTSIM_RETURN_IF_ERROR(Of(child).Validate(in_condition, &child_labels));
        *max_labels = std::max(*max_labels, child_labels);
      }
      return OkStatus();
    case Kind::kCondition: {
      // Predicate labels never reach the output, so only the branches count.
      int unused = 0;
      BTSIM_RETURN_IF_ERROR(Of(*predicate).Validate(true, &unused));
      for (const auto* branch : {&on_true, &on_false}) {
        if (*branch == nullptr) continue;
        int branch_labels = 0;
        BTSIM_RETURN_IF_ERROR(Of(**branch).Validate(true, &branch_labels));
        *max_labels = std::max(*max_labels, branch_labels);
      }
      return OkStatus();
    }
    default:
      return OkStatus();
  }
}

Filter::Filter(std::unique_ptr<Node> node) : node_(std::move(node)) {}
Filter::Filter(Filter&&) noexcept = default;
Filter& Filter::operator=(Filter&&) noexcept = default;
Filter::~Filter() = default;

Filter::Kind Filter::kind() const { return Node::Of(*this).kind; }

Filter Filter::PassAll() { return Filter(Node::Make(Kind::kPassAll)); }
Filter Filter::BlockAll() { return Filter(Node::Make(Kind::kBlockAll)); }
Filter Filter::Sink() { return Filter(Node::Make(Kind::kSink)); }
Filter Filter::StripValue() { return Filter(Node::Make(Kind::kStripValue)); }

// The label itself is checked by Validate(), since this cannot fail.
Filter Filter::ApplyLabel(std::string label) {
  auto node = Node::Make(Kind::kApplyLabel);
  node->label = std::move(label);
  return Filter(std::move(node));
}

Result<Filter> Filter::RowKeyRegex(std::string pattern) {
  return Node::MakeRegex(Kind::kRowKeyRegex, std::move(pattern),
                         "row_key_regex_filter");
}

Result<Filter> Filter::FamilyNameRegex(std::string pattern) {
  return Node::MakeRegex(Kind::kFamilyNameRegex, std::move(pattern),
                         "family_name_regex_filter");
}

Result<Filter> Filter::ColumnQualifierRegex(std::string pattern) {
  return Node::MakeRegex(Kind::kColumnQualifierRegex, std::move(pattern),
                         "column_qualifier_regex_filter");
}

Result<Filter> Filter::ValueRegex(std::string pattern) {
  return Node::MakeRegex(Kind::kValueRegex, std::move(pattern),
                         "value_regex_filter");
}

Filter Filter::ColumnRange(std::string family, Bound start, Bound end) {
  auto node = Node::Make(Kind::kColumnRange);
  node->family = std::move(family);
  node->range = Interval{std::move(start), std::move(end)};
  return Filter(std::move(node));
}

// An inverted range (end != Timestamp{} && end < start) is accepted and matches
// nothing, like the empty range start == end.
Result<Filter> Filter::TimestampRange(Timestamp start, Timestamp end) {
  const int64_t start_micros = Micros(start);
  const int64_t end_micros = Micros(end);
  const std::string range = "[" + std::to_string(start_micros) + ", " +
                            std::to_string(end_micros) + ")";
  if (start_micros < 0 || end_micros < 0) {
    return InvalidArgument(
        "timestamp_range_filter: timestamps must be non-negative, got " +
        range);
  }
  if (start_micros % 1000 != 0 || end_micros % 1000 != 0) {
    return InvalidArgument(
        "timestamp_range_filter: timestamps must be a multiple of 1000 "
        "(millisecond granularity), got " +
        range);
  }
  auto node = Node::Make(Kind::kTimestampRange);
  node->start = start;
  node->end = end;
  return Filter(std::move(node));
}

Filter Filter::ValueRange(Bound start, Bound end) {
  auto node = Node::Make(Kind::kValueRange);
  node->range = Interval{std::move(start), std::move(end)};
  return Filter(std::move(node));
}

Result<Filter> Filter::CellsPerRowOffset(int64_t n) {
  return Node::MakeCount(Kind::kCellsPerRowOffset, n, 0,
                         "cells_per_row_offset_filter");
}

Result<Filter> Filter::CellsPerRowLimit(int64_t n) {
  return Node::MakeCount(Kind::kCellsPerRowLimit, n, 1,
                         "cells_per_row_limit_filter");
}

Result<Filter> Filter::CellsPerColumnLimit(int64_t n) {
  return Node::MakeCount(Kind::kCellsPerColumnLimit, n, 1,
                         "cells_per_column_limit_filter");
}

Result<Filter> Filter::RowSample(double p) {
  if (!(p > 0 && p < 1)) {  // also rejects NaN
    return InvalidArgument("row_sample_filter must be in (0, 1), got " +
                           FormatDouble(p));
  }
  auto node = Node::Make(Kind::kRowSample);
  node->probability = p;
  return Filter(std::move(node));
}

// An empty chain passes its input through; an empty interleave outputs
// nothing.
Filter Filter::Chain(std::vector<Filter> filters) {
  auto node = Node::Make(Kind::kChain);
  node->children = std::move(filters);
  return Filter(std::move(node));
}

Filter Filter::Interleave(std::vector<Filter> filters) {
  auto node = Node::Make(Kind::kInterleave);
  node->children = std::move(filters);
  return Filter(std::move(node));
}

Filter Filter::Condition(Filter predicate, std::unique_ptr<Filter> on_true,
                         std::unique_ptr<Filter> on_false) {
  auto node = Node::Make(Kind::kCondition);
  node->predicate = std::make_unique<Filter>(std::move(predicate));
  node->on_true = std::move(on_true);
  node->on_false = std::move(on_false);
  return Filter(std::move(node));
}

namespace {

// Upper bound on how many copies of one input cell a filter can output
// (chain: product, interleave: sum, condition: the larger branch), saturated
// just above kMaxFilterFanout. Every subtree must stay within the limit, so
// no intermediate result of an evaluation can exceed it either.
constexpr int64_t kMaxFilterFanout = 1024;

}  // namespace

int64_t Filter::Node::Fanout(bool* too_large) const {
  auto cap = [](int64_t v) { return std::min(v, kMaxFilterFanout + 1); };
  int64_t result = 1;
  switch (kind) {
    case Kind::kChain:
      for (const Filter& child : children) {
        result =
            cap(result * std::max<int64_t>(1, Of(child).Fanout(too_large)));
      }
      break;
    case Kind::kInterleave:
      result = 0;
      for (const Filter& child : children) {
        result = cap(result + Of(child).Fanout(too_large));
      }
      break;
    case Kind::kCondition:
      Of(*predicate).Fanout(too_large);
      result = 0;
      for (const auto* branch : {&on_true, &on_false}) {
        if (*branch != nullptr) {
          result = std::max(result, Of(**branch).Fanout(too_large));
        }
      }
      break;
    default:
      break;
  }
  if (result > kMaxFilterFanout) *too_large = true;
  return result;
}

Status Filter::Validate() const {
  int max_labels = 0;
  BTSIM_RETURN_IF_ERROR(Node::Of(*this).Validate(false, &max_labels));
  bool too_large = false;
  Node::Of(*this).Fanout(&too_large);
  if (too_large) {
    return InvalidArgument(
        "the filter could output more than 1024 copies of a cell (nested "
        "interleaves multiply); simplify the filter");
  }
  return OkStatus();
}

void Filter::Apply(std::string_view row_key, std::span<const CellView> cells,
                   sim::Rng& rng, std::vector<CellView>* out) const {
  Context ctx(row_key, rng);
  const size_t begin = out->size();
  Node::Of(*this).Eval(cells, ctx, out);
  if (ctx.sunk.empty()) return;
  // Cells that reached a sink precede equal cells of the normal output.
  out->insert(out->begin() + static_cast<std::ptrdiff_t>(begin),
              ctx.sunk.begin(), ctx.sunk.end());
  std::stable_sort(out->begin() + static_cast<std::ptrdiff_t>(begin),
                   out->end(), CanonicalLess);
}

}  // namespace btsim::cluster
