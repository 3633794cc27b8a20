// SPDX-License-Identifier: Apache-2.0
// ULTs: creation, join/detach, identity, yield ordering, yield_to, suspend/resume, exit,
// exceptions, migration, pinning, stack sizes, external threads.
#include <array>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "test_support.hpp"
#include "weft/internal/unit.hpp"

namespace {

using namespace weft_test;

class UltTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(UltTest);

// ----------------------------------------------------------------------------------------------
// Creation

TEST_P(UltTest, CreateInTheDefaultPool) {
  // From the primary ULT: the primary stream's main pool.
  weft::execution_stream* ran_on = nullptr;
  weft::ult u = weft::ult::create([&] { ran_on = weft::this_unit::stream(); });
  EXPECT_EQ(u.last_pool(), &weft::execution_stream::primary().main_pool());
  u.join();
  EXPECT_EQ(ran_on, &weft::execution_stream::primary());
  // From a ULT on stream r: stream r's main pool.
  for (int r = 0; r < streams(); ++r) {
    weft::execution_stream* child_on = nullptr;
    weft::ult::create_on(stream(r), [&] {
      weft::ult::create([&] { child_on = weft::this_unit::stream(); }).join();
    }).join();
    EXPECT_EQ(child_on, &stream(r)) << r;
  }
}

TEST_P(UltTest, CreateInAGivenPoolAndOnAGivenStream) {
  for (int r = 0; r < streams(); ++r) {
    weft::execution_stream* a = nullptr;
    weft::execution_stream* b = nullptr;
    weft::ult u = weft::ult::create(stream(r).main_pool(), [&] { a = weft::this_unit::stream(); });
    weft::ult v = weft::ult::create_on(stream(r), [&] { b = weft::this_unit::stream(); });
    EXPECT_EQ(u.last_pool(), &stream(r).main_pool());
    EXPECT_EQ(v.last_pool(), &stream(r).main_pool());
    u.join();
    v.join();
    EXPECT_EQ(a, &stream(r));
    EXPECT_EQ(b, &stream(r));
  }
}

void add_one(void* arg) {
  static_cast<std::atomic<int>*>(arg)->fetch_add(1);
}

TEST_P(UltTest, CStyleEntryPoint) {
  std::atomic<int> n{0};
  std::vector<weft::ult> us;
  for (int r = 0; r < streams(); ++r) {
    us.push_back(weft::ult::create(stream(r).main_pool(), &add_one, &n));
    EXPECT_EQ(us.back().function(), &add_one);
    EXPECT_EQ(us.back().argument(), &n);
  }
  us.push_back(
      weft::ult::create(stream(0).main_pool(), &add_one, &n, weft::ult_attributes{64 * 1024}));
  for (auto& u : us) u.join();
  EXPECT_EQ(n.load(), streams() + 1);
  // A C++ callable has no C entry point; its argument is the stored callable.
  weft::ult c = weft::ult::create([] {});
  EXPECT_EQ(c.function(), nullptr);
  EXPECT_NE(c.argument(), nullptr);
  c.join();
  EXPECT_EQ(c.function(), nullptr);
  EXPECT_EQ(c.argument(), nullptr);
  // A null function is refused.
  EXPECT_WEFT_ERRC(
      weft::ult::create(stream(0).main_pool(), static_cast<void (*)(void*)>(nullptr), nullptr),
      weft::errc::invalid_state);
}

TEST_P(UltTest, LargeCallablesAndMoveOnlyCaptures) {
  // Bigger than the inline storage: heap-allocated callable.
  std::array<long, 32> big{};
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<long>(i);
  long sum = 0;
  weft::ult::create_on(last_stream(), [big, &sum] {
    for (long v : big) sum += v;
  }).join();
  EXPECT_EQ(sum, 31 * 32 / 2);
  // Move-only capture, destroyed after the run.
  auto p = std::make_unique<int>(7);
  int seen = 0;
  std::weak_ptr<int> watch;
  auto shared = std::make_shared<int>(9);
  watch = shared;
  weft::ult::create_on(last_stream(), [q = std::move(p), s = std::move(shared), &seen] {
    seen = *q + *s;
  }).join();
  EXPECT_EQ(seen, 16);
  EXPECT_TRUE(watch.expired()) << "the callable is destroyed when the ULT ends";
}

// ----------------------------------------------------------------------------------------------
// join / detach / handles

TEST_P(UltTest, Detach) {
  const int n = 200;
  std::atomic<int> done{0};
  for (int i = 0; i < n; ++i) {
    weft::ult u = weft::ult::create_on(stream(i % streams()), [&] {
      weft::this_unit::yield();
      done.fetch_add(1);
    });
    EXPECT_TRUE(u.joinable());
    u.detach();
    EXPECT_FALSE(u.joinable());
    EXPECT_EQ(u.id(), 0u);
  }
  EXPECT_TRUE(wait_until([&] { return done.load() == n; }));
  EXPECT_EQ(done.load(), n);
}

TEST_P(UltTest, CreateDetachedRunsEveryUltOnceAndReportsItsException) {
  const int n = static_cast<int>(weft_test::scaled(2000, 200));
  std::atomic<int> done{0};
  for (int i = 0; i < n; ++i) {
    weft::pool& p = stream(i % streams()).main_pool();
    if (i % 2) {
      weft::ult::create_detached(p, [&] {
        weft::this_unit::yield();
        done.fetch_add(1);
      });
    } else {
      weft::ult::create_detached(
          p, [](void* arg) { static_cast<std::atomic<int>*>(arg)->fetch_add(1); }, &done);
    }
  }
  ASSERT_TRUE(wait_until([&] { return done.load() == n; }));
  testing::internal::CaptureStderr();
  std::atomic<bool> ran{false};
  weft::ult::create_detached(last_stream().main_pool(), [&] {
    ran = true;
    throw std::logic_error("detached-ult-lost");
  });
  ASSERT_TRUE(wait_until([&] { return ran.load(); }));
  finalize();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("exception escaped detached ULT"), std::string::npos) << err;
  EXPECT_NE(err.find("detached-ult-lost"), std::string::npos) << err;
  EXPECT_EQ(done.load(), n);
}

