// SPDX-License-Identifier: Apache-2.0
// Direct switches: a yielding, blocking or terminating ULT asks its scheduler's hooks itself
// (every policy; a loop_scheduler's ULTs go through its loop). These tests pin down that the
// choice is the one the loop would make (FIFO and LIFO pools, tasklets in between, priorities,
// a user policy), and that the loop still sees events, timers and requests while its ULTs do
// nothing but yield.
#include <atomic>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "weft/channel.hpp"
#include "weft/eventual.hpp"
#include "weft/schedulers/basic_scheduler.hpp"
#include "weft/schedulers/fifo_pool.hpp"
#include "weft/schedulers/lifo_pool.hpp"
#include "weft/schedulers/prio_scheduler.hpp"

namespace {

using namespace std::chrono_literals;
using weft_test::scoped_stream;
using weft_test::streams_test;
using weft_test::wait_until;

class DirectSwitchTest : public streams_test {
 protected:
  /// A new stream running basic over one pool of `pool`.
  static std::unique_ptr<weft::scheduler> basic_over(std::shared_ptr<weft::pool> pool) {
    return std::make_unique<weft::basic_scheduler>(std::vector{std::move(pool)});
  }
};

/// A ULT body that logs "<name><i>" and yields, `rounds` times.
auto yielder(std::vector<std::string>& log, std::string name, int rounds) {
  return [&log, name, rounds] {
    for (int i = 0; i < rounds; ++i) {
      log.push_back(name + std::to_string(i));
      weft::this_unit::yield();
    }
  };
}

/// Units for the mixed-unit tests, created on the calling stream in one pool: every third a ULT
/// running `ult_body(slot)`, every third a tasklet, every third a ULT pinned to `other` that
/// counts only if it runs there. Each adds one to its own slot of `runs` when it runs.
template <class UltBody>
void create_mixed_units(std::vector<std::atomic<int>>& runs, weft::execution_stream& other,
                        UltBody ult_body, std::vector<weft::ult>& us,
                        std::vector<weft::tasklet>& ts) {
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::atomic<int>& slot = runs[i];
    switch (i % 3) {
      case 0:
        us.push_back(weft::ult::create(ult_body(slot, static_cast<int>(i))));
        break;
      case 1:
        ts.push_back(weft::tasklet::create([&slot] { slot.fetch_add(1); }));
        break;
      default: {
        weft::ult u = weft::ult::create([&slot, &other] {
          if (weft::this_unit::stream() == &other) slot.fetch_add(1);
          weft::this_unit::yield();
        });
        u.pin_to(&other);
        us.push_back(std::move(u));
      }
    }
  }
}

TEST_P(DirectSwitchTest, StockSchedulersArePoliciesLoopSchedulersWriteTheirLoop) {
  EXPECT_FALSE(weft::basic_scheduler::with_new_pool()->writes_own_loop());
  EXPECT_FALSE(weft::basic_wait_scheduler::with_new_pool()->writes_own_loop());
  EXPECT_FALSE(weft::prio_scheduler::with_new_pools()->writes_own_loop());
  EXPECT_FALSE(weft::make_scheduler("randws")->writes_own_loop());
  EXPECT_TRUE(weft_test::stats_scheduler::with_new_pool(std::make_shared<weft_test::sched_stats>())
                  ->writes_own_loop());
}

namespace {

/// basic's choice, counting the hook calls made by a yielding ULT itself (not by the loop).
class counting_policy final : public weft::scheduler {
 public:
  using scheduler::scheduler;
  weft::work_unit* pick_after_yield(weft::work_unit* self, weft::pool& home) noexcept override {
    if (weft::this_unit::current() == self) asked_by_yielder.fetch_add(1);
    return scheduler::pick_after_yield(self, home);
  }
  std::atomic<int> asked_by_yielder{0};
};

}  // namespace

TEST_P(DirectSwitchTest, AUserPolicyIsAskedByTheYieldingUltItself) {
  auto owned = std::make_unique<counting_policy>(
      std::vector<std::shared_ptr<weft::pool>>{weft::make_fifo_pool(weft::access_mode::mpsc)});
  owned->set_event_freq(1000);  // a budget larger than the yields below
  counting_policy& policy = *owned;
  scoped_stream s(std::move(owned));
  std::vector<std::string> log;
  weft::ult::create_on(*s, [&] {
    weft::ult a = weft::ult::create(yielder(log, "A", 50));
    weft::ult b = weft::ult::create(yielder(log, "B", 50));
    a.join();
    b.join();
  }).join();
  ASSERT_EQ(log.size(), 100u);
  for (std::size_t i = 0; i < log.size(); ++i)
    EXPECT_EQ(log[i], (i % 2 ? "B" : "A") + std::to_string(i / 2)) << "at " << i;
  // Every yield asks the hook from the yielding ULT: none takes a round trip through the loop
  // (no request is pending, and the direct-choice budget is not spent).
  EXPECT_EQ(policy.asked_by_yielder.load(), 100);
}

