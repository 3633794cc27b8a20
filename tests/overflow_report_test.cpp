// SPDX-License-Identifier: Apache-2.0
// Stack overflows that weft reports where a bare SIGSEGV came before: in a tasklet (on the
// scheduler stack of the primary or of a secondary stream), in a ULT with a canary stack instead
// of a guard page (WEFT_STACK_GUARDS=0, or past the guard budget), and on the primary ULT's own
// stack. Compiled out under the sanitizers, as guard_test.cpp is (ASan reports overflows itself).
#include <sys/resource.h>

#include <csignal>

#include "test_support.hpp"

namespace {

using namespace weft_test;

#ifndef WEFT_TEST_SANITIZED

volatile int never = -1;

[[gnu::noinline]] int recurse(int depth) {
  volatile char pad[1024];
  pad[0] = static_cast<char>(depth);
  pad[sizeof pad - 1] = pad[0];
  if (depth == never) return pad[0];
  return recurse(depth + 1) + pad[sizeof pad - 1];
}

void overflow_in_tasklet(int streams, int rank) {
  clean_weft_env env;
  weft::runtime rt(test_config(streams));
  weft::tasklet::create_on(*weft::execution_stream::by_rank(rank), [] { recurse(0); }).join();
}

void overflow_in_canary_ult(int streams) {
  clean_weft_env env;
  ::setenv("WEFT_STACK_GUARDS", "0", 1);
  weft::runtime rt(test_config(streams));
  // Neighbours in the arena, so that the overflow runs through mapped memory first.
  std::vector<weft::ult> others;
  for (int i = 0; i < 8; ++i) others.push_back(weft::ult::create([] {}));
  for (auto& u : others) u.join();
  weft::ult::create_on(*weft::execution_stream::by_rank(streams - 1), [] { recurse(0); }).join();
}

void overflow_in_primary_ult() {
  clean_weft_env env;
  weft::runtime rt(test_config(1));
  recurse(0);
}

class OverflowReportDeathTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};
INSTANTIATE_TEST_SUITE_P(, OverflowReportDeathTest, ::testing::Values(1, 2), streams_param_name);

TEST_P(OverflowReportDeathTest, InATaskletOnThePrimaryStream) {
  EXPECT_EXIT(overflow_in_tasklet(GetParam(), 0), ::testing::KilledBySignal(SIGABRT),
              "stack overflow in tasklet [0-9]+, on the scheduler stack of execution stream 0");
}

TEST_P(OverflowReportDeathTest, InATaskletOnTheLastStream) {
  EXPECT_EXIT(overflow_in_tasklet(GetParam(), GetParam() - 1), ::testing::KilledBySignal(SIGABRT),
              "stack overflow in tasklet [0-9]+, on the scheduler stack of execution stream");
}

TEST_P(OverflowReportDeathTest, InAUltWithACanaryStack) {
  EXPECT_EXIT(overflow_in_canary_ult(GetParam()), ::testing::KilledBySignal(SIGABRT),
              "stack overflow in ULT [0-9]+");
}

TEST(OverflowReportDeathTest1, OnThePrimaryUltsOwnStack) {
  rlimit rl{};
  ASSERT_EQ(::getrlimit(RLIMIT_STACK, &rl), 0);
  if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (std::size_t{64} << 20))
    GTEST_SKIP() << "the stack limit is too large to overflow quickly (ulimit -s)";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(overflow_in_primary_ult(), ::testing::KilledBySignal(SIGABRT),
              "stack overflow in the primary ULT");
}

#endif  // WEFT_TEST_SANITIZED

}  // namespace
