// SPDX-License-Identifier: Apache-2.0
// randws: streams steal from each other under imbalance (checked with counters: the stream that
// made the work is kept busy, so any unit that ran had to be stolen), pinned units stay on their
// stream while the others are stolen, and groups of streams that come and go.
#include <weft/schedulers/randws_scheduler.hpp>

#include <array>
#include <functional>
#include <thread>

#include "test_support.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;

class RandwsTest : public streams_test {
 protected:
  void SetUp() override {
    weft::config cfg = test_config(GetParam());
    cfg.scheduler = "randws";
    init(cfg);
  }
  static weft::randws_scheduler& sched_of(weft::execution_stream& s) {
    return dynamic_cast<weft::randws_scheduler&>(s.main_scheduler());
  }
};
WEFT_INSTANTIATE_STREAMS(RandwsTest);

/// Busy-waits on the calling stream (it runs nothing else meanwhile) until `pred()`.
template <class Pred>
bool hold_stream_until(Pred&& pred) {
  const auto deadline = std::chrono::steady_clock::now() + hang_guard;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return pred();
    std::this_thread::yield();
  }
  return true;
}

TEST_P(RandwsTest, EveryStreamIsInOneGroupAndListsEveryPool) {
  auto group = sched_of(stream(0)).group();
  ASSERT_NE(group, nullptr);
  for (int r = 0; r < streams(); ++r) {
    auto& s = sched_of(stream(r));
    EXPECT_EQ(s.group(), group);
    EXPECT_EQ(&stream(r).main_pool(), &s.own_pool());
    EXPECT_TRUE(wait_until([&] { return s.own_pool().owner() == &stream(r); })) << r;
  }
  // Each scheduler lists its peers' pools once it has run and synced with the group. pools() is
  // read on the scheduler's own stream (by a unit running there), never from another thread.
  EXPECT_TRUE(
      wait_until([&] { return group->pools().size() == static_cast<std::size_t>(streams()); }));
  std::atomic<int> complete{0};
  std::vector<weft::ult> us;
  us.reserve(static_cast<std::size_t>(streams()));
  for (int r = 0; r < streams(); ++r) {
    us.push_back(weft::ult::create_on(stream(r), [&] {
      if (wait_until([&] {
            return sched_of(*weft::this_unit::stream()).pools().size() >=
                   static_cast<std::size_t>(streams());
          }))
        complete++;
    }));
  }
  for (auto& u : us) u.join();
  EXPECT_EQ(complete.load(), streams());
}

/// Units made on stream `creator` while it stays busy: every one of them must be stolen.
void imbalanced_fan_out(int streams, int creator) {
  const std::size_t n = scaled(5000, 100);
  std::vector<std::atomic<int>> ran_on(n);
  std::atomic<std::size_t> done{0};
  auto group = dynamic_cast<weft::randws_scheduler&>(
                   weft::execution_stream::by_rank(creator)->main_scheduler())
                   .group();
  const std::uint64_t steals_before = group->steals();
  std::atomic<bool> creator_ok{false};
  std::atomic<int> made_on{-1};  // a thief may have taken the maker itself: it is the creator
  weft::ult maker = weft::ult::create_on(*weft::execution_stream::by_rank(creator), [&] {
    weft::execution_stream* me = weft::execution_stream::self();
    made_on = me->rank();
    std::vector<weft::ult> kids;
    kids.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      // Into this stream's own pool (owner pushes).
      kids.push_back(weft::ult::create([&, i] {
        weft::this_unit::yield();
        ran_on[i].store(weft::this_unit::stream()->rank() + 1);
        done.fetch_add(1);
      }));
    }
    if (streams > 1) {
      // Keep this stream busy: the others can only get the work by stealing it.
      creator_ok = hold_stream_until([&] { return done.load() == n; }) &&
                   weft::execution_stream::self() == me;
    } else {
      creator_ok = true;
    }
    for (auto& k : kids) k.join();
  });
  maker.join();
  EXPECT_TRUE(creator_ok.load());
  EXPECT_EQ(done.load(), n);
  std::size_t on_creator = 0, never = 0;
  for (auto& r : ran_on) {
    never += r.load() == 0;
    on_creator += r.load() == made_on.load() + 1;
  }
  EXPECT_EQ(never, 0u);
  if (streams > 1) {
    EXPECT_EQ(on_creator, 0u) << "the creator stream was busy: nothing could run there";
    EXPECT_GE(group->steals() - steals_before, n);
    std::uint64_t thieves = 0;
    for (int r = 0; r < streams; ++r) {
      auto& s = dynamic_cast<weft::randws_scheduler&>(
          weft::execution_stream::by_rank(r)->main_scheduler());
      thieves += r != made_on.load() && s.steals() > 0;
    }
    EXPECT_GE(thieves, 1u);
  } else {
    EXPECT_EQ(group->steals(), steals_before);
  }
}

