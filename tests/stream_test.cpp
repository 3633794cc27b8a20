// SPDX-License-Identifier: Apache-2.0
// Execution streams: identity, life cycle at run time (create/join/stop/revive/free), binding,
// scheduler replacement under load, orphaned pools and their adoption.
#include "test_support.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;

class StreamTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(StreamTest);

TEST_P(StreamTest, CountAndRanks) {
  EXPECT_EQ(weft::execution_stream::count(), streams());
  weft::execution_stream& primary = weft::execution_stream::primary();
  EXPECT_EQ(primary.rank(), 0);
  EXPECT_TRUE(primary.is_primary());
  EXPECT_EQ(weft::execution_stream::by_rank(0), &primary);
  for (int r = 0; r < streams(); ++r) {
    weft::execution_stream* s = weft::execution_stream::by_rank(r);
    ASSERT_NE(s, nullptr) << r;
    EXPECT_EQ(s->rank(), r);
    EXPECT_EQ(s->is_primary(), r == 0);
    EXPECT_EQ(s->state(), weft::stream_state::running);
    EXPECT_GE(s->numa_node(), -1);
  }
  EXPECT_EQ(weft::execution_stream::by_rank(streams()), nullptr);
  EXPECT_EQ(weft::execution_stream::by_rank(-1), nullptr);
  EXPECT_EQ(weft::execution_stream::by_rank(1 << 20), nullptr);
  EXPECT_EQ(weft::execution_stream::self(), &primary);
}

TEST_P(StreamTest, SelfInsideUnits) {
  std::vector<weft::execution_stream*> ult_self(static_cast<std::size_t>(streams()));
  std::vector<weft::execution_stream*> ult_this(static_cast<std::size_t>(streams()));
  std::vector<weft::execution_stream*> tasklet_self(static_cast<std::size_t>(streams()));
  std::vector<weft::ult> us;
  std::vector<weft::tasklet> ts;
  for (int r = 0; r < streams(); ++r) {
    const auto i = static_cast<std::size_t>(r);
    us.push_back(weft::ult::create_on(stream(r), [&, i] {
      ult_self[i] = weft::execution_stream::self();
      ult_this[i] = weft::this_unit::stream();
    }));
    ts.push_back(weft::tasklet::create_on(
        stream(r), [&, i] { tasklet_self[i] = weft::execution_stream::self(); }));
  }
  for (auto& u : us) u.join();
  for (auto& t : ts) t.join();
  for (int r = 0; r < streams(); ++r) {
    const auto i = static_cast<std::size_t>(r);
    EXPECT_EQ(ult_self[i], &stream(r)) << r;
    EXPECT_EQ(ult_this[i], &stream(r)) << r;
    EXPECT_EQ(tasklet_self[i], &stream(r)) << r;
  }
}

TEST_P(StreamTest, SelfOnAnExternalThreadIsNull) {
  weft::execution_stream* self = &weft::execution_stream::primary();
  weft::execution_stream* this_stream = self;
  std::thread([&] {
    self = weft::execution_stream::self();
    this_stream = weft::this_unit::stream();
  }).join();
  EXPECT_EQ(self, nullptr);
  EXPECT_EQ(this_stream, nullptr);
}

TEST_P(StreamTest, CreateJoinFreeAtRunTime) {
  weft::execution_stream& s = weft::execution_stream::create();
  EXPECT_EQ(s.rank(), streams());
  EXPECT_FALSE(s.is_primary());
  EXPECT_EQ(weft::execution_stream::count(), streams() + 1);
  EXPECT_EQ(weft::execution_stream::by_rank(streams()), &s);
  EXPECT_EQ(s.state(), weft::stream_state::running);
  weft::execution_stream* ran_on = nullptr;
  weft::ult::create_on(s, [&] { ran_on = weft::this_unit::stream(); }).join();
  EXPECT_EQ(ran_on, &s);
  s.join();
  EXPECT_EQ(s.state(), weft::stream_state::terminated);
  EXPECT_EQ(weft::execution_stream::count(), streams() + 1) << "a joined stream lives until free()";
  s.join();  // joining a terminated stream again is harmless
  s.free();
  EXPECT_EQ(weft::execution_stream::count(), streams());
  EXPECT_EQ(weft::execution_stream::by_rank(streams()), nullptr);
}

