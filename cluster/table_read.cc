// Table's reads: Read (row sets, ranges, resumption, filters, both
// directions) and SampleRowKeys. The rest of Table is in table.cc and
// table_maintenance.cc.
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cluster/aggregate.h"
#include "cluster/internal/tablet.h"
#include "cluster/table.h"

namespace btsim::cluster {

void Table::LiveCells(const RowRecord& record, std::vector<LiveCell>* scratch,
                      std::vector<CellView>* out, std::string* folded) const {
  scratch->clear();
  out->clear();
  folded->clear();
  AppendLiveCells(record.encoded(), scratch);
  bool sorted = true;
  for (size_t i = 0; i < scratch->size(); ++i) {
    const LiveCell& c = (*scratch)[i];
    const FamilyEntry* entry = c.family_id < families_by_id_.size()
                                   ? families_by_id_[c.family_id]
                                   : nullptr;
    if (entry == nullptr) continue;  // dropped family
    const std::string& family = entry->name;
    if (!out->empty() && out->back().family != family &&
        family < out->back().family) {
      sorted = false;
    }
    std::string_view value = c.value;
    if (entry->aggregate != Aggregate::kNone) {
      // The contributions to this cell follow one another.
      int64_t combined = DecodeInt64(c.value);
      size_t j = i + 1;
      for (; j < scratch->size(); ++j) {
        const LiveCell& d = (*scratch)[j];
        if (d.family_id != c.family_id || d.qualifier != c.qualifier ||
            d.timestamp != c.timestamp) {
          break;
        }
        combined = Combine(entry->aggregate, combined, DecodeInt64(d.value));
      }
      if (j > i + 1) {
        // Reserved for every cell at once: views into it stay valid.
        if (folded->empty()) folded->reserve(8 * scratch->size());
        const size_t at = folded->size();
        folded->append(EncodeInt64(combined));
        value = std::string_view(folded->data() + at, 8);
        i = j - 1;
      }
    }
    out->push_back(CellView{family, c.qualifier, c.timestamp, value, nullptr});
  }
  if (!sorted) {
    std::stable_sort(out->begin(), out->end(),
                     [](const CellView& a, const CellView& b) {
                       return a.family < b.family;
                     });
  }
}

const RowRecord* Table::FindRow(std::string_view key) const {
  return TabletFor(key).Seek(key).row;
}

void Table::Read(const ReadOptions& options, sim::Rng& rng,
                 const RowVisitor& visit) const {
  const RowSet all_rows;
  const RowSet& rows = options.rows != nullptr ? *options.rows : all_rows;
  const std::vector<Interval>& intervals = rows.ScanOrder(options.reversed);
  // A resumed read starts at the first interval not wholly passed.
  const size_t first =
      options.resume_after
          ? rows.ResumeFrom(*options.resume_after, options.reversed)
          : 0;
  // Rows already passed, in scan order: the resume point, then the last row
  // visited (intervals may overlap).
  std::string last = options.resume_after.value_or("");
  bool have_last = options.resume_after.has_value();
  std::vector<LiveCell> scratch;
  std::vector<CellView> cells;
  std::string folded;
  std::vector<CellView> filtered;
  int64_t examined = 0;
  if (options.stopped_at != nullptr) options.stopped_at->reset();

  // The row's output, if any; false to stop the whole read.
  const auto emit = [&](std::string_view key, const RowRecord& record) {
    LiveCells(record, &scratch, &cells, &folded);
    if (cells.empty()) return true;
    if (options.filter == nullptr) return visit(key, cells);
    filtered.clear();
    options.filter->Apply(key, cells, rng, &filtered);
    if (filtered.empty()) return true;
    return visit(key, filtered);
  };
  // Returns false to stop the whole read.
  const std::function<bool(const RowRecord&)> process =
      [&](const RowRecord& record) -> bool {
    const std::string_view key = record.key();
    // Rows passed already (overlapping intervals) count as examined too.
    if (!have_last || (options.reversed ? key < last : key > last)) {
      last.assign(key);
      have_last = true;
      if (!emit(key, record)) return false;
    }
    if (options.max_rows_examined > 0 &&
        ++examined >= options.max_rows_examined) {
      options.stopped_at->emplace(last);  // the furthest row passed
      return false;
    }
    return true;
  };

  for (size_t i = first; i < intervals.size(); ++i) {
    Interval interval = intervals[i];
    // Seek straight to the resume point instead of rescanning up to it.
    if (options.resume_after) {
      const std::string& r = *options.resume_after;
      if (!options.reversed) {
        if (!interval.end.unbounded() && interval.end.value <= r) continue;
        if (interval.start.unbounded() || interval.start.value <= r) {
          interval.start = Bound::Open(r);
        }
      } else {
        if (!interval.start.unbounded() && interval.start.value >= r) continue;
        if (interval.end.unbounded() || interval.end.value >= r) {
          interval.end = Bound::Open(r);
        }
      }
    }
    // One row (a point read): one search, in either direction.
    if (interval.start.kind == Bound::Kind::kClosed &&
        interval.end.kind == Bound::Kind::kClosed &&
        interval.start.value == interval.end.value) {
      if (const RowRecord* r = FindRow(interval.start.value)) {
        if (!process(*r)) return;
      }
      continue;
    }
    // Tablet by tablet, until one starts past the interval (forward) or the
    // interval starts in it (reversed).
    if (!options.reversed) {
      for (size_t ti = interval.start.unbounded()
                           ? 0
                           : TabletIndex(interval.start.value);
           ti < tablets_.size(); ++ti) {
        const internal::Tablet& t = *tablets_[ti];
        if (!interval.end.AdmitsAsEnd(t.start())) break;
        if (!t.Scan(interval, /*reversed=*/false, process)) return;
      }
    } else {
      size_t ti = interval.end.unbounded() ? tablets_.size() - 1
                                           : TabletIndex(interval.end.value);
      while (true) {
        const internal::Tablet& t = *tablets_[ti];
        if (!t.Scan(interval, /*reversed=*/true, process)) return;
        if (ti == 0 || !interval.start.AdmitsAsStart(t.start())) break;
        --ti;
      }
    }
  }
}

std::vector<KeySample> Table::SampleRowKeys() const {
  std::vector<KeySample> out;
  int64_t offset = 0;
  for (size_t i = 0; i < tablets_.size(); ++i) {
    offset += tablets_[i]->bytes();
    if (i + 1 < tablets_.size()) {
      out.push_back(KeySample{tablets_[i + 1]->start(), offset});
    }
  }
  out.push_back(KeySample{"", offset});
  return out;
}

}  // namespace btsim::cluster
