#include "metrics/openmetrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>
#include <string_view>
#include <utility>

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>
#include <prometheus/metric_type.h>

namespace btsim::metrics {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricType;

// A series' identity: its labels as collected (constant labels first, then
// the others by name).
using LabelSet = std::vector<std::pair<std::string, std::string>>;

LabelSet LabelsOf(const ClientMetric& metric) {
  LabelSet out;
  out.reserve(metric.label.size());
  for (const ClientMetric::Label& l : metric.label) {
    out.emplace_back(l.name, l.value);
  }
  return out;
}

// Shortest round-trip form; OpenMetrics spellings of the special values.
void WriteNumber(std::ostream& out, double value) {
  if (std::isnan(value)) {
    out << "NaN";
  } else if (std::isinf(value)) {
    out << (value > 0 ? "+Inf" : "-Inf");
  } else {
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
    out << std::string_view(buffer, result.ptr - buffer);
  }
}

std::string NumberText(double value) {
  std::ostringstream s;
  WriteNumber(s, value);
  return s.str();
}

// Milliseconds as seconds: "1767225600", "1767225600.25".
void WriteTimestamp(std::ostream& out, int64_t ms) {
  int64_t seconds = ms / 1000;
  int64_t millis = ms % 1000;
  if (millis < 0) {
    --seconds;
    millis += 1000;
  }
  out << seconds;
  if (millis == 0) return;
  char digits[4] = {static_cast<char>('0' + millis / 100),
                    static_cast<char>('0' + millis / 10 % 10),
                    static_cast<char>('0' + millis % 10), 0};
  int length = 3;
  while (digits[length - 1] == '0') --length;
  out << '.' << std::string_view(digits, length);
}

// Escapes \, " and newline (label values and HELP text).
void WriteEscaped(std::ostream& out, std::string_view text) {
  for (const char c : text) {
    switch (c) {
      case '\\':
        out << "\\\\";
        break;
      case '"':
        out << "\\\"";
        break;
      case '\n':
        out << "\\n";
        break;
      default:
        out << c;
    }
  }
}

// "{a="x",b="y"}" with an optional extra label last; nothing when empty.
void WriteLabels(std::ostream& out, const LabelSet& labels,
                 std::string_view extra_name = {},
                 std::string_view extra_value = {}) {
  if (labels.empty() && extra_name.empty()) return;
  out << '{';
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (!first) out << ',';
    first = false;
    out << name << "=\"";
    WriteEscaped(out, value);
    out << '"';
  }
  if (!extra_name.empty()) {
    if (!first) out << ',';
    out << extra_name << "=\"" << extra_value << '"';
  }
  out << '}';
}

int64_t Millis(sim::Time at) {
  const int64_t ns = sim::NanosSinceEpoch(at);
  int64_t ms = ns / 1'000'000;
  if (ns < 0 && ns % 1'000'000 != 0) --ms;  // floor
  return ms;
}

}  // namespace

struct OpenMetricsRecorder::Family {
  std::string name;         // the OpenMetrics family name (no "_total")
  std::string sample_name;  // counters: name + "_total"; others: name
  std::string help;
  MetricType type = MetricType::Untyped;

  // One series: its points flattened, `width` values per point.
  //   counter, gauge, untyped: {value}
  //   histogram: {cumulative count per bound..., count, sum}
  //   summary: {value per quantile..., count, sum}
  struct Series {
    std::vector<double> shape;  // histogram bounds or summary quantiles
    size_t width = 1;
    std::vector<int64_t> times_ms;
    std::vector<double> values;
  };
  std::map<LabelSet, Series> series;  // in label order

