// SPDX-License-Identifier: Apache-2.0
// Recursive fork-join with the default configuration: joins that help, depth-first order on each
// stream, bounded live ULTs, every stream used; task_group semantics.
#include <array>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "test_support.hpp"

namespace {

using weft_test::scaled;
using weft_test::spin_gate;
using weft_test::streams_test;

/// The default configuration (the work-stealing scheduler) on 1, 2 and 4 streams.
class ForkJoinTest : public streams_test {
 protected:
  void SetUp() override { init(weft_test::default_config(GetParam())); }
};
WEFT_INSTANTIATE_STREAMS(ForkJoinTest);

/// ULTs started and not yet finished, and the most there ever were at once.
struct live_counter {
  std::atomic<long> now{0};
  std::atomic<long> most{0};
  void enter() {
    const long n = now.fetch_add(1) + 1;
    long m = most.load();
    while (n > m && !most.compare_exchange_weak(m, n)) {
    }
  }
  void leave() { now.fetch_sub(1); }
};

/// fib(n) with a ULT spawned for one branch at every level, as a new user writes it.
long fib_ult(int n, live_counter* live) {
  if (n < 2) return n;
  long a = 0;
  weft::ult h = weft::ult::create([&a, n, live] {
    if (live) live->enter();
    a = fib_ult(n - 1, live);
    if (live) live->leave();
  });
  const long b = fib_ult(n - 2, live);
  h.join();
  return a + b;
}

long fib_group(int n) {
  if (n < 2) return n;
  long a = 0;
  weft::task_group g;
  g.run([&a, n] { a = fib_group(n - 1); });
  const long b = fib_group(n - 2);
  g.wait();
  return a + b;
}

long fib_serial(int n) {
  return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

/// The caller's frame address.
[[gnu::always_inline]] inline std::uintptr_t frame_here() {
  return reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
}

/// True when a frame at `inner` lies just below the frame at `outer` on the same stack: a child
/// on a stack of its own is a whole stack (at least 16 KiB and a guard page) away.
bool runs_on_the_same_stack(std::uintptr_t outer, std::uintptr_t inner) {
  return inner < outer && outer - inner < 12 * 1024;
}

TEST_P(ForkJoinTest, RecursiveUltsComputeTheRightResult) {
  const int n = weft_test::sanitized_build() ? 16 : 22;
  EXPECT_EQ(fib_ult(n, nullptr), fib_serial(n));
  EXPECT_EQ(fib_group(n), fib_serial(n));
}

TEST_P(ForkJoinTest, LiveUltsOfADeepRecursionStayBoundedByItsDepth) {
  // fib(20) spawns 10,945 ULTs; unfolded breadth-first, thousands are alive at once. Depth-first
  // (a join runs the child it finds queued, the owner takes its newest unit first), each stream
  // holds one chain of joiners at most as deep as the recursion, and a steal adds at most one
  // more chain: O(depth x streams).
  constexpr int n = 20;
  live_counter live;
  EXPECT_EQ(fib_ult(n, &live), fib_serial(n));
  EXPECT_EQ(live.now.load(), 0);
  EXPECT_LE(live.most.load(), 4L * n * streams()) << "live ULTs grew with the tree, not its depth";
}

TEST_P(ForkJoinTest, RecursiveWorkReachesEveryStreamByDefault) {
  // No pool named anywhere: the default scheduler must let idle streams steal. Each leaf records
  // its stream, then holds it (a busy wait, no yield) until every stream has run a leaf: the
  // stream that made the work cannot run the other leaves itself, they stay queued in its pool,
  // and only a stream that steals them can run them. Without stealing this would wait for ever
  // (the hang guard fails it).
  std::mutex m;
  std::set<weft::execution_stream*> seen;
  std::atomic<bool> all{false};
  const int want = streams();
  std::function<void(int)> tree = [&](int depth) {
    if (depth == 0) {
      {
        std::lock_guard lock(m);
        seen.insert(weft::this_unit::stream());
        if (static_cast<int>(seen.size()) == want) all.store(true);
      }
      const auto deadline = std::chrono::steady_clock::now() + weft_test::hang_guard;
      while (!all.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      EXPECT_TRUE(all.load());
      return;
    }
    weft::task_group g;
    g.run([&tree, depth] { tree(depth - 1); });
    g.run([&tree, depth] { tree(depth - 1); });
    g.wait();
  };
  tree(6);  // 64 leaves
  EXPECT_EQ(static_cast<int>(seen.size()), want);
}

TEST_P(ForkJoinTest, AJoinedChildThatBlocksOnTheJoinersStackGoesOnWhenWoken) {
  // The primary joins a child it just created: the child runs on the primary's stack, pinned to
  // the primary's stream while it does, blocks there, and is woken by an older ULT. With more
  // streams a thief may take the child before the join does; it then runs on a stack of its own
  // and may move, so the pin is checked only for a child found on the primary's stack.
  weft::eventual<int> ev;
  weft::execution_stream* const here = weft::this_unit::stream();
  weft::ult setter = weft::ult::create([&ev] { ev.set(42); });
  int got = 0;
  bool stayed = true;
  std::uintptr_t child_frame = 0;
  weft::ult child = weft::ult::create([&] {
    child_frame = frame_here();
    got = ev.wait();
    for (int i = 0; i < 10; ++i) {
      weft::this_unit::yield();
      if (weft::this_unit::stream() != here) stayed = false;
    }
  });
  const std::uintptr_t parent_frame = frame_here();
  child.join();
  setter.join();
  EXPECT_EQ(got, 42);
  const bool borrowed = runs_on_the_same_stack(parent_frame, child_frame);
  if (streams() == 1) {
    EXPECT_TRUE(borrowed) << "a join on one stream ran its child elsewhere";
  }
  if (borrowed) {
    EXPECT_TRUE(stayed) << "a child on the primary's stack left the primary's stream";
  }
  EXPECT_EQ(weft::this_unit::stream(), here);
}

TEST_P(ForkJoinTest, ChildrenOnTheirJoinersStacksMayMoveWithThem) {
  // ULT parents (not pinned) whose children, joined at once, yield: a child that resumes on
  // another stream takes its parent's stack along. Only the results are certain.
  std::atomic<long> sum{0};
  weft::task_group g;
  for (int i = 0; i < 8; ++i) {
    g.run([&sum, i] {
      long part = 0;
      weft::ult child = weft::ult::create([&part, i] {
        for (int k = 0; k < 20; ++k) {
          part += i;
          weft::this_unit::yield();
        }
      });
      child.join();
      sum.fetch_add(part);
    });
  }
  g.wait();
  EXPECT_EQ(sum.load(), 20L * (0 + 1 + 2 + 3 + 4 + 5 + 6 + 7));
}

/// A shared pool that only a second stream's scheduler serves, and that stream held busy by a
/// ULT from the pool until release(): units queued there meanwhile wait for a join to take them.
class busy_foreign_pool {
 public:
  busy_foreign_pool()
      : pool_(weft::make_fifo_pool(weft::access_mode::mpmc)),
        other_(weft::execution_stream::create(std::make_unique<weft::basic_scheduler>(
            std::vector<std::shared_ptr<weft::pool>>{pool_}))),
        blocker_(weft::ult::create(*pool_, [this] {
          holding_.store(true);
          gate_.hold();
        })) {}
  ~busy_foreign_pool() {
    gate_.open();
    blocker_.join();
    other_.free();
  }
  /// Waits until the other stream is held; false after the hang guard.
  bool held() {
    return weft_test::wait_until([&] { return holding_.load(); });
  }
  weft::pool& pool() { return *pool_; }

 private:
  std::shared_ptr<weft::pool> pool_;
  weft::execution_stream& other_;
  spin_gate gate_;
  std::atomic<bool> holding_{false};
  weft::ult blocker_;
};

TEST_P(ForkJoinTest, AJoinRunsAQueuedUltOnTheJoinersStream) {
  busy_foreign_pool foreign;
  ASSERT_TRUE(foreign.held());
  weft::execution_stream* ran_on = nullptr;
  weft::ult u = weft::ult::create(foreign.pool(), [&] { ran_on = weft::this_unit::stream(); });
  u.join();
  EXPECT_EQ(ran_on, weft::this_unit::stream());
}

TEST_P(ForkJoinTest, AJoinRunsAQueuedTaskletBeforeTheJoinerGoesOn) {
  busy_foreign_pool foreign;
  ASSERT_TRUE(foreign.held());
  weft::execution_stream* ran_on = nullptr;
  weft::tasklet t =
      weft::tasklet::create(foreign.pool(), [&] { ran_on = weft::this_unit::stream(); });
  t.join();
  EXPECT_EQ(ran_on, weft::this_unit::stream());
}

TEST_P(ForkJoinTest, ExceptionsAreRethrownAtWaitAndTheGroupIsReusable) {
  weft::task_group g;
  std::atomic<int> ran{0};
  for (int i = 0; i < 8; ++i) {
    g.run([&ran, i] {
      ran.fetch_add(1);
      if (i == 3) throw std::runtime_error("task 3 failed");
    });
  }
  try {
    g.wait();
    ADD_FAILURE() << "wait() did not rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "task 3 failed");
  }
  EXPECT_EQ(g.size(), 0u);
  EXPECT_FALSE(g.is_canceling());
  EXPECT_GE(ran.load(), 1);
  // Reusable: a second round runs every body.
  std::atomic<int> again{0};
  for (int i = 0; i < 8; ++i) g.run([&again] { again.fetch_add(1); });
  g.wait();
  EXPECT_EQ(again.load(), 8);
}

TEST_P(ForkJoinTest, BodiesOfEverySizeRunThrowAndAreCancelled) {
  // Bodies of up to 48 bytes live in the descriptor, larger ones are allocated: both kinds run,
  // rethrow at wait() and skip once cancelled.
  struct big_body {
    std::array<long, 8> pad{};  // 64 bytes: too large for the descriptor
    std::atomic<int>* ran;
    int throw_at;
    int i;
    void operator()() const {
      ran->fetch_add(1 + static_cast<int>(pad[0]));
      if (i == throw_at) throw std::runtime_error("big body failed");
    }
  };
  std::atomic<int> ran{0};
  weft::task_group g;
  for (int i = 0; i < 6; ++i) {
    if (i % 2) {
      g.run(big_body{{}, &ran, -1, i});
    } else {
      g.run([&ran] { ran.fetch_add(1); });
    }
  }
  g.wait();
  EXPECT_EQ(ran.load(), 6);
  g.run(big_body{{}, &ran, 0, 0});
  g.run([&ran] { ran.fetch_add(1); });
  EXPECT_THROW(g.wait(), std::runtime_error);
  EXPECT_GE(ran.load(), 7);
  ran.store(0);
  for (int i = 0; i < 10; ++i) {
    g.run(big_body{{}, &ran, -1, i});
    g.run([&ran] { ran.fetch_add(1); });
  }
  g.cancel();
  g.wait();
  EXPECT_LE(ran.load(), 20);
  EXPECT_FALSE(g.is_canceling());
}

TEST_P(ForkJoinTest, CancelSkipsBodiesThatHaveNotStarted) {
  // Other streams may start some bodies before cancel(): only the bound is known here; the exact
  // count is checked on one stream (ForkJoinOneStreamTest).
  weft::task_group g;
  std::atomic<int> ran{0};
  const int n = static_cast<int>(scaled(1000, 10));
  for (int i = 0; i < n; ++i) g.run([&ran] { ran.fetch_add(1); });
  g.cancel();
  EXPECT_TRUE(g.is_canceling());
  g.wait();
  EXPECT_LE(ran.load(), n);
  EXPECT_FALSE(g.is_canceling());
}

TEST_P(ForkJoinTest, ADestroyedGroupWaitsForItsUnits) {
  std::atomic<int> done{0};
  {
    weft::task_group g;
    for (int i = 0; i < 16; ++i) g.run([&done] { done.fetch_add(1); });
  }  // cancel + wait: nothing may run after the group is gone
  const int after = done.load();
  EXPECT_LE(after, 16);
  for (int i = 0; i < 100; ++i) weft::this_unit::yield();
  EXPECT_EQ(done.load(), after);
}

TEST_P(ForkJoinTest, NestedGroupsAndAGroupOnANamedPool) {
  auto p = weft::make_fifo_pool(weft::access_mode::mpmc);
  std::vector<std::shared_ptr<weft::pool>> pools{p};
  weft::execution_stream& s =
      weft::execution_stream::create(std::make_unique<weft::basic_scheduler>(pools));
  std::atomic<int> leaves{0};
  {
    weft::task_group outer(*p);
    for (int i = 0; i < 4; ++i) {
      outer.run([&leaves] {
        weft::task_group inner;
        for (int j = 0; j < 4; ++j) inner.run([&leaves] { leaves.fetch_add(1); });
        inner.wait();
      });
    }
    outer.wait();
  }
  EXPECT_EQ(leaves.load(), 16);
  s.free();
}

TEST_P(ForkJoinTest, ATaskletCannotWaitOnAGroupWithUnfinishedUlts) {
  weft::task_group g;
  spin_gate gate;
  g.run([&gate] { gate.hold(); });
  std::optional<weft::errc> code;
  weft::tasklet t = weft::tasklet::create([&] { code = weft_test::errc_of([&] { g.wait(); }); });
  t.join();
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, weft::errc::tasklet_cannot_block);
  EXPECT_EQ(g.size(), 1u) << "the refused wait must leave the group its unit";
  gate.open();
  g.wait();
  EXPECT_EQ(g.size(), 0u);
}

/// Orders that one stream makes exact.
class ForkJoinOneStreamTest : public weft_test::env_test {
 protected:
  void SetUp() override { rt_.emplace(weft_test::default_config(1)); }
  void TearDown() override {
    rt_.reset();
    env_test::TearDown();
  }
  std::optional<weft::runtime> rt_;
};

TEST_F(ForkJoinOneStreamTest, AYieldingUltGoesBehindTheUnitsQueuedBesideIt) {
  // The default pools are LIFO for their owner; a yield must still let every queued unit run
  // before the yielder resumes.
  std::vector<int> order;
  weft::ult a = weft::ult::create([&] {
    order.push_back(1);
    weft::ult b = weft::ult::create([&] { order.push_back(2); });
    weft::ult c = weft::ult::create([&] { order.push_back(3); });
    weft::this_unit::yield();
    order.push_back(4);
    b.join();
    c.join();
  });
  a.join();
  ASSERT_EQ(order.size(), 4u);
  EXPECT_EQ(order.front(), 1);
  EXPECT_EQ(order.back(), 4) << "the yielder came back before the units queued beside it ran";
}

TEST_F(ForkJoinOneStreamTest, TheNewestUnitRunsFirst) {
  // Depth-first: what a stream created last runs first when its creator blocks.
  std::vector<int> order;
  std::vector<weft::ult> us;
  us.reserve(5);
  for (int i = 0; i < 5; ++i) us.push_back(weft::ult::create([&order, i] { order.push_back(i); }));
  us.front()
      .join();  // not the newest: the join blocks, and the stream runs the others newest first
  for (auto& u : us)
    if (u.joinable()) u.join();
  EXPECT_EQ(order, (std::vector<int>{4, 3, 2, 1, 0}));
}

TEST_F(ForkJoinOneStreamTest, CancelBeforeAnyBodyStartedSkipsThemAll) {
  // The creator never yielded, so nothing has started: every body is skipped.
  weft::task_group g;
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i) g.run([&ran] { ran.fetch_add(1); });
  g.cancel();
  g.wait();
  EXPECT_EQ(ran.load(), 0);
  g.run([&ran] { ran.fetch_add(1); });
  g.wait();
  EXPECT_EQ(ran.load(), 1) << "wait() must clear the cancellation";
}

TEST_F(ForkJoinOneStreamTest, AThrowingBodyCancelsTheRest) {
  weft::task_group g;
  std::atomic<int> ran{0};
  // The stream runs the queued bodies newest first: the last body run() throws first, while the
  // others have not started.
  for (int i = 0; i < 10; ++i) g.run([&ran] { ran.fetch_add(1); });
  g.run([] { throw std::logic_error("first"); });
  EXPECT_THROW(g.wait(), std::logic_error);
  EXPECT_EQ(ran.load(), 0);
}

TEST_F(ForkJoinOneStreamTest, AJoinOfTheNewestUltRunsItAtOnce) {
  // The join takes the ULT back from the pool and switches to it: nothing else runs between.
  std::vector<int> order;
  weft::ult older = weft::ult::create([&] { order.push_back(1); });
  weft::ult newest = weft::ult::create([&] { order.push_back(2); });
  newest.join();
  order.push_back(3);
  older.join();
  EXPECT_EQ(order, (std::vector<int>{2, 3, 1}));
}

TEST_F(ForkJoinOneStreamTest, AJoinedUltThatNeverRanRunsOnItsJoinersStack) {
  const std::uintptr_t parent = frame_here();
  std::uintptr_t child = 0;
  weft::execution_stream* ran_on = nullptr;
  weft::ult u = weft::ult::create([&] {
    child = frame_here();
    ran_on = weft::this_unit::stream();
  });
  u.join();
  EXPECT_TRUE(runs_on_the_same_stack(parent, child))
      << "parent frame " << parent << ", child frame " << child;
  EXPECT_EQ(ran_on, weft::this_unit::stream());
}

TEST_F(ForkJoinOneStreamTest, AChildAskingMoreStackThanItsJoinerHasLeftGetsItsOwn) {
  // A ULT of the default size cannot lend a child that asks for 1 MiB: the child runs on a stack
  // of its own, which has what it asked for.
  std::uintptr_t parent = 0;
  std::uintptr_t child = 0;
  weft::ult outer = weft::ult::create([&] {
    parent = frame_here();
    weft::ult_attributes big;
    big.stack_size = 1024 * 1024;
    weft::ult inner = weft::ult::create(
        weft::this_unit::stream()->main_pool(),
        [&] {
          child = frame_here();
          volatile char deep[512 * 1024];  // uses half the stack it asked for
          deep[0] = 1;
          deep[sizeof deep - 1] = 1;
        },
        big);
    inner.join();
  });
  weft::this_unit::yield();  // outer starts on a stack of its own, not as a call on this one
  outer.join();
  EXPECT_FALSE(runs_on_the_same_stack(parent, child))
      << "parent frame " << parent << ", child frame " << child;
}

/// Frame addresses of a ULT started on a stack of its own and of the child it joins at once.
std::pair<std::uintptr_t, std::uintptr_t> parent_and_child_frames() {
  std::uintptr_t parent = 0;
  std::uintptr_t child = 0;
  weft::ult outer = weft::ult::create([&] {
    parent = frame_here();
    weft::ult inner = weft::ult::create([&] { child = frame_here(); });
    inner.join();
  });
  weft::this_unit::yield();  // outer starts on a stack of its own, not as a call on this one
  outer.join();
  return {parent, child};
}

TEST_F(ForkJoinOneStreamTest, TheStackReserveLetsAUltLendItsStack) {
  const auto [parent, child] = parent_and_child_frames();
  EXPECT_TRUE(runs_on_the_same_stack(parent, child))
      << "parent frame " << parent << ", child frame " << child;
  // Without the reserve a 16 KiB stack never has 16 KiB left to lend.
  rt_.reset();
  weft::config cfg = weft_test::default_config(1);
  cfg.stack_reserve = 0;
  rt_.emplace(cfg);
  const auto [parent0, child0] = parent_and_child_frames();
  EXPECT_FALSE(runs_on_the_same_stack(parent0, child0))
      << "parent frame " << parent0 << ", child frame " << child0;
}

TEST_F(ForkJoinOneStreamTest, ExitAndExceptionsOfAChildOnItsJoinersStackEndOnlyTheChild) {
  std::vector<int> order;
  weft::ult exits = weft::ult::create([&] {
    order.push_back(1);
    weft::this_unit::exit();
    order.push_back(-1);
  });
  exits.join();
  order.push_back(2);
  weft::ult throws = weft::ult::create([&] {
    order.push_back(3);
    throw std::runtime_error("child failed");
  });
  EXPECT_THROW(throws.join(), std::runtime_error);
  order.push_back(4);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4}));
}

TEST_F(ForkJoinOneStreamTest, ADumpShowsAJoinerThatLendsItsStackWithoutUnwindingIt) {
  // While the child blocks on the primary's stack, its parent (the primary) is blocked in the
  // join with no saved context of its own: the dump lists both and unwinds only the child.
  weft::eventual<int> ev;
  std::string dump;
  weft::ult_attributes roomy;  // symbolised backtraces need more than the default stack
  roomy.stack_size = 256 * 1024;
  weft::ult dumper = weft::ult::create(
      weft::this_unit::stream()->main_pool(),
      [&] {
        std::ostringstream out;
        weft::dump_units(out);
        dump = out.str();
        ev.set(1);
      },
      roomy);
  weft::ult child = weft::ult::create([&] { (void)ev.wait(); });
  const weft::unit_id child_id = child.id();
  const weft::unit_id primary_id = weft::this_unit::id();
  child.join();
  dumper.join();
  EXPECT_NE(dump.find("unit " + std::to_string(child_id) + " ULT blocked"), std::string::npos)
      << dump;
  EXPECT_NE(dump.find("unit " + std::to_string(primary_id) +
                      " ULT blocked: join of a unit running on its stack"),
            std::string::npos)
      << dump;
}

}  // namespace
