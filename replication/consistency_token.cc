#include "replication/consistency_token.h"

#include <cstdio>
#include <cstdlib>

#include "sim/rng.h"

namespace btsim::replication {
namespace {

constexpr std::string_view kPrefix = "btsim1";

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
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else
      return false;
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
                                   std::span<const uint64_t> positions) {
  std::string body =
      std::string(kPrefix) + "-" + Hex(sim::StableHash(table_name));
  for (uint64_t p : positions) body += "-" + Hex(p);
  return body + "-" + Hex(sim::StableHash(body, 0x70c3));
}

Result<std::vector<uint64_t>> DecodeConsistencyToken(
    std::string_view token, std::string_view table_name) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t dash = token.find('-', start);
    parts.push_back(token.substr(start, dash - start));
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  if (parts.size() < 4 || parts[0] != kPrefix) {
    return Malformed("not a consistency token issued by this server");
  }
  const std::string_view body = token.substr(0, token.rfind('-'));
  uint64_t checksum;
  if (!ParseHex(parts.back(), &checksum) ||
      checksum != sim::StableHash(body, 0x70c3)) {
    return Malformed("the token is corrupt (checksum mismatch)");
  }
  uint64_t table_hash;
  if (!ParseHex(parts[1], &table_hash) ||
      table_hash != sim::StableHash(table_name)) {
    return Malformed("the token was generated for a different table");
  }
  std::vector<uint64_t> positions;
  for (size_t i = 2; i + 1 < parts.size(); ++i) {
    uint64_t p;
    if (!ParseHex(parts[i], &p)) return Malformed("bad position field");
    positions.push_back(p);
  }
  return positions;
}

}  // namespace btsim::replication
