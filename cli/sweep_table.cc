#include "cli/sweep_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <system_error>

namespace btsim::cli {
namespace {

// A whole unsigned decimal number, digits only.
bool ParseUint(std::string_view text, uint64_t* out) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

// NaN above everything, so that sorting is a strict weak order.
bool NumberLess(double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a < b;
}

// The text fields of a row, as written in results.csv.
std::vector<std::string> RowFields(const ResultsTable::Row& row) {
  std::vector<std::string> fields = {std::to_string(row.run),
                                     std::to_string(row.seed)};
  fields.insert(fields.end(), row.vary_values.begin(), row.vary_values.end());
  fields.push_back(row.fingerprint);
  fields.push_back(row.passed ? "1" : "0");
  for (double v : row.values) fields.push_back(FormatNumber(v));
  return fields;
}

struct CsvRecords {
  std::vector<std::vector<std::string>> records;
  std::vector<size_t> lines;  // 1-based line where each record starts
};

Result<CsvRecords> ParseCsvLines(std::string_view text, std::string_view name) {
  CsvRecords out;
  std::vector<std::string> record;
  std::string field;
  size_t line = 1;
  size_t record_line = 1;
  size_t i = 0;
  bool in_record = false;
  const auto error = [&](const std::string& what) {
    return InvalidArgument(std::string(name) + ":" + std::to_string(line) +
                           ": " + what);
  };
  const auto end_record = [&] {
    record.push_back(std::move(field));
    field.clear();
    out.records.push_back(std::move(record));
    out.lines.push_back(record_line);
    record.clear();
    in_record = false;
  };
  while (i < text.size()) {
    // At the start of a field.
    in_record = true;
    if (text[i] == '"') {
      ++i;
      while (true) {
        if (i >= text.size()) return error("unterminated quoted field");
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        if (text[i] == '\n') ++line;
        field += text[i++];
      }
      if (i < text.size() && text[i] != ',' && text[i] != '\n' &&
          !(text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
        return error("text after a closing quote");
      }
    } else {
      while (i < text.size() && text[i] != ',' && text[i] != '\n' &&
             !(text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
        if (text[i] == '"') return error("quote inside an unquoted field");
        field += text[i++];
      }
    }
    if (i >= text.size()) break;
    if (text[i] == ',') {
      record.push_back(std::move(field));
      field.clear();
      ++i;
      if (i >= text.size()) break;  // "a," at the very end: one more field
      continue;
    }
    // End of line.
    i += text[i] == '\r' ? 2 : 1;
    end_record();
    ++line;
    record_line = line;
  }
  if (in_record) end_record();
  return out;
}

}  // namespace

Result<SeedRange> ParseSeeds(std::string_view text) {
  const auto error = [&](const std::string& what) {
    return InvalidArgument("--seeds '" + std::string(text) + "': " + what);
  };
  SeedRange range;
  const size_t dots = text.find("..");
  if (dots == std::string_view::npos) {
    if (!ParseUint(text, &range.first)) {
      return error("expected A..B, e.g. 1..100");
    }
    range.last = range.first;
  } else if (!ParseUint(text.substr(0, dots), &range.first) ||
             !ParseUint(text.substr(dots + 2), &range.last)) {
    return error("expected A..B, e.g. 1..100");
  }
  if (range.first == 0) return error("seeds start at 1 (seed 0 means 1)");
  if (range.last < range.first) return error("B is smaller than A");
  if (range.last - range.first >= kMaxSweepRuns) {
    return error("more than " + std::to_string(kMaxSweepRuns) + " seeds");
  }
  return range;
}

Result<Shard> ParseShard(std::string_view text) {
  const auto error = [&](const std::string& what) {
    return InvalidArgument("--shard '" + std::string(text) + "': " + what);
  };
  Shard shard;
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos ||
      !ParseUint(text.substr(0, slash), &shard.index) ||
      !ParseUint(text.substr(slash + 1), &shard.count)) {
    return error("expected K/N, e.g. 0/4");
  }
  if (shard.count == 0) return error("N must be at least 1");
  if (shard.index >= shard.count) return error("K must be smaller than N");
  return shard;
}

Result<Vary> ParseVary(std::string_view text) {
  const auto error = [&](const std::string& what) {
    return InvalidArgument("--vary '" + std::string(text) + "': " + what);
  };
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return error(
        "expected path=v1,v2,..., e.g. "
        "clients[0].workload.ops_per_second=100,200");
  }
  Vary vary;
  vary.path = std::string(text.substr(0, eq));
  std::string_view rest = text.substr(eq + 1);
  std::set<std::string> seen;
  while (true) {
    const size_t comma = rest.find(',');
    std::string value(rest.substr(0, comma));
    if (value.empty()) return error("empty value");
    if (!seen.insert(value).second) {
      return error("value '" + value + "' given twice");
    }
    vary.values.push_back(std::move(value));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return vary;
}

Result<SweepGrid> SweepGrid::Create(std::vector<Vary> varies, SeedRange seeds) {
  std::set<std::string> paths;
  uint64_t points = 1;
  for (const Vary& vary : varies) {
    if (!paths.insert(vary.path).second) {
      return InvalidArgument("--vary " + vary.path + ": path given twice");
    }
    BTSIM_CHECK(!vary.values.empty());
    points *= vary.values.size();
    if (points > kMaxSweepRuns) break;
  }
  if (points > kMaxSweepRuns || points * seeds.count() > kMaxSweepRuns) {
    return InvalidArgument("the sweep has more than " +
                           std::to_string(kMaxSweepRuns) + " runs");
  }
  return SweepGrid(std::move(varies), seeds, static_cast<size_t>(points));
}

std::vector<std::string> SweepGrid::paths() const {
  std::vector<std::string> out;
  for (const Vary& vary : varies_) out.push_back(vary.path);
  return out;
}

std::vector<std::string> SweepGrid::PointValues(size_t point) const {
  BTSIM_CHECK(point < point_count_);
  std::vector<std::string> values(varies_.size());
  // Mixed radix, the last vary the least significant digit.
  for (size_t i = varies_.size(); i-- > 0;) {
    const size_t n = varies_[i].values.size();
    values[i] = varies_[i].values[point % n];
    point /= n;
  }
  return values;
}

std::string SweepGrid::PointLabel(size_t point) const {
  if (varies_.empty()) return "(no --vary)";
  const std::vector<std::string> values = PointValues(point);
  std::string label;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) label += ", ";
    label += varies_[i].path + "=" + values[i];
  }
  return label;
}