TEST_P(UltTest, DetachAfterTheUltFinished) {
  std::atomic<int> done{0};
  weft::ult u = weft::ult::create_on(last_stream(), [&] { done++; });
  ASSERT_TRUE(wait_until([&] { return u.state() == weft::unit_state::terminated; }));
  u.detach();
  EXPECT_EQ(done.load(), 1);
}

TEST_P(UltTest, HandleDestructorJoins) {
  std::atomic<int> done{0};
  {
    std::vector<weft::ult> us;
    for (int i = 0; i < 50; ++i) {
      us.push_back(weft::ult::create_on(stream(i % streams()), [&] {
        for (int j = 0; j < 5; ++j) weft::this_unit::yield();
        done.fetch_add(1);
      }));
    }
  }
  EXPECT_EQ(done.load(), 50);
  // Move-assigning over a handle that owns a unit joins that unit first.
  std::atomic<int> first{0};
  weft::ult h = weft::ult::create_on(last_stream(), [&] {
    weft::this_unit::yield();
    first = 1;
  });
  h = weft::ult::create_on(last_stream(), [] {});
  EXPECT_EQ(first.load(), 1);
  h.join();
}

TEST_P(UltTest, JoinTwiceAndMovedFromHandles) {
  weft::ult u = weft::ult::create_on(last_stream(), [] {});
  EXPECT_TRUE(u.joinable());
  u.join();
  EXPECT_FALSE(u.joinable());
  EXPECT_WEFT_ERRC(u.join(), weft::errc::not_joinable);
  EXPECT_WEFT_ERRC(u.detach(), weft::errc::not_joinable);

  weft::ult a = weft::ult::create_on(last_stream(), [] { weft::this_unit::yield(); });
  const weft::unit_id id = a.id();
  weft::ult b = std::move(a);
  EXPECT_FALSE(a.joinable());  // NOLINT(bugprone-use-after-move): the point of the test
  EXPECT_EQ(a.id(), 0u);
  EXPECT_EQ(b.id(), id);
  EXPECT_WEFT_ERRC(a.join(), weft::errc::not_joinable);
  EXPECT_WEFT_ERRC(a.resume(), weft::errc::not_joinable);
  EXPECT_WEFT_ERRC(a.migrate_to(stream(0)), weft::errc::not_joinable);
  EXPECT_WEFT_ERRC(a.pin_to(&stream(0)), weft::errc::not_joinable);
  b.join();
  EXPECT_WEFT_ERRC(b.join(), weft::errc::not_joinable);

  weft::ult empty;
  EXPECT_FALSE(empty.joinable());
  EXPECT_EQ(empty.id(), 0u);
  EXPECT_EQ(empty.state(), weft::unit_state::terminated);
  EXPECT_EQ(empty.last_stream(), nullptr);
  EXPECT_EQ(empty.last_pool(), nullptr);
  EXPECT_EQ(empty.native_handle(), nullptr);
  EXPECT_WEFT_ERRC(empty.join(), weft::errc::not_joinable);
  EXPECT_WEFT_ERRC(empty.detach(), weft::errc::not_joinable);
}

TEST_P(UltTest, IdsAreUniqueAndNonZero) {
  const int n = 300;
  std::vector<weft::unit_id> inside(n);
  std::vector<weft::unit_id> outside;
  std::vector<weft::ult> us;
  for (int i = 0; i < n; ++i) {
    us.push_back(weft::ult::create_on(stream(i % streams()), [&inside, i] {
      inside[static_cast<std::size_t>(i)] = weft::this_unit::id();
      EXPECT_EQ(weft::detail::as_unit(weft::this_unit::current())->id, weft::this_unit::id());
    }));
    outside.push_back(us.back().id());
    EXPECT_EQ(us.back().id(), outside.back());
  }
  for (auto& u : us) u.join();
  EXPECT_EQ(inside, outside);
  std::set<weft::unit_id> distinct(outside.begin(), outside.end());
  distinct.insert(weft::this_unit::id());
  EXPECT_EQ(distinct.size(), static_cast<std::size_t>(n) + 1);
  EXPECT_EQ(distinct.count(0), 0u);
  // Units created from several streams at once still get distinct ids.
  std::vector<weft::unit_id> nested(static_cast<std::size_t>(streams()) * 50);
  std::vector<weft::ult> parents;
  for (int r = 0; r < streams(); ++r) {
    parents.push_back(weft::ult::create_on(stream(r), [&nested, r] {
      for (int i = 0; i < 50; ++i) {
        weft::ult c = weft::ult::create([] {});
        nested[static_cast<std::size_t>(r * 50 + i)] = c.id();
        c.join();
      }
    }));
  }
  for (auto& p : parents) p.join();
  std::set<weft::unit_id> all(nested.begin(), nested.end());
  EXPECT_EQ(all.size(), nested.size());
}

