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
  // Equal hashes (whatever copies_to()).
  bool operator==(const Fingerprint& o) const {
    return a_ == o.a_ && b_ == o.b_;
  }

  // While set (not null), everything added here is also added to `other`
  // (which must outlive that time and not copy back to this one): one pass
  // over some data feeds two fingerprints.
  void set_copies_to(Fingerprint* other) { copies_to_ = other; }
  Fingerprint* copies_to() const { return copies_to_; }

 private:
  // Mixes the words for_each_word(mix) passes to mix into this chain and
  // those it copies to (defined in the .cc, its only user).
  template <class ForEachWord>
  void Feed(const ForEachWord& for_each_word);

  uint64_t a_ = 0x6a09e667f3bcc908ULL;
  uint64_t b_ = 0xbb67ae8584caa73bULL;
  Fingerprint* copies_to_ = nullptr;
};

}  // namespace btsim::sim

#endif  // BTSIM_SIM_FINGERPRINT_H_
