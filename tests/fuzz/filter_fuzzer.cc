// Fuzz target: the RowFilter evaluator (cluster/filter.h) against a naive
// reference, extending the model of tests/cluster/filter_random_test.cc to
// every filter but row_sample and to parameters and rows the input chooses.
//
// The input is a filter tree (at most kMaxNodes nodes, kMaxDepth deep) and
// a row of at most kMaxCells cells. The target builds the tree through the
// factory functions and Validate(), and the same tree as a Spec the model
// evaluates one cell at a time, in the plainest way (copies of vectors,
// a stable sort at each interleave). A divergence — a factory or Validate
// accepting what the model's rules reject or the reverse, or a different
// output — aborts: it is a finding, not just a crash.
//
// Regexes are drawn from a few shapes whose meaning the model knows
// (a literal, a literal followed by ".*", an alternation of two literals),
// over bytes that include '\n', which RE2's '.' does not match.
// row_sample is left out: its output depends on the random stream.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/check.h"
#include "cluster/filter.h"
#include "sim/rng.h"
#include "tests/fuzz/fuzz_input.h"

namespace btsim::cluster {
namespace {

using fuzz::FuzzInput;

constexpr int kMaxDepth = 6;
constexpr int kMaxNodes = 48;
constexpr size_t kMaxCells = 16;
constexpr int64_t kMaxFanout = 1024;

// Bytes of keys, qualifiers and values.
constexpr std::string_view kAlphabet("ab\n\xff", 4);

// Unsigned byte comparison, written out.
int Compare(std::string_view a, std::string_view b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const unsigned x = static_cast<unsigned char>(a[i]);
    const unsigned y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

// A regex shape the model understands.
struct Pattern {
  enum Shape { kLiteral, kPrefix, kEither } shape = kLiteral;
  std::string a, b;

  std::string Regex() const {
    switch (shape) {
      case kLiteral:
        return Quote(a);
      case kPrefix:
        return Quote(a) + ".*";
      case kEither:
        return Quote(a) + "|" + Quote(b);
    }
    return "";
  }
  bool Matches(std::string_view s) const {
    switch (shape) {
      case kLiteral:
        return s == a;
      case kPrefix:
        return s.substr(0, a.size()) == a &&
               s.substr(a.size()).find('\n') == std::string_view::npos;
      case kEither:
        return s == a || s == b;
    }
    return false;
  }
  // Every byte as a hex escape: literal whatever it is.
  static std::string Quote(std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
    return out;
  }
};

struct ModelBound {
  Bound::Kind kind = Bound::Kind::kUnbounded;
  std::string value;
  bool AdmitsAsStart(std::string_view x) const {
    if (kind == Bound::Kind::kUnbounded) return true;
    const int c = Compare(x, value);
    return kind == Bound::Kind::kClosed ? c >= 0 : c > 0;
  }
  bool AdmitsAsEnd(std::string_view x) const {
    if (kind == Bound::Kind::kUnbounded) return true;
    const int c = Compare(x, value);
    return kind == Bound::Kind::kClosed ? c <= 0 : c < 0;
  }
  Bound ToBound() const { return Bound{kind, value}; }
};

enum class Leaf {
  kPassAll,
  kBlockAll,
  kStripValue,
  kApplyLabel,
  kRowKeyRegex,
  kFamilyRegex,
  kQualifierRegex,
  kValueRegex,
  kColumnRange,
  kTimestampRange,
  kValueRange,
  kRowOffset,
  kRowLimit,
  kColumnLimit,
  kCount,
};

struct Spec {
  enum Kind {
    kLeaf,
    kSink,
    kChain,
    kInterleave,
    kCondition,
    kNull
  } kind = kLeaf;
  Leaf leaf = Leaf::kPassAll;
  std::string label;
  Pattern pattern;
  std::string family;
  ModelBound start, end;
  int64_t n = 0;
  int64_t ts_start = 0, ts_end = 0;  // micros
  std::vector<Spec> children;        // condition: predicate, true, false
};

struct Cell {
  std::string family, qualifier;
  int64_t ts;  // micros
  std::string value;
  std::string label;  // "" = none
};

bool CanonicalCellLess(const Cell& x, const Cell& y) {
  if (int c = Compare(x.family, y.family); c != 0) return c < 0;
  if (int c = Compare(x.qualifier, y.qualifier); c != 0) return c < 0;
  return x.ts > y.ts;
}

ModelBound ReadBound(FuzzInput& in) {
  ModelBound b;
  b.kind = static_cast<Bound::Kind>(in.Below(3));
  if (b.kind != Bound::Kind::kUnbounded) b.value = in.String(2, kAlphabet);
  return b;
}

Spec ReadSpec(FuzzInput& in, int depth, int& nodes) {
  ++nodes;
  Spec s;
  const uint64_t roll =
      in.Below(depth >= kMaxDepth || nodes >= kMaxNodes ? 16 : 20);
  if (roll < static_cast<uint64_t>(Leaf::kCount)) {
    s.leaf = static_cast<Leaf>(roll);
  } else if (roll < 16) {
    s.kind = roll == 14 ? Spec::kSink : Spec::kLeaf;  // 15: pass_all
  } else if (roll < 18) {
    s.kind = roll == 16 ? Spec::kChain : Spec::kInterleave;
    for (uint64_t n = in.Below(4); n > 0; --n) {
      s.children.push_back(ReadSpec(in, depth + 1, nodes));
    }
    return s;
  } else {
    s.kind = Spec::kCondition;
    s.children.push_back(ReadSpec(in, depth + 1, nodes));
    for (int i = 0; i < 2; ++i) {
      if (in.Below(5) == 0) {
        Spec null_branch;
        null_branch.kind = Spec::kNull;
        s.children.push_back(null_branch);
      } else {
        s.children.push_back(ReadSpec(in, depth + 1, nodes));
      }
    }
    return s;
  }
  if (s.kind != Spec::kLeaf) return s;
  switch (s.leaf) {
    case Leaf::kApplyLabel: {
      static const char* kLabels[] = {"l", "m",     "x-1",
                                      "",  "Upper", "sixteen-chars-xx"};
      s.label = kLabels[in.Below(6)];
      break;
    }
    case Leaf::kRowKeyRegex:
    case Leaf::kFamilyRegex:
    case Leaf::kQualifierRegex:
    case Leaf::kValueRegex:
      s.pattern.shape = static_cast<Pattern::Shape>(in.Below(3));
      s.pattern.a =
          in.String(2, s.leaf == Leaf::kFamilyRegex ? "AB" : kAlphabet);
      s.pattern.b =
          in.String(2, s.leaf == Leaf::kFamilyRegex ? "AB" : kAlphabet);
      break;
    case Leaf::kColumnRange:
      s.family = in.String(2, "AB");
      s.start = ReadBound(in);
      s.end = ReadBound(in);
      break;
    case Leaf::kValueRange:
      s.start = ReadBound(in);
      s.end = ReadBound(in);
      break;
    case Leaf::kTimestampRange:
      s.ts_start = in.Range(-1, 12) * (in.Below(8) == 0 ? 999 : 1000);
      s.ts_end = in.Range(-1, 12) * (in.Below(8) == 0 ? 999 : 1000);
      break;
    case Leaf::kRowOffset:
    case Leaf::kRowLimit:
    case Leaf::kColumnLimit:
      s.n =
          in.Below(16) == 0 ? static_cast<int64_t>(in.U64()) : in.Range(-1, 5);
      break;
    default:
      break;
  }
  return s;
}

// --- the model's rules -----------------------------------------------------

bool ValidLabel(const std::string& label) {
  if (label.empty() || label.size() > 15) return false;
  for (char c : label) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
      return false;
    }
  }
  return true;
}

// Whether the factory for this leaf accepts its parameters.
bool LeafValid(const Spec& s) {
  switch (s.leaf) {
    case Leaf::kTimestampRange:
      return s.ts_start >= 0 && s.ts_end >= 0 && s.ts_start % 1000 == 0 &&
             s.ts_end % 1000 == 0;
    case Leaf::kRowOffset:
      return s.n >= 0;
    case Leaf::kRowLimit:
    case Leaf::kColumnLimit:
      return s.n > 0;
    default:
      return true;
  }
}

// Most labels one output cell can carry (a chain adds, the rest take the
// most); false when a rule is broken: a bad label, two labels along a
// chain, a sink in a condition.
bool Labels(const Spec& s, bool in_condition, int* labels) {
  *labels = 0;
  switch (s.kind) {
    case Spec::kNull:
      return true;
    case Spec::kSink:
      return !in_condition;
    case Spec::kLeaf:
      if (s.leaf != Leaf::kApplyLabel) return true;
      *labels = 1;
      return ValidLabel(s.label);
    case Spec::kChain:
    case Spec::kInterleave:
      for (const Spec& c : s.children) {
        int n = 0;
        if (!Labels(c, in_condition, &n)) return false;
        *labels = s.kind == Spec::kChain ? *labels + n : std::max(*labels, n);
        if (*labels > 1) return false;
      }
      return true;
    case Spec::kCondition: {
      int unused = 0;
      if (!Labels(s.children[0], true, &unused)) return false;
      for (int i = 1; i <= 2; ++i) {
        int n = 0;
        if (!Labels(s.children[i], true, &n)) return false;
        *labels = std::max(*labels, n);
      }
      return true;
    }
  }
  return true;
}

// The most copies of one input cell the filter can output, capped just
// above the limit; *too_large when any subtree exceeds the limit.
int64_t Fanout(const Spec& s, bool* too_large) {
  int64_t result = 1;
  switch (s.kind) {
    case Spec::kChain:
      for (const Spec& c : s.children) {
        result = std::min(result * std::max<int64_t>(1, Fanout(c, too_large)),
                          kMaxFanout + 1);
      }
      break;
    case Spec::kInterleave:
      result = 0;
      for (const Spec& c : s.children) {
        result = std::min(result + Fanout(c, too_large), kMaxFanout + 1);
      }
      break;
    case Spec::kCondition:
      Fanout(s.children[0], too_large);
      result = 0;
      for (int i = 1; i <= 2; ++i) {
        if (s.children[i].kind != Spec::kNull) {
          result = std::max(result, Fanout(s.children[i], too_large));
        }
      }
      break;
    default:
      break;
  }
  if (result > kMaxFanout) *too_large = true;
  return result;
}

// --- the model's evaluation ------------------------------------------------

std::vector<Cell> EvalLeaf(const Spec& s, const std::string& row_key,
                           const std::vector<Cell>& in) {
  std::vector<Cell> out;
  std::map<std::pair<std::string, std::string>, int64_t> per_column;
  for (size_t i = 0; i < in.size(); ++i) {
    Cell c = in[i];
    bool keep = true;
    switch (s.leaf) {
      case Leaf::kPassAll:
        break;
      case Leaf::kBlockAll:
        keep = false;
        break;
      case Leaf::kStripValue:
        c.value.clear();
        break;
      case Leaf::kApplyLabel:
        c.label = s.label;
        break;
      case Leaf::kRowKeyRegex:
        keep = s.pattern.Matches(row_key);
        break;
      case Leaf::kFamilyRegex:
        keep = s.pattern.Matches(c.family);
        break;
      case Leaf::kQualifierRegex:
        keep = s.pattern.Matches(c.qualifier);
        break;
      case Leaf::kValueRegex:
        keep = s.pattern.Matches(c.value);
        break;
      case Leaf::kColumnRange:
        keep = c.family == s.family && s.start.AdmitsAsStart(c.qualifier) &&
               s.end.AdmitsAsEnd(c.qualifier);
        break;
      case Leaf::kTimestampRange:
        keep = c.ts >= s.ts_start && (s.ts_end == 0 || c.ts < s.ts_end);
        break;
      case Leaf::kValueRange:
        keep = s.start.AdmitsAsStart(c.value) && s.end.AdmitsAsEnd(c.value);
        break;
      case Leaf::kRowOffset:
        keep = static_cast<int64_t>(i) >= s.n;
        break;
      case Leaf::kRowLimit:
        keep = static_cast<int64_t>(i) < s.n;
        break;
      case Leaf::kColumnLimit:
        keep = per_column[{c.family, c.qualifier}]++ < s.n;
        break;
      case Leaf::kCount:
        break;
    }
    if (keep) out.push_back(std::move(c));
  }
  return out;
}

std::vector<Cell> Eval(const Spec& s, const std::string& row_key,
                       std::vector<Cell> in, std::vector<Cell>& sunk) {
  if (in.empty()) return {};
  switch (s.kind) {
    case Spec::kNull:
      return {};
    case Spec::kSink:
      sunk.insert(sunk.end(), in.begin(), in.end());
      return {};
    case Spec::kChain:
      for (const Spec& c : s.children)
        in = Eval(c, row_key, std::move(in), sunk);
      return in;
    case Spec::kInterleave: {
      std::vector<Cell> out;
      for (const Spec& c : s.children) {
        std::vector<Cell> part = Eval(c, row_key, in, sunk);
        out.insert(out.end(), part.begin(), part.end());
      }
      std::stable_sort(out.begin(), out.end(), CanonicalCellLess);
      return out;
    }
    case Spec::kCondition: {
      std::vector<Cell> ignored;
      const bool matched = !Eval(s.children[0], row_key, in, ignored).empty();
      return Eval(s.children[matched ? 1 : 2], row_key, std::move(in), sunk);
    }
    case Spec::kLeaf:
      return EvalLeaf(s, row_key, in);
  }
  return {};
}

// --- the real filter -------------------------------------------------------

// The filter of `s`, or an error from a factory.
Result<Filter> Build(const Spec& s) {
  switch (s.kind) {
    case Spec::kNull:
      break;
    case Spec::kSink:
      return Filter::Sink();
    case Spec::kChain:
    case Spec::kInterleave: {
      std::vector<Filter> children;
      for (const Spec& c : s.children) {
        BTSIM_ASSIGN_OR_RETURN(Filter f, Build(c));
        children.push_back(std::move(f));
      }
      return s.kind == Spec::kChain ? Filter::Chain(std::move(children))
                                    : Filter::Interleave(std::move(children));
    }
    case Spec::kCondition: {
      BTSIM_ASSIGN_OR_RETURN(Filter predicate, Build(s.children[0]));
      std::unique_ptr<Filter> branches[2];
      for (int i = 0; i < 2; ++i) {
        if (s.children[i + 1].kind == Spec::kNull) continue;
        BTSIM_ASSIGN_OR_RETURN(Filter f, Build(s.children[i + 1]));
        branches[i] = std::make_unique<Filter>(std::move(f));
      }
      return Filter::Condition(std::move(predicate), std::move(branches[0]),
                               std::move(branches[1]));
    }
    case Spec::kLeaf:
      switch (s.leaf) {
        case Leaf::kPassAll:
          return Filter::PassAll();
        case Leaf::kBlockAll:
          return Filter::BlockAll();
        case Leaf::kStripValue:
          return Filter::StripValue();
        case Leaf::kApplyLabel:
          return Filter::ApplyLabel(s.label);
        case Leaf::kRowKeyRegex:
          return Filter::RowKeyRegex(s.pattern.Regex());
        case Leaf::kFamilyRegex:
          return Filter::FamilyNameRegex(s.pattern.Regex());
        case Leaf::kQualifierRegex:
          return Filter::ColumnQualifierRegex(s.pattern.Regex());
        case Leaf::kValueRegex:
          return Filter::ValueRegex(s.pattern.Regex());
        case Leaf::kColumnRange:
          return Filter::ColumnRange(s.family, s.start.ToBound(),
                                     s.end.ToBound());
        case Leaf::kTimestampRange:
          return Filter::TimestampRange(TimestampFromMicros(s.ts_start),
                                        TimestampFromMicros(s.ts_end));
        case Leaf::kValueRange:
          return Filter::ValueRange(s.start.ToBound(), s.end.ToBound());
        case Leaf::kRowOffset:
          return Filter::CellsPerRowOffset(s.n);
        case Leaf::kRowLimit:
          return Filter::CellsPerRowLimit(s.n);
        case Leaf::kColumnLimit:
          return Filter::CellsPerColumnLimit(s.n);
        case Leaf::kCount:
          break;
      }
  }
  BTSIM_CHECK_MSG(false, "no filter for this spec");
  return Filter::BlockAll();
}

// Whether every leaf's factory accepts it (the model's view).
bool LeavesValid(const Spec& s) {
  if (s.kind == Spec::kLeaf && !LeafValid(s)) return false;
  for (const Spec& c : s.children) {
    if (!LeavesValid(c)) return false;
  }
  return true;
}

std::string Render(const Cell& c) {
  return c.family + ":" + c.qualifier + "@" + std::to_string(c.ts) + "=" +
         c.value + (c.label.empty() ? "" : "[" + c.label + "]");
}

void Run(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  int nodes = 0;
  const Spec spec = ReadSpec(in, 0, nodes);
  const std::string row_key = in.String(3, kAlphabet);
  std::vector<Cell> row;
  for (uint64_t n = in.Below(kMaxCells + 1); n > 0; --n) {
    static const char* kFamilies[] = {"A", "B", "AB"};
    Cell c{kFamilies[in.Below(3)], in.String(2, kAlphabet),
           in.Range(0, 9) * 1000, in.String(2, kAlphabet), ""};
    const bool duplicate = std::any_of(row.begin(), row.end(), [&](auto& o) {
      return o.family == c.family && o.qualifier == c.qualifier && o.ts == c.ts;
    });
    if (!duplicate) row.push_back(std::move(c));
  }
  std::sort(row.begin(), row.end(), CanonicalCellLess);

  Result<Filter> filter = Build(spec);
  BTSIM_CHECK_MSG(
      filter.ok() == LeavesValid(spec),
      "a factory and the model disagree: " + filter.status().ToString());
  if (!filter.ok()) return;
  int labels = 0;
  bool too_large = false;
  Fanout(spec, &too_large);
  const bool valid = Labels(spec, false, &labels) && !too_large;
  const Status validated = filter->Validate();
  BTSIM_CHECK_MSG(validated.ok() == valid,
                  "Validate and the model disagree: " + validated.ToString());
  if (!valid) return;

  std::vector<Cell> sunk;
  std::vector<Cell> want = Eval(spec, row_key, row, sunk);
  want.insert(want.begin(), sunk.begin(), sunk.end());
  std::stable_sort(want.begin(), want.end(), CanonicalCellLess);

  std::vector<CellView> views;
  for (const Cell& c : row) {
    views.push_back(
        CellView{c.family, c.qualifier, TimestampFromMicros(c.ts), c.value});
  }
  sim::Rng rng(1);
  std::vector<CellView> out;
  filter->Apply(row_key, views, rng, &out);
  std::string got_text, want_text;
  for (const CellView& v : out) {
    got_text += Render(Cell{std::string(v.family), std::string(v.qualifier),
                            Micros(v.timestamp), std::string(v.value),
                            v.label ? *v.label : ""}) +
                "\n";
  }
  for (const Cell& c : want) want_text += Render(c) + "\n";
  BTSIM_CHECK_MSG(got_text == want_text,
                  "filter output differs from the "
                  "model:\ngot:\n" +
                      got_text + "want:\n" + want_text);
}

}  // namespace
}  // namespace btsim::cluster

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  btsim::cluster::Run(data, size);
  return 0;
}