TEST_P(UltTest, StateAndLastStream) {
  // Queued in the primary's pool, which only the primary stream pops: it cannot have run yet.
  weft::ult u = weft::ult::create([] {});
  EXPECT_EQ(u.state(), weft::unit_state::ready);
  EXPECT_EQ(u.last_stream(), nullptr);
  u.join();
  for (int r = 0; r < streams(); ++r) {
    weft::ult v = weft::ult::create_on(stream(r), [] {});
    ASSERT_TRUE(wait_until([&] { return v.state() == weft::unit_state::terminated; }));
    EXPECT_EQ(v.last_stream(), &stream(r)) << r;
    v.join();
  }
  // running, seen from inside.
  weft::unit_state inside = weft::unit_state::ready;
  weft::ult w = weft::ult::create(
      [&] { inside = weft::detail::as_unit(weft::this_unit::current())->state.load(); });
  w.join();
  EXPECT_EQ(inside, weft::unit_state::running);
}

TEST_P(UltTest, JoinChainAcrossStreams) {
  // ULT i joins ULT i-1, which runs on another stream.
  const int n = 64;
  std::vector<int> order;
  std::mutex m;
  weft::ult prev;
  for (int i = 0; i < n; ++i) {
    prev = weft::ult::create_on(stream(i % streams()), [&, i, p = std::move(prev)]() mutable {
      if (p.joinable()) p.join();
      std::lock_guard lock(m);
      order.push_back(i);
    });
  }
  prev.join();
  ASSERT_EQ(order.size(), static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
}

long fib(int n) {
  if (n < 2) return n;
  long a = 0;
  weft::ult child = weft::ult::create([&] { a = fib(n - 1); });
  const long b = fib(n - 2);
  child.join();
  return a + b;
}

TEST_P(UltTest, RecursiveForkJoin) {
  // Spread the top-level calls over the streams; every level forks in its own stream's pool.
  long results[4] = {};
  std::vector<weft::ult> us;
  const int n = test_scale() > 1 ? 13 : 16;
  for (int r = 0; r < streams(); ++r) {
    us.push_back(weft::ult::create_on(stream(r), [&results, r, n] { results[r] = fib(n); }));
  }
  for (auto& u : us) u.join();
  const long expected = n == 16 ? 987 : 233;
  for (int r = 0; r < streams(); ++r) EXPECT_EQ(results[r], expected) << r;
}

// ----------------------------------------------------------------------------------------------
// yield ordering

TEST_P(UltTest, YieldInterleavesDeterministicallyInThePrimaryPool) {
  // Only the primary stream pops its main pool, so with the primary blocked in join the two ULTs
  // alternate strictly.
  std::vector<std::string> log;
  auto body = [&log](const char* name) {
    return [&log, name] {
      for (int i = 1; i <= 4; ++i) {
        log.push_back(name + std::to_string(i));
        weft::this_unit::yield();
      }
    };
  };
  weft::ult a = weft::ult::create(body("A"));
  weft::ult b = weft::ult::create(body("B"));
  a.join();
  b.join();
  EXPECT_EQ(log, (std::vector<std::string>{"A1", "B1", "A2", "B2", "A3", "B3", "A4", "B4"}));
}

TEST_P(UltTest, YieldInterleavesDeterministicallyOnAPrivatePoolStream) {
  scoped_stream s(std::make_unique<weft::basic_scheduler>(
      std::vector{weft::make_fifo_pool(weft::access_mode::priv)}));
  std::vector<std::string> log;
  weft::ult::create_on(*s, [&log] {
    auto body = [&log](std::string name) {
      return [&log, name] {
        for (int i = 1; i <= 3; ++i) {
          log.push_back(name + std::to_string(i));
          weft::this_unit::yield();
        }
      };
    };
    weft::ult a = weft::ult::create(body("A"));
    weft::ult b = weft::ult::create(body("B"));
    weft::ult c = weft::ult::create(body("C"));
    a.join();
    b.join();
    c.join();
  }).join();
  EXPECT_EQ(log, (std::vector<std::string>{"A1", "B1", "C1", "A2", "B2", "C2", "A3", "B3", "C3"}));
}

TEST_P(UltTest, YieldFromThePrimaryLetsQueuedWorkRun) {
  int ran = 0;
  weft::ult a = weft::ult::create([&] { ran++; });
  weft::ult b = weft::ult::create([&] { ran++; });
  EXPECT_EQ(ran, 0);
  weft::this_unit::yield();  // FIFO: both ran before the primary comes back
  EXPECT_EQ(ran, 2);
  a.join();
  b.join();
}

// ----------------------------------------------------------------------------------------------
// yield_to

TEST_P(UltTest, YieldToRunsTheTargetFirst) {
  std::vector<std::string> log;
  weft::ult a = weft::ult::create([&] { log.push_back("A"); });
  weft::ult b = weft::ult::create([&] { log.push_back("B"); });
  weft::ult c = weft::ult::create([&] { log.push_back("C"); });
  EXPECT_TRUE(weft::this_unit::yield_to(c));
  log.push_back("P");
  // C ran at once; the primary went to the back of its pool, behind A and B.
  EXPECT_EQ(log, (std::vector<std::string>{"C", "A", "B", "P"}));
  a.join();
  b.join();
  c.join();
}

TEST_P(UltTest, YieldToBetweenUlts) {
  std::vector<std::string> log;
  weft::ult b;
  weft::ult a = weft::ult::create([&] {
    log.push_back("A1");
    const bool ok = weft::this_unit::yield_to(b);
    log.push_back(ok ? "A2" : "A2-false");
  });
  weft::ult filler = weft::ult::create([&] { log.push_back("F"); });
  b = weft::ult::create([&] { log.push_back("B"); });
  a.join();
  filler.join();
  b.join();
  EXPECT_EQ(log, (std::vector<std::string>{"A1", "B", "F", "A2"}));
}

TEST_P(UltTest, YieldToAUltThatRanBeforePutsTheCallerLast) {
  // The target has a saved context (it yielded before): the caller is queued at the back of its
  // pool before the switch, behind everything already there.
  std::vector<std::string> log;
  weft::ult b = weft::ult::create([&] {
    log.push_back("B1");
    weft::this_unit::yield();
    log.push_back("B2");
    weft::this_unit::yield();
    log.push_back("B3");
  });
  // The handle lets go of its unit while the primary waits in b.join(): keep the descriptor.
  weft::work_unit* const target = b.native_handle();
  weft::ult a = weft::ult::create([&] {
    log.push_back("A1");
    weft::this_unit::yield();
    log.push_back(weft::this_unit::yield_to(target) ? "A2" : "A2-false");
  });
  weft::ult f = weft::ult::create([&] {
    log.push_back("F1");
    weft::this_unit::yield();
    log.push_back("F2");
  });
  b.join();
  a.join();
  f.join();
  // A hands off to B with F queued: A goes behind F, so F2 comes before A2.
  EXPECT_EQ(log, (std::vector<std::string>{"B1", "A1", "F1", "B2", "B3", "F2", "A2"}));
}

TEST_P(UltTest, YieldToFallsBackToAPlainYield) {
  int ran = 0;
  weft::ult x = weft::ult::create([&] { ran++; });
  // Not eligible: nullptr, the caller itself. Each returns false after a plain yield, which lets
  // the queued ULT run.
  EXPECT_FALSE(weft::this_unit::yield_to(nullptr));
  EXPECT_EQ(ran, 1);
  EXPECT_FALSE(weft::this_unit::yield_to(weft::this_unit::current()));
  x.join();
  // A tasklet.
  weft::tasklet t = weft::tasklet::create([&] { ran++; });
  EXPECT_FALSE(weft::this_unit::yield_to(t.native_handle()));
  t.join();
  EXPECT_EQ(ran, 2);
  // A suspended ULT.
  weft::ult s = weft::ult::create([] { weft::this_unit::suspend(); });
  ASSERT_TRUE(wait_until([&] { return s.state() == weft::unit_state::blocked; }));
  EXPECT_FALSE(weft::this_unit::yield_to(s));
  EXPECT_EQ(s.state(), weft::unit_state::blocked);
  s.resume();
  s.join();
  // A pool that cannot remove (the default pool::remove).
  struct no_remove_pool final : weft::pool {
    no_remove_pool() : weft::pool(weft::access_mode::mpmc) {}
    std::mutex m;
    std::vector<weft::work_unit*> v;
    void do_push(weft::work_unit* u) noexcept override {
      std::lock_guard l(m);
      v.push_back(u);
    }
    weft::work_unit* pop() noexcept override {
      std::lock_guard l(m);
      if (v.empty()) return nullptr;
      auto* u = v.front();
      v.erase(v.begin());
      return u;
    }
    std::size_t size() const noexcept override {
      std::lock_guard l(const_cast<std::mutex&>(m));
      return v.size();
    }
  };
  auto nr = std::make_shared<no_remove_pool>();
  scoped_stream ns(
      std::make_unique<weft::basic_scheduler>(std::vector<std::shared_ptr<weft::pool>>{nr}));
  spin_gate gate;
  weft::ult g = weft::ult::create(*nr, [&] { gate.hold(); });
  weft::ult target = weft::ult::create(*nr, [] {});
  EXPECT_FALSE(weft::this_unit::yield_to(target));
  gate.open();
  g.join();
  target.join();
}

TEST_P(UltTest, YieldToAUltPinnedElsewhere) {
  std::optional<scoped_stream> holder;
  weft::execution_stream& t = secondary_stream(streams(), holder);
  weft::execution_stream* ran_on = nullptr;
  // Queued in the primary's pool but pinned to t: the primary may not run it.
  weft::ult target = weft::ult::create([&] { ran_on = weft::this_unit::stream(); });
  target.pin_to(&t);
  EXPECT_FALSE(weft::this_unit::yield_to(target));
  target.join();
  EXPECT_EQ(ran_on, &t);
}

TEST_P(UltTest, YieldToAUltInAnotherStreamsSingleConsumerPool) {
  if (streams() < 2) GTEST_SKIP() << "needs a second stream";
  // Stream 1 is kept busy so the target stays queued in its (mpsc) pool: the primary stream may
  // not pop from that pool, so yield_to must decline.
  spin_gate gate;
  weft::ult g = weft::ult::create_on(stream(1), [&] { gate.hold(); });
  weft::execution_stream* ran_on = nullptr;
  weft::ult target = weft::ult::create_on(stream(1), [&] { ran_on = weft::this_unit::stream(); });
  EXPECT_FALSE(weft::this_unit::yield_to(target));
  gate.open();
  g.join();
  target.join();
  EXPECT_EQ(ran_on, &stream(1));
}

TEST_P(UltTest, YieldToInASharedPoolFromAnotherStream) {
  // An mpmc pool may be popped by anyone: a ULT on the primary may yield_to a ULT queued in it.
  auto shared = weft::make_fifo_pool(weft::access_mode::mpmc);
  scoped_stream s(std::make_unique<weft::basic_scheduler>(std::vector{shared}));
  spin_gate gate;
  weft::ult g = weft::ult::create(*shared, [&] { gate.hold(); });
  ASSERT_TRUE(wait_until([&] { return g.state() == weft::unit_state::running; }));
  weft::execution_stream* ran_on = nullptr;
  weft::ult target = weft::ult::create(*shared, [&] { ran_on = weft::this_unit::stream(); });
  EXPECT_TRUE(weft::this_unit::yield_to(target));
  gate.open();
  g.join();
  target.join();
  EXPECT_EQ(ran_on, &weft::execution_stream::primary());
}

// ----------------------------------------------------------------------------------------------
// suspend / resume

TEST_P(UltTest, SuspendResume) {
  std::vector<std::string> log;
  weft::ult a = weft::ult::create([&] {
    log.push_back("a1");
    weft::this_unit::suspend();
    log.push_back("a2");
  });
  // Not suspended yet (it has not even run).
  EXPECT_WEFT_ERRC(a.resume(), weft::errc::invalid_state);
  ASSERT_TRUE(wait_until([&] { return a.state() == weft::unit_state::blocked; }));
  EXPECT_EQ(log, std::vector<std::string>{"a1"});
  // It stays suspended however often others run.
  for (int i = 0; i < 10; ++i) weft::this_unit::yield();
  EXPECT_EQ(a.state(), weft::unit_state::blocked);
  EXPECT_EQ(log, std::vector<std::string>{"a1"});
  a.resume();
  // Resumed but not yet run again (it is queued behind the primary): not suspended any more.
  EXPECT_WEFT_ERRC(a.resume(), weft::errc::invalid_state);
  a.join();
  EXPECT_EQ(log, (std::vector<std::string>{"a1", "a2"}));
  EXPECT_WEFT_ERRC(weft::resume(nullptr), weft::errc::invalid_state);
}

TEST_P(UltTest, SuspendResumeAcrossStreams) {
  // ULTs on every stream suspend; the primary resumes each (through weft::resume(work_unit*) as
  // well as the handle) once it is suspended.
  const int n = 40;
  std::atomic<int> done{0};
  std::vector<weft::ult> us;
  std::vector<std::atomic<bool>> about_to_suspend(n);
  for (int i = 0; i < n; ++i) {
    us.push_back(weft::ult::create_on(stream(i % streams()), [&, i] {
      about_to_suspend[static_cast<std::size_t>(i)] = true;
      weft::this_unit::suspend();
      done.fetch_add(1);
    }));
  }
  for (int i = 0; i < n; ++i) {
    weft::ult& u = us[static_cast<std::size_t>(i)];
    ASSERT_TRUE(wait_until([&] { return u.state() == weft::unit_state::blocked; }));
    if (i % 2) {
      u.resume();
    } else {
      weft::resume(u.native_handle());
    }
  }
  for (auto& u : us) u.join();
  EXPECT_EQ(done.load(), n);
}

// A ULT whose state() reads `blocked` after this_unit::suspend() must be resumable: state() is
// the only way the API offers to know that a ULT has suspended.
TEST_P(UltTest, ResumeRightAfterObservingBlocked) {
  if (streams() < 2) GTEST_SKIP() << "needs the suspending ULT on another stream";
  const int rounds = static_cast<int>(scaled(10000, 500));
  int failures = 0;
  std::string first;
  for (int i = 0; i < rounds && failures == 0; ++i) {
    weft::ult u =
        weft::ult::create_on(stream(1 + i % (streams() - 1)), [] { weft::this_unit::suspend(); });
    // Spin (OS-level yields only: the suspending ULT runs on another stream) and resume the
    // moment it reads as blocked.
    for (unsigned spins = 0; u.state() != weft::unit_state::blocked; ++spins) {
      if (spins % 4096 == 4095) std::this_thread::yield();
    }
    try {
      u.resume();
    } catch (const weft::error& e) {
      ++failures;
      first = "round " + std::to_string(i) + ": " + e.what();
      // Let it finish: retry until the suspension is complete.
      while (errc_of([&] { u.resume(); }) == weft::errc::invalid_state) {
      }
    }
    u.join();
  }
  EXPECT_EQ(failures, 0) << first;
}

// ----------------------------------------------------------------------------------------------
// exit

struct counted {
  std::atomic<int>* n;
  ~counted() { n->fetch_add(1); }
};

[[noreturn]] void exit_from_deep(int depth, std::atomic<int>& destroyed) {
  counted c{&destroyed};
  if (depth == 0) weft::this_unit::exit();
  exit_from_deep(depth - 1, destroyed);
}

TEST_P(UltTest, ExitUnwindsAndJoinSeesANormalEnd) {
  std::atomic<int> destroyed{0};
  std::atomic<bool> after_exit{false};
  std::vector<weft::ult> us;
  for (int r = 0; r < streams(); ++r) {
    us.push_back(weft::ult::create_on(stream(r), [&] {
      counted c{&destroyed};
      weft::this_unit::yield();
      weft::this_unit::exit();
      after_exit = true;
    }));
    us.push_back(weft::ult::create_on(stream(r), [&] { exit_from_deep(5, destroyed); }));
  }
  for (auto& u : us) EXPECT_NO_THROW(u.join());
  EXPECT_FALSE(after_exit.load());
  EXPECT_EQ(destroyed.load(), streams() * (1 + 6));
  // Detached ULTs may exit too.
  std::atomic<int> d2{0};
  for (int r = 0; r < streams(); ++r) {
    weft::ult::create_on(stream(r), [&] {
      counted c{&d2};
      weft::this_unit::exit();
    }).detach();
  }
  EXPECT_TRUE(wait_until([&] { return d2.load() == streams(); }));
}

TEST_P(UltTest, ThePrimaryCannotExitOrMigrate) {
  EXPECT_WEFT_ERRC(weft::this_unit::exit(), weft::errc::invalid_state);
  EXPECT_WEFT_ERRC(weft::this_unit::migrate_to(last_stream()), weft::errc::invalid_state);
  EXPECT_WEFT_ERRC(weft::this_unit::migrate_to(last_stream().main_pool()),
                   weft::errc::invalid_state);
  EXPECT_EQ(weft::this_unit::stream(), &weft::execution_stream::primary());
}

TEST_P(UltTest, ExternalThreadCannotActAsAUlt) {
  std::optional<weft::errc> y, s, e, m, yt;
  std::thread([&] {
    y = errc_of([] { weft::this_unit::yield(); });
    s = errc_of([] { weft::this_unit::suspend(); });
    e = errc_of([] { weft::this_unit::exit(); });
    m = errc_of([] { weft::this_unit::migrate_to(weft::execution_stream::primary()); });
    yt = errc_of([] { weft::this_unit::yield_to(nullptr); });
  }).join();
  EXPECT_TRUE(y == weft::errc::not_in_ult) << describe(y);
  EXPECT_TRUE(s == weft::errc::not_in_ult) << describe(s);
  EXPECT_TRUE(e == weft::errc::not_in_ult) << describe(e);
  EXPECT_TRUE(m == weft::errc::not_in_ult) << describe(m);
  EXPECT_TRUE(yt == weft::errc::not_in_ult) << describe(yt);
}

// ----------------------------------------------------------------------------------------------
// exceptions

struct custom_error {
  int code;
};

TEST_P(UltTest, ExceptionsEscapeToJoin) {
  for (int r = 0; r < streams(); ++r) {
    weft::ult a = weft::ult::create_on(stream(r), [] {
      weft::this_unit::yield();
      throw std::runtime_error("boom");
    });
    try {
      a.join();
      ADD_FAILURE() << "join did not rethrow";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "boom");
    }
    EXPECT_FALSE(a.joinable());
    weft::ult b = weft::ult::create_on(stream(r), [] { throw custom_error{42}; });
    try {
      b.join();
      ADD_FAILURE() << "join did not rethrow";
    } catch (const custom_error& e) {
      EXPECT_EQ(e.code, 42);
    }
    weft::ult c = weft::ult::create_on(stream(r), [] { throw 7; });
    EXPECT_THROW(c.join(), int);
    weft::ult d =
        weft::ult::create_on(stream(r), [] { throw weft::error(weft::errc::resource, "mine"); });
    EXPECT_WEFT_ERRC(d.join(), weft::errc::resource);
  }
  // After a failed unit, the runtime is fine.
  int x = 0;
  weft::ult::create([&] { x = 1; }).join();
  EXPECT_EQ(x, 1);
}

