// Status: an error value carrying a gRPC canonical code and a message.
// Errors are values in btsim: no exceptions cross a layer boundary.
#ifndef BTSIM_BASE_STATUS_H_
#define BTSIM_BASE_STATUS_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace btsim {

// Numerically identical to the gRPC canonical codes.
enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// The canonical upper-case name, e.g. "INVALID_ARGUMENT".
std::string_view StatusCodeName(StatusCode code);
// The code named `name` ("UNAVAILABLE"), if any.
std::optional<StatusCode> StatusCodeFromName(std::string_view name);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "CODE: message", or "OK".
  std::string ToString() const;

  bool operator==(const Status&) const = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgument(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status NotFound(std::string m) {
  return Status(StatusCode::kNotFound, std::move(m));
}
inline Status AlreadyExists(std::string m) {
  return Status(StatusCode::kAlreadyExists, std::move(m));
}
inline Status DeadlineExceeded(std::string m) {
  return Status(StatusCode::kDeadlineExceeded, std::move(m));
}
inline Status FailedPrecondition(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
inline Status ResourceExhausted(std::string m) {
  return Status(StatusCode::kResourceExhausted, std::move(m));
}
inline Status Unavailable(std::string m) {
  return Status(StatusCode::kUnavailable, std::move(m));
}
inline Status Unimplemented(std::string m) {
  return Status(StatusCode::kUnimplemented, std::move(m));
}
inline Status Aborted(std::string m) {
  return Status(StatusCode::kAborted, std::move(m));
}
inline Status Internal(std::string m) {
  return Status(StatusCode::kInternal, std::move(m));
}

// `text` in single quotes for an error message, cut to its first
// kMaxQuotedBytes bytes when longer ("'abc...' (70000 bytes)"): a client's
// name echoed back must not make a status too large to deliver. Bytes
// outside printable ASCII are escaped as \xNN and '\' as "\\", so the
// quote is ASCII: a message may travel in a protobuf `string` field (a
// MutateRows entry's status), which must hold valid UTF-8.
inline constexpr size_t kMaxQuotedBytes = 128;
std::string QuoteForError(std::string_view text);

}  // namespace btsim

// Returns early from the enclosing function if `expr` is not OK.
#define BTSIM_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::btsim::Status btsim_status_ = (expr);        \
    if (!btsim_status_.ok()) return btsim_status_; \
  } while (0)

#endif  // BTSIM_BASE_STATUS_H_