TEST_P(StreamTest, JoinRunsQueuedWorkFirst) {
  weft::execution_stream& s = weft::execution_stream::create();
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i) {
    weft::ult::create_on(s, [&] {
      weft::this_unit::yield();
      ran++;
    }).detach();
    weft::tasklet::create_on(s, [&] { ran++; }).detach();
  }
  s.join();
  EXPECT_EQ(ran.load(), 200);
  s.free();
}

TEST_P(StreamTest, FreeJoinsARunningStream) {
  weft::execution_stream& s = weft::execution_stream::create();
  std::atomic<int> ran{0};
  for (int i = 0; i < 50; ++i) weft::ult::create_on(s, [&] { ran++; }).detach();
  s.free();
  EXPECT_EQ(ran.load(), 50);
  EXPECT_EQ(weft::execution_stream::count(), streams());
}

TEST_P(StreamTest, RanksAreReusedAfterFree) {
  weft::execution_stream& a = weft::execution_stream::create();
  weft::execution_stream& b = weft::execution_stream::create();
  EXPECT_EQ(a.rank(), streams());
  EXPECT_EQ(b.rank(), streams() + 1);
  a.free();
  EXPECT_EQ(weft::execution_stream::by_rank(streams()), nullptr);
  weft::execution_stream& c = weft::execution_stream::create();
  EXPECT_EQ(c.rank(), streams()) << "the lowest free rank is taken";
  weft::execution_stream& d = weft::execution_stream::create();
  EXPECT_EQ(d.rank(), streams() + 2);
  int sum = 0;
  for (weft::execution_stream* s : {&b, &c, &d}) {
    weft::ult::create_on(*s, [&sum, s] { sum += weft::this_unit::stream() == s; }).join();
  }
  EXPECT_EQ(sum, 3);
  b.free();
  c.free();
  d.free();
  EXPECT_EQ(weft::execution_stream::count(), streams());
  // Freed initial ranks are reused as well.
  if (streams() > 1) {
    stream(1).free();
    EXPECT_EQ(weft::execution_stream::count(), streams() - 1);
    weft::execution_stream& e = weft::execution_stream::create();
    EXPECT_EQ(e.rank(), 1);
    weft::execution_stream* ran_on = nullptr;
    weft::ult::create_on(e, [&] { ran_on = weft::this_unit::stream(); }).join();
    EXPECT_EQ(ran_on, &e);
  }
}

TEST_P(StreamTest, Revive) {
  weft::execution_stream& s = weft::execution_stream::create();
  EXPECT_WEFT_ERRC(s.revive(), weft::errc::invalid_state);  // still running
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    std::atomic<int> ran{0};
    std::vector<weft::ult> us;
    for (int i = 0; i < 20; ++i) {
      us.push_back(weft::ult::create_on(s, [&] {
        weft::this_unit::yield();
        if (weft::this_unit::stream() == &s) ran++;
      }));
    }
    for (auto& u : us) u.join();
    EXPECT_EQ(ran.load(), 20);
    s.join();
    EXPECT_EQ(s.state(), weft::stream_state::terminated);
    s.revive();
    EXPECT_EQ(s.state(), weft::stream_state::running);
    EXPECT_WEFT_ERRC(s.revive(), weft::errc::invalid_state);
  }
  s.free();
}

TEST_P(StreamTest, PrimaryCannotBeJoinedStoppedOrFreed) {
  weft::execution_stream& p = weft::execution_stream::primary();
  EXPECT_WEFT_ERRC(p.join(), weft::errc::primary_stream);
  EXPECT_WEFT_ERRC(p.stop(), weft::errc::primary_stream);
  EXPECT_WEFT_ERRC(p.free(), weft::errc::primary_stream);
  // Also when asked from another stream.
  if (streams() > 1) {
    std::optional<weft::errc> got;
    weft::ult::create_on(stream(1), [&] {
      got = errc_of([] { weft::execution_stream::primary().join(); });
    }).join();
    EXPECT_TRUE(got == weft::errc::primary_stream) << describe(got);
  }
  EXPECT_EQ(p.state(), weft::stream_state::running);
  int x = 0;
  weft::ult::create([&] { x = 1; }).join();
  EXPECT_EQ(x, 1);
}

