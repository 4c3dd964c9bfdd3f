#include "scenarios/history_export.h"

#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "scenarios/loader.h"
#include "scenarios/runner.h"
#include "tests/scenarios/checks_test_util.h"

namespace btsim::scenarios {
namespace {

using checks_test::Builder;
using checks_test::Ms;
using google::protobuf::Struct;
using google::protobuf::Value;

std::vector<std::string> Lines(const History& history, HistoryFormat format) {
  std::ostringstream out;
  WriteHistory(history, format, out);
  std::vector<std::string> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

Struct ParseJson(const std::string& line) {
  Struct s;
  const auto status = google::protobuf::util::JsonStringToMessage(line, &s);
  EXPECT_TRUE(status.ok()) << status.ToString() << ": " << line;
  return s;
}

// A small EDN reader for what the exporter writes (maps, vectors,
// keywords, strings, integers, nil), turning it into the JSON the JSON
// format writes: keywords become strings.
class EdnToJson {
 public:
  explicit EdnToJson(std::string_view text) : text_(text) {}
  std::optional<std::string> Convert() {
    std::string out;
    if (!Form(out)) return std::nullopt;
    Skip();
    if (at_ != text_.size()) return std::nullopt;
    return out;
  }

 private:
  void Skip() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == ',')) {
      ++at_;
    }
  }
  bool Form(std::string& out) {
    Skip();
    if (at_ >= text_.size()) return false;
    const char c = text_[at_];
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      out += c;
      ++at_;
      for (bool first = true;; first = false) {
        Skip();
        if (at_ >= text_.size()) return false;
        if (text_[at_] == close) {
          ++at_;
          out += close;
          return true;
        }
        if (!first) out += ',';
        if (!Form(out)) return false;
        if (c == '{') {
          out += ':';
          if (!Form(out)) return false;
        }
      }
    }
    if (c == ':') {  // a keyword
      ++at_;
      const size_t start = at_;
      while (at_ < text_.size() && text_[at_] != ' ' && text_[at_] != ',' &&
             text_[at_] != '}' && text_[at_] != ']') {
        ++at_;
      }
      out += "\"" + std::string(text_.substr(start, at_ - start)) + "\"";
      return at_ > start;
    }
    if (c == '"') {
      const size_t start = at_++;
      while (at_ < text_.size() && text_[at_] != '"') {
        at_ += text_[at_] == '\\' ? 2 : 1;
      }
      if (at_ >= text_.size()) return false;
      ++at_;
      out += text_.substr(start, at_ - start);
      return true;
    }
    if (text_.substr(at_, 3) == "nil") {
      at_ += 3;
      out += "null";
      return true;
    }
    const size_t start = at_;
    if (text_[at_] == '-') ++at_;
    while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
    out += text_.substr(start, at_ - start);
    return at_ > start;
  }

  std::string_view text_;
  size_t at_ = 0;
};

// A history with every outcome: an ok write and read, a failed write that
// committed (its reply came too late), one that did not, a read of nothing,
// an operation still in flight, and a fault with its repair.
History Mixed() {
  Builder b;
  b.Write("a-0", "r1", "a-0/1", 0, 10);
  b.Read("b-0", "r1", "a-0/1", 20, 30);
  Operation& late = b.Write("a-0", "r2", "a-0/2", 40, 2040, "c1",
                            StatusCode::kDeadlineExceeded);
  late.message = b.Intern("the attempt's deadline passed");
  Operation& lost = b.Write("a-0", "r3", "a-0/3", 2050, 4050, "c1",
                            StatusCode::kDeadlineExceeded);
  lost.version = 0;
  b.Read("b-0", "r3", "", 4100, 4110);
  Operation& hung = b.Read("b-0", "r4", "", 4200, 5000);
  hung.attempts = 0;
  hung.code = StatusCode::kUnknown;
  b.AddEvent(EventKind::kClusterDown, 35, "c1").label = "c1 fails";
  b.AddEvent(EventKind::kClusterUp, 3000, "c1").label = "c1 back";
  b.AddEvent(EventKind::kStartClient, 100, "").label = "not a fault";
  History h = b.history();
  h.ended = Ms(5000);
  return h;
}