TEST_P(RandwsTest, StealingHappensUnderImbalanceFromThePrimary) {
  imbalanced_fan_out(streams(), 0);
}

TEST_P(RandwsTest, StealingHappensUnderImbalanceFromASecondary) {
  imbalanced_fan_out(streams(), streams() - 1);
}

TEST_P(RandwsTest, PinnedUnitsStayOnTheirStreamWhileOthersAreStolen) {
  // All units start in the primary's pool; the primary stays busy. Pinned ones run only on
  // their stream (thieves that get them forward them there); the others run wherever stolen.
  weft::execution_stream& pin = last_stream();
  const std::size_t pinned = scaled(300, 20);
  const std::size_t free_units = scaled(3000, 50);
  std::atomic<bool> pins_set{false};
  std::atomic<std::size_t> wrong{0}, pinned_runs{0}, pinned_done{0};
  std::atomic<std::size_t> free_done{0}, free_elsewhere{0};
  std::vector<weft::ult> us;
  for (std::size_t i = 0; i < pinned; ++i) {
    us.push_back(weft::ult::create([&] {
      // The pin is set after create() returned: count only runs that began after it was seen.
      wait_until([&] { return pins_set.load(); });
      for (int y = 0; y < 5; ++y) {
        weft::this_unit::yield();
        pinned_runs++;
        if (weft::this_unit::stream() != &pin) wrong++;
      }
      pinned_done++;
    }));
    us.back().pin_to(&pin);
  }
  for (std::size_t i = 0; i < free_units; ++i) {
    us.push_back(weft::ult::create([&] {
      weft::this_unit::yield();
      if (weft::this_unit::stream() != &weft::execution_stream::primary()) free_elsewhere++;
      free_done++;
    }));
  }
  pins_set = true;
  if (streams() > 1) {
    EXPECT_TRUE(hold_stream_until(
        [&] { return pinned_done.load() == pinned && free_done.load() == free_units; }));
  }
  for (auto& u : us) u.join();
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_EQ(pinned_runs.load(), pinned * 5);
  EXPECT_EQ(free_done.load(), free_units);
  if (streams() > 1) {
    EXPECT_EQ(free_elsewhere.load(), free_units);
    EXPECT_GT(sched_of(stream(0)).group()->steals(), 0u);
  }
}

TEST_P(RandwsTest, StreamsJoinAndLeaveTheGroup) {
  auto group = sched_of(stream(0)).group();
  std::atomic<std::size_t> ran{0};
  for (int round = 0; round < 3; ++round) {
    scoped_stream extra;  // WEFT_SCHED's scheduler: another member of the shared group
    auto& s = dynamic_cast<weft::randws_scheduler&>(extra->main_scheduler());
    EXPECT_EQ(s.group(), group);
    std::vector<weft::ult> us;
    us.reserve(200);
    for (int i = 0; i < 200; ++i) {
      us.push_back(weft::ult::create_on(i % 2 ? *extra : stream(i % streams()), [&] {
        weft::this_unit::yield();
        ran++;
      }));
    }
    for (auto& u : us) u.join();
  }
  EXPECT_EQ(ran.load(), 600u);
  // The freed streams' pools are still served by the remaining members: work pushed into one
  // (here from outside) runs.
  auto pools = group->pools();
  ASSERT_GE(pools.size(), static_cast<std::size_t>(streams()));
  std::atomic<int> late{0};
  std::vector<weft::ult> us;
  for (auto& p : pools)
    for (int i = 0; i < 10; ++i) us.push_back(weft::ult::create(*p, [&] { late++; }));
  for (auto& u : us) u.join();
  EXPECT_EQ(late.load(), static_cast<int>(10 * pools.size()));
}

