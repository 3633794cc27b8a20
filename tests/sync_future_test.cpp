// SPDX-License-Identifier: Apache-2.0
// future/promise, eventual and barrier, from ULTs, tasklets and external threads, on 1, 2 and 4
// streams.
#include <weft/barrier.hpp>
#include <weft/eventual.hpp>
#include <weft/future.hpp>

#include "test_support.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;

class SyncFutureTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(SyncFutureTest);

template <class F>
std::optional<std::future_errc> future_errc_of(F&& f) {
  try {
    f();
  } catch (const std::future_error& e) {
    return static_cast<std::future_errc>(e.code().value());
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// future / promise

TEST_P(SyncFutureTest, ValuesCrossStreamsAndThreads) {
  for (int r = 0; r < streams(); ++r) {
    // Consumer ULT on stream r, producer ULT on the last stream.
    weft::promise<std::string> p;
    weft::future<std::string> f = p.get_future();
    std::string got;
    weft::ult consumer = weft::ult::create_on(stream(r), [&] { got = f.get(); });
    weft::ult producer = weft::ult::create_on(last_stream(), [&] { p.set_value("hello"); });
    consumer.join();
    producer.join();
    EXPECT_EQ(got, "hello");
    EXPECT_FALSE(f.valid());
  }
  // An external thread consumes, a ULT produces a move-only value.
  weft::promise<std::unique_ptr<int>> p;
  auto f = p.get_future();
  std::unique_ptr<int> got;
  std::thread t([&] { got = f.get(); });
  weft::ult::create_on(last_stream(), [&] { p.set_value(std::make_unique<int>(42)); }).join();
  t.join();
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, 42);
  // void, from an external thread to a blocked ULT.
  weft::promise<void> pv;
  weft::future<void> fv = pv.get_future();
  bool returned = false;
  weft::ult waiter = weft::ult::create_on(last_stream(), [&] {
    fv.get();
    returned = true;
  });
  ASSERT_TRUE(blocked(waiter));
  std::thread([&] { pv.set_value(); }).join();
  waiter.join();
  EXPECT_TRUE(returned);
}

TEST_P(SyncFutureTest, ExceptionsAndErrors) {
  {
    weft::promise<int> p;
    auto f = p.get_future();
    weft::ult::create_on(last_stream(), [&] {
      p.set_exception(std::make_exception_ptr(std::runtime_error("bad value")));
    }).join();
    EXPECT_TRUE(f.is_ready());
    try {
      f.get();
      ADD_FAILURE() << "get() did not rethrow";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "bad value");
    }
    EXPECT_EQ(future_errc_of([&] { f.get(); }), std::future_errc::no_state);
    EXPECT_EQ(future_errc_of([&] { p.set_value(1); }), std::future_errc::promise_already_satisfied);
    EXPECT_EQ(future_errc_of([&] { p.set_exception(nullptr); }),
              std::future_errc::promise_already_satisfied);
    EXPECT_EQ(future_errc_of([&] { p.get_future(); }), std::future_errc::future_already_retrieved);
  }
  {
    // A promise destroyed unset breaks its future, waking a blocked ULT.
    std::optional<weft::promise<int>> p(std::in_place);
    auto f = p->get_future();
    std::optional<std::future_errc> err;
    weft::ult waiter =
        weft::ult::create_on(last_stream(), [&] { err = future_errc_of([&] { f.get(); }); });
    ASSERT_TRUE(blocked(waiter));
    p.reset();
    waiter.join();
    EXPECT_EQ(err, std::future_errc::broken_promise);
  }
  {
    weft::promise<int> p;
    weft::promise<int> q(std::move(p));
    EXPECT_EQ(future_errc_of([&] { p.set_value(1); }), std::future_errc::no_state);
    weft::future<int> none;
    EXPECT_FALSE(none.valid());
    EXPECT_EQ(future_errc_of([&] { none.wait(); }), std::future_errc::no_state);
    auto f = q.get_future();
    q.set_value(5);
    EXPECT_EQ(f.get(), 5);
  }
}

