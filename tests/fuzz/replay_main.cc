// The main() of a fuzz target in the ordinary (gcc) build, where libFuzzer is
// not linked: runs the target's LLVMFuzzerTestOneInput over every file of
// the given corpora, then over deterministic mutations of them.
//
//   fuzz_X [--mutations N] [--max-seconds S] [--seed K] PATH...
//
// PATH is a corpus directory (every regular file in it, by name) or one
// file. The mutations come from a seeded generator of our own: the same
// corpus, seed and N give the same inputs in the same order on any machine.
// --max-seconds (default 0: none) only cuts the mutation phase short on a
// slow machine; it never changes which inputs are made.
//
// A target that crashes or aborts kills the process (so ctest fails); a
// signal handler first prints which input it was and writes it to
// ./replay-crash-<target>. A target that returns anything but 0 or -1 (the
// values libFuzzer allows) fails the run too.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using Bytes = std::vector<uint8_t>;

// The input being run, for the crash handler.
const uint8_t* current_data = nullptr;
size_t current_size = 0;
char current_label[512] = "";
char crash_path[512] = "replay-crash";

void WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = write(fd, p, size);
    if (n <= 0) return;
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void WriteString(int fd, const char* s) { WriteAll(fd, s, strlen(s)); }

// Async-signal-safe: reports the input, saves it, and re-raises.
void OnCrash(int signal_number) {
  WriteString(2, "\nreplay: crashed on ");
  WriteString(2, current_label);
  WriteString(2, "; the input is saved in ");
  WriteString(2, crash_path);
  WriteString(2, "\n");
  const int fd = open(crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    WriteAll(fd, current_data, current_size);
    close(fd);
  }
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

// SplitMix64: a fixed algorithm, so that the mutations are the same
// everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n); n > 0.
  size_t Below(size_t n) { return static_cast<size_t>(Next() % n); }

 private:
  uint64_t state_;
};

constexpr size_t kMaxInputBytes = 1 << 16;

// One libFuzzer-like mutation of `in` (with `other`, another corpus entry,
// for splices).
void Mutate(Bytes& in, const Bytes& other, Rng& rng) {
  static constexpr uint8_t kInteresting[] = {0,    1,   2,    0x7f, 0x80,
                                             0xff, '0', '\n', '"',  ':'};
  switch (rng.Below(in.empty() ? 2 : 8)) {
    case 0:  // insert a byte
      in.insert(in.begin() + static_cast<ptrdiff_t>(rng.Below(in.size() + 1)),
                static_cast<uint8_t>(rng.Next()));
      return;
    case 1: {  // splice: our prefix, the other's suffix
      if (other.empty()) return;
      const size_t keep = in.empty() ? 0 : rng.Below(in.size());
      const size_t from = rng.Below(other.size());
      in.resize(keep);
      in.insert(in.end(), other.begin() + static_cast<ptrdiff_t>(from),
                other.end());
      return;
    }
    case 2:  // flip a bit
      in[rng.Below(in.size())] ^= static_cast<uint8_t>(1u << rng.Below(8));
      return;
    case 3:  // a random byte
      in[rng.Below(in.size())] = static_cast<uint8_t>(rng.Next());
      return;
    case 4:  // an interesting byte
      in[rng.Below(in.size())] = kInteresting[rng.Below(sizeof(kInteresting))];
      return;
    case 5: {  // erase a range
      const size_t at = rng.Below(in.size());
      const size_t n = 1 + rng.Below(std::min<size_t>(in.size() - at, 8));
      in.erase(in.begin() + static_cast<ptrdiff_t>(at),
               in.begin() + static_cast<ptrdiff_t>(at + n));
      return;
    }
    case 6: {  // duplicate a range
      const size_t at = rng.Below(in.size());
      const size_t n = 1 + rng.Below(std::min<size_t>(in.size() - at, 16));
      const Bytes part(in.begin() + static_cast<ptrdiff_t>(at),
                       in.begin() + static_cast<ptrdiff_t>(at + n));
      in.insert(in.begin() + static_cast<ptrdiff_t>(rng.Below(in.size() + 1)),
                part.begin(), part.end());
      return;
    }
    default: {  // increment or decrement a byte (varints, lengths)
      uint8_t& b = in[rng.Below(in.size())];
      b = static_cast<uint8_t>(b + (rng.Below(2) == 0 ? 1 : 0xff));
      return;
    }
  }
}

long accepted = 0;  // inputs the target did not reject (returned 0)

bool Run(const Bytes& input, const std::string& label) {
  current_data = input.data();
  current_size = input.size();
  snprintf(current_label, sizeof(current_label), "%s", label.c_str());
  const int rc = LLVMFuzzerTestOneInput(input.data(), input.size());
  if (rc != 0 && rc != -1) {
    fprintf(stderr, "replay: %s returned %d\n", label.c_str(), rc);
    return false;
  }
  if (rc == 0) ++accepted;
  return true;
}

Bytes ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

int Usage(const char* argv0) {
  fprintf(stderr,
          "usage: %s [--mutations N] [--max-seconds S] [--seed K] PATH...\n",
          argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  long mutations = 0;
  double max_seconds = 0;
  uint64_t seed = 1;
  std::vector<std::filesystem::path> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 < argc && arg == "--mutations") {
      mutations = std::strtol(argv[++i], nullptr, 10);
    } else if (i + 1 < argc && arg == "--max-seconds") {
      max_seconds = std::strtod(argv[++i], nullptr);
    } else if (i + 1 < argc && arg == "--seed") {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg.rfind("--", 0) == 0) {
      return Usage(argv[0]);
    } else {
      paths.emplace_back(arg);
    }
  }
  if (paths.empty()) return Usage(argv[0]);
  const std::string target = std::filesystem::path(argv[0]).filename().string();
  snprintf(crash_path, sizeof(crash_path), "replay-crash-%s", target.c_str());
  for (int s : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
    std::signal(s, OnCrash);
  }

  std::vector<std::filesystem::path> files;
  for (const auto& path : paths) {
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else if (std::filesystem::is_regular_file(path)) {
      files.push_back(path);
    } else {
      fprintf(stderr, "replay: %s: no such file or directory\n", path.c_str());
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    fprintf(stderr, "replay: the corpus is empty\n");
    return 2;
  }
  std::vector<Bytes> corpus;
  for (const auto& file : files) {
    corpus.push_back(ReadFile(file));
    if (!Run(corpus.back(), file.string())) return 1;
  }

  const auto start = std::chrono::steady_clock::now();
  Rng rng(seed);
  long done = 0;
  for (; done < mutations; ++done) {
    if (max_seconds > 0 && done % 16 == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                .count() > max_seconds) {
      break;
    }
    const size_t pick = rng.Below(corpus.size());
    Bytes input = corpus[pick];
    const Bytes& other = corpus[rng.Below(corpus.size())];
    const size_t rounds = 1 + rng.Below(8);
    for (size_t r = 0; r < rounds; ++r) Mutate(input, other, rng);
    if (input.size() > kMaxInputBytes) input.resize(kMaxInputBytes);
    const std::string label = "mutation " + std::to_string(done) + " (seed " +
                              std::to_string(seed) + ") of " +
                              files[pick].string();
    if (!Run(input, label)) return 1;
  }
  printf(
      "%s: %zu corpus inputs and %ld of %ld mutations passed (%ld inputs "
      "accepted, the rest rejected as malformed) in %.2f s\n",
      target.c_str(), corpus.size(), done, mutations, accepted,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
  return 0;
}
