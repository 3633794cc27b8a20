// SPDX-License-Identifier: Apache-2.0
// Idle streams: the park limit (config::park_limit_ms) is a safety net against missed wake-ups,
// and a stream that keeps finding nothing to do stretches it, so that many idle streams do not
// cost CPU for nothing; anything that brings work still wakes a parked stream at once.
#include <thread>

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

}  // namespace
