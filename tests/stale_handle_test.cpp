// SPDX-License-Identifier: Apache-2.0
// Handles that outlive their runtime: after finalize(), and after a later init(), every use of a
// unit handle or a task group made under the old runtime throws errc::invalid_state without
// touching the memory its unit had, and never reaches a unit of the new runtime. Wait queues
// forget the ULTs a finalized runtime abandoned in them.
#include <abt.h>
#include <weft/condition_variable.hpp>
#include <weft/eventual.hpp>
#include <weft/mutex.hpp>
#include <weft/schedulers/fifo_pool.hpp>
#include <weft/task_group.hpp>

#include "test_support.hpp"

namespace {

using namespace weft_test;

class StaleHandleTest : public env_test {};

/// Every operation of `h` that needs its unit throws invalid_state.
void expect_stale(weft::unit_handle& h) {
  EXPECT_TRUE(h.joinable());
  EXPECT_WEFT_ERRC(h.join(), weft::errc::invalid_state);
  EXPECT_WEFT_ERRC((void)h.id(), weft::errc::invalid_state);
  EXPECT_WEFT_ERRC((void)h.state(), weft::errc::invalid_state);
  EXPECT_WEFT_ERRC((void)h.last_stream(), weft::errc::invalid_state);
  EXPECT_WEFT_ERRC((void)h.last_pool(), weft::errc::invalid_state);
  EXPECT_WEFT_ERRC((void)h.function(), weft::errc::invalid_state);
  EXPECT_WEFT_ERRC((void)h.argument(), weft::errc::invalid_state);
  EXPECT_WEFT_ERRC(h.detach(), weft::errc::invalid_state);
  EXPECT_TRUE(h.joinable()) << "a failed detach leaves the handle as it was";
}

/// Destroys `h` (by move-assigning an empty handle) and returns what it printed on stderr.
template <class H>
std::string drop(H& h) {
  testing::internal::CaptureStderr();
  h = H{};
  return testing::internal::GetCapturedStderr();
}

TEST_F(StaleHandleTest, UltHandleAfterFinalizeThrowsInvalidState) {
  weft::init(test_config(1));
  weft::ult u = weft::ult::create([] {});
  weft::finalize();  // runs the ULT, which nobody joined
  expect_stale(u);
  EXPECT_NE(what_of([&] { u.join(); }).find("finalized"), std::string::npos)
      << what_of([&] { u.join(); });
  std::shared_ptr<weft::pool> pool = weft::make_fifo_pool();
  EXPECT_WEFT_ERRC(u.migrate_to(*pool), weft::errc::invalid_state);
  EXPECT_WEFT_ERRC(u.resume(), weft::errc::invalid_state);
  EXPECT_WEFT_ERRC(u.pin_to(nullptr), weft::errc::invalid_state);
  EXPECT_NE(drop(u).find("outlived the runtime"), std::string::npos);
  EXPECT_FALSE(u.joinable());
}

TEST_F(StaleHandleTest, TaskletHandleAfterFinalizeThrowsInvalidState) {
  weft::init(test_config(1));
  weft::tasklet t = weft::tasklet::create([] {});
  weft::finalize();
  expect_stale(t);
  EXPECT_NE(drop(t).find("outlived the runtime"), std::string::npos);
}

TEST_F(StaleHandleTest, EmptyHandlesKeepTheirMeaningAfterFinalize) {
  weft::init(test_config(1));
  weft::ult u = weft::ult::create([] {});
  u.join();
  weft::finalize();
  EXPECT_EQ(u.id(), 0u);
  EXPECT_EQ(u.state(), weft::unit_state::terminated);
  EXPECT_WEFT_ERRC(u.join(), weft::errc::not_joinable);
  EXPECT_EQ(drop(u), "");
}

// The stale handle's descriptor address is reused by the new runtime's units (same allocator,
// same order): without the epoch check, join() would free one of them and id() would name it.
TEST_F(StaleHandleTest, StaleHandleNeverReachesTheNextRuntimesUnits) {
  weft::init(test_config(1));
  weft::ult old_ult = weft::ult::create([] {});
  weft::tasklet old_tasklet = weft::tasklet::create([] {});
  weft::finalize();

  weft::init(test_config(1));
  std::atomic<int> ran{0};
  std::vector<weft::ult> fresh;
  fresh.reserve(64);
  for (int i = 0; i < 64; ++i) fresh.push_back(weft::ult::create([&] { ran.fetch_add(1); }));
  expect_stale(old_ult);
  expect_stale(old_tasklet);
  EXPECT_NE(drop(old_ult).find("outlived the runtime"), std::string::npos);
  EXPECT_NE(drop(old_tasklet).find("outlived the runtime"), std::string::npos);
  for (auto& u : fresh) {
    EXPECT_NE(u.id(), 0u);
    u.join();
  }
  EXPECT_EQ(ran.load(), 64);
  // Handles of the live runtime are unaffected, moved ones included.
  weft::ult moved = weft::ult::create([&] { ran.fetch_add(1); });
  weft::ult target = std::move(moved);
  EXPECT_NO_THROW(target.join());
  EXPECT_EQ(ran.load(), 65);
  weft::finalize();
}

// A handle is one word: the descriptor's address with its runtime's tag in the bits the address
// leaves free. Every runtime number maps to a tag outside the address bits that is neither 0 (an
// empty handle) nor the no-runtime tag, recoverable for messages; consecutive runtimes never
// share a tag, and tags repeat only after handle_tags.
TEST_F(StaleHandleTest, HandleIsOneWordWithADistinctTagPerRuntime) {
  static_assert(sizeof(weft::ult) == 8 && sizeof(weft::tasklet) == 8);
  using namespace weft::detail;
  for (std::uint64_t e = 1; e <= handle_tags; ++e) {
    const std::uintptr_t tag = handle_tag(e);
    if (tag == 0 || tag == handle_no_runtime || (tag & handle_address_mask) != 0 ||
        handle_tag_number(tag) != e) {
      ADD_FAILURE() << "runtime " << e << ": tag " << tag;
      break;
    }
  }
  EXPECT_NE(handle_tag(1), handle_tag(2));
  EXPECT_EQ(handle_tag(handle_tags + 1), handle_tag(1));
  EXPECT_EQ(handle_tag(2 * handle_tags + 7), handle_tag(7));
  // The live runtime's descriptors lie below 2^47, where a handle word can name them, and the
  // handle gives back exactly the descriptor.
  weft::init(test_config(1));
  weft::ult u = weft::ult::create([] {});
  weft::work_unit* d = u.native_handle();
  EXPECT_LT(reinterpret_cast<std::uintptr_t>(d) + sizeof(weft::work_unit),
            std::uintptr_t{1} << handle_address_bits);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(d) & ~handle_address_mask, 0u);
  EXPECT_TRUE(is_live_handle(untagged(handle_word(d))));
  EXPECT_FALSE(is_live_handle(untagged(0))) << "an empty handle looks live";
  EXPECT_NE(u.id(), 0u);
  u.join();
  weft::finalize();
  EXPECT_FALSE(is_live_handle(untagged(0))) << "an empty handle looks live without a runtime";
  EXPECT_FALSE(is_live_handle(untagged(reinterpret_cast<std::uintptr_t>(d) | handle_tag(1))));
}

