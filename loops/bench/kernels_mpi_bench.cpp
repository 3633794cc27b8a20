// SPDX-License-Identifier: Apache-2.0
// The seven kernels of 002 in MPI, one process per rank (run it under mpirun):
//   mpirun -np P weft_loops_kernels_mpi_bench mpi|mpi+weft [KERNELS]
// mpi+weft initialises weft in each rank (WEFT_NUM_STREAMS streams per rank) and computes each
// rank's block with the loop layer, waiting for messages with weft::loops::mpi::mpi_wait.
// Prints on rank 0: impl kernel n p median_ms min_ms kept.
#include "bench_options.hpp"
#include "kernels_run.hpp"

#include <weft/loops/mpi.hpp>
#include <weft/weft.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

namespace lk = loops_kernels;

int main(int argc, char** argv) {
  weft::loops::mpi::session mpi(&argc, &argv);
  const auto opts = loops_bench::parse_kernels_options(argc, argv, {"mpi", "mpi+weft"},
                                                       lk::all_names(), false, mpi.rank() == 0);
  if (!opts) return 2;
  const std::string& impl = opts->impl;
  const bool with_weft = impl == "mpi+weft";
  const int trials = loops_bench::trials_from_env(100);
  std::unique_ptr<weft::runtime> rt;
  if (with_weft) rt = std::make_unique<weft::runtime>();
  for (lk::kernel k : lk::all_kernels) {
    if (!opts->kernels.empty() &&
        std::find(opts->kernels.begin(), opts->kernels.end(), lk::name(k)) == opts->kernels.end())
      continue;
    for (std::int64_t n : {std::int64_t{1}, lk::large_n(k)}) {
      const lk::problem pr{k, n, mpi.size()};
      const int tr = (k == lk::kernel::matmat && n > 1) ? std::max(11, trials / 3) : trials;
      const lk::run_result r = lk::run_mpi(pr, tr, with_weft);
      if (mpi.rank() == 0) {
        const lk::stats s = lk::filter_002(r.times);
        std::printf("%-10s %-10s %8lld %3d %12.4f %12.4f %4d\n", impl.c_str(), lk::name(k),
                    static_cast<long long>(n), mpi.size(), s.median * 1e3, s.min * 1e3, s.kept);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
