// The stock schedulers (basic, basic_wait, prio, randws) as main schedulers of every stream, over
// 1, 2 and 4 streams: every unit runs exactly once, selection through WEFT_SCHED and the config,
// replacing the main schedulers while units run, and the idle policies (the CPU an idle process
// uses, and how fast a parked stream wakes up).
#include <sys/resource.h>

#include <weft/schedulers/basic_scheduler.hpp>
#include <weft/schedulers/prio_scheduler.hpp>
#include <weft/schedulers/randws_scheduler.hpp>

#include <numeric>
#include <thread>
#include <tuple>

#include "test_support.hpp"

namespace {

using namespace weft_test;
using namespace std::chrono_literals;

const std::vector<std::string> stock_names = {"basic", "basic_wait", "prio", "randws"};

/// True when `s` is the stock scheduler registered as `name`.
bool is_stock(const weft::scheduler& s, const std::string& name) {
  if (name == "basic_wait") return dynamic_cast<const weft::basic_wait_scheduler*>(&s) != nullptr;
  if (name == "basic") {
    return dynamic_cast<const weft::basic_scheduler*>(&s) != nullptr &&
           dynamic_cast<const weft::basic_wait_scheduler*>(&s) == nullptr;
  }
  if (name == "prio") return dynamic_cast<const weft::prio_scheduler*>(&s) != nullptr;
  if (name == "randws") return dynamic_cast<const weft::randws_scheduler*>(&s) != nullptr;
  return false;
}

/// A runtime of get<1>(GetParam()) streams whose main schedulers are get<0>(GetParam()).
class StockTest : public ::testing::TestWithParam<std::tuple<std::string, int>> {
 protected:
  void SetUp() override {
    weft::config cfg = test_config(streams());
    cfg.scheduler = name();
    rt_.emplace(cfg);
  }
  void TearDown() override {
    rt_.reset();
    EXPECT_FALSE(weft::initialized());
  }
  const std::string& name() const { return std::get<0>(GetParam()); }
  int streams() const { return std::get<1>(GetParam()); }
  static weft::execution_stream& stream(int r) { return *weft::execution_stream::by_rank(r); }

