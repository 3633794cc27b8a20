// SPDX-License-Identifier: Apache-2.0
// ULT-local storage (local_key, unit_local<T>), sleeps, and exceptions crossing join after a
// unit blocked on a primitive, on 1, 2 and 4 streams.
#include <algorithm>

#include <weft/channel.hpp>
#include <weft/eventual.hpp>
#include <weft/mutex.hpp>
#include <weft/unit_local.hpp>

#include "test_support.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;

class SyncLocalTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(SyncLocalTest);

/// Counts destructor calls per value: each value is an int* into `calls`.
std::atomic<int> g_destroyed{0};
void count_destroy(void* p) {
  static_cast<std::atomic<int>*>(p)->fetch_add(1);
  g_destroyed.fetch_add(1);
}

TEST_P(SyncLocalTest, EachUnitSeesItsOwnValue) {
  weft::local_key key = weft::local_key::create();
  EXPECT_TRUE(key.valid());
  int primary_value = 0;
  key.set(&primary_value);
  EXPECT_EQ(key.get(), &primary_value);
  const int per_stream = 10;
  std::atomic<int> errors{0};
  std::vector<weft::ult> us;
  std::vector<int> values(static_cast<std::size_t>(streams() * per_stream));
  for (int r = 0; r < streams(); ++r) {
    for (int i = 0; i < per_stream; ++i) {
      int* mine = &values[static_cast<std::size_t>(r * per_stream + i)];
      us.push_back(weft::ult::create_on(stream(r), [&, mine] {
        if (key.get() != nullptr) errors.fetch_add(1);  // a fresh unit starts empty
        key.set(mine);
        for (int k = 0; k < 5; ++k) {
          weft::this_unit::yield();
          if (key.get() != mine) errors.fetch_add(1);
        }
      }));
    }
  }
  std::vector<weft::tasklet> ts;
  for (int r = 0; r < streams(); ++r) {
    ts.push_back(weft::tasklet::create_on(stream(r), [&] {
      int local = 0;
      if (key.get() != nullptr) errors.fetch_add(1);
      key.set(&local);
      if (key.get() != &local) errors.fetch_add(1);
    }));
  }
  std::thread t([&] {
    int local = 0;
    if (key.get() != nullptr) errors.fetch_add(1);
    key.set(&local);
    if (key.get() != &local) errors.fetch_add(1);
  });
  for (auto& u : us) u.join();
  for (auto& tk : ts) tk.join();
  t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(key.get(), &primary_value);  // nobody else's set touched the primary's value
  key.destroy();
  EXPECT_EQ(key.get(), nullptr);  // a deleted key reads as null
  EXPECT_WEFT_ERRC(key.set(&primary_value), weft::errc::invalid_state);
  EXPECT_WEFT_ERRC(key.destroy(), weft::errc::invalid_state);
  EXPECT_WEFT_ERRC(weft::local_key().set(nullptr), weft::errc::invalid_state);
  EXPECT_EQ(weft::local_key().get(), nullptr);
}

TEST_P(SyncLocalTest, ValuesFollowAUltAcrossMigration) {
  std::optional<scoped_stream> holder;
  weft::execution_stream& other = secondary_stream(streams(), holder);
  weft::local_key key = weft::local_key::create();
  weft::unit_local<std::vector<int>> trail;
  int value = 0;
  std::vector<int> seen_trail;
  std::vector<weft::execution_stream*> where;
  weft::ult u = weft::ult::create_on(stream(0), [&] {
    key.set(&value);
    trail->push_back(1);
    where.push_back(weft::this_unit::stream());
    weft::this_unit::migrate_to(other);
    where.push_back(weft::this_unit::stream());
    trail->push_back(2);
    EXPECT_EQ(key.get(), &value);
    weft::this_unit::migrate_to(stream(0));
    where.push_back(weft::this_unit::stream());
    EXPECT_EQ(key.get(), &value);
    seen_trail = *trail;
  });
  u.join();
  ASSERT_EQ(where.size(), 3u);
  EXPECT_EQ(where[1], &other);
  EXPECT_EQ(where[2], &stream(0));
  EXPECT_EQ(seen_trail, (std::vector<int>{1, 2}));
  // Meanwhile a ULT that stayed on `other` has its own empty trail.
  bool empty = false;
  weft::ult::create_on(other, [&] { empty = !trail.has_value() && trail->empty(); }).join();
  EXPECT_TRUE(empty);
  key.destroy();
}

