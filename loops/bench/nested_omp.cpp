// SPDX-License-Identifier: Apache-2.0
// The nested benchmark of 003 in OpenMP, built against libgomp (g++ -fopenmp) or LLVM's libomp
// (clang++ -fopenmp=libomp) by bench.sh.
//   nested_omp OUTER INNER-LIST
// Nesting is on when OMP_MAX_ACTIVE_LEVELS >= 2 (else inner regions run with one thread).
// Prints one line per inner team size: name outer inner median_us min_us kept ok.
#include "bench_options.hpp"
#include "nested_common.hpp"

#include <omp.h>

#include <cmath>
#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  const auto opts = loops_bench::parse_nested_options(argc, argv, {});
  if (!opts) return 2;
#ifdef __clang__
  const std::string rt = "libomp";
#else
  const std::string rt = "libgomp";
#endif
  const int outer = opts->outer;
  const std::string name = rt + (omp_get_max_active_levels() >= 2 ? "-nested" : "-flat");
  nested::arrays a;
  bool all_ok = true;
  for (int inner : opts->inner) {
    bool ok = false;
    const auto s = nested::time_outer_loop(
        [&] {
#pragma omp parallel for num_threads(outer) schedule(static)
          for (int x = 0; x < nested::outer_iterations; ++x) {
#pragma omp parallel for num_threads(inner) schedule(static)
            for (int j = 0; j < nested::inner_iterations; ++j) {
              const std::size_t i = static_cast<std::size_t>(x) * nested::inner_iterations +
                                    static_cast<std::size_t>(j);
              a.out[i] = std::cos(a.in[i]);
            }
          }
        },
        a, ok);
    nested::report(name, outer, inner, s, ok);
    all_ok = all_ok && ok;
  }
  return all_ok ? 0 : 1;
}
