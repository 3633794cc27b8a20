// SPDX-License-Identifier: Apache-2.0
// Checked invariants (runtime/src/platform/assert.hpp): in a build with WEFT_DEBUG_ASSERTS a
// violated invariant is reported (what, file:line) and the process aborts; the sanitizer and debug
// configurations run this suite with the checks on.
#include <gtest/gtest.h>

#include <memory>

#include "platform/assert.hpp"
#include "weft/rwlock.hpp"
#include "weft/schedulers/fifo_pool.hpp"
#include "weft/schedulers/lifo_pool.hpp"
#include "weft/work_unit.hpp"

namespace {

constexpr const char* skip_reason =
    "invariant checks are compiled out of this build (WEFT_DEBUG_ASSERTS=OFF, the release "
    "configuration): a violation is not detected here, which is the point of release builds";

class InvariantDeathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!weft::detail::asserts_enabled) GTEST_SKIP() << skip_reason;
    // The checks may fire on any thread: re-execute the binary for each death rather than fork
    // a process that has threads.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
};

TEST_F(InvariantDeathTest, ReportNamesTheInvariantAndWhereItWasChecked) {
  EXPECT_DEATH(weft::detail::assert_invariant([] { return false; }, "invariant 0: a probe"),
               "weft: invariant violated: invariant 0: a probe\n  checked at "
               ".*invariant_test\\.cpp:[0-9]+");
}

TEST_F(InvariantDeathTest, HoldingInvariantIsSilent) {
  int calls = 0;
  weft::detail::assert_invariant(
      [&] {
        ++calls;
        return true;
      },
      "invariant 0: holds");
  EXPECT_EQ(calls, 1);
}

// A scheduler bug the checks catch: the same unit queued twice in one pool (which would corrupt
// the pool's list and run the unit twice).
TEST_F(InvariantDeathTest, DoublePushIntoAPoolIsReported) {
  for (weft::access_mode mode : {weft::access_mode::priv, weft::access_mode::mpmc}) {
    SCOPED_TRACE(static_cast<int>(mode));
    EXPECT_DEATH(
        {
          auto fifo = weft::make_fifo_pool(mode);
          weft::work_unit u{};
          fifo->push(&u);
          fifo->push(&u);
        },
        "invariant violated: invariant 2: push of a unit that is already queued");
  }
  EXPECT_DEATH(
      {
        auto lifo = weft::make_lifo_pool(weft::access_mode::mpmc);
        weft::work_unit u{};
        lifo->push(&u);
        lifo->push(&u);
      },
      "invariant violated: invariant 2: push of a unit that is already queued");
}

TEST_F(InvariantDeathTest, UnlockOfAnRwlockNobodyHoldsIsReported) {
  EXPECT_DEATH(
      {
        weft::rwlock l;
        l.unlock_shared();
      },
      "invariant violated: rwlock: unlock_shared\\(\\) with no reader");
}

// The same operations used correctly trip nothing (in every build).
TEST(Invariant, CorrectUseTripsNoCheck) {
  for (weft::access_mode mode : {weft::access_mode::priv, weft::access_mode::mpmc}) {
    auto fifo = weft::make_fifo_pool(mode);
    weft::work_unit a{}, b{};
    fifo->push(&a);
    fifo->push(&b);
    EXPECT_EQ(fifo->size(), 2u);
    EXPECT_EQ(fifo->pop(), &a);
    fifo->push(&a);  // out and back in: not a double push
    EXPECT_EQ(fifo->pop(), &b);
    EXPECT_EQ(fifo->pop(), &a);
    EXPECT_EQ(fifo->pop(), nullptr);
  }
  weft::rwlock l;
  l.lock_shared();
  l.lock_shared();
  l.unlock_shared();
  l.unlock_shared();
  l.lock();
  l.unlock();
}

}  // namespace