TEST_P(UltTest, ExceptionsWithoutAJoinerAreReported) {
  testing::internal::CaptureStderr();
  {
    weft::ult u =
        weft::ult::create_on(last_stream(), [] { throw std::runtime_error("lost-in-dtor"); });
  }
  std::atomic<bool> done{false};
  weft::ult::create_on(last_stream(), [&] {
    done = true;
    throw std::runtime_error("lost-detached");
  }).detach();
  ASSERT_TRUE(wait_until([&] { return done.load(); }));
  // The report is printed when the detached ULT is completed; finalize drains everything.
  finalize();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("lost-in-dtor"), std::string::npos) << err;
  EXPECT_NE(err.find("lost-detached"), std::string::npos) << err;
}

// ----------------------------------------------------------------------------------------------
// migration

TEST_P(UltTest, MigrateBeforeItRuns) {
  std::optional<scoped_stream> holder;
  weft::execution_stream& t = secondary_stream(streams(), holder);
  // Queued in the primary's pool, from which the primary may remove it: moves at once.
  weft::execution_stream* ran_on = nullptr;
  weft::ult u = weft::ult::create([&] { ran_on = weft::this_unit::stream(); });
  u.migrate_to(t);
  EXPECT_EQ(u.last_pool(), &t.main_pool());
  u.join();
  EXPECT_EQ(ran_on, &t);
  // To a pool.
  auto p = weft::make_fifo_pool(weft::access_mode::mpmc);
  scoped_stream ps(std::make_unique<weft::basic_scheduler>(std::vector{p}));
  std::atomic<weft::execution_stream*> where{nullptr};
  weft::ult v = weft::ult::create([&] { where.store(weft::this_unit::stream()); });
  v.migrate_to(*p);
  // Waited for before the join: a join of a unit still queued in a multi-consumer pool would run
  // it on the joiner's stream (a join that helps).
  EXPECT_TRUE(wait_until([&] { return where.load() != nullptr; }));
  v.join();
  EXPECT_EQ(where.load(), &*ps);
}

