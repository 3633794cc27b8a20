// SPDX-License-Identifier: Apache-2.0
// Tasklets: creation, join/detach, where they run, and the operations they may not perform.
#include <stdexcept>

#include "test_support.hpp"
#include "weft/internal/unit.hpp"

namespace {

using namespace weft_test;

class TaskletTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(TaskletTest);

TEST_P(TaskletTest, CreateAndJoinOnEveryStream) {
  struct seen_t {
    weft::execution_stream* stream = nullptr;
    bool is_tasklet = false, is_ult = true;
    weft::unit_id id = 0;
    weft::unit_kind kind = weft::unit_kind::ult;
  };
  std::vector<seen_t> seen(static_cast<std::size_t>(streams()));
  std::vector<weft::tasklet> ts;
  std::vector<weft::unit_id> ids;
  for (int r = 0; r < streams(); ++r) {
    ts.push_back(weft::tasklet::create_on(stream(r), [&seen, r] {
      auto& s = seen[static_cast<std::size_t>(r)];
      s.stream = weft::this_unit::stream();
      s.is_tasklet = weft::this_unit::is_tasklet();
      s.is_ult = weft::this_unit::is_ult();
      s.id = weft::this_unit::id();
      s.kind = weft::detail::as_unit(weft::this_unit::current())->kind;
    }));
    ids.push_back(ts.back().id());
    EXPECT_NE(ids.back(), 0u);
  }
  for (auto& t : ts) t.join();
  for (int r = 0; r < streams(); ++r) {
    const auto& s = seen[static_cast<std::size_t>(r)];
    EXPECT_EQ(s.stream, &stream(r));
    EXPECT_TRUE(s.is_tasklet);
    EXPECT_FALSE(s.is_ult);
    EXPECT_EQ(s.id, ids[static_cast<std::size_t>(r)]);
    EXPECT_EQ(s.kind, weft::unit_kind::tasklet);
  }
  EXPECT_FALSE(weft::this_unit::is_tasklet());
}

TEST_P(TaskletTest, DefaultPoolGivenPoolAndCStyle) {
  weft::execution_stream* ran_on = nullptr;
  weft::tasklet a = weft::tasklet::create([&] { ran_on = weft::this_unit::stream(); });
  EXPECT_EQ(a.last_pool(), &weft::execution_stream::primary().main_pool());
  a.join();
  EXPECT_EQ(ran_on, &weft::execution_stream::primary());
  std::atomic<int> n{0};
  auto add = [](void* arg) { static_cast<std::atomic<int>*>(arg)->fetch_add(1); };
  std::vector<weft::tasklet> ts;
  for (int r = 0; r < streams(); ++r) {
    ts.push_back(weft::tasklet::create(stream(r).main_pool(), +add, &n));
    EXPECT_EQ(ts.back().function(), +add);
    EXPECT_EQ(ts.back().argument(), &n);
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(n.load(), streams());
  // From a ULT on another stream: that stream's main pool.
  weft::execution_stream* child_on = nullptr;
  weft::ult::create_on(last_stream(), [&] {
    weft::tasklet::create([&] { child_on = weft::this_unit::stream(); }).join();
  }).join();
  EXPECT_EQ(child_on, &last_stream());
}

TEST_P(TaskletTest, StateAndLastStream) {
  weft::tasklet t = weft::tasklet::create([] {});
  EXPECT_EQ(t.state(), weft::unit_state::ready);
  EXPECT_EQ(t.last_stream(), nullptr);
  t.join();
  weft::tasklet u = weft::tasklet::create_on(last_stream(), [] {});
  ASSERT_TRUE(wait_until([&] { return u.state() == weft::unit_state::terminated; }));
  EXPECT_EQ(u.last_stream(), &last_stream());
  u.join();
}

TEST_P(TaskletTest, Detach) {
  const int n = 500;
  std::atomic<int> done{0};
  for (int i = 0; i < n; ++i)
    weft::tasklet::create_on(stream(i % streams()), [&] { done++; }).detach();
  EXPECT_TRUE(wait_until([&] { return done.load() == n; }));
  EXPECT_EQ(done.load(), n);
}

TEST_P(TaskletTest, CreateDetachedRunsEveryTaskletOnce) {
  // More than a stream's descriptor cache holds, so freed descriptors must come back for reuse.
  const int n = static_cast<int>(weft_test::scaled(20000, 2000));
  std::vector<std::atomic<int>> runs(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    weft::pool& p = stream(i % streams()).main_pool();
    auto* slot = &runs[static_cast<std::size_t>(i)];
    if (i % 2) {
      weft::tasklet::create_detached(p, [slot] { slot->fetch_add(1); });
    } else {
      weft::tasklet::create_detached(
          p, [](void* arg) { static_cast<std::atomic<int>*>(arg)->fetch_add(1); }, slot);
    }
  }
  ASSERT_TRUE(wait_until([&] {
    for (auto& r : runs)
      if (r.load() == 0) return false;
    return true;
  }));
  for (int i = 0; i < n; ++i) EXPECT_EQ(runs[static_cast<std::size_t>(i)].load(), 1) << i;
}

TEST_P(TaskletTest, HandleDestructorJoinsAndJoinTwiceFails) {
  std::atomic<int> done{0};
  {
    std::vector<weft::tasklet> ts;
    for (int i = 0; i < 100; ++i)
      ts.push_back(weft::tasklet::create_on(stream(i % streams()), [&] { done++; }));
  }
  EXPECT_EQ(done.load(), 100);
  weft::tasklet t = weft::tasklet::create([] {});
  t.join();
  EXPECT_WEFT_ERRC(t.join(), weft::errc::not_joinable);
  EXPECT_WEFT_ERRC(t.detach(), weft::errc::not_joinable);
  weft::tasklet m = weft::tasklet::create([] {});
  weft::tasklet m2 = std::move(m);
  EXPECT_WEFT_ERRC(m.join(), weft::errc::not_joinable);  // NOLINT(bugprone-use-after-move)
  m2.join();
}

TEST_P(TaskletTest, ExceptionsEscapeToJoin) {
  for (int r = 0; r < streams(); ++r) {
    weft::tasklet t =
        weft::tasklet::create_on(stream(r), [] { throw std::logic_error("tasklet-boom"); });
    try {
      t.join();
      ADD_FAILURE() << "join did not rethrow";
    } catch (const std::logic_error& e) {
      EXPECT_STREQ(e.what(), "tasklet-boom");
    }
  }
}

/// Runs `body` in a tasklet on stream `s` and returns the condition join() rethrows.
template <class F>
std::optional<weft::errc> tasklet_error(weft::execution_stream& s, F body) {
  weft::tasklet t = weft::tasklet::create_on(s, std::move(body));
  return errc_of([&] { t.join(); });
}

TEST_P(TaskletTest, TaskletsCannotBlock) {
  for (int r = 0; r < streams(); ++r) {
    SCOPED_TRACE("stream " + std::to_string(r));
    weft::execution_stream& s = stream(r);
    auto e = tasklet_error(s, [] { weft::this_unit::yield(); });
    EXPECT_TRUE(e == weft::errc::tasklet_cannot_block) << "yield: " << describe(e);
    e = tasklet_error(s, [] { weft::this_unit::suspend(); });
    EXPECT_TRUE(e == weft::errc::tasklet_cannot_block) << "suspend: " << describe(e);
    e = tasklet_error(s, [] { weft::this_unit::exit(); });
    EXPECT_TRUE(e == weft::errc::tasklet_cannot_block) << "exit: " << describe(e);
    e = tasklet_error(s, [] { weft::this_unit::yield_to(nullptr); });
    EXPECT_TRUE(e == weft::errc::tasklet_cannot_block) << "yield_to: " << describe(e);
    e = tasklet_error(s, [] { weft::this_unit::migrate_to(weft::execution_stream::primary()); });
    EXPECT_TRUE(e == weft::errc::tasklet_cannot_block) << "migrate_to: " << describe(e);
  }
  // The streams are fine afterwards.
  std::atomic<int> ran{0};
  for (int r = 0; r < streams(); ++r) weft::ult::create_on(stream(r), [&] { ran++; }).join();
  EXPECT_EQ(ran.load(), streams());
}

TEST_P(TaskletTest, JoiningAnUnfinishedUnitFromATaskletIsAnError) {
  // `blocker` is suspended, so it cannot finish while the tasklet runs.
  std::atomic<bool> blocker_done{false};
  weft::ult blocker = weft::ult::create([&] {
    weft::this_unit::suspend();
    blocker_done = true;
  });
  ASSERT_TRUE(wait_until([&] { return blocker.state() == weft::unit_state::blocked; }));
  weft::work_unit* raw = blocker.native_handle();
  for (int r = 0; r < streams(); ++r) {
    weft::tasklet t = weft::tasklet::create_on(stream(r), [&] { blocker.join(); });
    EXPECT_WEFT_ERRC(t.join(), weft::errc::tasklet_cannot_block);
    if (!blocker.joinable()) break;
  }
  weft::resume(raw);
  ASSERT_TRUE(wait_until([&] { return blocker_done.load(); }));
  if (blocker.joinable()) blocker.join();
}

// A join that fails must leave the handle owning its unit (as std::thread::join does): otherwise
// the unit can never be joined or detached, its exception is lost and its descriptor leaks.
TEST_P(TaskletTest, FailedJoinFromATaskletKeepsTheHandle) {
  std::atomic<bool> blocker_done{false};
  weft::ult blocker = weft::ult::create([&] {
    weft::this_unit::suspend();
    blocker_done = true;
  });
  ASSERT_TRUE(wait_until([&] { return blocker.state() == weft::unit_state::blocked; }));
  weft::work_unit* raw = blocker.native_handle();
  std::optional<weft::errc> got;
  bool joinable_after = false;
  weft::tasklet::create_on(last_stream(), [&] {
    got = errc_of([&] { blocker.join(); });
    joinable_after = blocker.joinable();
  }).join();
  EXPECT_TRUE(got == weft::errc::tasklet_cannot_block) << describe(got);
  EXPECT_TRUE(joinable_after)
      << "the failed join released the handle: the ULT can no longer be joined";
  weft::resume(raw);
  if (blocker.joinable()) {
    blocker.join();
  } else {
    ASSERT_TRUE(wait_until([&] { return blocker_done.load(); }));
  }
  EXPECT_TRUE(blocker_done.load());
}

TEST_P(TaskletTest, JoiningAFinishedUnitFromATaskletIsFine) {
  weft::ult u = weft::ult::create_on(last_stream(), [] {});
  weft::tasklet k = weft::tasklet::create_on(last_stream(), [] {});
  ASSERT_TRUE(wait_until([&] {
    return u.state() == weft::unit_state::terminated && k.state() == weft::unit_state::terminated;
  }));
  std::optional<weft::errc> got_u, got_k;
  weft::tasklet::create([&] {
    got_u = errc_of([&] { u.join(); });
    got_k = errc_of([&] { k.join(); });
  }).join();
  EXPECT_EQ(got_u, std::nullopt) << describe(got_u);
  EXPECT_EQ(got_k, std::nullopt) << describe(got_k);
  EXPECT_FALSE(u.joinable());
  EXPECT_FALSE(k.joinable());
}

TEST_P(TaskletTest, TaskletsSpawnWork) {
  std::atomic<int> ran{0};
  std::vector<weft::tasklet> ts;
  for (int r = 0; r < streams(); ++r) {
    ts.push_back(weft::tasklet::create_on(stream(r), [&ran] {
      for (int i = 0; i < 10; ++i) {
        weft::ult::create([&ran] {
          weft::this_unit::yield();
          ran++;
        }).detach();
        weft::tasklet::create([&ran] { ran++; }).detach();
      }
    }));
  }
  for (auto& t : ts) t.join();
  EXPECT_TRUE(wait_until([&] { return ran.load() == 20 * streams(); }));
  EXPECT_EQ(ran.load(), 20 * streams());
}

TEST_P(TaskletTest, MigrateBeforeItStarts) {
  std::optional<scoped_stream> holder;
  weft::execution_stream& t = secondary_stream(streams(), holder);
  weft::execution_stream* ran_on = nullptr;
  weft::tasklet k = weft::tasklet::create([&] { ran_on = weft::this_unit::stream(); });
  k.migrate_to(t.main_pool());
  k.join();
  EXPECT_EQ(ran_on, &t);
  weft::tasklet e;
  EXPECT_WEFT_ERRC(e.migrate_to(t.main_pool()), weft::errc::not_joinable);
}

TEST_P(TaskletTest, ManyTaskletsAcrossStreams) {
  const int n = static_cast<int>(scaled(20000, 1000));
  std::vector<int> slots(static_cast<std::size_t>(n), 0);
  std::vector<weft::tasklet> ts;
  ts.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    ts.push_back(weft::tasklet::create_on(
        stream(i % streams()), [&slots, i] { slots[static_cast<std::size_t>(i)] += i + 1; }));
  }
  for (auto& t : ts) t.join();
  for (int i = 0; i < n; ++i) ASSERT_EQ(slots[static_cast<std::size_t>(i)], i + 1) << i;
}

}  // namespace
