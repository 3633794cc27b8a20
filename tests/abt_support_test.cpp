// SPDX-License-Identifier: Apache-2.0
// The runtime mechanisms added for the Argobots layer (abt/): waiting for a unit without
// freeing it (detail::wait_unit), creating a stream at a chosen rank, a stream ending itself
// (request_exit), reading/writing another unit's local values (local_key::get_for/set_for),
// running a ULT on a stack the caller provides (detail::set_user_stack), and the submit that
// ends a create, the one-call join-and-free and checked yields of the layer's hot paths.
#include <cstdint>
#include <stdexcept>
#include <thread>

#include "test_support.hpp"
#include "weft/internal/layer_support.hpp"

namespace {

using namespace weft_test;
using weft::detail::join_help;
using weft::detail::join_result;

/// Counts the runs of a C entry.
void count_run(void* arg) {
  static_cast<std::atomic<int>*>(arg)->fetch_add(1);
}

class AbtSupportTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(AbtSupportTest);

TEST_P(AbtSupportTest, WaitUnitLeavesTheDescriptorUntilDiscarded) {
  std::atomic<int> ran{0};
  weft::ult u = weft::ult::create(last_stream().main_pool(), [&] { ran.fetch_add(1); });
  weft::work_unit* d = u.native_handle();
  weft::detail::check_join(d);
  weft::detail::wait_unit(d);
  EXPECT_EQ(ran.load(), 1);
  EXPECT_EQ(weft::detail::as_unit(d)->state.load(), weft::unit_state::terminated);
  EXPECT_EQ(weft::detail::as_unit(d)->join_word.load(), weft::detail::join_done);
  weft::detail::wait_unit(d);  // a second wait returns at once
  // The handle still owns the descriptor: its join frees it (nothing escaped the unit).
  u.join();
  EXPECT_FALSE(u.joinable());
}

TEST_P(AbtSupportTest, WaitUnitFromAUltBlocksOnlyTheCaller) {
  std::atomic<bool> release{false};
  weft::ult target = weft::ult::create([&] {
    while (!release.load()) weft::this_unit::yield();
  });
  weft::ult waiter = weft::ult::create([&] {
    weft::work_unit* d = target.native_handle();
    weft::detail::check_join(d);
    weft::detail::wait_unit(d);
    EXPECT_EQ(weft::detail::as_unit(d)->state.load(), weft::unit_state::terminated);
  });
  weft::this_unit::yield();
  release.store(true);
  waiter.join();
  target.join();
}

TEST_P(AbtSupportTest, CreateAtARank) {
  const int rank = streams() + 2;  // leaves a gap below it
  weft::execution_stream& s = weft::execution_stream::create(weft::make_scheduler("basic"), rank);
  EXPECT_EQ(s.rank(), rank);
  EXPECT_EQ(weft::execution_stream::by_rank(rank), &s);
  EXPECT_EQ(weft::execution_stream::by_rank(rank - 1), nullptr);
  try {
    weft::execution_stream::create(weft::make_scheduler("basic"), rank);
    ADD_FAILURE() << "a taken rank was accepted";
  } catch (const weft::error& e) {
    EXPECT_EQ(e.condition(), weft::errc::invalid_state);
  }
  EXPECT_THROW(weft::execution_stream::create(weft::make_scheduler("basic"), -2), weft::error);
  // The lowest free rank is still found below it.
  weft::execution_stream& next = weft::execution_stream::create();
  EXPECT_EQ(next.rank(), streams());
  std::atomic<int> ran{0};
  weft::ult::create_on(s, [&] { ran.fetch_add(1); }).join();
  EXPECT_EQ(ran.load(), 1);
  next.free();
  s.free();
}

TEST_P(AbtSupportTest, RequestExitFromTheStreamsOwnUnit) {
  // A scheduler that does not steal: with the default one another stream may run the ULT.
  weft::execution_stream& s =
      weft::execution_stream::create(weft::basic_scheduler::with_new_pool());
  std::atomic<bool> asked{false};
  weft::ult u = weft::ult::create_on(s, [&] {
    weft::this_unit::stream()->request_exit();
    asked.store(true);
  });
  u.join();
  EXPECT_TRUE(asked.load());
  s.join();  // returns: the stream stopped itself
  EXPECT_EQ(s.state(), weft::stream_state::terminated);
  s.free();
  EXPECT_THROW(weft::execution_stream::primary().request_exit(), weft::error);
}

TEST_P(AbtSupportTest, LocalValuesOfAnotherUnit) {
  static std::atomic<int> destroyed{0};
  destroyed.store(0);
  weft::local_key key = weft::local_key::create([](void*) { destroyed.fetch_add(1); });
  int value = 7;
  weft::eventual<bool> go;
  std::atomic<void*> seen{nullptr};
  weft::ult u = weft::ult::create(last_stream().main_pool(), [&] {
    go.wait();
    seen.store(key.get());
  });
  weft::work_unit& d = *u.native_handle();
  // set_for() is for a unit that is not running: wait until it blocks.
  ASSERT_TRUE(wait_until([&] { return u.state() == weft::unit_state::blocked; }));
  EXPECT_EQ(key.get_for(d), nullptr);
  key.set_for(d, &value);  // before it reads: the unit sees it as its own
  EXPECT_EQ(key.get_for(d), &value);
  go.set(true);
  u.join();
  EXPECT_EQ(seen.load(), &value);
  EXPECT_EQ(destroyed.load(), 1);  // the unit's value was destroyed when it terminated
  // The caller's own descriptor goes through its own table.
  weft::work_unit* self = weft::this_unit::current();
  key.set_for(*self, &value);
  EXPECT_EQ(key.get(), &value);
  key.set(nullptr);
  key.destroy();
  EXPECT_THROW(key.set_for(*self, &value), weft::error);
}

TEST_P(AbtSupportTest, UltRunsOnTheStackItIsGiven) {
  constexpr std::size_t size = 128 * 1024;
  std::vector<unsigned char> memory(size + 64);
  // 16-byte aligned bounds inside the buffer.
  auto lo = reinterpret_cast<std::uintptr_t>(memory.data());
  lo = (lo + 15) & ~std::uintptr_t{15};
  for (int round = 0; round < 2; ++round) {  // the memory is reusable: weft did not keep it
    std::atomic<std::uintptr_t> local{0};
    weft::work_unit* u = weft::detail::allocate_unit(weft::unit_kind::ult, size);
    weft::detail::set_user_stack(u, reinterpret_cast<void*>(lo), size);
    weft::detail::as_unit(u)->callable.invoke = &weft::detail::invoke_c;
    weft::detail::as_unit(u)->callable.destroy = nullptr;
    weft::detail::as_unit(u)->callable.entry_fn = [](void* arg) {
      int probe = 0;
      static_cast<std::atomic<std::uintptr_t>*>(arg)->store(
          reinterpret_cast<std::uintptr_t>(&probe));
      weft::this_unit::yield();  // switches away from and back onto the user stack
    };
    weft::detail::as_unit(u)->callable.entry_arg = &local;
    weft::detail::submit_unit(u, last_stream().main_pool());
    weft::ult handle(u);
    handle.join();
    EXPECT_GE(local.load(), lo);
    EXPECT_LT(local.load(), lo + size);
  }
}

/// A layer's join-and-free fallback for the tests: returns 10 + why (so 10 kept, 11 refused, 12
/// threw) and leaves the handle alone.
int join_fallback_code(void*, join_result why) noexcept {
  return 10 + static_cast<int>(why);
}

/// join_and_free() of `u` with a handle slot of its own: returns what it returned, and through
/// `nulled` whether it emptied the slot.
int join_and_free_of(weft::work_unit* u, join_help help, bool* nulled = nullptr) {
  weft::work_unit* slot = u;
  const int rc = weft::detail::join_and_free(u, &slot, help, &join_fallback_code, nullptr);
  if (nulled) *nulled = slot == nullptr;
  return rc;
}

constexpr int kept_code = 10 + static_cast<int>(join_result::kept);
constexpr int refused_code = 10 + static_cast<int>(join_result::refused);

TEST_P(AbtSupportTest, JoinAndFreeWaitsAndFrees) {
  for (const weft::unit_kind kind : {weft::unit_kind::ult, weft::unit_kind::tasklet}) {
    // Joined before it ran (or while it runs): waited for, then freed.
    std::atomic<int> runs{0};
    weft::work_unit* u =
        weft::detail::spawn_c(kind, last_stream().main_pool(), 0, &count_run, &runs);
    bool nulled = false;
    EXPECT_EQ(join_and_free_of(u, join_help::same_pool, &nulled), 0);
    EXPECT_TRUE(nulled);
    EXPECT_EQ(runs.load(), 1);
    // Joined once it has terminated: freed at once.
    u = weft::detail::spawn_c(kind, last_stream().main_pool(), 0, &count_run, &runs);
    ASSERT_TRUE(wait_until([&] { return runs.load() == 2; }));
    ASSERT_TRUE(wait_until(
        [&] { return weft::detail::as_unit(u)->state.load() == weft::unit_state::terminated; }));
    EXPECT_EQ(join_and_free_of(u, join_help::none, &nulled), 0);
    EXPECT_TRUE(nulled);
  }
}

TEST_P(AbtSupportTest, SubmitAndSucceedQueuesTheUnitAndReturnsZero) {
  for (const weft::unit_kind kind : {weft::unit_kind::ult, weft::unit_kind::tasklet}) {
    std::atomic<int> runs{0};
    weft::work_unit* u = weft::detail::allocate_unit(kind, 0);
    weft::detail::unit_callable& c = weft::detail::as_unit(u)->callable;
    c.invoke = &weft::detail::invoke_c;
    c.entry_fn = &count_run;
    c.entry_arg = &runs;
    EXPECT_EQ(weft::detail::submit_and_succeed(u, last_stream().main_pool()), 0);
    EXPECT_EQ(weft::detail::as_unit(u)->home.load(), &last_stream().main_pool());
    ASSERT_TRUE(wait_until([&] { return runs.load() == 1; }));  // queued: a stream ran it
    bool nulled = false;
    EXPECT_EQ(join_and_free_of(u, join_help::same_pool, &nulled), 0);
    EXPECT_TRUE(nulled);
    EXPECT_EQ(runs.load(), 1);
  }
}

TEST_P(AbtSupportTest, JoinAndFreeKeepsAUnitAnExceptionEscaped) {
  weft::work_unit* u = weft::detail::allocate_unit(weft::unit_kind::ult, 0);
  weft::detail::as_unit(u)->callable.invoke = [](weft::work_unit*) {
    throw std::runtime_error("escaped");
  };
  weft::detail::submit_unit(u, last_stream().main_pool());
  bool nulled = true;
  EXPECT_EQ(join_and_free_of(u, join_help::same_pool, &nulled), kept_code);
  EXPECT_FALSE(nulled);
  EXPECT_EQ(weft::detail::as_unit(u)->state.load(), weft::unit_state::terminated);
  EXPECT_NE(weft::detail::unit_error(u), nullptr);
  weft::detail::discard_unit(u);
}

/// What a child saw of where it ran: the address of a local of its entry, its stream, its
/// joiner's state, and its place in a run order.
struct child_probe {
  weft::work_unit* joiner = nullptr;
  std::uintptr_t local = 0;
  weft::execution_stream* stream = nullptr;
  weft::unit_state joiner_state = weft::unit_state::ready;
  std::atomic<int>* order = nullptr;
  int ran_as = 0;
};

void probe_child(void* arg) {
  auto* p = static_cast<child_probe*>(arg);
  int local = 0;
  p->local = reinterpret_cast<std::uintptr_t>(&local);
  p->stream = weft::this_unit::stream();
  p->joiner_state = weft::detail::as_unit(p->joiner)->state.load();
  if (p->order) p->ran_as = p->order->fetch_add(1) + 1;
}

/// True when `address` lies on the stack of the ULT `u`.
bool on_stack_of(weft::work_unit* u, std::uintptr_t address) {
  const auto lo = reinterpret_cast<std::uintptr_t>(weft::detail::as_unit(u)->stack.lo);
  return address >= lo && address < lo + weft::detail::as_unit(u)->stack.size;
}

/// The layer's joins (join_and_free, wait_unit_helping) with join_help::same_pool on pools of the
/// stream's own FIFO scheduler, which one stream consumes and nobody owns: the Argobots layer's
/// setting.
class LayerJoinTest : public streams_test {
 protected:
  void SetUp() override {
    weft::config cfg = test_config(GetParam());
    cfg.scheduler = "basic";
    init(cfg);
  }
};
WEFT_INSTANTIATE_STREAMS(LayerJoinTest);

TEST_P(LayerJoinTest, RunsTheOnlyQueuedUnitOnTheJoinersStack) {
  for (const bool then_free : {true, false}) {
    child_probe p;
    weft::ult joiner = weft::ult::create(last_stream().main_pool(), [&] {
      p.joiner = weft::this_unit::current();
      weft::work_unit* child = weft::detail::spawn_c(
          weft::unit_kind::ult, last_stream().main_pool(), 0, &probe_child, &p);
      if (then_free) {
        EXPECT_EQ(join_and_free_of(child, join_help::same_pool), 0);
      } else {
        weft::detail::wait_unit_helping(child, join_help::same_pool);
        EXPECT_EQ(weft::detail::as_unit(child)->state.load(), weft::unit_state::terminated);
        EXPECT_TRUE(weft::detail::reap_if_done(child));
      }
      EXPECT_TRUE(on_stack_of(p.joiner, p.local));
    });
    joiner.join();
    EXPECT_EQ(p.stream, &last_stream());
    EXPECT_EQ(p.joiner_state, weft::unit_state::blocked);  // in the join while the child ran
  }
}

TEST_P(LayerJoinTest, LeavesAUnitQueuedBehindAnotherToTheScheduler) {
  for (const bool then_free : {true, false}) {
    std::atomic<int> order{0};
    child_probe first, second;
    first.order = second.order = &order;
    weft::ult joiner = weft::ult::create(last_stream().main_pool(), [&] {
      first.joiner = second.joiner = weft::this_unit::current();
      weft::pool& pool = last_stream().main_pool();
      weft::work_unit* a =
          weft::detail::spawn_c(weft::unit_kind::ult, pool, 0, &probe_child, &first);
      weft::work_unit* b =
          weft::detail::spawn_c(weft::unit_kind::ult, pool, 0, &probe_child, &second);
      if (then_free) {
        EXPECT_EQ(join_and_free_of(b, join_help::same_pool), 0);
      } else {
        weft::detail::wait_unit_helping(b, join_help::same_pool);
        EXPECT_TRUE(weft::detail::reap_if_done(b));
      }
      // The scheduler ran both, in its FIFO order, each on a stack of its own.
      EXPECT_FALSE(on_stack_of(first.joiner, second.local));
      EXPECT_EQ(join_and_free_of(a, join_help::same_pool), 0);
    });
    joiner.join();
    EXPECT_EQ(first.ran_as, 1);
    EXPECT_EQ(second.ran_as, 2);
  }
}

TEST_P(LayerJoinTest, APinnedJoinerLeavesTheUnitAStackOfItsOwn) {
  // The primary ULT (this test's body) is pinned to the primary stream: a unit run on its stack
  // would be pinned with it.
  weft::pool& pool = weft::execution_stream::primary().main_pool();
  child_probe p;
  p.joiner = weft::this_unit::current();
  weft::work_unit* child = weft::detail::spawn_c(weft::unit_kind::ult, pool, 0, &probe_child, &p);
  EXPECT_EQ(join_and_free_of(child, join_help::same_pool), 0);
  EXPECT_FALSE(on_stack_of(p.joiner, p.local));
  EXPECT_EQ(p.stream, &weft::execution_stream::primary());
}

TEST_P(LayerJoinTest, WithoutHelpTheSchedulerRunsTheUnit) {
  child_probe p;
  weft::ult joiner = weft::ult::create(last_stream().main_pool(), [&] {
    p.joiner = weft::this_unit::current();
    weft::work_unit* child =
        weft::detail::spawn_c(weft::unit_kind::ult, last_stream().main_pool(), 0, &probe_child, &p);
    EXPECT_EQ(join_and_free_of(child, join_help::none), 0);
    EXPECT_FALSE(on_stack_of(p.joiner, p.local));
  });
  joiner.join();
  EXPECT_EQ(p.stream, &last_stream());
}

TEST_P(AbtSupportTest, JoinAndFreeRefusesWhatWouldBeMisuse) {
  // A unit joining itself.
  std::atomic<int> own{-1};
  weft::ult self_joiner = weft::ult::create(last_stream().main_pool(), [&] {
    own.store(join_and_free_of(weft::this_unit::current(), join_help::none));
  });
  self_joiner.join();
  EXPECT_EQ(own.load(), refused_code);

  // A tasklet joining a unit that has not ended, and a second joiner.
  std::atomic<bool> release{false};
  weft::ult blocker = weft::ult::create(
      last_stream().main_pool(), [&] { ASSERT_TRUE(wait_until([&] { return release.load(); })); });
  weft::work_unit* d = blocker.native_handle();
  std::atomic<int> from_tasklet{-1};
  weft::tasklet::create(last_stream().main_pool(), [&] {
    from_tasklet.store(join_and_free_of(d, join_help::none));
  }).join();
  EXPECT_EQ(from_tasklet.load(), refused_code);
  weft::ult first = weft::ult::create(last_stream().main_pool(), [d] {
    weft::detail::check_join(d);
    weft::detail::wait_unit(d);
  });
  // Registered as d's joiner: blocked alone is not enough (a joiner reads as blocked a moment
  // before its registration lands in the join word).
  ASSERT_TRUE(wait_until(
      [d] { return weft::detail::as_unit(d)->join_word.load() != weft::detail::join_none; }));
  EXPECT_EQ(join_and_free_of(d, join_help::none), refused_code);
  EXPECT_NE(weft::detail::as_unit(d)->state.load(),
            weft::unit_state::terminated);  // nothing was done to it
  release.store(true);
  first.join();
  blocker.join();  // terminated and waited for: the handle frees it
}

// Two joiners that both passed check_join before either waited: the second to register is
// refused with not_joinable once it runs again, and never returns as if the unit had ended.
TEST_P(AbtSupportTest, ASecondJoinerThatRacedPastTheCheckIsRefused) {
  std::atomic<bool> release{false};
  weft::ult blocker = weft::ult::create(
      last_stream().main_pool(), [&] { ASSERT_TRUE(wait_until([&] { return release.load(); })); });
  weft::work_unit* d = blocker.native_handle();
  std::atomic<bool> second_checked{false}, first_may_wait{false};
  std::atomic<int> second_result{-1};  // 0: returned, 1: not_joinable, 2: other
  weft::ult first = weft::ult::create(last_stream().main_pool(), [&, d] {
    weft::detail::check_join(d);
    ASSERT_TRUE(wait_until([&] { return first_may_wait.load(); }));
    weft::detail::wait_unit(d);
  });
  weft::ult second = weft::ult::create(weft::execution_stream::primary().main_pool(), [&, d] {
    weft::detail::check_join(d);
    second_checked.store(true);
    ASSERT_TRUE(wait_until(
        [d] { return weft::detail::as_unit(d)->join_word.load() != weft::detail::join_none; }));
    try {
      weft::detail::wait_unit(d);
      second_result.store(0);
    } catch (const weft::error& e) {
      second_result.store(e.condition() == weft::errc::not_joinable ? 1 : 2);
    }
  });
  ASSERT_TRUE(wait_until([&] { return second_checked.load(); }));
  first_may_wait.store(true);
  second.join();
  EXPECT_EQ(second_result.load(), 1);
  EXPECT_NE(weft::detail::as_unit(d)->state.load(), weft::unit_state::terminated);
  release.store(true);
  first.join();
  blocker.join();
}

/// A C layer's refusal handler for the checked yields: returns 100 + the context's value, and 1000
/// more when the yield threw, so that a test reads which call refused and why.
int refusal_code(void* context, bool threw) noexcept {
  return 100 + static_cast<int>(reinterpret_cast<std::intptr_t>(context)) + (threw ? 1000 : 0);
}

/// checked_yield() with a context of `tag`.
int yield_tagged(std::intptr_t tag) noexcept {
  return weft::detail::checked_yield(&refusal_code, reinterpret_cast<void*>(tag));
}

/// checked_yield_to(`target`) with a context of `tag`.
int yield_to_tagged(weft::work_unit* target, std::intptr_t tag) noexcept {
  return weft::detail::checked_yield_to(target, &refusal_code, reinterpret_cast<void*>(tag));
}

TEST_P(AbtSupportTest, CheckedYieldsRefuseCallersAndTargetsTheyCannotServe) {
  EXPECT_EQ(yield_tagged(1), 0);  // the test's own ULT
  EXPECT_EQ(yield_to_tagged(nullptr, 2), 102);
  EXPECT_EQ(yield_to_tagged(weft::this_unit::current(), 3), 103);
  std::atomic<bool> release{false};
  weft::tasklet tasklet_target = weft::tasklet::create(last_stream().main_pool(), [] {});
  weft::ult waiting = weft::ult::create(
      last_stream().main_pool(), [&] { ASSERT_TRUE(wait_until([&] { return release.load(); })); });
  EXPECT_EQ(yield_to_tagged(tasklet_target.native_handle(), 4), 104);
  // Callers that are not ULTs: a tasklet and an external thread.
  std::atomic<int> yield_in_tasklet{0};
  std::atomic<int> yield_to_in_tasklet{0};
  weft::tasklet::create(last_stream().main_pool(), [&] {
    yield_in_tasklet.store(yield_tagged(5));
    yield_to_in_tasklet.store(yield_to_tagged(waiting.native_handle(), 6));
  }).join();
  EXPECT_EQ(yield_in_tasklet.load(), 105);
  EXPECT_EQ(yield_to_in_tasklet.load(), 106);
  int yield_outside = 0;
  int yield_to_outside = 0;
  std::thread([&] {
    yield_outside = yield_tagged(7);
    yield_to_outside = yield_to_tagged(waiting.native_handle(), 8);
  }).join();
  EXPECT_EQ(yield_outside, 107);
  EXPECT_EQ(yield_to_outside, 108);
  release.store(true);
  waiting.join();
  tasklet_target.join();

  // A ready ULT in the caller's pool: the caller hands it the stream and gets it back. On one
  // stream nothing else can have taken it, so it has run to its end by then.
  std::atomic<int> ran{0};
  weft::ult peer = weft::ult::create(last_stream().main_pool(), [&] { ran.fetch_add(1); });
  EXPECT_EQ(yield_to_tagged(peer.native_handle(), 9), 0);
  if (streams() == 1) {
    EXPECT_EQ(ran.load(), 1);
  }
  peer.join();
  EXPECT_EQ(ran.load(), 1);
}

}  // namespace