TEST_P(UltTest, MigrateAQueuedUltTheCallerCannotRemove) {
  std::optional<scoped_stream> holder;
  weft::execution_stream& from = secondary_stream(streams(), holder);
  // Queued behind a gate in `from`'s mpsc pool, which the primary stream may not pop: the request
  // is applied when `from` pops it.
  spin_gate gate;
  weft::ult g = weft::ult::create_on(from, [&] { gate.hold(); });
  weft::execution_stream* ran_on = nullptr;
  weft::ult u = weft::ult::create_on(from, [&] { ran_on = weft::this_unit::stream(); });
  u.migrate_to(weft::execution_stream::primary());
  gate.open();
  u.join();
  g.join();
  EXPECT_EQ(ran_on, &weft::execution_stream::primary());
}

TEST_P(UltTest, MigrateWhileSuspended) {
  std::optional<scoped_stream> holder;
  weft::execution_stream& t = secondary_stream(streams(), holder);
  weft::execution_stream* before = nullptr;
  weft::execution_stream* after = nullptr;
  weft::ult u = weft::ult::create([&] {
    before = weft::this_unit::stream();
    weft::this_unit::suspend();
    after = weft::this_unit::stream();
  });
  ASSERT_TRUE(wait_until([&] { return u.state() == weft::unit_state::blocked; }));
  u.migrate_to(t);
  EXPECT_EQ(u.state(), weft::unit_state::blocked) << "migration does not wake it";
  u.resume();
  u.join();
  EXPECT_EQ(before, &weft::execution_stream::primary());
  EXPECT_EQ(after, &t);
}