TEST_P(RandwsTest, APrivateGroupOnStreamsMadeByHand) {
  auto group = std::make_shared<weft::randws_group>();
  scoped_stream a(std::make_unique<weft::randws_scheduler>(group));
  scoped_stream b(std::make_unique<weft::randws_scheduler>(group, weft::idle_policy{}, 4));
  EXPECT_EQ(dynamic_cast<weft::randws_scheduler&>(b->main_scheduler()).steal_batch(), 4u);
  EXPECT_NE(group, sched_of(stream(0)).group());
  const std::size_t n = scaled(4000, 40);
  std::atomic<std::size_t> done{0};
  std::atomic<std::size_t> elsewhere{0};
  weft::ult maker = weft::ult::create_on(*a, [&] {
    // b may have stolen the maker itself: whichever stream runs it is the busy one.
    weft::execution_stream* me = weft::execution_stream::self();
    std::vector<weft::ult> kids;
    for (std::size_t i = 0; i < n; ++i) {
      kids.push_back(weft::ult::create([&, me] {
        elsewhere += weft::this_unit::stream() != me;
        done++;
      }));
    }
    EXPECT_TRUE(hold_stream_until([&] { return done.load() == n; }));
    for (auto& k : kids) k.join();
  });
  maker.join();
  EXPECT_EQ(elsewhere.load(), n);  // the maker's stream was busy: the other one stole everything
  // Taken by the loop's steal_into (group->steals()) or by direct switches (pop() from a peer's
  // pool): every take from another stream's pool counts in that pool's stolen().
  EXPECT_GE(sched_of(*a).own_pool().stolen() + sched_of(*b).own_pool().stolen(), n);
}

/// Runs `body` in a ULT made on `home`; returns the stream that ran it (a peer may have taken the
/// ULT from `home` before it started: what it makes then lives on that stream).
template <class Body>
weft::execution_stream* run_maker(weft::execution_stream& home, Body&& body) {
  weft::execution_stream* ran_on = nullptr;
  weft::ult::create_on(home, [&] {
    ran_on = weft::execution_stream::self();
    body(*ran_on);
  }).join();
  return ran_on;
}

TEST_P(RandwsTest, AUnitItsCreatorJoinsAtOnceIsNotStolenWithinTheGrace) {
  // The promise: a thief leaves a running stream's units alone until they have waited
  // steal_grace(). With a grace of an hour, a unit made and joined at once runs on the stream
  // that made it, whatever the timing. (The maker itself came from outside the group, through
  // a's side lane, which thieves take from at once; once blocked and woken it goes back there,
  // so it may change streams between phases: each unit is checked against its creator's stream
  // at the time of its creation.)
  auto group = std::make_shared<weft::randws_group>();
  const auto hour = std::chrono::duration_cast<std::chrono::nanoseconds>(1h);
  scoped_stream a(std::make_unique<weft::randws_scheduler>(group, weft::idle_policy{}, 32, hour));
  scoped_stream b(std::make_unique<weft::randws_scheduler>(group, weft::idle_policy{}, 32, hour));
  EXPECT_EQ(dynamic_cast<weft::randws_scheduler&>(a->main_scheduler()).steal_grace(), hour);
  const std::size_t levels = scaled(2000, 50);
  const std::size_t phases = scaled(500, 20);
  std::atomic<std::size_t> ran{0}, elsewhere{0};
  run_maker(*a, [&](weft::execution_stream&) {
    // A chain: each level creates the next and joins it at once.
    std::function<void(std::size_t)> level = [&](std::size_t k) {
      ran++;
      if (k + 1 == levels) return;
      weft::execution_stream* here = weft::execution_stream::self();
      weft::ult::create([&, k, here] {
        elsewhere += weft::execution_stream::self() != here;
        level(k + 1);
      }).join();
    };
    level(0);
    // Short phases: a fan-out of 8, joined before the next.
    for (std::size_t i = 0; i < phases; ++i) {
      weft::execution_stream* here = weft::execution_stream::self();
      std::array<weft::ult, 8> step;
      for (auto& u : step) {
        u = weft::ult::create([&, here] {
          ran++;
          elsewhere += weft::execution_stream::self() != here;
        });
      }
      for (auto& u : step) u.join();
    }
  });
  EXPECT_EQ(ran.load(), levels + 8 * phases);
  EXPECT_EQ(elsewhere.load(), 0u);
}