SweepRun SweepGrid::Run(uint64_t index) const {
  BTSIM_CHECK(index < run_count());
  return SweepRun{index, static_cast<size_t>(index / seeds_.count()),
                  seeds_.first + index % seeds_.count()};
}

std::vector<SweepRun> SweepGrid::ShardRuns(const Shard& shard) const {
  std::vector<SweepRun> runs;
  for (uint64_t i = shard.index; i < run_count(); i += shard.count) {
    runs.push_back(Run(i));
  }
  return runs;
}

std::string CsvField(std::string_view field) {
  const bool quote =
      field.find_first_of(",\"\r\n") != std::string_view::npos ||
      (!field.empty() && (field.front() == ' ' || field.back() == ' '));
  if (!quote) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string CsvRecord(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += CsvField(fields[i]);
  }
  out += '\n';
  return out;
}

Result<std::vector<std::vector<std::string>>> ParseCsv(std::string_view text,
                                                       std::string_view name) {
  BTSIM_ASSIGN_OR_RETURN(CsvRecords parsed, ParseCsvLines(text, name));
  return std::move(parsed.records);
}

std::string FormatNumber(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  BTSIM_CHECK(ec == std::errc());
  return std::string(buffer, end);
}

Result<double> ParseNumber(std::string_view text) {
  double value = 0;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return InvalidArgument("'" + std::string(text) + "' is not a number");
  }
  return value;
}

std::vector<std::string> ResultsTable::Header() const {
  std::vector<std::string> header = {"run", "seed"};
  header.insert(header.end(), vary_paths.begin(), vary_paths.end());
  header.push_back("fingerprint");
  header.push_back("passed");
  header.insert(header.end(), metrics.begin(), metrics.end());
  return header;
}

