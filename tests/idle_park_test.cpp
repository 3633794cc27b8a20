// SPDX-License-Identifier: Apache-2.0
// Idle streams: the park limit (config::park_limit_ms) is a safety net against missed wake-ups,
// and a stream that keeps finding nothing to do stretches it, then sleeps deep, so that many idle
// streams do not cost CPU for nothing; a stream woken for nothing looks once and parks again
// rather than spinning; anything that brings work still wakes a parked stream at once.
#include <weft/stats.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;

class IdleParkTest : public env_test {};

// With a 1 ms limit and no stretching, an idle stream parks about 1,000 times a second (on a
// loaded machine fewer, never more); stretched (1, 2, 4, ... ms) it parks about 10 times. The
// bound fails the unstretched behaviour by a wide margin and cannot fail from load.
TEST_F(IdleParkTest, IdleStreamStretchesItsParkLimit) {
  weft::config c = test_config(2);
  c.scheduler = "basic_wait";  // parks when idle (basic polls with sched_yield)
  c.park_limit_ms = 1;
  weft::init(c);
  weft::execution_stream& s = *weft::execution_stream::by_rank(1);
  ASSERT_TRUE(wait_until([&] { return s.is_parked(); }));
  const std::uint64_t before = s.times_parked();
  std::this_thread::sleep_for(1s);
  const std::uint64_t parks = s.times_parked() - before;
  EXPECT_LT(parks, 60u) << "an idle stream woke every park_limit_ms";
  EXPECT_GE(parks, 1u);
  weft::finalize();
}

/// Polls `pred` from the primary thread without entering the runtime (a yield of the primary ULT
/// would touch its pool and could wake parked streams), for up to `limit`.
template <class Pred>
bool poll_until(Pred&& pred, std::chrono::seconds limit = hang_guard) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return pred();
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

/// A randws runtime of 3 streams whose idle streams stretch a 1 ms park limit: parks 1 to 10
/// last 1, 2, 4, ..., 512 ms, the 11th is deep.
weft::config idle_randws_config() {
  weft::config c = default_config(3);
  c.scheduler = "randws";
  c.park_limit_ms = 1;
  return c;
}
constexpr std::uint64_t parks_to_deep = 11;

bool secondaries_parked_at_least(std::uint64_t n) {
  for (int r = 1; r < 3; ++r) {
    weft::execution_stream* s = weft::execution_stream::by_rank(r);
    if (!s->is_parked() || s->times_parked() < n) return false;
  }
  return true;
}

// An idle work-stealing stream that wakes (its park ran out) and finds nothing looks once and
// parks again. Spinning idle_spin rounds after each such wake-up, each round a sweep over every
// other stream's pool, made 512 idle streams cost 40% of a core. With idle_spin 2,000, the
// spinning behaviour makes at least 2,000 sweeps per park; a look per park stays within the
// spin after start (allowing for three) plus two sweeps per park.
TEST_F(IdleParkTest, IdleStealingStreamLooksOncePerWakeUp) {
  weft::config c = idle_randws_config();
  c.idle_spin = 2000;
  weft::init(c);
  ASSERT_TRUE(poll_until([] { return secondaries_parked_at_least(8); }));
  const weft::runtime_stats st = weft::stats();
  for (int r = 1; r < 3; ++r) {
    const weft::stream_stats& s = st.streams[static_cast<std::size_t>(r)];
    const std::uint64_t victims = 2;
    EXPECT_GE(s.parks, 8u);
    EXPECT_LE(s.steal_attempts, victims * (3 * c.idle_spin + 2 * s.parks))
        << "stream " << r << ": " << s.parks << " parks";
  }
  weft::finalize();
}

// Once its stretched limit reaches its cap, an idle stream of a policy that answers hooks sleeps
// deep: it does not wake once a second any more (the 11th park lasts past the 1.5 s watched,
// where a 1 s cap parks at least once more), yet a push into its pool still wakes it at once.
TEST_F(IdleParkTest, DeepParkedStreamSleepsUntilWorkArrives) {
  weft::init(idle_randws_config());
  ASSERT_TRUE(poll_until([] { return secondaries_parked_at_least(parks_to_deep); }));
  std::vector<std::uint64_t> before;
  for (int r = 1; r < 3; ++r) before.push_back(weft::execution_stream::by_rank(r)->times_parked());
  std::this_thread::sleep_for(1500ms);
  for (int r = 1; r < 3; ++r) {
    weft::execution_stream* s = weft::execution_stream::by_rank(r);
    EXPECT_EQ(s->times_parked(), before[static_cast<std::size_t>(r - 1)])
        << "deep-parked stream " << r << " woke with nothing to do";
    EXPECT_TRUE(s->is_parked());
  }
  // Pushes from an external thread while the primary thread waits for it outside the runtime:
  // only the deep-parked secondaries can run the ULTs.
  std::atomic<int> ran{0};
  std::thread pusher([&] {
    for (int r = 1; r < 3; ++r) {
      weft::ult u = weft::ult::create_on(*weft::execution_stream::by_rank(r), [&] { ++ran; });
      u.join();
    }
  });
  pusher.join();
  EXPECT_EQ(ran.load(), 2);
  weft::finalize();
}

// A new work-stealing stream wakes the peers that sleep deep, so that they add its pool (which
// they would otherwise not watch until they woke for another reason): each parks once more,
// well before the 30 s a deep park lasts at most.
TEST_F(IdleParkTest, NewStealingStreamWakesDeepParkedPeers) {
  weft::init(idle_randws_config());
  ASSERT_TRUE(poll_until([] { return secondaries_parked_at_least(parks_to_deep); }));
  std::vector<std::uint64_t> before;
  for (int r = 1; r < 3; ++r) before.push_back(weft::execution_stream::by_rank(r)->times_parked());
  weft::execution_stream& added = weft::execution_stream::create();
  for (int r = 1; r < 3; ++r) {
    weft::execution_stream* s = weft::execution_stream::by_rank(r);
    const std::uint64_t was = before[static_cast<std::size_t>(r - 1)];
    EXPECT_TRUE(poll_until([&] { return s->times_parked() > was; }, 10s))
        << "deep-parked stream " << r << " was not woken by a new peer";
  }
  (void)added;
  weft::finalize();
}

}  // namespace