TEST_P(RandwsTest, AThiefTakesAtMostHalfOfWhatItFinds) {
  // steal_into() called by hand from a ULT on stream b, while the maker keeps stream a busy: it
  // takes the oldest units, at least one and at most half (rounded up) of what a's array holds,
  // and never more than asked for.
  // A grace of an hour keeps the schedulers' own thefts out of the count.
  auto group = std::make_shared<weft::randws_group>();
  const auto hour = std::chrono::duration_cast<std::chrono::nanoseconds>(1h);
  scoped_stream a(std::make_unique<weft::randws_scheduler>(group, weft::idle_policy{}, 32, hour));
  scoped_stream b(std::make_unique<weft::randws_scheduler>(group, weft::idle_policy{}, 32, hour));
  std::atomic<std::size_t> done{0};
  std::atomic<bool> checked{false};
  run_maker(*a, [&](weft::execution_stream& home) {
    auto& own = dynamic_cast<weft::randws_scheduler&>(home.main_scheduler()).own_pool();
    weft::execution_stream& other = &home == &a.get() ? *b : *a;
    auto& theirs = dynamic_cast<weft::randws_scheduler&>(other.main_scheduler()).own_pool();
    constexpr std::size_t n = 10;
    std::vector<weft::ult> kids;
    for (std::size_t i = 0; i < n; ++i) kids.push_back(weft::ult::create([&] { done++; }));
    const std::uint64_t oldest = own.oldest_stamp();
    EXPECT_NE(oldest, 0u);
    std::size_t first = 0, second = 0, third = 0;
    std::uint64_t after = 0;
    // This ULT's steal_into() calls are the only thefts; what they take goes into the thief's
    // pool and runs there.
    weft::ult thief = weft::ult::create_on(other, [&] {
      weft::work_unit* u = own.steal_into(theirs, 100, &first);
      if (u) theirs.push(u);
      after = own.oldest_stamp();
      u = own.steal_into(theirs, 2, &second);
      if (u) theirs.push(u);
      u = own.steal_into(theirs, 1, &third);
      if (u) theirs.push(u);
      checked = true;
    });
    // Stay busy (no yield): only the thief can take units from this stream meanwhile.
    EXPECT_TRUE(hold_stream_until([&] { return checked.load(); }));
    EXPECT_EQ(first, (n + 1) / 2);
    EXPECT_EQ(second, 2u);
    EXPECT_EQ(third, 1u);
    EXPECT_GT(after, oldest) << "the oldest unit was taken: the stamp names a later push";
    thief.join();
    for (auto& k : kids) k.join();
  });
  EXPECT_EQ(done.load(), 10u);
}

