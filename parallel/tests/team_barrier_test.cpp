// SPDX-License-Identifier: Apache-2.0
// The team barrier on 1, 2 and 4 streams: rounds order the parties' writes, the last arriver's
// hook runs once per round, abort() releases the waiters (and reset() re-arms the barrier), and
// a waiter told to stop spinning blocks and is woken by the last arrival.
#include <weft/parallel/team_barrier.hpp>

#include <weft/weft.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <vector>

namespace wp = weft::parallel;

namespace {

class parallel_team_barrier : public ::testing::TestWithParam<int> {
 protected:
  weft::config cfg() const {
    weft::config c;
    c.num_streams = GetParam();
    return c;
  }
};

// Runs body(w) in `parties` ULTs spread over the streams and joins them.
template <class Body>
void run_team(int parties, Body body) {
  std::vector<weft::ult> us;
  us.reserve(static_cast<std::size_t>(parties));
  const int streams = weft::execution_stream::count();
  for (int w = 0; w < parties; ++w) {
    us.push_back(weft::ult::create_on(*weft::execution_stream::by_rank(w % streams),
                                      [&body, w] { body(w); }));
  }
  for (auto& u : us) u.join();
}

}  // namespace

TEST_P(parallel_team_barrier, rounds_order_writes) {
  weft::runtime rt(cfg());
  constexpr int parties = 4, rounds = 50;
  for (long spin : {0l, 2000l}) {
    wp::team_barrier bar(parties);
    std::atomic<int> count{0};
    int last_runs = 0;  // written by the last arriver only, read after the round
    std::atomic<int> bad{0};
    run_team(parties, [&](int) {
      for (int r = 0; r < rounds; ++r) {
        count.fetch_add(1, std::memory_order_relaxed);
        if (!bar.arrive_and_wait(spin, [&] { ++last_runs; })) bad.fetch_add(1);
        if (count.load(std::memory_order_relaxed) < parties * (r + 1)) bad.fetch_add(1);
        if (last_runs < r + 1) bad.fetch_add(1);
        if (!bar.arrive_and_wait(spin)) bad.fetch_add(1);  // nobody starts r + 1 early
      }
    });
    EXPECT_EQ(bad.load(), 0) << "spin " << spin;
    EXPECT_EQ(count.load(), parties * rounds);
    EXPECT_EQ(last_runs, rounds);
  }
}

TEST_P(parallel_team_barrier, abort_releases_waiters_until_reset) {
  weft::runtime rt(cfg());
  constexpr int parties = 4;
  wp::team_barrier bar(parties);
  std::atomic<int> released{0};
  // Three of four parties arrive; the round can only end through abort().
  std::vector<weft::ult> us;
  const int streams = weft::execution_stream::count();
  for (int w = 1; w < parties; ++w) {
    us.push_back(weft::ult::create_on(*weft::execution_stream::by_rank(w % streams), [&] {
      if (!bar.arrive_and_wait(1000)) released.fetch_add(1);
    }));
  }
  weft::this_unit::yield();
  bar.abort();
  for (auto& u : us) u.join();
  EXPECT_EQ(released.load(), parties - 1);
  EXPECT_TRUE(bar.aborted());
  EXPECT_FALSE(bar.arrive_and_wait(0));  // later arrivals return at once
  bar.reset();
  EXPECT_FALSE(bar.aborted());
  std::atomic<int> passed{0};
  run_team(parties, [&](int) {
    if (bar.arrive_and_wait(0)) passed.fetch_add(1);
  });
  EXPECT_EQ(passed.load(), parties);
}

TEST_P(parallel_team_barrier, throwing_hook_aborts_the_round) {
  weft::runtime rt(cfg());
  constexpr int parties = 3;
  wp::team_barrier bar(parties);
  std::atomic<int> threw{0}, released{0};
  run_team(parties, [&](int) {
    try {
      if (!bar.arrive_and_wait(0, [] { throw 42; })) released.fetch_add(1);
    } catch (int) {
      threw.fetch_add(1);
    }
  });
  EXPECT_EQ(threw.load(), 1);
  EXPECT_EQ(released.load(), parties - 1);
}

TEST_P(parallel_team_barrier, a_waiter_told_to_stop_spinning_blocks) {
  weft::runtime rt(cfg());
  for (int round = 0; round < 20; ++round) {
    wp::team_barrier bar(2);
    std::atomic<int> asked{0};
    const int last = weft::execution_stream::count() - 1;
    // A spin of 2^40 rounds would not end by itself: the waiter blocks because it was told to.
    weft::ult waiter = weft::ult::create_on(*weft::execution_stream::by_rank(last), [&] {
      EXPECT_TRUE(bar.arrive_and_wait(
          1l << 40, [] {},
          [&] {
            asked.fetch_add(1, std::memory_order_relaxed);
            return true;
          }));
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (waiter.state() != weft::unit_state::blocked &&
           std::chrono::steady_clock::now() < deadline) {
      weft::this_unit::yield();
    }
    ASSERT_EQ(waiter.state(), weft::unit_state::blocked) << "round " << round;
    EXPECT_EQ(asked.load(), 1);  // asked once, then blocked
    // The last arrival finds the sleeper and wakes it (no lost wake-up).
    EXPECT_TRUE(bar.arrive_and_wait(0));
    waiter.join();
  }
}

INSTANTIATE_TEST_SUITE_P(streams, parallel_team_barrier, ::testing::Values(1, 2, 4));