TEST_P(DirectSwitchTest, AYieldUnderPrioSwitchesToTheHigherPriorityUnit) {
  auto high = weft::make_fifo_pool(weft::access_mode::mpsc);
  auto low = weft::make_fifo_pool(weft::access_mode::mpsc);
  scoped_stream s(weft::prio_scheduler::ordered({high, low}));
  std::vector<std::string> log;
  weft::ult::create(*low, [&] {
    log.push_back("L0");
    weft::ult h1 = weft::ult::create(*high, [&] { log.push_back("H1"); });
    weft::ult l1 = weft::ult::create(*low, [&] { log.push_back("L1"); });
    weft::this_unit::yield();  // H1 first (higher), then L1 (queued before this ULT in low)
    log.push_back("L0'");
    weft::ult h2 = weft::ult::create(*high, [&] { log.push_back("H2"); });
    weft::this_unit::yield();  // H2, then this ULT
    log.push_back("L0''");
    h1.join();
    l1.join();
    h2.join();
  }).join();
  EXPECT_EQ(log, (std::vector<std::string>{"L0", "H1", "L1", "L0'", "H2", "L0''"}));
}

TEST_P(DirectSwitchTest, YieldingUltsAlternateInFifoOrder) {
  for (weft::access_mode mode : {weft::access_mode::priv, weft::access_mode::mpsc}) {
    scoped_stream s(basic_over(weft::make_fifo_pool(mode)));
    std::vector<std::string> log;
    // The parent queues A, B and C on the stream itself, then blocks in join.
    weft::ult::create_on(*s, [&] {
      weft::ult a = weft::ult::create(yielder(log, "A", 3));
      weft::ult b = weft::ult::create(yielder(log, "B", 3));
      weft::ult c = weft::ult::create(yielder(log, "C", 2));
      a.join();
      b.join();
      c.join();
    }).join();
    EXPECT_EQ(log, (std::vector<std::string>{"A0", "B0", "C0", "A1", "B1", "C1", "A2", "B2"}))
        << "mode " << static_cast<int>(mode);
  }
}

TEST_P(DirectSwitchTest, YieldIntoALifoPoolKeepsTheYielderRunning) {
  // push-then-pop on a LIFO pool gives the yielder back: what the loop would do.
  scoped_stream s(basic_over(weft::make_lifo_pool(weft::access_mode::mpsc)));
  std::vector<std::string> log;
  weft::ult::create_on(*s, [&] {
    weft::ult a = weft::ult::create(yielder(log, "A", 3));
    weft::ult b = weft::ult::create(yielder(log, "B", 3));
    a.join();
    b.join();
  }).join();
  EXPECT_EQ(log, (std::vector<std::string>{"B0", "B1", "B2", "A0", "A1", "A2"}));
}

TEST_P(DirectSwitchTest, ATaskletFoundByAYieldRunsInItsTurn) {
  scoped_stream s(basic_over(weft::make_fifo_pool(weft::access_mode::mpsc)));
  std::vector<std::string> log;
  weft::ult::create_on(*s, [&] {
    weft::ult a = weft::ult::create(yielder(log, "A", 2));
    weft::tasklet t = weft::tasklet::create([&] { log.push_back("T"); });
    weft::ult b = weft::ult::create(yielder(log, "B", 2));
    a.join();
    t.join();
    b.join();
  }).join();
  EXPECT_EQ(log, (std::vector<std::string>{"A0", "T", "B0", "A1", "B1"}));
}

