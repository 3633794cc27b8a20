// SPDX-License-Identifier: Apache-2.0
// Each of the seven kernels gives the same result in every version (serial reference, weft loop
// layer, OpenMP where built) within floating-point tolerance; and 002's filter keeps what it
// promises.
#include "kernels_run.hpp"

#include <gtest/gtest.h>
#include <weft/weft.hpp>

#include <cstdlib>
#include <string>

namespace lk = loops_kernels;

namespace {

// Small cache flushes (the timing is not under test) and passive OpenMP waits; set before any
// test runs (gtest_discover_tests cannot pass several variables through ENVIRONMENT).
const bool environment_set = [] {
  ::setenv("WEFT_LOOPS_FLUSH_BYTES", "65536", 1);
  ::setenv("OMP_WAIT_POLICY", "passive", 0);
  return true;
}();

std::int64_t test_n(lk::kernel k) {
  const char* v = std::getenv("WEFT_TEST_SCALE");
  const long scale = v && std::atol(v) > 1 ? std::atol(v) : 1;
  const std::int64_t n = k == lk::kernel::matmat                              ? 24
                         : k == lk::kernel::matvec || k == lk::kernel::matadd ? 40
                                                                              : 5000;
  return std::max<std::int64_t>(3, n / scale);
}

std::vector<double> serial_result(const lk::problem& pr) {
  lk::data d = lk::make_data(pr);
  lk::serial_trial(pr, d);
  return lk::result_of(pr, d);
}

// All kernels in one process per implementation (process start-up dominates under the sanitizers).
TEST(kernels_equal, weft_matches_serial) {
  weft::config cfg;
  cfg.num_streams = 2;
  weft::runtime rt(cfg);
  for (lk::kernel k : lk::all_kernels) {
    for (int p : {1, 2, 3}) {
      for (std::int64_t n : {std::int64_t{1}, test_n(k)}) {
        const lk::problem pr{k, n, p};
        const auto want = serial_result(pr);
        const auto got = lk::run_weft(pr, 1);
        ASSERT_EQ(got.times.size(), 1u);
        EXPECT_LE(lk::max_rel_diff(want, got.result), 1e-12)
            << lk::name(k) << " p " << p << " n " << n;
      }
    }
  }
}

#ifdef LOOPS_HAVE_OMP
TEST(kernels_equal, openmp_matches_serial) {
  for (lk::kernel k : lk::all_kernels) {
    for (int p : {1, 2, 3}) {
      for (std::int64_t n : {std::int64_t{1}, test_n(k)}) {
        const lk::problem pr{k, n, p};
        const auto want = serial_result(pr);
        const auto got = lk::run_omp(pr, 1);
        EXPECT_LE(lk::max_rel_diff(want, got.result), 1e-12)
            << lk::name(k) << " p " << p << " n " << n;
      }
    }
  }
}
#endif

TEST(kernels_filter, drops_first_and_at_most_ten_percent_of_spikes) {
  std::vector<double> t(21, 1.0);
  t[0] = 100;               // first trial: always dropped
  t[5] = t[9] = t[13] = 5;  // three spikes among 20: only two (10%) may go
  const lk::stats s = lk::filter_002(t);
  EXPECT_EQ(s.kept, 18);
  EXPECT_EQ(s.dropped, 3);
  EXPECT_DOUBLE_EQ(s.median, 1.0);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  const lk::stats one = lk::filter_002({3.0, 2.0, 4.0, 9.0});
  EXPECT_EQ(one.kept, 3);  // 9 > 1.8 * 3, but 10% of 3 trials is 0
  EXPECT_DOUBLE_EQ(one.median, 4.0);
}

}  // namespace