TEST_P(UltTest, SelfMigrationVisitsEveryStream) {
  std::optional<scoped_stream> holder;
  if (streams() == 1) holder.emplace();
  std::vector<weft::execution_stream*> targets;
  for (int r = 0; r < streams(); ++r) targets.push_back(&stream(r));
  if (holder) targets.push_back(&holder->get());
  std::vector<std::pair<weft::execution_stream*, weft::execution_stream*>> hops;
  weft::ult u = weft::ult::create([&] {
    for (int round = 0; round < 3; ++round) {
      for (weft::execution_stream* t : targets) {
        weft::this_unit::migrate_to(*t);
        hops.emplace_back(t, weft::this_unit::stream());
        EXPECT_EQ(weft::execution_stream::self(), t);
        weft::this_unit::yield();
        hops.emplace_back(t, weft::this_unit::stream());  // yield keeps it where it is
      }
    }
    // And to a pool.
    weft::this_unit::migrate_to(weft::execution_stream::primary().main_pool());
    hops.emplace_back(&weft::execution_stream::primary(), weft::this_unit::stream());
  });
  u.join();
  ASSERT_EQ(hops.size(), targets.size() * 6 + 1);
  for (const auto& [want, got] : hops) EXPECT_EQ(got, want);
}

TEST_P(UltTest, MigrationErrors) {
  weft::ult u = weft::ult::create_on(last_stream(), [] {});
  ASSERT_TRUE(wait_until([&] { return u.state() == weft::unit_state::terminated; }));
  EXPECT_WEFT_ERRC(u.migrate_to(stream(0)), weft::errc::invalid_state);
  u.join();
}

