// A fuzz target for testing replay_main.cc itself: it aborts on an input
// that starts with "CRASH" or is 8 bytes or longer (which mutations of a
// shorter input soon make), and accepts everything else.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= 8 || (size >= 5 && std::memcmp(data, "CRASH", 5) == 0)) {
    std::abort();
  }
  return 0;
}
