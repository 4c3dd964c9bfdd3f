#include "metrics/svg_chart.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>

namespace btsim::metrics {
namespace {

constexpr double kLeft = 64;
constexpr double kRight = 16;
constexpr double kTop = 10;
constexpr double kBottom = 36;
constexpr double kLegendRow = 16;

// The axis step for about `count` ticks over `range`: 1, 2 or 5 x 10^k.
double NiceStep(double range, int count) {
  if (!(range > 0) || !std::isfinite(range)) return 1;
  const double raw = range / std::max(count, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double fraction = raw / magnitude;
  double nice = 10;
  if (fraction <= 1) {
    nice = 1;
  } else if (fraction <= 2) {
    nice = 2;
  } else if (fraction <= 5) {
    nice = 5;
  }
  return nice * magnitude;
}

// Tick labels: "20k" for large round values.
std::string TickLabel(double v) {
  if (std::fabs(v) >= 10000 && std::fmod(v, 1000) == 0) {
    return FormatValue(v / 1000, 4) + "k";
  }
  return FormatValue(v, 4);
}

// Maps data to pixels.
class Scale {
 public:
  Scale(double d0, double d1, double p0, double p1, bool log)
      : log_(log), d0_(Map(d0)), d1_(Map(d1)), p0_(p0), p1_(p1) {}
  double operator()(double v) const {
    const double span = d1_ - d0_;
    if (!(span != 0)) return p0_;
    return p0_ + (Map(v) - d0_) / span * (p1_ - p0_);
  }

 private:
  double Map(double v) const { return log_ ? std::log10(v) : v; }
  bool log_;
  double d0_, d1_, p0_, p1_;
};

struct LegendItem {
  double x = 0;
  double y = 0;
  const Series* series = nullptr;
};

std::string Truncate(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  return std::string(text.substr(0, max - 1)) + "\xE2\x80\xA6";  // "…"
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // UTF-8 sequences pass (the report's own text uses a few); other
        // control bytes are shown escaped.
        if (c < 0x20 || c == 0x7f) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\x%02x", c);
          out += buffer;
        } else {
          out.push_back(ch);
        }
    }
  }
  return out;
}

std::string Coord(double value) {
  if (!std::isfinite(value)) return "0";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", value);
  // "-0.0" and "x.0" read better without the sign / decimal.
  std::string s = buffer;
  if (s == "-0.0") s = "0.0";
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) {
    s.resize(s.size() - 2);
  }
  return s;
}

std::string FormatValue(double value, int significant) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return "0";
  char buffer[64];
  const double magnitude = std::floor(std::log10(std::fabs(value)));
  if (magnitude >= 15 || magnitude < -6) {
    std::snprintf(buffer, sizeof buffer, "%.*g", significant, value);
    return buffer;
  }
  const int decimals =
      std::max(0, significant - 1 - static_cast<int>(magnitude));
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  std::string s = buffer;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

std::string_view SeriesColor(size_t index) {
  static constexpr std::array<std::string_view, 8> kOkabeIto = {
      "#0072B2", "#E69F00", "#009E73", "#D55E00",
      "#CC79A7", "#56B4E9", "#000000", "#F0E442"};
  return kOkabeIto[index % kOkabeIto.size()];
}

std::string Viridis(double f) {
  // matplotlib's viridis at 0, 0.1, ..., 1.
  static constexpr std::array<std::array<int, 3>, 11> kStops = {{
      {0x44, 0x01, 0x54},
      {0x48, 0x24, 0x75},
      {0x41, 0x44, 0x87},
      {0x35, 0x5f, 0x8d},
      {0x2a, 0x78, 0x8e},
      {0x21, 0x91, 0x8c},
      {0x22, 0xa8, 0x84},
      {0x44, 0xbf, 0x70},
      {0x7a, 0xd1, 0x51},
      {0xbd, 0xdf, 0x26},
      {0xfd, 0xe7, 0x25},
  }};
  if (!std::isfinite(f)) f = 0;
  f = std::clamp(f, 0.0, 1.0) * 10;
  const size_t i = std::min<size_t>(static_cast<size_t>(f), 9);
  const double t = f - static_cast<double>(i);
  char buffer[8];
  int rgb[3];
  for (int c = 0; c < 3; ++c) {
    rgb[c] = static_cast<int>(
        std::lround(kStops[i][c] + t * (kStops[i + 1][c] - kStops[i][c])));
  }
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
  return buffer;
}

std::vector<double> NiceTicks(double lo, double hi, int count) {
  std::vector<double> ticks;
  if (!std::isfinite(lo) || !std::isfinite(hi) || hi < lo) return ticks;
  if (hi == lo) return {lo};
  const double step = NiceStep(hi - lo, count);
  const double first = std::ceil(lo / step - 1e-9) * step;
  for (int i = 0; i < 1000; ++i) {
    const double v = first + i * step;
    if (v > hi + step * 1e-9) break;
    ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  }
  return ticks;
}