TEST(HistoryExportTest, FormatsByName) {
  for (HistoryFormat f : HistoryFormats()) {
    auto parsed = ParseHistoryFormat(HistoryFormatName(f));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, f);
  }
  auto bad = ParseHistoryFormat("elle");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), testing::HasSubstr("one of jepsen"));
}

TEST(HistoryExportTest, JepsenRecordsFollowTheSourceHistory) {
  const History h = Mixed();
  const std::vector<std::string> lines = Lines(h, HistoryFormat::kJepsen);
  // Two records per operation, and the two faults (not the client start).
  ASSERT_EQ(lines.size(), 2 * h.operations.size() + 2);
  const std::set<std::string> published = {"type",    "f",     "value", "time",
                                           "process", "index", "error"};
  const std::set<std::string> extra = {"cluster", "profile"};
  std::map<std::string, int> types;
  int64_t last_time = -1;
  for (size_t i = 0; i < lines.size(); ++i) {
    const Struct record = ParseJson(lines[i]);
    for (const auto& [key, value] : record.fields()) {
      EXPECT_TRUE(published.contains(key) || extra.contains(key))
          << key << " in " << lines[i];
    }
    for (const char* key : {"type", "f", "value", "time", "process", "index"}) {
      EXPECT_TRUE(record.fields().contains(key)) << key << " in " << lines[i];
    }
    EXPECT_EQ(record.fields().at("index").number_value(), i);
    const int64_t time = record.fields().at("time").number_value();
    EXPECT_GE(time, last_time) << lines[i];
    last_time = time;
    const std::string type = record.fields().at("type").string_value();
    ++types[type];
    EXPECT_TRUE(type == "invoke" || type == "ok" || type == "fail" ||
                type == "info");
    EXPECT_EQ(
        record.fields().contains("error"),
        type == "fail" || (type == "info" &&
                           record.fields().at("process").has_number_value()))
        << lines[i];
  }
  EXPECT_EQ(types["invoke"], 6);
  EXPECT_EQ(types["ok"], 3);
  EXPECT_EQ(types["fail"], 1);  // the write that never committed
  EXPECT_EQ(types["info"], 4);  // committed late, in flight, two faults

  // Each operation's records, by what they say.
  std::map<std::string, std::vector<Struct>> of_row;
  for (const std::string& line : lines) {
    Struct r = ParseJson(line);
    if (r.fields().at("process").has_string_value()) {
      EXPECT_EQ(r.fields().at("process").string_value(), "nemesis");
      continue;
    }
    of_row[r.fields()
               .at("value")
               .struct_value()
               .fields()
               .at("row")
               .string_value()]
        .push_back(r);
  }
  ASSERT_EQ(of_row["r2"].size(), 2u);
  const Struct& late = of_row["r2"][1];
  EXPECT_EQ(late.fields().at("type").string_value(), "info");
  EXPECT_EQ(late.fields().at("f").string_value(), "write");
  EXPECT_EQ(late.fields().at("time").number_value(), 2040e6);
  EXPECT_EQ(late.fields().at("error").string_value(),
            "DEADLINE_EXCEEDED: the attempt's deadline passed");
  const Struct& read = of_row["r1"][3];  // invoke w, ok w, invoke r, ok r
  EXPECT_EQ(read.fields().at("f").string_value(), "read_row");
  EXPECT_EQ(read.fields()
                .at("value")
                .struct_value()
                .fields()
                .at("value")
                .string_value(),
            "a-0/1");
  EXPECT_NE(read.fields().at("process").number_value(),
            of_row["r1"][0].fields().at("process").number_value());
  // After its info, a-0 goes on as a new process.
  EXPECT_EQ(of_row["r2"][0].fields().at("process").number_value(),
            of_row["r1"][0].fields().at("process").number_value());
  EXPECT_NE(of_row["r3"][0].fields().at("process").number_value(),
            of_row["r1"][0].fields().at("process").number_value());
  EXPECT_TRUE(of_row["r3"][3]
                  .fields()
                  .at("value")
                  .struct_value()
                  .fields()
                  .at("value")
                  .has_null_value());
}

