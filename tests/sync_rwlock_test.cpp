// SPDX-License-Identifier: Apache-2.0
// rwlock and counting_semaphore, from ULTs, tasklets and external threads, on 1, 2 and 4 streams.
#include <weft/rwlock.hpp>
#include <weft/semaphore.hpp>

#include <shared_mutex>

#include "test_support.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;

class SyncRwlockTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(SyncRwlockTest);

// ---------------------------------------------------------------------------------------------
// rwlock

TEST_P(SyncRwlockTest, NeverAWriterWithAReaderOrAnotherWriter) {
  weft::rwlock rw;
  std::atomic<int> readers{0};
  std::atomic<int> writers{0};
  std::atomic<int> violations{0};
  std::atomic<int> max_readers{0};
  long data = 0;  // written by writers only, under the lock
  const int iters = static_cast<int>(scaled(1500, 40));
  auto reader = [&] {
    std::shared_lock lk(rw);
    const int r = readers.fetch_add(1) + 1;
    if (writers.load() != 0) violations.fetch_add(1);
    int m = max_readers.load();
    while (r > m && !max_readers.compare_exchange_weak(m, r)) {
    }
    const long seen = data;
    if (weft::this_unit::is_ult()) weft::this_unit::yield();
    if (data != seen) violations.fetch_add(1);
    readers.fetch_sub(1);
  };
  auto writer = [&] {
    std::unique_lock lk(rw);
    if (writers.fetch_add(1) != 0 || readers.load() != 0) violations.fetch_add(1);
    const long seen = data;
    if (weft::this_unit::is_ult()) weft::this_unit::yield();
    data = seen + 1;
    writers.fetch_sub(1);
  };
  std::vector<weft::ult> us;
  std::atomic<long> writes{0};
  for (int r = 0; r < streams(); ++r) {
    for (int i = 0; i < 6; ++i) {
      us.push_back(weft::ult::create_on(stream(r), [&, i] {
        for (int k = 0; k < iters; ++k) {
          if ((k + i) % 4 == 0) {
            writer();
            writes.fetch_add(1);
          } else {
            reader();
          }
        }
      }));
    }
  }
  std::thread t([&] {
    for (int k = 0; k < iters; ++k) {
      if (k % 2 == 0) {
        writer();
        writes.fetch_add(1);
      } else {
        reader();
      }
    }
  });
  for (auto& u : us) u.join();
  t.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(data, writes.load());
}

TEST_P(SyncRwlockTest, AWaitingWriterHoldsBackNewReaders) {
  weft::rwlock rw;
  std::mutex log_m;
  std::vector<std::string> log;
  auto note = [&](const char* s) {
    std::lock_guard g(log_m);
    log.emplace_back(s);
  };
  rw.lock_shared();  // the primary reads
  weft::ult w = weft::ult::create_on(last_stream(), [&] {
    rw.lock();
    note("writer");
    rw.unlock();
  });
  ASSERT_TRUE(blocked(w));
  // Readers arriving now queue behind the writer.
  EXPECT_FALSE(rw.try_lock_shared());
  EXPECT_FALSE(rw.try_lock_shared_for(5ms));
  weft::ult r = weft::ult::create_on(last_stream(), [&] {
    rw.lock_shared();
    note("reader");
    rw.unlock_shared();
  });
  ASSERT_TRUE(blocked(r));
  std::thread ext([&] {
    rw.lock_shared();
    note("reader");
    rw.unlock_shared();
  });
  // The primary's read lock goes; the writer is next, then both readers (the thread started
  // after the writer queued, so it queues behind it too, whenever it arrives).
  rw.unlock_shared();
  w.join();
  r.join();
  ext.join();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0], "writer");
  EXPECT_EQ(log[1], "reader");
  EXPECT_EQ(log[2], "reader");
  EXPECT_TRUE(rw.try_lock());
  EXPECT_FALSE(rw.try_lock_shared());
  rw.unlock();
}