double TextWidth(std::string_view text, double font_px) {
  // Sans-serif averages a little over half the font size per character;
  // count UTF-8 code points, not bytes.
  size_t chars = 0;
  for (char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++chars;
  }
  return static_cast<double>(chars) * font_px * 0.58;
}

void WriteLineChart(const LineChart& chart, std::ostream& out) {
  const double plot_w = chart.width - kLeft - kRight;

  // Legend rows above the plot.
  std::vector<LegendItem> legend;
  double lx = 0;
  double ly = 0;
  for (const Series& s : chart.series) {
    const double w = 26 + TextWidth(s.name) + 16;
    if (lx > 0 && lx + w > plot_w) {
      lx = 0;
      ly += kLegendRow;
    }
    legend.push_back({kLeft + lx, ly, &s});
    lx += w;
  }
  const double legend_h = legend.empty() ? 0 : ly + kLegendRow + 4;
  const double top = kTop + legend_h;
  const double total_h = chart.height + legend_h;
  const double bottom = total_h - kBottom;
  const double right = chart.width - kRight;

  // The y range from the data.
  double data_min = std::numeric_limits<double>::infinity();
  double data_max = -std::numeric_limits<double>::infinity();
  bool any = false;
  for (const Series& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(y) || (chart.log_y && y <= 0)) continue;
      data_min = std::min(data_min, y);
      data_max = std::max(data_max, y);
      any = true;
    }
  }
  double y_lo = chart.y_min;
  double y_hi = 1;
  std::vector<double> y_ticks;
  if (chart.log_y) {
    if (!any) {
      data_min = 1;
      data_max = 10;
    }
    const double lo_decade = std::floor(std::log10(data_min));
    double hi_decade = std::ceil(std::log10(data_max));
    if (hi_decade <= lo_decade) hi_decade = lo_decade + 1;
    y_lo = std::pow(10.0, lo_decade);
    y_hi = std::pow(10.0, hi_decade);
    const bool minor = hi_decade - lo_decade <= 2;
    for (double d = lo_decade; d <= hi_decade; ++d) {
      const double base = std::pow(10.0, d);
      y_ticks.push_back(base);
      if (minor && d < hi_decade) {
        y_ticks.push_back(2 * base);
        y_ticks.push_back(5 * base);
      }
    }
    std::sort(y_ticks.begin(), y_ticks.end());
  } else {
    double hi =
        std::max({any ? data_max : 0.0, chart.y_max_at_least, chart.y_min});
    for (double r : chart.y_references) hi = std::max(hi, r);
    if (hi <= y_lo) hi = y_lo + 1;
    const double step = NiceStep(hi - y_lo, 5);
    y_hi = y_lo + std::ceil((hi - y_lo) / step - 1e-9) * step;
    if (y_hi < hi) y_hi += step;
    y_ticks = NiceTicks(y_lo, y_hi, 5);
  }
  const double x_lo = chart.x_min;
  const double x_hi = chart.x_max > chart.x_min ? chart.x_max : x_lo + 1;
  const Scale sx(x_lo, x_hi, kLeft, right, false);
  const Scale sy(y_lo, y_hi, bottom, top, chart.log_y);

  out << "<svg class=\"chart\" id=\"" << HtmlEscape(chart.id)
      << "\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 "
      << Coord(chart.width) << ' ' << Coord(total_h) << "\" width=\""
      << Coord(chart.width) << "\" height=\"" << Coord(total_h)
      << "\" role=\"img\">\n";

  // Legend.
  for (const LegendItem& item : legend) {
    const double y = item.y + 8;
    out << "<g class=\"legend\"><line x1=\"" << Coord(item.x) << "\" y1=\""
        << Coord(y) << "\" x2=\"" << Coord(item.x + 20) << "\" y2=\""
        << Coord(y) << "\" stroke=\"" << item.series->color
        << "\" stroke-width=\"2.5\""
        << (item.series->dashed ? " stroke-dasharray=\"5 3\"" : "")
        << "/><text x=\"" << Coord(item.x + 25) << "\" y=\"" << Coord(y + 4)
        << "\">" << HtmlEscape(item.series->name) << "</text></g>\n";
  }

  // Shaded spans, behind everything.
  for (const Band& b : chart.bands) {
    const double x0 = sx(std::clamp(b.start, x_lo, x_hi));
    const double x1 = sx(std::clamp(b.end, x_lo, x_hi));
    if (x1 <= x0) continue;
    out << "<rect class=\"band\" x=\"" << Coord(x0) << "\" y=\"" << Coord(top)
        << "\" width=\"" << Coord(x1 - x0) << "\" height=\""
        << Coord(bottom - top) << "\"/>\n";
  }

  // Grid and y ticks.
  for (double v : y_ticks) {
    const double y = sy(v);
    out << "<line class=\"grid\" x1=\"" << Coord(kLeft) << "\" y1=\""
        << Coord(y) << "\" x2=\"" << Coord(right) << "\" y2=\"" << Coord(y)
        << "\"/><text class=\"tick\" x=\"" << Coord(kLeft - 5) << "\" y=\""
        << Coord(y + 4) << "\" text-anchor=\"end\">" << TickLabel(v)
        << "</text>\n";
  }
  for (double v : chart.y_references) {
    if (chart.log_y && v <= 0) continue;
    const double y = sy(v);
    out << "<line class=\"reference\" x1=\"" << Coord(kLeft) << "\" y1=\""
        << Coord(y) << "\" x2=\"" << Coord(right) << "\" y2=\"" << Coord(y)
        << "\"/>\n";
  }

  // X ticks.
  std::vector<std::pair<double, std::string>> x_ticks = chart.x_ticks;
  if (x_ticks.empty()) {
    const int count = std::max(2, static_cast<int>(plot_w / 70));
    for (double v : NiceTicks(x_lo, x_hi, count)) {
      x_ticks.emplace_back(v, TickLabel(v));
    }
  }
  for (const auto& [v, label] : x_ticks) {
    const double x = sx(v);
    out << "<line class=\"axis\" x1=\"" << Coord(x) << "\" y1=\""
        << Coord(bottom) << "\" x2=\"" << Coord(x) << "\" y2=\""
        << Coord(bottom + 4) << "\"/><text class=\"tick\" x=\"" << Coord(x)
        << "\" y=\"" << Coord(bottom + 15) << "\" text-anchor=\"middle\">"
        << HtmlEscape(label) << "</text>\n";
  }

  // Axes and their labels.
  out << "<path class=\"axis\" d=\"M" << Coord(kLeft) << ' ' << Coord(top)
      << "V" << Coord(bottom) << "H" << Coord(right) << "\"/>\n";
  out << "<text class=\"axis-label\" x=\"" << Coord((kLeft + right) / 2)
      << "\" y=\"" << Coord(total_h - 4) << "\" text-anchor=\"middle\">"
      << HtmlEscape(chart.x_label) << "</text>\n";
  const double mid_y = (top + bottom) / 2;
  out << "<text class=\"axis-label\" x=\"14\" y=\"" << Coord(mid_y)
      << "\" text-anchor=\"middle\" transform=\"rotate(-90 14 " << Coord(mid_y)
      << ")\">" << HtmlEscape(chart.y_label) << "</text>\n";

  // Marker lines, with their labels where they do not overlap.
  double label_end = -1;
  for (const Marker& m : chart.markers) {
    if (m.at < x_lo || m.at > x_hi) continue;
    const double x = sx(m.at);
    out << "<line class=\"marker\" x1=\"" << Coord(x) << "\" y1=\""
        << Coord(top) << "\" x2=\"" << Coord(x) << "\" y2=\"" << Coord(bottom)
        << "\"/>\n";
    const std::string label = Truncate(m.label, 28);
    const double w = TextWidth(label, 10);
    if (!label.empty() && x + 3 > label_end && x + 3 + w <= right) {
      out << "<text class=\"marker-label\" x=\"" << Coord(x + 3) << "\" y=\""
          << Coord(top + 10) << "\">" << HtmlEscape(label) << "</text>\n";
      label_end = x + 3 + w + 6;
    }
  }

  // The data.
  for (const Series& s : chart.series) {
    std::string d;
    bool pen_down = false;
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y) || (chart.log_y && y <= 0) ||
          x < x_lo || x > x_hi) {
        pen_down = false;
        continue;
      }
      d += pen_down ? "L" : "M";
      d += Coord(sx(x)) + " " + Coord(sy(std::clamp(y, y_lo, y_hi)));
      pen_down = true;
    }
    if (d.empty()) continue;
    out << "<path class=\"series\" d=\"" << d << "\" stroke=\"" << s.color
        << "\"" << (s.dashed ? " stroke-dasharray=\"5 3\"" : "") << "/>\n";
    if (s.markers) {
      for (const auto& [x, y] : s.points) {
        if (!std::isfinite(x) || !std::isfinite(y) || (chart.log_y && y <= 0) ||
            x < x_lo || x > x_hi) {
          continue;
        }
        out << "<circle class=\"point\" cx=\"" << Coord(sx(x)) << "\" cy=\""
            << Coord(sy(std::clamp(y, y_lo, y_hi))) << "\" r=\"3\" fill=\""
            << s.color << "\"/>\n";
      }
    }
  }
  if (!any) {
    out << "<text class=\"empty\" x=\"" << Coord((kLeft + right) / 2)
        << "\" y=\"" << Coord(mid_y) << "\" text-anchor=\"middle\">"
        << HtmlEscape(chart.empty_note) << "</text>\n";
  }
  out << "</svg>\n";
}

}  // namespace btsim::metrics
