// SPDX-License-Identifier: Apache-2.0
// The seven kernels of 002 in one shared-memory implementation per process:
//   weft_loops_kernels_bench omp|weft P [KERNELS]
// P workers (OpenMP threads, or weft ULTs over WEFT_NUM_STREAMS streams); KERNELS a comma list
// of kernel names (default: all). Each kernel runs with n = 1 (8 B) and its large n; trials:
// WEFT_LOOPS_TRIALS (default 100; mat-mat large: a third of it, at least 11); the weft team waits
// under WEFT_LOOPS_WAIT (active, passive; unset: the layer's default policy).
// Prints: impl kernel n p median_ms min_ms kept.
#include "bench_options.hpp"
#include "kernels_run.hpp"

#include <weft/weft.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

namespace lk = loops_kernels;

int main(int argc, char** argv) {
  const auto opts =
      loops_bench::parse_kernels_options(argc, argv, {"omp", "weft"}, lk::all_names(), true);
  if (!opts) return 2;
  const std::string& impl = opts->impl;
  const int p = opts->workers;
  const int trials = loops_bench::trials_from_env(100);
  std::unique_ptr<weft::runtime> rt;
  if (impl == "weft") rt = std::make_unique<weft::runtime>();  // OpenMP runs without weft's streams
  for (lk::kernel k : lk::all_kernels) {
    if (!opts->kernels.empty() &&
        std::find(opts->kernels.begin(), opts->kernels.end(), lk::name(k)) == opts->kernels.end())
      continue;
    for (std::int64_t n : {std::int64_t{1}, lk::large_n(k)}) {
      const lk::problem pr{k, n, p};
      const int tr = (k == lk::kernel::matmat && n > 1) ? std::max(11, trials / 3) : trials;
      const lk::run_result r = impl == "weft" ? lk::run_weft(pr, tr) : lk::run_omp(pr, tr);
      const lk::stats s = lk::filter_002(r.times);
      std::printf("%-10s %-10s %8lld %3d %12.4f %12.4f %4d\n", impl.c_str(), lk::name(k),
                  static_cast<long long>(n), p, s.median * 1e3, s.min * 1e3, s.kept);
      std::fflush(stdout);
    }
  }
  return 0;
}