TEST_P(SyncFutureTest, TimedWaitsExpireAndAreWokenEarly) {
  weft::promise<int> p;
  auto f = p.get_future();
  std::atomic<int> timeouts{0};
  const auto start = std::chrono::steady_clock::now();
  weft::ult u = weft::ult::create_on(last_stream(), [&] {
    if (f.wait_for(20ms) == std::future_status::timeout) timeouts.fetch_add(1);
  });
  std::thread t([&] {
    if (f.wait_until(std::chrono::system_clock::now() + 20ms) == std::future_status::timeout)
      timeouts.fetch_add(1);
  });
  u.join();
  t.join();
  EXPECT_EQ(timeouts.load(), 2);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
  std::atomic<int> ready{0};
  weft::ult early = weft::ult::create_on(last_stream(), [&] {
    if (f.wait_for(1h) == std::future_status::ready) ready.fetch_add(1);
  });
  ASSERT_TRUE(blocked(early));
  p.set_value(3);
  early.join();
  EXPECT_EQ(ready.load(), 1);
  EXPECT_EQ(f.wait_for(0s), std::future_status::ready);
  EXPECT_EQ(f.get(), 3);
}

TEST_P(SyncFutureTest, TaskletsGetOnlyReadyFutures) {
  weft::promise<int> p;
  auto f = p.get_future();
  EXPECT_EQ(in_tasklet(last_stream(), [&] { f.get(); }), weft::errc::tasklet_cannot_block);
  EXPECT_TRUE(f.valid());  // the failed get() did not consume it
  // Setting from a tasklet is fine; then a tasklet may get().
  EXPECT_EQ(in_tasklet(last_stream(), [&] { p.set_value(9); }), std::nullopt);
  int got = 0;
  EXPECT_EQ(in_tasklet(last_stream(), [&] { got = f.get(); }), std::nullopt);
  EXPECT_EQ(got, 9);
}

TEST_P(SyncFutureTest, ManyPairsAcrossStreams) {
  const int n = static_cast<int>(scaled(2000, 40));
  std::vector<weft::promise<int>> ps(static_cast<std::size_t>(n));
  std::vector<weft::future<int>> fs;
  for (auto& p : ps) fs.push_back(p.get_future());
  std::atomic<long> sum{0};
  std::vector<weft::ult> us;
  for (int i = 0; i < n; ++i) {
    us.push_back(weft::ult::create_on(
        stream(i % streams()), [&, i] { sum.fetch_add(fs[static_cast<std::size_t>(i)].get()); }));
    us.push_back(weft::ult::create_on(stream((i + 1) % streams()),
                                      [&, i] { ps[static_cast<std::size_t>(i)].set_value(i); }));
  }
  for (auto& u : us) u.join();
  EXPECT_EQ(sum.load(), static_cast<long>(n) * (n - 1) / 2);
}

// ---------------------------------------------------------------------------------------------
// eventual

TEST_P(SyncFutureTest, EventualWakesEveryWaiterWithTheSameValue) {
  weft::eventual<std::vector<int>> ev;
  const int per_stream = 4;
  std::atomic<int> ok{0};
  std::vector<weft::ult> us;
  auto check = [&] {
    const std::vector<int>& v = ev.wait();
    if (v == std::vector<int>{1, 2, 3} && &v == &ev.get()) ok.fetch_add(1);
  };
  for (int r = 0; r < streams(); ++r)
    for (int i = 0; i < per_stream; ++i) us.push_back(weft::ult::create_on(stream(r), check));
  std::thread t(check);
  for (auto& u : us) ASSERT_TRUE(blocked(u));
  EXPECT_FALSE(ev.is_ready());
  weft::ult::create_on(last_stream(), [&] { ev.set(std::vector<int>{1, 2, 3}); }).join();
  for (auto& u : us) u.join();
  t.join();
  EXPECT_EQ(ok.load(), streams() * per_stream + 1);
  // Waiting on a set eventual does not block, even in a tasklet.
  EXPECT_EQ(in_tasklet(last_stream(), [&] { check(); }), std::nullopt);
  EXPECT_EQ(ok.load(), streams() * per_stream + 2);
}

