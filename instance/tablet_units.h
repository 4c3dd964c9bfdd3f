// TabletUnits: a count of units per tablet id, gathered over one
// replication batch so that its rows are charged to the node model once per
// tablet instead of once per row (see Instance::QueueReplicated).
//
// A fixed table with open addressing on the id (ids are hashes): Add and the
// drain touch only this object, no allocation after construction. Holds at
// most kCapacity distinct ids; Add reports when it is full. The drain visits
// ids in the order they were first added. Not thread-safe.
#ifndef BTSIM_INSTANCE_TABLET_UNITS_H_
#define BTSIM_INSTANCE_TABLET_UNITS_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace btsim::instance {

class TabletUnits {
 public:
  static constexpr size_t kCapacity = 128;

  bool empty() const { return used_ == 0; }

  // Adds one unit to `tablet_id`'s count. False, changing nothing, when the
  // id is new and kCapacity ids are held already.
  bool Add(uint64_t tablet_id) {
    size_t i = Home(tablet_id);
    while (slots_[i].units != 0 && slots_[i].id != tablet_id) {
      i = (i + 1) & (kSlots - 1);
    }
    if (slots_[i].units == 0) {
      if (used_ == kCapacity) return false;
      slots_[i].id = tablet_id;
      order_[used_++] = static_cast<uint16_t>(i);
    }
    ++slots_[i].units;
    return true;
  }

  // Calls submit(tablet_id, units) for every id held, then holds none.
  template <class Submit>
  void Drain(Submit submit) {
    for (size_t k = 0; k < used_; ++k) {
      Slot& slot = slots_[order_[k]];
      submit(slot.id, slot.units);
      slot = Slot{};
    }
    used_ = 0;
  }

 private:
  // Twice the capacity, so that probes stay short.
  static constexpr size_t kSlots = 2 * kCapacity;
  static_assert((kSlots & (kSlots - 1)) == 0, "a power of two");

  struct Slot {
    uint64_t id = 0;
    int64_t units = 0;  // 0: empty
  };
  static size_t Home(uint64_t id) {
    return static_cast<size_t>(id ^ (id >> 32)) & (kSlots - 1);
  }

  std::array<Slot, kSlots> slots_{};
  std::array<uint16_t, kCapacity> order_{};  // the used slots
  size_t used_ = 0;
};

}  // namespace btsim::instance

#endif  // BTSIM_INSTANCE_TABLET_UNITS_H_
