#include "scenarios/history_export.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "base/check.h"
#include "scenarios/checks_analysis.h"
#include "scenarios/json_printer.h"

namespace btsim::scenarios {

namespace {

struct FormatInfo {
  HistoryFormat format;
  std::string_view name;
  std::string_view file;
};
constexpr std::array<FormatInfo, 5> kFormats = {{
    {HistoryFormat::kJepsen, "jepsen", "history.jepsen.jsonl"},
    {HistoryFormat::kJepsenEdn, "jepsen-edn", "history.jepsen.edn"},
    {HistoryFormat::kElleRwRegister, "elle-rw-register",
     "history.elle-rw-register.jsonl"},
    {HistoryFormat::kElleListAppend, "elle-list-append",
     "history.elle-list-append.jsonl"},
    {HistoryFormat::kPorcupine, "porcupine", "history.porcupine.json"},
}};
constexpr auto kFormatList = [] {
  std::array<HistoryFormat, kFormats.size()> list{};
  for (size_t i = 0; i < kFormats.size(); ++i) list[i] = kFormats[i].format;
  return list;
}();

const FormatInfo& InfoOf(HistoryFormat format) {
  for (const FormatInfo& info : kFormats) {
    if (info.format == format) return info;
  }
  return kFormats[0];
}

// A value of a record, printed as JSON or as EDN (where keywords and map
// keys are keywords; in JSON they are strings).
struct Value {
  enum class Kind { kNull, kInt, kString, kKeyword, kVector, kMap };
  Kind kind = Kind::kNull;
  int64_t number = 0;
  std::string text;
  std::vector<Value> items;  // kVector
  // kMap, in order: keys[i] maps to values[i]. (Not a vector of pairs: a
  // pair holding Value must not be instantiated while Value is incomplete,
  // which clang rejects.)
  std::vector<std::string> keys;
  std::vector<Value> values;

  static Value Int(int64_t n) {
    Value v = Of(Kind::kInt);
    v.number = n;
    return v;
  }
  static Value String(std::string_view s) {
    Value v = Of(Kind::kString);
    v.text = s;
    return v;
  }
  static Value Keyword(std::string_view s) {
    Value v = Of(Kind::kKeyword);
    v.text = s;
    return v;
  }
  static Value Vector(std::vector<Value> items) {
    Value v = Of(Kind::kVector);
    v.items = std::move(items);
    return v;
  }
  static Value Map() { return Of(Kind::kMap); }
  static Value Of(Kind kind) {
    Value v;
    v.kind = kind;
    return v;
  }
  Value& Add(std::string key, Value value) {
    keys.push_back(std::move(key));
    values.push_back(std::move(value));
    return *this;
  }
};

// A JSON (and EDN) string literal of `bytes`: bytes as in JsonText,
// quotes, backslashes and control characters escaped.
std::string Quote(std::string_view bytes) {
  std::string out = "\"";
  for (char c : JsonText(bytes)) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

void Print(const Value& v, bool edn, std::string& out) {
  switch (v.kind) {
    case Value::Kind::kNull:
      out += edn ? "nil" : "null";
      break;
    case Value::Kind::kInt:
      out += std::to_string(v.number);
      break;
    case Value::Kind::kString:
      out += Quote(v.text);
      break;
    case Value::Kind::kKeyword:
      out += edn ? ":" + v.text : Quote(v.text);
      break;
    case Value::Kind::kVector: {
      out += '[';
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i > 0) out += edn ? " " : ",";
        Print(v.items[i], edn, out);
      }
      out += ']';
      break;
    }
    case Value::Kind::kMap: {
      out += '{';
      for (size_t i = 0; i < v.keys.size(); ++i) {
        if (i > 0) out += edn ? ", " : ",";
        out += edn ? ":" + v.keys[i] + " " : Quote(v.keys[i]) + ":";
        Print(v.values[i], edn, out);
      }
      out += '}';
      break;
    }
  }
}

enum class Outcome { kOk, kFail, kInfo };

// What the client may assume: a failure that committed, or an operation
// still in flight, may have taken effect.
Outcome OutcomeOf(const Operation& op) {
  if (op.ok()) return Outcome::kOk;
  if (op.attempts == 0 || op.version != 0) return Outcome::kInfo;
  return Outcome::kFail;
}

std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kFail:
      return "fail";
    case Outcome::kInfo:
      return "info";
  }
  return "info";
}

