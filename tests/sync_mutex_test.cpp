// SPDX-License-Identifier: Apache-2.0
// mutex, recursive_mutex, condition_variable and condition_variable_any, from ULTs, tasklets and
// external threads, on 1, 2 and 4 streams.
#include <weft/condition_variable.hpp>
#include <weft/mutex.hpp>

#include <future>

#include "test_support.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;

class SyncMutexTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(SyncMutexTest);

// ---------------------------------------------------------------------------------------------
// mutex

TEST_P(SyncMutexTest, LockAndUnlockFromEveryContext) {
  weft::mutex m;
  // Primary ULT.
  m.lock();
  EXPECT_FALSE(m.try_lock());
  m.unlock();
  // ULTs on every stream, with the std wrappers.
  int n = 0;
  for (int r = 0; r < streams(); ++r) {
    weft::ult::create_on(stream(r), [&] {
      std::lock_guard g(m);
      ++n;
    }).join();
  }
  // A tasklet may lock a free mutex, and try_lock always.
  for (int r = 0; r < streams(); ++r) {
    EXPECT_EQ(in_tasklet(stream(r),
                         [&] {
                           m.lock();
                           ++n;
                           m.unlock();
                           ASSERT_TRUE(m.try_lock());
                           m.unlock();
                         }),
              std::nullopt);
  }
  // An external thread.
  std::thread([&] {
    std::unique_lock g(m);
    ++n;
  }).join();
  EXPECT_EQ(n, 2 * streams() + 1);
  EXPECT_TRUE(m.try_lock());
  m.unlock();
}

TEST_P(SyncMutexTest, ATaskletThatWouldBlockGetsAnError) {
  weft::mutex m;
  m.lock();
  bool try_result = true;
  EXPECT_EQ(in_tasklet(last_stream(),
                       [&] {
                         try_result = m.try_lock();
                         m.lock();
                       }),
            weft::errc::tasklet_cannot_block);
  EXPECT_FALSE(try_result);
  m.unlock();
  // The mutex is usable afterwards (the failed attempt left no waiter behind).
  weft::ult::create_on(last_stream(), [&] {
    m.lock();
    m.unlock();
  }).join();
  EXPECT_TRUE(m.try_lock());
  m.unlock();
}

TEST_P(SyncMutexTest, ManyUltsAndThreadsContendAndTheCountIsExact) {
  weft::mutex m;
  long counter = 0;  // plain: only the mutex protects it
  const int ults_per_stream = 8;
  const long iters = static_cast<long>(scaled(4000, 50));
  std::vector<weft::ult> us;
  for (int r = 0; r < streams(); ++r) {
    for (int i = 0; i < ults_per_stream; ++i) {
      us.push_back(weft::ult::create_on(stream(r), [&, i] {
        for (long k = 0; k < iters; ++k) {
          if ((k + i) % 3 == 0) {
            while (!m.try_lock()) weft::this_unit::yield();
          } else {
            m.lock();
          }
          const long seen = counter;
          if (k % 16 == 0) weft::this_unit::yield();  // hold it across a switch now and then
          counter = seen + 1;
          m.unlock();
        }
      }));
    }
  }
  std::vector<std::thread> ts;
  for (int t = 0; t < 2; ++t) {
    ts.emplace_back([&] {
      for (long k = 0; k < iters; ++k) {
        std::lock_guard g(m);
        ++counter;
      }
    });
  }
  for (auto& u : us) u.join();
  for (auto& t : ts) t.join();
  EXPECT_EQ(counter, iters * (streams() * ults_per_stream + 2));
}

TEST_P(SyncMutexTest, ABlockedLockerLetsItsStreamRunOtherWork) {
  weft::mutex m;
  m.lock();
  std::atomic<bool> got{false};
  weft::ult waiter = weft::ult::create_on(stream(0), [&] {
    m.lock();
    got = true;
    m.unlock();
  });
  ASSERT_TRUE(blocked(waiter));
  // The waiter's stream (the primary's) still runs other ULTs.
  int ran = 0;
  weft::ult::create_on(stream(0), [&] { ++ran; }).join();
  EXPECT_EQ(ran, 1);
  EXPECT_FALSE(got.load());
  m.unlock();
  waiter.join();
  EXPECT_TRUE(got.load());
}