TEST_P(SyncRwlockTest, TimedLocksExpireAndAreWokenEarly) {
  weft::rwlock rw;
  rw.lock_shared();
  std::atomic<int> timeouts{0};
  const auto start = std::chrono::steady_clock::now();
  // A writer times out; a reader that queued behind it is let in when it gives up.
  std::atomic<bool> reader_in{false};
  weft::ult w = weft::ult::create_on(last_stream(), [&] {
    if (!rw.try_lock_for(30ms)) timeouts.fetch_add(1);
  });
  ASSERT_TRUE(blocked(w));
  weft::ult r = weft::ult::create_on(last_stream(), [&] {
    rw.lock_shared();
    reader_in = true;
    rw.unlock_shared();
  });
  std::thread ext([&] {
    if (!rw.try_lock_until(std::chrono::system_clock::now() + 10ms)) timeouts.fetch_add(1);
  });
  w.join();
  ext.join();
  r.join();
  EXPECT_TRUE(reader_in.load());
  EXPECT_EQ(timeouts.load(), 2);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 30ms);
  rw.unlock_shared();
  // Woken early: a writer holds it, a reader and a writer wait for up to an hour.
  rw.lock();
  std::atomic<int> got{0};
  weft::ult r2 = weft::ult::create_on(last_stream(), [&] {
    if (rw.try_lock_shared_for(1h)) {
      got.fetch_add(1);
      rw.unlock_shared();
    }
  });
  std::thread w2([&] {
    if (rw.try_lock_for(1h)) {
      got.fetch_add(1);
      rw.unlock();
    }
  });
  ASSERT_TRUE(blocked(r2));
  rw.unlock();
  r2.join();
  w2.join();
  EXPECT_EQ(got.load(), 2);
}

TEST_P(SyncRwlockTest, TaskletsTakeItOnlyWithoutBlocking) {
  weft::rwlock rw;
  EXPECT_EQ(in_tasklet(last_stream(),
                       [&] {
                         rw.lock_shared();
                         rw.unlock_shared();
                         rw.lock();
                         rw.unlock();
                       }),
            std::nullopt);
  rw.lock_shared();
  EXPECT_EQ(in_tasklet(last_stream(), [&] { rw.lock(); }), weft::errc::tasklet_cannot_block);
  bool tried = true;
  EXPECT_EQ(in_tasklet(last_stream(), [&] { tried = rw.try_lock(); }), std::nullopt);
  EXPECT_FALSE(tried);
  rw.unlock_shared();
  rw.lock();
  EXPECT_EQ(in_tasklet(last_stream(), [&] { rw.lock_shared(); }), weft::errc::tasklet_cannot_block);
  rw.unlock();
  EXPECT_TRUE(rw.try_lock());
  rw.unlock();
}

// ---------------------------------------------------------------------------------------------
// counting_semaphore

TEST_P(SyncRwlockTest, SemaphoreBoundsConcurrency) {
  constexpr int slots = 3;
  weft::counting_semaphore<> sem(slots);
  std::atomic<int> inside{0};
  std::atomic<int> violations{0};
  std::atomic<int> passes{0};
  const int iters = static_cast<int>(scaled(1000, 30));
  auto body = [&] {
    for (int k = 0; k < iters; ++k) {
      if (k % 5 == 0) {
        while (!sem.try_acquire_for(1ms)) {
        }
      } else {
        sem.acquire();
      }
      if (inside.fetch_add(1) >= slots) violations.fetch_add(1);
      if (weft::this_unit::is_ult() && k % 3 == 0) weft::this_unit::yield();
      inside.fetch_sub(1);
      passes.fetch_add(1);
      sem.release();
    }
  };
  std::vector<weft::ult> us;
  for (int r = 0; r < streams(); ++r)
    for (int i = 0; i < 4; ++i) us.push_back(weft::ult::create_on(stream(r), body));
  std::thread t(body);
  for (auto& u : us) u.join();
  t.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(passes.load(), iters * (4 * streams() + 1));
  EXPECT_EQ(sem.value(), slots);
}

TEST_P(SyncRwlockTest, SemaphoreReleaseHandsUnitsToWaitersInOrder) {
  weft::counting_semaphore<> sem(0);
  std::vector<int> order;
  std::mutex m;
  std::vector<weft::ult> us;
  for (int i = 0; i < 4; ++i) {
    us.push_back(weft::ult::create_on(last_stream(), [&, i] {
      sem.acquire();
      std::lock_guard g(m);
      order.push_back(i);
    }));
    ASSERT_TRUE(blocked(us.back()));
  }
  sem.release(2);
  EXPECT_EQ(sem.value(), 0);  // handed over, not counted
  EXPECT_FALSE(sem.try_acquire());
  us[0].join();
  us[1].join();
  sem.release(3);  // two waiters, one left over
  us[2].join();
  us[3].join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(sem.value(), 1);
  weft::binary_semaphore b(1);
  EXPECT_EQ(weft::binary_semaphore::max(), 1);
  EXPECT_TRUE(b.try_acquire());
  EXPECT_FALSE(b.try_acquire());
}

