// SPDX-License-Identifier: Apache-2.0
// ULT stacks from shared arenas: a chain of nested ULTs deeper than vm.max_map_count / 2 (each
// level keeps its stack alive), reuse of stacks across fan-outs without new mappings, the guard
// page budget (guarded stacks first, canary stacks past it), a stream's cache of stacks of a
// size other than the default, memory returned at finalize, the
// WEFT_STACK_GUARDS setting, and a canary overflow reported with the ULT's id.
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include "memory/stack.hpp"
#include "platform/sanitizer.hpp"
#include "test_support.hpp"

namespace {

using weft_test::clean_weft_env;
using weft_test::scaled;
using weft_test::test_config;

/// Lines of /proc/self/maps: the process's mappings (VMAs).
std::size_t mapping_count() {
  std::ifstream maps("/proc/self/maps");
  std::size_t n = 0;
  for (std::string line; std::getline(maps, line);) ++n;
  return n;
}

std::size_t max_map_count() {
  std::ifstream in("/proc/sys/vm/max_map_count");
  std::size_t v = 0;
  return (in >> v) ? v : 65530;
}

/// What the deepest level of a chain saw.
struct chain_bottom {
  weft::detail::stack_arena_stats stats;
  std::size_t mappings = 0;
};

/// Level k of a chain of n: creates level k+1, joins it and returns the sum of the levels below
/// plus k, so that a lost or repeated level changes the result.
std::int64_t chain(std::int64_t k, std::int64_t n, chain_bottom& bottom) {
  if (k == n) {
    bottom.stats = weft::detail::arena_stats();
    bottom.mappings = mapping_count();
    return 0;
  }
  std::int64_t below = 0;
  weft::ult::create([&] { below = chain(k + 1, n, bottom); }).join();
  return below + k;
}

std::int64_t chain_sum(std::int64_t n) {
  return n * (n - 1) / 2;
}

TEST(StackArena, ChainDeeperThanHalfTheMapCountCompletes) {
  if (weft_test::sanitized_build()) {
    GTEST_SKIP()
        << "a chain past vm.max_map_count / 2 (about 35,000 live ULTs, each with a TSan "
           "fiber or ASan's fake stacks) would take most of a sanitizer run's time budget; "
           "GuardBudgetThenCanaries covers the guard-to-canary switch at a smaller depth";
  }
  clean_weft_env env;
  const auto depth = static_cast<std::int64_t>(max_map_count() / 2 + 2000);
  weft::runtime rt(test_config(1));
  chain_bottom bottom;
  EXPECT_EQ(chain(0, depth, bottom), chain_sum(depth));
  // Guard pages stayed within their budget and the rest of the stacks shared a few mappings.
  EXPECT_LE(bottom.stats.guarded_stacks, bottom.stats.guard_limit);
  EXPECT_GT(bottom.stats.arenas, bottom.stats.guarded_arenas);
  EXPECT_LT(bottom.mappings, max_map_count());
}

TEST(StackArena, GuardBudgetThenCanaries) {
  clean_weft_env env;
  weft::config cfg = test_config(1);
  cfg.stack_guards = 128;  // two guarded arenas of 51 slots (16 KiB stacks), then canaries
  cfg.stack_reserve = 0;
  weft::runtime rt(cfg);
  const auto depth = static_cast<std::int64_t>(scaled(5000, 300));
  chain_bottom bottom;
  EXPECT_EQ(chain(0, depth, bottom), chain_sum(depth));
  EXPECT_EQ(bottom.stats.guard_limit, 128u);
  EXPECT_GE(bottom.stats.guarded_arenas, 1u);
  EXPECT_LE(bottom.stats.guarded_arenas, 2u);
  EXPECT_LE(bottom.stats.guarded_stacks, 128u);
  EXPECT_GT(bottom.stats.arenas, bottom.stats.guarded_arenas);
}

/// Starts n ULTs that stay alive (yielding) until all of them run, then joins them.
void live_fan_out(std::size_t n) {
  std::atomic<std::size_t> started{0};
  std::vector<weft::ult> units;
  units.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    units.push_back(weft::ult::create([&started, n] {
      started.fetch_add(1);
      while (started.load() < n) weft::this_unit::yield();
    }));
  }
  for (auto& u : units) u.join();
}