TEST_P(SyncMutexTest, TimedLockExpiresInUltsAndThreads) {
  weft::mutex m;
  m.lock();
  std::atomic<int> failed{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<weft::ult> us;
  for (int r = 0; r < streams(); ++r) {
    us.push_back(weft::ult::create_on(stream(r), [&] {
      if (!m.try_lock_for(20ms)) failed.fetch_add(1);
      if (!m.try_lock_until(std::chrono::system_clock::now() + 5ms)) failed.fetch_add(1);
    }));
  }
  std::thread t([&] {
    if (!m.try_lock_for(20ms)) failed.fetch_add(1);
  });
  for (auto& u : us) u.join();
  t.join();
  EXPECT_EQ(failed.load(), 2 * streams() + 1);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
  m.unlock();
  EXPECT_TRUE(m.try_lock_for(0ms));
  m.unlock();
}

TEST_P(SyncMutexTest, TimedLockWokenEarlySucceeds) {
  weft::mutex m;
  m.lock();
  std::atomic<int> got{0};
  std::vector<weft::ult> us;
  for (int r = 0; r < streams(); ++r) {
    us.push_back(weft::ult::create_on(stream(r), [&] {
      if (m.try_lock_for(1h)) {
        got.fetch_add(1);
        m.unlock();
      }
    }));
  }
  std::thread t([&] {
    if (m.try_lock_for(1h)) {
      got.fetch_add(1);
      m.unlock();
    }
  });
  for (auto& u : us) ASSERT_TRUE(blocked(u));
  m.unlock();
  for (auto& u : us) u.join();
  t.join();
  EXPECT_EQ(got.load(), streams() + 1);
}

// ---------------------------------------------------------------------------------------------
// recursive_mutex

TEST_P(SyncMutexTest, RecursiveMutexBelongsToTheUnitAcrossMigration) {
  weft::recursive_mutex m;
  std::optional<scoped_stream> holder;
  weft::execution_stream& other = secondary_stream(streams(), holder);
  std::atomic<int> phase{0};
  weft::ult owner = weft::ult::create_on(stream(0), [&] {
    m.lock();
    ASSERT_TRUE(m.try_lock());
    weft::this_unit::migrate_to(other);
    EXPECT_EQ(weft::this_unit::stream(), &other);
    ASSERT_TRUE(m.try_lock_for(1ms));  // still ours on the other stream
    phase = 1;
    ASSERT_TRUE(wait_until([&] { return phase.load() == 2; }));
    m.unlock();
    m.unlock();
    m.unlock();
  });
  ASSERT_TRUE(wait_until([&] { return phase.load() == 1; }));
  // Someone else cannot have it, even on the stream the owner came from.
  bool other_got = true;
  weft::ult::create_on(stream(0), [&] { other_got = m.try_lock(); }).join();
  EXPECT_FALSE(other_got);
  std::thread([&] { other_got = m.try_lock(); }).join();
  EXPECT_FALSE(other_got);
  phase = 2;
  owner.join();
  // Released: an external thread locks it recursively, then a tasklet may take it when free.
  std::thread([&] {
    std::lock_guard a(m);
    std::lock_guard b(m);
  }).join();
  EXPECT_EQ(in_tasklet(last_stream(),
                       [&] {
                         m.lock();
                         m.lock();
                         m.unlock();
                         m.unlock();
                       }),
            std::nullopt);
  m.lock();
  EXPECT_EQ(in_tasklet(last_stream(), [&] { m.lock(); }), weft::errc::tasklet_cannot_block);
  m.unlock();
}

TEST_P(SyncMutexTest, RecursiveMutexCountsUnderContention) {
  weft::recursive_mutex m;
  long counter = 0;
  const long iters = static_cast<long>(scaled(2000, 50));
  std::vector<weft::ult> us;
  for (int r = 0; r < streams(); ++r) {
    for (int i = 0; i < 4; ++i) {
      us.push_back(weft::ult::create_on(stream(r), [&] {
        for (long k = 0; k < iters; ++k) {
          std::lock_guard a(m);
          std::lock_guard b(m);
          ++counter;
        }
      }));
    }
  }
  for (auto& u : us) u.join();
  EXPECT_EQ(counter, iters * 4 * streams());
}

// ---------------------------------------------------------------------------------------------
// condition_variable

TEST_P(SyncMutexTest, PingPongBetweenUltsAndAThread) {
  weft::mutex m;
  weft::condition_variable cv;
  int turn = 0;  // 0: ping's turn, 1: pong's, 2: the thread's
  const int rounds = static_cast<int>(scaled(600, 30));
  auto player = [&](int me, int next) {
    for (int i = 0; i < rounds; ++i) {
      std::unique_lock lk(m);
      cv.wait(lk, [&] { return turn == me; });
      turn = next;
      cv.notify_all();
    }
  };
  weft::ult ping = weft::ult::create_on(stream(0), [&] { player(0, 1); });
  weft::ult pong = weft::ult::create_on(last_stream(), [&] { player(1, 2); });
  std::thread t([&] { player(2, 0); });
  ping.join();
  pong.join();
  t.join();
  EXPECT_EQ(turn, 0);
}

TEST_P(SyncMutexTest, NotifyOneWakesOneAndNotifyAllWakesEveryone) {
  weft::mutex m;
  weft::condition_variable cv;
  int tickets = 0;
  int done = 0;
  int waiting = 0;
  const int per_stream = 5;
  std::vector<weft::ult> us;
  auto body = [&] {
    std::unique_lock lk(m);
    ++waiting;
    cv.wait(lk, [&] { return tickets > 0; });
    --tickets;
    ++done;
  };
  for (int r = 0; r < streams(); ++r)
    for (int i = 0; i < per_stream; ++i) us.push_back(weft::ult::create_on(stream(r), body));
  std::thread t(body);
  const int total = streams() * per_stream + 1;
  ASSERT_TRUE(wait_until([&] {
    std::lock_guard g(m);
    return waiting == total;
  }));
  {
    std::lock_guard g(m);
    tickets = 1;
  }
  cv.notify_one();
  ASSERT_TRUE(wait_until([&] {
    std::lock_guard g(m);
    return done == 1;
  }));
  {
    std::lock_guard g(m);
    tickets = total - 1;
  }
  cv.notify_all();
  for (auto& u : us) u.join();
  t.join();
  EXPECT_EQ(done, total);
  EXPECT_EQ(tickets, 0);
}

TEST_P(SyncMutexTest, TimedWaitsExpireAndReacquireTheLock) {
  weft::mutex m;
  weft::condition_variable cv;
  std::atomic<int> timeouts{0};
  const auto start = std::chrono::steady_clock::now();
  auto body = [&] {
    std::unique_lock lk(m);
    if (cv.wait_for(lk, 20ms) == std::cv_status::timeout) timeouts.fetch_add(1);
    EXPECT_TRUE(lk.owns_lock());
    if (!cv.wait_for(lk, 5ms, [] { return false; })) timeouts.fetch_add(1);
    if (!cv.wait_until(lk, std::chrono::system_clock::now() + 5ms, [] { return false; }))
      timeouts.fetch_add(1);
    // The lock really is held again: nobody else can take it.
    EXPECT_FALSE(std::async(std::launch::async, [&] { return m.try_lock(); }).get());
  };
  std::vector<weft::ult> us;
  for (int r = 0; r < streams(); ++r) us.push_back(weft::ult::create_on(stream(r), body));
  std::thread t(body);
  for (auto& u : us) u.join();
  t.join();
  EXPECT_EQ(timeouts.load(), 3 * (streams() + 1));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
}

TEST_P(SyncMutexTest, TimedWaitsWokenEarly) {
  weft::mutex m;
  weft::condition_variable cv;
  bool go = false;
  int waiting = 0;
  std::atomic<int> woken{0};
  auto body = [&] {
    std::unique_lock lk(m);
    ++waiting;
    if (cv.wait_for(lk, 1h, [&] { return go; })) woken.fetch_add(1);
  };
  std::vector<weft::ult> us;
  for (int r = 0; r < streams(); ++r) us.push_back(weft::ult::create_on(stream(r), body));
  std::thread t(body);
  ASSERT_TRUE(wait_until([&] {
    std::lock_guard g(m);
    return waiting == streams() + 1;
  }));
  {
    std::lock_guard g(m);
    go = true;
  }
  cv.notify_all();
  for (auto& u : us) u.join();
  t.join();
  EXPECT_EQ(woken.load(), streams() + 1);
}

TEST_P(SyncMutexTest, TaskletsCannotWaitAndKeepTheLock) {
  weft::mutex m;
  weft::condition_variable cv;
  weft::condition_variable_any cva;
  bool still_locked = false;
  EXPECT_EQ(in_tasklet(last_stream(),
                       [&] {
                         std::unique_lock lk(m);
                         try {
                           cv.wait(lk);
                         } catch (const weft::error&) {
                           still_locked = lk.owns_lock() && !m.try_lock();
                           throw;
                         }
                       }),
            weft::errc::tasklet_cannot_block);
  EXPECT_TRUE(still_locked);
  EXPECT_EQ(in_tasklet(last_stream(),
                       [&] {
                         std::unique_lock lk(m);
                         cva.wait_for(lk, 1ms);
                       }),
            weft::errc::tasklet_cannot_block);
  EXPECT_TRUE(m.try_lock());
  m.unlock();
  // Notifying from a tasklet is fine.
  EXPECT_EQ(in_tasklet(last_stream(), [&] { cv.notify_all(); }), std::nullopt);
}

TEST_P(SyncMutexTest, ConditionVariableAnyWorksWithOtherLocks) {
  weft::recursive_mutex rm;
  std::mutex sm;
  weft::condition_variable_any cv;
  int value = 0;
  // A ULT waits on a recursive_mutex held once; an external thread waits on a std::mutex.
  weft::ult u = weft::ult::create_on(last_stream(), [&] {
    std::unique_lock lk(rm);
    cv.wait(lk, [&] { return value >= 1; });
    value = 2;
    cv.notify_all();
  });
  std::thread t([&] {
    std::unique_lock lk(sm);
    cv.wait(lk, [&] {
      std::lock_guard g(rm);
      return value == 2;
    });
  });
  {
    std::lock_guard g(rm);
    value = 1;
  }
  cv.notify_all();
  u.join();
  // The thread may have missed the notify between its predicate and its wait (it does not hold
  // rm when it waits): notify until it is out. Each notify is harmless.
  std::atomic<bool> out{false};
  std::thread joiner([&] {
    t.join();
    out = true;
  });
  ASSERT_TRUE(wait_until([&] {
    cv.notify_all();
    return out.load();
  }));
  joiner.join();
  EXPECT_EQ(value, 2);
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock lk(sm);
  EXPECT_EQ(cv.wait_for(lk, 10ms), std::cv_status::timeout);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 10ms);
}