TEST_P(SyncRwlockTest, SemaphoreTimedAcquireAndTasklets) {
  weft::counting_semaphore<> sem(0);
  std::atomic<int> timeouts{0};
  const auto start = std::chrono::steady_clock::now();
  weft::ult u = weft::ult::create_on(last_stream(), [&] {
    if (!sem.try_acquire_for(20ms)) timeouts.fetch_add(1);
  });
  std::thread t([&] {
    if (!sem.try_acquire_until(std::chrono::system_clock::now() + 20ms)) timeouts.fetch_add(1);
  });
  u.join();
  t.join();
  EXPECT_EQ(timeouts.load(), 2);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
  EXPECT_EQ(sem.value(), 0);
  std::atomic<int> got{0};
  weft::ult early = weft::ult::create_on(last_stream(), [&] {
    if (sem.try_acquire_for(1h)) got.fetch_add(1);
  });
  std::thread early_t([&] {
    if (sem.try_acquire_for(1h)) got.fetch_add(1);
  });
  ASSERT_TRUE(blocked(early));
  sem.release(2);
  early.join();
  early_t.join();
  EXPECT_EQ(got.load(), 2);
  // Tasklets: acquire when a unit is there, error when it would block, release always.
  EXPECT_EQ(in_tasklet(last_stream(), [&] { sem.acquire(); }), weft::errc::tasklet_cannot_block);
  EXPECT_EQ(in_tasklet(last_stream(), [&] { sem.release(); }), std::nullopt);
  EXPECT_EQ(in_tasklet(last_stream(), [&] { sem.acquire(); }), std::nullopt);
  EXPECT_EQ(sem.value(), 0);
}

// ---------------------------------------------------------------------------------------------
// Destruction right after the last use (docs/sync.md, "Destruction")

TEST_P(SyncRwlockTest, TheLastReaderMayDestroyTheRwlockAsSoonAsItLeaves) {
  const int rounds = static_cast<int>(scaled(80, 8));
  const int readers = streams() + 1;  // a ULT per stream and a thread, queued behind a writer
  std::atomic<int> admitted{0};
  for (int i = 0; i < rounds; ++i) {
    auto* rw = new weft::rwlock;
    last_user_deletes<weft::rwlock> users(rw, readers);
    auto read_once = [&] {
      rw->lock_shared();
      admitted.fetch_add(1, std::memory_order_relaxed);
      rw->unlock_shared();
      users.leave();
    };
    // The writer is a thread, so that the admitted ULTs can run on any stream while its
    // unlock() is still admitting the others, one by one under its lock.
    std::atomic<bool> held{false};
    std::atomic<bool> go{false};
    std::thread writer([&] {
      rw->lock();
      held = true;
      while (!go) std::this_thread::yield();
      rw->unlock();
    });
    ASSERT_TRUE(wait_until([&] { return held.load(); }));
    std::vector<weft::ult> us;
    for (int r = 0; r < streams(); ++r) us.push_back(weft::ult::create_on(stream(r), read_once));
    bool queued = true;
    for (auto& u : us) queued = blocked(u) && queued;
    std::thread t(read_once);
    go = true;
    for (auto& u : us) u.join();
    t.join();
    writer.join();
    ASSERT_TRUE(queued);
  }
  EXPECT_EQ(admitted.load(), rounds * readers);
}

TEST_P(SyncRwlockTest, TheLastAcquirerMayDestroyTheSemaphoreRightAway) {
  const int rounds = static_cast<int>(scaled(80, 8));
  const int takers = streams() + 2;  // a blocked ULT per stream, a thread, a try_acquire spinner
  std::atomic<int> acquired{0};
  for (int i = 0; i < rounds; ++i) {
    auto* sem = new weft::counting_semaphore<>(0);
    last_user_deletes<weft::counting_semaphore<>> users(sem, takers);
    auto take_one = [&] {
      sem->acquire();
      acquired.fetch_add(1, std::memory_order_relaxed);
      users.leave();
    };
    std::vector<weft::ult> us;
    for (int r = 0; r < streams(); ++r) us.push_back(weft::ult::create_on(stream(r), take_one));
    for (auto& u : us) ASSERT_TRUE(blocked(u));
    std::thread t(take_one);
    std::thread spinner([&] {
      // Takes a unit from the count without the semaphore's lock (the fast path).
      for (unsigned k = 1; !sem->try_acquire(); ++k) {
        if (k % 256 == 0) std::this_thread::yield();
      }
      acquired.fetch_add(1, std::memory_order_relaxed);
      users.leave();
    });
    // Released from a thread, so that the woken ULTs can run on any stream meanwhile: it hands
    // units to the queued ones (waking them under its lock) and adds the rest to the count.
    std::thread releaser([&] { sem->release(takers); });
    for (auto& u : us) u.join();
    t.join();
    spinner.join();
    releaser.join();
  }
  EXPECT_EQ(acquired.load(), rounds * takers);
}

}  // namespace