// The fault events (the nemesis's actions), and whether each starts a
// fault that lasts until its repair (checks_internal::RepairOf).
struct FaultKind {
  EventKind kind;
  bool lasts;
};
constexpr std::array<FaultKind, 16> kFaultKinds = {{
    {EventKind::kClusterDown, true},
    {EventKind::kClusterUp, false},
    {EventKind::kPartition, true},
    {EventKind::kHeal, false},
    {EventKind::kLatency, false},
    {EventKind::kNodeFailure, true},
    {EventKind::kNodeRecovery, false},
    {EventKind::kSlowCluster, true},
    {EventKind::kRestoreSpeed, false},
    {EventKind::kInjectErrors, true},
    {EventKind::kStopErrors, false},
    {EventKind::kCutClients, true},
    {EventKind::kMendClients, false},
    {EventKind::kStallReplication, true},
    {EventKind::kResumeReplication, false},
    {EventKind::kClockSkew, false},
}};
const FaultKind* FaultOf(const Event& event) {
  if (event.refused) return nullptr;
  for (const FaultKind& f : kFaultKinds) {
    if (f.kind == event.kind) return &f;
  }
  return nullptr;
}

// Operations of the rw-register model: writes of the followed column and
// reads of one row.
bool IsRegisterWrite(const Operation& op) {
  return (op.type == OpType::kWrite || op.type == OpType::kCheckAndMutate) &&
         !op.written().empty();
}
bool IsRegisterOp(const Operation& op) {
  return IsRegisterWrite(op) || op.type == OpType::kReadRow;
}
std::string KeyOf(const Operation& op) {
  return std::string(op.table()) + "/" + std::string(op.row);
}

// Jepsen's processes (Porcupine's client ids). A process runs one
// operation at a time: a client with several in flight uses several, each
// taken when an operation is invoked and given back when it completes. A
// process whose operation ended as info is never used again (it may still
// be running it), as Jepsen requires. Numbers go from 0 in the order they
// are first needed.
class Processes {
 public:
  // A process of `client` that runs nothing now.
  int64_t Acquire(Name client) {
    std::vector<int64_t>& idle = idle_[client.view()];
    if (idle.empty()) return next_++;
    const int64_t process = idle.back();
    idle.pop_back();
    return process;
  }
  // `process` of `client` completed its operation; `reusable` unless it
  // ended as info.
  void Release(Name client, int64_t process, bool reusable) {
    if (reusable) idle_[client.view()].push_back(process);
  }

 private:
  std::map<std::string_view, std::vector<int64_t>> idle_;
  int64_t next_ = 0;
};

// One line of a Jepsen history before printing: an operation's invocation
// or completion, or a fault. Lines go in time order; at one time,
// completions first, then faults, then invocations: a client that issues
// its next operation when the last one completes does so in that order,
// and each client's operations must not overlap.
struct Line {
  sim::Duration at{0};
  int rank = 0;        // see below
  uint32_t index = 0;  // operation id, or event index
};
constexpr int kCompletion = 0;
constexpr int kFault = 1;
constexpr int kInvocation = 2;
// The completion of an operation that completed the instant it was
// invoked: after its invocation.
constexpr int kInstantCompletion = 3;
bool operator<(const Line& a, const Line& b) {
  if (a.at != b.at) return a.at < b.at;
  if (a.rank != b.rank) return a.rank < b.rank;
  return a.index < b.index;
}

// Calls visit(line, op, slot) for the lines of the operations `selected`
// (op: the operation) and of the faults (op: null), in Line order. `slot`
// is an integer of the operation's own: what the call for its invocation
// leaves there, the call for its completion finds. Operations come in
// invoke order (History), so only those in flight are held, with their
// completions in a heap: memory follows the concurrency, not the history.
template <typename Visit>
void ForEachLine(const History& history,
                 const std::function<bool(const Operation&)>& selected,
                 Visit&& visit) {
  std::vector<Line> faults;
  for (uint32_t i = 0; i < history.events.size(); ++i) {
    if (FaultOf(history.events[i]) != nullptr) {
      faults.push_back({history.events[i].at, kFault, i});
    }
  }
  std::sort(faults.begin(), faults.end());
  struct Completion {
    Line line;
    int64_t slot;
    Operation op;
  };
  std::vector<Completion> completions;  // a min-heap on line
  auto later = [](const Completion& a, const Completion& b) {
    return b.line < a.line;
  };
  size_t fault = 0;
  int64_t no_slot = 0;
  // Visits the faults and completions before `bound` (all when null).
  auto visit_before = [&](const Line* bound) {
    for (;;) {
      const bool have_fault = fault < faults.size();
      const bool have_completion = !completions.empty();
      if (!have_fault && !have_completion) return;
      const bool fault_first =
          have_fault &&
          (!have_completion || faults[fault] < completions.front().line);
      const Line& next = fault_first ? faults[fault] : completions.front().line;
      if (bound != nullptr && !(next < *bound)) return;
      if (fault_first) {
        visit(faults[fault++], static_cast<const Operation*>(nullptr), no_slot);
        continue;
      }
      std::pop_heap(completions.begin(), completions.end(), later);
      Completion done = std::move(completions.back());
      completions.pop_back();
      visit(done.line, &done.op, done.slot);
    }
  };
  sim::Duration last_invoke = sim::Duration::min();
  for (const Operation& op : history.operations) {
    BTSIM_CHECK(op.invoke >= last_invoke && op.complete >= op.invoke);
    last_invoke = op.invoke;
    if (!selected(op)) continue;
    const Line invocation{op.invoke, kInvocation, op.id};
    visit_before(&invocation);
    int64_t slot = 0;
    visit(invocation, &op, slot);
    // After its invocation: later in time, or at the same time with a
    // larger rank.
    completions.push_back(
        {{op.complete,
          op.complete > op.invoke ? kCompletion : kInstantCompletion, op.id},
         slot,
         op});
    std::push_heap(completions.begin(), completions.end(), later);
  }
  visit_before(nullptr);
}
bool IsCompletion(const Line& line) {
  return line.rank == kCompletion || line.rank == kInstantCompletion;
}

