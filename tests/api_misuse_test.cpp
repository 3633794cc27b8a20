// SPDX-License-Identifier: Apache-2.0
// Misuse of each public API family gets its documented error and leaves the runtime sound: unit
// handles (ULTs and tasklets), sync primitives, execution streams, the WEFT_* variables and the
// abt.h C API. After each misuse, fresh live units have distinct descriptors and each runs once.
// (task_group and join misuse are in join_misuse_test.cpp.)
#include <abt.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace weft_test;

/// 64 live ULTs at once have 64 descriptors, and each runs once.
void expect_fresh_units_sound() {
  constexpr int n = 64;
  std::atomic<int> runs{0};
  std::vector<weft::ult> units;
  std::set<weft::work_unit*> descriptors;
  for (int i = 0; i < n; ++i) {
    units.push_back(weft::ult::create([&runs] { runs.fetch_add(1); }));
    descriptors.insert(units.back().native_handle());
  }
  EXPECT_EQ(descriptors.size(), static_cast<std::size_t>(n)) << "a descriptor was freed twice";
  for (auto& u : units) u.join();
  EXPECT_EQ(runs.load(), n);
}

class ApiMisuseTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(ApiMisuseTest);

// --- unit handles ------------------------------------------------------------------------------

TEST_P(ApiMisuseTest, UltJoinedTwiceDetachedThenJoinedAndEmptyHandles) {
  weft::ult u = weft::ult::create([] {});
  u.join();
  EXPECT_WEFT_ERRC(u.join(), weft::errc::not_joinable);
  EXPECT_WEFT_ERRC(u.detach(), weft::errc::not_joinable);

  weft::ult d = weft::ult::create([] {});
  d.detach();
  EXPECT_FALSE(d.joinable());
  EXPECT_WEFT_ERRC(d.join(), weft::errc::not_joinable);
  EXPECT_WEFT_ERRC(d.detach(), weft::errc::not_joinable);

  weft::ult a = weft::ult::create([] {});
  weft::ult b = std::move(a);
  weft::ult never_set;
  // The moved-from handle is what is tested: empty, as documented.
  for (weft::ult* empty : {&a, &never_set}) {  // NOLINT(bugprone-use-after-move)
    EXPECT_FALSE(empty->joinable());
    EXPECT_EQ(empty->id(), 0u);
    EXPECT_EQ(empty->state(), weft::unit_state::terminated);
    EXPECT_EQ(empty->native_handle(), nullptr);
    EXPECT_WEFT_ERRC(empty->join(), weft::errc::not_joinable);
    EXPECT_WEFT_ERRC(empty->detach(), weft::errc::not_joinable);
  }
  b.join();
  expect_fresh_units_sound();
}

TEST_P(ApiMisuseTest, UltJoinsItself) {
  weft::eventual<weft::ult*> handle;
  std::optional<weft::errc> got;
  weft::ult u = weft::ult::create([&] { got = errc_of([&] { handle.wait()->join(); }); });
  handle.set(&u);
  u.join();
  EXPECT_EQ(got, std::optional<weft::errc>(weft::errc::invalid_state)) << describe(got);
  expect_fresh_units_sound();
}

TEST_P(ApiMisuseTest, MigrateAndPinOfATerminatedUlt) {
  std::atomic<bool> ran{false};
  weft::ult u = weft::ult::create([&ran] { ran = true; });
  ASSERT_TRUE(wait_until([&] { return u.state() == weft::unit_state::terminated; }));
  weft::execution_stream& last = *weft::execution_stream::by_rank(GetParam() - 1);
  // Terminated but not joined: the ULT has no next scheduling point, so both are refused.
  EXPECT_WEFT_ERRC(u.migrate_to(last), weft::errc::invalid_state);
  EXPECT_WEFT_ERRC(u.pin_to(&last), weft::errc::invalid_state);
  EXPECT_WEFT_ERRC(u.pin_to(nullptr), weft::errc::invalid_state);
  EXPECT_WEFT_ERRC(u.resume(), weft::errc::invalid_state);
  u.join();
  EXPECT_TRUE(ran.load());
  EXPECT_WEFT_ERRC(u.migrate_to(last), weft::errc::not_joinable);
  EXPECT_WEFT_ERRC(u.pin_to(&last), weft::errc::not_joinable);
  expect_fresh_units_sound();
}

