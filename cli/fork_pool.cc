#include "cli/fork_pool.h"

#include <poll.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <system_error>

namespace btsim::cli {
namespace {

// The first byte a child sends: its work's answer follows.
constexpr char kOk = 'o';
constexpr char kError = 'e';

struct Child {
  pid_t pid = -1;
  int fd = -1;  // read end of its pipe
  size_t index = 0;
  std::string bytes;
};

void WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent went away
    done += static_cast<size_t>(n);
  }
}

// In the child: never returns.
[[noreturn]] void RunChild(
    size_t index, int fd,
    const std::function<Result<std::string>(size_t)>& work) {
  std::string message;
  try {
    Result<std::string> answer = work(index);
    message =
        answer.ok()
            ? kOk + *answer
            : kError +
                  std::to_string(static_cast<int>(answer.status().code())) +
                  " " + answer.status().message();
  } catch (const std::exception& e) {
    message = kError + std::to_string(static_cast<int>(StatusCode::kInternal)) +
              " exception: " + e.what();
  }
  WriteAll(fd, message);
  _exit(0);
}

// In the parent, once the child's pipe reached end of file.
Result<std::string> Reap(Child& child) {
  int status = 0;
  while (waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    return Internal("child process killed by signal " +
                    std::to_string(WTERMSIG(status)) + " (" +
                    strsignal(WTERMSIG(status)) + ")");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || child.bytes.empty()) {
    return Internal(
        "child process exited with status " +
        std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
        " without an answer");
  }
  if (child.bytes[0] == kOk) return child.bytes.substr(1);
  // kError: "<code> <message>"
  const size_t space = child.bytes.find(' ');
  const int code = std::atoi(child.bytes.substr(1, space - 1).c_str());
  return Status(
      static_cast<StatusCode>(code),
      space == std::string::npos ? "" : child.bytes.substr(space + 1));
}

}  // namespace

int ThreadCount() {
  std::error_code ec;
  int count = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end;
       !ec && it != end; it.increment(ec)) {
    ++count;
  }
  return ec || count == 0 ? 1 : count;
}

Result<std::vector<Result<std::string>>> ForkEach(
    size_t count, int jobs,
    const std::function<Result<std::string>(size_t)>& work,
    const std::function<void(size_t)>& on_done) {
  BTSIM_CHECK(jobs >= 1);
  if (const int threads = ThreadCount(); threads > 1) {
    return FailedPrecondition("cannot fork: the process has " +
                              std::to_string(threads) + " threads");
  }
  std::vector<Result<std::string>> results(
      count, Result<std::string>(Internal("not run")));
  std::fflush(nullptr);
  std::cout.flush();
  std::cerr.flush();

  std::vector<Child> active;
  size_t next = 0;
  while (next < count || !active.empty()) {
    while (next < count && active.size() < static_cast<size_t>(jobs)) {
      const size_t index = next++;
      int fds[2];
      if (pipe(fds) != 0) {
        results[index] = Internal(std::string("pipe: ") + strerror(errno));
        if (on_done) on_done(index);
        continue;
      }
      const pid_t pid = fork();
      if (pid < 0) {
        results[index] = Internal(std::string("fork: ") + strerror(errno));
        close(fds[0]);
        close(fds[1]);
        if (on_done) on_done(index);
        continue;
      }
      if (pid == 0) {
        close(fds[0]);
        for (const Child& other : active) close(other.fd);
        RunChild(index, fds[1], work);
      }
      close(fds[1]);
      active.push_back(Child{pid, fds[0], index, {}});
    }
    if (active.empty()) continue;

    std::vector<pollfd> polls;
    for (const Child& child : active) {
      polls.push_back(pollfd{child.fd, POLLIN, 0});
    }
    if (poll(polls.data(), polls.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return Internal(std::string("poll: ") + strerror(errno));
    }
    // Backwards, so that erasing keeps the earlier indexes valid.
    for (size_t p = polls.size(); p-- > 0;) {
      if (polls[p].revents == 0) continue;
      Child& child = active[p];
      char buffer[4096];
      const ssize_t n = read(child.fd, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        child.bytes.append(buffer, static_cast<size_t>(n));
        continue;
      }
      close(child.fd);
      results[child.index] = Reap(child);
      const size_t index = child.index;
      active.erase(active.begin() + static_cast<std::ptrdiff_t>(p));
      if (on_done) on_done(index);
    }
  }
  return results;
}

}  // namespace btsim::cli
