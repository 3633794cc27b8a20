// SPDX-License-Identifier: Apache-2.0
// The loop layer: every schedule visits every index exactly once for 1, 2 and 4 streams; scalar
// and array reductions; regions with barriers and worksharing loops; nested teams of ULTs and of
// tasklets; misuse errors.
#include <weft/loops/loops.hpp>

#include <gtest/gtest.h>
#include <weft/weft.hpp>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace wl = weft::loops;

namespace {

long scale() {
  const char* v = std::getenv("WEFT_TEST_SCALE");
  const long s = v ? std::strtol(v, nullptr, 10) : 1;
  return s >= 1 ? s : 1;
}

weft::config with_streams(int n) {
  weft::config c;
  c.num_streams = n;
  return c;
}

std::string sched_name(const wl::schedule& s) {
  const char* k = s.kind == wl::schedule_kind::static_blocks ? "static"
                  : s.kind == wl::schedule_kind::dynamic     ? "dynamic"
                                                             : "guided";
  return std::string(k) + "_" + std::to_string(s.chunk);
}

// Counts visits per index; every count must end at exactly 1.
void expect_each_once(const std::vector<std::atomic<int>>& hits, const std::string& what) {
  for (std::size_t i = 0; i < hits.size(); ++i) {
    ASSERT_EQ(hits[i].load(), 1) << what << " index " << i;
  }
}

class loop_coverage : public ::testing::TestWithParam<int> {};

// Every schedule x unit kind x team width, in one process per stream count (process start-up
// dominates under the sanitizers).
TEST_P(loop_coverage, every_index_exactly_once) {
  weft::runtime rt(with_streams(GetParam()));
  const std::int64_t n = 3001;
  for (auto sched : {wl::static_schedule(), wl::static_schedule(7), wl::dynamic_schedule(),
                     wl::dynamic_schedule(13), wl::guided_schedule(), wl::guided_schedule(50)}) {
    for (auto units : {wl::unit_type::ult, wl::unit_type::tasklet}) {
      for (int workers : {0, 1, 3, 8, 64}) {
        std::vector<std::atomic<int>> hits(n);
        wl::parallel_for(5, 5 + n, [&](std::int64_t i) { hits[static_cast<std::size_t>(i - 5)]++; },
                         {.num_workers = workers, .units = units, .sched = sched});
        expect_each_once(hits, sched_name(sched) +
                                   (units == wl::unit_type::ult ? " ult" : " tasklet") +
                                   " workers " + std::to_string(workers));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(streams, loop_coverage, ::testing::Values(1, 2, 4));

TEST(loops_schedule, static_blocks_partition_the_range) {
  for (int workers : {1, 2, 3, 7}) {
    std::int64_t next = 10;
    for (int w = 0; w < workers; ++w) {
      const wl::range r = wl::static_block(10, 33, w, workers);
      EXPECT_EQ(r.begin, next);
      EXPECT_LE(r.size(), 23 / workers + 1);
      next = r.end;
    }
    EXPECT_EQ(next, 33);
  }
  EXPECT_EQ(wl::guided_chunk(100, 2, 1), 25);
  EXPECT_EQ(wl::guided_chunk(3, 2, 10), 3);
  EXPECT_EQ(wl::default_chunk(wl::dynamic_schedule(), 800, 2), 100);
}

TEST(loops_empty, empty_and_reversed_ranges_run_nothing) {
  weft::runtime rt(with_streams(2));
  int calls = 0;
  wl::parallel_for(4, 4, [&](std::int64_t) { ++calls; });
  wl::parallel_for(9, 2, [&](std::int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(wl::parallel_reduce(3, 3, 42, [](std::int64_t, int&) {}), 42);
}

TEST(loops_streams, integer_reduction_is_exact) {
  for (int streams : {1, 2, 4}) {  // one process for the three stream counts
    weft::runtime rt(with_streams(streams));
    const std::int64_t n = 200000 / scale();
    for (auto s : {wl::static_schedule(), wl::dynamic_schedule(100), wl::guided_schedule()}) {
      for (auto u : {wl::unit_type::ult, wl::unit_type::tasklet}) {
        const std::int64_t sum =
            wl::parallel_reduce(std::int64_t{0}, n, std::int64_t{0},
                                [](std::int64_t i, std::int64_t& acc) { acc += i; }, std::plus<>{},
                                {.units = u, .sched = s});
        EXPECT_EQ(sum, n * (n - 1) / 2);
      }
    }
    const std::int64_t mx = wl::parallel_reduce(
        0, 1000, std::int64_t{-1},
        [](std::int64_t i, std::int64_t& acc) { acc = std::max(acc, (i * 7919) % 1000); },
        [](std::int64_t a, std::int64_t b) { return std::max(a, b); }, {.num_workers = 5});
    EXPECT_EQ(mx, 999);
  }
}

TEST(loops_streams, floating_reduction_within_tolerance) {
  for (int streams : {1, 2, 4}) {  // one process for the three stream counts
    weft::runtime rt(with_streams(streams));
    const std::int64_t n = 100000 / scale();
    double serial = 0;
    for (std::int64_t i = 0; i < n; ++i) serial += 1.0 / (1.0 + static_cast<double>(i));
    const double par = wl::parallel_reduce(0, n, 0.0, [](std::int64_t i, double& acc) {
      acc += 1.0 / (1.0 + static_cast<double>(i));
    });
    EXPECT_NEAR(par, serial, 1e-9 * serial);
  }
}

TEST(loops_streams, array_reduction_exact_with_ult_and_tasklet_teams) {
  for (int streams : {1, 2, 4}) {  // one process for the three stream counts
    weft::runtime rt(with_streams(streams));
    const std::int64_t n = 20000 / scale();
    for (auto u : {wl::unit_type::ult, wl::unit_type::tasklet}) {
      for (int workers : {0, 1, 3, 6}) {
        std::vector<std::int64_t> hist(17, 1);  // starts at 1: the original values are kept
        wl::parallel_reduce_array(
            0, n, std::span<std::int64_t>(hist), std::int64_t{0},
            [](std::int64_t i, std::span<std::int64_t> mine) { mine[i % 17] += i; }, std::plus<>{},
            {.num_workers = workers, .units = u});
        for (std::int64_t b = 0; b < 17; ++b) {
          std::int64_t want = 1;
          for (std::int64_t i = b; i < n; i += 17) want += i;
          ASSERT_EQ(hist[b], want) << "bin " << b << " workers " << workers;
        }
      }
    }
  }
}

TEST(loops_streams, region_barrier_for_loop_and_reductions) {
  for (int streams : {1, 2, 4}) {  // one process for the three stream counts
    weft::runtime rt(with_streams(streams));
    const int width = 5;
    std::vector<std::atomic<int>> hits(1000);
    std::atomic<int> before{0}, seen_after{0};
    std::vector<double> out(64, 0.0);
    std::atomic<int> in_critical{0}, critical_max{0};
    wl::parallel(
        [&](wl::worker_context& c) {
          EXPECT_EQ(c.num_threads(), width);
          EXPECT_EQ(c.level(), 1);
          before++;
          c.barrier();
          seen_after += before.load() == width ? 1 : 0;  // every worker passed the barrier late
          for (int round = 0; round < 3; ++round) {
            const wl::schedule s = round == 0   ? wl::static_schedule(3)
                                   : round == 1 ? wl::dynamic_schedule(5)
                                                : wl::guided_schedule(2);
            c.for_loop(
                0, 1000, [&](std::int64_t i) { hits[static_cast<std::size_t>(i)]++; }, s);
          }
          const int total = c.reduce(c.thread_num() + 1);
          EXPECT_EQ(total, width * (width + 1) / 2);
          std::vector<double> mine(64, 0.0);
          for (int j = 0; j < 64; ++j) mine[static_cast<std::size_t>(j)] = c.thread_num() + j;
          c.reduce_array(std::span<const double>(mine), std::span<double>(out));
          c.critical([&] {
            const int now = ++in_critical;
            critical_max = std::max(critical_max.load(), now);
            weft::this_unit::yield();  // another worker may run meanwhile: it must not get in
            --in_critical;
          });
          int flag = 0;
          c.single([&] { flag = 1; });
        },
        {.num_workers = width});
    EXPECT_EQ(seen_after.load(), width);
    for (auto& h : hits) ASSERT_EQ(h.load(), 3);
    for (int j = 0; j < 64; ++j) EXPECT_EQ(out[static_cast<std::size_t>(j)], 10.0 + 5.0 * j);
    EXPECT_EQ(critical_max.load(), 1);
  }
}

// Reductions combine in worker order whatever the team width (narrow teams: the last worker to
// arrive combines everything in one barrier; wide ones: parallel slices): a non-commutative scalar
// op and a non-associative array op give exactly the sequential worker-order result, to every
// worker, round after round.
TEST(loops_streams, reductions_combine_in_worker_order) {
  weft::runtime rt(with_streams(2));
  for (int width : {1, 2, 3, 4, 5, 7}) {
    const std::size_t len = 37;
    std::vector<std::int64_t> out(len), want(len);
    for (std::size_t j = 0; j < len; ++j) out[j] = want[j] = static_cast<std::int64_t>(j);
    auto mix = [](std::int64_t a, std::int64_t b) { return a * 3 + b; };
    const int rounds = 3;
    for (int r = 0; r < rounds; ++r) {
      for (int t = 0; t < width; ++t) {
        for (std::size_t j = 0; j < len; ++j) want[j] = mix(want[j], 100 * t + r + j);
      }
    }
    std::string expect;
    for (int t = 0; t < width; ++t) expect += std::to_string(t) + ",";
    std::atomic<int> right{0};
    wl::parallel(
        [&](wl::worker_context& c) {
          const int w = c.thread_num();
          for (int r = 0; r < rounds; ++r) {
            std::vector<std::int64_t> mine(len);
            for (std::size_t j = 0; j < len; ++j) mine[j] = 100 * w + r + std::int64_t(j);
            c.reduce_array(std::span<const std::int64_t>(mine), std::span<std::int64_t>(out), mix);
            const std::string all = c.reduce(std::to_string(w) + ",", std::plus<std::string>{});
            if (all == expect) right++;
          }
        },
        {.num_workers = width});
    EXPECT_EQ(right.load(), rounds * width) << "width " << width;
    EXPECT_EQ(out, want) << "width " << width;

    std::vector<std::int64_t> hist(len, 1), hist_want(len, 1);
    std::vector<std::vector<std::int64_t>> per(static_cast<std::size_t>(width),
                                               std::vector<std::int64_t>(len, 0));
    const wl::static_split split(0, 1000, width);
    for (int t = 0; t < width; ++t) {
      for (std::int64_t i = split.block(t).begin; i < split.block(t).end; ++i)
        per[static_cast<std::size_t>(t)][static_cast<std::size_t>(i) % len] += i;
    }
    for (const auto& p : per) {
      for (std::size_t j = 0; j < len; ++j) hist_want[j] = mix(hist_want[j], p[j]);
    }
    wl::parallel_reduce_array(
        0, 1000, std::span<std::int64_t>(hist), std::int64_t{0},
        [&](std::int64_t i, std::span<std::int64_t> mine) { mine[std::size_t(i) % len] += i; }, mix,
        {.num_workers = width});
    EXPECT_EQ(hist, hist_want) << "width " << width;
  }
}

// An op that throws while the last worker combines releases the team-mates waiting in the
// reduction (team_aborted) and reaches the caller of parallel().
TEST(loops_errors, throwing_reduction_op_releases_the_team) {
  weft::runtime rt(with_streams(2));
  for (int width : {2, 3, 6}) {
    std::atomic<int> released{0};
    try {
      wl::parallel(
          [&](wl::worker_context& c) {
            try {
              c.reduce(c.thread_num(),
                       [](int, int) -> int { throw std::runtime_error("op failed"); });
            } catch (const wl::team_aborted&) {
              released++;
              throw;
            }
          },
          {.num_workers = width});
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "op failed");
    }
    EXPECT_EQ(released.load(), width - 1) << "width " << width;
  }
}

// Every wait policy, in teams with one worker per stream (the default spins there) and in
// teams wider than the streams (a spinning worker must yield to the team-mates queued behind it
// on its stream): no worker leaves round k of a barrier before every worker arrived in it.
TEST(loops_streams, barrier_rounds_under_every_wait_policy) {
  for (int streams : {1, 2}) {
    weft::runtime rt(with_streams(streams));
    for (auto policy :
         {wl::wait_policy::automatic, wl::wait_policy::active, wl::wait_policy::passive}) {
      for (int width : {streams, 5}) {
        const int rounds = 300;
        std::atomic<int> arrived{0};
        std::atomic<int> early{0};
        wl::parallel(
            [&](wl::worker_context& c) {
              for (int k = 0; k < rounds; ++k) {
                arrived.fetch_add(1);
                c.barrier();
                if (arrived.load() < width * (k + 1)) early++;
                c.barrier();  // nobody arrives in round k + 1 before every worker checked round k
              }
            },
            {.num_workers = width, .wait = policy});
        EXPECT_EQ(arrived.load(), width * rounds)
            << "streams " << streams << " width " << width << " policy " << int(policy);
        EXPECT_EQ(early.load(), 0)
            << "streams " << streams << " width " << width << " policy " << int(policy);
      }
    }
  }
}

TEST(loops_streams, nested_every_inner_iteration_once) {
  for (int streams : {1, 2, 4}) {  // one process for the three stream counts
    weft::runtime rt(with_streams(streams));
    const int outer = 12, inner = 300;
    for (auto inner_units : {wl::unit_type::ult, wl::unit_type::tasklet}) {
      for (int inner_workers : {0, 1, 4, inner}) {
        std::vector<std::atomic<int>> hits(outer * inner);
        std::atomic<int> levels_ok{0};
        wl::parallel_for(0, outer,
                         [&](std::int64_t x) {
                           if (wl::current_frame().level == 1) levels_ok++;
                           wl::parallel_for(0, inner,
                                            [&](std::int64_t j) {
                                              hits[static_cast<std::size_t>(x * inner + j)]++;
                                            },
                                            {.num_workers = inner_workers, .units = inner_units});
                         },
                         {.num_workers = outer});
        expect_each_once(hits, "inner workers " + std::to_string(inner_workers));
        EXPECT_EQ(levels_ok.load(), outer);
      }
    }
  }
}

// Wide nested teams (slots on the heap; 4 x 1100 units exceed the layer's wave threshold of 4096,
// so the callers yield between waves of creations): each worker unit sees its own nesting frame,
// a worker's frame is restored after it ran a nested team, and a failing inner worker's exception
// reaches the outermost caller.
TEST(loops_streams, wide_nested_teams_keep_frames_and_rethrow) {
  weft::runtime rt(with_streams(2));
  const int outer = 4, inner = 1100;
  for (auto inner_units : {wl::unit_type::ult, wl::unit_type::tasklet}) {
    std::vector<std::atomic<int>> hits(outer * inner);
    std::atomic<int> inner_frames_ok{0}, restored{0};
    wl::parallel_for(0, outer,
                     [&](std::int64_t x) {
                       wl::parallel_for(0, inner,
                                        [&](std::int64_t j) {
                                          hits[static_cast<std::size_t>(x * inner + j)]++;
                                          const wl::nesting_frame& f = wl::current_frame();
                                          if (f.level == 2 && f.active_width == outer * inner)
                                            inner_frames_ok++;
                                        },
                                        {.num_workers = inner, .units = inner_units});
                       const wl::nesting_frame& f = wl::current_frame();
                       if (f.level == 1 && f.active_width == outer && !f.cannot_block) restored++;
                     },
                     {.num_workers = outer});
    expect_each_once(hits, inner_units == wl::unit_type::ult ? "ult" : "tasklet");
    // Tasklet workers are not asked for a frame by anything but this test: only the ULT team's
    // units (and every team's caller share) must carry the inner frame.
    if (inner_units == wl::unit_type::ult) {
      EXPECT_EQ(inner_frames_ok.load(), outer * inner);
    }
    EXPECT_EQ(restored.load(), outer);

    std::atomic<int> ran{0};
    try {
      wl::parallel_for(0, outer,
                       [&](std::int64_t x) {
                         wl::parallel_for(0, inner,
                                          [&](std::int64_t j) {
                                            if (x == 1 && j == 150)
                                              throw std::runtime_error("inner 1/150 failed");
                                            ran++;
                                          },
                                          {.num_workers = inner, .units = inner_units});
                       },
                       {.num_workers = outer});
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "inner 1/150 failed");
    }
    EXPECT_EQ(ran.load(), outer * inner - 1);  // every team ran to its end
  }
}

// A thread outside weft opens teams: it blocks its kernel thread in the team's one wait, and its
// workers (spread over the streams, or local: in the primary stream's pool) all run.
TEST(loops_streams, external_thread_opens_teams) {
  weft::runtime rt(with_streams(2));
  std::vector<std::atomic<int>> hits(3 * 100);
  std::atomic<bool> finished{false};
  std::thread outsider([&] {
    for (auto units : {wl::unit_type::ult, wl::unit_type::tasklet}) {
      wl::parallel_for(0, 100, [&](std::int64_t i) { hits[static_cast<std::size_t>(i)]++; },
                       {.num_workers = 100, .units = units});
    }
    wl::parallel_for(0, 100, [&](std::int64_t i) { hits[static_cast<std::size_t>(200 + i)]++; },
                     {.num_workers = 100, .place = wl::placement::local});
    finished = true;
  });
  // The primary stream runs some of the outsider's workers: its ULT must yield, not block the
  // kernel thread in join() until the outsider is done.
  while (!finished) weft::this_unit::yield();
  outsider.join();
  for (std::size_t i = 0; i < hits.size(); ++i)
    ASSERT_EQ(hits[i].load(), i < 100 ? 2 : (i < 200 ? 0 : 1)) << i;
}

TEST(loops_streams, three_levels_of_regions) {
  for (int streams : {1, 2, 4}) {  // one process for the three stream counts
    weft::runtime rt(with_streams(streams));
    std::atomic<int> leaves{0}, deepest{0};
    wl::parallel(
        [&](wl::worker_context&) {
          wl::parallel(
              [&](wl::worker_context& c2) {
                c2.barrier();
                wl::parallel(
                    [&](wl::worker_context& c3) {
                      leaves++;
                      deepest = c3.level();
                      c3.barrier();
                    },
                    {.num_workers = 2});
              },
              {.num_workers = 3});
        },
        {.num_workers = 4});
    EXPECT_EQ(leaves.load(), 24);
    EXPECT_EQ(deepest.load(), 3);
  }
}

TEST(loops_defaults, default_width_is_streams_and_shrinks_when_nested) {
  weft::runtime rt(with_streams(4));
  std::atomic<int> outer_width{0}, inner_width{0};
  wl::parallel([&](wl::worker_context& c) {
    outer_width = c.num_threads();
    wl::parallel([&](wl::worker_context& c2) { inner_width = c2.num_threads(); },
                 {.num_workers = 0});
  });
  EXPECT_EQ(outer_width.load(), 4);
  EXPECT_EQ(inner_width.load(), 1);
  wl::parallel(
      [&](wl::worker_context&) {
        wl::parallel([&](wl::worker_context& c2) { inner_width = c2.num_threads(); });
      },
      {.num_workers = 2});
  EXPECT_EQ(inner_width.load(), 2);
}

TEST(loops_errors, tasklet_team_cannot_wait) {
  weft::runtime rt(with_streams(2));
  std::atomic<int> ran{0};
  try {
    wl::parallel(
        [&](wl::worker_context& c) {
          c.barrier();
          ran++;
        },
        {.num_workers = 3, .units = wl::unit_type::tasklet});
    FAIL() << "barrier in a tasklet team did not throw";
  } catch (const weft::error& e) {
    EXPECT_EQ(e.code(), weft::errc::tasklet_cannot_block);
  }
  EXPECT_EQ(ran.load(), 0);
  // A nested region from a tasklet worker, or from the caller's share of a tasklet team.
  std::atomic<int> errors{0};
  wl::parallel_for(0, 4,
                   [&](std::int64_t) {
                     try {
                       wl::parallel_for(0, 10, [](std::int64_t) {});
                     } catch (const weft::error& e) {
                       if (e.code() == weft::errc::tasklet_cannot_block) errors++;
                     }
                   },
                   {.num_workers = 4, .units = wl::unit_type::tasklet});
  EXPECT_EQ(errors.load(), 4);
  // The same rules hold for a team of one (which runs inline in the caller).
  EXPECT_THROW(wl::parallel([](wl::worker_context& c) { c.barrier(); },
                            {.num_workers = 1, .units = wl::unit_type::tasklet}),
               weft::error);
  EXPECT_THROW(
      wl::parallel_for(0, 1, [](std::int64_t) { wl::parallel_for(0, 2, [](std::int64_t) {}); },
                       {.units = wl::unit_type::tasklet}),
      weft::error);
}

TEST(loops_errors, bad_options_and_no_runtime) {
  EXPECT_THROW(wl::parallel_for(0, 10, [](std::int64_t) {}), weft::error);
  weft::runtime rt(with_streams(2));
  try {
    wl::parallel_for(0, 10, [](std::int64_t) {}, {.num_workers = -1});
    FAIL();
  } catch (const weft::error& e) {
    EXPECT_EQ(e.code(), weft::errc::invalid_config);
  }
  EXPECT_THROW(wl::parallel_for(0, 10, [](std::int64_t) {}, {.sched = wl::dynamic_schedule(-2)}),
               weft::error);
}

TEST(loops_errors, exception_in_worker_releases_the_team) {
  weft::runtime rt(with_streams(2));
  std::atomic<int> released{0};
  try {
    wl::parallel(
        [&](wl::worker_context& c) {
          if (c.thread_num() == 2) throw std::runtime_error("worker 2 failed");
          try {
            c.barrier();
          } catch (const wl::team_aborted&) {
            released++;
            throw;
          }
        },
        {.num_workers = 4});
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "worker 2 failed");
  }
  EXPECT_EQ(released.load(), 3);
}

// Team-mates spinning in a barrier (active policy: they would spin for tenths of a second) are
// released as soon as a worker throws, and so are those that blocked (passive).
TEST(loops_errors, exception_releases_spinning_and_blocked_team_mates) {
  weft::runtime rt(with_streams(2));
  for (auto policy : {wl::wait_policy::active, wl::wait_policy::passive}) {
    for (int width : {2, 4}) {
      std::atomic<int> released{0};
      try {
        wl::parallel(
            [&](wl::worker_context& c) {
              for (int k = 0; k < 20; ++k) c.barrier();
              if (c.thread_num() == width - 1) throw std::runtime_error("last worker failed");
              try {
                c.barrier();
              } catch (const wl::team_aborted&) {
                released++;
                throw;
              }
            },
            {.num_workers = width, .wait = policy});
        FAIL() << "no exception";
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "last worker failed");
      }
      EXPECT_EQ(released.load(), width - 1) << "width " << width << " policy " << int(policy);
    }
  }
}

}  // namespace