TEST_P(ApiMisuseTest, TaskletJoinedTwiceDetachedThenJoinedAndEmpty) {
  weft::tasklet t = weft::tasklet::create([] {});
  t.join();
  EXPECT_WEFT_ERRC(t.join(), weft::errc::not_joinable);
  weft::tasklet d = weft::tasklet::create([] {});
  d.detach();
  EXPECT_WEFT_ERRC(d.join(), weft::errc::not_joinable);
  weft::tasklet empty;
  EXPECT_WEFT_ERRC(empty.join(), weft::errc::not_joinable);
  EXPECT_WEFT_ERRC(empty.detach(), weft::errc::not_joinable);
  // A tasklet cannot block: joining a ULT that has not ended is refused.
  weft::eventual<int> go;
  weft::ult blocker = weft::ult::create([&go] { go.wait(); });
  EXPECT_EQ(in_tasklet(weft::execution_stream::primary(), [&] { blocker.join(); }),
            std::optional<weft::errc>(weft::errc::tasklet_cannot_block));
  go.set(1);
  blocker.join();
  expect_fresh_units_sound();
}

// --- sync primitives ---------------------------------------------------------------------------

TEST_P(ApiMisuseTest, UnlockOfAnUnlockedMutexLeavesItUsable) {
  weft::mutex m;
  m.unlock();  // a precondition broken: the mutex stays unlocked, not "unlocked twice"
  ASSERT_TRUE(m.try_lock());
  EXPECT_FALSE(m.try_lock());
  m.unlock();
  const int n = static_cast<int>(scaled(64, 8));
  int count = 0;
  std::vector<weft::ult> units;
  units.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    units.push_back(weft::ult::create([&] {
      for (int k = 0; k < 100; ++k) {
        std::lock_guard lock(m);
        ++count;
        if (k % 10 == 0) weft::this_unit::yield();
      }
    }));
  for (auto& u : units) u.join();
  EXPECT_EQ(count, n * 100);
  expect_fresh_units_sound();
}

TEST_P(ApiMisuseTest, ConditionVariableWaitedWithTwoMutexes) {
  weft::condition_variable cv;
  weft::mutex first;
  weft::mutex second;
  bool go = false;
  weft::ult waiter = weft::ult::create([&] {
    std::unique_lock lock(first);
    cv.wait(lock, [&] { return go; });
  });
  ASSERT_TRUE(blocked(waiter));  // queued on cv, bound to `first`
  {
    std::unique_lock lock(second);
    EXPECT_WEFT_ERRC(cv.wait(lock), weft::errc::invalid_state);
    EXPECT_TRUE(lock.owns_lock());  // refused before the lock was released
  }
  {
    std::lock_guard lock(first);
    go = true;
  }
  cv.notify_all();
  waiter.join();
  // Nobody is queued any more: the second mutex may now be used.
  std::unique_lock lock(second);
  EXPECT_EQ(cv.wait_for(lock, std::chrono::milliseconds(1)), std::cv_status::timeout);
  lock.unlock();
  expect_fresh_units_sound();
}

TEST_P(ApiMisuseTest, BarrierOfNoPartiesAndATaskletArrivingFirst) {
  EXPECT_WEFT_ERRC(weft::barrier(0), weft::errc::invalid_state);
  weft::barrier b(2);
  // A tasklet may arrive only as the last party; its refused arrival is not counted.
  EXPECT_EQ(in_tasklet(weft::execution_stream::primary(), [&] { b.arrive_and_wait(); }),
            std::optional<weft::errc>(weft::errc::tasklet_cannot_block));
  std::atomic<int> serial{0};
  weft::ult other = weft::ult::create([&] { serial += b.arrive_and_wait(); });
  serial += b.arrive_and_wait();
  other.join();
  EXPECT_EQ(serial.load(), 1);
  expect_fresh_units_sound();
}

// --- execution streams -------------------------------------------------------------------------

TEST_P(ApiMisuseTest, PrimaryStreamCannotBeJoinedStoppedExitedOrFreed) {
  weft::execution_stream& p = weft::execution_stream::primary();
  EXPECT_WEFT_ERRC(p.join(), weft::errc::primary_stream);
  EXPECT_WEFT_ERRC(p.stop(), weft::errc::primary_stream);
  EXPECT_WEFT_ERRC(p.request_exit(), weft::errc::primary_stream);
  EXPECT_WEFT_ERRC(p.free(), weft::errc::primary_stream);
  expect_fresh_units_sound();
}

TEST_P(ApiMisuseTest, StreamJoinedTwiceOrFromItsOwnUnits) {
  weft::execution_stream& s = weft::execution_stream::create();
  std::optional<weft::errc> from_inside;
  weft::ult::create_on(s, [&] { from_inside = errc_of([&] { s.join(); }); }).join();
  EXPECT_EQ(from_inside, std::optional<weft::errc>(weft::errc::invalid_state))
      << describe(from_inside);
  s.join();
  s.join();  // already terminated: returns at once
  EXPECT_EQ(s.state(), weft::stream_state::terminated);
  s.revive();
  EXPECT_WEFT_ERRC(s.revive(), weft::errc::invalid_state);
  std::atomic<int> ran{0};
  weft::ult::create_on(s, [&ran] { ran = 1; }).join();
  EXPECT_EQ(ran.load(), 1);
  s.free();
  expect_fresh_units_sound();
}