// ---------------------------------------------------------------------------------------------
// Destruction right after the last use (docs/sync.md, "Destruction")

TEST_P(SyncMutexTest, TheLastUserMayDestroyTheMutexAsSoonAsItIsUnlocked) {
  const int rounds = static_cast<int>(scaled(80, 8));
  std::atomic<int> acquired{0};
  for (int i = 0; i < rounds; ++i) {
    auto* m = new weft::mutex;
    last_user_deletes<weft::mutex> users(m, 2);
    auto use = [&] {
      m->lock();
      acquired.fetch_add(1, std::memory_order_relaxed);
      m->unlock();
      users.leave();
    };
    // The holder is a thread, so that the woken ULT can run (and free the mutex) on any stream,
    // the primary's included, while unlock() is still returning.
    std::atomic<bool> held{false};
    std::atomic<bool> go{false};
    std::thread holder([&] {
      m->lock();
      held = true;
      while (!go) std::this_thread::yield();
      m->unlock();
    });
    ASSERT_TRUE(wait_until([&] { return held.load(); }));
    weft::ult w = weft::ult::create_on(stream(i % streams()), use);
    const bool queued = blocked(w);  // queued: the unlock takes the contended path
    std::thread t(use);              // spins or queues behind w; either may leave last
    go = true;
    w.join();
    t.join();
    holder.join();
    ASSERT_TRUE(queued);
  }
  EXPECT_EQ(acquired.load(), 2 * rounds);
}

