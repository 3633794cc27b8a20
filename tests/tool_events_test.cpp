// SPDX-License-Identifier: Apache-2.0
// The Argobots tool interface (ABT_tool_register_thread_callback) sees units created through
// weft's C++ API: the same events, in the same order, as it sees for units created through
// ABT_ calls, and no event twice.
#include <abt.h>

#include <mutex>

#include "test_support.hpp"
#include "weft/eventual.hpp"
#include "weft/mutex.hpp"

namespace {

using namespace weft_test;

struct recorded {
  std::mutex mutex;
  std::map<ABT_thread, std::vector<std::uint64_t>> events;
  std::map<ABT_thread, std::vector<ABT_sync_event_type>> suspend_types;  // per SUSPEND event
};

void record(ABT_thread thread, ABT_xstream, std::uint64_t event, ABT_tool_context ctx, void* arg) {
  auto* r = static_cast<recorded*>(arg);
  std::lock_guard lock(r->mutex);
  r->events[thread].push_back(event);
  if (event == ABT_TOOL_EVENT_THREAD_SUSPEND) {
    ABT_sync_event_type type = ABT_SYNC_EVENT_TYPE_USER;  // overwritten by the query
    if (ABT_tool_query_thread(ctx, event, ABT_TOOL_QUERY_KIND_SYNC_OBJECT_TYPE, &type) !=
        ABT_SUCCESS)
      type = static_cast<ABT_sync_event_type>(-1);
    r->suspend_types[thread].push_back(type);
  }
}

ABT_thread handle(const weft::unit_handle& u) {
  return reinterpret_cast<ABT_thread>(u.native_handle());
}

constexpr std::uint64_t create = ABT_TOOL_EVENT_THREAD_CREATE;
constexpr std::uint64_t run = ABT_TOOL_EVENT_THREAD_RUN;
constexpr std::uint64_t yield = ABT_TOOL_EVENT_THREAD_YIELD;
constexpr std::uint64_t suspend = ABT_TOOL_EVENT_THREAD_SUSPEND;
constexpr std::uint64_t resume = ABT_TOOL_EVENT_THREAD_RESUME;
constexpr std::uint64_t finish = ABT_TOOL_EVENT_THREAD_FINISH;
constexpr std::uint64_t join = ABT_TOOL_EVENT_THREAD_JOIN;
constexpr std::uint64_t free_ = ABT_TOOL_EVENT_THREAD_FREE;

class ToolEventsTest : public env_test {
 protected:
  void SetUp() override {
    ASSERT_EQ(ABT_init(0, nullptr), ABT_SUCCESS);
    ASSERT_EQ(ABT_tool_register_thread_callback(&record, ABT_TOOL_EVENT_THREAD_ALL, &rec_),
              ABT_SUCCESS);
  }
  void TearDown() override {
    EXPECT_EQ(ABT_tool_register_thread_callback(nullptr, ABT_TOOL_EVENT_THREAD_NONE, nullptr),
              ABT_SUCCESS);
    EXPECT_EQ(ABT_finalize(), ABT_SUCCESS);
    env_test::TearDown();
  }
  /// The events recorded for `t` so far.
  std::vector<std::uint64_t> of(ABT_thread t) {
    std::lock_guard lock(rec_.mutex);
    return rec_.events[t];
  }
  recorded rec_;
};

using seq = std::vector<std::uint64_t>;

TEST_F(ToolEventsTest, UltThatYields) {
  weft::ult u = weft::ult::create([] { weft::this_unit::yield(); });
  const ABT_thread h = handle(u);
  u.join();
  EXPECT_EQ(of(h), (seq{create, run, yield, run, finish, join, free_}));
}

TEST_F(ToolEventsTest, UltsThatYieldToEachOther) {
  // Two ready ULTs that yield in turn: each yield switches straight to the other (the direct
  // yield's jump), which reports the yield together with the run it starts.
  auto body = [] {
    for (int i = 0; i < 3; ++i) weft::this_unit::yield();
  };
  weft::ult a = weft::ult::create(body);
  weft::ult b = weft::ult::create(body);
  const ABT_thread ha = handle(a);
  const ABT_thread hb = handle(b);
  a.join();
  b.join();
  for (const ABT_thread h : {ha, hb}) {
    EXPECT_EQ(of(h), (seq{create, run, yield, run, yield, run, yield, run, finish, join, free_}));
  }
}

TEST_F(ToolEventsTest, UltThatBlocksAndIsWoken) {
  weft::eventual<void> ev;
  weft::ult u = weft::ult::create([&] { ev.wait(); });
  const ABT_thread h = handle(u);
  while (u.state() != weft::unit_state::blocked) weft::this_unit::yield();
  ev.set();
  u.join();
  EXPECT_EQ(of(h), (seq{create, run, suspend, resume, run, finish, join, free_}));
}

TEST_F(ToolEventsTest, ABlockedCxxUnitReportsWhatItWaitsFor) {
  weft::mutex m;
  weft::eventual<void> ev;
  m.lock();
  weft::ult on_mutex = weft::ult::create([&] {
    m.lock();
    m.unlock();
  });
  weft::ult on_eventual = weft::ult::create([&] { ev.wait(); });
  const ABT_thread hm = handle(on_mutex);
  const ABT_thread he = handle(on_eventual);
  while (on_mutex.state() != weft::unit_state::blocked ||
         on_eventual.state() != weft::unit_state::blocked)
    weft::this_unit::yield();
  m.unlock();
  ev.set();
  on_mutex.join();
  on_eventual.join();
  std::lock_guard lock(rec_.mutex);
  EXPECT_EQ(rec_.suspend_types[hm], std::vector<ABT_sync_event_type>{ABT_SYNC_EVENT_TYPE_MUTEX});
  EXPECT_EQ(rec_.suspend_types[he], std::vector<ABT_sync_event_type>{ABT_SYNC_EVENT_TYPE_EVENTUAL});
}

TEST_F(ToolEventsTest, UltThatSuspendsItself) {
  weft::ult u = weft::ult::create([] { weft::this_unit::suspend(); });
  const ABT_thread h = handle(u);
  while (u.state() != weft::unit_state::blocked) weft::this_unit::yield();
  u.resume();
  u.join();
  EXPECT_EQ(of(h), (seq{create, run, suspend, resume, run, finish, join, free_}));
}

TEST_F(ToolEventsTest, Tasklet) {
  weft::tasklet t = weft::tasklet::create([] {});
  const ABT_thread h = handle(t);
  t.join();
  EXPECT_EQ(of(h), (seq{create, run, finish, join, free_}));
}

TEST_F(ToolEventsTest, DetachedUltIsFreedAtItsEnd) {
  std::atomic<bool> done{false};
  weft::pool& p = weft::execution_stream::primary().main_pool();
  weft::ult keep = weft::ult::create(p, [&] { done = true; });
  const ABT_thread h = handle(keep);
  keep.detach();
  while (!done.load()) weft::this_unit::yield();
  weft::this_unit::yield();  // lets it end
  EXPECT_EQ(of(h), (seq{create, run, finish, free_}));
}

TEST_F(ToolEventsTest, CxxUnitCallingAbtReportsEachEventOnce) {
  weft::ult u = weft::ult::create([] { ABT_thread_yield(); });
  const ABT_thread h = handle(u);
  u.join();
  EXPECT_EQ(of(h), (seq{create, run, yield, run, finish, join, free_}));
}

TEST_F(ToolEventsTest, AbtUnitsAreNotReportedTwice) {
  ABT_xstream xs;
  ASSERT_EQ(ABT_xstream_self(&xs), ABT_SUCCESS);
  ABT_pool pool;
  ASSERT_EQ(ABT_xstream_get_main_pools(xs, 1, &pool), ABT_SUCCESS);
  ABT_thread t;
  ASSERT_EQ(ABT_thread_create(
                pool, [](void*) {}, nullptr, ABT_THREAD_ATTR_NULL, &t),
            ABT_SUCCESS);
  const ABT_thread h = t;
  ASSERT_EQ(ABT_thread_free(&t), ABT_SUCCESS);
  std::map<std::uint64_t, int> n;
  for (std::uint64_t e : of(h)) ++n[e];
  EXPECT_EQ(n[create], 1);
  EXPECT_EQ(n[run], 1);
  EXPECT_EQ(n[finish], 1);
  EXPECT_EQ(n[free_], 1);
}

}  // namespace
