// SPDX-License-Identifier: Apache-2.0
// Stacked schedulers (push_scheduler): three levels deep, the stack budget, finish() and stop(),
// joining a stream that runs a stacked scheduler; and the user-written examples of
// schedulers/examples/ (a bounded ring pool and a round-robin scheduler with a pop budget and a
// time slice), as main schedulers and stacked.
#include <weft/schedulers/basic_scheduler.hpp>
#include <weft/schedulers/prio_scheduler.hpp>
#include <weft/stacking.hpp>

#include <mutex>

#include "../schedulers/examples/bounded_ring_pool.hpp"
#include "../schedulers/examples/round_robin_scheduler.hpp"
#include "test_support.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;
using weft_examples::bounded_ring_pool;
using weft_examples::round_robin_scheduler;
using weft_examples::rr_slice;

class StackingTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(StackingTest);

/// Records the order in which units ran.
struct order_log {
  void add(const std::string& tag) {
    std::lock_guard g(m);
    seq += tag;
  }
  std::string get() {
    std::lock_guard g(m);
    return seq;
  }
  std::mutex m;
  std::string seq;
};

/// Starts a gate ULT in `p` and waits until it runs: the stream serving `p` is then busy until
/// the gate opens, so the test can queue units in a known order.
weft::ult start_gate(weft::pool& p, spin_gate& gate) {
  std::atomic<bool> started{false};
  weft::ult g = weft::ult::create(p, [&gate, &started] {
    started = true;
    gate.hold();
  });
  EXPECT_TRUE(wait_until([&] { return started.load(); }));
  return g;
}

TEST_P(StackingTest, ThreeLevelsDeep) {
  // last stream's main scheduler
  //  └─ c1: basic over p1
  //      └─ c2: the example round robin over p2 (a bounded ring) and p2b
  //          └─ c3: prio over p3hi, p3lo
  // Units in p3hi/p3lo run only if all three levels run.
  weft::execution_stream& target = last_stream();
  auto p1 = weft::make_fifo_pool(weft::access_mode::mpmc);
  auto p2 = std::make_shared<bounded_ring_pool>(8);
  auto p2b = weft::make_fifo_pool(weft::access_mode::mpmc);
  auto p3hi = weft::make_fifo_pool(weft::access_mode::mpmc);
  auto p3lo = weft::make_fifo_pool(weft::access_mode::mpmc);
  auto c1 = std::make_shared<weft::basic_scheduler>(std::vector{p1});
  auto c2 = std::make_shared<round_robin_scheduler>(
      std::vector<std::shared_ptr<weft::pool>>{p2, p2b}, rr_slice{.pops = 2});
  auto c3 = std::shared_ptr<weft::prio_scheduler>(weft::prio_scheduler::ordered({p3hi, p3lo}));
  weft::ult h1 = weft::push_scheduler(target.main_pool(), c1);
  weft::ult h2 = weft::push_scheduler(*p1, c2);
  weft::ult h3 = weft::push_scheduler(*p2, c3);
  EXPECT_TRUE(c1->stacked() && c2->stacked() && c3->stacked());
  // A stacked scheduler cannot be stacked again or installed on a stream.
  EXPECT_WEFT_ERRC(weft::push_scheduler(*p1, c3), weft::errc::invalid_state);

  const std::size_t per_pool = scaled(300, 10);
  const std::vector<std::shared_ptr<weft::pool>> where = {p1, p2, p2b, p3hi, p3lo};
  std::vector<std::atomic<int>> runs(per_pool * where.size());
  std::atomic<int> wrong_stream{0};
  std::vector<weft::ult> us;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    us.push_back(weft::ult::create(*where[i % where.size()], [&, i] {
      for (int y = 0; y < 3; ++y) {
        if (weft::this_unit::stream() != &target) wrong_stream++;
        weft::this_unit::yield();
      }
      runs[i]++;
    }));
  }
  // Joined only once they ran: a join of a unit still queued in a multi-consumer pool would take
  // it out and run it on the joiner's stream (a join that helps).
  EXPECT_TRUE(weft_test::wait_until([&] {
    std::size_t done = 0;
    for (auto& r : runs) done += r.load() != 0;
    return done == runs.size();
  }));
  for (auto& u : us) u.join();
  std::size_t wrong = 0;
  for (auto& r : runs) wrong += r.load() != 1;
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(wrong_stream.load(), 0) << "only the target stream pops the stacked ULTs";
  // Innermost first or all at once: each ends once its pools are empty.
  c3->finish();
  c2->finish();
  c1->finish();
  h3.join();
  h2.join();
  h1.join();
  EXPECT_TRUE(p1->empty() && p2->empty() && p3hi->empty());
}

