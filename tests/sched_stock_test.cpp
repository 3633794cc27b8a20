// SPDX-License-Identifier: Apache-2.0
// The stock schedulers (basic, basic_wait, prio, randws) as main schedulers of every stream, over
// 1, 2 and 4 streams: every unit runs exactly once, selection through WEFT_SCHED and the config,
// replacing the main schedulers while units run, and the idle policies (the CPU an idle process
// uses, and how fast a parked stream wakes up).
#include <sys/resource.h>

#include <weft/schedulers/basic_scheduler.hpp>
#include <weft/schedulers/prio_scheduler.hpp>
#include <weft/schedulers/randws_scheduler.hpp>

#include <cstdint>
#include <numeric>
#include <thread>
#include <tuple>
#include <vector>

#include "test_support.hpp"
#include "weft/internal/unit.hpp"

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

/// A park limit that no test outlives (wait_until gives up after a minute): with it, a parked
/// stream wakes only when something wakes it, so whether a unit ran, or a stream stayed parked,
/// says whether a wake-up happened, without timing anything.
constexpr unsigned hour_ms = 3'600'000;

weft::config parking_config(int streams, const char* scheduler) {
  weft::config cfg = test_config(streams);
  cfg.scheduler = scheduler;
  cfg.park_limit_ms = hour_ms;
  return cfg;
}

bool all_parked() {
  for (int r = 0; r < 64; ++r)
    if (auto* s = weft::execution_stream::by_rank(r); s && !s->is_parked()) return false;
  return true;
}

/// times_parked() of every live stream, by rank.
std::vector<std::uint64_t> park_counts() {
  std::vector<std::uint64_t> counts;
  for (int r = 0; r < 64; ++r)
    if (auto* s = weft::execution_stream::by_rank(r)) counts.push_back(s->times_parked());
  return counts;
}

/// What an external thread saw while the primary ULT was suspended (so that its stream's
/// scheduler went idle too).
struct idle_observation {
  bool parked = false;         // every stream parked
  bool stayed_parked = false;  // and none woke during the window
  double cpu_fraction = -1;    // the process's CPU time over the window, in cores (printed only)
};

/// Suspends the primary ULT while another thread waits for every stream to park, then waits
/// `window` and looks again. With the hour-long park limit nothing may wake an idle stream in
/// between: each must still be parked, in the same park (times_parked() unchanged). The CPU time
/// over the window is reported, not asserted: it depends on the machine.
idle_observation observe_idle(std::chrono::milliseconds window) {
  weft::work_unit* self = weft::this_unit::current();
  idle_observation seen;
  std::thread meter([&] {
    seen.parked = wait_until(all_parked);
    if (seen.parked) {
      const std::vector<std::uint64_t> parks = park_counts();
      const double c0 = cpu_seconds();
      const auto t0 = std::chrono::steady_clock::now();
      std::this_thread::sleep_for(window);
      const double c1 = cpu_seconds();
      seen.stayed_parked = all_parked() && park_counts() == parks;
      const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - t0;
      seen.cpu_fraction = (c1 - c0) / wall.count();
    }
    while (!weft::detail::as_unit(self)->user_suspended.load(std::memory_order_acquire))
      std::this_thread::yield();
    weft::resume(self);
  });
  weft::this_unit::suspend();
  meter.join();
  return seen;
}

TEST_F(env_test, IdleBasicWaitStreamsParkAndStayParked) {
  weft::runtime rt(parking_config(2, "basic_wait"));
  // Some work first, so that both streams have been busy.
  std::vector<weft::ult> us;
  for (int i = 0; i < 100; ++i)
    us.push_back(weft::ult::create_on(*weft::execution_stream::by_rank(i % 2),
                                      [] { weft::this_unit::yield(); }));
  for (auto& u : us) u.join();
  const idle_observation seen = observe_idle(500ms);
  RecordProperty("idle_cpu_percent", std::to_string(seen.cpu_fraction * 100));
  std::printf("2 idle basic_wait streams: %.2f%% of a core over 0.5 s\n", seen.cpu_fraction * 100);
  EXPECT_TRUE(seen.parked) << "the idle basic_wait streams never parked";
  EXPECT_TRUE(seen.stayed_parked) << "an idle basic_wait stream woke with nothing to do";
}