// Many runtimes in a row: a handle of each is stale in the next, whatever tag it carries.
TEST_F(StaleHandleTest, HandlesOfEachOfManyRuntimesGoStale) {
  weft::ult previous;
  std::atomic<int> ran{0};
  for (int i = 0; i < 40; ++i) {
    weft::init(test_config(1));
    if (previous.joinable()) {
      SCOPED_TRACE("runtime " + std::to_string(i));
      EXPECT_WEFT_ERRC(previous.join(), weft::errc::invalid_state);
      EXPECT_NE(drop(previous).find("outlived the runtime"), std::string::npos);
    }
    previous = weft::ult::create([&] { ran.fetch_add(1); });
    weft::ult joined = weft::ult::create([&] { ran.fetch_add(1); });
    joined.join();
    weft::finalize();  // runs `previous`, which nobody joined
  }
  EXPECT_EQ(ran.load(), 80);
  EXPECT_NE(drop(previous).find("outlived the runtime"), std::string::npos);
}

TEST_F(StaleHandleTest, TaskGroupOfAFinalizedRuntimeThrowsInvalidState) {
  std::atomic<int> ran{0};
  auto g = std::make_unique<weft::task_group>();
  weft::init(test_config(1));
  for (int i = 0; i < 6; ++i) g->run([&] { ran.fetch_add(1); });  // inline and vector slots
  weft::finalize();
  EXPECT_EQ(ran.load(), 6);
  EXPECT_WEFT_ERRC(g->wait(), weft::errc::invalid_state);
  EXPECT_EQ(g->size(), 6u);

  weft::init(test_config(1));
  // A run() on the stale group: the new ULT runs and is joined before the error.
  EXPECT_WEFT_ERRC(g->run([&] { ran.fetch_add(1); }), weft::errc::invalid_state);
  EXPECT_EQ(ran.load(), 7);
  testing::internal::CaptureStderr();
  g.reset();
  EXPECT_NE(testing::internal::GetCapturedStderr().find("outlived the runtime"), std::string::npos);
  // A fresh group of the new runtime works.
  weft::task_group h;
  h.run([&] { ran.fetch_add(1); });
  h.wait();
  EXPECT_EQ(ran.load(), 8);
  weft::finalize();
}

