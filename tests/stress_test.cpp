// SPDX-License-Identifier: Apache-2.0
// Stress: a million ULTs and a million tasklets (divided by WEFT_TEST_SCALE), a yield storm,
// migration while yielding, and creation from every stream at once. Only exact counts and
// checksums are asserted.
#include <cstdint>

#include "test_support.hpp"

namespace {

using namespace weft_test;

class StressTest : public streams_test {};
WEFT_INSTANTIATE_STREAMS(StressTest);

constexpr std::size_t million = 1000000;
constexpr std::size_t batch = 4096;

/// What unit i contributes to the checksum.
inline std::uint64_t work_of(std::size_t i) {
  return (static_cast<std::uint64_t>(i) * 2654435761u) & 0xffff;
}

/// Creates `total` units of kind U (ult or tasklet) from one creator ULT per stream, each creating
/// its share in batches, half in its own stream's pool and half in the next stream's, then joining
/// the batch. Every unit marks its slot and adds to the checksum.
template <class U>
void create_and_join(int streams, std::size_t total) {
  std::vector<std::uint8_t> hits(total, 0);
  std::atomic<std::uint64_t> checksum{0};
  std::vector<weft::ult> creators;
  const std::size_t share =
      (total + static_cast<std::size_t>(streams) - 1) / static_cast<std::size_t>(streams);
  for (int r = 0; r < streams; ++r) {
    const std::size_t lo = std::min(total, share * static_cast<std::size_t>(r));
    const std::size_t hi = std::min(total, lo + share);
    weft::execution_stream& own = *weft::execution_stream::by_rank(r);
    weft::execution_stream& next = *weft::execution_stream::by_rank((r + 1) % streams);
    creators.push_back(weft::ult::create_on(own, [&, lo, hi] {
      std::vector<U> units;
      units.reserve(batch);
      for (std::size_t b = lo; b < hi; b += batch) {
        const std::size_t end = std::min(hi, b + batch);
        for (std::size_t i = b; i < end; ++i) {
          weft::execution_stream& where = i % 2 ? next : own;
          units.push_back(U::create_on(where, [&hits, &checksum, i] {
            hits[i] += 1;
            checksum.fetch_add(work_of(i), std::memory_order_relaxed);
          }));
        }
        for (auto& u : units) u.join();
        units.clear();
      }
    }));
  }
  for (auto& c : creators) c.join();
  std::uint64_t expected = 0;
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < total; ++i) {
    expected += work_of(i);
    wrong += hits[i] != 1;
  }
  EXPECT_EQ(wrong, 0u) << "every unit runs exactly once";
  EXPECT_EQ(checksum.load(), expected);
}

TEST_P(StressTest, MillionUlts) {
  create_and_join<weft::ult>(streams(), scaled(million));
}

TEST_P(StressTest, MillionTasklets) {
  create_and_join<weft::tasklet>(streams(), scaled(million));
}

TEST_P(StressTest, MillionUltsFromThePrimary) {
  // One creator, round robin over every stream, joining in batches.
  const std::size_t total = scaled(million) / 2;
  std::vector<std::uint8_t> hits(total, 0);
  std::vector<weft::ult> units;
  units.reserve(batch);
  for (std::size_t b = 0; b < total; b += batch) {
    const std::size_t end = std::min(total, b + batch);
    for (std::size_t i = b; i < end; ++i) {
      units.push_back(
          weft::ult::create_on(stream(static_cast<int>(i % static_cast<std::size_t>(streams()))),
                               [&hits, i] { hits[i] += 1; }));
    }
    for (auto& u : units) u.join();
    units.clear();
  }
  std::size_t wrong = 0;
  for (auto h : hits) wrong += h != 1;
  EXPECT_EQ(wrong, 0u);
}

TEST_P(StressTest, DetachedFlood) {
  const std::size_t total = scaled(200000, 1000);
  std::atomic<std::size_t> done{0};
  for (std::size_t i = 0; i < total; ++i) {
    auto body = [&done] { done.fetch_add(1, std::memory_order_relaxed); };
    if (i % 2) {
      weft::ult::create_on(stream(static_cast<int>(i % static_cast<std::size_t>(streams()))), body)
          .detach();
    } else {
      weft::tasklet::create_on(stream(static_cast<int>(i % static_cast<std::size_t>(streams()))),
                               body)
          .detach();
    }
  }
  EXPECT_TRUE(wait_until([&] { return done.load() == total; }));
  EXPECT_EQ(done.load(), total);
}

