// SPDX-License-Identifier: Apache-2.0
// The context switch (runtime/src/platform/jump.hpp): what a switch keeps for each ULT besides its
// registers. Every ULT has its own floating-point control words (the x87 control word and
// MXCSR: rounding mode, flush-to-zero), as with Boost.Context's jump_fcontext. A mode a ULT sets
// stays with it across every kind of switch it makes and never reaches the contexts it switches
// to: the other ULTs and the scheduler.
#include <cfenv>
#include <functional>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "test_support.hpp"
#include "weft/schedulers/basic_scheduler.hpp"
#include "weft/schedulers/fifo_pool.hpp"

namespace {

using weft_test::scoped_stream;
using weft_test::streams_test;

/// The name of an FE_* rounding mode.
const char* name_of(int mode) {
  switch (mode) {
    case FE_TONEAREST:
      return "nearest";
    case FE_DOWNWARD:
      return "down";
    case FE_UPWARD:
      return "up";
    case FE_TOWARDZERO:
      return "zero";
  }
  return "unknown";
}

/// The rounding mode as both control words see it: fegetround() reads the x87 word (glibc), and
/// on x86-64 MXCSR's rounding field is compared with it. "mixed" when the two disagree.
std::string rounding_mode() {
  const int x87 = std::fegetround();
#if defined(__x86_64__)
  // MXCSR's RC field (bits 13-14) uses the x87 encoding (bits 10-11), 3 bits higher.
  const int sse = static_cast<int>(_mm_getcsr() & 0x6000u) >> 3;
  if (sse != x87) return "mixed";
#endif
  return name_of(x87);
}

/// Sets `mode` (both control words), then makes `rounds` switches with `do_switch` and records
/// in `seen` the mode it finds after each.
void keep_mode(int mode, int rounds, const std::function<void()>& do_switch,
               std::vector<std::string>& seen) {
  std::fesetround(mode);
  for (int i = 0; i < rounds; ++i) {
    do_switch();
    seen.push_back(rounding_mode());
  }
  // Leave the stack's next user the default mode (a new ULT's initial mode is not specified).
  std::fesetround(FE_TONEAREST);
}

using ContextTest = streams_test;

/// Checks what two ULTs, one rounding up and one down, recorded after each of `rounds` switches,
/// and that the caller (the primary ULT, rounding toward zero) kept its mode; then restores the
/// caller's default mode.
void expect_own_modes(const std::vector<std::string>& up, const std::vector<std::string>& down,
                      int rounds) {
  EXPECT_EQ(rounding_mode(), "zero");
  std::fesetround(FE_TONEAREST);
  EXPECT_EQ(up, std::vector<std::string>(static_cast<std::size_t>(rounds), "up"));
  EXPECT_EQ(down, std::vector<std::string>(static_cast<std::size_t>(rounds), "down"));
}

/// Runs two ULTs in one pool, one rounding up and one down, that interleave `rounds` times
/// through `do_switch`; checks that each found its own mode after every switch, and that the
/// caller's mode (the primary ULT's, rounding toward zero) is untouched.
void expect_modes_kept(weft::pool& pool, const std::function<void()>& do_switch) {
  constexpr int kRounds = 50;
  std::vector<std::string> up, down;
  std::fesetround(FE_TOWARDZERO);
  weft::ult a = weft::ult::create(pool, [&] { keep_mode(FE_UPWARD, kRounds, do_switch, up); });
  weft::ult b = weft::ult::create(pool, [&] { keep_mode(FE_DOWNWARD, kRounds, do_switch, down); });
  a.join();
  b.join();
  expect_own_modes(up, down, kRounds);
}

TEST_P(ContextTest, RoundingModeStaysWithAUltThatYieldsDirectly) {
  // The primary's basic scheduler allows direct yields: each yield jumps ULT to ULT.
  expect_modes_kept(weft::execution_stream::primary().main_pool(),
                    [] { weft::this_unit::yield(); });
}

TEST_P(ContextTest, RoundingModeStaysWithAUltThatYieldsThroughItsScheduler) {
  // A loop-writing scheduler: every yield goes ULT -> scheduler -> ULT.
  auto sched =
      weft_test::stats_scheduler::with_new_pool(std::make_shared<weft_test::sched_stats>());
  std::shared_ptr<weft::pool> pool = sched->pools().front();
  scoped_stream s(std::move(sched));
  expect_modes_kept(*pool, [] { weft::this_unit::yield(); });
}

TEST_P(ContextTest, RoundingModeStaysWithAUltThatHandsOffWithYieldTo) {
  // Each ULT hands the stream to the other; `peer` is filled in before either runs.
  weft::work_unit* peer[2] = {nullptr, nullptr};
  constexpr int kRounds = 50;
  std::vector<std::string> up, down;
  int handoffs = 0;
  weft::pool& pool = weft::execution_stream::primary().main_pool();
  std::fesetround(FE_TOWARDZERO);
  weft::ult a = weft::ult::create(pool, [&] {
    keep_mode(
        FE_UPWARD, kRounds, [&] { handoffs += weft::this_unit::yield_to(peer[1]); }, up);
  });
  weft::ult b = weft::ult::create(pool, [&] {
    keep_mode(
        FE_DOWNWARD, kRounds, [&] { handoffs += weft::this_unit::yield_to(peer[0]); }, down);
  });
  peer[0] = a.native_handle();
  peer[1] = b.native_handle();
  a.join();
  b.join();
  expect_own_modes(up, down, kRounds);
  // Most switches were direct hand-offs (the last ones find the peer finished and fall back to
  // yield, whose path the other tests cover).
  EXPECT_GE(handoffs, kRounds);
}

TEST_P(ContextTest, RoundingModeStaysWithAUltThatBlocksAndIsWoken) {
  // A suspends itself; B resumes it each time, so A's switches are suspensions and wake-ups.
  constexpr int kRounds = 50;
  std::vector<std::string> up, down;
  weft::pool& pool = weft::execution_stream::primary().main_pool();
  std::fesetround(FE_TOWARDZERO);
  weft::ult a = weft::ult::create(pool, [&] {
    keep_mode(
        FE_UPWARD, kRounds, [] { weft::this_unit::suspend(); }, up);
  });
  weft::ult b = weft::ult::create(pool, [&] {
    keep_mode(
        FE_DOWNWARD, kRounds,
        [&] {
          while (a.state() != weft::unit_state::blocked) weft::this_unit::yield();
          a.resume();
          weft::this_unit::yield();
        },
        down);
  });
  // b first: joining a takes its descriptor out of the handle that b reads.
  b.join();
  a.join();
  expect_own_modes(up, down, kRounds);
}

TEST_P(ContextTest, RoundingModeMovesWithAMigratingUlt) {
  // The ULT moves between every stream; the streams' own threads keep their default mode.
  constexpr int kRounds = 20;
  std::vector<std::string> seen;
  std::fesetround(FE_TOWARDZERO);
  weft::ult u = weft::ult::create([&] {
    std::fesetround(FE_UPWARD);
    for (int i = 0; i < kRounds; ++i) {
      weft::this_unit::migrate_to(stream(i % streams()));
      seen.push_back(rounding_mode());
    }
    std::fesetround(FE_TONEAREST);
  });
  u.join();
  EXPECT_EQ(rounding_mode(), "zero");
  std::fesetround(FE_TONEAREST);
  EXPECT_EQ(seen, std::vector<std::string>(kRounds, "up"));
  // Every stream's scheduler still rounds to nearest: a tasklet runs on its stack.
  for (int r = 0; r < streams(); ++r) {
    std::string mode;
    weft::tasklet::create(stream(r).main_pool(), [&] { mode = rounding_mode(); }).join();
    EXPECT_EQ(mode, "nearest") << "stream " << r;
  }
}

WEFT_INSTANTIATE_STREAMS(ContextTest);

}  // namespace
