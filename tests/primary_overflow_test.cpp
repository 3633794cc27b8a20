// SPDX-License-Identifier: Apache-2.0
// An overflow of the primary ULT's stack (the primary thread's own), or of a joined child running
// on it, is reported as a stack overflow whatever ulimit -s says: 3 GiB and 4 GiB (larger than
// a stack_region describes) and unlimited (Linux then places the stack below a legacy, bottom-up
// mmap layout, and it grows until the address space runs out: here under ulimit -v). Each case
// re-executes this program with the limits set, so that the kernel lays out the stack for them.
// The recursion takes 1 MiB frames touching one page each (the target is built without stack
// clash probes), so a 4 GiB stack overflows in a few thousand calls and a few MiB of memory.
// Compiled out under the sanitizers, as guard_test.cpp is (ASan reports overflows itself).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "test_support.hpp"

namespace {

using namespace weft_test;

#ifndef WEFT_TEST_SANITIZED

volatile int never = -1;

[[gnu::noinline]] int recurse_sparsely(int depth) {
  volatile char frame[1 << 20];
  frame[0] = static_cast<char>(depth);
  if (depth == never) return frame[0];
  return recurse_sparsely(depth + 1) + frame[0];
}

/// The part run in the re-executed child: overflow on the primary's stack, in the primary ULT
/// itself ("primary") or in a joined child ULT running on it ("child").
[[noreturn]] void overflow(const std::string& where) {
  clean_weft_env env;
  // The default scheduler: a join takes the newest unit of the pool the stream owns, and runs
  // the child on the joiner's stack.
  weft::runtime rt(default_config(1));
  if (where == "child") {
    weft::ult::create([] { recurse_sparsely(0); }).join();
  } else {
    recurse_sparsely(0);
  }
  std::_Exit(3);  // unreachable: the recursion does not return
}

struct outcome {
  int status = 0;
  std::string err;
};

/// Re-executes this test binary under the given limits (bytes; RLIM_INFINITY for unlimited) to
/// overflow `where`, and returns how it ended and what it wrote to stderr.
outcome run_child(const char* where, rlim_t stack_limit, rlim_t as_limit) {
  char path[] = "/tmp/weft-primary-overflow-XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) return {};
  ::unlink(path);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fd, STDERR_FILENO);
    rlimit rs{stack_limit, stack_limit};
    rlimit cur{};
    ::getrlimit(RLIMIT_STACK, &cur);
    if (cur.rlim_max != RLIM_INFINITY &&
        (stack_limit == RLIM_INFINITY || stack_limit > cur.rlim_max))
      std::_Exit(77);  // the hard limit forbids it
    rs.rlim_max = cur.rlim_max;
    if (::setrlimit(RLIMIT_STACK, &rs) != 0) std::_Exit(77);
    if (as_limit != RLIM_INFINITY) {
      rlimit ra{as_limit, as_limit};
      if (::setrlimit(RLIMIT_AS, &ra) != 0) std::_Exit(77);
    }
    ::setenv("WEFT_TEST_PRIMARY_OVERFLOW", where, 1);
    const std::string filter = "--gtest_filter=PrimaryOverflowChild.Run";
    char* const argv[] = {const_cast<char*>("weft_primary_overflow_test"),
                          const_cast<char*>(filter.c_str()), nullptr};
    ::execv("/proc/self/exe", argv);
    std::_Exit(78);
  }
  outcome o;
  ::waitpid(pid, &o.status, 0);
  char buf[4096];
  ::lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    o.err.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return o;
}

TEST(PrimaryOverflowChild, Run) {
  const char* where = std::getenv("WEFT_TEST_PRIMARY_OVERFLOW");
  if (!where) GTEST_SKIP() << "run by the PrimaryOverflow tests in a child process";
  overflow(where);
}

struct limits {
  const char* name;
  rlim_t stack;
  rlim_t as;
};

void PrintTo(const limits& l, std::ostream* os) {
  *os << l.name;
}

class PrimaryOverflow : public ::testing::TestWithParam<limits> {};

constexpr rlim_t gib = rlim_t{1} << 30;
INSTANTIATE_TEST_SUITE_P(, PrimaryOverflow,
                         ::testing::Values(limits{"stack8MiB", rlim_t{8} << 20, RLIM_INFINITY},
                                           limits{"stack3GiB", 3 * gib, RLIM_INFINITY},
                                           limits{"stack4GiB", 4 * gib, RLIM_INFINITY},
                                           limits{"unlimited_as8GiB", RLIM_INFINITY, 8 * gib}),
                         [](const auto& info) { return std::string(info.param.name); });

void expect_reported(const outcome& o, const char* message) {
  if (WIFEXITED(o.status) && WEXITSTATUS(o.status) == 77) GTEST_SKIP() << "cannot set the limits";
  ASSERT_TRUE(WIFSIGNALED(o.status)) << "status " << o.status << ", stderr:\n" << o.err;
  EXPECT_EQ(WTERMSIG(o.status), SIGABRT) << o.err;
  EXPECT_NE(o.err.find(message), std::string::npos) << o.err;
}

TEST_P(PrimaryOverflow, InThePrimaryUlt) {
  const outcome o = run_child("primary", GetParam().stack, GetParam().as);
  expect_reported(o, "weft: stack overflow in the primary ULT (the primary thread's stack of ");
}

TEST_P(PrimaryOverflow, InAChildRunningOnThePrimarysStack) {
  const outcome o = run_child("child", GetParam().stack, GetParam().as);
  expect_reported(o, "running on its joiner's stack (the primary thread's, ");
}

#endif  // WEFT_TEST_SANITIZED

}  // namespace