Value NemesisRecord(const Event& event) {
  Value value = Value::Map();
  value.Add("label", Value::String(event.label));
  if (!event.cluster.empty())
    value.Add("cluster", Value::String(event.cluster));
  if (!event.peer.empty()) value.Add("peer", Value::String(event.peer));
  if (!event.detail.empty()) value.Add("detail", Value::String(event.detail));
  Value record = Value::Map();
  record.Add("type", Value::Keyword("info"))
      .Add("f", Value::Keyword(EventKindName(event.kind)))
      .Add("value", std::move(value))
      .Add("time", Value::Int(event.at.count()))
      .Add("process", Value::Keyword("nemesis"));
  return record;
}

// The start of an operation's record: type, f, value.
Value OperationRecord(std::string_view type, std::string_view f, Value value) {
  Value record = Value::Map();
  record.Add("type", Value::Keyword(type))
      .Add("f", Value::Keyword(f))
      .Add("value", std::move(value));
  return record;
}

void AddError(const Operation& op, Value& record) {
  std::string error(StatusCodeName(op.code));
  if (!op.message.empty()) error += ": " + std::string(op.message);
  record.Add("error", Value::String(error));
}

// An operation's record as a format describes it: its `f` and `value`, and
// whether it carries the extra keys `cluster` and `profile`.
struct Described {
  std::string_view f;
  Value value;
  bool extras = false;
};

// The records of the operations `selected` (invocation and completion, in
// ForEachLine's order) and of the faults, one per line: `describe(op, done,
// outcome)` gives each operation's f and value.
template <typename Describe>
void WriteRecords(const History& history,
                  const std::function<bool(const Operation&)>& selected,
                  bool edn, Describe&& describe, std::ostream& out) {
  Processes processes;
  int64_t index = 0;
  std::string line;
  ForEachLine(
      history, selected,
      [&](const Line& l, const Operation* op, int64_t& process) {
        Value record;
        if (op == nullptr) {
          record = NemesisRecord(history.events[l.index]);
        } else {
          const bool done = IsCompletion(l);
          const Outcome outcome = OutcomeOf(*op);
          Described d = describe(*op, done, outcome);
          record = OperationRecord(done ? OutcomeName(outcome) : "invoke", d.f,
                                   std::move(d.value));
          if (done) {
            processes.Release(op->client(), process, outcome != Outcome::kInfo);
          } else {
            process = processes.Acquire(op->client());
          }
          record
              .Add("time",
                   Value::Int((done ? op->complete : op->invoke).count()))
              .Add("process", Value::Int(process));
          if (done && outcome != Outcome::kOk) AddError(*op, record);
          if (d.extras) {
            record.Add("cluster", Value::String(op->cluster))
                .Add("profile", Value::String(op->profile()));
          }
        }
        record.Add("index", Value::Int(index++));
        line.clear();
        Print(record, edn, line);
        out << line << '\n';
      });
}