// ----------------------------------------------------------------------------------------------
// pinning

TEST_P(UltTest, PinnedUltRunsOnlyOnItsStream) {
  std::optional<scoped_stream> holder;
  weft::execution_stream& t = secondary_stream(streams(), holder);
  std::vector<weft::execution_stream*> seen;
  // Created in the primary's pool (it cannot have run yet), pinned to t: whoever pops it hands it
  // to t, every time it becomes ready again.
  weft::ult u = weft::ult::create([&] {
    for (int i = 0; i < 20; ++i) {
      seen.push_back(weft::this_unit::stream());
      weft::this_unit::yield();
    }
    seen.push_back(weft::this_unit::stream());
  });
  u.pin_to(&t);
  u.join();
  ASSERT_EQ(seen.size(), 21u);
  for (auto* s : seen) EXPECT_EQ(s, &t);
}

TEST_P(UltTest, UnpinnedAgain) {
  std::optional<scoped_stream> holder;
  weft::execution_stream& t = secondary_stream(streams(), holder);
  weft::execution_stream* ran_on = nullptr;
  weft::ult u = weft::ult::create([&] { ran_on = weft::this_unit::stream(); });
  u.pin_to(&t);
  u.pin_to(nullptr);
  u.join();
  EXPECT_EQ(ran_on, &weft::execution_stream::primary());
}

TEST_P(UltTest, PinnedUltsUnderLoad) {
  // Many ULTs in a shared pool served by every stream, each pinned to one stream.
  const int n = static_cast<int>(scaled(400, 40));
  auto shared = weft::make_fifo_pool(weft::access_mode::mpmc);
  std::vector<std::unique_ptr<scoped_stream>> extra;
  std::vector<weft::execution_stream*> targets;
  for (int i = 0; i < 2; ++i) {
    extra.push_back(std::make_unique<scoped_stream>(
        std::make_unique<weft::basic_scheduler>(std::vector{shared})));
    targets.push_back(&extra.back()->get());
  }
  std::atomic<int> wrong{0}, done{0};
  std::vector<weft::ult> us;
  for (int i = 0; i < n; ++i) {
    weft::execution_stream* want = targets[static_cast<std::size_t>(i) % targets.size()];
    us.push_back(weft::ult::create(weft::execution_stream::primary().main_pool(), [&, want] {
      for (int j = 0; j < 5; ++j) {
        if (weft::this_unit::stream() != want) wrong++;
        weft::this_unit::yield();
      }
      done++;
    }));
    us.back().pin_to(want);
  }
  for (auto& u : us) u.join();
  EXPECT_EQ(done.load(), n);
  EXPECT_EQ(wrong.load(), 0);
}