TEST_P(StackingTest, TheStackBudgetHandsControlBackToTheParent) {
  // On a stream of its own whose main pool is FIFO: the child runs `budget` units, then yields
  // back behind the parent's units.
  scoped_stream s;
  auto child_pool = weft::make_fifo_pool(weft::access_mode::mpmc);
  auto child =
      std::make_shared<round_robin_scheduler>(std::vector{child_pool}, rr_slice{.pops = 0});
  child->set_stack_budget(2);
  spin_gate gate;
  weft::ult g = start_gate(s->main_pool(), gate);
  order_log log;
  weft::ult h = weft::push_scheduler(s->main_pool(), child);
  std::vector<weft::tasklet> ts;
  for (int i = 1; i <= 3; ++i)
    ts.push_back(
        weft::tasklet::create(s->main_pool(), [&log, i] { log.add("M" + std::to_string(i)); }));
  for (int i = 1; i <= 6; ++i)
    ts.push_back(
        weft::tasklet::create(*child_pool, [&log, i] { log.add("A" + std::to_string(i)); }));
  child->finish();  // ends once its pool is empty
  gate.open();
  g.join();
  // Joined once they all ran: a join of a unit still queued in a pool the joiner's stream
  // does not serve would run it there (a join that helps), out of the order under test.
  EXPECT_TRUE(weft_test::wait_until([&] { return log.get().size() == 2 * ts.size(); }));
  for (auto& t : ts) t.join();
  h.join();
  EXPECT_EQ(log.get(), "A1A2M1M2M3A3A4A5A6");
}

TEST_P(StackingTest, StopHandsLeftoverUnitsToTheMainScheduler) {
  scoped_stream s;
  auto child_pool = weft::make_fifo_pool(weft::access_mode::mpmc);
  auto child = std::make_shared<weft::basic_scheduler>(std::vector{child_pool});
  spin_gate gate;
  weft::ult g = start_gate(s->main_pool(), gate);
  weft::ult h = weft::push_scheduler(s->main_pool(), child);
  std::atomic<int> ran{0};
  std::vector<weft::ult> us;
  us.reserve(20);
  for (int i = 0; i < 20; ++i)
    us.push_back(weft::ult::create(*child_pool, [&] {
      weft::this_unit::yield();
      ran++;
    }));
  child->stop();  // before it ever ran: it returns at its first check
  gate.open();
  g.join();
  h.join();  // the stacked scheduler ended...
  // ...and its units still ran: its pool was orphaned, then adopted by s's main scheduler (any
  // stream may also serve an orphaned pool meanwhile).
  for (auto& u : us) u.join();
  EXPECT_EQ(ran.load(), 20);
  EXPECT_TRUE(child_pool->empty());
}

