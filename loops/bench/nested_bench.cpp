// SPDX-License-Identifier: Apache-2.0
// The nested benchmark of 003 on weft (and serially).
//   weft_loops_nested serial
//   weft_loops_nested ult|tasklet OUTER INNER-LIST
// OUTER: outer team width (0: the layer's default, one worker per stream); INNER-LIST: inner team
// widths, e.g. 1-36 or 2,1000 (0: the default, which is 1 when the outer team fills the streams;
// 1000: one unit per inner iteration). Outer workers are ULTs; inner workers are ULTs or tasklets.
// Prints one line per configuration: name outer inner median_us min_us kept ok.
#include "bench_options.hpp"
#include "nested_common.hpp"

#include <weft/loops/loops.hpp>
#include <weft/weft.hpp>

#include <cmath>
#include <cstdio>
#include <string>

namespace wl = weft::loops;

int main(int argc, char** argv) {
  const auto opts = loops_bench::parse_nested_options(argc, argv, {"ult", "tasklet"});
  if (!opts) return 2;
  const std::string& mode = opts->mode;
  nested::arrays a;
  bool ok = false;
  auto voodoo_serial = [&](std::int64_t x) {
    for (int j = 0; j < nested::inner_iterations; ++j) {
      const std::size_t i =
          static_cast<std::size_t>(x) * nested::inner_iterations + static_cast<std::size_t>(j);
      a.out[i] = std::cos(a.in[i]);
    }
  };
  if (mode == "serial") {
    const auto s = nested::time_outer_loop(
        [&] {
          for (int x = 0; x < nested::outer_iterations; ++x) voodoo_serial(x);
        },
        a, ok);
    nested::report("serial", 1, 1, s, ok);
    return ok ? 0 : 1;
  }
  const wl::unit_type inner_units = mode == "ult" ? wl::unit_type::ult : wl::unit_type::tasklet;
  const int outer = opts->outer;
  weft::runtime rt;
  bool all_ok = true;
  for (int inner : opts->inner) {
    auto petsc_voodoo = [&](std::int64_t x) {
      wl::parallel_for(0, nested::inner_iterations,
                       [&](std::int64_t j) {
                         const std::size_t i =
                             static_cast<std::size_t>(x) * nested::inner_iterations +
                             static_cast<std::size_t>(j);
                         a.out[i] = std::cos(a.in[i]);
                       },
                       {.num_workers = inner, .units = inner_units});
    };
    const auto s = nested::time_outer_loop(
        [&] {
          wl::parallel_for(0, nested::outer_iterations, petsc_voodoo, {.num_workers = outer});
        },
        a, ok);
    nested::report("weft-" + mode, outer, inner, s, ok);
    all_ok = all_ok && ok;
  }
  return all_ok ? 0 : 1;
}
