#include "cluster/idempotency.h"

namespace btsim::cluster {

Status IdempotencyMemory::Validate(const Idempotency& idempotency,
                                   Timestamp now, const std::string& field) {
  if (idempotency.token.size() < 8) {
    return InvalidArgument(field + ".token: the token is " +
                           std::to_string(idempotency.token.size()) +
                           " bytes; it must be at least 8 bytes long");
  }
  if (idempotency.start_time > Timestamp{} &&
      now - idempotency.start_time > kIdempotencyWindow) {
    return FailedPrecondition(
        field +
        ".start_time: the first attempt was sent more than 15 "
        "minutes ago, so the protection against applying it twice "
        "may have expired; send it as a new mutation (a new token, "
        "or no start_time)");
  }
  return OkStatus();
}

bool IdempotencyMemory::Seen(std::string_view table, std::string_view key,
                             std::string_view token, Timestamp now) {
  Forget(now);
  return expires_.count(Key(table, key, token)) > 0;
}

void IdempotencyMemory::Remember(std::string_view table, std::string_view key,
                                 std::string_view token, Timestamp committed) {
  const Timestamp expires = committed + kIdempotencyWindow;
  auto [it, inserted] = expires_.try_emplace(Key(table, key, token), expires);
  if (!inserted) {
    if (it->second >= expires) return;
    // A later write of the same token: remembered until its expiry.
    auto range = by_expiry_.equal_range(it->second);
    for (auto e = range.first; e != range.second; ++e) {
      if (e->second == it->first) {
        by_expiry_.erase(e);
        break;
      }
    }
    it->second = expires;
  }
  by_expiry_.emplace(expires, it->first);
}

void IdempotencyMemory::ForEach(
    const std::function<void(std::string_view, std::string_view,
                             std::string_view, Timestamp)>& visit) const {
  for (const auto& [key, expires] : expires_) {
    visit(std::get<0>(key), std::get<1>(key), std::get<2>(key),
          expires - kIdempotencyWindow);
  }
}

void IdempotencyMemory::Forget(Timestamp now) {
  while (!by_expiry_.empty() && by_expiry_.begin()->first < now) {
    expires_.erase(by_expiry_.begin()->second);
    by_expiry_.erase(by_expiry_.begin());
  }
}

}  // namespace btsim::cluster
