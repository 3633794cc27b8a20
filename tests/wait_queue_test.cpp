// SPDX-License-Identifier: Apache-2.0
// The blocking mechanism under the sync primitives: wait queues, timed waits, sleeps.
#include <algorithm>
#include <mutex>
#include <vector>

#include <weft/wait_queue.hpp>

#include "test_support.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;

class WaitQueueTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(WaitQueueTest);

/// A one-shot event built on a wait_queue, the way a primitive uses it.
struct event {
  weft::spinlock lock;
  weft::wait_queue q;
  bool set = false;
  void wait() {
    lock.lock();
    if (set) {
      lock.unlock();
      return;
    }
    weft::waiter w;
    q.wait(lock, w);
  }
  bool wait_for(std::chrono::nanoseconds d) {
    lock.lock();
    if (set) {
      lock.unlock();
      return true;
    }
    weft::waiter w;
    return q.wait_for(lock, w, d) == weft::wait_status::notified;
  }
  void notify_all() {
    std::vector<weft::wakeup> ws;
    lock.lock();
    set = true;
    while (auto wk = q.take()) ws.push_back(wk);
    lock.unlock();
    for (auto& wk : ws) wk();
  }
};

TEST_P(WaitQueueTest, UltsOnEveryStreamWaitAndAreAllWoken) {
  event ev;
  std::atomic<int> woken{0};
  const int per_stream = static_cast<int>(scaled(200, 10));
  std::vector<weft::ult> us;
  for (int r = 0; r < streams(); ++r)
    for (int i = 0; i < per_stream; ++i)
      us.push_back(weft::ult::create_on(stream(r), [&] {
        ev.wait();
        woken.fetch_add(1);
      }));
  // Let some of them block first; correctness does not depend on how many did.
  for (int i = 0; i < 10; ++i) weft::this_unit::yield();
  ev.notify_all();
  for (auto& u : us) u.join();
  EXPECT_EQ(woken.load(), per_stream * streams());
}

TEST_P(WaitQueueTest, TakeWakesInArrivalOrder) {
  weft::spinlock lock;
  weft::wait_queue q;
  std::vector<int> order;
  std::vector<weft::ult> us;
  // All on the primary's stream, created in order: each blocks before the next runs.
  for (int i = 0; i < 5; ++i) {
    us.push_back(weft::ult::create_on(stream(0), [&, i] {
      lock.lock();
      weft::waiter w;
      w.tag = static_cast<std::uintptr_t>(i);
      q.wait(lock, w);
      order.push_back(i);
    }));
  }
  wait_until([&] {
    std::lock_guard g(lock);
    return q.size() == 5;
  });
  for (int i = 0; i < 5; ++i) {
    lock.lock();
    ASSERT_NE(q.front(), nullptr);
    EXPECT_EQ(q.front()->tag, static_cast<std::uintptr_t>(i));
    weft::wakeup wk = q.take();
    lock.unlock();
    wk();
    us[static_cast<std::size_t>(i)].join();
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  std::lock_guard g(lock);
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.take());
}

TEST_P(WaitQueueTest, TimedWaitExpiresInUltsAndExternalThreads) {
  event ev;
  std::atomic<int> timed_out{0};
  std::vector<weft::ult> us;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < streams(); ++r)
    us.push_back(weft::ult::create_on(stream(r), [&] {
      if (!ev.wait_for(20ms)) timed_out.fetch_add(1);
    }));
  std::thread ext([&] {
    if (!ev.wait_for(20ms)) timed_out.fetch_add(1);
  });
  for (auto& u : us) u.join();
  ext.join();
  EXPECT_EQ(timed_out.load(), streams() + 1);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
  std::lock_guard g(ev.lock);
  EXPECT_EQ(ev.q.size(), 0u);  // timed-out waiters left the queue
}

TEST_P(WaitQueueTest, TimedWaitWokenEarlyReportsNotified) {
  event ev;
  std::atomic<int> notified{0};
  std::vector<weft::ult> us;
  for (int r = 0; r < streams(); ++r)
    us.push_back(weft::ult::create_on(stream(r), [&] {
      if (ev.wait_for(60s)) notified.fetch_add(1);
    }));
  std::thread ext([&] {
    if (ev.wait_for(60s)) notified.fetch_add(1);
  });
  wait_until([&] {
    std::lock_guard g(ev.lock);
    return ev.q.size() == static_cast<std::size_t>(streams()) + 1;
  });
  ev.notify_all();
  for (auto& u : us) u.join();
  ext.join();
  EXPECT_EQ(notified.load(), streams() + 1);
}

