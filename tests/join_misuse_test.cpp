// SPDX-License-Identifier: Apache-2.0
// Misuse of joins and task groups gets its documented error and leaves the runtime sound: after
// each misuse, fresh live ULTs have distinct descriptors (none was freed twice) and each runs once.
#include <set>

#include "test_support.hpp"

namespace {

using weft_test::streams_test;

/// Per-stream pools that nothing steals from ("basic"): a group's ULTs run on the stream that
/// made them, so each misuse happens in one order.
class JoinMisuseTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(JoinMisuseTest);

/// The default configuration: the work-stealing scheduler, whose joins run a child that never
/// ran as a call on the joiner's stack.
class JoinMisuseDefaultTest : public streams_test {
 protected:
  void SetUp() override { init(weft_test::default_config(GetParam())); }
};
WEFT_INSTANTIATE_STREAMS(JoinMisuseDefaultTest);

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

/// Children that wait on their own group while its owner waits on it.
void children_wait_on_their_group() {
  weft::task_group g;
  std::atomic<int> refused{0};
  constexpr int n = 4;
  for (int i = 0; i < n; ++i) {
    g.run([&g, &refused] {
      try {
        g.wait();
      } catch (const weft::error& e) {
        if (e.code() == weft::errc::invalid_state) refused.fetch_add(1);
      }
    });
  }
  g.wait();
  EXPECT_EQ(refused.load(), n);
  EXPECT_EQ(g.size(), 0u);
  expect_fresh_units_sound();
}

TEST_P(JoinMisuseTest, ChildWaitsOnItsOwnGroup) {
  children_wait_on_their_group();
}

TEST_P(JoinMisuseDefaultTest, ChildWaitsOnItsOwnGroup) {
  // One stream: each child runs inside the wait, as a call on its stack. With more, a child
  // another stream steals could call wait() before its parent does, racing with its run().
  if (streams() > 1) GTEST_SKIP() << "one stream only";
  children_wait_on_their_group();
}

TEST_P(JoinMisuseTest, SecondConcurrentWait) {
  weft::task_group g;
  weft::mutex m;
  std::atomic<int> runs{0};
  m.lock();
  g.run([&] {
    std::lock_guard lk(m);
    runs.fetch_add(1);
  });
  weft::ult first = weft::ult::create([&g] { g.wait(); });
  ASSERT_TRUE(weft_test::blocked(first));  // inside its wait
  EXPECT_WEFT_ERRC(g.wait(), weft::errc::invalid_state);
  m.unlock();
  first.join();
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(g.size(), 0u);
  expect_fresh_units_sound();
}

TEST_P(JoinMisuseTest, RunFromABodyWhileItsGroupIsWaitedFor) {
  weft::task_group g;
  std::atomic<int> runs{0};
  g.run([&] {
    runs.fetch_add(1);
    g.run([&runs] { runs.fetch_add(100); });
  });
  EXPECT_WEFT_ERRC(g.wait(), weft::errc::invalid_state);
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(g.size(), 0u);
  g.run([&runs] { runs.fetch_add(1); });  // usable again
  g.wait();
  EXPECT_EQ(runs.load(), 2);
  expect_fresh_units_sound();
}

TEST_P(JoinMisuseTest, RunAfterCancel) {
  weft::task_group g;
  std::atomic<int> runs{0};
  g.cancel();
  for (int i = 0; i < 4; ++i) g.run([&runs] { runs.fetch_add(1); });
  g.wait();
  EXPECT_EQ(runs.load(), 0);  // cancelled before they started
  EXPECT_FALSE(g.is_canceling());
  g.run([&runs] { runs.fetch_add(1); });
  g.wait();
  EXPECT_EQ(runs.load(), 1);
  expect_fresh_units_sound();
}

TEST_P(JoinMisuseTest, DestroyedWhileAChildRuns) {
  std::atomic<int> started{0}, finished{0};
  {
    weft::task_group g;
    for (int i = 0; i < 4; ++i) {
      g.run([&] {
        started.fetch_add(1);
        for (int k = 0; k < 3; ++k) weft::this_unit::yield();
        finished.fetch_add(1);
      });
    }
    // The first child runs and yields back here; the group goes without a wait.
    ASSERT_TRUE(weft_test::wait_until([&] { return started.load() > 0; }));
  }
  EXPECT_EQ(started.load(), finished.load());  // the destructor waited for the started ones
  expect_fresh_units_sound();
}

/// A second join of a unit while its first join waits for it gets errc::not_joinable. `borrow`:
/// the first join finds it not yet run (and may run it as a call on the joiner's stack); else it
/// starts on its own stack before the join.
void second_join_while_joined(bool borrow, int streams) {
  weft::mutex m;
  std::atomic<bool> started{false};
  std::atomic<std::uintptr_t> child_frame{0};
  weft::ult child;
  std::uintptr_t joiner_frame = 0;
  m.lock();
  weft::ult joiner = weft::ult::create([&] {
    int here = 0;
    joiner_frame = reinterpret_cast<std::uintptr_t>(&here);
    child = weft::ult::create([&] {
      int mine = 0;
      child_frame = reinterpret_cast<std::uintptr_t>(&mine);
      started = true;
      std::lock_guard lk(m);
    });
    if (!borrow) {
      while (!started) weft::this_unit::yield();
    }
    child.join();
  });
  ASSERT_TRUE(weft_test::blocked(joiner));  // inside its join
  ASSERT_TRUE(weft_test::wait_until([&] { return started.load(); }));
  EXPECT_WEFT_ERRC(child.join(), weft::errc::not_joinable);
  const bool on_joiners_stack = child_frame < joiner_frame && joiner_frame - child_frame < 16384;
  if (streams == 1) {
    EXPECT_EQ(on_joiners_stack, borrow);
  }
  m.unlock();
  joiner.join();
  EXPECT_FALSE(child.joinable());
  expect_fresh_units_sound();
}

TEST_P(JoinMisuseDefaultTest, SecondJoinOfAChildOnItsJoinersStack) {
  second_join_while_joined(true, streams());
}

TEST_P(JoinMisuseDefaultTest, SecondJoinOfAChildOnItsOwnStack) {
  second_join_while_joined(false, streams());
}

}  // namespace
