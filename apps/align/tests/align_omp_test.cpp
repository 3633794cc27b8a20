// SPDX-License-Identifier: Apache-2.0
// weft-align's OpenMP backend: the same results as the serial mapper and as weft for every
// combination of workers, threads, chunks and schedule. Not registered in the TSan build
// (libgomp is not instrumented, so TSan reports its synchronisation as races).
#include "test_util.hpp"

namespace {

using namespace align_test;
using align::map_options;

TEST(AlignOmp, OutputIdenticalForEveryConfiguration) {
  if (!align::detail::have_openmp()) GTEST_SKIP() << "built without OpenMP";
  data_set d = make_data(21, 30, 40, 400, 24, 20, 60, 0.08, 6);
  map_options base;
  base.tie_mode = align::ties::all;
  base.cigar = true;
  base.how = align::backend::serial;
  const std::string want =
      align::format_results(d.refs, d.queries, align::map_all(d.refs, d.queries, base), base);
  for (int workers : {1, 3})
    for (int threads : {1, 2, 4})
      for (int chunk : {1, 4})
        for (int ref_chunk : {1, 3})
          for (auto sched : {align::schedule::static_, align::schedule::dynamic}) {
            map_options opt = base;
            opt.how = align::backend::omp;
            opt.workers = workers;
            opt.threads = threads;
            opt.chunk = chunk;
            opt.ref_chunk = ref_chunk;
            opt.sched = sched;
            align::run_state st;
            auto got = align::map_all(d.refs, d.queries, opt, &st);
            ASSERT_EQ(align::format_results(d.refs, d.queries, got, opt), want)
                << "workers " << workers << " threads " << threads << " chunk " << chunk
                << " ref-chunk " << ref_chunk << " " << align::to_string(sched);
            ASSERT_EQ(st.done.load(), d.queries.size());
            ASSERT_EQ(st.workers, workers);
          }
}

TEST(AlignOmp, BestHitsEqualBruteForce) {
  if (!align::detail::have_openmp()) GTEST_SKIP() << "built without OpenMP";
  data_set d = make_data(22, 15, 30, 120, 25, 15, 50, 0.1, 4);
  for (align::ties t : {align::ties::first, align::ties::all}) {
    map_options opt;
    opt.how = align::backend::omp;
    opt.tie_mode = t;
    opt.workers = 2;
    opt.threads = 2;
    auto got = align::map_all(d.refs, d.queries, opt);
    for (std::size_t q = 0; q < d.queries.size(); ++q) {
      align::query_result want = brute_best(d.refs, d.queries[q], opt);
      EXPECT_EQ(got[q].dist, want.dist);
      EXPECT_EQ(got[q].refs, want.refs);
      EXPECT_EQ(got[q].strands, want.strands);
    }
  }
}

}  // namespace