TEST_P(StressTest, YieldStorm) {
  const int ults = 256;
  const int yields = static_cast<int>(scaled(2000, 50));
  std::atomic<long> total{0};
  std::vector<long> per(ults, 0);
  std::vector<weft::ult> us;
  for (int i = 0; i < ults; ++i) {
    us.push_back(weft::ult::create_on(stream(i % streams()), [&, i] {
      for (int j = 0; j < yields; ++j) {
        ++per[static_cast<std::size_t>(i)];
        total.fetch_add(1, std::memory_order_relaxed);
        weft::this_unit::yield();
      }
    }));
  }
  for (auto& u : us) u.join();
  EXPECT_EQ(total.load(), long{ults} * yields);
  for (int i = 0; i < ults; ++i) EXPECT_EQ(per[static_cast<std::size_t>(i)], yields) << i;
}

TEST_P(StressTest, MigrationWhileYielding) {
  const int ults = 64;
  const int hops = static_cast<int>(scaled(1000, 50));
  std::atomic<long> total{0};
  std::atomic<long> misplaced{0};
  std::vector<weft::ult> us;
  const int n = streams();
  for (int i = 0; i < ults; ++i) {
    us.push_back(weft::ult::create_on(stream(i % n), [&, i, n] {
      for (int j = 0; j < hops; ++j) {
        weft::execution_stream& target = *weft::execution_stream::by_rank((i + j) % n);
        weft::this_unit::migrate_to(target);
        if (weft::this_unit::stream() != &target) misplaced.fetch_add(1);
        weft::this_unit::yield();
        if (weft::this_unit::stream() != &target) misplaced.fetch_add(1);
        total.fetch_add(1, std::memory_order_relaxed);
      }
    }));
  }
  // Meanwhile, other ULTs yield in place and tasklets come and go.
  std::atomic<long> background{0};
  std::vector<weft::ult> bg;
  for (int i = 0; i < 32; ++i) {
    bg.push_back(weft::ult::create_on(stream(i % n), [&] {
      for (int j = 0; j < hops; ++j) {
        weft::this_unit::yield();
        if (j % 16 == 0) weft::tasklet::create([&] { background++; }).detach();
      }
    }));
  }
  for (auto& u : us) u.join();
  for (auto& u : bg) u.join();
  EXPECT_EQ(total.load(), long{ults} * hops);
  EXPECT_EQ(misplaced.load(), 0);
  const long expected_bg = 32L * ((hops + 15) / 16);
  EXPECT_TRUE(wait_until([&] { return background.load() == expected_bg; }));
  EXPECT_EQ(background.load(), expected_bg);
}

TEST_P(StressTest, MigrationByHandleWhileYielding) {
  // Other ULTs move the yielding ones around with ult::migrate_to; whatever the interleaving,
  // every iteration runs exactly once.
  const int ults = 32;
  const int iterations = static_cast<int>(scaled(1000, 50));
  std::atomic<long> total{0};
  std::vector<weft::ult> us;
  const int n = streams();
  for (int i = 0; i < ults; ++i) {
    us.push_back(weft::ult::create_on(stream(i % n), [&] {
      for (int j = 0; j < iterations; ++j) {
        total.fetch_add(1, std::memory_order_relaxed);
        weft::this_unit::yield();
      }
    }));
  }
  std::size_t k = 0;
  long moves = 0;
  for (;;) {
    bool all_done = true;
    for (std::size_t i = 0; i < us.size(); ++i) {
      if (us[i].state() != weft::unit_state::terminated) all_done = false;
    }
    if (all_done) break;
    weft::ult& u = us[k % us.size()];
    try {
      u.migrate_to(stream(static_cast<int>((k / us.size()) % static_cast<std::size_t>(n))));
      ++moves;
    } catch (const weft::error& e) {
      EXPECT_EQ(e.condition(), weft::errc::invalid_state) << e.what();  // it just terminated
    }
    ++k;
    if (k % 8 == 0) weft::this_unit::yield();
  }
  for (auto& u : us) u.join();
  EXPECT_EQ(total.load(), long{ults} * iterations);
  EXPECT_GT(moves, 0);
}