std::string FormatResults(const ResultsTable& table) {
  std::string out = CsvRecord(table.Header());
  for (const ResultsTable::Row& row : table.rows) {
    BTSIM_CHECK(row.vary_values.size() == table.vary_paths.size());
    BTSIM_CHECK(row.values.size() == table.metrics.size());
    out += CsvRecord(RowFields(row));
  }
  return out;
}

Result<ResultsTable> ParseResults(std::string_view text,
                                  std::string_view name) {
  BTSIM_ASSIGN_OR_RETURN(CsvRecords csv, ParseCsvLines(text, name));
  const auto error = [&](size_t record, const std::string& what) {
    return InvalidArgument(std::string(name) + ":" +
                           std::to_string(csv.lines[record]) + ": " + what);
  };
  if (csv.records.empty()) {
    return InvalidArgument(std::string(name) + ":1: empty file");
  }
  const std::vector<std::string>& header = csv.records[0];
  size_t fingerprint = 2;
  while (fingerprint < header.size() && header[fingerprint] != "fingerprint") {
    ++fingerprint;
  }
  if (header.size() < 4 || header[0] != "run" || header[1] != "seed" ||
      fingerprint + 1 >= header.size() || header[fingerprint + 1] != "passed") {
    return error(0,
                 "not a results.csv header (run, seed, <varies>, "
                 "fingerprint, passed, <metrics>)");
  }
  ResultsTable table;
  table.vary_paths.assign(header.begin() + 2, header.begin() + fingerprint);
  table.metrics.assign(header.begin() + fingerprint + 2, header.end());
  std::set<uint64_t> runs;
  for (size_t r = 1; r < csv.records.size(); ++r) {
    const std::vector<std::string>& fields = csv.records[r];
    if (fields.size() != header.size()) {
      return error(r, std::to_string(fields.size()) + " fields, expected " +
                          std::to_string(header.size()));
    }
    ResultsTable::Row row;
    if (!ParseUint(fields[0], &row.run)) {
      return error(r, "run: '" + fields[0] + "' is not a run index");
    }
    if (!ParseUint(fields[1], &row.seed)) {
      return error(r, "seed: '" + fields[1] + "' is not a seed");
    }
    if (!runs.insert(row.run).second) {
      return error(r, "run " + fields[0] + " appears twice");
    }
    row.vary_values.assign(fields.begin() + 2, fields.begin() + fingerprint);
    row.fingerprint = fields[fingerprint];
    const std::string& passed = fields[fingerprint + 1];
    if (passed != "0" && passed != "1") {
      return error(r, "passed: '" + passed + "' is neither 0 nor 1");
    }
    row.passed = passed == "1";
    for (size_t i = fingerprint + 2; i < fields.size(); ++i) {
      auto value = ParseNumber(fields[i]);
      if (!value.ok()) {
        return error(r, header[i] + ": " + value.status().message());
      }
      row.values.push_back(*value);
    }
    table.rows.push_back(std::move(row));
  }
  std::sort(table.rows.begin(), table.rows.end(),
            [](const auto& a, const auto& b) { return a.run < b.run; });
  return table;
}

Result<ResultsTable> MergeResults(
    const std::vector<std::pair<std::string, ResultsTable>>& tables) {
  if (tables.empty()) return InvalidArgument("nothing to merge");
  ResultsTable merged;
  merged.vary_paths = tables[0].second.vary_paths;
  merged.metrics = tables[0].second.metrics;
  // run -> (index of the file, row)
  std::map<uint64_t, std::pair<size_t, const ResultsTable::Row*>> rows;
  for (size_t t = 0; t < tables.size(); ++t) {
    const auto& [name, table] = tables[t];
    if (table.Header() != merged.Header()) {
      return InvalidArgument(name + ": header differs from " + tables[0].first +
                             "'s");
    }
    for (const ResultsTable::Row& row : table.rows) {
      auto [it, inserted] = rows.emplace(row.run, std::make_pair(t, &row));
      if (!inserted && RowFields(*it->second.second) != RowFields(row)) {
        return InvalidArgument("run " + std::to_string(row.run) +
                               " differs between " +
                               tables[it->second.first].first + " and " + name);
      }
    }
  }
  for (const auto& [run, entry] : rows) merged.rows.push_back(*entry.second);
  return merged;
}