TEST_P(StackingTest, JoiningTheStreamEndsItsStackedSchedulers) {
  std::optional<scoped_stream> s(std::in_place);
  auto p1 = weft::make_fifo_pool(weft::access_mode::mpmc);
  auto p2 = weft::make_fifo_pool(weft::access_mode::mpsc);  // single consumer: pins the stack
  weft::ult h1 = weft::push_scheduler((*s)->main_pool(),
                                      std::make_shared<weft::basic_scheduler>(std::vector{p1}));
  weft::ult h2 =
      weft::push_scheduler(*p1, std::make_shared<weft::basic_wait_scheduler>(std::vector{p2}));
  std::atomic<int> ran{0};
  for (int i = 0; i < 50; ++i)
    weft::ult::create(i % 2 ? *p1 : *p2, [&] {
      weft::this_unit::yield();
      ran++;
    }).detach();
  (*s)->join();  // waits for empty pools: the stacked schedulers end with them
  EXPECT_EQ(ran.load(), 50);
  h2.join();
  h1.join();
  s.reset();
}

TEST_P(StackingTest, StackedSchedulersOnEveryStream) {
  // One stacked basic scheduler per stream over a pool all of them share: every stack's units run.
  const int n = streams();
  auto shared = weft::make_fifo_pool(weft::access_mode::mpmc);
  std::vector<std::shared_ptr<weft::basic_scheduler>> kids;
  std::vector<weft::ult> hs;
  for (int r = 0; r < n; ++r) {
    kids.push_back(std::make_shared<weft::basic_scheduler>(std::vector{shared}));
    hs.push_back(weft::push_scheduler(stream(r).main_pool(), kids.back()));
  }
  const std::size_t units = scaled(3000, 30);
  std::vector<std::atomic<int>> runs(units);
  std::vector<weft::ult> us;
  for (std::size_t i = 0; i < units; ++i)
    us.push_back(weft::ult::create(*shared, [&, i] {
      weft::this_unit::yield();
      runs[i]++;
    }));
  for (auto& u : us) u.join();
  for (auto& k : kids) k->finish();
  for (auto& h : hs) h.join();
  std::size_t wrong = 0;
  for (auto& r : runs) wrong += r.load() != 1;
  EXPECT_EQ(wrong, 0u);
}

// ----------------------------------------------------------------------------------------------
// The examples as main schedulers and pools

TEST_P(StackingTest, ExampleRingPoolIsFifoThroughItsOverflow) {
  auto ring = std::make_shared<bounded_ring_pool>(4, weft::access_mode::mpsc);
  scoped_stream s(
      std::make_unique<weft::basic_wait_scheduler>(std::vector<std::shared_ptr<weft::pool>>{ring}));
  EXPECT_EQ(&s->main_pool(), ring.get());
  spin_gate gate;
  weft::ult g = start_gate(*ring, gate);
  order_log log;
  std::vector<weft::tasklet> ts;
  ts.reserve(10);
  for (int i = 0; i < 10; ++i)
    ts.push_back(weft::tasklet::create(
        *ring, [&log, i] { log.add(std::string(1, static_cast<char>('a' + i))); }));
  EXPECT_EQ(ring->size(), 10u);
  EXPECT_EQ(ring->overflowed(), 6u);
  gate.open();
  g.join();
  // Joined once they all ran: a join of a unit still queued in a pool the joiner's stream
  // does not serve would run it there (a join that helps), out of the order under test.
  EXPECT_TRUE(weft_test::wait_until([&] { return log.get().size() == ts.size(); }));
  for (auto& t : ts) t.join();
  EXPECT_EQ(log.get(), "abcdefghij");
  // And under load from every stream, with yields (which push back into the ring).
  const std::size_t n = scaled(2000, 20);
  std::atomic<std::size_t> ran{0};
  std::vector<weft::ult> us;
  for (std::size_t i = 0; i < n; ++i)
    us.push_back(weft::ult::create(*ring, [&] {
      for (int y = 0; y < 3; ++y) weft::this_unit::yield();
      ran++;
    }));
  for (auto& u : us) u.join();
  EXPECT_EQ(ran.load(), n);
}

