// SPDX-License-Identifier: Apache-2.0
// The seven kernels of 002 (Luecke and Lin): ping-pong, right shift, array sum, dot product,
// mat-vec, mat add, mat-mat. One problem description and data layout shared by every
// implementation (serial reference, OpenMP, weft, MPI, MPI+weft), and 002's timing filter.
//
// Layout (as in the paper): p workers, n elements per worker. Vectors have n*p elements, worker w
// owning [w*n, (w+1)*n). Matrices are column-major; A, B, C of mat add and A of mat-vec/mat-mat
// are n x n*p (column blocks per worker); B of mat-mat is n*p x n (row blocks per worker).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace loops_kernels {

/// The seven kernels.
enum class kernel { pingpong, rightshift, arraysum, dot, matvec, matadd, matmat };

/// All of them, in the paper's order.
inline constexpr kernel all_kernels[] = {kernel::pingpong, kernel::rightshift, kernel::arraysum,
                                         kernel::dot,      kernel::matvec,     kernel::matadd,
                                         kernel::matmat};

/// Short name ("pingpong", ...).
const char* name(kernel k);

/// The names of all_kernels, in order (what a command line may name).
std::vector<std::string> all_names();

/// One problem: kernel, n per worker, p workers.
struct problem {
  kernel k;
  std::int64_t n;
  int p;
};

/// The paper's "large" n for each kernel, scaled to a 2-core machine where noted: ping-pong and
/// right shift 4 MiB messages (n = 4 MiB / 8), array sum 4 MiB / 8, dot product 80 KiB / 8,
/// mat-vec 128, mat add 512, mat-mat 256 (the paper: 512; 8x fewer flops per trial). The small n
/// is 1 (an 8-byte message) for every kernel.
std::int64_t large_n(kernel k);

/// The arrays of one problem (unused ones empty) and the scalar result.
struct data {
  std::vector<double> a, b, c, x, y;
  double s = 0;
};

/// Global data of a problem, filled from each element's global index (so every rank of an MPI
/// run can make its own block, see fill_block()).
data make_data(const problem& pr);

/// The value of element `g` of array `which` ('a', 'b', 'x', 'y'; 'c' and results start at 0
/// except y, which starts at value('y', g)).
double value(char which, std::int64_t g);

/// One trial run serially over the global data.
void serial_trial(const problem& pr, data& d);

/// The result a trial leaves, as one vector: B for ping-pong and right shift, {s} for the sums,
/// y for mat-vec, C for mat add and mat-mat.
std::vector<double> result_of(const problem& pr, const data& d);

/// Largest relative difference between two results (inf if the sizes differ).
double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b);

/// 002's statistics of a series of trial times.
struct stats {
  double median = 0, min = 0;
  int kept = 0, dropped = 0;
};

/// 002's filter: drop the first trial; drop trials above 1.8x the median of the rest, but never
/// more than 10% of them (if more qualify, only the largest 10% go); median and min of the rest.
stats filter_002(std::vector<double> times);

/// Bytes of the cache-flush array (WEFT_LOOPS_FLUSH_BYTES, default 32 MiB: the L3 of this
/// project's machines' CPUs); each worker adds a constant to its own slice before each trial.
std::size_t flush_bytes();

/// Adds 0.0000123 to every element of `slice` (002's flush).
void flush(std::span<double> slice);

}  // namespace loops_kernels