TEST(StackArena, FanOutsReuseStacksWithoutNewMappings) {
  clean_weft_env env;
  weft::config cfg = test_config(1);
  cfg.stack_guards = 0;   // guard pages cost two mappings each by nature; count the arenas alone
  cfg.stack_reserve = 0;  // 16 KiB stacks, as the arena count below assumes
  {
    weft::runtime rt(cfg);
    const std::size_t n = scaled(10000, 1000);
    const std::size_t before = mapping_count();
    live_fan_out(n);
    const std::size_t after_first = mapping_count();
    const std::size_t arenas = weft::detail::arena_stats().arenas;
    live_fan_out(n);
    // 10^4 live stacks of 16 KiB fit in thirteen 16 MiB arenas; a mapping per stack would be
    // 10^4. (TSan maps memory of its own for every fiber: only the arena count says it there.)
    if (!weft::detail::tsan_enabled) {
      EXPECT_LT(after_first, before + 64);
      EXPECT_LE(mapping_count(), after_first);
    }
    EXPECT_LE(arenas, n / 512 + 1);
    EXPECT_EQ(weft::detail::arena_stats().arenas, arenas);
  }
  // finalize gave every stack back and the arenas went with them.
  EXPECT_EQ(weft::detail::arena_stats().arenas, 0u);
}

// A stream keeps stacks of one size other than the default in its own cache, as it keeps those
// of the default size: a ULT of that size takes one from the stream and gives it back there, and
// the arenas' lock is taken once per batch, not per ULT. Observable as stacks that stay out of
// the arenas' free lists after the ULTs ended.
TEST(StackArena, AStreamCachesStacksOfOneOtherSize) {
  clean_weft_env env;
  weft::config cfg = test_config(1);
  {
    weft::runtime rt(cfg);
    const weft::ult_attributes attr{.stack_size = 256 << 10};
    const std::size_t free_before = weft::detail::arena_stats().free_stacks;
    for (int i = 0; i < 3; ++i) {
      // Run by the scheduler on a stack of its own (a join would run it on the joiner's).
      weft::ult u = weft::ult::create(
          weft::execution_stream::primary().main_pool(), [] {}, attr);
      weft::this_unit::yield();
      u.join();
      EXPECT_EQ(weft::detail::arena_stats().free_stacks, free_before) << "after ULT " << i;
    }
  }
  EXPECT_EQ(weft::detail::arena_stats().arenas, 0u);  // finalize gave the cached ones back
}

TEST(StackArena, StackGuardsSetting) {
  clean_weft_env env;
  weft::config cfg;
  EXPECT_EQ(cfg.stack_guards, -1);
  {
    weft_test::scoped_env var("WEFT_STACK_GUARDS", "12");
    cfg.apply_environment();
    EXPECT_EQ(cfg.stack_guards, 12);
  }
  {
    weft_test::scoped_env var("WEFT_STACK_GUARDS", "auto");
    cfg.apply_environment();
    EXPECT_EQ(cfg.stack_guards, -1);
  }
  {
    weft_test::scoped_env var("WEFT_STACK_GUARDS", "-3");
    EXPECT_EQ(weft_test::errc_of([&] { cfg.apply_environment(); }), weft::errc::invalid_config);
  }
  cfg.stack_guards = -2;
  EXPECT_EQ(weft_test::errc_of([&] { cfg.validate(); }), weft::errc::invalid_config);
}

#ifndef WEFT_TEST_SANITIZED
// Under ASan, locals may live on ASan's fake stack instead of the ULT's stack.

/// Writes a buffer larger than the whole stack: past the stack's bottom and the slack page below
/// it, over the canary and into the top of the slot below (unused), then returns normally.
[[gnu::noinline]] void overrun_stack(std::size_t stack_size) {
  const std::size_t n = stack_size + 2 * weft::detail::page_size();
  auto* buf = static_cast<volatile char*>(__builtin_alloca(n));
  for (std::size_t i = 0; i < n; ++i) buf[i] = static_cast<char>(i);
}

void overrun_a_canary_stack() {
  clean_weft_env env;
  weft::config cfg = test_config(1);
  cfg.stack_guards = 0;
  cfg.stack_reserve = 0;  // the stack is exactly the 16 KiB the overrun is sized for
  weft::runtime rt(cfg);
  weft::ult::create([] { overrun_stack(16 * 1024); }).join();
}

TEST(StackArenaDeathTest, CanaryOverflowIsReportedWhenTheUltEnds) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(overrun_a_canary_stack(), "weft: stack overflow in ULT [0-9]+ ");
}
#endif  // WEFT_TEST_SANITIZED

}  // namespace
