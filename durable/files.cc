#include "durable/files.h"

#include <filesystem>
#include <string_view>
#include <system_error>

namespace btsim::durable {

std::string JournalPath(const std::string& dir, uint64_t g) {
  return g == 0 ? dir + "/journal.log"
                : dir + "/journal." + std::to_string(g) + ".log";
}
std::string SnapshotPath(const std::string& dir, uint64_t g) {
  return dir + "/snapshot." + std::to_string(g);
}
std::string SnapshotTempPath(const std::string& dir) {
  return dir + "/snapshot.tmp";
}

std::optional<uint64_t> GenerationOf(const std::string& name,
                                     bool* is_snapshot) {
  auto number = [](std::string_view digits) -> std::optional<uint64_t> {
    if (digits.empty() || digits.size() > 18 ||
        (digits.size() > 1 && digits[0] == '0')) {
      return std::nullopt;
    }
    uint64_t g = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
      g = g * 10 + static_cast<uint64_t>(c - '0');
    }
    return g;
  };
  const std::string_view n(name);
  *is_snapshot = n.starts_with("snapshot.");
  if (*is_snapshot) return number(n.substr(9));
  if (n == "journal.log") return 0;
  if (n.starts_with("journal.") && n.ends_with(".log")) {
    return number(n.substr(8, n.size() - 12));
  }
  return std::nullopt;
}

Result<Files> ListFiles(const std::string& dir) {
  Files files;
  std::error_code error;
  for (std::filesystem::directory_iterator it(dir, error), end;
       !error && it != end; it.increment(error)) {
    bool is_snapshot = false;
    auto g = GenerationOf(it->path().filename().string(), &is_snapshot);
    if (!g) continue;
    (is_snapshot ? files.snapshots : files.journals).insert(*g);
  }
  if (error) return Unavailable(dir + ": " + error.message());
  return files;
}

}  // namespace btsim::durable
