// SPDX-License-Identifier: Apache-2.0
// The command lines of the loops benchmarks (kernels_bench, kernels_mpi_bench, nested_bench,
// nested_omp), parsed with CLI11 in a translation unit of their own (bench_options.cpp): CLI11's
// headers beside the measured loops would change how the compiler inlines them.
//
// Every parser prints its error and the usage on stderr (only when `report` is true: MPI ranks
// other than 0 stay quiet) and returns nothing on a malformed command line; main then exits with
// status 2.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace loops_bench {

/// `IMPL [P] [KERNELS]`: the implementation (one of `impls`), the worker count (when
/// `with_workers`) and a comma list of kernel names, each one of `known_kernels` (empty: all).
struct kernels_options {
  std::string impl;
  int workers = 0;
  std::vector<std::string> kernels;
};

std::optional<kernels_options> parse_kernels_options(int argc, char** argv,
                                                     const std::vector<std::string>& impls,
                                                     const std::vector<std::string>& known_kernels,
                                                     bool with_workers, bool report = true);

/// `serial` or `ult|tasklet OUTER INNER-LIST` (`modes`), or for the OpenMP build (`modes`
/// empty) `OUTER INNER-LIST`. INNER-LIST: comma-separated widths or ranges, e.g. `1-36` or
/// `2,1000`.
struct nested_options {
  std::string mode;
  int outer = 0;
  std::vector<int> inner;
};

std::optional<nested_options> parse_nested_options(int argc, char** argv,
                                                   const std::vector<std::string>& modes);

/// WEFT_LOOPS_TRIALS, or `fallback` when unset; a value that is not an integer above 1 prints a
/// warning and gives `fallback`.
int trials_from_env(int fallback);

}  // namespace loops_bench