TEST(HistoryExportTest, ProcessesRunOneOperationAtATime) {
  Builder b;
  // One client with three operations in flight at once, one refused the
  // instant it was invoked, and one that timed out after committing.
  b.Write("a-0", "r1", "a-0/1", 0, 30);
  b.Write("a-0", "r2", "a-0/2", 10, 40);
  b.Op(OpType::kReadRow, "a-0", "r3", 20, 20, "", StatusCode::kNotFound);
  b.Write("a-0", "r4", "a-0/4", 50, 2050, "c1", StatusCode::kDeadlineExceeded);
  b.Write("a-0", "r5", "a-0/5", 2060, 2070);
  std::map<int, std::vector<std::string>> of_process;
  for (const std::string& line : Lines(b.history(), HistoryFormat::kJepsen)) {
    const Struct r = ParseJson(line);
    of_process[static_cast<int>(r.fields().at("process").number_value())]
        .push_back(r.fields().at("type").string_value() + " " +
                   r.fields()
                       .at("value")
                       .struct_value()
                       .fields()
                       .at("row")
                       .string_value());
  }
  // Each process alternates invoke and completion; r3 is invoked before it
  // completes; after its info, r4's process is not used again.
  // (The process freed last is taken first.)
  EXPECT_THAT(of_process[0],
              testing::ElementsAre("invoke r1", "ok r1", "invoke r5", "ok r5"));
  EXPECT_THAT(of_process[1], testing::ElementsAre("invoke r2", "ok r2",
                                                  "invoke r4", "info r4"));
  EXPECT_THAT(of_process[2], testing::ElementsAre("invoke r3", "fail r3"));
  EXPECT_EQ(of_process.size(), 3u);
}

TEST(HistoryExportTest, EdnHoldsTheSameRecordsAsJson) {
  const History h = Mixed();
  const std::vector<std::string> json = Lines(h, HistoryFormat::kJepsen);
  const std::vector<std::string> edn = Lines(h, HistoryFormat::kJepsenEdn);
  ASSERT_EQ(json.size(), edn.size());
  for (size_t i = 0; i < edn.size(); ++i) {
    EXPECT_THAT(edn[i], testing::StartsWith("{:type :"));
    std::optional<std::string> converted = EdnToJson(edn[i]).Convert();
    ASSERT_TRUE(converted) << edn[i];
    EXPECT_EQ(ParseJson(*converted).DebugString(),
              ParseJson(json[i]).DebugString());
  }
}

TEST(HistoryExportTest, ElleRwRegisterNumbersValuesPerKey) {
  const History h = Mixed();
  const std::vector<std::string> lines =
      Lines(h, HistoryFormat::kElleRwRegister);
  // Register operations only: writes of the value column and point reads.
  ASSERT_EQ(lines.size(), 2 * h.operations.size() + 2);
  std::vector<std::string> ok;
  for (const std::string& line : lines) {
    const Struct r = ParseJson(line);
    if (r.fields().at("process").has_string_value()) continue;
    EXPECT_EQ(r.fields().at("f").string_value(), "txn");
    const auto& txn = r.fields().at("value").list_value();
    ASSERT_EQ(txn.values_size(), 1);
    const auto& micro = txn.values(0).list_value();
    ASSERT_EQ(micro.values_size(), 3);
    if (r.fields().at("type").string_value() == "ok") {
      std::string value = micro.values(2).has_null_value()
                              ? "nil"
                              : std::to_string(static_cast<int>(
                                    micro.values(2).number_value()));
      ok.push_back(micro.values(0).string_value() + " " +
                   micro.values(1).string_value() + " " + value);
    }
  }
  EXPECT_THAT(ok, testing::ElementsAre("w t/r1 1", "r t/r1 1", "r t/r3 nil"));
}

