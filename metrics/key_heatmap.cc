#include "metrics/key_heatmap.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace btsim::metrics {
namespace {

using RowId = std::pair<std::string, std::string>;  // (table, row)

// Layout of the heatmap's <svg>.
constexpr double kWidth = 960;
constexpr double kLabels = 250;  // left: table names and key prefixes
constexpr double kLegend = 96;   // right: the colour scale
constexpr double kTop = 22;      // the fault strip above the cells
constexpr double kPlotHeight = 500;
constexpr double kBottom = 36;
constexpr double kLabelGap = 12;  // minimum px between two key labels
constexpr int kLevels = 24;       // colour steps

// Bytes of a row key, byte-order compare (std::string compares char, which
// may be signed).
bool KeyLess(const RowId& a, const RowId& b) {
  if (a.first != b.first) {
    return std::lexicographical_compare(
        a.first.begin(), a.first.end(), b.first.begin(), b.first.end(),
        [](char x, char y) {
          return static_cast<unsigned char>(x) < static_cast<unsigned char>(y);
        });
  }
  return std::lexicographical_compare(
      a.second.begin(), a.second.end(), b.second.begin(), b.second.end(),
      [](char x, char y) {
        return static_cast<unsigned char>(x) < static_cast<unsigned char>(y);
      });
}

// The first `depth` '#'-separated segments of `key`; sets `complete` when
// that is the whole key.
std::string Prefix(const std::string& key, int depth, bool* complete) {
  size_t pos = 0;
  for (int d = 0; d < depth; ++d) {
    const size_t next = key.find('#', pos);
    if (next == std::string::npos) {
      *complete = true;
      return key;
    }
    pos = next + 1;
  }
  *complete = false;
  return key.substr(0, pos - 1);
}

std::string Shorten(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  return std::string(text.substr(0, max - 1)) + "\xE2\x80\xA6";  // "…"
}

int Level(int64_t count, int64_t max) {
  if (count <= 0 || max <= 0) return 0;
  const double f = std::sqrt(static_cast<double>(count) / max);
  return std::clamp(static_cast<int>(std::lround(f * kLevels)), 1, kLevels);
}

}  // namespace

KeyHeatmap BuildKeyHeatmap(const scenarios::History& history, sim::Duration end,
                           size_t max_buckets, size_t max_columns) {
  KeyHeatmap map;
  std::vector<RowId> rows;
  rows.reserve(history.operations.size());
  for (const scenarios::Operation& op : history.operations) {
    if (op.invoke < sim::Duration(0) || op.invoke >= end) continue;
    rows.emplace_back(op.table(), op.row);
  }
  std::sort(rows.begin(), rows.end(), KeyLess);
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  if (rows.empty() || max_buckets == 0 || end <= sim::Duration(0)) return map;

  static constexpr std::array<int64_t, 12> kSteps = {
      1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600};
  map.step = std::chrono::seconds(kSteps.back());
  for (int64_t s : kSteps) {
    const sim::Duration step = std::chrono::seconds(s);
    if (static_cast<size_t>((end + step - sim::Duration(1)) / step) <=
        std::max<size_t>(max_columns, 1)) {
      map.step = step;
      break;
    }
  }
  map.columns =
      static_cast<size_t>((end + map.step - sim::Duration(1)) / map.step);

  // Row index -> bucket: bucket i holds [i * n / b, (i + 1) * n / b).
  const size_t n = rows.size();
  const size_t b = std::min(n, max_buckets);
  map.buckets.resize(b);
  for (size_t i = 0; i < b; ++i) {
    const size_t first = i * n / b;
    const size_t last = (i + 1) * n / b - 1;
    map.buckets[i].table = rows[first].first;
    map.buckets[i].first = rows[first].second;
    map.buckets[i].last =
        rows[last].first == rows[first].first ? rows[last].second : "";
    map.buckets[i].rows = static_cast<int64_t>(last - first + 1);
  }
  map.counts.assign(b * map.columns, 0);
  for (const scenarios::Operation& op : history.operations) {
    if (op.invoke < sim::Duration(0) || op.invoke >= end) continue;
    const RowId id(op.table(), op.row);
    const size_t index = static_cast<size_t>(
        std::lower_bound(rows.begin(), rows.end(), id, KeyLess) - rows.begin());
    // The bucket of row `index`: the largest i with i * n / b <= index.
    size_t bucket = ((index + 1) * b - 1) / n;
    while (bucket > 0 && bucket * n / b > index) --bucket;
    while (bucket + 1 < b && (bucket + 1) * n / b <= index) ++bucket;
    const size_t column = static_cast<size_t>(op.invoke / map.step);
    ++map.counts[bucket * map.columns + column];
  }
  for (size_t i = 0; i < map.counts.size(); ++i) {
    if (map.counts[i] > map.max) {
      map.max = map.counts[i];
      map.hottest_bucket = static_cast<int64_t>(i / map.columns);
      map.hottest_column = static_cast<int64_t>(i % map.columns);
    }
  }
  std::vector<int64_t> nonzero;
  for (int64_t c : map.counts) {
    if (c > 0) nonzero.push_back(c);
  }
  if (!nonzero.empty()) {
    std::sort(nonzero.begin(), nonzero.end());
    const size_t rank = static_cast<size_t>(
        std::ceil(0.99 * static_cast<double>(nonzero.size())));
    map.scale = nonzero[std::clamp<size_t>(rank, 1, nonzero.size()) - 1];
  }
  return map;
}