// --- WEFT_* variables --------------------------------------------------------------------------

struct bad_env {
  const char* name;
  const char* value;
};

/// In a child: init with `e` set; exits 2 after printing the error when init rejects it with
/// errc::invalid_config, 0 when it accepts it and units run, anything else otherwise.
[[noreturn]] void init_with(const bad_env& e) {
  clean_weft_env env;
  ::setenv(e.name, e.value, 1);
  try {
    weft::runtime rt(test_config(1));
    expect_fresh_units_sound();
  } catch (const weft::error& x) {
    std::fprintf(stderr, "%s\n", x.what());
    std::_Exit(x.condition() == weft::errc::invalid_config ? 2 : 3);
  }
  std::_Exit(::testing::Test::HasFailure() ? 4 : 0);
}

class BadEnvTest : public ::testing::TestWithParam<bad_env> {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

void PrintTo(const bad_env& e, std::ostream* os) {
  *os << e.name << "=" << e.value;
}

// Every WEFT_* variable with malformed and out-of-range values: a clear error naming it.
INSTANTIATE_TEST_SUITE_P(
    , BadEnvTest,
    ::testing::Values(bad_env{"WEFT_NUM_STREAMS", "two"}, bad_env{"WEFT_NUM_STREAMS", "0"},
                      bad_env{"WEFT_NUM_STREAMS", "99999999999999999999999"},
                      bad_env{"WEFT_NUM_STREAMS", "-1"}, bad_env{"WEFT_STACK_SIZE", "lots"},
                      bad_env{"WEFT_STACK_SIZE", "16E"}, bad_env{"WEFT_STACK_SIZE", "-4k"},
                      bad_env{"WEFT_STACK_RESERVE", "x"},
                      bad_env{"WEFT_STACK_RESERVE", "999999999999T"},
                      bad_env{"WEFT_STACK_GUARDS", "maybe"}, bad_env{"WEFT_STACK_GUARDS", "-5"},
                      bad_env{"WEFT_SCHED", "no-such-scheduler"}, bad_env{"WEFT_AFFINITY", "[[["},
                      bad_env{"WEFT_AFFINITY", "0-999999999"}, bad_env{"WEFT_IDLE_SPIN", "forever"},
                      bad_env{"WEFT_PARK_LIMIT_MS", "-1"}, bad_env{"WEFT_PARK_LIMIT_MS", "1e99"},
                      bad_env{"WEFT_EVENT_FREQ", "often"}, bad_env{"WEFT_PRINT_CONFIG", "perhaps"},
                      bad_env{"WEFT_DUMP_SIGNAL", "SIGNOPE"}, bad_env{"WEFT_DUMP_SIGNAL", "9999"},
                      bad_env{"WEFT_STATS", "2"}, bad_env{"WEFT_RM", "carrier-pigeon:coo"}),
    [](const auto& info) {
      std::string s = std::string(info.param.name) + "_" + std::to_string(info.index);
      return s;
    });

TEST_P(BadEnvTest, InitRejectsItWithAMessageNamingTheVariable) {
  EXPECT_EXIT(init_with(GetParam()), ::testing::ExitedWithCode(2), GetParam().name);
}

// --- abt.h -------------------------------------------------------------------------------------

std::atomic<int> abt_runs{0};
void abt_count(void*) {
  abt_runs.fetch_add(1);
}

/// 64 live ABT threads have distinct handles and each runs once.
void expect_fresh_abt_threads_sound() {
  constexpr int n = 64;
  ABT_xstream self;
  ABT_pool pool;
  ASSERT_EQ(ABT_xstream_self(&self), ABT_SUCCESS);
  ASSERT_EQ(ABT_xstream_get_main_pools(self, 1, &pool), ABT_SUCCESS);
  abt_runs = 0;
  std::vector<ABT_thread> threads(n);
  std::set<ABT_thread> distinct;
  for (auto& t : threads) {
    ASSERT_EQ(ABT_thread_create(pool, abt_count, nullptr, ABT_THREAD_ATTR_NULL, &t), ABT_SUCCESS);
    distinct.insert(t);
  }
  EXPECT_EQ(distinct.size(), static_cast<std::size_t>(n));
  for (auto& t : threads) EXPECT_EQ(ABT_thread_free(&t), ABT_SUCCESS);
  EXPECT_EQ(abt_runs.load(), n);
}

/// Calls on NULL handles that Argobots rejects with the handle's error code.
void expect_null_handles_rejected() {
  ABT_thread null_thread = ABT_THREAD_NULL;
  EXPECT_EQ(ABT_thread_join(ABT_THREAD_NULL), ABT_ERR_INV_THREAD);
  EXPECT_EQ(ABT_thread_free(&null_thread), ABT_ERR_INV_THREAD);
  EXPECT_EQ(ABT_mutex_lock(ABT_MUTEX_NULL), ABT_ERR_INV_MUTEX);
  EXPECT_EQ(ABT_mutex_unlock(ABT_MUTEX_NULL), ABT_ERR_INV_MUTEX);
  EXPECT_EQ(ABT_eventual_wait(ABT_EVENTUAL_NULL, nullptr), ABT_ERR_INV_EVENTUAL);
  EXPECT_EQ(ABT_xstream_join(ABT_XSTREAM_NULL), ABT_ERR_INV_XSTREAM);
}

TEST(AbtMisuseTest, CallsBeforeInitNullAndFreedHandlesDoubleFreeAndAfterFinalize) {
  clean_weft_env env;
  ABT_thread t = ABT_THREAD_NULL;
  ABT_pool pool = ABT_POOL_NULL;
  ABT_mutex m = ABT_MUTEX_NULL;
  // Before ABT_init.
  EXPECT_EQ(ABT_thread_create(pool, abt_count, nullptr, ABT_THREAD_ATTR_NULL, &t),
            ABT_ERR_UNINITIALIZED);
  EXPECT_EQ(ABT_thread_join(t), ABT_ERR_UNINITIALIZED);
  EXPECT_EQ(ABT_finalize(), ABT_ERR_UNINITIALIZED);

  ASSERT_EQ(ABT_init(0, nullptr), ABT_SUCCESS);
  expect_null_handles_rejected();
  expect_fresh_abt_threads_sound();

  // Freed handles: ABT_*_free sets the handle to NULL, so a second free gets the NULL error.
  ABT_xstream self;
  ASSERT_EQ(ABT_xstream_self(&self), ABT_SUCCESS);
  ASSERT_EQ(ABT_xstream_get_main_pools(self, 1, &pool), ABT_SUCCESS);
  ASSERT_EQ(ABT_thread_create(pool, abt_count, nullptr, ABT_THREAD_ATTR_NULL, &t), ABT_SUCCESS);
  EXPECT_EQ(ABT_thread_free(&t), ABT_SUCCESS);
  EXPECT_EQ(t, ABT_THREAD_NULL);
  EXPECT_EQ(ABT_thread_free(&t), ABT_ERR_INV_THREAD);
  EXPECT_EQ(ABT_thread_join(t), ABT_ERR_INV_THREAD);
  ASSERT_EQ(ABT_mutex_create(&m), ABT_SUCCESS);
  EXPECT_EQ(ABT_mutex_free(&m), ABT_SUCCESS);
  EXPECT_EQ(m, ABT_MUTEX_NULL);
  EXPECT_EQ(ABT_mutex_free(&m), ABT_ERR_INV_MUTEX);
  ABT_eventual ev = ABT_EVENTUAL_NULL;
  ASSERT_EQ(ABT_eventual_create(0, &ev), ABT_SUCCESS);
  EXPECT_EQ(ABT_eventual_free(&ev), ABT_SUCCESS);
  EXPECT_EQ(ABT_eventual_free(&ev), ABT_ERR_INV_EVENTUAL);
  // The primary ULT cannot be joined or freed.
  ABT_thread primary;
  ASSERT_EQ(ABT_thread_self(&primary), ABT_SUCCESS);
  EXPECT_EQ(ABT_thread_join(primary), ABT_ERR_INV_THREAD);
  expect_fresh_abt_threads_sound();

  ASSERT_EQ(ABT_finalize(), ABT_SUCCESS);
  // After ABT_finalize.
  EXPECT_EQ(ABT_thread_create(pool, abt_count, nullptr, ABT_THREAD_ATTR_NULL, &t),
            ABT_ERR_UNINITIALIZED);
  EXPECT_EQ(ABT_xstream_self(&self), ABT_ERR_UNINITIALIZED);
  EXPECT_EQ(ABT_finalize(), ABT_ERR_UNINITIALIZED);

  // And a second life works.
  ASSERT_EQ(ABT_init(0, nullptr), ABT_SUCCESS);
  expect_null_handles_rejected();
  expect_fresh_abt_threads_sound();
  ASSERT_EQ(ABT_finalize(), ABT_SUCCESS);
}

}  // namespace