TEST_P(StreamTest, AStreamCannotJoinItself) {
  weft::execution_stream& s = weft::execution_stream::create();
  std::optional<weft::errc> join_err, stop_err;
  weft::ult::create_on(s, [&] {
    join_err = errc_of([&] { s.join(); });
    stop_err = errc_of([&] { s.stop(); });
  }).join();
  EXPECT_TRUE(join_err == weft::errc::invalid_state) << describe(join_err);
  EXPECT_TRUE(stop_err == weft::errc::invalid_state) << describe(stop_err);
  EXPECT_EQ(s.state(), weft::stream_state::running);
  s.free();
}

TEST_P(StreamTest, JoiningUltYieldsSoItsStreamKeepsWorking) {
  // The primary ULT joins `s`, whose last ULT waits for a flag that only a ULT queued behind the
  // primary on the primary stream sets: the join must let the primary stream run it.
  weft::execution_stream& s = weft::execution_stream::create();
  std::atomic<bool> flag{false};
  weft::ult waiter = weft::ult::create_on(s, [&] {
    while (!flag.load()) weft::this_unit::yield();
  });
  weft::ult setter = weft::ult::create([&] { flag.store(true); });
  s.join();
  EXPECT_TRUE(flag.load());
  waiter.join();
  setter.join();
  s.free();
}

TEST_P(StreamTest, CpusUnderCompactAndNone) {
  finalize();
  {
    weft::config cfg = test_config(streams());
    cfg.affinity = weft::affinity_policy::parse("compact");
    weft::runtime rt(cfg);
    for (int r = 0; r < streams(); ++r) EXPECT_FALSE(stream(r).cpus().empty()) << r;
    weft::execution_stream& extra = weft::execution_stream::create();
    EXPECT_FALSE(extra.cpus().empty());
    extra.free();
  }
  {
    weft::config cfg = test_config(streams());
    cfg.affinity = weft::affinity_policy::parse("none");
    weft::runtime rt(cfg);
    for (int r = 0; r < streams(); ++r) EXPECT_TRUE(stream(r).cpus().empty()) << r;
    weft::execution_stream& extra = weft::execution_stream::create();
    EXPECT_TRUE(extra.cpus().empty());
    extra.free();
  }
}

TEST_P(StreamTest, CreateWithAUserScheduler) {
  auto stats = std::make_shared<sched_stats>();
  auto sched = stats_scheduler::with_new_pool(stats);
  stats_scheduler* raw = sched.get();
  weft::execution_stream& s = weft::execution_stream::create(std::move(sched));
  EXPECT_EQ(&s.main_scheduler(), raw);
  EXPECT_EQ(&s.main_pool(), raw->pools().front().get());
  std::atomic<int> ran{0};
  std::vector<weft::ult> us;
  for (int i = 0; i < 50; ++i)
    us.push_back(weft::ult::create_on(s, [&] {
      weft::this_unit::yield();
      ran++;
    }));
  for (auto& u : us) u.join();
  EXPECT_EQ(ran.load(), 50);
  s.join();
  EXPECT_GE(stats->units_run.load(), 100);  // complete once the scheduler has returned
  EXPECT_EQ(stats->runs.load(), 1);
  EXPECT_EQ(stats->returns.load(), 1);
  s.free();
}

TEST_P(StreamTest, NullSchedulersAreRejected) {
  EXPECT_WEFT_ERRC(weft::execution_stream::create(nullptr), weft::errc::invalid_state);
  EXPECT_WEFT_ERRC(last_stream().set_main_scheduler(nullptr), weft::errc::invalid_state);
  EXPECT_EQ(weft::execution_stream::count(), streams());
}