// A ULT blocked on a mutex is abandoned by finalize and its stack unmapped; unlocking the mutex
// afterwards must not touch its waiter record (a segfault before), and the mutex stays usable.
TEST_F(StaleHandleTest, MutexForgetsWaitersAFinalizedRuntimeAbandoned) {
  weft::mutex m;
  weft::init(test_config(1));
  m.lock();
  weft::ult::create([&] {
    m.lock();
    ADD_FAILURE() << "an abandoned ULT ran on";
  }).detach();
  ASSERT_TRUE(wait_until([&] { return !m.try_lock() && weft::execution_stream::self(); }));
  // Let the ULT reach its wait: it runs on this stream as soon as we yield.
  for (int i = 0; i < 4; ++i) weft::this_unit::yield();
  weft::finalize();
  m.unlock();
  EXPECT_TRUE(m.try_lock());
  m.unlock();

  // The same across a re-init: the new runtime's ULTs use the mutex as usual.
  weft::init(test_config(1));
  m.lock();
  weft::ult::create([&] { m.lock(); }).detach();
  for (int i = 0; i < 4; ++i) weft::this_unit::yield();
  weft::finalize();
  weft::init(test_config(1));
  m.unlock();
  std::atomic<int> got{0};
  weft::ult a = weft::ult::create([&] {
    m.lock();
    got.fetch_add(1);
    m.unlock();
  });
  a.join();
  EXPECT_EQ(got.load(), 1);
  weft::finalize();
}

TEST_F(StaleHandleTest, EventualAndConditionVariableForgetAbandonedWaiters) {
  weft::eventual<int> ev;
  weft::mutex m;
  weft::condition_variable cv;
  weft::init(test_config(1));
  std::atomic<int> waiting{0};
  weft::ult::create([&] {
    waiting.fetch_add(1);
    (void)ev.wait();
  }).detach();
  weft::ult::create([&] {
    std::unique_lock lock(m);
    waiting.fetch_add(1);
    cv.wait(lock);
  }).detach();
  ASSERT_TRUE(wait_until([&] { return waiting.load() == 2; }));
  for (int i = 0; i < 4; ++i) weft::this_unit::yield();
  weft::finalize();
  ev.set(7);
  EXPECT_EQ(ev.wait(), 7);  // an external thread's wait on a set eventual returns at once
  cv.notify_all();
  std::unique_lock lock(m);  // the abandoned ULT had released it inside wait()
}

void abt_noop(void*) {}

// The C API: Argobots answers a handle used after ABT_finalize with ABT_ERR_UNINITIALIZED, and so
// does weft's layer, before it looks at the handle.
TEST_F(StaleHandleTest, AbtHandlesAfterFinalizeReturnUninitialized) {
  ASSERT_EQ(ABT_init(0, nullptr), ABT_SUCCESS);
  ABT_xstream self = ABT_XSTREAM_NULL;
  ABT_pool pool = ABT_POOL_NULL;
  ASSERT_EQ(ABT_xstream_self(&self), ABT_SUCCESS);
  ASSERT_EQ(ABT_xstream_get_main_pools(self, 1, &pool), ABT_SUCCESS);
  ABT_thread t = ABT_THREAD_NULL;
  ASSERT_EQ(ABT_thread_create(pool, abt_noop, nullptr, ABT_THREAD_ATTR_NULL, &t), ABT_SUCCESS);
  ASSERT_EQ(ABT_finalize(), ABT_SUCCESS);  // runs the ULT; its handle is not freed
  EXPECT_EQ(ABT_thread_join(t), ABT_ERR_UNINITIALIZED);
  EXPECT_EQ(ABT_thread_free(&t), ABT_ERR_UNINITIALIZED);
  EXPECT_EQ(ABT_xstream_join(self), ABT_ERR_UNINITIALIZED);
  EXPECT_FALSE(weft::initialized());
}

}  // namespace
