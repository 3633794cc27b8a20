// SPDX-License-Identifier: Apache-2.0
// The implementations of the seven kernels. Each makes the problem's data, runs `trials` timed
// trials with 002's method (flush the caches, barrier, time, barrier; a trial's time is the
// largest over the workers or ranks) and returns the result of the last trial with the times.
#pragma once

#include "kernels.hpp"

#include <vector>

namespace loops_kernels {

/// Result and per-trial times (seconds) of one run.
struct run_result {
  std::vector<double> result;
  std::vector<double> times;
};

/// weft: one parallel region of pr.p ULT workers (the loop layer), worksharing loops with static
/// schedules, reduce() for the sums and reduce_array() for mat-vec and mat-mat. Needs weft
/// initialised.
run_result run_weft(const problem& pr, int trials);

/// OpenMP (the compiler's runtime): one parallel region of pr.p threads, `omp for
/// schedule(static)`, reduction(+) for the sums and a critical section for mat-vec and mat-mat,
/// as in 002.
run_result run_omp(const problem& pr, int trials);

/// MPI: pr.p must equal the number of ranks; every rank calls it. With `with_weft`, each rank
/// computes its block with the loop layer (weft initialised by the caller) and waits for messages
/// with weft::loops::mpi::mpi_wait. The result (gathered) is on rank 0 only; the times are the
/// largest over the ranks, on rank 0.
run_result run_mpi(const problem& pr, int trials, bool with_weft);

}  // namespace loops_kernels
