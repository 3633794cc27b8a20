// SPDX-License-Identifier: Apache-2.0
// Schedulers: user-defined schedulers written against the public contract, the registry
// (register_scheduler / make_scheduler / scheduler_names) and WEFT_SCHED.
#include "test_support.hpp"
#include "weft/internal/unit.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;

class SchedulerTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(SchedulerTest);

/// Round robin over its pools (one pop per pool in turn); idles by sleeping in pop_wait() on its
/// first pool. Counts what it runs.
class round_robin_sleeper final : public weft::loop_scheduler {
 public:
  round_robin_sleeper(std::vector<std::shared_ptr<weft::pool>> pools,
                      std::shared_ptr<sched_stats> stats)
      : weft::loop_scheduler(std::move(pools)), stats_(std::move(stats)) {}
  void run() override {
    stats_->runs++;
    std::size_t next = 0;
    unsigned pops = 0;
    for (;;) {
      const auto& ps = pools();
      weft::work_unit* u = nullptr;
      for (std::size_t i = 0; i < ps.size() && !u; ++i) u = ps[(next + i) % ps.size()]->pop();
      next = (next + 1) % ps.size();
      if (u) {
        run_unit(u);
        stats_->units_run.fetch_add(1, std::memory_order_relaxed);
        if (++pops < event_freq()) continue;
      }
      pops = 0;
      stats_->checks.fetch_add(1, std::memory_order_relaxed);
      if (check_events()) break;
      if (!u) {
        // Sleep briefly on the first pool; run what arrives at once.
        if (weft::work_unit* w = pools().front()->pop_wait(200us)) {
          run_unit(w);
          stats_->units_run.fetch_add(1, std::memory_order_relaxed);
        }
      }
    }
    stats_->returns++;
  }

 private:
  std::shared_ptr<sched_stats> stats_;
};

/// A scheduler whose migration pool is its second pool.
class two_pool_scheduler final : public weft::loop_scheduler {
 public:
  explicit two_pool_scheduler(std::vector<std::shared_ptr<weft::pool>> pools)
      : weft::loop_scheduler(std::move(pools)) {}
  weft::pool& migration_pool() noexcept override { return *pools()[1]; }
  void run() override {
    unsigned pops = 0;
    for (;;) {
      weft::work_unit* u = nullptr;
      for (const auto& p : pools())
        if ((u = p->pop())) break;
      if (u) {
        run_unit(u);
        if (++pops < event_freq()) continue;
      }
      pops = 0;
      if (check_events()) return;
      if (!u) std::this_thread::yield();
    }
  }
};

TEST_P(SchedulerTest, UserSchedulerAsAStreamMainScheduler) {
  auto stats = std::make_shared<sched_stats>();
  auto a = weft::make_fifo_pool(weft::access_mode::mpsc);
  auto b = weft::make_fifo_pool(weft::access_mode::mpmc);
  scoped_stream s(std::make_unique<round_robin_sleeper>(std::vector{a, b}, stats));
  std::atomic<int> ran{0}, wrong{0};
  std::vector<weft::ult> us;
  std::vector<weft::tasklet> ts;
  for (int i = 0; i < 300; ++i) {
    us.push_back(weft::ult::create(i % 2 ? *a : *b, [&] {
      for (int j = 0; j < 3; ++j) {
        if (weft::this_unit::stream() != &*s) wrong++;
        weft::this_unit::yield();
      }
      ran++;
    }));
    ts.push_back(weft::tasklet::create(i % 2 ? *b : *a, [&] { ran++; }));
  }
  // Joined once they ran: a join of a unit still queued in the multi-consumer pool would take it
  // out and run it on the joiner's stream (a join that helps).
  EXPECT_TRUE(wait_until([&] { return ran.load() == 600; }));
  for (auto& u : us) u.join();
  for (auto& t : ts) t.join();
  EXPECT_EQ(ran.load(), 600);
  EXPECT_EQ(wrong.load(), 0);
  // join() ends it through check_events().
  s->join();
  // Counted after run_unit() returns: complete once the scheduler has returned.
  EXPECT_GE(stats->units_run.load(), 300 * 4 + 300);
  EXPECT_GT(stats->checks.load(), 0);
  EXPECT_EQ(stats->runs.load(), 1);
  EXPECT_EQ(stats->returns.load(), 1);
}