TEST_P(StackingTest, ExampleRoundRobinHonoursItsPopBudget) {
  auto a = weft::make_fifo_pool(weft::access_mode::mpmc);
  auto b = std::make_shared<bounded_ring_pool>(16);
  auto c = weft::make_fifo_pool(weft::access_mode::mpmc);
  auto rr = std::make_unique<round_robin_scheduler>(
      std::vector<std::shared_ptr<weft::pool>>{a, b, c}, rr_slice{.pops = 3});
  round_robin_scheduler* sched = rr.get();
  scoped_stream s(std::move(rr));
  spin_gate gate;
  weft::ult g = start_gate(*c, gate);
  order_log log;
  std::vector<weft::tasklet> ts;
  for (int i = 0; i < 10; ++i) {
    ts.push_back(weft::tasklet::create(*a, [&log] { log.add("A"); }));
    ts.push_back(weft::tasklet::create(*b, [&log] { log.add("B"); }));
  }
  gate.open();
  g.join();
  // Joined once they all ran: a join of a unit still queued in a pool the joiner's stream
  // does not serve would run it there (a join that helps), out of the order under test.
  EXPECT_TRUE(weft_test::wait_until([&] { return log.get().size() == ts.size(); }));
  for (auto& t : ts) t.join();
  EXPECT_EQ(log.get(), "AAABBBAAABBBAAABBBAB");
  EXPECT_GE(sched->slice_switches(), 6u);
}

TEST_P(StackingTest, ExampleRoundRobinHonoursItsTimeSlice) {
  // Each unit runs 2 ms; with a 1 ms slice and no pop budget the pools alternate after every unit.
  auto a = weft::make_fifo_pool(weft::access_mode::mpmc);
  auto b = weft::make_fifo_pool(weft::access_mode::mpmc);
  scoped_stream s(std::make_unique<round_robin_scheduler>(
      std::vector{a, b}, rr_slice{.pops = 0, .time = std::chrono::milliseconds(1)}));
  spin_gate gate;
  weft::ult g = start_gate(*b, gate);
  order_log log;
  std::vector<weft::tasklet> ts;
  auto busy = [] {
    const auto until = std::chrono::steady_clock::now() + 2ms;
    while (std::chrono::steady_clock::now() < until) {
    }
  };
  for (int i = 0; i < 4; ++i) {
    ts.push_back(weft::tasklet::create(*a, [&log, busy] {
      busy();
      log.add("A");
    }));
    ts.push_back(weft::tasklet::create(*b, [&log, busy] {
      busy();
      log.add("B");
    }));
  }
  std::this_thread::sleep_for(5ms);  // the gate's slice (it came from b) is spent
  gate.open();
  g.join();
  // Joined once they all ran: a join of a unit still queued in a pool the joiner's stream
  // does not serve would run it there (a join that helps), out of the order under test.
  EXPECT_TRUE(weft_test::wait_until([&] { return log.get().size() == ts.size(); }));
  for (auto& t : ts) t.join();
  // The gate ran from b for over 1 ms: the scheduler moved on to a.
  EXPECT_EQ(log.get(), "ABABABAB");
}

TEST_P(StackingTest, ExampleRoundRobinAsEveryStreamsSchedulerByName) {
  weft::register_scheduler("example-rr", [] {
    return std::make_unique<round_robin_scheduler>(
        std::vector<std::shared_ptr<weft::pool>>{
            std::make_shared<bounded_ring_pool>(64, weft::access_mode::mpsc),
            weft::make_fifo_pool(weft::access_mode::mpsc)},
        rr_slice{.pops = 4});
  });
  weft::config cfg = test_config(streams());
  cfg.scheduler = "example-rr";
  init(cfg);
  const std::size_t n = scaled(4000, 40);
  std::vector<std::atomic<int>> runs(n);
  std::vector<weft::ult> us;
  for (std::size_t i = 0; i < n; ++i)
    us.push_back(weft::ult::create_on(stream(static_cast<int>(i % streams())), [&, i] {
      weft::this_unit::yield();
      runs[i]++;
    }));
  for (auto& u : us) u.join();
  std::size_t wrong = 0;
  for (auto& r : runs) wrong += r.load() != 1;
  EXPECT_EQ(wrong, 0u);
}

}  // namespace