// Jepsen's generic records: `f` is the operation's type, `value` a map of
// what it names and saw.
void WriteJepsen(const History& history, bool edn, std::ostream& out) {
  WriteRecords(
      history, [](const Operation&) { return true; }, edn,
      [&](const Operation& op, bool done, Outcome outcome) {
        Value value = Value::Map();
        value.Add("table", Value::String(op.table()))
            .Add("row", Value::String(op.row));
        const Append* append = FindAppend(history, op.id);
        if (!op.written().empty()) {
          value.Add("value", Value::String(history.names->Text(op.written())));
        } else if (append != nullptr) {
          value.Add("value", Value::String(append->token));
        }
        if (done && op.type == OpType::kAddToCell) {
          // On every completion: a failed add may have applied.
          value.Add("applied", Value::Int(op.applied()));
        }
        if (done && outcome == Outcome::kOk) {
          if (op.type == OpType::kReadRow) {
            value.Add("value",
                      op.read().empty()
                          ? Value()
                          : Value::String(history.names->Text(op.read())));
          } else if (op.type == OpType::kScan) {
            value.Add("rows", Value::Int(op.rows()));
          } else if (op.type == OpType::kReadModifyWrite) {
            value.Add("counter", Value::Int(op.counter()));
          } else if (append != nullptr && !append->list.empty()) {
            value.Add("list", Value::String(append->list));
          }
        }
        return Described{OpTypeName(op.type), std::move(value), true};
      },
      out);
}

// Values numbered per key from 1, in the order first asked for.
class ValueNumbers {
 public:
  int64_t Of(const std::string& key, std::string_view value) {
    auto& of_key = numbers_[key];
    auto it = of_key.find(value);
    if (it == of_key.end()) {
      it = of_key.emplace(value, static_cast<int64_t>(of_key.size()) + 1).first;
    }
    return it->second;
  }

 private:
  std::map<std::string, std::map<std::string, int64_t, std::less<>>> numbers_;
};

// An Elle history: each operation `selected` is one transaction whose
// micro-ops `txn(op, read_back)` gives (`read_back`: it completed ok).
template <typename Txn>
void WriteElle(const History& history,
               const std::function<bool(const Operation&)>& selected, Txn&& txn,
               std::ostream& out) {
  WriteRecords(
      history, selected, /*edn=*/false,
      [&](const Operation& op, bool done, Outcome outcome) {
        return Described{"txn", txn(op, done && outcome == Outcome::kOk)};
      },
      out);
}

// Elle's rw-register: a write of the followed column or a point read is a
// transaction of one micro-op; values numbered per key in the order the
// writes were invoked.
void WriteElleRwRegister(const History& history, std::ostream& out) {
  ValueNumbers numbers;
  for (const Operation& op : history.operations) {
    if (IsRegisterWrite(op)) {
      numbers.Of(KeyOf(op), history.names->Text(op.written()));
    }
  }
  WriteElle(
      history, IsRegisterOp,
      [&](const Operation& op, bool read_back) {
        const std::string key = KeyOf(op);
        if (IsRegisterWrite(op)) {
          return Value::Vector(
              {Value::Vector({Value::Keyword("w"), Value::String(key),
                              Value::Int(numbers.Of(
                                  key, history.names->Text(op.written())))})});
        }
        Value read;
        if (read_back && !op.read().empty()) {
          read = Value::Int(numbers.Of(key, history.names->Text(op.read())));
        }
        return Value::Vector({Value::Vector(
            {Value::Keyword("r"), Value::String(key), std::move(read)})});
      },
      out);
}

// Elle's list-append: each append of a simulated client appends its token
// and reads the whole list back, [append, r]; tokens numbered per key in
// the order the appends were invoked. An append that succeeded with a list
// btsim did not keep is [append] alone.
void WriteElleListAppend(const History& history, std::ostream& out) {
  ValueNumbers numbers;
  for (const Append& append : history.appends) {
    numbers.Of(KeyOf(history.operations.Get(append.op)), append.token.view());
  }
  // Appends of simulated clients only: recorded calls have no token.
  WriteElle(
      history,
      [&](const Operation& op) {
        return op.type == OpType::kAppend && FindAppend(history, op.id);
      },
      [&](const Operation& op, bool read_back) {
        const std::string key = KeyOf(op);
        const Append& append = *FindAppend(history, op.id);
        Value txn = Value::Vector({Value::Vector(
            {Value::Keyword("append"), Value::String(key),
             Value::Int(numbers.Of(key, append.token.view()))})});
        if (op.ok() && append.list.empty()) return txn;
        Value read;  // nil until read back
        if (read_back) {
          read = Value::Vector({});
          std::string_view list = append.list.view();
          while (!list.empty()) {
            const size_t end =
                std::min(list.find(kAppendSeparator), list.size());
            read.items.push_back(
                Value::Int(numbers.Of(key, list.substr(0, end))));
            list.remove_prefix(std::min(end + 1, list.size()));
          }
        }
        txn.items.push_back(Value::Vector(
            {Value::Keyword("r"), Value::String(key), std::move(read)}));
        return txn;
      },
      out);
}