TEST_P(DirectSwitchTest, TerminatingUltsRunTheNextInFifoOrder) {
  scoped_stream s(basic_over(weft::make_fifo_pool(weft::access_mode::mpsc)));
  std::vector<int> order;
  const int n = static_cast<int>(weft_test::scaled(2000, 100));
  weft::ult::create_on(*s, [&] {
    std::vector<weft::ult> us;
    for (int i = 0; i < n; ++i)
      us.push_back(weft::ult::create([&order, i] { order.push_back(i); }));
    for (auto& u : us) u.join();
  }).join();
  ASSERT_EQ(static_cast<int>(order.size()), n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(order[static_cast<std::size_t>(i)], i);
}

TEST_P(DirectSwitchTest, BlockingUltsRunTheNextInFifoOrder) {
  // A blocks on an eventual that C sets; B and C run in between, in queue order, and A runs
  // again after C (it was queued behind C when C woke it). Then A suspends itself and the
  // parent, queued behind it, resumes it.
  scoped_stream s(basic_over(weft::make_fifo_pool(weft::access_mode::mpsc)));
  std::vector<std::string> log;
  weft::eventual<void> go;
  weft::ult::create_on(*s, [&] {
    weft::ult a = weft::ult::create([&] {
      log.push_back("A waits");
      go.wait();
      log.push_back("A woken");
      weft::this_unit::suspend();
      log.push_back("A resumed");
    });
    weft::ult b = weft::ult::create([&] { log.push_back("B"); });
    weft::ult c = weft::ult::create([&] {
      log.push_back("C sets");
      go.set();
      log.push_back("C ends");
    });
    b.join();
    c.join();
    while (a.state() != weft::unit_state::blocked) weft::this_unit::yield();
    log.push_back("parent resumes A");
    a.resume();
    a.join();
  }).join();
  EXPECT_EQ(log, (std::vector<std::string>{"A waits", "B", "C sets", "C ends", "A woken",
                                           "parent resumes A", "A resumed"}));
}

TEST_P(DirectSwitchTest, EveryUnitRunsOnceWhenUltsBlockIntoMixedUnits) {
  // ULTs that block on a channel find tasklets and units pinned to another stream queued: those
  // go through the scheduler; every message arrives and every unit runs once.
  const int n = static_cast<int>(weft_test::scaled(3000, 300));
  std::vector<std::atomic<int>> runs(static_cast<std::size_t>(n));
  weft::execution_stream& other = last_stream();
  weft::channel<int> ch(0);
  long sum = 0;
  weft::ult::create_on(stream(0), [&] {
    weft::ult receiver = weft::ult::create([&] {
      while (std::optional<int> v = ch.recv()) sum += *v;
    });
    std::vector<weft::ult> us;
    std::vector<weft::tasklet> ts;
    create_mixed_units(
        runs, other,
        [&ch](std::atomic<int>& slot, int i) {
          return [&slot, &ch, i] {
            ch.send(i);  // blocks until the receiver takes it
            slot.fetch_add(1);
          };
        },
        us, ts);
    for (auto& u : us) u.join();
    for (auto& t : ts) t.join();
    ch.close();
    receiver.join();
  }).join();
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(runs[static_cast<std::size_t>(i)].load(), 1) << "unit " << i;
  long expected = 0;
  for (int i = 0; i < n; i += 3) expected += i;
  EXPECT_EQ(sum, expected);
}

/// Two ULTs on `s` that hand a token back and forth through unbuffered channels until `done`;
/// with direct switches every hand-off jumps from the blocking ULT to the woken one.
std::pair<weft::ult, weft::ult> ping_pong(weft::execution_stream& s, weft::channel<int>& ping,
                                          weft::channel<int>& pong, std::atomic<bool>& done) {
  weft::ult a = weft::ult::create_on(s, [&] {
    while (!done.load()) {
      ping.send(1);
      pong.recv();
    }
    ping.close();
  });
  weft::ult b = weft::ult::create_on(s, [&] {
    while (ping.recv()) pong.send(1);
  });
  return {std::move(a), std::move(b)};
}

TEST_P(DirectSwitchTest, TimersFireOnAStreamWhoseUltsOnlyBlockAndWake) {
  scoped_stream s(basic_over(weft::make_fifo_pool(weft::access_mode::mpsc)));
  weft::channel<int> ping(0), pong(0);
  std::atomic<bool> done{false};
  auto [a, b] = ping_pong(*s, ping, pong, done);
  weft::ult sleeper = weft::ult::create_on(*s, [&] {
    weft::this_unit::sleep_for(2ms);
    done = true;
  });
  sleeper.join();
  a.join();
  b.join();
  EXPECT_TRUE(done.load());
}

TEST_P(DirectSwitchTest, StopReachesAStreamWhoseUltsOnlyBlockAndWake) {
  scoped_stream s(basic_over(weft::make_fifo_pool(weft::access_mode::mpsc)));
  weft::channel<int> ping(0), pong(0);
  std::atomic<bool> done{false};
  auto [a, b] = ping_pong(*s, ping, pong, done);
  ASSERT_TRUE(wait_until([&] { return a.state() != weft::unit_state::ready; }));
  s->stop();  // returns once the scheduler has returned: hand-offs must not hide the request
  EXPECT_EQ(s->state(), weft::stream_state::terminated);
  done = true;
  s->revive();
  a.join();
  b.join();
}

TEST_P(DirectSwitchTest, InboxDeliveriesReachAStreamWhoseUltsOnlyYield) {
  // A private pool is fed by other streams through its stream's inbox, which only the
  // scheduler's event check empties: a ULT yielding in a loop must not starve it.
  auto pool = weft::make_fifo_pool(weft::access_mode::priv);
  scoped_stream s(basic_over(pool));
  std::atomic<bool> spinning{false}, done{false};
  std::atomic<long> yields{0};
  weft::ult spinner = weft::ult::create_on(*s, [&] {
    spinning = true;
    while (!done.load()) {
      weft::this_unit::yield();
      yields.fetch_add(1, std::memory_order_relaxed);
    }
  });
  ASSERT_TRUE(wait_until([&] { return spinning.load(); }));
  weft::ult setter = weft::ult::create(*pool, [&] { done = true; });
  setter.join();
  spinner.join();
  EXPECT_TRUE(done.load());
  EXPECT_GT(yields.load(), 0);
}

TEST_P(DirectSwitchTest, TimersFireOnAStreamWhoseUltsOnlyYield) {
  scoped_stream s(basic_over(weft::make_fifo_pool(weft::access_mode::mpsc)));
  std::atomic<bool> done{false};
  weft::ult spinner = weft::ult::create_on(*s, [&] {
    while (!done.load()) weft::this_unit::yield();
  });
  weft::ult sleeper = weft::ult::create_on(*s, [&] {
    weft::this_unit::sleep_for(2ms);
    done = true;
  });
  sleeper.join();
  spinner.join();
  EXPECT_TRUE(done.load());
}

TEST_P(DirectSwitchTest, StopReachesAStreamWhoseUltsOnlyYield) {
  std::atomic<bool> release{false};
  std::atomic<int> running{0};
  scoped_stream s(basic_over(weft::make_fifo_pool(weft::access_mode::mpsc)));
  std::vector<weft::ult> us;
  for (int i = 0; i < 3; ++i) {
    us.push_back(weft::ult::create_on(*s, [&] {
      running.fetch_add(1);
      while (!release.load()) weft::this_unit::yield();
    }));
  }
  ASSERT_TRUE(wait_until([&] { return running.load() == 3; }));
  s->stop();  // returns once the scheduler has returned: yields must not hide the request
  EXPECT_EQ(s->state(), weft::stream_state::terminated);
  release = true;
  s->revive();
  for (auto& u : us) u.join();
}

TEST_P(DirectSwitchTest, TerminatingUltsPassTheirStackOnlyToUltsThatFitIt) {
  // A terminating ULT runs the next ULT that never ran on its own stack (stream::pass_stack):
  // every unit must still see its own identity, and one that asked for a larger stack must get
  // it (its 96 KiB of locals would hit the guard page of a 16 KiB default stack and abort).
  scoped_stream s(basic_over(weft::make_fifo_pool(weft::access_mode::mpsc)));
  const int n = static_cast<int>(weft_test::scaled(600, 60));
  std::vector<weft::unit_id> seen(static_cast<std::size_t>(n));
  std::vector<int> order;
  weft::ult::create_on(*s, [&] {
    std::vector<weft::ult> us;
    for (int i = 0; i < n; ++i) {
      auto& slot = seen[static_cast<std::size_t>(i)];
      if (i % 4 == 3) {
        us.push_back(weft::ult::create(
            weft::execution_stream::self()->main_pool(),
            [&slot, &order, i] {
              volatile char big[96 * 1024];
              for (std::size_t k = 0; k < sizeof big; k += 4096) big[k] = static_cast<char>(k);
              slot = weft::this_unit::id();
              order.push_back(i);
            },
            weft::ult_attributes{256 * 1024}));
      } else {
        us.push_back(weft::ult::create([&slot, &order, i] {
          slot = weft::this_unit::id();
          order.push_back(i);
        }));
      }
    }
    std::vector<weft::unit_id> ids;
    for (auto& u : us) ids.push_back(u.id());
    for (auto& u : us) u.join();
    for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(seen[i], ids[i]) << "unit " << i;
  }).join();
  ASSERT_EQ(static_cast<int>(order.size()), n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(order[static_cast<std::size_t>(i)], i);
}

TEST_P(DirectSwitchTest, EveryUnitRunsOnceUnderMixedDirectSwitches) {
  // ULTs that yield, tasklets, and units pinned to another stream, all in one pool: direct
  // switches hand the tasklets and the pinned units to the scheduler, none is lost or run twice.
  const int n = static_cast<int>(weft_test::scaled(3000, 300));
  std::vector<std::atomic<int>> runs(static_cast<std::size_t>(n));
  weft::execution_stream& home = stream(0);
  weft::execution_stream& other = last_stream();
  weft::ult::create_on(home, [&] {
    std::vector<weft::ult> us;
    std::vector<weft::tasklet> ts;
    create_mixed_units(
        runs, other,
        [](std::atomic<int>& slot, int) {
          return [&slot] {
            weft::this_unit::yield();
            slot.fetch_add(1);
            weft::this_unit::yield();
          };
        },
        us, ts);
    for (auto& u : us) u.join();
    for (auto& t : ts) t.join();
  }).join();
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(runs[static_cast<std::size_t>(i)].load(), 1) << "unit " << i;
}

WEFT_INSTANTIATE_STREAMS(DirectSwitchTest);

}  // namespace
