// Texts kept for the history: a run records millions of operations, each
// naming its client, client group, app profile, table, cluster and error
// message (a handful of distinct strings), and carrying its row key and value
// tag (mostly distinct, mostly short). A Name is an 8-byte pointer to one
// copy of the text in a NamePool's arena, instead of a 32-byte std::string in
// every operation: names and row keys are interned (one copy per distinct
// text: a run's keys are bounded by its key space, not by its length), tags
// are stored as they come (no lookup, ~1 byte of overhead each).
//
// A Name is valid while its pool lives (History shares its pool between
// copies, see history.h). Names compare by content, so names from different
// pools (or a Name and a string) compare as their strings do. Not
// thread-safe: a pool is filled by one thread at a time.
#ifndef BTSIM_SCENARIOS_NAME_POOL_H_
#define BTSIM_SCENARIOS_NAME_POOL_H_

#include <bit>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>  // btsim: order-independent (lookups only)
#include <unordered_set>  // btsim: order-independent (lookups only)
#include <vector>

#include "base/bytes.h"
#include "base/check.h"

namespace btsim::scenarios {

class Name {
 public:
  Name() = default;  // the empty name; needs no pool

  std::string_view view() const {
    if (text_ == nullptr) return {};
    // The pool's layout: the length as a base-128 varint, then the bytes.
    const auto* p = reinterpret_cast<const unsigned char*>(text_);
    size_t size = *p & 0x7f;
    for (int shift = 7; *p++ & 0x80; shift += 7) {
      size |= static_cast<size_t>(*p & 0x7f) << shift;
    }
    return {reinterpret_cast<const char*>(p), size};
  }
  operator std::string_view() const { return view(); }
  std::string str() const { return std::string(view()); }
  bool empty() const { return text_ == nullptr; }
  // Asks the CPU to bring the text into cache (a hint; harmless when empty).
  void Prefetch() const { __builtin_prefetch(text_); }
  size_t size() const { return view().size(); }

  friend bool operator==(const Name& a, const Name& b) {
    return a.text_ == b.text_ || SameBytes(a.view(), b.view());
  }
  friend bool operator==(const Name& a, std::string_view b) {
    return SameBytes(a.view(), b);
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
  explicit Name(const char* text) : text_(text) {}

  const char* text_ = nullptr;  // null for the empty text
};

// Splits a tag of the form simulated clients write, "<client>/<n>" with n in
// canonical decimal (no leading zero) below 10^9; false for any other tag.
bool ParseTag(std::string_view tag, std::string_view* client, uint64_t* n);

// A value tag (see history.h) in 8 bytes. A tag of the form simulated
// clients write ("<client>/<n>", ParseTag) holds no text: only its client's
// index in the pool (NamePool::MakeTag) and n, so a run's tags cost nothing
// in the pool however many it writes. Any other tag is a Name. Made by
// NamePool::MakeTag, so that one text always makes the same kind of tag;
// the text is NamePool::Text. Tags of one pool compare by their texts.
class Tag {
 public:
  static constexpr uint32_t kMaxClients = uint32_t{1} << 23;

  Tag() = default;  // the empty tag
  // The tag whose slot bits are `bits` (Operation keeps tags as bits).
  static Tag FromBits(int64_t bits) { return Tag(bits); }
  int64_t bits() const { return bits_; }

  bool empty() const { return bits_ == 0; }
  // The compact kind: client_index() and sequence() hold the text.
  bool compact() const { return bits_ < 0; }
  uint32_t client_index() const {
    return static_cast<uint32_t>((static_cast<uint64_t>(bits_) >> 40) &
                                 (kMaxClients - 1));
  }
  uint64_t sequence() const {
    return static_cast<uint64_t>(bits_) & ((uint64_t{1} << 40) - 1);
  }
  // The text of a tag that is not compact.
  Name name() const { return compact() ? Name() : std::bit_cast<Name>(bits_); }

  friend bool operator==(Tag a, Tag b) {
    if (a.bits_ == b.bits_) return true;
    return !a.compact() && !b.compact() && a.name() == b.name();
  }

 private:
  friend class NamePool;
  explicit Tag(int64_t bits) : bits_(bits) {}
  // A text's address has bit 63 clear (user space on the 64-bit machines
  // btsim builds for), which leaves that bit to mark compact tags.
  explicit Tag(Name name) : bits_(std::bit_cast<int64_t>(name)) {
    BTSIM_CHECK(bits_ >= 0);
  }
  static Tag Compact(uint32_t client, uint64_t n) {
    return Tag(static_cast<int64_t>((uint64_t{1} << 63) |
                                    (static_cast<uint64_t>(client) << 40) | n));
  }

  int64_t bits_ = 0;
};

// Who issued an operation and through what: its client (e.g. "writer-3"),
// the client's group (the scenario's client name, e.g. "writer"), and the
// app profile and table it used. Interned by NamePool::Source, so an
// operation holds one pointer for the four names.
struct OpSource {
  Name client;
  Name group;
  Name profile;
  Name table;

  friend bool operator==(const OpSource&, const OpSource&) = default;
  friend auto operator<=>(const OpSource&, const OpSource&) = default;
};

class NamePool {
 public:
  NamePool() = default;
  NamePool(const NamePool&) = delete;
  NamePool& operator=(const NamePool&) = delete;

  // The name with this text, added when absent: interning the same text
  // twice gives the same pointer. For texts many operations repeat: names
  // and row keys.
  Name Intern(std::string_view text);
  // A name with this text, always a new copy (no lookup): for texts that
  // are mostly distinct, such as value tags.
  Name Store(std::string_view text);
  // The source with these names, added when absent (same pointer for equal
  // sources): valid while the pool lives. Interns the four names.
  const OpSource* Source(std::string_view client, std::string_view group,
                         std::string_view profile, std::string_view table);
  // The distinct interned texts (stored ones are not counted).
  size_t size() const { return interned_.size(); }

  // The tag with this text (see Tag). Any other text longer than
  // kMaxTagText bytes (a real client's value, in `serve --scenario`) is
  // kept as "#" and 32 hex digits of a 128-bit hash of it: equal values
  // keep equal tags, and a long value costs no more than a short one.
  static constexpr size_t kMaxTagText = 64;
  Tag MakeTag(std::string_view text);
  // The text of a tag of this pool.
  std::string Text(Tag tag) const;

 private:
  std::vector<std::unique_ptr<char[]>> blocks_;  // never move
  char* free_ = nullptr;                         // in the last block
  size_t left_ = 0;                              // bytes at free_
  // Views into blocks_; lookups only, never iterated.
  std::unordered_set<std::string_view> interned_;  // btsim: order-independent
  std::set<OpSource> sources_;                     // nodes never move
  // The clients of compact tags, by index, and the index of each.
  std::vector<Name> tag_clients_;
  std::unordered_map<std::string_view, uint32_t>  // btsim: order-independent
      tag_client_index_;
};

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_NAME_POOL_H_