TEST_P(SyncFutureTest, EventualResetAndErrors) {
  weft::eventual<int> ev;
  ev.set(1);
  EXPECT_WEFT_ERRC(ev.set(2), weft::errc::invalid_state);
  EXPECT_EQ(ev.wait(), 1);
  ev.reset();
  EXPECT_FALSE(ev.is_ready());
  EXPECT_EQ(in_tasklet(last_stream(), [&] { ev.wait(); }), weft::errc::tasklet_cannot_block);
  // Reset while a ULT waits is refused.
  int got = 0;
  weft::ult u = weft::ult::create_on(last_stream(), [&] { got = ev.wait(); });
  ASSERT_TRUE(blocked(u));
  EXPECT_WEFT_ERRC(ev.reset(), weft::errc::invalid_state);
  ev.set(7);
  u.join();
  EXPECT_EQ(got, 7);
  // Many rounds of set / wait / reset between two ULTs.
  weft::eventual<void> ping, pong;
  const int rounds = static_cast<int>(scaled(500, 20));
  weft::ult a = weft::ult::create_on(stream(0), [&] {
    for (int i = 0; i < rounds; ++i) {
      ping.set();
      pong.wait();
      pong.reset();
    }
  });
  weft::ult b = weft::ult::create_on(last_stream(), [&] {
    for (int i = 0; i < rounds; ++i) {
      ping.wait();
      ping.reset();
      pong.set();
    }
  });
  a.join();
  b.join();
  EXPECT_FALSE(ping.is_ready());
}

TEST_P(SyncFutureTest, EventualTimedWaits) {
  weft::eventual<void> ev;
  std::atomic<int> timeouts{0};
  const auto start = std::chrono::steady_clock::now();
  weft::ult u = weft::ult::create_on(last_stream(), [&] {
    if (!ev.wait_for(20ms)) timeouts.fetch_add(1);
  });
  std::thread t([&] {
    if (!ev.wait_until(std::chrono::steady_clock::now() + 20ms)) timeouts.fetch_add(1);
  });
  u.join();
  t.join();
  EXPECT_EQ(timeouts.load(), 2);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
  std::atomic<int> woken{0};
  weft::ult early = weft::ult::create_on(last_stream(), [&] {
    if (ev.wait_for(1h)) woken.fetch_add(1);
  });
  std::thread early_t([&] {
    if (ev.wait_for(1h)) woken.fetch_add(1);
  });
  ASSERT_TRUE(blocked(early));
  ev.set();
  early.join();
  early_t.join();
  EXPECT_EQ(woken.load(), 2);
}

// ---------------------------------------------------------------------------------------------
// barrier

TEST_P(SyncFutureTest, BarrierRoundsAreSeparatedAndHaveOneSerialCaller) {
  const int ults = 2 * streams();
  const int parties = ults + 1;  // and one external thread
  weft::barrier b(static_cast<std::size_t>(parties));
  EXPECT_EQ(b.parties(), static_cast<std::size_t>(parties));
  const int rounds = static_cast<int>(scaled(100, 10));
  std::atomic<int> arrived{0};
  std::atomic<int> serials{0};
  std::atomic<int> errors{0};
  auto body = [&] {
    for (int r = 0; r < rounds; ++r) {
      arrived.fetch_add(1);
      if (b.arrive_and_wait()) serials.fetch_add(1);
      // Everyone of round r arrived before anyone got past it.
      if (arrived.load() < (r + 1) * parties) errors.fetch_add(1);
      // ...and nobody gets past round r+1 before everyone left round r: checked by the next
      // round's count.
    }
  };
  std::vector<weft::ult> us;
  for (int i = 0; i < ults; ++i) us.push_back(weft::ult::create_on(stream(i % streams()), body));
  std::thread t(body);
  for (auto& u : us) u.join();
  t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(serials.load(), rounds);
  EXPECT_EQ(arrived.load(), rounds * parties);
}

