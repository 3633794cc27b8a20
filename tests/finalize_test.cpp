// SPDX-License-Identifier: Apache-2.0
// finalize() with units that will not finish by themselves: timed sleepers and timed waiters are
// abandoned like blocked units, so finalize returns once the queued work is done.
#include <weft/condition_variable.hpp>
#include <weft/mutex.hpp>

#include "test_support.hpp"
#include "watchdog.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;

class FinalizeTest : public env_test {};

// Without stream::has_to_stop ignoring pending timers once the runtime is finalizing, finalize
// waits an hour here (the watchdog fails the test after 30 s).
TEST_F(FinalizeTest, TimedSleepersAndWaitersDoNotHoldFinalizeUp) {
  weft::init(test_config(2));
  std::atomic<int> asleep{0}, finished{0};
  weft::mutex m;
  weft::condition_variable cv;
  // On every stream: a one-hour sleep and a one-hour timed wait nobody notifies, detached (their
  // handles would otherwise outlive the runtime), next to ordinary queued work.
  for (int i = 0; i < 2; ++i) {
    auto& s = *weft::execution_stream::by_rank(i);
    weft::ult::create_on(s, [&] {
      asleep.fetch_add(1);
      weft::this_unit::sleep_for(1h);
    }).detach();
    weft::ult::create_on(s, [&] {
      std::unique_lock lock(m);
      asleep.fetch_add(1);
      (void)cv.wait_for(lock, 1h);
    }).detach();
    for (int k = 0; k < 10; ++k) weft::ult::create_on(s, [&] { finished.fetch_add(1); }).detach();
  }
  ASSERT_TRUE(wait_until([&] { return asleep.load() == 4; }));
  watchdog w("finalize() with one-hour sleepers");
  weft::finalize();
  w.disarm();
  EXPECT_EQ(finished.load(), 20);  // queued work still runs to completion
}

}  // namespace