std::string BucketRange(const KeyHeatmap::Bucket& bucket) {
  std::string out = bucket.table + ": " + Shorten(bucket.first, 40);
  if (bucket.rows > 1) out += " \xE2\x80\xA6 " + Shorten(bucket.last, 40);
  return out;
}

void WriteKeyHeatmap(const KeyHeatmap& map, const std::string& id,
                     const std::vector<Band>& bands,
                     const std::vector<Marker>& markers, std::ostream& out) {
  const double left = kLabels;
  const double right = kWidth - kLegend;
  const double plot_w = right - left;
  const double bottom = kTop + kPlotHeight;
  const double total_h = bottom + kBottom;
  const size_t nb = map.buckets.size();
  const double row_h = nb > 0 ? kPlotHeight / static_cast<double>(nb) : 0;
  const double col_w =
      map.columns > 0 ? plot_w / static_cast<double>(map.columns) : 0;
  const double seconds = std::chrono::duration<double>(map.step).count() *
                         static_cast<double>(map.columns);
  auto sx = [&](double t) {
    return seconds > 0 ? left + std::clamp(t / seconds, 0.0, 1.0) * plot_w
                       : left;
  };

  out << "<svg class=\"chart heatmap\" id=\"" << HtmlEscape(id)
      << "\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 "
      << Coord(kWidth) << ' ' << Coord(total_h) << "\" width=\""
      << Coord(kWidth) << "\" height=\"" << Coord(total_h)
      << "\" role=\"img\">\n<style>";
  for (int l = 1; l <= kLevels; ++l) {
    out << ".hm" << l << "{fill:" << Viridis(static_cast<double>(l) / kLevels)
        << "}";
  }
  out << "</style>\n";
  if (nb == 0 || map.columns == 0) {
    out << "<text class=\"empty\" x=\"" << Coord((left + right) / 2)
        << "\" y=\"" << Coord(kTop + kPlotHeight / 2)
        << "\" text-anchor=\"middle\">no operations named a row</text>\n"
        << "</svg>\n";
    return;
  }

  // Background (zero cells), then the runs of equal colour.
  out << "<rect class=\"heatmap-bg\" x=\"" << Coord(left) << "\" y=\""
      << Coord(kTop) << "\" width=\"" << Coord(plot_w) << "\" height=\""
      << Coord(kPlotHeight) << "\" fill=\"" << Viridis(0) << "\"/>\n";
  // One path per colour, a closed sub-path per run: far smaller than a
  // <rect> per run. Runs are a hair taller than a bucket, so that
  // anti-aliasing leaves no seams between buckets; brighter colours are
  // drawn last, so a hot bucket is never covered by a cooler neighbour.
  std::vector<std::string> paths(kLevels + 1);
  const std::string height = Coord(std::max(row_h, 0.1) + 0.4);
  for (size_t b = 0; b < nb; ++b) {
    const std::string y = Coord(kTop + static_cast<double>(b) * row_h);
    size_t c = 0;
    while (c < map.columns) {
      const int level = Level(map.Count(b, c), map.scale);
      size_t run = c + 1;
      while (run < map.columns &&
             Level(map.Count(b, run), map.scale) == level) {
        ++run;
      }
      if (level > 0) {
        const double x0 = left + static_cast<double>(c) * col_w;
        const double x1 = left + static_cast<double>(run) * col_w;
        paths[level] += "M" + Coord(x0) + " " + y + "H" + Coord(x1) + "v" +
                        height + "H" + Coord(x0) + "z";
      }
      c = run;
    }
  }
  for (int l = 1; l <= kLevels; ++l) {
    if (paths[l].empty()) continue;
    out << "<path class=\"cell hm" << l << "\" d=\"" << paths[l] << "\"/>\n";
  }

  // Table boundaries across the cells, and the tables' names (rotated) in
  // the leftmost column.
  size_t table_start = 0;
  for (size_t b = 1; b <= nb; ++b) {
    if (b < nb && map.buckets[b].table == map.buckets[table_start].table) {
      continue;
    }
    const double y0 = kTop + static_cast<double>(table_start) * row_h;
    const double y1 = kTop + static_cast<double>(b) * row_h;
    if (table_start > 0) {
      out << "<line class=\"table-boundary\" x1=\"" << Coord(left - 30)
          << "\" y1=\"" << Coord(y0) << "\" x2=\"" << Coord(right) << "\" y2=\""
          << Coord(y0) << "\"/>\n";
    }
    const double mid = (y0 + y1) / 2;
    const size_t fit = static_cast<size_t>(std::max(0.0, (y1 - y0) / 7));
    if (fit >= 3) {
      out << "<text class=\"table-label\" x=\"14\" y=\"" << Coord(mid)
          << "\" text-anchor=\"middle\" transform=\"rotate(-90 14 "
          << Coord(mid) << ")\">"
          << HtmlEscape(Shorten("table " + map.buckets[table_start].table, fit))
          << "</text>\n";
    }
    table_start = b;
  }

  // Key prefixes where they change: shallow prefixes first and, at one
  // depth, the groups spanning the most buckets first, as long as labels
  // keep kLabelGap apart.
  struct Candidate {
    int depth;
    size_t span;  // buckets until the prefix changes
    size_t bucket;
    std::string text;
  };
  std::vector<Candidate> candidates;
  for (int depth = 1; depth <= 3; ++depth) {
    size_t start = 0;
    std::string prefix;
    bool complete = false;
    for (size_t b = 0; b <= nb; ++b) {
      bool c = false;
      const std::string p =
          b < nb ? Prefix(map.buckets[b].first, depth, &c) : std::string();
      if (b > 0 && b < nb && p == prefix &&
          map.buckets[b].table == map.buckets[start].table) {
        continue;
      }
      if (b > 0) {
        candidates.push_back(
            {depth, b - start, start,
             Shorten(prefix.empty() ? "(empty key)" : prefix, 34) +
                 (complete ? "" : "#\xE2\x80\xA6")});
      }
      start = b;
      prefix = p;
      complete = c;
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) {
                     return a.depth != b.depth ? a.depth < b.depth
                                               : a.span > b.span;
                   });
  std::vector<double> placed;
  for (const Candidate& c : candidates) {
    const double y = kTop + static_cast<double>(c.bucket) * row_h;
    const bool fits = std::none_of(placed.begin(), placed.end(), [&](double p) {
      return std::fabs(p - y) < kLabelGap;
    });
    if (!fits || y + 4 > bottom + 2) continue;
    placed.push_back(y);
    out << "<line class=\"axis\" x1=\"" << Coord(left - 4) << "\" y1=\""
        << Coord(y) << "\" x2=\"" << Coord(left) << "\" y2=\"" << Coord(y)
        << "\"/><text class=\"key-label depth" << c.depth << "\" x=\""
        << Coord(left - 6) << "\" y=\"" << Coord(y + 4)
        << "\" text-anchor=\"end\">" << HtmlEscape(c.text) << "</text>\n";
  }

  // Faults: a strip above the cells; actions: dashed lines over them.
  for (const Band& band : bands) {
    const double x0 = sx(band.start);
    const double x1 = sx(band.end);
    if (x1 <= x0) continue;
    out << "<rect class=\"band-strip\" x=\"" << Coord(x0) << "\" y=\""
        << Coord(kTop - 8) << "\" width=\"" << Coord(x1 - x0)
        << "\" height=\"6\"/>\n";
  }
  for (const Marker& m : markers) {
    const double x = sx(m.at);
    out << "<line class=\"heatmap-marker\" x1=\"" << Coord(x) << "\" y1=\""
        << Coord(kTop - 8) << "\" x2=\"" << Coord(x) << "\" y2=\""
        << Coord(bottom) << "\"/>\n";
  }

  // Time axis.
  out << "<path class=\"axis\" d=\"M" << Coord(left) << ' ' << Coord(bottom)
      << "H" << Coord(right) << "\"/>\n";
  const int count = std::max(2, static_cast<int>(plot_w / 70));
  for (double t : NiceTicks(0, seconds, count)) {
    const double x = sx(t);
    out << "<line class=\"axis\" x1=\"" << Coord(x) << "\" y1=\""
        << Coord(bottom) << "\" x2=\"" << Coord(x) << "\" y2=\""
        << Coord(bottom + 4) << "\"/><text class=\"tick\" x=\"" << Coord(x)
        << "\" y=\"" << Coord(bottom + 15) << "\" text-anchor=\"middle\">"
        << FormatValue(t, 4) << "</text>\n";
  }
  out << "<text class=\"axis-label\" x=\"" << Coord((left + right) / 2)
      << "\" y=\"" << Coord(total_h - 4)
      << "\" text-anchor=\"middle\">time (s)</text>\n";

  // The colour scale: square root of ops per bucket per step.
  const double bar_x = right + 16;
  const double bar_w = 14;
  const double level_h = kPlotHeight / kLevels;
  for (int l = 1; l <= kLevels; ++l) {
    out << "<rect class=\"hm" << l << "\" x=\"" << Coord(bar_x) << "\" y=\""
        << Coord(bottom - l * level_h) << "\" width=\"" << Coord(bar_w)
        << "\" height=\"" << Coord(level_h + 0.4) << "\"/>\n";
  }
  const double max = static_cast<double>(std::max<int64_t>(map.scale, 1));
  std::vector<double> ticks = NiceTicks(0, max, 5);
  // The top of the scale is labelled too ("≥ N" when brighter cells
  // exist), unless a tick is close to it.
  if (ticks.empty() || std::sqrt(ticks.back() / max) < 0.93) {
    ticks.push_back(max);
  }
  for (double v : ticks) {
    const double y = bottom - std::sqrt(v / max) * kPlotHeight;
    const bool top_label = v == max && map.max > map.scale;
    out << "<line class=\"axis\" x1=\"" << Coord(bar_x + bar_w) << "\" y1=\""
        << Coord(y) << "\" x2=\"" << Coord(bar_x + bar_w + 3) << "\" y2=\""
        << Coord(y) << "\"/><text class=\"tick\" x=\""
        << Coord(bar_x + bar_w + 5) << "\" y=\"" << Coord(y + 4) << "\">"
        << (top_label ? "\xE2\x89\xA5 " : "") << FormatValue(v, 4)
        << "</text>\n";
  }
  const double step_s = std::chrono::duration<double>(map.step).count();
  const double label_x = kWidth - 6;
  const double label_y = kTop + kPlotHeight / 2;
  out << "<text class=\"axis-label\" x=\"" << Coord(label_x) << "\" y=\""
      << Coord(label_y) << "\" text-anchor=\"middle\" transform=\"rotate(-90 "
      << Coord(label_x) << ' ' << Coord(label_y) << ")\">ops per bucket per "
      << (step_s == 1 ? std::string("second") : FormatValue(step_s) + " s")
      << " (square-root scale)</text>\n";
  out << "</svg>\n";
}

}  // namespace btsim::metrics
