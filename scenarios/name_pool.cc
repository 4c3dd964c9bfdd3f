#include "scenarios/name_pool.h"

#include <cstring>

namespace btsim::scenarios {
namespace {

// Texts go in blocks of this size; a longer text gets a block of its own.
constexpr size_t kBlockBytes = 64 * 1024;
constexpr size_t kOwnBlockBytes = kBlockBytes / 4;

size_t VarintBytes(size_t n) {
  size_t bytes = 1;
  for (; n >= 0x80; n >>= 7) ++bytes;
  return bytes;
}

}  // namespace

Name NamePool::Store(std::string_view text) {
  if (text.empty()) return Name();
  const size_t bytes = VarintBytes(text.size()) + text.size();
  char* at;
  if (bytes > kOwnBlockBytes) {
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(bytes));
    at = blocks_.back().get();
  } else {
    if (bytes > left_) {
      blocks_.push_back(std::make_unique_for_overwrite<char[]>(kBlockBytes));
      free_ = blocks_.back().get();
      left_ = kBlockBytes;
    }
    at = free_;
    free_ += bytes;
    left_ -= bytes;
  }
  char* p = at;
  for (size_t n = text.size(); true; n >>= 7) {
    if (n < 0x80) {
      *p++ = static_cast<char>(n);
      break;
    }
    *p++ = static_cast<char>((n & 0x7f) | 0x80);
  }
  std::memcpy(p, text.data(), text.size());
  return Name(at);
}

Name NamePool::Intern(std::string_view text) {
  if (text.empty()) return Name();
  auto it = interned_.find(text);
  if (it != interned_.end()) {
    // The view's bytes follow the length prefix Store wrote.
    return Name(it->data() - VarintBytes(it->size()));
  }
  const Name name = Store(text);
  interned_.insert(name.view());
  return name;
}

const OpSource* NamePool::Source(std::string_view client,
                                 std::string_view group,
                                 std::string_view profile,
                                 std::string_view table) {
  return &*sources_
               .insert({Intern(client), Intern(group), Intern(profile),
                        Intern(table)})
               .first;
}

}  // namespace btsim::scenarios