TEST_P(SyncFutureTest, BarrierTimeoutsWithdrawTheArrivalAndTaskletsMayOnlyComeLast) {
  weft::barrier b(2);
  std::optional<bool> r1, r2;
  const auto start = std::chrono::steady_clock::now();
  weft::ult::create_on(last_stream(), [&] { r1 = b.arrive_and_wait_for(20ms); }).join();
  std::thread([&] { r2 = b.arrive_and_wait_until(std::chrono::system_clock::now() + 5ms); }).join();
  EXPECT_EQ(r1, std::nullopt);
  EXPECT_EQ(r2, std::nullopt);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
  // Nothing was counted: a tasklet alone cannot complete the round (it would block).
  EXPECT_EQ(in_tasklet(last_stream(), [&] { b.arrive_and_wait(); }),
            weft::errc::tasklet_cannot_block);
  // A ULT waits (woken early from a long timed wait); a tasklet arrives last and is serial.
  std::optional<bool> ult_result;
  weft::ult u =
      weft::ult::create_on(last_stream(), [&] { ult_result = b.arrive_and_wait_for(1h); });
  ASSERT_TRUE(blocked(u));
  bool tasklet_serial = false;
  EXPECT_EQ(in_tasklet(last_stream(), [&] { tasklet_serial = b.arrive_and_wait(); }), std::nullopt);
  u.join();
  EXPECT_TRUE(tasklet_serial);
  EXPECT_EQ(ult_result, std::optional<bool>(false));
  EXPECT_WEFT_ERRC(weft::barrier(0), weft::errc::invalid_state);
  weft::barrier one(1);
  EXPECT_TRUE(one.arrive_and_wait());
}

TEST_P(SyncFutureTest, BarrierResetChangesThePartiesOnlyBetweenRoundsAndReportsEachBlock) {
  weft::barrier b(2);
  EXPECT_EQ(b.waiting(), 0u);
  EXPECT_TRUE(b.reset(3));
  EXPECT_EQ(b.parties(), 3u);
  EXPECT_WEFT_ERRC(b.reset(0), weft::errc::invalid_state);
  // Two of three arrive and block, each reporting it once; a reset meanwhile is refused.
  std::atomic<int> reports{0};
  std::atomic<int> serials{0};
  auto party = [&] {
    if (b.arrive_and_wait_reporting([&] { reports.fetch_add(1); })) serials.fetch_add(1);
  };
  weft::ult first = weft::ult::create_on(last_stream(), party);
  weft::ult second = weft::ult::create_on(stream(0), party);
  ASSERT_TRUE(blocked(first));
  ASSERT_TRUE(blocked(second));
  EXPECT_EQ(b.waiting(), 2u);
  EXPECT_FALSE(b.reset(1));
  EXPECT_EQ(b.parties(), 3u);
  // The last arriver does not block: no report, and it is the serial one.
  EXPECT_TRUE(b.arrive_and_wait_reporting([&] { reports.fetch_add(100); }));
  first.join();
  second.join();
  EXPECT_EQ(reports.load(), 2);
  EXPECT_EQ(serials.load(), 0);
  EXPECT_EQ(b.waiting(), 0u);
  // Between rounds the count may change: one party is now a round by itself.
  EXPECT_TRUE(b.reset(1));
  EXPECT_TRUE(b.arrive_and_wait());
}

// ---------------------------------------------------------------------------------------------
// Destruction right after the last use (docs/sync.md, "Destruction")

TEST_P(SyncFutureTest, TheLastWaiterMayDestroyTheEventualRightAway) {
  const int rounds = static_cast<int>(scaled(80, 8));
  const int waiters = streams() + 2;  // a blocked ULT per stream, a thread, a spinning thread
  std::atomic<int> seen{0};
  for (int i = 0; i < rounds; ++i) {
    auto* ev = new weft::eventual<int>;
    last_user_deletes<weft::eventual<int>> users(ev, waiters);
    auto wait_once = [&] {
      if (ev->wait() == i) seen.fetch_add(1, std::memory_order_relaxed);
      users.leave();
    };
    std::vector<weft::ult> us;
    for (int r = 0; r < streams(); ++r) us.push_back(weft::ult::create_on(stream(r), wait_once));
    std::thread t(wait_once);
    std::thread spinner([&] {
      // Returns without the eventual's lock once it sees the value (the fast path).
      for (unsigned k = 1; !ev->is_ready(); ++k) {
        if (k % 256 == 0) std::this_thread::yield();
      }
      wait_once();
    });
    for (auto& u : us) ASSERT_TRUE(blocked(u));
    // Set from a thread, so that the woken ULTs can run on any stream meanwhile.
    std::thread setter([&] { ev->set(i); });
    for (auto& u : us) u.join();
    t.join();
    spinner.join();
    setter.join();
  }
  EXPECT_EQ(seen.load(), rounds * waiters);
}

