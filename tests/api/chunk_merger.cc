#include "tests/api/chunk_merger.h"

#include <cstdio>
#include <utility>

namespace btsim::api_test {

using google::bigtable::v2::ReadRowsResponse;

namespace {

// Bytes made readable: printable ASCII as is, everything else as \xNN, cut
// after 40 characters.
std::string Printable(std::string_view bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < 40; ++i) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  if (bytes.size() > 40) out += "...(" + std::to_string(bytes.size()) + "B)";
  return out;
}

}  // namespace

// ------------------------------------------------------------ MergedRow

const MergedFamily* MergedRow::Family(std::string_view name) const {
  for (const MergedFamily& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const MergedColumn* MergedRow::Column(std::string_view family,
                                      std::string_view qualifier) const {
  const MergedFamily* f = Family(family);
  if (f == nullptr) return nullptr;
  for (const MergedColumn& c : f->columns) {
    if (c.qualifier == qualifier) return &c;
  }
  return nullptr;
}

std::vector<MergedCell> MergedRow::Cells(std::string_view family,
                                         std::string_view qualifier) const {
  const MergedColumn* c = Column(family, qualifier);
  return c == nullptr ? std::vector<MergedCell>{} : c->cells;
}

std::optional<std::string> MergedRow::Latest(std::string_view family,
                                             std::string_view qualifier) const {
  const MergedColumn* c = Column(family, qualifier);
  if (c == nullptr || c->cells.empty()) return std::nullopt;
  return c->cells.front().value;
}

size_t MergedRow::CellCount() const {
  size_t n = 0;
  for (const MergedFamily& f : families) {
    for (const MergedColumn& c : f.columns) n += c.cells.size();
  }
  return n;
}

std::string MergedRow::DebugString() const {
  std::string out = "row '" + Printable(key) + "'\n";
  for (const MergedFamily& f : families) {
    for (const MergedColumn& c : f.columns) {
      for (const MergedCell& cell : c.cells) {
        out += "  " + f.name + ":" + Printable(c.qualifier) + " @" +
               std::to_string(cell.timestamp_micros) + " = '" +
               Printable(cell.value) + "'";
        for (const std::string& l : cell.labels) out += " [" + l + "]";
        out += "\n";
      }
    }
  }
  return out;
}

// ---------------------------------------------------------- ChunkMerger

Status ChunkMerger::Error(const std::string& message) const {
  std::string where = "chunk " + std::to_string(chunk_index_);
  if (state_ != State::kBetweenRows) {
    where += " (row '" + Printable(row_.key) + "')";
  }
  return Internal("ReadRows stream violation at " + where + ": " + message);
}

bool ChunkMerger::Before(const std::string& a, const std::string& b) const {
  return reversed_ ? a > b : a < b;
}

Status ChunkMerger::Feed(const ReadRowsResponse& response) {
  if (!failure_.ok()) return failure_;
  for (const ReadRowsResponse::CellChunk& chunk : response.chunks()) {
    Status s = FeedChunk(chunk);
    ++chunk_index_;
    if (!s.ok()) {
      failure_ = s;
      return s;
    }
  }
  const std::string& scanned = response.last_scanned_row_key();
  if (!scanned.empty()) {
    // A progress marker: never behind a committed row, and every later row
    // lies strictly beyond it.
    const std::optional<std::string>& mark =
        last_scanned_ ? last_scanned_ : last_committed_;
    if (mark && Before(scanned, *mark)) {
      failure_ = Error("last_scanned_row_key '" + Printable(scanned) +
                       "' goes backwards (after '" + Printable(*mark) + "')");
      return failure_;
    }
    if (state_ != State::kBetweenRows && !Before(scanned, row_.key)) {
      failure_ = Error("last_scanned_row_key '" + Printable(scanned) +
                       "' is not before the row in progress");
      return failure_;
    }
    last_scanned_ = scanned;
  }
  return OkStatus();
}

Status ChunkMerger::Finish() {
  if (!failure_.ok()) return failure_;
  if (state_ != State::kBetweenRows) {
    failure_ = Error(state_ == State::kInValue
                         ? "stream ended in the middle of a split value"
                         : "stream ended in the middle of a row (no "
                           "commit_row)");
    return failure_;
  }
  return OkStatus();
}

std::vector<MergedRow> ChunkMerger::TakeRows() {
  return std::exchange(rows_, {});
}

Status ChunkMerger::FeedChunk(const ReadRowsResponse::CellChunk& c) {
  if (c.reset_row()) {
    if (state_ == State::kBetweenRows) {
      return Error("reset_row outside a row");
    }
    if (!c.row_key().empty() || c.has_family_name() || c.has_qualifier() ||
        c.timestamp_micros() != 0 || c.labels_size() > 0 ||
        !c.value().empty() || c.value_size() != 0) {
      return Error("reset_row on a chunk that also carries data");
    }
    row_ = MergedRow();
    state_ = State::kBetweenRows;
    return OkStatus();
  }
  if (state_ == State::kInValue) return Continue(c);
  return StartCell(c);
}

Status ChunkMerger::StartCell(const ReadRowsResponse::CellChunk& c) {
  if (c.value_size() < 0) {
    return Error("negative value_size " + std::to_string(c.value_size()));
  }
  if (c.has_family_name() && !c.has_qualifier()) {
    return Error("family_name '" + c.family_name().value() +
                 "' without a qualifier");
  }
  if (c.has_family_name() && c.family_name().value().empty()) {
    return Error("empty family_name");
  }
  if (state_ == State::kBetweenRows) {
    if (c.row_key().empty())
      return Error("first chunk of a row has no row_key");
    if (!c.has_family_name()) {
      return Error("first chunk of row '" + Printable(c.row_key()) +
                   "' has no family_name");
    }
    if (!c.has_qualifier()) {
      return Error("first chunk of row '" + Printable(c.row_key()) +
                   "' has no qualifier");
    }
    if (last_committed_ && c.row_key() == *last_committed_) {
      return Error("duplicate row key '" + Printable(c.row_key()) + "'");
    }
    if (last_committed_ && !Before(*last_committed_, c.row_key())) {
      return Error(std::string("row key '") + Printable(c.row_key()) +
                   "' is not " + (reversed_ ? "below" : "above") +
                   " the previous row '" + Printable(*last_committed_) + "'");
    }
    if (last_scanned_ && !Before(*last_scanned_, c.row_key())) {
      return Error("row key '" + Printable(c.row_key()) +
                   "' is not beyond last_scanned_row_key '" +
                   Printable(*last_scanned_) + "'");
    }
    row_ = MergedRow();
    row_.key = c.row_key();
    families_seen_.clear();
    have_cell_ = false;
    state_ = State::kInRow;
  } else {
    if (!c.row_key().empty() && c.row_key() != row_.key) {
      return Error("row key changes to '" + Printable(c.row_key()) +
                   "' before the row was committed");
    }
    if (c.row_key().empty() && !c.has_family_name() && !c.has_qualifier() &&
        c.timestamp_micros() == 0 && c.value().empty() &&
        c.labels_size() == 0 && c.value_size() == 0) {
      return Error(c.commit_row()
                       ? "bare commit_row chunk (carries no cell data)"
                       : "bare chunk (starts no cell and continues none)");
    }
  }

  // Where the new cell goes.
  const bool new_family = c.has_family_name() &&
                          (!have_cell_ || c.family_name().value() != family_);
  if (new_family) {
    const std::string& f = c.family_name().value();
    if (families_seen_.count(f) > 0) {
      return Error("cells of family '" + f +
                   "' are not contiguous (the family appears again after "
                   "another family)");
    }
    families_seen_.insert(f);
    family_ = f;
    qualifier_ = c.qualifier().value();
    row_.families.push_back(MergedFamily{f, {}});
    row_.families.back().columns.push_back(MergedColumn{qualifier_, {}});
  } else if (c.has_qualifier() && c.qualifier().value() != qualifier_) {
    const std::string& q = c.qualifier().value();
    if (q < qualifier_) {
      return Error("qualifier '" + Printable(q) + "' of family '" + family_ +
                   "' is below the previous qualifier '" +
                   Printable(qualifier_) + "'");
    }
    qualifier_ = q;
    row_.families.back().columns.push_back(MergedColumn{qualifier_, {}});
  } else if (have_cell_ && c.timestamp_micros() > last_timestamp_) {
    return Error("timestamp " + std::to_string(c.timestamp_micros()) +
                 " in column " + family_ + ":" + Printable(qualifier_) +
                 " is above the previous cell's " +
                 std::to_string(last_timestamp_));
  }
  MergedCell cell;
  cell.timestamp_micros = c.timestamp_micros();
  cell.value = c.value();
  cell.labels.assign(c.labels().begin(), c.labels().end());
  row_.families.back().columns.back().cells.push_back(std::move(cell));
  have_cell_ = true;
  last_timestamp_ = c.timestamp_micros();

  if (c.value_size() > 0) {
    value_size_ = c.value_size();
    if (static_cast<int64_t>(c.value().size()) > value_size_) {
      return Error(
          "split value: first piece holds " + std::to_string(c.value().size()) +
          " bytes, more than value_size " + std::to_string(value_size_));
    }
    if (c.commit_row()) {
      return Error(
          "commit_row on a chunk whose value continues "
          "(value_size != 0)");
    }
    state_ = State::kInValue;
    return OkStatus();
  }
  if (c.commit_row()) return Commit();
  return OkStatus();
}

Status ChunkMerger::Continue(const ReadRowsResponse::CellChunk& c) {
  if (!c.row_key().empty() || c.has_family_name() || c.has_qualifier()) {
    return Error(
        "continuation chunk of a split value carries row_key, "
        "family_name or qualifier");
  }
  if (c.timestamp_micros() != 0) {
    return Error("continuation chunk of a split value carries timestamp " +
                 std::to_string(c.timestamp_micros()));
  }
  if (c.labels_size() > 0) {
    return Error("continuation chunk of a split value carries labels");
  }
  std::string& value = row_.families.back().columns.back().cells.back().value;
  value += c.value();
  const int64_t have = static_cast<int64_t>(value.size());
  if (c.value_size() != 0) {
    if (c.value_size() != value_size_) {
      return Error("value_size changes from " + std::to_string(value_size_) +
                   " to " + std::to_string(c.value_size()) +
                   " within one split value");
    }
    if (have > value_size_) {
      return Error("split value already holds " + std::to_string(have) +
                   " bytes, more than value_size " +
                   std::to_string(value_size_));
    }
    if (c.commit_row()) {
      return Error(
          "commit_row on a chunk whose value continues "
          "(value_size != 0)");
    }
    return OkStatus();
  }
  // The last piece.
  if (have != value_size_) {
    return Error("split value has " + std::to_string(have) +
                 " bytes but value_size announced " +
                 std::to_string(value_size_));
  }
  state_ = State::kInRow;
  if (c.commit_row()) return Commit();
  return OkStatus();
}

Status ChunkMerger::Commit() {
  last_committed_ = row_.key;
  rows_.push_back(std::move(row_));
  row_ = MergedRow();
  state_ = State::kBetweenRows;
  return OkStatus();
}

Result<std::vector<MergedRow>> MergeResponses(
    std::span<const ReadRowsResponse> responses, bool reversed) {
  ChunkMerger merger(reversed);
  for (const ReadRowsResponse& r : responses) {
    BTSIM_RETURN_IF_ERROR(merger.Feed(r));
  }
  BTSIM_RETURN_IF_ERROR(merger.Finish());
  return merger.TakeRows();
}

}  // namespace btsim::api_test