TEST(HistoryExportTest, PorcupineKeepsWhatMayHaveTakenEffect) {
  const History h = Mixed();
  const std::vector<std::string> lines = Lines(h, HistoryFormat::kPorcupine);
  ASSERT_EQ(lines.size(), 1u);
  const Struct all = ParseJson(lines[0]);
  const auto& ops = all.fields().at("operations").list_value();
  // The write that never committed is left out, and so is the read that
  // never completed; the late write may have taken effect until the end.
  ASSERT_EQ(ops.values_size(), 4);
  std::map<std::string, double> returned;
  for (const Value& v : ops.values()) {
    const auto& f = v.struct_value().fields();
    for (const char* key : {"ClientId", "Input", "Call", "Output", "Return"}) {
      EXPECT_TRUE(f.contains(key));
    }
    EXPECT_LE(f.at("Call").number_value(), f.at("Return").number_value());
    returned[f.at("Input").struct_value().fields().at("Key").string_value()] =
        f.at("Return").number_value();
  }
  EXPECT_EQ(returned["t/r2"], 5000e6);
  EXPECT_FALSE(returned.contains("t/r4"));
  EXPECT_NE(returned["t/r3"], 4050e6);  // the read of r3, not the write
  const auto& notes = all.fields().at("annotations").list_value();
  ASSERT_EQ(notes.values_size(), 2);
  const auto& down = notes.values(0).struct_value().fields();
  EXPECT_EQ(down.at("Start").number_value(), 35e6);
  EXPECT_EQ(down.at("End").number_value(), 3000e6);  // its cluster_up
  EXPECT_EQ(down.at("Tag").string_value(), "nemesis");
}

// An independent check of an rw-register history of single-op
// transactions: a read is stale when it returns nothing, or a value whose
// write completed before another write began, while that other write had
// completed before the read began (a linearizability violation; sound, not
// complete).
int StaleReads(const std::vector<std::string>& lines) {
  struct Write {
    double invoke, complete;
  };
  std::map<std::pair<std::string, int>, Write> writes;  // ok writes
  std::map<std::string, std::vector<int>> values_of;
  std::map<std::pair<std::string, int64_t>, double> invoked;  // process, key
  struct Read {
    std::string key;
    std::optional<int> value;
    double invoke;
  };
  std::vector<Read> reads;
  std::set<int64_t> open;  // processes with an operation in flight
  for (const std::string& line : lines) {
    const Struct r = ParseJson(line);
    if (r.fields().at("process").has_string_value()) continue;
    const std::string type = r.fields().at("type").string_value();
    const auto& micro =
        r.fields().at("value").list_value().values(0).list_value();
    const std::string key = micro.values(1).string_value();
    const auto process =
        static_cast<int64_t>(r.fields().at("process").number_value());
    const double time = r.fields().at("time").number_value();
    // Each process's operations alternate: invoke, then its completion.
    if (type == "invoke") {
      EXPECT_TRUE(open.insert(process).second) << "overlap: " << line;
      invoked[{key, process}] = time;
      continue;
    }
    EXPECT_EQ(open.erase(process), 1u) << "no invoke: " << line;
    if (type != "ok") continue;
    const double invoke = invoked.at({key, process});
    if (micro.values(0).string_value() == "w") {
      const int v = static_cast<int>(micro.values(2).number_value());
      writes[{key, v}] = {invoke, time};
      values_of[key].push_back(v);
    } else {
      std::optional<int> v;
      if (!micro.values(2).has_null_value()) {
        v = static_cast<int>(micro.values(2).number_value());
      }
      reads.push_back({key, v, invoke});
    }
  }
  int stale = 0;
  for (const Read& read : reads) {
    for (int other : values_of[read.key]) {
      const Write& newer = writes.at({read.key, other});
      if (newer.complete >= read.invoke ||
          (read.value && *read.value == other)) {
        continue;
      }
      auto seen =
          read.value ? writes.find({read.key, *read.value}) : writes.end();
      if (!read.value ||
          (seen != writes.end() && seen->second.complete < newer.invoke)) {
        ++stale;
        break;
      }
    }
  }
  return stale;
}