TEST_P(StressTest, MigratePinnedUltsWhileTheyYield) {
  // ULTs pinned to the last stream yield while the primary keeps asking to move them to that same
  // stream: the pin and the requests agree, so every iteration runs there, exactly once.
  const int ults = 16;
  const int iterations = static_cast<int>(scaled(500, 50));
  weft::execution_stream& t = last_stream();
  std::atomic<long> total{0}, elsewhere{0};
  std::vector<weft::ult> us;
  for (int i = 0; i < ults; ++i) {
    us.push_back(weft::ult::create([&] {  // the primary's pool: it cannot run before it is pinned
      for (int j = 0; j < iterations; ++j) {
        if (weft::this_unit::stream() != &t) elsewhere++;
        total.fetch_add(1, std::memory_order_relaxed);
        weft::this_unit::yield();
      }
    }));
    us.back().pin_to(&t);
  }
  for (std::size_t k = 0;; ++k) {
    bool all_done = true;
    for (auto& u : us) all_done = all_done && u.state() == weft::unit_state::terminated;
    if (all_done) break;
    weft::ult& u = us[k % us.size()];
    const auto e = errc_of([&] { u.migrate_to(t); });  // invalid_state once it has terminated
    EXPECT_TRUE(!e || *e == weft::errc::invalid_state) << describe(e);
    if (k % 8 == 0) weft::this_unit::yield();
  }
  for (auto& u : us) u.join();
  EXPECT_EQ(total.load(), long{ults} * iterations);
  EXPECT_EQ(elsewhere.load(), 0);
}

TEST_P(StressTest, IntrospectionWhileUltsHop) {
  // The handle's introspection (state, last_stream, last_pool, id) may be read while the ULT
  // runs and migrates on other streams.
  const int ults = 16;
  const int hops = static_cast<int>(scaled(400, 40));
  const int n = streams();
  std::vector<weft::ult> us;
  std::atomic<int> finished{0};
  for (int i = 0; i < ults; ++i) {
    us.push_back(weft::ult::create_on(stream(i % n), [&, i] {
      for (int j = 0; j < hops; ++j) {
        weft::this_unit::migrate_to(stream((i + j) % n));
        weft::this_unit::yield();
      }
      finished++;
    }));
  }
  std::vector<weft::execution_stream*> all;
  std::vector<weft::pool*> pools;
  for (int r = 0; r < n; ++r) {
    all.push_back(&stream(r));
    pools.push_back(&stream(r).main_pool());
  }
  long odd = 0;
  while (finished.load() < ults) {
    for (auto& u : us) {
      weft::execution_stream* ls = u.last_stream();
      weft::pool* lp = u.last_pool();
      (void)u.state();
      odd += u.id() == 0;
      odd += ls && std::find(all.begin(), all.end(), ls) == all.end();
      odd += lp && std::find(pools.begin(), pools.end(), lp) == pools.end();
    }
    weft::this_unit::yield();
  }
  for (auto& u : us) u.join();
  EXPECT_EQ(odd, 0);
}

TEST_P(StressTest, FanOutFanInTree) {
  // Every ULT of the tree creates its children in its own stream's pool and on the next stream.
  const int depth = test_scale() > 1 ? 8 : 11;
  std::atomic<long> leaves{0};
  std::function<void(int)> node = [&](int d) {
    if (d == 0) {
      leaves.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    weft::execution_stream* here = weft::this_unit::stream();
    const int next_rank = (here->rank() + 1) % weft::execution_stream::count();
    weft::execution_stream* next = weft::execution_stream::by_rank(next_rank);
    weft::ult a = weft::ult::create([&node, d] { node(d - 1); });
    weft::ult b = next ? weft::ult::create_on(*next, [&node, d] { node(d - 1); })
                       : weft::ult::create([&node, d] { node(d - 1); });
    a.join();
    b.join();
  };
  weft::ult::create([&] { node(depth); }).join();
  EXPECT_EQ(leaves.load(), 1L << depth);
}

}  // namespace
