#include "scenarios/name_pool.h"

#include <cstring>

#include "sim/fingerprint.h"

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

bool ParseTag(std::string_view tag, std::string_view* client, uint64_t* n) {
  const size_t slash = tag.rfind('/');
  if (slash == std::string_view::npos) return false;
  const std::string_view digits = tag.substr(slash + 1);
  if (digits.empty() || digits.size() > 9 ||
      (digits.size() > 1 && digits[0] == '0')) {
    return false;
  }
  uint64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  *client = tag.substr(0, slash);
  *n = value;
  return true;
}

std::string NamePool::Text(Tag tag) const {
  if (!tag.compact()) return tag.name().str();
  std::string text(tag_clients_[tag.client_index()].view());
  text += '/';
  text += std::to_string(tag.sequence());
  return text;
}

Tag NamePool::MakeTag(std::string_view text) {
  std::string_view client;
  uint64_t n = 0;
  if (ParseTag(text, &client, &n) && client.size() <= kMaxTagText) {
    auto it = tag_client_index_.find(client);
    if (it == tag_client_index_.end()) {
      // Keyed on the pool's copy, which outlives `text`.
      const Name name = Intern(client);
      it = tag_client_index_
               .emplace(name.view(), static_cast<uint32_t>(tag_clients_.size()))
               .first;
      tag_clients_.push_back(name);
    }
    if (it->second < Tag::kMaxClients) return Tag::Compact(it->second, n);
  }
  if (text.size() <= kMaxTagText) return Tag(Store(text));
  sim::Fingerprint hash;
  hash.Add(text);
  return Tag(Store("#" + hash.Hex()));
}

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