// Clients in a zone as far from c1 as from c2, every one writing and
// reading 20 rows through PROFILE; replication takes 300 ms.
std::string Scenario(const std::string& profile) {
  return R"txt(name: "registers"
seed: 3
duration { seconds: 10 }
instance {
  clusters { id: "c1" zone: "us-east1-b" }
  clusters { id: "c2" zone: "us-east1-c" }
  client_zone: "us-east1-d"
  links {
    overrides {
      from_cluster: "c1" to_cluster: "c2"
      latency { constant { nanos: 300000000 } }
    }
  }
  app_profiles { id: "single" single_cluster { cluster_id: "c1" } }
}
tables { id: "t" families { name: "cf" } }
clients {
  name: "app"
  count: 4
  zone: "us-east1-d"
  app_profile: ")txt" +
         profile + R"txt("
  workload {
    mix { read_row: 70 write: 30 }
    keys { uniform {} entities: 20 }
    in_flight: 1
  }
}
)txt";
}

History RunText(const std::string& text) {
  auto loaded = ParseScenario(text, "registers.textproto");
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  auto outcome = RunScenario(*loaded);
  EXPECT_TRUE(outcome.ok());
  return std::move(outcome->history);
}

TEST(HistoryExportTest, SingleClusterRoutingGivesNoStaleRead) {
  const History h = RunText(Scenario("single"));
  const auto lines = Lines(h, HistoryFormat::kElleRwRegister);
  ASSERT_GT(lines.size(), 1000u);
  EXPECT_EQ(StaleReads(lines), 0);
}

TEST(HistoryExportTest, MultiClusterRoutingWithLagGivesStaleReads) {
  const History h = RunText(Scenario("default"));
  const auto lines = Lines(h, HistoryFormat::kElleRwRegister);
  ASSERT_GT(lines.size(), 1000u);
  EXPECT_GT(StaleReads(lines), 10);
}