TEST_P(WaitQueueTest, ManyEarlyNotifiedTimedWaitsDoNotPileUp) {
  // Each timed wait is notified at once; the timers left behind are pruned, so this finishes
  // without holding a million timers (checked indirectly: it must not run out of memory or time).
  event ev;
  ev.set = true;
  const int n = static_cast<int>(scaled(20000, 100));
  auto u = weft::ult::create_on(stream(0), [&] {
    for (int i = 0; i < n; ++i) ASSERT_TRUE(ev.wait_for(1h));
  });
  u.join();
}

// What weft promises: no sleeper wakes before its deadline, and sleepers on one stream wake in
// deadline order. The order is defined only for ULTs that were asleep before their deadline (a
// sleep whose deadline has passed is a plain yield), so an attempt counts only if every sleeper
// was seen asleep before the first deadline; on a machine too slow for that, the next attempt
// spaces the deadlines twice as far apart.
TEST_P(WaitQueueTest, SleepOrderFollowsDeadlines) {
  using clock = std::chrono::steady_clock;
  constexpr int n = 5;
  for (auto spacing = std::chrono::milliseconds(15); spacing <= 960ms; spacing *= 2) {
    std::mutex m;
    std::vector<int> order;
    std::vector<clock::time_point> woke(n);
    std::vector<weft::ult> us;
    const auto start = clock::now();
    const auto deadline = [&](int i) { return start + (i + 1) * spacing; };
    // Sleepers spread over the streams, created in reverse order of their deadlines.
    for (int i = n - 1; i >= 0; --i) {
      us.push_back(weft::ult::create_on(stream(i % streams()), [&, i] {
        weft::this_unit::sleep_until(deadline(i));
        std::lock_guard g(m);
        woke[static_cast<std::size_t>(i)] = clock::now();
        order.push_back(i);
      }));
    }
    bool all_asleep = false;
    while (!all_asleep && clock::now() < deadline(0)) {
      all_asleep = std::all_of(us.begin(), us.end(), [](const weft::ult& u) {
        return u.state() == weft::unit_state::blocked;
      });
      if (!all_asleep) weft::this_unit::yield();
    }
    for (auto& u : us) u.join();
    for (int i = 0; i < n; ++i) EXPECT_GE(woke[static_cast<std::size_t>(i)], deadline(i)) << i;
    if (!all_asleep) continue;
    for (int r = 0; r < streams(); ++r) {
      std::vector<int> on_stream;
      for (int i : order)
        if (i % streams() == r) on_stream.push_back(i);
      EXPECT_TRUE(std::is_sorted(on_stream.begin(), on_stream.end()))
          << "stream " << r << " woke its sleepers out of deadline order";
    }
    return;
  }
  FAIL() << "the sleepers were never all asleep before the first deadline, even 960 ms apart";
}

TEST_P(WaitQueueTest, ASleepingUltLetsItsStreamRunOtherWork) {
  std::atomic<bool> sleeper_done{false};
  std::atomic<int> others{0};
  auto sleeper = weft::ult::create_on(stream(0), [&] {
    weft::this_unit::sleep_for(30ms);
    sleeper_done = true;
  });
  std::vector<weft::ult> us;
  for (int i = 0; i < 10; ++i)
    us.push_back(weft::ult::create_on(stream(0), [&] { others.fetch_add(1); }));
  for (auto& u : us) u.join();
  EXPECT_EQ(others.load(), 10);
  sleeper.join();
  EXPECT_TRUE(sleeper_done.load());
}

TEST_P(WaitQueueTest, TaskletsCannotWaitOrSleep) {
  event ev;
  std::optional<weft::errc> wait_err, sleep_err;
  auto t = weft::tasklet::create_on(last_stream(), [&] {
    try {
      ev.lock.lock();
      weft::waiter w;
      ev.q.wait(ev.lock, w);
    } catch (const weft::error& e) {
      ev.lock.unlock();
      wait_err = static_cast<weft::errc>(e.code().value());
    }
    try {
      weft::this_unit::sleep_for(1ms);
    } catch (const weft::error& e) {
      sleep_err = static_cast<weft::errc>(e.code().value());
    }
  });
  t.join();
  EXPECT_EQ(wait_err, weft::errc::tasklet_cannot_block);
  EXPECT_EQ(sleep_err, weft::errc::tasklet_cannot_block);
}

}  // namespace