// Replaces the main scheduler of `s` `rounds` times while ULTs on it keep yielding; no unit may
// be lost and every replacement must take effect.
void replace_under_load(weft::execution_stream& s, int rounds) {
  constexpr int ults = 64;
  const int yields = static_cast<int>(scaled(200, 20));
  std::atomic<long> count{0};
  std::atomic<long> tasklets{0};
  std::vector<weft::ult> us;
  for (int i = 0; i < ults; ++i) {
    us.push_back(weft::ult::create_on(s, [&] {
      for (int j = 0; j < yields; ++j) {
        weft::this_unit::yield();
        count.fetch_add(1, std::memory_order_relaxed);
      }
    }));
  }
  std::vector<std::shared_ptr<sched_stats>> stats;
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::shared_ptr<weft::pool> fresh = weft::make_fifo_pool(weft::access_mode::mpsc);
    std::unique_ptr<weft::scheduler> next;
    if (round % 2 == 0) {
      stats.push_back(std::make_shared<sched_stats>());
      next = std::make_unique<stats_scheduler>(std::vector{fresh}, stats.back());
    } else {
      next = std::make_unique<weft::basic_scheduler>(std::vector{fresh});
    }
    weft::scheduler* raw = next.get();
    s.set_main_scheduler(std::move(next));
    // More work arrives while the replacement is pending, in whatever the main pool is.
    for (int i = 0; i < 8; ++i) {
      weft::tasklet::create_on(s, [&] {
        tasklets.fetch_add(1, std::memory_order_release);  // pairs with the load below
      }).detach();
    }
    ASSERT_TRUE(wait_until([&] { return &s.main_pool() == fresh.get(); }))
        << "replacement never installed";
    EXPECT_EQ(&s.main_scheduler(), raw);
  }
  for (auto& u : us) u.join();
  EXPECT_EQ(count.load(), long{ults} * yields);
  EXPECT_TRUE(wait_until([&] { return tasklets.load() == 8L * rounds; }));
  EXPECT_EQ(tasklets.load(), 8L * rounds);
  // Each user scheduler ran once and, having been replaced, returned once (rounds is even: the
  // last one installed is a basic_scheduler).
  for (std::size_t i = 0; i < stats.size(); ++i) {
    EXPECT_EQ(stats[i]->runs.load(), 1) << i;
    EXPECT_EQ(stats[i]->returns.load(), 1) << i;
  }
}

TEST_P(StreamTest, SetMainSchedulerUnderLoad) {
  replace_under_load(last_stream(), 6);
}

TEST_P(StreamTest, SetMainSchedulerOfAStreamCreatedAtRunTime) {
  scoped_stream s;
  replace_under_load(*s, 6);
}

TEST_P(StreamTest, SetMainSchedulerOfAJoinedStreamTakesEffectAtRevive) {
  weft::execution_stream& s = weft::execution_stream::create();
  s.join();
  auto stats = std::make_shared<sched_stats>();
  s.set_main_scheduler(stats_scheduler::with_new_pool(stats));
  EXPECT_EQ(stats->runs.load(), 0);
  s.revive();
  std::atomic<int> ran{0};
  weft::ult::create_on(s, [&] { ran += weft::this_unit::stream() == &s; }).join();
  EXPECT_EQ(ran.load(), 1);
  EXPECT_EQ(stats->runs.load(), 1);
  s.free();
}

TEST_P(StreamTest, SecondReplacementBeforeTheFirstIsInstalled) {
  // Two set_main_scheduler() calls while the stream is busy: whatever the policy (both applied in
  // turn, or the last one wins), work already queued in the pools of either replacement must run.
  scoped_stream s;
  spin_gate gate;
  weft::ult g = weft::ult::create_on(*s, [&] { gate.hold(); });
  ASSERT_TRUE(wait_until([&] { return g.state() == weft::unit_state::running; }));
  auto pa = weft::make_fifo_pool(weft::access_mode::mpsc);
  auto pb = weft::make_fifo_pool(weft::access_mode::mpsc);
  s->set_main_scheduler(std::make_unique<weft::basic_scheduler>(std::vector{pa}));
  std::atomic<int> ran{0};
  weft::tasklet ta = weft::tasklet::create(*pa, [&] { ran++; });
  s->set_main_scheduler(std::make_unique<weft::basic_scheduler>(std::vector{pb}));
  weft::tasklet tb = weft::tasklet::create(*pb, [&] { ran++; });
  gate.open();
  g.join();
  const bool a_ran = wait_until([&] { return ta.state() == weft::unit_state::terminated; });
  EXPECT_TRUE(a_ran)
      << "a tasklet queued in the pool of the first (superseded) replacement never ran";
  tb.join();
  if (a_ran) {
    ta.join();
  } else {
    ta.detach();  // it can never run: do not wait for it
  }
  EXPECT_EQ(ran.load(), a_ran ? 2 : 1);
}