// An independent check of a list-append history of [append, r]
// transactions: every list read back must be a prefix of every longer one
// of its key (incompatible orders), and an acknowledged append must be in
// every list read by an append invoked after it completed (lost updates).
struct ListAnomalies {
  int incompatible = 0;
  int lost = 0;
  int appends = 0;
};
ListAnomalies CheckLists(const std::vector<std::string>& lines) {
  struct Done {
    double invoke, complete;
    int64_t token;
    std::vector<int64_t> list;
  };
  std::map<std::string, std::vector<Done>> of_key;
  std::map<int64_t, double> invoked;  // by process
  for (const std::string& line : lines) {
    const Struct r = ParseJson(line);
    if (r.fields().at("process").has_string_value()) continue;
    EXPECT_EQ(r.fields().at("f").string_value(), "txn");
    const auto& txn = r.fields().at("value").list_value();
    EXPECT_EQ(txn.values_size(), 2);
    const auto& append = txn.values(0).list_value();
    const auto& read = txn.values(1).list_value();
    EXPECT_EQ(append.values(0).string_value(), "append");
    EXPECT_EQ(read.values(0).string_value(), "r");
    const auto process =
        static_cast<int64_t>(r.fields().at("process").number_value());
    const std::string type = r.fields().at("type").string_value();
    if (type == "invoke") {
      EXPECT_TRUE(read.values(2).has_null_value());
      invoked[process] = r.fields().at("time").number_value();
      continue;
    }
    if (type != "ok") continue;
    Done done{invoked.at(process),
              r.fields().at("time").number_value(),
              static_cast<int64_t>(append.values(2).number_value()),
              {}};
    for (const Value& v : read.values(2).list_value().values()) {
      done.list.push_back(static_cast<int64_t>(v.number_value()));
    }
    // The list read back ends with the token appended.
    EXPECT_FALSE(done.list.empty());
    if (!done.list.empty()) {
      EXPECT_EQ(done.list.back(), done.token);
    }
    of_key[append.values(1).string_value()].push_back(std::move(done));
  }
  ListAnomalies out;
  for (const auto& [key, done] : of_key) {
    out.appends += static_cast<int>(done.size());
    for (const Done& a : done) {
      for (const Done& b : done) {
        const auto& shorter = a.list.size() <= b.list.size() ? a.list : b.list;
        const auto& longer = a.list.size() <= b.list.size() ? b.list : a.list;
        if (&a < &b &&
            !std::equal(shorter.begin(), shorter.end(), longer.begin())) {
          ++out.incompatible;
        }
        if (b.invoke > a.complete &&
            std::find(b.list.begin(), b.list.end(), a.token) == b.list.end()) {
          ++out.lost;
        }
      }
    }
  }
  return out;
}

// Clients appending to 20 rows (80 appends a second in all; each append
// reads the whole list back, so lists stay short), half through TX_LEFT,
// half through
// TX_RIGHT (transactional profiles pinned to c1 or c2); replication
// between the clusters takes 100 ms.
std::string AppendScenario(const std::string& left, const std::string& right) {
  return R"txt(name: "appends"
seed: 5
duration { seconds: 10 }
instance {
  clusters { id: "c1" zone: "us-east1-b" }
  clusters { id: "c2" zone: "us-east1-c" }
  links {
    overrides {
      from_cluster: "c1" to_cluster: "c2"
      latency { constant { nanos: 100000000 } }
    }
  }
  app_profiles {
    id: "tx-c1"
    single_cluster { cluster_id: "c1" allow_transactional_writes: true }
  }
  app_profiles {
    id: "tx-c2"
    single_cluster { cluster_id: "c2" allow_transactional_writes: true }
  }
}
tables { id: "t" families { name: "cf" } }
clients {
  name: "left"
  count: 2
  app_profile: ")txt" +
         left + R"txt("
  workload { mix { append: 1 } keys { uniform {} entities: 20 } ops_per_second: 20 }
}
clients {
  name: "right"
  count: 2
  app_profile: ")txt" +
         right + R"txt("
  workload { mix { append: 1 } keys { uniform {} entities: 20 } ops_per_second: 20 }
}
)txt";
}

TEST(HistoryExportTest, OneTransactionalClusterLosesNoAppend) {
  const History h = RunText(AppendScenario("tx-c1", "tx-c1"));
  const ListAnomalies found =
      CheckLists(Lines(h, HistoryFormat::kElleListAppend));
  EXPECT_GT(found.appends, 500);
  EXPECT_EQ(found.incompatible, 0);
  EXPECT_EQ(found.lost, 0);
}

TEST(HistoryExportTest, TransactionsOnTwoClustersLoseAppends) {
  // The configuration Bigtable warns about: single-row transactions
  // through profiles pinned to different clusters.
  const History h = RunText(AppendScenario("tx-c1", "tx-c2"));
  const ListAnomalies found =
      CheckLists(Lines(h, HistoryFormat::kElleListAppend));
  EXPECT_GT(found.appends, 500);
  EXPECT_GT(found.incompatible, 10);
  EXPECT_GT(found.lost, 10);
}

}  // namespace
}  // namespace btsim::scenarios