TEST_P(SyncLocalTest, DestructorsRunExactlyOncePerUnit) {
  g_destroyed = 0;
  weft::local_key a = weft::local_key::create(&count_destroy);
  weft::local_key b = weft::local_key::create(&count_destroy);
  weft::local_key no_dtor = weft::local_key::create();
  const int n = static_cast<int>(scaled(200, 20));
  std::vector<std::atomic<int>> calls(static_cast<std::size_t>(2 * n + 2));
  std::vector<weft::ult> us;
  for (int i = 0; i < n; ++i) {
    std::atomic<int>* pa = &calls[static_cast<std::size_t>(2 * i)];
    std::atomic<int>* pb = &calls[static_cast<std::size_t>(2 * i + 1)];
    us.push_back(weft::ult::create_on(stream(i % streams()), [&, i, pa, pb] {
      a.set(pa);
      weft::this_unit::yield();
      b.set(pb);
      no_dtor.set(pa);
      if (i % 3 == 0) weft::this_unit::migrate_to(stream((i + 1) % streams()));
      if (i % 5 == 0) weft::this_unit::exit();  // unwinding still runs them
      if (i % 7 == 0) throw std::runtime_error("escapes to join");
    }));
  }
  // A value reset to null is not destroyed; a tasklet's values are.
  std::atomic<int> unused{0};
  std::atomic<int>* pt = &calls[static_cast<std::size_t>(2 * n)];
  weft::tasklet t = weft::tasklet::create_on(last_stream(), [&, pt] {
    a.set(&unused);
    a.set(nullptr);
    b.set(pt);
  });
  for (int i = 0; i < n; ++i) {
    try {
      us[static_cast<std::size_t>(i)].join();
      EXPECT_TRUE(i % 7 != 0 || i % 5 == 0);
    } catch (const std::runtime_error&) {
      EXPECT_EQ(i % 7, 0);
    }
  }
  t.join();
  // An external thread's values are destroyed when it exits.
  std::atomic<int>* pe = &calls[static_cast<std::size_t>(2 * n + 1)];
  std::thread([&, pe] { a.set(pe); }).join();
  for (std::size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i].load(), 1) << "value " << i;
  EXPECT_EQ(unused.load(), 0);
  EXPECT_EQ(g_destroyed.load(), 2 * n + 2);
  a.destroy();
  b.destroy();
  no_dtor.destroy();
}

TEST_P(SyncLocalTest, ValuesSetForAFinishedUnitAreDestroyedByItsJoin) {
  // set_for on a unit that already ended (its handle still owns it): the join that frees the
  // descriptor runs the destructor, also when an exception waits in the same unit for the join.
  weft::local_key key = weft::local_key::create(&count_destroy);
  std::atomic<int> calls_plain{0}, calls_failed{0};
  weft::ult plain = weft::ult::create_on(last_stream(), [] {});
  weft::ult failed =
      weft::ult::create_on(last_stream(), [] { throw std::runtime_error("kept for join"); });
  ASSERT_TRUE(wait_until([&] {
    return plain.state() == weft::unit_state::terminated &&
           failed.state() == weft::unit_state::terminated;
  }));
  key.set_for(*plain.native_handle(), &calls_plain);
  key.set_for(*failed.native_handle(), &calls_failed);
  EXPECT_EQ(key.get_for(*plain.native_handle()), &calls_plain);
  EXPECT_EQ(calls_plain.load(), 0);
  plain.join();
  EXPECT_EQ(calls_plain.load(), 1);
  EXPECT_THROW(failed.join(), std::runtime_error);
  EXPECT_EQ(calls_failed.load(), 1);
  key.destroy();
}

/// A destructor that stores a new value under its own key the first time: a second round runs.
weft::local_key g_again;
std::atomic<int> g_again_calls{0};
void again_destroy(void*) {
  if (g_again_calls.fetch_add(1) == 0) g_again.set(&g_again_calls);
}

