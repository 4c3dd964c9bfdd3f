#include "sim/fingerprint.h"

#include <cstdio>

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
  Mix(bytes.size());
  // Bytes are packed little-endian by hand: the same on every host.
  uint64_t word = 0;
  int filled = 0;
  for (unsigned char c : bytes) {
    word |= static_cast<uint64_t>(c) << (8 * filled);
    if (++filled == 8) {
      Mix(word);
      word = 0;
      filled = 0;
    }
  }
  Mix(word);
}

void Fingerprint::AddInt(int64_t value) {
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
