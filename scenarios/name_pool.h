// Interned names for the history: a run records millions of operations, each
// naming its client, client group, app profile, table, cluster and error
// message, drawn from a handful of distinct strings. A Name is a pointer to
// one copy of the string, kept by a NamePool: 8 bytes instead of a 32-byte
// std::string in every operation.
//
// A Name is valid while its pool lives (History shares its pool between
// copies, see history.h). Names compare by content, so names from different
// pools (or a Name and a string) compare as their strings do. Not
// thread-safe: a pool is filled by one thread at a time.
#ifndef BTSIM_SCENARIOS_NAME_POOL_H_
#define BTSIM_SCENARIOS_NAME_POOL_H_

#include <compare>
#include <functional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>

namespace btsim::scenarios {

class Name {
 public:
  Name() = default;  // the empty name; needs no pool

  std::string_view view() const {
    return text_ ? std::string_view(*text_) : std::string_view();
  }
  operator std::string_view() const { return view(); }
  bool empty() const { return text_ == nullptr || text_->empty(); }
  size_t size() const { return view().size(); }

  friend bool operator==(const Name& a, const Name& b) {
    return a.text_ == b.text_ || a.view() == b.view();
  }
  friend bool operator==(const Name& a, std::string_view b) {
    return a.view() == b;
  }
  friend std::strong_ordering operator<=>(const Name& a, const Name& b) {
    return a.view() <=> b.view();
  }
  friend std::strong_ordering operator<=>(const Name& a, std::string_view b) {
    return a.view() <=> b;
  }
  friend std::ostream& operator<<(std::ostream& out, const Name& name) {
    return out << name.view();
  }

 private:
  friend class NamePool;
  explicit Name(const std::string* text) : text_(text) {}

  const std::string* text_ = nullptr;
};

class NamePool {
 public:
  NamePool() = default;
  NamePool(const NamePool&) = delete;
  NamePool& operator=(const NamePool&) = delete;

  // The name with this text, added when absent. Interning the same text
  // twice gives the same pointer.
  Name Intern(std::string_view text) {
    if (text.empty()) return Name();
    auto it = names_.find(text);
    if (it == names_.end()) it = names_.emplace(text).first;
    return Name(&*it);
  }
  size_t size() const { return names_.size(); }

 private:
  std::set<std::string, std::less<>> names_;  // nodes never move
};

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_NAME_POOL_H_
