// Parsing of human-readable durations for command-line flags.
#ifndef BTSIM_CLI_DURATION_H_
#define BTSIM_CLI_DURATION_H_

#include <chrono>
#include <string_view>

#include "base/result.h"

namespace btsim::cli {

inline constexpr std::chrono::milliseconds kMaxDuration{24 * 3'600'000};

// "250ms", "5s", "2m", "1h", "0" (zero), at most kMaxDuration.
// INVALID_ARGUMENT otherwise.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

}  // namespace btsim::cli

#endif  // BTSIM_CLI_DURATION_H_
