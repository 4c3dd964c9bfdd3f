// A small writer of inline SVG charts for the HTML report
// (metrics/report_html.h): line charts over time (or over categories) with
// axes, ticks with units, a legend, shaded spans and marker lines, plus the
// text and colour helpers the report shares.
//
// Every number is printed with a fixed format and non-finite values never
// reach the output (a NaN y is a gap in a line; other non-finite
// coordinates print as 0), so the same input gives the same bytes.
// No script, no external references.
#ifndef BTSIM_METRICS_SVG_CHART_H_
#define BTSIM_METRICS_SVG_CHART_H_

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace btsim::metrics {

// Escapes &, <, >, " and ' for HTML text and attribute values; bytes
// outside printable ASCII become "\xNN" (row keys are raw bytes).
std::string HtmlEscape(std::string_view text);

// A coordinate or length with one decimal ("12.5"); non-finite: "0".
std::string Coord(double value);

// A value for tick labels and tables: up to `significant` significant
// digits, no exponent for ordinary magnitudes, no trailing zeros
// ("0.25", "1500", "12.3"); non-finite: "inf" / "-inf" / "nan".
std::string FormatValue(double value, int significant = 3);

// The Okabe-Ito palette, in an order that reads well on white (blue,
// orange, bluish green, vermillion, reddish purple, sky blue, black,
// yellow); cycles past 8.
std::string_view SeriesColor(size_t index);

// A viridis-like sequential colour for f in [0, 1] ("#rrggbb"; clamped).
std::string Viridis(double f);

// One line. Points are (x, y) in data units, x increasing; a NaN y breaks
// the line.
struct Series {
  std::string name;   // legend text
  std::string color;  // "#rrggbb"
  bool dashed = false;
  bool markers = false;  // a small circle at every point
  std::vector<std::pair<double, double>> points;
};

// A span of x shaded behind the data (faults), and a vertical line at x
// (actions, the settle).
struct Band {
  double start = 0;
  double end = 0;
};
struct Marker {
  double at = 0;
  std::string label;  // drawn next to the line when it fits ("" none)
};

struct LineChart {
  std::string id;  // the <svg> element's id
  double width = 960;
  double height = 230;  // the plot area plus margins, without the legend
  double x_min = 0;
  double x_max = 1;
  std::string x_label = "time (s)";
  // Categorical x ticks (value, label); empty: nice numeric ticks.
  std::vector<std::pair<double, std::string>> x_ticks;
  std::string y_label;        // with the unit, e.g. "ops/s" or "latency (ms)"
  bool log_y = false;         // decades; values <= 0 are left out
  double y_min = 0;           // linear: the axis starts here
  double y_max_at_least = 0;  // linear: e.g. 100 for a percentage
  std::vector<double> y_references;  // dotted horizontal lines (e.g. 100 %)
  std::vector<Band> bands;
  std::vector<Marker> markers;
  std::vector<Series> series;
  // Shown in the middle of the plot when no series has a point.
  std::string empty_note = "no data";
};

// Writes `chart` as one <svg class="chart"> element (its width scales with
// the page; the viewBox keeps the proportions). Data lines are
// <path class="series">; the legend is a row (or rows) above the plot.
void WriteLineChart(const LineChart& chart, std::ostream& out);

// Nice tick values covering [lo, hi] (about `count` of them, steps of 1, 2
// or 5 times a power of ten), all inside [lo, hi].
std::vector<double> NiceTicks(double lo, double hi, int count);

// An estimate of the width in px of `text` at the report's 11 px font.
double TextWidth(std::string_view text, double font_px = 11);

}  // namespace btsim::metrics

#endif  // BTSIM_METRICS_SVG_CHART_H_