  clean_weft_env env_;
  std::optional<weft::runtime> rt_;
};

INSTANTIATE_TEST_SUITE_P(
    , StockTest, ::testing::Combine(::testing::ValuesIn(stock_names), ::testing::Values(1, 2, 4)),
    [](const auto& info) {
      return std::get<0>(info.param) + "_streams" + std::to_string(std::get<1>(info.param));
    });

/// Per-unit run counters and a checksum over the ids that ran.
struct tally {
  explicit tally(std::size_t n) : runs(n) {}
  void ran(std::size_t i) {
    runs[i].fetch_add(1, std::memory_order_relaxed);
    sum.fetch_add(i + 1, std::memory_order_relaxed);
  }
  /// Every unit ran exactly once.
  void expect_once() const {
    std::size_t wrong = 0;
    for (const auto& r : runs) wrong += r.load() != 1;
    EXPECT_EQ(wrong, 0u);
    const std::size_t n = runs.size();
    EXPECT_EQ(sum.load(), n * (n + 1) / 2);
  }
  std::vector<std::atomic<int>> runs;
  std::atomic<std::size_t> sum{0};
};

TEST_P(StockTest, EveryStreamRunsTheSelectedScheduler) {
  EXPECT_EQ(weft::current_config().scheduler, name());
  for (int r = 0; r < streams(); ++r)
    EXPECT_TRUE(is_stock(stream(r).main_scheduler(), name())) << "stream " << r;
  scoped_stream extra;  // later streams too
  EXPECT_TRUE(is_stock(extra->main_scheduler(), name()));
  std::atomic<int> ran{0};
  weft::ult::create_on(*extra, [&] { ran++; }).join();
  EXPECT_EQ(ran.load(), 1);
}

TEST_P(StockTest, EveryUnitRunsExactlyOnce) {
  // ULTs on every stream that yield and spawn nested ULTs and tasklets on their own stream.
  const std::size_t outer = scaled(1000, 20);
  const std::size_t per = 4;  // nested units per outer ULT
  tally t(outer * (1 + per));
  std::vector<weft::ult> us;
  for (std::size_t i = 0; i < outer; ++i) {
    us.push_back(weft::ult::create_on(stream(static_cast<int>(i % streams())), [&t, i, outer] {
      std::vector<weft::ult> inner;
      std::vector<weft::tasklet> tasks;
      for (std::size_t k = 0; k < per; ++k) {
        const std::size_t id = outer + i * per + k;
        if (k % 2) {
          inner.push_back(weft::ult::create([&t, id] {
            weft::this_unit::yield();
            t.ran(id);
          }));
        } else {
          tasks.push_back(weft::tasklet::create([&t, id] { t.ran(id); }));
        }
      }
      weft::this_unit::yield();
      for (auto& u : inner) u.join();
      for (auto& k : tasks) k.join();
      t.ran(i);
    }));
  }
  for (auto& u : us) u.join();
  t.expect_once();
}

TEST_P(StockTest, DetachedUnitsAllRunBeforeFinalizeReturns) {
  const std::size_t n = scaled(3000, 50);
  tally t(n);
  for (std::size_t i = 0; i < n; ++i) {
    weft::ult::create_on(stream(static_cast<int>(i % streams())), [&t, i] {
      weft::this_unit::yield();
      t.ran(i);
    }).detach();
  }
  rt_.reset();
  t.expect_once();
}

TEST_P(StockTest, SelectedThroughWeftSched) {
  rt_.reset();
  scoped_env e("WEFT_SCHED", name().c_str());
  rt_.emplace(test_config(streams()));
  EXPECT_EQ(weft::current_config().scheduler, name());
  for (int r = 0; r < streams(); ++r)
    EXPECT_TRUE(is_stock(stream(r).main_scheduler(), name())) << "stream " << r;
}

/// Replaces every stream's main scheduler with `make()` while `n` ULTs yield on them, then checks
/// that each ULT ran to its end once.
template <class Make>
void replace_under_load(int streams, Make make, const std::string& what) {
  const std::size_t n = scaled(1000, 40);
  const int yields = 20;
  tally t(n);
  std::atomic<long> switches{0};
  std::vector<weft::ult> us;
  for (std::size_t i = 0; i < n; ++i) {
    us.push_back(weft::ult::create_on(
        *weft::execution_stream::by_rank(static_cast<int>(i % streams)), [&, i] {
          for (int y = 0; y < yields; ++y) {
            weft::this_unit::yield();
            switches.fetch_add(1, std::memory_order_relaxed);
          }
          t.ran(i);
        }));
  }
  // Let the load get going, then swap every stream's scheduler (the primary's included).
  ASSERT_TRUE(wait_until([&] { return switches.load() > static_cast<long>(n); }));
  std::vector<weft::scheduler*> installed;
  std::vector<weft::pool*> first_pools;
  for (int r = 0; r < streams; ++r) {
    auto next = make();
    installed.push_back(next.get());
    first_pools.push_back(next->pools().front().get());
    weft::execution_stream::by_rank(r)->set_main_scheduler(std::move(next));
  }
  for (auto& u : us) u.join();
  t.expect_once();
  EXPECT_EQ(switches.load(), static_cast<long>(n) * yields);
  // Every replacement got installed. main_pool() may be read while the stream swaps schedulers
  // (it is published once the new one is attached); main_scheduler() only after that.
  for (int r = 0; r < streams; ++r) {
    weft::execution_stream& s = *weft::execution_stream::by_rank(r);
    EXPECT_TRUE(wait_until([&] { return &s.main_pool() == first_pools[r]; }))
        << what << ": stream " << r;
    EXPECT_EQ(&s.main_scheduler(), installed[r]) << what << ": stream " << r;
  }
}

TEST_P(StockTest, ReplaceEveryMainSchedulerUnderLoad) {
  // From the selected scheduler to each stock scheduler (itself included), one after the other:
  // the pools the old ones leave behind (randws pools that peers still serve, or adopted ones)
  // keep their units.
  for (const auto& next : stock_names) {
    replace_under_load(
        streams(), [&] { return weft::make_scheduler(next); }, name() + " -> " + next);
  }
}

TEST_P(StockTest, StockSchedulersTakeAnIdlePolicy) {
  const weft::idle_policy spin_park{.spin = 4, .park = true};
  const weft::idle_policy yield_only{.spin = 0, .park = false};
  std::vector<std::unique_ptr<weft::scheduler>> scheds;
  scheds.push_back(std::make_unique<weft::basic_scheduler>(
      std::vector{weft::make_fifo_pool(weft::access_mode::mpsc)}, spin_park));
  scheds.push_back(std::make_unique<weft::basic_wait_scheduler>(
      std::vector{weft::make_fifo_pool(weft::access_mode::mpsc)}, yield_only));
  scheds.push_back(std::make_unique<weft::prio_scheduler>(
      std::vector<weft::prio_pool_entry>{{weft::make_fifo_pool(weft::access_mode::mpsc), 1}},
      spin_park));
  scheds.push_back(
      std::make_unique<weft::randws_scheduler>(std::make_shared<weft::randws_group>(), yield_only));
  for (std::size_t i = 0; i < scheds.size(); ++i) {
    const weft::idle_policy& p = scheds[i]->idle();
    EXPECT_EQ(p.park, i % 2 == 0) << i;
    EXPECT_EQ(p.spin, i % 2 == 0 ? std::optional<unsigned>(4) : std::optional<unsigned>(0)) << i;
  }
  // The defaults: basic and prio poll with sched_yield, basic_wait and randws park.
  EXPECT_FALSE(weft::make_scheduler("basic")->idle().park);
  EXPECT_TRUE(weft::make_scheduler("basic_wait")->idle().park);
  EXPECT_FALSE(weft::make_scheduler("prio")->idle().park);
  EXPECT_TRUE(weft::make_scheduler("randws")->idle().park);
  // They all run units with either policy.
  std::atomic<int> ran{0};
  for (auto& s : scheds) {
    scoped_stream st(std::move(s));
    std::vector<weft::ult> us;
    for (int i = 0; i < 50; ++i)
      us.push_back(weft::ult::create_on(*st, [&] {
        weft::this_unit::yield();
        ran++;
      }));
    for (auto& u : us) u.join();
  }
  EXPECT_EQ(ran.load(), 200);
}

// ----------------------------------------------------------------------------------------------
// Idle CPU and wake-up

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/// True once every live stream is parked, polled from an external thread for up to 30 s (a stream
/// that never parks is the bug these tests look for, not a slow machine).
bool every_stream_parks() {
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    bool all = true;
    for (int r = 0; all && r < 64; ++r)
      if (auto* s = weft::execution_stream::by_rank(r); s && !s->is_parked()) all = false;
    if (all) return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

/// Suspends the primary ULT (so that its stream's scheduler goes idle too) while another thread
/// waits for every stream to park and then measures the process's CPU time over `window`. A
/// window can catch a stream that a stray wake-up (the kernel, the 100 ms park limit) made run
/// for a moment, so it measures up to `tries` windows and returns the least CPU, as a fraction of
/// one core: streams that spin or poll use too much in every window. -1 if they never parked.
double idle_cpu_fraction(std::chrono::milliseconds window, int tries = 3) {
  weft::work_unit* self = weft::this_unit::current();
  double fraction = -1;
  std::thread meter([&] {
    if (every_stream_parks()) {
      for (int i = 0; i < tries && (fraction < 0 || fraction >= 0.05); ++i) {
        const double c0 = cpu_seconds();
        const auto t0 = std::chrono::steady_clock::now();
        std::this_thread::sleep_for(window);
        const double c1 = cpu_seconds();
        const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - t0;
        const double f = (c1 - c0) / wall.count();
        fraction = fraction < 0 ? f : std::min(fraction, f);
      }
    }
    while (!self->user_suspended.load(std::memory_order_acquire)) std::this_thread::yield();
    weft::resume(self);
  });
  weft::this_unit::suspend();
  meter.join();
  return fraction;
}

TEST_F(env_test, IdleBasicWaitStreamsUseNoCpu) {
  weft::config cfg = test_config(2);
  cfg.scheduler = "basic_wait";
  weft::runtime rt(cfg);
  // Some work first, so that both streams have been busy.
  std::vector<weft::ult> us;
  for (int i = 0; i < 100; ++i)
    us.push_back(weft::ult::create_on(*weft::execution_stream::by_rank(i % 2),
                                      [] { weft::this_unit::yield(); }));
  for (auto& u : us) u.join();
  const double f = idle_cpu_fraction(1000ms);
  RecordProperty("idle_cpu_percent", std::to_string(f * 100));
  std::printf("2 idle basic_wait streams: %.2f%% of a core over 1 s\n", f * 100);
  ASSERT_GE(f, 0.0) << "the idle basic_wait streams never parked";
  EXPECT_LT(f, 0.05) << "2 idle basic_wait streams used " << f * 100 << "% of a core";
}

TEST_F(env_test, AUltJoiningABusyStreamLeavesItsOwnStreamIdle) {
  // The primary ULT joins a stream whose only ULT sleeps until released: it must block, not
  // yield in a loop, so that its basic_wait stream parks (a yielding joiner kept a core busy).
  weft::config cfg = test_config(1);
  cfg.scheduler = "basic_wait";
  weft::runtime rt(cfg);
  weft::execution_stream& s =
      weft::execution_stream::create(weft::basic_wait_scheduler::with_new_pool());
  std::atomic<bool> release{false};
  weft::ult sleeper = weft::ult::create_on(s, [&] {
    while (!release.load()) weft::this_unit::sleep_for(10ms);
  });
  double fraction = -1;
  std::thread meter([&] {
    std::this_thread::sleep_for(100ms);  // the join below has begun (it cannot end before release)
    const double c0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(500ms);
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - t0;
    fraction = (cpu_seconds() - c0) / wall.count();
    release.store(true);
  });
  s.join();
  meter.join();
  sleeper.join();
  s.free();
  std::printf("joining a sleeping stream: %.2f%% of a core over 0.5 s\n", fraction * 100);
  EXPECT_LT(fraction, 0.2) << "the joiner's stream used " << fraction * 100 << "% of a core";
}

TEST_F(env_test, EveryStockSchedulerParksWhenAskedTo) {
  // The primary runs randws, the others basic, basic_wait and prio, all with spin-then-park.
  weft::config cfg = test_config(1);
  cfg.scheduler = "randws";
  weft::runtime rt(cfg);
  const weft::idle_policy park{.spin = 100, .park = true};
  scoped_stream a(std::make_unique<weft::basic_scheduler>(
      std::vector{weft::make_fifo_pool(weft::access_mode::mpsc)}, park));
  scoped_stream b(weft::basic_wait_scheduler::with_new_pool());
  scoped_stream c(std::make_unique<weft::prio_scheduler>(
      std::vector<weft::prio_pool_entry>{{weft::make_fifo_pool(weft::access_mode::mpsc), 2},
                                         {weft::make_fifo_pool(weft::access_mode::mpsc), 1}},
      park));
  std::atomic<int> ran{0};
  std::vector<weft::ult> us;
  for (auto* s : {&a.get(), &b.get(), &c.get(), &weft::execution_stream::primary()})
    for (int i = 0; i < 20; ++i) us.push_back(weft::ult::create_on(*s, [&] { ran++; }));
  for (auto& u : us) u.join();
  EXPECT_EQ(ran.load(), 80);
  const double f = idle_cpu_fraction(500ms);
  ASSERT_GE(f, 0.0) << "the streams never parked";
  RecordProperty("idle_cpu_percent", std::to_string(f * 100));
  std::printf("4 parked streams: %.2f%% of a core over 0.5 s\n", f * 100);
  EXPECT_LT(f, 0.05) << "4 parked streams used " << f * 100 << "% of a core";
}

TEST_F(env_test, ParkedBasicWaitStreamWakesOnPush) {
  weft::config cfg = test_config(2);
  cfg.scheduler = "basic_wait";
  weft::runtime rt(cfg);
  weft::execution_stream& s = *weft::execution_stream::by_rank(1);
  // Without a wake-up, a parked stream would only notice the unit at its 100 ms safety timeout.
  std::vector<double> latencies;
  for (int trial = 0; trial < 9; ++trial) {
    // The latency of a wake-up, not of the spin phase: push only once stream 1 is parked.
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!s.is_parked() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(1ms);
    ASSERT_TRUE(s.is_parked()) << "stream 1 never parked";
    std::atomic<std::int64_t> ran_at{0};
    const auto pushed = std::chrono::steady_clock::now();
    weft::tasklet::create_on(s, [&] {
      ran_at = std::chrono::steady_clock::now().time_since_epoch().count();
    }).join();
    const std::chrono::steady_clock::time_point r{std::chrono::steady_clock::duration(ran_at)};
    latencies.push_back(std::chrono::duration<double, std::micro>(r - pushed).count());
  }
  std::sort(latencies.begin(), latencies.end());
  const double median = latencies[latencies.size() / 2];
  RecordProperty("wake_latency_median_us", std::to_string(median));
  std::printf("parked basic_wait stream: median wake-up latency %.1f us\n", median);
  EXPECT_LT(median, 25000.0) << "median wake-up latency " << median << " us";
}

}  // namespace
