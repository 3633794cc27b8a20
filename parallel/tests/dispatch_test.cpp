// SPDX-License-Identifier: Apache-2.0
// The worksharing core's arithmetic: iteration spaces over signed and unsigned indices (near the
// types' limits, negative steps) and the chunks each schedule deals, driven from one thread.
#include <weft/parallel/dispatch.hpp>
#include <weft/parallel/iteration_space.hpp>

#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace wp = weft::parallel;

namespace {

constexpr std::uint64_t u64max = UINT64_MAX;

// The values a loop visits, the way the compiler's own loop would.
template <class I>
std::vector<I> reference(I start, I end, I incr, bool up) {
  using U = std::make_unsigned_t<I>;
  std::vector<I> v;
  if (up ? !(start < end) : !(end < start)) return v;
  for (I i = start;; i = static_cast<I>(static_cast<U>(i) + static_cast<U>(incr))) {
    v.push_back(i);
    // Distances in the unsigned type: the index itself would overflow past the last value.
    const U dist =
        up ? static_cast<U>(end) - static_cast<U>(i) : static_cast<U>(i) - static_cast<U>(end);
    const U step = up ? static_cast<U>(incr) : static_cast<U>(U{0} - static_cast<U>(incr));
    if (dist <= step) break;
  }
  return v;
}

template <class I>
std::vector<I> visited(const wp::iteration_space<I>& s) {
  std::vector<I> v;
  for (std::uint64_t k = 0; k < s.count(); ++k) v.push_back(s.at(k));
  return v;
}

}  // namespace

TEST(parallel_iteration_space, signed_counts_up_and_down) {
  EXPECT_EQ(wp::make_space(0l, 10l, 3l).count(), 4u);
  EXPECT_EQ(wp::make_space(0l, 9l, 3l).count(), 3u);
  EXPECT_EQ(wp::make_space(10l, 0l, 1l).count(), 0u);
  EXPECT_EQ(wp::make_space(10l, -7l, -3l).count(), 6u);
  EXPECT_EQ(wp::make_space(-7l, 10l, -3l).count(), 0u);
  EXPECT_EQ(visited(wp::make_space(10l, -7l, -3l)), reference(10l, -7l, -3l, false));
  EXPECT_EQ(visited(wp::make_space(-5, 17, 4)), reference(-5, 17, 4, true));
}

TEST(parallel_iteration_space, signed_full_range_does_not_overflow) {
  EXPECT_EQ(wp::make_space(LONG_MIN, LONG_MAX, 1l).count(), u64max);
  EXPECT_EQ(wp::make_space(LONG_MIN, LONG_MAX, 2l).count(), u64max / 2 + 1);
  EXPECT_EQ(wp::make_space(LONG_MAX, LONG_MIN, LONG_MIN).count(), 2u);
  const auto s = wp::make_space(LONG_MAX, LONG_MIN, -(LONG_MAX / 2));
  EXPECT_EQ(visited(s), reference(LONG_MAX, LONG_MIN, -(LONG_MAX / 2), false));
  EXPECT_EQ(s.bound(s.count(), s.count()), LONG_MIN);
}

TEST(parallel_iteration_space, unsigned_near_the_limits) {
  using ull = unsigned long long;
  constexpr ull top = ~0ull;
  const auto up = wp::make_space(true, top - 10, top, 3ull);
  EXPECT_EQ(up.count(), 4u);
  EXPECT_EQ(visited(up), reference(top - 10, top, 3ull, true));
  EXPECT_EQ(up.bound(4, 4), top);
  EXPECT_EQ(wp::make_space(true, 0ull, top, 1ull).count(), u64max);
  EXPECT_EQ(wp::make_space(true, 0ull, top, top).count(), 1u);
  // Down: incr is the step's two's complement, as in GOMP_loop_ull_*.
  const auto down = wp::make_space(false, top, top - 10, 0ull - 4);
  EXPECT_EQ(down.count(), 3u);
  EXPECT_EQ(visited(down), reference(top, top - 10, 0ull - 4, false));
  EXPECT_EQ(wp::make_space(false, top, 0ull, 0ull - 1).count(), u64max);
  EXPECT_EQ(wp::make_space(false, 5ull, 0ull, 0ull - 2).count(), 3u);
  EXPECT_EQ(wp::make_space(false, 0ull, 5ull, 0ull - 2).count(), 0u);
  EXPECT_EQ(wp::make_space(true, 3u, 4000000000u, 1000000000u).count(), 4u);
}

TEST(parallel_dispatch, resolve_defaults) {
  using k = wp::schedule_kind;
  EXPECT_EQ(wp::resolve({k::auto_, 7, true}).kind, k::static_);
  EXPECT_EQ(wp::resolve({k::auto_, 7, true}).chunk, 0u);
  EXPECT_EQ(wp::resolve({k::dynamic, 0}).chunk, 1u);
  EXPECT_EQ(wp::resolve({k::guided, 0}).chunk, 1u);
  EXPECT_EQ(wp::resolve({k::static_, 0}).chunk, 0u);
  EXPECT_EQ(wp::guided_size(100, 4, 1), 25u);
  EXPECT_EQ(wp::guided_size(3, 4, 10), 3u);
  EXPECT_EQ(wp::guided_size(u64max, 3, 1), u64max / 3);
}

