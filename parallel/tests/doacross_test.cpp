// SPDX-License-Identifier: Apache-2.0
// The doacross progress words, driven from one thread: a serial run in lexicographic order under
// every dispatch mode (what is done before and after each post and each finished chunk), the
// prefix-only keys of loops with more than 2^64 iterations, sinks outside the space, empty loops.
#include <weft/parallel/dispatch.hpp>
#include <weft/parallel/doacross.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace wp = weft::parallel;

namespace {

struct dealt {
  wp::chunk c;
  std::uint64_t worker;
};

// Every chunk of `d` and who runs it, in loop order: static chunks as each worker is dealt them,
// dynamic and guided ones claimed by the workers in turn.
std::vector<dealt> deal(wp::loop_dispatch& d, std::uint64_t workers) {
  std::vector<dealt> out;
  const bool shared = d.kind == wp::schedule_kind::dynamic || d.kind == wp::schedule_kind::guided;
  std::vector<wp::worker_cursor> cur(workers);
  if (shared) {
    wp::chunk r;
    for (std::uint64_t k = 0; wp::next_chunk(d, workers, k % workers, cur[k % workers], r); ++k) {
      out.push_back({r, k % workers});
    }
  } else {
    for (std::uint64_t w = 0; w < workers; ++w) {
      wp::chunk r;
      while (wp::next_chunk(d, workers, w, cur[w], r)) out.push_back({r, w});
    }
    std::sort(out.begin(), out.end(),
              [](const dealt& a, const dealt& b) { return a.c.lo < b.c.lo; });
  }
  return out;
}

TEST(parallel_doacross, serial_run_under_every_schedule) {
  using k = wp::schedule_kind;
  const wp::loop_schedule schedules[] = {{k::static_, 0}, {k::static_, 1}, {k::static_, 3},
                                         {k::dynamic, 1}, {k::dynamic, 4}, {k::guided, 1},
                                         {k::guided, 3}};
  const std::uint64_t counts[2] = {23, 5};
  for (const wp::loop_schedule& s : schedules) {
    for (std::uint64_t workers : {1u, 2u, 3u, 8u}) {
      wp::loop_dispatch d;
      d.start(counts[0], s);
      wp::doacross dx;
      dx.start(d, workers, 2, counts);
      ASSERT_EQ(dx.dims(), 2u);
      std::vector<wp::chunk> current(workers, wp::chunk{0, 0});
      for (const dealt& t : deal(d, workers)) {
        // The worker moves on: its previous chunk is finished.
        dx.finish(current[t.worker]);
        current[t.worker] = t.c;
        for (std::uint64_t i = t.c.lo; i < t.c.hi; ++i) {
          for (std::uint64_t j = 0; j < counts[1]; ++j) {
            const std::uint64_t v[2] = {i, j};
            SCOPED_TRACE(testing::Message() << "kind " << int(s.kind) << " chunk " << s.chunk
                                            << " workers " << workers << " at " << i << "," << j);
            EXPECT_FALSE(dx.done(v));
            EXPECT_TRUE(dx.own(i, t.worker, t.c));
            dx.post(v);
            EXPECT_TRUE(dx.done(v));
            if (j > 0) {
              const std::uint64_t left[2] = {i, j - 1};
              EXPECT_TRUE(dx.done(left));
              // The caller's own iteration: nothing to wait for.
              EXPECT_EQ(dx.sink_of(left, t.worker, t.c).word, nullptr);
            }
            if (i > 0) {
              const std::uint64_t up[2] = {i - 1, j};
              EXPECT_TRUE(dx.done(up));
              // Another worker's (then already reached) or the caller's own.
              const wp::doacross::sink s = dx.sink_of(up, t.worker, t.c);
              EXPECT_TRUE(s.word == nullptr || s.reached());
              EXPECT_EQ(s.word == nullptr, dx.own(i - 1, t.worker, t.c));
            }
            if (i + 1 < counts[0]) {
              const std::uint64_t down[2] = {i + 1, 0};
              EXPECT_FALSE(dx.done(down));
              const wp::doacross::sink s = dx.sink_of(down, t.worker, t.c);
              if (s.word) {
                EXPECT_FALSE(s.reached());
              }
            }
          }
        }
      }
    }
  }
}

TEST(parallel_doacross, finished_chunks_count_as_posted) {
  wp::loop_dispatch d;
  d.start(12, {wp::schedule_kind::dynamic, 4});
  const std::uint64_t counts[2] = {12, 3};
  wp::doacross dx;
  dx.start(d, 2, 2, counts);
  const std::uint64_t v[2] = {5, 2};
  EXPECT_FALSE(dx.done(v));
  dx.finish({4, 8});  // never posted, e.g. a cancelled loop
  EXPECT_TRUE(dx.done(v));
  const std::uint64_t next[2] = {8, 0};
  EXPECT_FALSE(dx.done(next));
}

TEST(parallel_doacross, more_than_2_to_the_64_iterations_keep_prefixes) {
  // 4 x 2^40 x 2^40 iterations: the key covers (i, j); k is not in it.
  wp::loop_dispatch d;
  d.start(4, {wp::schedule_kind::static_, 0});
  const std::uint64_t big = std::uint64_t{1} << 40;
  const std::uint64_t counts[3] = {4, big, big};
  wp::doacross dx;
  dx.start(d, 2, 3, counts);  // worker 0 runs i = 0, 1; worker 1 runs i = 2, 3
  const std::uint64_t posted[3] = {1, 5, 7};
  dx.post(posted);
  const std::uint64_t same_prefix[3] = {1, 5, 0};
  const std::uint64_t earlier_prefix[3] = {1, 4, big - 1};
  const std::uint64_t earlier_row[3] = {0, big - 1, big - 1};
  const std::uint64_t later_prefix[3] = {1, 6, 0};
  const std::uint64_t other_worker[3] = {2, 0, 0};
  // Only complete prefixes are known to be done: (1, 5, 0..7) stays pending until (1, 6, *)
  // is posted or the chunk is finished.
  EXPECT_FALSE(dx.done(posted));
  EXPECT_FALSE(dx.done(same_prefix));
  EXPECT_TRUE(dx.done(earlier_prefix));
  EXPECT_TRUE(dx.done(earlier_row));
  EXPECT_FALSE(dx.done(later_prefix));
  EXPECT_FALSE(dx.done(other_worker));
  // The caller's own iterations need no word.
  EXPECT_TRUE(dx.own(1, 0, {0, 2}));
  EXPECT_FALSE(dx.own(2, 0, {0, 2}));
  const std::uint64_t next_prefix[3] = {1, 6, 0};
  dx.post(next_prefix);
  EXPECT_TRUE(dx.done(posted));
  dx.finish({0, 2});
  const std::uint64_t last[3] = {1, big - 1, big - 1};
  EXPECT_TRUE(dx.done(last));
  EXPECT_FALSE(dx.done(other_worker));
}

TEST(parallel_doacross, sinks_outside_the_space) {
  wp::loop_dispatch d;
  d.start(3, {wp::schedule_kind::guided, 1});
  const std::uint64_t counts[2] = {3, 4};
  wp::doacross dx;
  dx.start(d, 2, 2, counts);
  const std::uint64_t in[2] = {2, 3};
  const std::uint64_t past_outer[2] = {3, 0};
  const std::uint64_t past_inner[2] = {0, 4};
  const std::uint64_t before[2] = {~std::uint64_t{0}, 0};  // i - 1 at i = 0
  EXPECT_TRUE(dx.in_range(in));
  EXPECT_FALSE(dx.in_range(past_outer));
  EXPECT_FALSE(dx.in_range(past_inner));
  EXPECT_FALSE(dx.in_range(before));
  // The compiler's own vectors, read in place: long indices, where i - 1 at i = 0 is -1.
  const long signed_in[2] = {2, 3};
  const long signed_before[2] = {-1, 0};
  EXPECT_TRUE(dx.in_range(signed_in));
  EXPECT_FALSE(dx.in_range(signed_before));
  EXPECT_EQ(dx.sink_of(signed_before, 0, {0, 1}).word, nullptr);
  const wp::doacross::sink s = dx.sink_of(signed_in, 0, {0, 1});
  ASSERT_NE(s.word, nullptr);  // guided: iteration 2 is not in the caller's chunk [0, 1)
  EXPECT_FALSE(s.reached());
  dx.post(signed_in);
  EXPECT_TRUE(s.reached());
  EXPECT_TRUE(dx.done(in));
}

TEST(parallel_doacross, empty_loops_keep_no_words) {
  wp::loop_dispatch d;
  d.start(5, {wp::schedule_kind::dynamic, 1});
  const std::uint64_t counts[2] = {5, 0};
  wp::doacross dx;
  dx.start(d, 4, 2, counts);
  dx.finish({0, 1});
  const std::uint64_t v[2] = {0, 0};
  EXPECT_FALSE(dx.in_range(v));
}

TEST(parallel_doacross, reuse_clears_the_words) {
  wp::loop_dispatch d;
  d.start(8, {wp::schedule_kind::dynamic, 2});
  const std::uint64_t counts[2] = {8, 1};
  wp::doacross dx;
  dx.start(d, 2, 2, counts);
  const std::uint64_t v[2] = {3, 0};
  dx.post(v);
  EXPECT_TRUE(dx.done(v));
  d.start(8, {wp::schedule_kind::dynamic, 2});
  dx.start(d, 2, 2, counts);
  EXPECT_FALSE(dx.done(v));
}

}  // namespace
