// Result<T>: either a value or a non-OK Status.
#ifndef BTSIM_BASE_RESULT_H_
#define BTSIM_BASE_RESULT_H_

#include <utility>
#include <variant>

#include "base/check.h"
#include "base/status.h"

namespace btsim {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  // Requires !status.ok().
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    BTSIM_CHECK(!std::get<Status>(v_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  // OK when a value is held.
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  // Require ok().
  T& value() & {
    BTSIM_CHECK(ok());
    return std::get<T>(v_);
  }
  const T& value() const& {
    BTSIM_CHECK(ok());
    return std::get<T>(v_);
  }
  T&& value() && {
    BTSIM_CHECK(ok());
    return std::get<T>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace btsim

// Evaluates `rexpr` (a Result); on error returns its Status, otherwise moves
// the value into `lhs` (a declaration such as `auto x`).
#define BTSIM_CONCAT_INNER_(a, b) a##b
#define BTSIM_CONCAT_(a, b) BTSIM_CONCAT_INNER_(a, b)
#define BTSIM_ASSIGN_OR_RETURN(lhs, rexpr)                  \
  auto BTSIM_CONCAT_(btsim_result_, __LINE__) = (rexpr);    \
  if (!BTSIM_CONCAT_(btsim_result_, __LINE__).ok())         \
    return BTSIM_CONCAT_(btsim_result_, __LINE__).status(); \
  lhs = std::move(BTSIM_CONCAT_(btsim_result_, __LINE__)).value()

#endif  // BTSIM_BASE_RESULT_H_