// Porcupine's operations of a key-value model (put, get) and the faults as
// annotations spanning from the fault to its repair.
void WritePorcupine(const History& history, std::ostream& out) {
  // What Porcupine may use: what succeeded, and writes that may have taken
  // effect (a read that did not complete tells nothing).
  auto kept = [](const Operation& op) {
    const Outcome outcome = OutcomeOf(op);
    return IsRegisterOp(op) &&
           (outcome == Outcome::kOk ||
            (outcome == Outcome::kInfo && IsRegisterWrite(op)));
  };
  // One JSON object, printed as it goes: {"operations":[...],
  // "annotations":[...]}.
  Processes clients;
  std::string text = "{\"operations\":[";
  bool first = true;
  ForEachLine(
      history, kept, [&](const Line& l, const Operation* op, int64_t& client) {
        if (op == nullptr) return;  // faults are annotations
        const Outcome outcome = OutcomeOf(*op);
        if (!IsCompletion(l)) {
          client = clients.Acquire(op->client());
          return;
        }
        clients.Release(op->client(), client, outcome == Outcome::kOk);
        const bool write = IsRegisterWrite(*op);
        Value input = Value::Map();
        input.Add("Op", Value::String(write ? "put" : "get"))
            .Add("Key", Value::String(KeyOf(*op)));
        if (write) {
          input.Add("Value", Value::String(history.names->Text(op->written())));
        }
        Value output = Value::Map();
        output.Add("Value",
                   Value::String(write ? "" : history.names->Text(op->read())));
        // A write that may have taken effect may have done so at any time
        // until the end.
        const sim::Duration returned =
            outcome == Outcome::kOk ? op->complete : history.ended;
        Value record = Value::Map();
        record.Add("ClientId", Value::Int(client))
            .Add("Input", std::move(input))
            .Add("Call", Value::Int(op->invoke.count()))
            .Add("Output", std::move(output))
            .Add("Return", Value::Int(std::max(returned, op->invoke).count()));
        if (!first) text += ',';
        first = false;
        Print(record, /*edn=*/false, text);
        out << text;
        text.clear();
      });
  text += "],\"annotations\":";
  std::vector<Value> annotations;
  for (size_t i = 0; i < history.events.size(); ++i) {
    const Event& event = history.events[i];
    const FaultKind* fault = FaultOf(event);
    if (fault == nullptr) continue;
    // A lasting fault spans to its repair (the settle, when nothing ended
    // it earlier), or to the end of the history.
    sim::Duration end = event.at;
    if (fault->lasts) {
      const std::optional<size_t> repair =
          checks_internal::RepairOf(history.events, i);
      end = repair ? history.events[*repair].at : history.ended;
    }
    Value annotation = Value::Map();
    annotation.Add("ClientId", Value::Int(-1))
        .Add("Tag", Value::String("nemesis"))
        .Add("Start", Value::Int(event.at.count()))
        .Add("End", Value::Int(end.count()))
        .Add("Description",
             Value::String(std::string(EventKindName(event.kind)) + ": " +
                           event.label));
    annotations.push_back(std::move(annotation));
  }
  Print(Value::Vector(std::move(annotations)), /*edn=*/false, text);
  out << text << "}\n";
}

}  // namespace

std::span<const HistoryFormat> HistoryFormats() { return kFormatList; }

std::string_view HistoryFormatName(HistoryFormat format) {
  return InfoOf(format).name;
}

std::string_view HistoryFileName(HistoryFormat format) {
  return InfoOf(format).file;
}

Result<HistoryFormat> ParseHistoryFormat(std::string_view name) {
  std::string names;
  for (const FormatInfo& info : kFormats) {
    if (info.name == name) return info.format;
    names += (names.empty() ? "" : ", ") + std::string(info.name);
  }
  return InvalidArgument("unknown history format '" + std::string(name) +
                         "' (one of " + names + ")");
}

void WriteHistory(const History& history, HistoryFormat format,
                  std::ostream& out) {
  switch (format) {
    case HistoryFormat::kJepsen:
      WriteJepsen(history, /*edn=*/false, out);
      break;
    case HistoryFormat::kJepsenEdn:
      WriteJepsen(history, /*edn=*/true, out);
      break;
    case HistoryFormat::kElleRwRegister:
      WriteElleRwRegister(history, out);
      break;
    case HistoryFormat::kElleListAppend:
      WriteElleListAppend(history, out);
      break;
    case HistoryFormat::kPorcupine:
      WritePorcupine(history, out);
      break;
  }
}

}  // namespace btsim::scenarios
