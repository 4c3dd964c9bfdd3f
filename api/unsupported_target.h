// UnsupportedTarget: data requests may name an authorized or materialized
// view instead of a table; btsim serves tables only. Returns UNIMPLEMENTED
// naming the field when a request targets a view, OK otherwise. Check it
// before table_name, which is empty when a client targets a view.
#ifndef BTSIM_API_UNSUPPORTED_TARGET_H_
#define BTSIM_API_UNSUPPORTED_TARGET_H_

#include "base/status.h"

namespace btsim::api {

template <typename Request>
Status UnsupportedTarget(const Request& request) {
  if (!request.authorized_view_name().empty()) {
    return Unimplemented(
        "authorized_view_name: authorized views are not supported by btsim");
  }
  if constexpr (requires { request.materialized_view_name(); }) {
    if (!request.materialized_view_name().empty()) {
      return Unimplemented(
          "materialized_view_name: materialized views are not supported by "
          "btsim");
    }
  }
  return OkStatus();
}

}  // namespace btsim::api

#endif  // BTSIM_API_UNSUPPORTED_TARGET_H_