// ----------------------------------------------------------------------------------------------
// stacks

[[gnu::noinline]] void use_96k_of_stack() {
  volatile char buf[96 * 1024];
  buf[0] = 1;
  buf[sizeof buf - 1] = 1;
}

TEST_P(UltTest, StackSizeAttribute) {
  for (int r = 0; r < streams(); ++r) {
    std::size_t sum = 0;
    weft::ult u = weft::ult::create_on(
        stream(r),
        [&] {
          volatile unsigned char big[200 * 1024];
          for (std::size_t i = 0; i < sizeof big; i += 256)
            big[i] = static_cast<unsigned char>(i >> 8);
          for (std::size_t i = 0; i < sizeof big; i += 256) sum += big[i];
          weft::this_unit::yield();  // switch away and back with a deep stack
          sum += big[sizeof big - 256];
        },
        weft::ult_attributes{256 * 1024});
    u.join();
    EXPECT_GT(sum, 0u) << r;
  }
  // Mixed sizes, recycled between default and custom stacks. (The big frame lives in its own
  // function: a ULT with the default stack must not even reserve it.)
  std::atomic<int> ok{0};
  std::vector<weft::ult> us;
  for (int i = 0; i < 40; ++i) {
    const std::size_t size = i % 2 ? 0 : 128 * 1024;
    us.push_back(weft::ult::create(
        stream(i % streams()).main_pool(),
        [&, size] {
          if (size) use_96k_of_stack();
          ok++;
        },
        weft::ult_attributes{size}));
  }
  for (auto& u : us) u.join();
  EXPECT_EQ(ok.load(), 40);
}

// A frame of 4 KiB that reads how much stack is left below it.
[[gnu::noinline]] std::size_t stack_left_under_4k() {
  volatile unsigned char frame[4096];
  frame[0] = 1;
  const std::size_t left = weft::this_unit::stack_left();
  frame[sizeof frame - 1] = static_cast<unsigned char>(left);
  return left;
}

TEST_P(UltTest, StackLeftShrinksWithDepthAndIsZeroWithoutAStack) {
  for (int r = 0; r < streams(); ++r) {
    std::size_t top = 0, deeper = 0;
    weft::ult u = weft::ult::create_on(
        stream(r),
        [&] {
          top = weft::this_unit::stack_left();
          deeper = stack_left_under_4k();
        },
        weft::ult_attributes{64 * 1024});
    u.join();
    EXPECT_GT(top, 0u) << r;
    EXPECT_LE(top, 64u * 1024) << r;
    EXPECT_LE(deeper + 4096, top) << r;
  }
  // The primary ULT runs on its thread's stack, which has room left too.
  EXPECT_GT(weft::this_unit::stack_left(), 0u);
  // A tasklet runs on its stream's scheduler stack, an external thread on a stack weft does not
  // know: neither has a ULT stack to measure.
  std::size_t in_tasklet = 1;
  weft::tasklet t = weft::tasklet::create([&] { in_tasklet = weft::this_unit::stack_left(); });
  t.join();
  EXPECT_EQ(in_tasklet, 0u);
  std::size_t outside = 1;
  std::thread([&] { outside = weft::this_unit::stack_left(); }).join();
  EXPECT_EQ(outside, 0u);
}

// ----------------------------------------------------------------------------------------------
// external threads

TEST_P(UltTest, ExternalThreadCreatesAndJoins) {
  std::atomic<bool> finished{false};
  std::atomic<int> ran{0};
  std::vector<weft::execution_stream*> ult_on, tasklet_on;
  std::thread ext([&] {
    std::vector<weft::ult> us;
    std::vector<weft::tasklet> ts;
    us.push_back(weft::ult::create([&] { ran++; }));  // the primary's main pool
    ts.push_back(weft::tasklet::create([&] { ran++; }));
    for (int r = 0; r < streams(); ++r) {
      us.push_back(weft::ult::create_on(stream(r), [&] {
        for (int i = 0; i < 20; ++i) weft::this_unit::yield();
        ran++;
      }));
      ts.push_back(weft::tasklet::create_on(stream(r), [&] { ran++; }));
    }
    for (auto& u : us) u.join();
    for (auto& t : ts) t.join();
    // A unit created by an external thread may be joined by it even after it threw.
    weft::ult bad = weft::ult::create_on(stream(0), [] { throw std::runtime_error("ext"); });
    EXPECT_THROW(bad.join(), std::runtime_error);
    finished = true;
  });
  // The primary ULT must keep its stream running while the external thread waits.
  ASSERT_TRUE(wait_until([&] { return finished.load(); }));
  ext.join();
  EXPECT_EQ(ran.load(), 2 * (streams() + 1));
}

TEST_P(UltTest, ManyExternalThreads) {
  std::atomic<int> finished{0};
  std::atomic<int> ran{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 30; ++i) {
        weft::ult u = weft::ult::create_on(stream((t + i) % streams()), [&] { ran++; });
        weft::tasklet k = weft::tasklet::create_on(stream((t + i) % streams()), [&] { ran++; });
        if (i % 3 == 0) {
          u.detach();
        } else {
          u.join();
        }
        k.join();
      }
      finished++;
    });
  }
  ASSERT_TRUE(wait_until([&] { return finished.load() == 3; }));
  for (auto& th : threads) th.join();
  EXPECT_TRUE(wait_until([&] { return ran.load() == 3 * 30 * 2; }));
}

}  // namespace
