// Fingerprint: an order-sensitive 128-bit hash of a run, built from the
// event trace and, at the end, every cluster's contents. The same scenario
// and seed must give the same fingerprint, byte for byte, on any machine:
// feed it only deterministic values (never pointers or unordered iteration).
#ifndef BTSIM_SIM_FINGERPRINT_H_
#define BTSIM_SIM_FINGERPRINT_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace btsim::sim {

class Fingerprint {
 public:
  // Adds a length-delimited byte string, so ("ab","c") != ("a","bc").
  void Add(std::string_view bytes);
  void AddInt(int64_t value);
  // 32 lowercase hex digits.
  std::string Hex() const;
  bool operator==(const Fingerprint& o) const {
    return a_ == o.a_ && b_ == o.b_;
  }

 private:
  // Mixes the words for_each_word(mix) passes to mix into the state
  // (defined in the .cc, its only user).
  template <class ForEachWord>
  void Feed(const ForEachWord& for_each_word);

  uint64_t a_ = 0x6a09e667f3bcc908ULL;
  uint64_t b_ = 0xbb67ae8584caa73bULL;
};

}  // namespace btsim::sim

#endif  // BTSIM_SIM_FINGERPRINT_H_
