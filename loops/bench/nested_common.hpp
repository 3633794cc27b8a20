// SPDX-License-Identifier: Apache-2.0
// The nested-parallel benchmark of 003 (slide "Shortcomings today? Pthreads"): an outer parallel
// loop of 36 iterations, each calling petsc_voodoo(x), an inner parallel loop of 1000 iterations
// of out[x][j] = cos(in[x][j]). Shared by the weft and the OpenMP programs: data, check, timing.
#pragma once

#include "kernels.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace nested {

inline constexpr int outer_iterations = 36;
inline constexpr int inner_iterations = 1000;

/// in[x][j] and out[x][j], row-major.
struct arrays {
  std::vector<double> in, out;
  arrays() : in(outer_iterations * inner_iterations), out(in.size(), 0.0) {
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = 0.001 * static_cast<double>(i);
  }
  /// True when out holds cos(in) everywhere (then clears out for the next run).
  bool check_and_clear() {
    bool ok = true;
    for (std::size_t i = 0; i < in.size(); ++i) {
      ok = ok && out[i] == std::cos(in[i]);
      out[i] = 0.0;
    }
    return ok;
  }
};

/// Times `run` (one whole outer loop) with 002's method: two untimed runs, then trials until
/// WEFT_LOOPS_BUDGET_MS (default 300) is spent, at least 11 and at most 201; the first trial is
/// dropped and spikes are filtered. Returns the stats in seconds.
template <class Run>
loops_kernels::stats time_outer_loop(Run&& run, arrays& a, bool& ok) {
  using clock = std::chrono::steady_clock;
  const char* b = std::getenv("WEFT_LOOPS_BUDGET_MS");
  const double budget = (b && std::atof(b) > 0 ? std::atof(b) : 300.0) * 1e-3;
  run();
  ok = a.check_and_clear();
  const auto w0 = clock::now();
  run();
  const double once = std::chrono::duration<double>(clock::now() - w0).count();
  const int trials =
      static_cast<int>(std::min(201.0, std::max(11.0, budget / std::max(once, 1e-9))));
  std::vector<double> times;
  for (int k = 0; k < trials; ++k) {
    const auto t0 = clock::now();
    run();
    times.push_back(std::chrono::duration<double>(clock::now() - t0).count());
  }
  return loops_kernels::filter_002(times);
}

/// One output line: name outer inner median_us min_us kept ok.
inline void report(const std::string& name, int outer, int inner, const loops_kernels::stats& s,
                   bool ok) {
  std::printf("%-16s %4d %5d %12.2f %12.2f %4d %s\n", name.c_str(), outer, inner, s.median * 1e6,
              s.min * 1e6, s.kept, ok ? "ok" : "WRONG");
  std::fflush(stdout);
}

}  // namespace nested
