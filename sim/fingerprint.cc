#include "sim/fingerprint.h"

#include <bit>
#include <cstdio>
#include <cstring>

namespace btsim::sim {
namespace {

inline uint64_t Avalanche(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The state (a, b) of a fingerprint, in locals while words are mixed in.
struct State {
  uint64_t a;
  uint64_t b;
  void Mix(uint64_t word) {
    a = Avalanche(a ^ word) + 0x9e3779b97f4a7c15ULL;
    b = Avalanche(b + (word * 0xff51afd7ed558ccdULL)) ^ a;
  }
};

// The 8 bytes at `p` as a little-endian word.
inline uint64_t LoadLittleEndian(const void* p) {
  uint64_t word;
  std::memcpy(&word, p, 8);
  if constexpr (std::endian::native == std::endian::big) {
    uint64_t swapped = 0;
    for (int i = 0; i < 8; ++i) {
      swapped = (swapped << 8) | ((word >> (8 * i)) & 0xff);
    }
    word = swapped;
  }
  return word;
}

// Calls mix(word) with the words Add hashes for `bytes`: the length, then
// the bytes packed little-endian into words of 8 (the last one partial,
// possibly empty), the same on every host.
template <class MixFn>
inline void ForEachWord(std::string_view bytes, MixFn mix) {
  mix(static_cast<uint64_t>(bytes.size()));
  const char* p = bytes.data();
  size_t left = bytes.size();
  for (; left >= 8; p += 8, left -= 8) {
    mix(LoadLittleEndian(p));
  }
  uint64_t word = 0;
  for (size_t i = 0; i < left; ++i) {
    word |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  mix(word);
}

}  // namespace

template <class ForEachWord>
void Fingerprint::Feed(const ForEachWord& for_each_word) {
  State self{a_, b_};
  for_each_word([&](uint64_t word) { self.Mix(word); });
  a_ = self.a;
  b_ = self.b;
}

void Fingerprint::Add(std::string_view bytes) {
  Feed([bytes](auto mix) { ForEachWord(bytes, mix); });
}

void Fingerprint::AddInt(int64_t value) {
  Feed([value](auto mix) {
    mix(0x1d);
    mix(static_cast<uint64_t>(value));
  });
}

std::string Fingerprint::Hex() const {
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx",
                static_cast<unsigned long long>(a_),
                static_cast<unsigned long long>(b_));
  return buf;
}

}  // namespace btsim::sim
