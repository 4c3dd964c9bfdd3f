// InstanceAccess: how the durable store reaches the served instances, for
// recovery and for snapshots.
#ifndef BTSIM_DURABLE_INSTANCE_ACCESS_H_
#define BTSIM_DURABLE_INSTANCE_ACCESS_H_

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "instance/instance.h"

namespace btsim::durable {

class InstanceAccess {
 public:
  virtual ~InstanceAccess() = default;
  // Runs `fn` on the instance named `name` (created if new) under its lock.
  virtual Status With(const std::string& name,
                      const std::function<Status(instance::Instance&)>& fn) = 0;
  // Runs `fn` on every instance created so far, in name order, with all
  // their locks held for the whole call (taken in that order).
  virtual Status WithAll(
      const std::function<Status(const std::vector<instance::Instance*>&)>&
          fn) = 0;
};

}  // namespace btsim::durable

#endif  // BTSIM_DURABLE_INSTANCE_ACCESS_H_