TEST_P(StreamTest, CreateAndFreeStreamsFromUlts) {
  // Streams may be created, used and freed from ULTs on any stream (free's join yields).
  std::atomic<int> ok{0};
  std::vector<weft::ult> us;
  for (int r = 0; r < streams(); ++r) {
    us.push_back(weft::ult::create_on(stream(r), [&] {
      weft::execution_stream& mine = weft::execution_stream::create();
      weft::execution_stream* ran_on = nullptr;
      weft::ult::create_on(mine, [&] { ran_on = weft::this_unit::stream(); }).join();
      if (ran_on == &mine) ok++;
      mine.free();
    }));
  }
  for (auto& u : us) u.join();
  EXPECT_EQ(ok.load(), streams());
  EXPECT_EQ(weft::execution_stream::count(), streams());
}

TEST_P(StreamTest, UltPinnedToAFreedStream) {
  // A ULT pinned to a stream that is then joined and freed while the ULT is suspended must still
  // run somewhere when resumed (the stream object it was pinned to no longer exists).
  weft::execution_stream& s = weft::execution_stream::create();
  std::atomic<int> phase{0};
  weft::ult u = weft::ult::create([&] {
    phase = 1;
    weft::this_unit::suspend();
    phase = 2;
  });
  u.pin_to(&s);
  ASSERT_TRUE(wait_until([&] { return u.state() == weft::unit_state::blocked; }));
  EXPECT_EQ(phase.load(), 1);
  s.free();
  u.resume();
  u.join();
  EXPECT_EQ(phase.load(), 2);
}

// ----------------------------------------------------------------------------------------------
// stop(), orphaned pools, adoption

/// A stream over one pool of `mode`, busy with a gate ULT until stop() was requested, with
/// `queued` units (ULTs and tasklets alternately) waiting behind the gate. Each queued unit
/// increments `ran` when it runs, and first `ran_here` when it runs on that stream. Once the
/// stream has stopped its pool is orphaned, and every other stream's check_events() may serve
/// it (docs/events.md), so only `ran_here` says what the stopped stream left undone.
struct stopped_stream {
  /// basic, and a way for a unit of its stream to see that the stream was asked to stop.
  struct observed_basic final : weft::basic_scheduler {
    using basic_scheduler::basic_scheduler;
    /// has_to_stop(), for a unit running on this scheduler's stream.
    bool asked_to_stop() const noexcept { return has_to_stop(); }
  };

  std::shared_ptr<weft::pool> pool;
  weft::execution_stream* s = nullptr;
  std::vector<weft::ult> ults;
  std::vector<weft::tasklet> tasklets;

  stopped_stream(weft::access_mode mode, int queued, std::atomic<int>& ran,
                 std::atomic<int>& ran_here) {
    pool = weft::make_fifo_pool(mode);
    auto sched = std::make_unique<observed_basic>(std::vector{pool});
    const observed_basic* observer = sched.get();
    s = &weft::execution_stream::create(std::move(sched));
    // Occupies the stream until its stop request has landed, so that the scheduler's next
    // check stops it with every queued unit still in the pool.
    weft::ult gate = weft::ult::create_on(*s, [observer] {
      while (!observer->asked_to_stop()) std::this_thread::yield();
    });
    // The gate must be running before stop() is asked for: a stream that has not popped it yet
    // would stop with the gate itself still queued (for a single-producer pool it sits in the
    // stream's inbox until the stream's first check_events, which also sees the stop).
    EXPECT_TRUE(wait_until([&] { return gate.state() == weft::unit_state::running; }));
    for (int i = 0; i < queued; ++i) {
      if (i % 2 == 0) {
        ults.push_back(weft::ult::create(*pool, [&ran, &ran_here, self = s] {
          weft::this_unit::yield();
          if (weft::this_unit::stream() == self) ran_here.fetch_add(1);
          ran.fetch_add(1);
        }));
      } else {
        tasklets.push_back(weft::tasklet::create(*pool, [&ran, &ran_here, self = s] {
          if (weft::this_unit::stream() == self) ran_here.fetch_add(1);
          ran.fetch_add(1);
        }));
      }
    }
    s->stop();
    gate.join();
  }
};

