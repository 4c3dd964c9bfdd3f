// Fuzz target: resource-name parsing (api/resource_names.h) and
// consistency tokens (replication/consistency_token.h), the two parsers of
// strings that clients write by hand or carry between calls.
//
// The first byte picks the parser; the rest is the string. Every parser
// must either accept or answer INVALID_ARGUMENT naming its field and
// echoing at most 128 bytes of the name; what it accepts must print back
// as the same name (each parser returns the parts it checked). Tokens are
// tried as given and, since a random string never has a valid checksum,
// also with the checksum the server would have written, so that the fields
// behind it are reached; an accepted token must decode to what it encodes
// and only for its own table.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "api/resource_names.h"
#include "base/check.h"
#include "replication/consistency_token.h"
#include "sim/rng.h"

namespace btsim::api {
namespace {

constexpr std::string_view kField = "fuzzed_field";
constexpr std::string_view kTable = "projects/p/instances/i/tables/t";

// An error a client can get: INVALID_ARGUMENT, naming the field, bounded.
void CheckRefusal(const Status& status, std::string_view field,
                  std::string_view input) {
  BTSIM_CHECK_MSG(status.code() == StatusCode::kInvalidArgument,
                  status.ToString());
  BTSIM_CHECK_MSG(status.message().find(field) != std::string::npos,
                  "the error does not name " + std::string(field) + ": " +
                      status.ToString());
  // The field, a quote of at most 128 bytes (escaped: 4 bytes each at
  // worst) and a sentence.
  BTSIM_CHECK_MSG(status.message().size() <= field.size() + 4 * 128 + 400,
                  "an error echoes too much of a " +
                      std::to_string(input.size()) + "-byte name");
}

template <typename T, typename Print>
void CheckParse(const Result<T>& result, std::string_view input,
                Print&& print) {
  if (!result.ok()) {
    CheckRefusal(result.status(), kField, input);
    return;
  }
  BTSIM_CHECK_MSG(print(*result) == input,
                  "an accepted name does not print back as itself");
}

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(v));
  return buf;
}

void CheckToken(std::string_view token) {
  auto decoded = replication::DecodeConsistencyToken(token, kTable);
  if (!decoded.ok()) {
    CheckRefusal(decoded.status(), "consistency_token", token);
    return;
  }
  // What it decodes to encodes to a token that decodes the same, for this
  // table only.
  const std::string again =
      replication::EncodeConsistencyToken(kTable, *decoded);
  auto redecoded = replication::DecodeConsistencyToken(again, kTable);
  BTSIM_CHECK(redecoded.ok() && *redecoded == *decoded);
  BTSIM_CHECK_MSG(!replication::DecodeConsistencyToken(token,
                                                       "projects/p/instances/i/"
                                                       "tables/other")
                       .ok(),
                  "a token decodes for another table");
}

void Run(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const std::string_view s(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 10) {
    case 0:
      CheckParse(ParseProjectName(s, kField), s,
                 [](const std::string& p) { return "projects/" + p; });
      break;
    case 1:
      CheckParse(ParseInstanceName(s, kField), s,
                 [](const std::string& n) { return n; });
      break;
    case 2:
      CheckParse(ParseInstanceNameOrAll(s, kField), s,
                 [](const std::string& n) { return n; });
      break;
    case 3:
      CheckParse(ParseTableName(s, kField), s,
                 [](const TableName& n) { return n.full(); });
      break;
    case 4:
      CheckParse(ParseClusterName(s, kField), s, [](const ChildName& n) {
        return n.instance + "/clusters/" + n.id;
      });
      break;
    case 5:
      CheckParse(ParseAppProfileName(s, kField), s, [](const ChildName& n) {
        return n.instance + "/appProfiles/" + n.id;
      });
      break;
    case 6:
      CheckParse(ParseLocation(s, kField), s, [&](const std::string& zone) {
        const std::string tail = "/locations/" + zone;
        return s.ends_with(tail) ? std::string(s) : tail;
      });
      break;
    case 7: {
      const Status status = ValidateInstanceId(s, kField);
      if (!status.ok()) CheckRefusal(status, kField, s);
      // ProjectOf and LastSegment take any string.
      const std::string project = ProjectOf(s);
      const std::string_view last = LastSegment(s);
      BTSIM_CHECK(last.size() <= s.size());
      BTSIM_CHECK(project.size() <= s.size());
      break;
    }
    case 8:
      CheckToken(s);
      break;
    default: {
      // The body as given, after this table's prefix, with the checksum the
      // server computes.
      const std::string body =
          "btsim2." + Hex(sim::StableHash(kTable)) + std::string(s);
      CheckToken(body + "." + Hex(sim::StableHash(body, 0x70c3)));
      break;
    }
  }
}

}  // namespace
}  // namespace btsim::api

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  btsim::api::Run(data, size);
  return 0;
}
