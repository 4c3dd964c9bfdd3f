// Runs independent pieces of work in forked child processes, a bounded
// number at a time: the engine of `btsim sweep` (cli/sweep.h). No exec: each
// child calls the work function on its copy of the parent's memory, sends the
// returned bytes back through a pipe, and leaves with _exit (no destructors,
// no atexit handlers, no flush of inherited stdio buffers).
//
// POSIX only. The calling process must be single-threaded (fork copies only
// the calling thread, so a lock held by another thread would stay locked in
// the child); ForkEach refuses with FAILED_PRECONDITION when
// /proc/self/task shows more than one thread.
#ifndef BTSIM_CLI_FORK_POOL_H_
#define BTSIM_CLI_FORK_POOL_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "base/result.h"

namespace btsim::cli {

// Calls work(i) for every i in [0, count), each in its own child, at most
// `jobs` (>= 1) children at once, started in increasing i. Element i of the
// answer is what work(i) returned in its child; INTERNAL when the child died
// without answering (a crash: the message names the signal or exit code).
// `on_done(i)`, when set, is called in the parent as each child finishes.
// Flushes stdout and std::cout / std::cerr before the first fork.
Result<std::vector<Result<std::string>>> ForkEach(
    size_t count, int jobs,
    const std::function<Result<std::string>(size_t)>& work,
    const std::function<void(size_t)>& on_done = {});

// The number of threads of this process (1 when /proc is not available).
int ThreadCount();

}  // namespace btsim::cli

#endif  // BTSIM_CLI_FORK_POOL_H_