TEST_P(RandwsTest, AUnitLeftWaitingByABusyStreamIsStolenAfterTheGrace) {
  // The other half of the promise: a unit the creator does not get to (it keeps its stream
  // busy without yielding) is taken once it has waited the grace, so it runs.
  auto group = std::make_shared<weft::randws_group>();
  const std::chrono::nanoseconds grace = 1ms;
  scoped_stream a(std::make_unique<weft::randws_scheduler>(group, weft::idle_policy{}, 32, grace));
  scoped_stream b(std::make_unique<weft::randws_scheduler>(group, weft::idle_policy{}, 32, grace));
  std::atomic<bool> ran{false};
  weft::execution_stream* child_ran_on = nullptr;
  weft::execution_stream* maker_ran_on = run_maker(*a, [&](weft::execution_stream&) {
    weft::ult child = weft::ult::create([&] {
      child_ran_on = weft::execution_stream::self();
      ran = true;
    });
    EXPECT_TRUE(hold_stream_until([&] { return ran.load(); }));
    child.join();
  });
  EXPECT_TRUE(ran.load());
  EXPECT_NE(child_ran_on, maker_ran_on);
  EXPECT_GE(group->steals(), 1u);
}

/// randws with a park limit of an hour: a stream that no push wakes sleeps through the test.
class RandwsWakeTest : public streams_test {
 protected:
  void SetUp() override {
    weft::config cfg = test_config(GetParam());
    cfg.scheduler = "randws";
    cfg.park_limit_ms = 3'600'000;
    init(cfg);
  }
};
WEFT_INSTANTIATE_STREAMS(RandwsWakeTest);

TEST_P(RandwsWakeTest, APrimaryResumedFromTheEventCheckWakesParkedStreamsWithItsPushes) {
  // The primary ULT is pinned to its stream: a join it waits in, ended on another stream, sends
  // it back through the stream's inbox, and the stream runs it from its event check, where it was
  // spinning idle. From then on the primary's pushes must wake the streams that parked
  // meanwhile; left marked as spinning, its stream kept every push from waking anyone, and a
  // parked thief slept through the primary's whole fork-join tree.
  if (streams() < 2) GTEST_SKIP() << "needs a stream to wake";
  for (int round = 0; round < 3; ++round) {
    weft::ult::create_on(stream(1), [] {
      // Long enough for the primary to block in its join, so that its stream's loop spins idle.
      std::this_thread::sleep_for(5ms);
    }).join();
    // The kernel thread sleeps, the primary keeps its stream: meanwhile the others run dry and
    // park (their idle spin lasts about a millisecond here).
    std::this_thread::sleep_for(30ms);
    std::atomic<bool> ran{false};
    weft::execution_stream* ran_on = nullptr;
    weft::ult child = weft::ult::create([&] {
      ran_on = weft::execution_stream::self();
      ran = true;
    });
    // The primary keeps its stream busy: only a woken thief can run the child.
    EXPECT_TRUE(hold_stream_until([&] { return ran.load(); })) << "round " << round;
    child.join();
    EXPECT_NE(ran_on, &stream(0)) << "round " << round;
  }
}

}  // namespace

namespace {

class RandwsPrimaryTest : public RandwsTest {};
WEFT_INSTANTIATE_STREAMS(RandwsPrimaryTest);

TEST_P(RandwsPrimaryTest, ThePrimaryUltIsNeverStrandedInAnOrphanedPool) {
  // The primary ULT's home pool is the primary's first main pool, here its ws_pool. Once the
  // primary runs another scheduler, only the peers serve that pool; when they all end, it is an
  // orphan, and the primary ULT, which waits for them by yielding into it, would be stuck there
  // (at finalize too), unless some stream serves orphaned pools (check_events does).
  if (streams() < 2) GTEST_SKIP() << "needs peers";
  auto next = weft::basic_scheduler::with_new_pool();
  weft::scheduler* installed = next.get();
  stream(0).set_main_scheduler(std::move(next));
  ASSERT_TRUE(wait_until([&] { return &stream(0).main_scheduler() == installed; }));
  std::atomic<int> ran{0};
  weft::ult::create_on(stream(1), [&] { ran++; }).join();
  for (int r = 1; r < streams(); ++r) stream(r).join();
  weft::ult::create([&] { ran++; }).join();
  weft::this_unit::yield();
  EXPECT_EQ(ran.load(), 2);
  finalize();  // yields the same way while it joins; returns
}

}  // namespace