TEST_P(SyncLocalTest, DestructorsThatSetValuesRunAgainAndDeletedKeysAreForgotten) {
  g_again = weft::local_key::create(&again_destroy);
  g_again_calls = 0;
  weft::ult::create_on(last_stream(), [] { g_again.set(&g_again_calls); }).join();
  EXPECT_EQ(g_again_calls.load(), 2);
  // A key deleted while a unit holds a value: its destructor is not called.
  weft::local_key k = weft::local_key::create(&count_destroy);
  std::atomic<int> calls{0};
  std::atomic<bool> set{false}, deleted{false};
  weft::ult u = weft::ult::create_on(last_stream(), [&] {
    k.set(&calls);
    set = true;
    ASSERT_TRUE(wait_until([&] { return deleted.load(); }));
  });
  ASSERT_TRUE(wait_until([&] { return set.load(); }));
  k.destroy();
  // Its slot is reused by a new key, which must not see the old value.
  weft::local_key k2 = weft::local_key::create();
  deleted = true;
  u.join();
  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ(k2.get(), nullptr);
  k2.destroy();
  g_again.destroy();
}

TEST_P(SyncLocalTest, SleepersOnOneStreamWakeInDeadlineOrder) {
  using clock = std::chrono::steady_clock;
  const int n = 8;
  std::vector<int> order;  // all on one stream: no lock needed
  std::vector<clock::time_point> woke(n);
  // The sleepers wait for a common base time, published once they are all blocked, then sleep
  // until base + (i + 1) * 5 ms. Created in a scrambled order of deadlines.
  weft::eventual<clock::time_point> base;
  std::vector<weft::ult> us;
  for (int k = 0; k < n; ++k) {
    const int i = (k * 5) % n;
    us.push_back(weft::ult::create_on(last_stream(), [&, i] {
      const clock::time_point b = base.wait();
      weft::this_unit::sleep_until(b + (i + 1) * 5ms);
      woke[static_cast<std::size_t>(i)] = clock::now();
      order.push_back(i);
    }));
  }
  for (auto& u : us)
    ASSERT_TRUE(wait_until([&] { return u.state() == weft::unit_state::blocked; }));
  const clock::time_point b = clock::now() + 30ms;
  base.set(b);
  // The order is promised among sleepers whose timers were all armed before the first deadline.
  // set() made every sleeper ready before it returned, so a sleeper seen blocked now is asleep
  // in sleep_until: the states are read first, the clock after. On a machine that stalls past
  // the first deadline, only the bounds are checked.
  bool asleep_in_time = false;
  for (;;) {
    const bool all_asleep = std::all_of(us.begin(), us.end(), [](const weft::ult& u) {
      return u.state() == weft::unit_state::blocked;
    });
    const bool in_time = clock::now() < b + 5ms;
    if (all_asleep || !in_time) {
      asleep_in_time = all_asleep && in_time;
      break;
    }
    weft::this_unit::yield();
  }
  for (auto& u : us) u.join();
  for (int i = 0; i < n; ++i) EXPECT_GE(woke[static_cast<std::size_t>(i)], b + (i + 1) * 5ms);
  if (asleep_in_time) {
    std::vector<int> expected(n);
    for (int i = 0; i < n; ++i) expected[static_cast<std::size_t>(i)] = i;
    EXPECT_EQ(order, expected);
  }
  // sleep_for from an external thread sleeps the thread.
  const auto t0 = clock::now();
  std::thread([] { weft::this_unit::sleep_for(5ms); }).join();
  EXPECT_GE(clock::now() - t0, 5ms);
}

TEST_P(SyncLocalTest, ExceptionsCrossJoinAfterBlockingAndDetachedOnesAreReported) {
  // A ULT that blocked on a mutex and a channel (and may resume on another stream) throws.
  weft::mutex m;
  weft::channel<int> ch(0);
  m.lock();
  weft::ult u = weft::ult::create_on(last_stream(), [&] {
    std::lock_guard g(m);
    const int v = ch.recv().value();
    throw std::runtime_error("after blocking " + std::to_string(v));
  });
  ASSERT_TRUE(wait_until([&] { return u.state() == weft::unit_state::blocked; }));
  m.unlock();
  ch.send(7);
  try {
    u.join();
    ADD_FAILURE() << "join did not rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "after blocking 7");
  }
  EXPECT_TRUE(m.try_lock());  // the lock_guard released it during unwinding
  m.unlock();
  // A detached tasklet's exception is reported on stderr, not lost and not thrown anywhere.
  testing::internal::CaptureStderr();
  std::atomic<bool> ran{false};
  weft::tasklet::create_on(last_stream(), [&] {
    ran = true;
    throw std::logic_error("tasklet-lost");
  }).detach();
  ASSERT_TRUE(wait_until([&] { return ran.load(); }));
  finalize();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("exception escaped detached tasklet"), std::string::npos) << err;
  EXPECT_NE(err.find("tasklet-lost"), std::string::npos) << err;
}

}  // namespace