TEST_P(SchedulerTest, UserSchedulerReplacesABasicOne) {
  auto stats = std::make_shared<sched_stats>();
  weft::execution_stream& target = last_stream();
  auto fresh = weft::make_fifo_pool(weft::access_mode::mpsc);
  target.set_main_scheduler(std::make_unique<round_robin_sleeper>(std::vector{fresh}, stats));
  ASSERT_TRUE(wait_until([&] { return &target.main_pool() == fresh.get(); }));
  // The main pool switches just before the new scheduler's run() is entered.
  EXPECT_TRUE(wait_until([&] { return stats->runs.load() == 1; }));
  std::atomic<int> ran{0};
  std::vector<weft::ult> us;
  for (int i = 0; i < 100; ++i)
    us.push_back(weft::ult::create_on(target, [&] {
      weft::this_unit::yield();
      ran += weft::this_unit::stream() == &target;
    }));
  for (auto& u : us) u.join();
  EXPECT_EQ(ran.load(), 100);
  // The scheduler counts a run after run_unit() returns, which may be after the joiner resumed.
  EXPECT_TRUE(wait_until([&] { return stats->units_run.load() >= 200; }))
      << stats->units_run.load();
}

TEST_P(SchedulerTest, AReplacementThatKeepsASingleProducerPoolKeepsItsProducer) {
  // The new scheduler shares the old one's private pool: the stream stays its producer (and
  // consumer), so its pushes keep the direct path instead of the orphan lock.
  weft::execution_stream& target = last_stream();
  auto priv = weft::make_fifo_pool(weft::access_mode::priv);
  auto other = weft::make_fifo_pool(weft::access_mode::mpsc);
  for (int round = 0; round < 3; ++round) {
    std::vector<std::shared_ptr<weft::pool>> pools{priv, other};
    if (round % 2) std::swap(pools[0], pools[1]);
    target.set_main_scheduler(std::make_unique<weft::basic_scheduler>(pools));
    ASSERT_TRUE(wait_until([&] { return &target.main_pool() == pools[0].get(); }));
    EXPECT_EQ(priv->producer(), &target) << "round " << round;
    EXPECT_EQ(priv->consumer(), &target) << "round " << round;
    std::atomic<int> ran{0};
    weft::ult::create_on(target, [&] {
      weft::ult u = weft::ult::create(*priv, [&] {
        weft::this_unit::yield();
        ran += weft::this_unit::stream() == &target;
      });
      u.join();
    }).join();
    EXPECT_EQ(ran.load(), 1);
  }
}

TEST_P(SchedulerTest, UserMigrationPool) {
  auto first = weft::make_fifo_pool(weft::access_mode::mpsc);
  auto second = weft::make_fifo_pool(weft::access_mode::mpmc);
  auto sched = std::make_unique<two_pool_scheduler>(std::vector{first, second});
  EXPECT_EQ(&sched->migration_pool(), second.get());
  scoped_stream s(std::move(sched));
  EXPECT_EQ(&s->main_pool(), first.get());
  EXPECT_EQ(&s->migration_pool(), second.get());
  // A stock stream migrates into its main pool.
  EXPECT_EQ(&weft::execution_stream::primary().migration_pool(),
            &weft::execution_stream::primary().main_pool());
  // Migrating to the stream goes through its migration pool: by handle (the ULT is queued in the
  // primary's pool, so it moves at once) and from inside.
  std::atomic<int> ran{0};
  std::vector<weft::ult> us;
  for (int i = 0; i < 50; ++i) {
    us.push_back(weft::ult::create([&] { ran += weft::this_unit::stream() == &*s; }));
    us.back().migrate_to(*s);
    EXPECT_EQ(us.back().last_pool(), second.get());
  }
  for (int i = 0; i < 50; ++i) {
    us.push_back(weft::ult::create([&] {
      weft::this_unit::migrate_to(*s);
      ran += weft::this_unit::stream() == &*s;
      ran += weft::detail::as_unit(weft::this_unit::current())->home == second.get();
    }));
  }
  // Joined once they ran (a join of a unit still queued in `second`, a multi-consumer pool, would
  // run it on the joiner's stream).
  EXPECT_TRUE(wait_until([&] { return ran.load() == 150; }));
  for (auto& u : us) u.join();
  EXPECT_EQ(ran.load(), 150);
}

