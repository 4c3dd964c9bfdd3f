#include "metrics/timeline_strip.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace btsim::metrics {
namespace {

using scenarios::Event;
using scenarios::EventKind;
using scenarios::History;

double Sec(sim::Duration t) { return std::chrono::duration<double>(t).count(); }

// "12.345 s".
std::string SecondsText(double s) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3f s", s);
  return buffer;
}

bool IsFault(EventKind k) {
  return k == EventKind::kClusterDown || k == EventKind::kPartition ||
         k == EventKind::kNodeFailure || k == EventKind::kRemoveCluster;
}

}  // namespace

std::string EventText(const Event& e) {
  if (!e.label.empty()) return e.label;
  std::string text(scenarios::EventKindName(e.kind));
  if (!e.cluster.empty()) text += " " + e.cluster;
  if (!e.peer.empty()) text += "\xE2\x86\x94" + e.peer;  // "↔"
  if (!e.detail.empty()) text += " " + e.detail;
  return text;
}

std::vector<TimelineItem> TimelineItems(const History& h, bool settle_repairs,
                                        double end) {
  std::vector<TimelineItem> items;
  std::vector<bool> consumed(h.events.size(), false);
  for (size_t i = 0; i < h.events.size(); ++i) {
    const Event& f = h.events[i];
    TimelineItem item;
    item.event = i;
    item.start = Sec(f.at);
    item.end = item.start;
    item.text = EventText(f);
    if (IsFault(f.kind)) {
      item.kind = "fault";
      item.open = true;
      item.end = end;
      for (size_t j = i + 1;
           j < h.events.size() && f.kind != EventKind::kRemoveCluster; ++j) {
        const Event& r = h.events[j];
        const bool same = r.cluster == f.cluster;
        const bool pair = (r.cluster == f.cluster && r.peer == f.peer) ||
                          (r.cluster == f.peer && r.peer == f.cluster);
        const bool repairs = (f.kind == EventKind::kClusterDown &&
                              r.kind == EventKind::kClusterUp && same) ||
                             (f.kind == EventKind::kPartition &&
                              r.kind == EventKind::kHeal && pair) ||
                             (f.kind == EventKind::kNodeFailure &&
                              r.kind == EventKind::kNodeRecovery && same);
        if (repairs && !consumed[j]) {
          consumed[j] = true;
          item.end = Sec(r.at);
          item.open = false;
          item.text += " \xE2\x86\x92 " + EventText(r);  // "→"
          break;
        }
        if (r.kind == EventKind::kSettle && settle_repairs) {
          item.end = Sec(r.at);
          item.open = false;
          break;
        }
      }
    } else if (f.kind == EventKind::kTokenWait) {
      item.kind = "action";
      item.open = f.end < sim::Duration(0);
      item.end = item.open ? end : Sec(f.end);
      if (item.open) item.text += " (never consistent)";
    } else {
      item.kind = f.kind == EventKind::kSettle ? "settle" : "action";
    }
    if (item.kind == "fault" && item.open) item.text += " (not repaired)";
    items.push_back(std::move(item));
  }
  std::vector<TimelineItem> out;
  for (TimelineItem& item : items) {
    if (!consumed[item.event]) out.push_back(std::move(item));
  }
  return out;
}

void WriteTimelineStrip(const std::vector<TimelineItem>& items, double end,
                        const std::vector<Band>& bands, std::ostream& out) {
  constexpr double kWidth = 960, kLeft = 64, kRight = 16, kLane = 20;
  const double plot_w = kWidth - kLeft - kRight;
  auto sx = [&](double t) {
    return kLeft + std::clamp(t / end, 0.0, 1.0) * plot_w;
  };
  // Greedy lanes: an item takes the first lane free at its start.
  // A label that would run past the right edge goes left of its start.
  auto label_left = [&](const TimelineItem& item) {
    return sx(item.start) + 12 + TextWidth(item.text) > kWidth - 2;
  };
  std::vector<double> lane_end;
  std::vector<size_t> lane_of;
  for (const TimelineItem& item : items) {
    const double w = 12 + TextWidth(item.text);
    double x0 = sx(item.start);
    double x1 = std::max(sx(item.end), x0 + w);
    if (label_left(item)) {
      x1 = std::max(sx(item.end), x0 + 6);
      x0 -= w;
    }
    size_t lane = 0;
    while (lane < lane_end.size() && lane_end[lane] > x0) ++lane;
    if (lane == lane_end.size()) lane_end.push_back(0);
    lane_end[lane] = x1 + 8;
    lane_of.push_back(lane);
  }
  const double lanes =
      static_cast<double>(std::max<size_t>(1, lane_end.size()));
  const double top = 6, bottom = top + lanes * kLane + 4;
  const double total_h = bottom + 34;
  out << "<svg class=\"chart timeline\" id=\"timeline-strip\" "
         "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 "
      << Coord(kWidth) << ' ' << Coord(total_h) << "\" width=\""
      << Coord(kWidth) << "\" height=\"" << Coord(total_h)
      << "\" role=\"img\">\n";
  for (const Band& b : bands) {
    out << "<rect class=\"band\" x=\"" << Coord(sx(b.start)) << "\" y=\""
        << Coord(top) << "\" width=\"" << Coord(sx(b.end) - sx(b.start))
        << "\" height=\"" << Coord(bottom - top) << "\"/>\n";
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const TimelineItem& item = items[i];
    const double y = top + static_cast<double>(lane_of[i]) * kLane;
    const double x0 = sx(item.start);
    out << "<g class=\"event " << item.kind << "\"><title>"
        << HtmlEscape(SecondsText(item.start) + ": " + item.text) << "</title>";
    if (item.end > item.start) {
      out << "<rect class=\"span " << item.kind << "\" x=\"" << Coord(x0)
          << "\" y=\"" << Coord(y + 2) << "\" width=\""
          << Coord(std::max(1.0, sx(item.end) - x0)) << "\" height=\"15\"/>";
    } else {
      out << "<path class=\"point " << item.kind << "\" d=\"M" << Coord(x0)
          << ' ' << Coord(y + 2) << "l5 7.5l-5 7.5l-5 -7.5z\"/>";
    }
    const bool left = label_left(item);
    out << "<text x=\""
        << Coord(left ? x0 - 7 : x0 + (item.end > item.start ? 4 : 7))
        << "\" y=\"" << Coord(y + 13) << "\""
        << (left ? " text-anchor=\"end\"" : "") << ">" << HtmlEscape(item.text)
        << "</text></g>\n";
  }
  out << "<path class=\"axis\" d=\"M" << Coord(kLeft) << ' ' << Coord(bottom)
      << "H" << Coord(kWidth - kRight) << "\"/>\n";
  for (double t : NiceTicks(0, end, static_cast<int>(plot_w / 70))) {
    out << "<line class=\"axis\" x1=\"" << Coord(sx(t)) << "\" y1=\""
        << Coord(bottom) << "\" x2=\"" << Coord(sx(t)) << "\" y2=\""
        << Coord(bottom + 4) << "\"/><text class=\"tick\" x=\"" << Coord(sx(t))
        << "\" y=\"" << Coord(bottom + 15) << "\" text-anchor=\"middle\">"
        << FormatValue(t, 4) << "</text>\n";
  }
  out << "<text class=\"axis-label\" x=\"" << Coord(kLeft + plot_w / 2)
      << "\" y=\"" << Coord(total_h - 4)
      << "\" text-anchor=\"middle\">time (s)</text>\n</svg>\n";
}

}  // namespace btsim::metrics