class OrphanTest : public streams_test {
 protected:
  /// The stream that adopts: a secondary one when there is one, else the primary.
  weft::execution_stream& adopter() const { return last_stream(); }
};
WEFT_INSTANTIATE_STREAMS(OrphanTest);

void stop_then_adopt(weft::execution_stream& adopter, weft::access_mode mode) {
  // Above event_freq (64) even when scaled down: the scheduler may run up to 63 queued units
  // between the gate's end and its next check, and some must be left.
  const int queued = static_cast<int>(scaled(1000, 200));
  const int later = static_cast<int>(scaled(300, 60));
  std::atomic<int> ran{0}, ran_here{0};
  stopped_stream st(mode, queued, ran, ran_here);
  EXPECT_EQ(st.s->state(), weft::stream_state::terminated);
  const int ran_before_stop = ran_here.load();
  EXPECT_LT(ran_before_stop, queued) << "stop() must leave queued units in the pool";
  EXPECT_EQ(&st.s->main_pool(), st.pool.get());
  // Units can still be added to the stopped stream's pool.
  std::vector<weft::ult> more;
  for (int i = 0; i < later; ++i) {
    more.push_back(weft::ult::create(st.s->main_pool(), [&ran] {
      weft::this_unit::yield();
      ran.fetch_add(1);
    }));
  }
  adopter.adopt_orphaned_pools();
  for (auto& u : st.ults) u.join();
  for (auto& t : st.tasklets) t.join();
  for (auto& u : more) u.join();
  EXPECT_EQ(ran.load(), queued + later);
  EXPECT_EQ(ran_here.load(), ran_before_stop) << "a stopped stream runs nothing";
  EXPECT_TRUE(st.pool->empty());
  // The adopted pool keeps serving: new work in it runs on the adopter. Adoption happens at the
  // adopter's next check_events(); until then every stream serves the orphan (the units above
  // may all have run that way), so wait for it to land.
  EXPECT_TRUE(wait_until([&] { return st.pool->attached_schedulers() == 1; }));
  weft::execution_stream* ran_on = nullptr;
  {
    std::atomic<weft::execution_stream*> where{nullptr};
    weft::ult u = weft::ult::create(*st.pool, [&] { where.store(weft::this_unit::stream()); });
    // Another stream adopted it: wait before the join, since a join of a unit still queued in a
    // multi-consumer pool would run it on the joiner's stream (a join that helps). Adopted by
    // this stream, the pool is one of its scheduler's: the join blocks while the scheduler runs
    // it (a yield loop here would keep the stream's first pool busy).
    if (&adopter != weft::execution_stream::self()) {
      EXPECT_TRUE(wait_until([&] { return where.load() != nullptr; }));
    }
    u.join();
    ran_on = where.load();
  }
  EXPECT_EQ(ran_on, &adopter);
  st.s->free();
}

TEST_P(OrphanTest, StopThenAdoptMpsc) {
  stop_then_adopt(adopter(), weft::access_mode::mpsc);
}
TEST_P(OrphanTest, StopThenAdoptMpmc) {
  stop_then_adopt(adopter(), weft::access_mode::mpmc);
}
TEST_P(OrphanTest, StopThenAdoptPrivate) {
  stop_then_adopt(adopter(), weft::access_mode::priv);
}
TEST_P(OrphanTest, StopThenAdoptSpsc) {
  stop_then_adopt(adopter(), weft::access_mode::spsc);
}
TEST_P(OrphanTest, StopThenAdoptByThePrimary) {
  stop_then_adopt(weft::execution_stream::primary(), weft::access_mode::mpsc);
}

TEST_P(OrphanTest, StopThenReviveRunsTheLeftovers) {
  std::atomic<int> ran{0}, ran_here{0};
  stopped_stream st(weft::access_mode::mpsc, 500, ran, ran_here);
  EXPECT_LT(ran_here.load(), 500);
  st.s->revive();
  for (auto& u : st.ults) u.join();
  for (auto& t : st.tasklets) t.join();
  EXPECT_EQ(ran.load(), 500);
  weft::execution_stream* ran_on = nullptr;
  weft::ult::create_on(*st.s, [&] { ran_on = weft::this_unit::stream(); }).join();
  EXPECT_EQ(ran_on, st.s);
  st.s->free();
}

