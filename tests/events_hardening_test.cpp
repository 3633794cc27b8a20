// Shrink/expand requests misused: waited on from a tasklet, with out-of-range arguments, and event
// callbacks that block or register callbacks.
#include <weft/events.hpp>
#include <weft/mutex.hpp>

#include "test_support.hpp"
#include "watchdog.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;

class EventsHardeningTest : public env_test {};

// A tasklet cannot block: wait() and wait_for() throw, and the request stays usable (its lock is
// not left held, so the stream that answers it does not spin forever).
TEST_F(EventsHardeningTest, WaitingFromATaskletThrowsAndLeavesTheRequestUsable) {
  weft::init(test_config(1));
  watchdog w("a request waited on from a tasklet");
  weft::resize_request req;
  std::optional<weft::errc> from_wait, from_wait_for;
  auto t = weft::tasklet::create([&] {
    // One stream, busy with this tasklet: nobody can answer the request before we wait.
    req = weft::request_expand(1);
    from_wait = errc_of([&] { (void)req.wait(); });
    from_wait_for = errc_of([&] { (void)req.wait_for(1s); });
  });
  t.join();
  EXPECT_EQ(from_wait, weft::errc::tasklet_cannot_block) << describe(from_wait);
  EXPECT_EQ(from_wait_for, weft::errc::tasklet_cannot_block) << describe(from_wait_for);
  const weft::resize_result r = req.wait();
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.streams, 2);
  weft::finalize();
  w.disarm();
}

// Out-of-range arguments are configuration errors, named as such.
TEST_F(EventsHardeningTest, OutOfRangeArgumentsAreInvalidConfig) {
  weft::runtime rt(test_config(1));
  EXPECT_WEFT_ERRC(weft::request_shrink(0), weft::errc::invalid_config);
  EXPECT_WEFT_ERRC(weft::request_shrink(-1), weft::errc::invalid_config);
  EXPECT_WEFT_ERRC(weft::request_expand(0), weft::errc::invalid_config);
  EXPECT_WEFT_ERRC(weft::request_expand(5000), weft::errc::invalid_config);
  EXPECT_WEFT_ERRC(weft::request_stream_count(0), weft::errc::invalid_config);
  EXPECT_WEFT_ERRC(weft::request_stream_count(5000), weft::errc::invalid_config);
  EXPECT_WEFT_ERRC(weft::request_stop_stream(-1), weft::errc::invalid_config);
  EXPECT_WEFT_ERRC(weft::request_stop_stream(5000), weft::errc::invalid_config);
  EXPECT_EQ(weft::execution_stream::count(), 1);
}

}  // namespace