TEST_P(SyncFutureTest, AFutureAndItsPromiseMayBeDestroyedAsSoonAsTheValueCrossed) {
  const int rounds = static_cast<int>(scaled(80, 8));
  std::atomic<long> sum{0};
  for (int i = 0; i < rounds; ++i) {
    auto p = std::make_unique<weft::promise<int>>();
    weft::future<int> f = p->get_future();
    // The receiver drops the shared state as soon as it has the value; the sender drops the
    // promise as soon as set_value() returns. Whichever goes last frees it.
    weft::ult u = weft::ult::create_on(stream(i % streams()), [&, f = std::move(f)]() mutable {
      weft::future<int> mine = std::move(f);
      sum.fetch_add(mine.get(), std::memory_order_relaxed);
    });
    if (i % 2 == 0) {
      ASSERT_TRUE(blocked(u));
    }
    std::thread([&] {
      p->set_value(i);
      p.reset();
    }).join();
    u.join();
  }
  EXPECT_EQ(sum.load(), static_cast<long>(rounds) * (rounds - 1) / 2);
}

TEST_P(SyncFutureTest, APartyMayDestroyTheBarrierAsSoonAsItsRoundCompleted) {
  // As with pthread barriers in glibc: once one party is back from arrive_and_wait(), the round
  // is over and the barrier may go, even while the other parties are still returning.
  const int rounds = static_cast<int>(scaled(80, 8));
  const int parties = streams() + 1;  // a ULT per stream and a thread
  std::atomic<int> serials{0};
  std::atomic<int> returned{0};
  for (int i = 0; i < rounds; ++i) {
    auto* b = new weft::barrier(static_cast<std::size_t>(parties));
    std::atomic<bool> deleted{false};
    auto arrive = [&] {
      if (b->arrive_and_wait()) serials.fetch_add(1, std::memory_order_relaxed);
      returned.fetch_add(1, std::memory_order_relaxed);
      if (!deleted.exchange(true, std::memory_order_acq_rel)) delete b;  // the first one back
    };
    std::vector<weft::ult> us;
    for (int r = 0; r < streams(); ++r) us.push_back(weft::ult::create_on(stream(r), arrive));
    std::thread t(arrive);
    for (auto& u : us) u.join();
    t.join();
  }
  EXPECT_EQ(serials.load(), rounds);
  EXPECT_EQ(returned.load(), rounds * parties);
}

TEST_P(SyncFutureTest, ABarrierMayBeDestroyedWhileATimedOutPartyOfTheRoundIsStillReturning) {
  // A party whose deadline passes just as the round completes still counts as arrived: it gets
  // false, after checking the round under the barrier's lock on its way out, and the barrier's
  // destructor waits for it. A party that timed out before the round completed withdrew; it
  // then arrives again without a deadline.
  const int rounds = static_cast<int>(scaled(80, 8));
  std::atomic<int> serials{0};
  std::atomic<int> returned{0};
  for (int i = 0; i < rounds; ++i) {
    auto* b = new weft::barrier(2);
    std::atomic<bool> deleted{false};
    auto leave = [&](bool serial) {
      if (serial) serials.fetch_add(1, std::memory_order_relaxed);
      returned.fetch_add(1, std::memory_order_relaxed);
      if (!deleted.exchange(true, std::memory_order_acq_rel)) delete b;  // the first one back
    };
    weft::ult u = weft::ult::create_on(last_stream(), [&] {
      const std::optional<bool> r = b->arrive_and_wait_for(std::chrono::microseconds(i % 40));
      leave(r ? *r : b->arrive_and_wait());
    });
    std::thread t([&] { leave(b->arrive_and_wait()); });
    u.join();
    t.join();
  }
  EXPECT_EQ(serials.load(), rounds);
  EXPECT_EQ(returned.load(), 2 * rounds);
}

}  // namespace
