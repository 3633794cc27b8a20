// SPDX-License-Identifier: Apache-2.0
// The seven kernels in OpenMP, written as 002 writes them: one parallel region, omp for
// schedule(static), reduction(+) for scalar sums, a critical section for the array sums.
#include "kernels_run.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace loops_kernels {
namespace {

// One trial, called by every thread of the enclosing parallel region.
void trial(const problem& pr, data& d, std::vector<double>& psum, double& shared_sum) {
  const std::int64_t n = pr.n, np = pr.n * pr.p;
  const int w = omp_get_thread_num(), p = pr.p;
  switch (pr.k) {
    case kernel::pingpong: {
      const int j = p - 1;
      if (w == j) std::copy_n(d.a.begin(), n, d.b.begin() + j * n);
#pragma omp barrier
      if (w == 0) std::copy_n(d.a.begin() + j * n, n, d.b.begin());
#pragma omp barrier
      break;
    }
    case kernel::rightshift:
      std::copy_n(d.a.begin() + w * n, n, d.b.begin() + ((w + 1) % p) * n);
#pragma omp barrier
      break;
    case kernel::arraysum:
#pragma omp single
      shared_sum = 0;
#pragma omp for schedule(static) reduction(+ : shared_sum)
      for (std::int64_t i = 0; i < np; ++i) shared_sum += d.a[static_cast<std::size_t>(i)];
#pragma omp single
      d.s = shared_sum;
      break;
    case kernel::dot:
#pragma omp single
      shared_sum = 0;
#pragma omp for schedule(static) reduction(+ : shared_sum)
      for (std::int64_t i = 0; i < np; ++i) {
        shared_sum += d.x[static_cast<std::size_t>(i)] * d.y[static_cast<std::size_t>(i)];
      }
#pragma omp single
      d.s = shared_sum;
      break;
    case kernel::matvec:
      std::fill(psum.begin(), psum.end(), 0.0);
#pragma omp for schedule(static)
      for (std::int64_t j = 0; j < np; ++j) {
        const double xj = d.x[static_cast<std::size_t>(j)];
        const double* col = d.a.data() + j * n;
        for (std::int64_t i = 0; i < n; ++i) psum[static_cast<std::size_t>(i)] += col[i] * xj;
      }
#pragma omp critical
      for (std::int64_t i = 0; i < n; ++i)
        d.y[static_cast<std::size_t>(i)] += psum[static_cast<std::size_t>(i)];
#pragma omp barrier
      break;
    case kernel::matadd:
#pragma omp for schedule(static)
      for (std::int64_t j = 0; j < np; ++j) {
        const double* a = d.a.data() + j * n;
        const double* b = d.b.data() + j * n;
        double* cc = d.c.data() + j * n;
        for (std::int64_t i = 0; i < n; ++i) cc[i] = a[i] + b[i];
      }
      break;
    case kernel::matmat: {
      std::fill(psum.begin(), psum.end(), 0.0);
      const std::int64_t kb = np * w / p, ke = np * (w + 1) / p;  // this thread's columns of A
      for (std::int64_t jj = 0; jj < n; ++jj) {
        double* cc = psum.data() + jj * n;
        for (std::int64_t k = kb; k < ke; ++k) {
          const double bkj = d.b[static_cast<std::size_t>(jj * np + k)];
          const double* ak = d.a.data() + k * n;
          for (std::int64_t i = 0; i < n; ++i) cc[i] += ak[i] * bkj;
        }
      }
#pragma omp critical
      for (std::int64_t i = 0; i < n * n; ++i)
        d.c[static_cast<std::size_t>(i)] += psum[static_cast<std::size_t>(i)];
#pragma omp barrier
      break;
    }
  }
}

}  // namespace

run_result run_omp(const problem& pr, int trials) {
  data d = make_data(pr);
  std::vector<double> flush_area(flush_bytes() / sizeof(double), 0.0);
  std::vector<std::vector<double>> local(static_cast<std::size_t>(pr.p),
                                         std::vector<double>(static_cast<std::size_t>(trials)));
  double shared_sum = 0;
  const std::size_t scratch = pr.k == kernel::matvec   ? static_cast<std::size_t>(pr.n)
                              : pr.k == kernel::matmat ? static_cast<std::size_t>(pr.n * pr.n)
                                                       : 0;
#pragma omp parallel num_threads(pr.p)
  {
    const int w = omp_get_thread_num();
    std::vector<double> psum(scratch, 0.0);
    const std::size_t len = flush_area.size() / static_cast<std::size_t>(pr.p);
    for (int k = 0; k < trials; ++k) {
      flush(std::span<double>(flush_area).subspan(len * static_cast<std::size_t>(w), len));
#pragma omp barrier
      const double t0 = omp_get_wtime();
      trial(pr, d, psum, shared_sum);
      local[static_cast<std::size_t>(w)][static_cast<std::size_t>(k)] = omp_get_wtime() - t0;
#pragma omp barrier
    }
  }
  run_result r;
  r.times.assign(static_cast<std::size_t>(trials), 0.0);
  for (const auto& l : local) {
    for (int k = 0; k < trials; ++k) {
      r.times[static_cast<std::size_t>(k)] =
          std::max(r.times[static_cast<std::size_t>(k)], l[static_cast<std::size_t>(k)]);
    }
  }
  r.result = result_of(pr, d);
  return r;
}

}  // namespace loops_kernels