TEST_F(env_test, SchedulerConstructionIsChecked) {
  EXPECT_WEFT_ERRC(two_pool_scheduler(std::vector<std::shared_ptr<weft::pool>>{}),
                   weft::errc::invalid_config);
  EXPECT_WEFT_ERRC(two_pool_scheduler(std::vector<std::shared_ptr<weft::pool>>{nullptr}),
                   weft::errc::invalid_config);
  EXPECT_WEFT_ERRC(weft::basic_scheduler(std::vector<std::shared_ptr<weft::pool>>{}),
                   weft::errc::invalid_config);
  auto b = weft::basic_scheduler::with_new_pool(weft::access_mode::priv);
  ASSERT_EQ(b->pools().size(), 1u);
  EXPECT_EQ(b->pools().front()->access(), weft::access_mode::priv);
  EXPECT_EQ(&b->migration_pool(), b->pools().front().get());
  EXPECT_EQ(weft::basic_scheduler::with_new_pool()->pools().front()->access(),
            weft::access_mode::mpsc);
}

// ----------------------------------------------------------------------------------------------
// The registry

std::shared_ptr<sched_stats> registered_stats = std::make_shared<sched_stats>();

void register_stats_scheduler(const char* name) {
  weft::register_scheduler(name, [] { return stats_scheduler::with_new_pool(registered_stats); });
}

TEST_F(env_test, RegisterAndMake) {
  register_stats_scheduler("test-stats");
  auto s = weft::make_scheduler("test-stats");
  ASSERT_NE(s, nullptr);
  EXPECT_NE(dynamic_cast<stats_scheduler*>(s.get()), nullptr);
  auto b = weft::make_scheduler("basic");
  EXPECT_NE(dynamic_cast<weft::basic_scheduler*>(b.get()), nullptr);
  // Each call builds a new scheduler over a fresh pool.
  auto s2 = weft::make_scheduler("test-stats");
  EXPECT_NE(s2.get(), s.get());
  EXPECT_NE(s2->pools().front(), s->pools().front());
}

TEST_F(env_test, SchedulerNamesAreSorted) {
  register_stats_scheduler("zz-last");
  register_stats_scheduler("aa-first");
  register_stats_scheduler("mm-middle");
  const auto names = weft::scheduler_names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const char* n : {"basic", "zz-last", "aa-first", "mm-middle"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  }
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "no duplicates";
}

TEST_F(env_test, RegisterReplacesAnEntry) {
  weft::register_scheduler("test-replace", [] { return weft::basic_scheduler::with_new_pool(); });
  EXPECT_NE(dynamic_cast<weft::basic_scheduler*>(weft::make_scheduler("test-replace").get()),
            nullptr);
  register_stats_scheduler("test-replace");
  EXPECT_NE(dynamic_cast<stats_scheduler*>(weft::make_scheduler("test-replace").get()), nullptr);
  const auto names = weft::scheduler_names();
  EXPECT_EQ(std::count(names.begin(), names.end(), "test-replace"), 1);
}

