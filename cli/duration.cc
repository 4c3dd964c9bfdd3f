#include "cli/duration.h"

#include <cstdint>
#include <string>

namespace btsim::cli {

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  const std::string original(text);
  auto bad = [&] {
    return InvalidArgument("'" + original +
                           "' is not a duration; use e.g. 500ms, 5s, 2m, 1h");
  };
  if (text == "0") return std::chrono::milliseconds(0);
  size_t digits = 0;
  int64_t value = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    if (value > 1'000'000'000) return bad();
    value = value * 10 + (text[digits] - '0');
    ++digits;
  }
  if (digits == 0) return bad();
  const std::string_view unit = text.substr(digits);
  int64_t millis;
  if (unit == "ms") {
    millis = value;
  } else if (unit == "s") {
    millis = value * 1000;
  } else if (unit == "m") {
    millis = value * 60'000;
  } else if (unit == "h") {
    millis = value * 3'600'000;
  } else {
    return bad();
  }
  if (millis > kMaxDuration.count()) {
    return InvalidArgument("'" + original + "' is longer than the 24h maximum");
  }
  return std::chrono::milliseconds(millis);
}

}  // namespace btsim::cli
