// Invariant checks. A broken invariant is a bug in btsim, never a user error:
// it prints the failed condition, the location and the crash context (the
// seed and virtual time of a simulation run, when one is registered), then
// aborts. User errors are reported with Status instead.
#ifndef BTSIM_BASE_CHECK_H_
#define BTSIM_BASE_CHECK_H_

#include <functional>
#include <string>

namespace btsim {

// Registers a function that describes the running context (seed, virtual
// time) for crash reports on the calling thread. Pass nullptr to clear.
void SetCrashContext(std::function<std::string()> describe);

[[noreturn]] void CheckFailed(const char* condition, const char* file, int line,
                              const std::string& detail);

}  // namespace btsim

#define BTSIM_CHECK(cond)                                             \
  do {                                                                \
    if (!(cond)) ::btsim::CheckFailed(#cond, __FILE__, __LINE__, ""); \
  } while (0)

#define BTSIM_CHECK_MSG(cond, detail)                                     \
  do {                                                                    \
    if (!(cond)) ::btsim::CheckFailed(#cond, __FILE__, __LINE__, detail); \
  } while (0)

#endif  // BTSIM_BASE_CHECK_H_
