#include "sim/fingerprint.h"

#include <bit>
#include <cstdio>
#include <cstring>

namespace btsim::sim {
namespace {

uint64_t Avalanche(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

void Fingerprint::Mix(uint64_t word) {
  a_ = Avalanche(a_ ^ word) + 0x9e3779b97f4a7c15ULL;
  b_ = Avalanche(b_ + (word * 0xff51afd7ed558ccdULL)) ^ a_;
}

void Fingerprint::Add(std::string_view bytes) {
  if (copies_to_ != nullptr) copies_to_->Add(bytes);
  Mix(bytes.size());
  // Bytes are packed little-endian into words of 8 (the last one partial,
  // possibly empty): the same on every host.
  const char* p = bytes.data();
  size_t left = bytes.size();
  for (; left >= 8; p += 8, left -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    if constexpr (std::endian::native == std::endian::big) {
      uint64_t swapped = 0;
      for (int i = 0; i < 8; ++i) {
        swapped = (swapped << 8) | ((word >> (8 * i)) & 0xff);
      }
      word = swapped;
    }
    Mix(word);
  }
  uint64_t word = 0;
  for (size_t i = 0; i < left; ++i) {
    word |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  Mix(word);
}

void Fingerprint::AddInt(int64_t value) {
  if (copies_to_ != nullptr) copies_to_->AddInt(value);
  Mix(0x1d);
  Mix(static_cast<uint64_t>(value));
}

std::string Fingerprint::Hex() const {
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx",
                static_cast<unsigned long long>(a_),
                static_cast<unsigned long long>(b_));
  return buf;
}

}  // namespace btsim::sim
