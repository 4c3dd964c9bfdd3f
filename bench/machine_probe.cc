// How fast this machine is right now, in the two quantities the
// simulator's throughput follows: the cost of a random-key insert into an
// ordered map of a million entries (issue 6 prices it at ~1-2 us on the
// reference machine) and the rate at which the kernel hands out fresh
// memory, in small and in huge pages (page zeroing, which a shared VM's
// host backs lazily: the simulator's heap is on huge pages). Printed
// after bench/sim-throughput.sh's runs as a rough guide to how fast the
// machine was; it does not predict the simulator's rate closely (see
// docs/PERFORMANCE.md). Run it after the simulator, never
// before, and after a pause: memory a process frees stays backed for a few
// seconds and would speed up the next one (the simulator's, this probe's
// huge pages).
//
// Usage: machine_probe [rows]   (default 1,000,000)
#include <sys/mman.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// SplitMix64: distinct keys from a fixed seed, the same every run.
uint64_t Mix(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Mean microseconds per insert of `rows` random 16-byte keys with 20-byte
// values (the served benchmark's row shape) into one std::map; the keys
// are made before the clock starts.
double MapInsertMicros(long rows) {
  std::vector<std::string> keys;
  keys.reserve(static_cast<size_t>(rows));
  uint64_t state = 42;
  char key[17];
  for (long i = 0; i < rows; ++i) {
    std::snprintf(key, sizeof(key), "%016llx",
                  static_cast<unsigned long long>(Mix(&state)));
    keys.emplace_back(key);
  }
  std::map<std::string, std::string> map;
  const std::string value(20, 'v');
  const auto start = Clock::now();
  for (const std::string& k : keys) map.emplace(k, value);
  const double seconds = SecondsSince(start);
  if (map.size() != static_cast<size_t>(rows)) std::abort();
  return seconds * 1e6 / static_cast<double>(rows);
}

// GB per second at which `bytes` of fresh anonymous memory are touched for
// the first time (one write per 4 KiB page), in transparent huge pages or
// in 4 KiB pages (madvise); 0 when the kernel refuses the mapping.
double FirstTouchGbPerSecond(size_t bytes, bool huge) {
  constexpr size_t kHuge = size_t{2} << 20;
  void* const mapped = mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return 0;
  // Aligned to 2 MiB, so that every huge page can be huge.
  char* const block = reinterpret_cast<char*>(
      (reinterpret_cast<uintptr_t>(mapped) + kHuge - 1) & ~(kHuge - 1));
  madvise(block, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  const auto start = Clock::now();
  for (size_t i = 0; i < bytes; i += 4096) block[i] = 1;
  const double seconds = SecondsSince(start);
  munmap(mapped, bytes + kHuge);
  return static_cast<double>(bytes) / 1e9 / seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const long rows = argc > 1 ? std::atol(argv[1]) : 1'000'000;
  if (rows <= 0) {
    std::fprintf(stderr, "machine_probe: rows must be positive\n");
    return 2;
  }
  const size_t bytes = size_t{256} << 20;
  // Huge pages first: the small pages' memory, once freed, would give them
  // blocks that are still backed.
  const double huge = FirstTouchGbPerSecond(bytes, /*huge=*/true);
  const double small = FirstTouchGbPerSecond(bytes, /*huge=*/false);
  const double insert = MapInsertMicros(rows);
  std::printf(
      "machine: %.2f us per random-key std::map insert (%ld rows); first "
      "touch of fresh memory %.2f GB/s in 4 KiB pages, %.2f GB/s in huge "
      "pages\n",
      insert, rows, small, huge);
  return 0;
}