TEST_F(env_test, AUltJoiningABusyStreamLeavesItsOwnStreamIdle) {
  // The primary ULT joins a stream whose only ULT sleeps until released: it must block, not
  // yield in a loop, so that its basic_wait stream parks (a yielding joiner kept a core busy:
  // it never reads as blocked, and its stream never parks).
  weft::runtime rt(parking_config(1, "basic_wait"));
  weft::execution_stream& primary = weft::execution_stream::primary();
  weft::execution_stream& s =
      weft::execution_stream::create(weft::basic_wait_scheduler::with_new_pool());
  std::atomic<bool> release{false};
  weft::ult sleeper = weft::ult::create_on(s, [&] {
    while (!release.load()) weft::this_unit::sleep_for(10ms);
  });
  const weft::work_unit* joiner = weft::this_unit::current();
  bool blocked = false, parked = false, stayed_parked = false;
  double fraction = -1;
  std::thread meter([&] {
    // The join below cannot end before the release.
    blocked = wait_until(
        [&] { return weft::detail::as_unit(joiner)->state.load() == weft::unit_state::blocked; });
    parked = blocked && wait_until([&] { return primary.is_parked(); });
    if (parked) {
      const std::uint64_t parks = primary.times_parked();
      const double c0 = cpu_seconds();
      const auto t0 = std::chrono::steady_clock::now();
      std::this_thread::sleep_for(200ms);
      stayed_parked = primary.is_parked() && primary.times_parked() == parks;
      const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - t0;
      fraction = (cpu_seconds() - c0) / wall.count();
    }
    release.store(true);
  });
  s.join();
  meter.join();
  sleeper.join();
  s.free();
  std::printf("joining a sleeping stream: %.2f%% of a core over 0.2 s\n", fraction * 100);
  EXPECT_TRUE(blocked) << "the joining ULT never blocked";
  EXPECT_TRUE(parked) << "the joiner's stream never parked";
  EXPECT_TRUE(stayed_parked) << "the joiner's stream woke with nothing to do";
}

TEST_F(env_test, EveryStockSchedulerParksWhenAskedTo) {
  // The primary runs randws, the others basic, basic_wait and prio, all with spin-then-park.
  weft::runtime rt(parking_config(1, "randws"));
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
  const idle_observation seen = observe_idle(300ms);
  RecordProperty("idle_cpu_percent", std::to_string(seen.cpu_fraction * 100));
  std::printf("4 parked streams: %.2f%% of a core over 0.3 s\n", seen.cpu_fraction * 100);
  EXPECT_TRUE(seen.parked) << "the streams never parked";
  EXPECT_TRUE(seen.stayed_parked) << "a parked stream woke with nothing to do";
}

TEST_F(env_test, ParkedBasicWaitStreamWakesOnPush) {
  // With the hour-long park limit, only the push's wake-up can run the tasklet within
  // wait_until's minute.
  weft::runtime rt(parking_config(2, "basic_wait"));
  weft::execution_stream& s = *weft::execution_stream::by_rank(1);
  std::vector<double> latencies;
  for (int trial = 0; trial < 9; ++trial) {
    // Push only once stream 1 is parked: a wake-up, not the spin phase, must find the unit.
    ASSERT_TRUE(wait_until([&] { return s.is_parked(); })) << "stream 1 never parked";
    std::atomic<std::int64_t> ran_at{0};
    const auto pushed = std::chrono::steady_clock::now();
    weft::tasklet t = weft::tasklet::create_on(
        s, [&] { ran_at = std::chrono::steady_clock::now().time_since_epoch().count(); });
    ASSERT_TRUE(wait_until([&] { return ran_at.load() != 0; }))
        << "trial " << trial << ": a push did not wake the parked stream";
    t.join();
    const std::chrono::steady_clock::time_point r{std::chrono::steady_clock::duration(ran_at)};
    latencies.push_back(std::chrono::duration<double, std::micro>(r - pushed).count());
  }
  std::sort(latencies.begin(), latencies.end());
  const double median = latencies[latencies.size() / 2];
  RecordProperty("wake_latency_median_us", std::to_string(median));
  std::printf("parked basic_wait stream: median wake-up latency %.1f us\n", median);
}

}  // namespace