std::vector<uint64_t> MissingRuns(const ResultsTable& table) {
  std::vector<uint64_t> missing;
  uint64_t next = 0;
  for (const ResultsTable::Row& row : table.rows) {
    for (; next < row.run; ++next) missing.push_back(next);
    next = row.run + 1;
  }
  return missing;
}

double NearestRank(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  BTSIM_CHECK(p > 0 && p <= 100);
  const double rank = std::ceil(p / 100 * static_cast<double>(sorted.size()));
  const size_t index =
      std::clamp<size_t>(static_cast<size_t>(rank), 1, sorted.size()) - 1;
  return sorted[index];
}

std::vector<PointSummary> Summarize(const ResultsTable& table) {
  std::map<std::vector<std::string>, size_t> index;
  std::vector<std::vector<const ResultsTable::Row*>> groups;
  std::vector<PointSummary> out;
  for (const ResultsTable::Row& row : table.rows) {
    auto [it, inserted] = index.emplace(row.vary_values, out.size());
    if (inserted) {
      out.push_back(PointSummary{row.vary_values, 0, 0, {}});
      groups.emplace_back();
    }
    PointSummary& point = out[it->second];
    ++point.runs;
    if (row.passed) ++point.passed;
    groups[it->second].push_back(&row);
  }
  for (size_t g = 0; g < out.size(); ++g) {
    for (size_t m = 0; m < table.metrics.size(); ++m) {
      std::vector<double> values;
      double sum = 0;
      for (const ResultsTable::Row* row : groups[g]) {
        values.push_back(row->values[m]);
        sum += row->values[m];
      }
      std::sort(values.begin(), values.end(), NumberLess);
      out[g].stats.push_back(
          MetricStats{sum / static_cast<double>(values.size()),
                      NearestRank(values, 50), NearestRank(values, 99)});
    }
  }
  return out;
}

std::string FormatSummaryCsv(const ResultsTable& table,
                             const std::vector<PointSummary>& summary) {
  std::vector<std::string> header = table.vary_paths;
  for (const char* column :
       {"column", "runs", "pass_rate", "mean", "p50", "p99"}) {
    header.push_back(column);
  }
  std::string out = CsvRecord(header);
  for (const PointSummary& point : summary) {
    const std::string pass_rate = FormatNumber(
        static_cast<double>(point.passed) / static_cast<double>(point.runs));
    for (size_t m = 0; m < table.metrics.size(); ++m) {
      std::vector<std::string> fields = point.vary_values;
      fields.push_back(table.metrics[m]);
      fields.push_back(std::to_string(point.runs));
      fields.push_back(pass_rate);
      fields.push_back(FormatNumber(point.stats[m].mean));
      fields.push_back(FormatNumber(point.stats[m].p50));
      fields.push_back(FormatNumber(point.stats[m].p99));
      out += CsvRecord(fields);
    }
  }
  return out;
}

void PrintSummaryTable(const ResultsTable& table,
                       const std::vector<PointSummary>& summary,
                       std::ostream& out) {
  size_t width = 6;  // "column"
  for (const std::string& metric : table.metrics) {
    width = std::max(width, metric.size());
  }
  const auto number = [](double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%12.6g", v);
    return std::string(buffer);
  };
  for (const PointSummary& point : summary) {
    std::string label;
    for (size_t i = 0; i < point.vary_values.size(); ++i) {
      if (i > 0) label += ", ";
      label += table.vary_paths[i] + "=" + point.vary_values[i];
    }
    if (label.empty()) label = "all runs";
    char rate[32];
    std::snprintf(rate, sizeof(rate), "%.1f%%",
                  100.0 * static_cast<double>(point.passed) /
                      static_cast<double>(point.runs));
    out << label << ": " << point.runs << " runs, " << point.passed
        << " passed (pass rate " << rate << ")\n";
    out << "  " << std::string("column") << std::string(width - 6, ' ')
        << "         mean          p50          p99\n";
    for (size_t m = 0; m < table.metrics.size(); ++m) {
      const std::string& name = table.metrics[m];
      out << "  " << name << std::string(width - name.size(), ' ') << " "
          << number(point.stats[m].mean) << " " << number(point.stats[m].p50)
          << " " << number(point.stats[m].p99) << "\n";
    }
  }
}

