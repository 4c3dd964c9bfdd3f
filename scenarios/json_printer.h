// Prints protobuf messages as the JSON btsim writes (the schema and its
// rules are in proto/btsim/report/v1/report.proto): protobuf's canonical
// JSON mapping with the field names as written in the .proto (snake_case);
// fields without presence printed even when zero or empty, `optional`
// fields only when set; map keys sorted, so the same message gives the same
// bytes.
#ifndef BTSIM_SCENARIOS_JSON_PRINTER_H_
#define BTSIM_SCENARIOS_JSON_PRINTER_H_

#include <memory>
#include <string>
#include <string_view>

#include <google/protobuf/message.h>
#include <google/protobuf/util/json_util.h>

#include "base/status.h"

namespace btsim::scenarios {

class JsonPrinter {
 public:
  enum class Layout {
    kOneLine,   // no whitespace: one object per line (JSON Lines)
    kIndented,  // one field per line, for people
  };
  explicit JsonPrinter(Layout layout);
  ~JsonPrinter();
  JsonPrinter(const JsonPrinter&) = delete;
  JsonPrinter& operator=(const JsonPrinter&) = delete;

  // Appends the JSON of `message` (no trailing newline) to `out`; INTERNAL
  // if protobuf cannot print it. String fields must hold UTF-8 (fill them
  // with AssignJsonText): protobuf drops what is not, and logs an error.
  // Not thread-safe: one printer per thread; it keeps what it learns about
  // each message type.
  Status Print(const google::protobuf::Message& message, std::string& out);

 private:
  class TypeCache;
  std::unique_ptr<TypeCache> types_;
  google::protobuf::util::JsonPrintOptions options_;
  std::string binary_;  // the message's wire form, reused
  std::string json_;    // its JSON, reused
};

// Sets `out` to `bytes` as text a JSON string can carry, byte for byte:
// each byte b becomes the character U+00bb (ISO 8859-1), UTF-8 encoded. ASCII
// is unchanged; a reader gets the bytes back by encoding the string as ISO
// 8859-1. Reuses `out`'s capacity.
void AssignJsonText(std::string_view bytes, std::string& out);
std::string JsonText(std::string_view bytes);
// The inverse, for reading btsim's JSON back: the bytes of `text` (UTF-8
// whose characters are all U+0000..U+00FF). False, `bytes` unspecified, for
// any other text.
bool BytesOfJsonText(std::string_view text, std::string& bytes);

// `v` rounded as printf rounds it: to `decimals` places ("%.*f"), or to
// `digits` significant digits ("%.*g"). Doubles so rounded print cleanly
// (e.g. 0.097884, not 0.09788405700000001). Infinities and NaN unchanged.
double RoundToDecimals(double v, int decimals);
double RoundToSignificant(double v, int digits);

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_JSON_PRINTER_H_