TEST_F(env_test, RegistryErrors) {
  EXPECT_WEFT_ERRC(
      weft::register_scheduler("", [] { return weft::basic_scheduler::with_new_pool(); }),
      weft::errc::invalid_config);
  EXPECT_WEFT_ERRC(weft::register_scheduler("test-null-factory", weft::scheduler_factory{}),
                   weft::errc::invalid_config);
  weft::register_scheduler("test-returns-null", [] { return std::unique_ptr<weft::scheduler>{}; });
  EXPECT_WEFT_ERRC(weft::make_scheduler("test-returns-null"), weft::errc::invalid_config);
  EXPECT_WEFT_ERRC(weft::make_scheduler("test-never-registered"), weft::errc::invalid_config);
  weft::config cfg = test_config(2);
  cfg.scheduler = "test-returns-null";
  EXPECT_WEFT_ERRC(weft::init(cfg), weft::errc::invalid_config);
  EXPECT_FALSE(weft::initialized());
}

class RegisteredSchedulerTest : public streams_test {
 protected:
  void SetUp() override { register_stats_scheduler("test-env-sched"); }
};
WEFT_INSTANTIATE_STREAMS(RegisteredSchedulerTest);

void expect_every_stream_runs_stats_scheduler(int streams) {
  for (int r = 0; r < streams; ++r) {
    weft::execution_stream* s = weft::execution_stream::by_rank(r);
    ASSERT_NE(s, nullptr);
    auto* sched = dynamic_cast<stats_scheduler*>(&s->main_scheduler());
    ASSERT_NE(sched, nullptr) << "stream " << r;
    EXPECT_EQ(&sched->running_stream(), s);
  }
  // Streams created later use it too.
  scoped_stream extra;
  EXPECT_NE(dynamic_cast<stats_scheduler*>(&extra->main_scheduler()), nullptr);
  std::atomic<int> ran{0};
  std::vector<weft::ult> us;
  for (int i = 0; i < 100; ++i)
    us.push_back(weft::ult::create_on(*weft::execution_stream::by_rank(i % streams), [&] {
      weft::this_unit::yield();
      ran++;
    }));
  us.push_back(weft::ult::create_on(*extra, [&] { ran++; }));
  for (auto& u : us) u.join();
  EXPECT_EQ(ran.load(), 101);
}

TEST_P(RegisteredSchedulerTest, SelectedThroughWeftSched) {
  const long before = registered_stats->units_run.load();
  scoped_env e("WEFT_SCHED", "test-env-sched");
  init(test_config(streams()));
  EXPECT_EQ(weft::current_config().scheduler, "test-env-sched");
  expect_every_stream_runs_stats_scheduler(streams());
  // Counted after run_unit() returns, which may be after the joiner resumed.
  EXPECT_TRUE(wait_until([&] { return registered_stats->units_run.load() - before >= 201; }))
      << registered_stats->units_run.load() - before;
}

TEST_P(RegisteredSchedulerTest, SelectedThroughTheConfig) {
  weft::config cfg = test_config(streams());
  cfg.scheduler = "test-env-sched";
  init(cfg);
  expect_every_stream_runs_stats_scheduler(streams());
}

TEST_P(RegisteredSchedulerTest, FinalizeEndsUserSchedulers) {
  const int before_runs = registered_stats->runs.load();
  const int before_returns = registered_stats->returns.load();
  weft::config cfg = test_config(streams());
  cfg.scheduler = "test-env-sched";
  init(cfg);
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i)
    weft::ult::create_on(stream(i % streams()), [&] { ran++; }).detach();
  finalize();
  EXPECT_EQ(ran.load(), 100);
  // Every stream's scheduler (the primary's included) returned: it honoured the join request.
  EXPECT_EQ(registered_stats->runs.load() - before_runs, streams());
  EXPECT_EQ(registered_stats->returns.load() - before_returns, streams());
}

}  // namespace