TEST_P(SyncMutexTest, AMutexLeftContendedByATimedOutWaiterMayBeDestroyedOnceUnlocked) {
  const int rounds = static_cast<int>(scaled(80, 8));
  int timed_out = 0;
  std::atomic<int> acquired{0};
  for (int i = 0; i < rounds; ++i) {
    auto* m = new weft::mutex;
    m->lock();
    // A waiter that gives up leaves the mutex marked contended with nobody queued, so the
    // unlock below takes the contended path while a spinning try_lock() can get in at once.
    bool got = true;
    weft::ult::create_on(last_stream(), [&] { got = m->try_lock_for(0ms); }).join();
    if (!got) ++timed_out;
    std::thread spinner([&] {
      for (unsigned k = 1; !m->try_lock(); ++k) {
        if (k % 256 == 0) std::this_thread::yield();
      }
      acquired.fetch_add(1, std::memory_order_relaxed);
      m->unlock();
      delete m;  // the last user
    });
    m->unlock();
    spinner.join();
  }
  EXPECT_EQ(timed_out, rounds);
  EXPECT_EQ(acquired.load(), rounds);
}

TEST_P(SyncMutexTest, AWokenWaiterMayDestroyTheConditionVariableRightAway) {
  // As std::condition_variable allows: only the notification must happen before destruction,
  // not the return of notify_*().
  weft::mutex m;
  const int rounds = static_cast<int>(scaled(80, 8));
  int woken = 0;  // under m
  int expected = 0;
  for (int i = 0; i < rounds; ++i) {
    auto* cv = new weft::condition_variable;
    const bool all = i % 2 == 0;  // notify_all to two ULTs and a thread, or notify_one to a thread
    const int waiters = all ? 3 : 1;
    expected += waiters;
    last_user_deletes<weft::condition_variable> users(cv, waiters);
    int queued = 0;  // under m
    auto wait_once = [&] {
      std::unique_lock lk(m);
      ++queued;
      cv->wait(lk);  // no predicate: weft's condition variables have no spurious wake-ups
      ++woken;
      lk.unlock();
      users.leave();
    };
    std::vector<weft::ult> us;
    if (all) {
      us.push_back(weft::ult::create_on(stream(0), wait_once));
      us.push_back(weft::ult::create_on(last_stream(), wait_once));
    }
    std::thread t(wait_once);
    // A waiter releases m only once queued on cv: seeing them all under m means all are queued.
    ASSERT_TRUE(wait_until([&] {
      std::lock_guard g(m);
      return queued == waiters;
    }));
    // Notified from a thread, so that the woken ULTs can run on any stream meanwhile.
    std::thread notifier([&] {
      if (all) {
        cv->notify_all();
      } else {
        cv->notify_one();
      }
    });
    for (auto& u : us) u.join();
    t.join();
    notifier.join();
  }
  EXPECT_EQ(woken, expected);
}

}  // namespace