TEST_P(OrphanTest, ReviveAfterAdoptionStillWorks) {
  std::atomic<int> ran{0}, ran_here{0};
  stopped_stream st(weft::access_mode::mpsc, 200, ran, ran_here);
  adopter().adopt_orphaned_pools();
  for (auto& u : st.ults) u.join();
  for (auto& t : st.tasklets) t.join();
  EXPECT_EQ(ran.load(), 200);
  st.s->revive();
  weft::execution_stream* ran_on = nullptr;
  weft::ult::create_on(*st.s, [&] { ran_on = weft::this_unit::stream(); }).join();
  EXPECT_EQ(ran_on, st.s);
  st.s->free();
}

TEST_P(OrphanTest, FinalizeRunsOrphanedWork) {
  std::atomic<int> ran{0}, ran_here{0};
  {
    stopped_stream st(weft::access_mode::mpsc, 600, ran, ran_here);
    EXPECT_LT(ran_here.load(), 600);
    for (auto& u : st.ults) u.detach();
    for (auto& t : st.tasklets) t.detach();
    for (int i = 0; i < 100; ++i) {
      weft::ult::create(*st.pool, [&ran] { ran.fetch_add(1); }).detach();
    }
  }
  finalize();
  EXPECT_EQ(ran.load(), 700);
}

TEST_P(OrphanTest, FinalizeRunsOrphanedWorkOfAPrivatePool) {
  std::atomic<int> ran{0}, ran_here{0};
  {
    stopped_stream st(weft::access_mode::priv, 400, ran, ran_here);
    for (auto& u : st.ults) u.detach();
    for (auto& t : st.tasklets) t.detach();
  }
  finalize();
  EXPECT_EQ(ran.load(), 400);
}

TEST_P(OrphanTest, AdoptWithNothingOrphanedIsHarmless) {
  for (int r = 0; r < streams(); ++r) stream(r).adopt_orphaned_pools();
  std::atomic<int> ran{0};
  std::vector<weft::ult> us;
  for (int r = 0; r < streams(); ++r) us.push_back(weft::ult::create_on(stream(r), [&] { ran++; }));
  for (auto& u : us) u.join();
  EXPECT_EQ(ran.load(), streams());
}

TEST_P(OrphanTest, SharedPoolSurvivesOneOfItsStreams) {
  // Two streams serve one mpmc pool; when one is joined the other keeps serving it, and nothing
  // is orphaned.
  auto shared = weft::make_fifo_pool(weft::access_mode::mpmc);
  weft::execution_stream& a =
      weft::execution_stream::create(std::make_unique<weft::basic_scheduler>(std::vector{shared}));
  weft::execution_stream& b =
      weft::execution_stream::create(std::make_unique<weft::basic_scheduler>(std::vector{shared}));
  EXPECT_EQ(shared->attached_schedulers(), 2);
  std::atomic<int> ran{0};
  std::vector<weft::ult> us;
  for (int i = 0; i < 200; ++i)
    us.push_back(weft::ult::create(*shared, [&] {
      weft::this_unit::yield();
      ran++;
    }));
  a.join();
  for (int i = 0; i < 200; ++i)
    us.push_back(weft::ult::create(*shared, [&] {
      weft::this_unit::yield();
      ran++;
    }));
  for (auto& u : us) u.join();
  EXPECT_EQ(ran.load(), 400);
  EXPECT_EQ(shared->attached_schedulers(), 1);
  weft::execution_stream* ran_on = nullptr;
  {
    // Waited for before the join: a join of a unit still queued in a multi-consumer pool
    // would run it on the joiner's stream (a join that helps).
    std::atomic<weft::execution_stream*> where{nullptr};
    weft::ult u = weft::ult::create(*shared, [&] { where.store(weft::this_unit::stream()); });
    EXPECT_TRUE(wait_until([&] { return where.load() != nullptr; }));
    u.join();
    ran_on = where.load();
  }
  EXPECT_EQ(ran_on, &b);
  a.free();
  b.free();
}

}  // namespace