  // Adds one collected metric at `ms`. A point at the series' latest time
  // replaces it; a histogram or summary whose buckets changed is dropped.
  void Add(const ClientMetric& metric, int64_t ms) {
    std::vector<double> shape;
    std::vector<double> point;
    switch (type) {
      case MetricType::Counter:
        point = {metric.counter.value};
        break;
      case MetricType::Gauge:
        point = {metric.gauge.value};
        break;
      case MetricType::Untyped:
        point = {metric.untyped.value};
        break;
      case MetricType::Histogram:
        for (const ClientMetric::Bucket& b : metric.histogram.bucket) {
          if (std::isinf(b.upper_bound) && b.upper_bound > 0) break;
          shape.push_back(b.upper_bound);
          point.push_back(static_cast<double>(b.cumulative_count));
        }
        point.push_back(static_cast<double>(metric.histogram.sample_count));
        point.push_back(metric.histogram.sample_sum);
        break;
      case MetricType::Summary:
        for (const ClientMetric::Quantile& q : metric.summary.quantile) {
          shape.push_back(q.quantile);
          point.push_back(q.value);
        }
        point.push_back(static_cast<double>(metric.summary.sample_count));
        point.push_back(metric.summary.sample_sum);
        break;
      default:
        return;
    }
    auto [it, inserted] = series.try_emplace(LabelsOf(metric));
    Series& s = it->second;
    if (inserted) {
      s.shape = std::move(shape);
      s.width = point.size();
    } else if (s.shape != shape || s.width != point.size()) {
      return;
    }
    if (!s.times_ms.empty() && s.times_ms.back() >= ms) {
      // Same time again (or a decreasing one): the newest values win.
      std::copy(point.begin(), point.end(), s.values.end() - s.width);
      return;
    }
    s.times_ms.push_back(ms);
    s.values.insert(s.values.end(), point.begin(), point.end());
  }

  void Write(std::ostream& out) const {
    if (!help.empty()) {
      out << "# HELP " << name << ' ';
      WriteEscaped(out, help);
      out << '\n';
    }
    out << "# TYPE " << name << ' ' << TypeName() << '\n';
    for (const auto& [labels, s] : series) {
      std::vector<std::string> shape_text;
      for (const double v : s.shape) shape_text.push_back(NumberText(v));
      for (size_t i = 0; i < s.times_ms.size(); ++i) {
        const double* v = &s.values[i * s.width];
        const int64_t ms = s.times_ms[i];
        if (type == MetricType::Histogram || type == MetricType::Summary) {
          const bool histogram = type == MetricType::Histogram;
          const std::string_view extra = histogram ? "le" : "quantile";
          const std::string_view point_name =
              histogram ? std::string_view("_bucket") : std::string_view();
          const size_t n = s.shape.size();
          for (size_t b = 0; b < n; ++b) {
            Sample(out, point_name, labels, extra, shape_text[b], v[b], ms);
          }
          if (histogram) {
            Sample(out, "_bucket", labels, "le", "+Inf", v[n], ms);
          }
          Sample(out, "_count", labels, {}, {}, v[n], ms);
          Sample(out, "_sum", labels, {}, {}, v[n + 1], ms);
        } else {
          Sample(out, {}, labels, {}, {}, v[0], ms);
        }
      }
    }
  }

  void Sample(std::ostream& out, std::string_view suffix,
              const LabelSet& labels, std::string_view extra_name,
              std::string_view extra_value, double value, int64_t ms) const {
    out << (suffix.empty() ? std::string_view(sample_name)
                           : std::string_view(name))
        << suffix;
    WriteLabels(out, labels, extra_name, extra_value);
    out << ' ';
    WriteNumber(out, value);
    out << ' ';
    WriteTimestamp(out, ms);
    out << '\n';
  }

  std::string_view TypeName() const {
    switch (type) {
      case MetricType::Counter:
        return "counter";
      case MetricType::Gauge:
        return "gauge";
      case MetricType::Histogram:
        return "histogram";
      case MetricType::Summary:
        return "summary";
      default:
        return "unknown";
    }
  }
};

OpenMetricsRecorder::OpenMetricsRecorder() = default;
OpenMetricsRecorder::~OpenMetricsRecorder() = default;

void OpenMetricsRecorder::Record(const prometheus::Collectable& source,
                                 sim::Time at) {
  const int64_t ms = Millis(at);
  for (const prometheus::MetricFamily& collected : source.Collect()) {
    auto it = families_.find(collected.name);
    if (it == families_.end()) {
      auto family = std::make_unique<Family>();
      family->type = collected.type;
      family->help = collected.help;
      family->name = collected.name;
      family->sample_name = collected.name;
      if (collected.type == MetricType::Counter) {
        constexpr std::string_view kTotal = "_total";
        if (std::string_view(family->name).ends_with(kTotal)) {
          family->name.resize(family->name.size() - kTotal.size());
        } else {
          family->sample_name += kTotal;
        }
      }
      order_.push_back(family.get());
      it = families_.emplace(collected.name, std::move(family)).first;
    }
    Family& family = *it->second;
    if (family.type != collected.type) continue;  // first type wins
    for (const ClientMetric& metric : collected.metric) family.Add(metric, ms);
  }
  ++snapshots_;
}

void OpenMetricsRecorder::Write(std::ostream& out) const {
  for (const Family* family : order_) family->Write(out);
  out << "# EOF\n";
}

}  // namespace btsim::metrics
