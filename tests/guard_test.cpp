// SPDX-License-Identifier: Apache-2.0
// Stack guard pages: a ULT that overflows its stack is reported ("stack overflow in ULT ...") and
// the process aborts, on the primary stream and on secondary ones; an unrelated segmentation
// fault is passed on to the previous (default) handler.
//
// Registered only in plain builds: under AddressSanitizer (WEFT_SANITIZE=address) the overflow may
// be caught and reported by ASan's own handler instead, and ThreadSanitizer changes signal
// delivery, so tests/CMakeLists.txt defines WEFT_TEST_SANITIZED there and these tests compile out.
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

/// In the death-test child: a runtime of `streams` streams whose stream `rank` runs a ULT (of
/// `stack` bytes, 0 for the default) that recurses until it hits its guard page.
void overflow_in_ult(int streams, int rank, std::size_t stack) {
  clean_weft_env env;
  weft::runtime rt(test_config(streams));
  weft::ult::create_on(
      *weft::execution_stream::by_rank(rank), [] { recurse(0); }, weft::ult_attributes{stack})
      .join();
}

void segfault_in_ult(int streams) {
  clean_weft_env env;
  weft::runtime rt(test_config(streams));
  weft::ult::create_on(*weft::execution_stream::by_rank(streams - 1), [] {
    int* volatile p = reinterpret_cast<int*>(16);
    *p = 1;
  }).join();
}

class GuardPageDeathTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};
INSTANTIATE_TEST_SUITE_P(, GuardPageDeathTest, ::testing::Values(1, 2, 4), streams_param_name);

TEST_P(GuardPageDeathTest, OverflowOnThePrimaryStream) {
  EXPECT_EXIT(overflow_in_ult(GetParam(), 0, 0), ::testing::KilledBySignal(SIGABRT),
              "stack overflow in ULT");
}

TEST_P(GuardPageDeathTest, OverflowOnTheLastStream) {
  EXPECT_EXIT(overflow_in_ult(GetParam(), GetParam() - 1, 0), ::testing::KilledBySignal(SIGABRT),
              "stack overflow in ULT");
}

TEST_P(GuardPageDeathTest, OverflowOfALargeStack) {
  EXPECT_EXIT(overflow_in_ult(GetParam(), GetParam() - 1, 256 * 1024),
              ::testing::KilledBySignal(SIGABRT),
              "stack overflow in ULT [0-9]+ \\(stack of 262144 bytes");
}

TEST_P(GuardPageDeathTest, UnrelatedFaultIsPassedOn) {
  // Not an overflow: the default disposition applies (killed by SIGSEGV, no overflow report).
  EXPECT_EXIT(segfault_in_ult(GetParam()), ::testing::KilledBySignal(SIGSEGV), "");
}

TEST(GuardPage, ADeepButSufficientStackIsFine) {
  clean_weft_env env;
  weft::runtime rt(test_config(2));
  int sum = 0;
  weft::ult::create(
      weft::execution_stream::primary().main_pool(),
      [&] {
        // ~100 frames of ~1 KiB in a 256 KiB stack.
        never = 100;
        sum = recurse(0);
        never = -1;
      },
      weft::ult_attributes{256 * 1024})
      .join();
  EXPECT_NE(sum, -12345);
}

#endif  // WEFT_TEST_SANITIZED

}  // namespace