// Every kind, chunk and width, workers taking turns: each iteration is dealt exactly once, each
// worker's chunks rise, and the kind's shape holds.
TEST(parallel_dispatch, every_schedule_partitions_the_range) {
  using k = wp::schedule_kind;
  for (k kind : {k::static_, k::dynamic, k::guided, k::auto_}) {
    for (std::uint64_t chunk : {0u, 1u, 3u, 64u}) {
      for (std::uint64_t workers : {1u, 2u, 3u, 5u}) {
        for (std::uint64_t n : {0u, 1u, 7u, 100u, 1001u}) {
          wp::loop_dispatch d;
          d.start(n, {kind, chunk});
          std::vector<int> hits(n, 0);
          std::vector<wp::worker_cursor> cur(workers);
          std::vector<std::uint64_t> last_hi(workers, 0);
          std::uint64_t prev_guided = u64max;
          for (bool any = true; any;) {
            any = false;
            for (std::uint64_t w = 0; w < workers; ++w) {
              wp::chunk c;
              if (!wp::next_chunk(d, workers, w, cur[w], c)) continue;
              any = true;
              ASSERT_LT(c.lo, c.hi);
              ASSERT_LE(c.hi, n);
              ASSERT_GE(c.lo, last_hi[w]);
              last_hi[w] = c.hi;
              for (std::uint64_t i = c.lo; i < c.hi; ++i) ++hits[i];
              const std::uint64_t size = c.hi - c.lo;
              if (d.kind == k::guided) {
                if (c.hi != n) {
                  ASSERT_GE(size, d.chunk);
                  ASSERT_LE(size, prev_guided);
                }
                prev_guided = size;
              } else if (d.chunk) {
                ASSERT_TRUE(size == d.chunk || c.hi == n);
                if (d.kind == k::static_) {
                  ASSERT_EQ(c.lo / d.chunk % workers, w);
                }
              } else {
                ASSERT_LE(size, n / workers + 1);
                ASSERT_GE(size, n / workers);
              }
            }
          }
          for (std::uint64_t i = 0; i < n; ++i) {
            ASSERT_EQ(hits[i], 1) << "kind " << int(kind) << " chunk " << chunk << " workers "
                                  << workers << " n " << n << " i " << i;
          }
        }
      }
    }
  }
}

TEST(parallel_dispatch, counts_near_the_limit_do_not_wrap) {
  using k = wp::schedule_kind;
  const std::uint64_t n = u64max;
  // Dynamic, resumed close to the end: the last chunks stop at n and nothing is dealt twice.
  wp::loop_dispatch d;
  d.start(n, {k::dynamic, 4});
  ASSERT_EQ(d.how, wp::loop_dispatch::mode::dynamic_cas);
  d.next.store(n - 10);
  wp::worker_cursor cur;
  wp::chunk c;
  std::uint64_t got = 0;
  while (wp::next_chunk(d, 3, 0, cur, c)) {
    ASSERT_EQ(c.lo, n - 10 + got);
    got += c.hi - c.lo;
  }
  EXPECT_EQ(got, 10u);
  EXPECT_EQ(d.next.load(), n);
  // Guided, likewise.
  d.start(n, {k::guided, 2});
  d.next.store(n - 9);
  got = 0;
  while (wp::next_chunk(d, 2, 1, cur, c)) got += c.hi - c.lo;
  EXPECT_EQ(got, 9u);
  // Static chunks whose stride passes 2^64: one chunk per worker, the third has none.
  d.start(n, {k::static_, std::uint64_t{1} << 63});
  std::uint64_t total = 0;
  for (std::uint64_t w = 0; w < 3; ++w) {
    wp::worker_cursor wc;
    int chunks = 0;
    while (wp::next_chunk(d, 3, w, wc, c)) {
      ++chunks;
      total += c.hi - c.lo;
    }
    EXPECT_EQ(chunks, w < 2 ? 1 : 0) << w;
  }
  EXPECT_EQ(total, n);
  // Static blocks of the whole unsigned range.
  d.start(n, {k::static_, 0});
  total = 0;
  for (std::uint64_t w = 0; w < 4; ++w) {
    wp::worker_cursor wc;
    while (wp::next_chunk(d, 4, w, wc, c)) total += c.hi - c.lo;
  }
  EXPECT_EQ(total, n);
}

// The dispatch and the space together, as a GOMP loop uses them: chunks mapped back to index
// values visit exactly the loop's values, in order for one worker.
TEST(parallel_dispatch, chunks_map_back_to_the_loop) {
  const auto s = wp::make_space(100l, -100l, -7l);
  wp::loop_dispatch d;
  d.start(s.count(), {wp::schedule_kind::dynamic, 5});
  std::vector<long> got;
  wp::for_each_chunk(d, 1, 0, [&](std::uint64_t lo, std::uint64_t hi) {
    for (std::uint64_t k = lo; k < hi; ++k) got.push_back(s.at(k));
    EXPECT_EQ(s.bound(hi, s.count()), hi == s.count() ? -100 : s.at(hi));
  });
  EXPECT_EQ(got, reference(100l, -100l, -7l, false));
}

// for_each_chunk() deals what next_chunk() deals, chunk for chunk.
TEST(parallel_dispatch, for_each_chunk_matches_next_chunk) {
  using k = wp::schedule_kind;
  for (k kind : {k::static_, k::dynamic, k::guided}) {
    for (std::uint64_t chunk : {0u, 1u, 7u}) {
      for (std::uint64_t workers : {1u, 3u}) {
        for (std::uint64_t me = 0; me < workers; ++me) {
          wp::loop_dispatch a, b;
          a.start(1000, {kind, chunk});
          b.start(1000, {kind, chunk});
          std::vector<std::uint64_t> x, y;
          wp::worker_cursor c;
          wp::chunk r;
          while (wp::next_chunk(a, workers, me, c, r)) x.insert(x.end(), {r.lo, r.hi});
          wp::for_each_chunk(b, workers, me, [&](std::uint64_t lo, std::uint64_t hi) {
            y.insert(y.end(), {lo, hi});
          });
          EXPECT_EQ(x, y) << int(kind) << " " << chunk << " " << workers << " " << me;
        }
      }
    }
  }
}