std::string FormatShardRecord(const ShardRecord& record) {
  return "shard " + std::to_string(record.shard.index) + "/" +
         std::to_string(record.shard.count) + "\nruns " +
         std::to_string(record.runs) + "\nsweep " + record.sweep + "\n";
}

Result<ShardRecord> ParseShardRecord(std::string_view text,
                                     const std::string& path) {
  const auto error = [&] {
    return InvalidArgument(path +
                           ": not a shard record (\"shard K/N\", \"runs "
                           "TOTAL\", \"sweep ID\", one per line)");
  };
  // Three lines, each "<word> <value>".
  std::string_view values[3];
  const std::string_view words[3] = {"shard ", "runs ", "sweep "};
  std::string_view rest = text;
  for (int i = 0; i < 3; ++i) {
    const size_t end = rest.find('\n');
    if (end == std::string_view::npos) return error();
    const std::string_view line = rest.substr(0, end);
    if (!line.starts_with(words[i])) return error();
    values[i] = line.substr(words[i].size());
    rest.remove_prefix(end + 1);
  }
  auto shard = ParseShard(values[0]);
  ShardRecord record;
  if (!rest.empty() || !shard.ok() || !ParseUint(values[1], &record.runs) ||
      values[2].empty()) {
    return error();
  }
  record.shard = *shard;
  record.sweep = std::string(values[2]);
  return record;
}

Status CheckShards(
    const std::vector<std::pair<std::string, ResultsTable>>& tables,
    const std::vector<ShardRecord>& records) {
  BTSIM_CHECK(tables.size() == records.size() && !tables.empty());
  const ShardRecord& first = records[0];
  std::map<uint64_t, std::string> given;  // shard index -> its directory
  for (size_t t = 0; t < tables.size(); ++t) {
    const std::string& name = tables[t].first;
    const ShardRecord& record = records[t];
    if (record.shard.count != first.shard.count || record.runs != first.runs ||
        record.sweep != first.sweep) {
      return InvalidArgument(
          name + ": shard " + std::to_string(record.shard.index) + "/" +
          std::to_string(record.shard.count) + " of " +
          std::to_string(record.runs) + " runs is not of the same sweep as " +
          tables[0].first);
    }
    auto [it, inserted] = given.emplace(record.shard.index, name);
    if (!inserted) {
      return InvalidArgument(name + ": shard " +
                             std::to_string(record.shard.index) +
                             " given twice (also " + it->second + ")");
    }
    // Exactly the shard's runs, in order.
    uint64_t expected = record.shard.index;
    for (const ResultsTable::Row& row : tables[t].second.rows) {
      if (row.run != expected || expected >= record.runs) {
        return InvalidArgument(
            name + ": shard " + std::to_string(record.shard.index) + "/" +
            std::to_string(record.shard.count) + " holds run " +
            std::to_string(row.run) +
            (expected < record.runs
                 ? ", expected run " + std::to_string(expected)
                 : ", beyond its runs"));
      }
      expected += record.shard.count;
    }
    if (expected < record.runs) {
      return InvalidArgument(
          name + ": shard " + std::to_string(record.shard.index) +
          " is incomplete: run " + std::to_string(expected) + " is missing");
    }
  }
  for (uint64_t k = 0; k < first.shard.count; ++k) {
    if (!given.contains(k)) {
      return InvalidArgument("shard " + std::to_string(k) + "/" +
                             std::to_string(first.shard.count) +
                             " is missing from the directories given");
    }
  }
  return OkStatus();
}

}  // namespace btsim::cli
