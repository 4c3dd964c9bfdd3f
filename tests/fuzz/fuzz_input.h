// FuzzInput: reads a fuzzer's bytes as a stream of small choices, for the
// structured targets that build their own values (rows, filter trees,
// schedules) rather than parse a message. Every read succeeds: past the end
// it yields zeros and empty strings, so any input decodes to something and
// short inputs decode to small things.
#ifndef BTSIM_TESTS_FUZZ_FUZZ_INPUT_H_
#define BTSIM_TESTS_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace btsim::fuzz {

class FuzzInput {
 public:
  // `data` must outlive the reader.
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return at_ >= size_; }

  uint8_t Byte() { return at_ < size_ ? data_[at_++] : 0; }
  bool Bool() { return (Byte() & 1) != 0; }
  // In [0, n); requires n > 0. One byte for n <= 256, else eight.
  uint64_t Below(uint64_t n) {
    if (n <= 256) return Byte() % n;
    return U64() % n;
  }
  // In [lo, hi]; requires lo <= hi.
  int64_t Range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Below(static_cast<uint64_t>(hi) -
                                           static_cast<uint64_t>(lo) + 1));
  }
  uint64_t U64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | Byte();
    return v;
  }
  // Up to `max_size` bytes, the length first.
  std::string Bytes(size_t max_size) {
    const size_t n = static_cast<size_t>(Below(max_size + 1));
    std::string out;
    for (size_t i = 0; i < n && !empty(); ++i) {
      out += static_cast<char>(Byte());
    }
    return out;
  }
  // Up to `max_size` characters of `alphabet` (non-empty).
  std::string String(size_t max_size, std::string_view alphabet) {
    const size_t n = static_cast<size_t>(Below(max_size + 1));
    std::string out;
    for (size_t i = 0; i < n && !empty(); ++i) {
      out += alphabet[Below(alphabet.size())];
    }
    return out;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

}  // namespace btsim::fuzz

#endif  // BTSIM_TESTS_FUZZ_FUZZ_INPUT_H_
