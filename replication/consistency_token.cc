#include "replication/consistency_token.h"

#include <cstdio>
#include <vector>

#include "replication/replicas.h"
#include "sim/rng.h"

namespace btsim::replication {
namespace {

// btsim2.<table hash>.<cluster>=<position>....<checksum>, hex lowercase.
constexpr std::string_view kPrefix = "btsim2";
constexpr uint64_t kChecksumSeed = 0x70c3;

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(v));
  return buf;
}

bool ParseHex(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 16) return false;
  uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else {
      return false;
    }
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  *out = v;
  return true;
}

Status Malformed(const std::string& why) {
  return InvalidArgument("consistency_token: " + why);
}

}  // namespace

std::string EncodeConsistencyToken(std::string_view table_name,
                                   const LogPositions& positions) {
  std::string body =
      std::string(kPrefix) + "." + Hex(sim::StableHash(table_name));
  for (const auto& [id, position] : positions) {
    body += "." + id + "=" + Hex(position);
  }
  return body + "." + Hex(sim::StableHash(body, kChecksumSeed));
}

Result<LogPositions> DecodeConsistencyToken(std::string_view token,
                                            std::string_view table_name) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = token.find('.', start);
    parts.push_back(token.substr(start, dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (parts.size() < 4 || parts[0] != kPrefix) {
    return Malformed("not a consistency token issued by this server");
  }
  const std::string_view body = token.substr(0, token.rfind('.'));
  uint64_t checksum;
  if (!ParseHex(parts.back(), &checksum) ||
      checksum != sim::StableHash(body, kChecksumSeed)) {
    return Malformed("the token is corrupt (checksum mismatch)");
  }
  uint64_t table_hash;
  if (!ParseHex(parts[1], &table_hash) ||
      table_hash != sim::StableHash(table_name)) {
    return Malformed("the token was generated for a different table");
  }
  LogPositions positions;
  for (size_t i = 2; i + 1 < parts.size(); ++i) {
    const size_t eq = parts[i].find('=');
    uint64_t p;
    if (eq == std::string_view::npos ||
        !IsValidClusterId(parts[i].substr(0, eq)) ||
        !ParseHex(parts[i].substr(eq + 1), &p) ||
        !positions.emplace(std::string(parts[i].substr(0, eq)), p).second) {
      return Malformed("bad cluster position field");
    }
  }
  return positions;
}

}  // namespace btsim::replication
