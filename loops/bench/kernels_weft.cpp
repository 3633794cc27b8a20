// SPDX-License-Identifier: Apache-2.0
// The seven kernels on the weft loop layer: one region per run, a worksharing loop per kernel.
#include "kernels_run.hpp"

#include <weft/loops/loops.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace loops_kernels {
namespace {

namespace wl = weft::loops;
using clock_type = std::chrono::steady_clock;

// One trial of pr in worker c (of pr.p workers); scratch is the worker's private array.
void trial(const problem& pr, data& d, wl::worker_context& c, std::vector<double>& scratch) {
  const std::int64_t n = pr.n, np = pr.n * pr.p;
  const int w = c.thread_num(), p = pr.p;
  switch (pr.k) {
    case kernel::pingpong: {
      const int j = p - 1;
      if (w == j) std::copy_n(d.a.begin(), n, d.b.begin() + j * n);
      c.barrier();
      if (w == 0) std::copy_n(d.a.begin() + j * n, n, d.b.begin());
      c.barrier();
      break;
    }
    case kernel::rightshift:
      std::copy_n(d.a.begin() + w * n, n, d.b.begin() + ((w + 1) % p) * n);
      c.barrier();
      break;
    case kernel::arraysum: {
      double s = 0;
      c.for_loop(0, np, [&](std::int64_t i) { s += d.a[static_cast<std::size_t>(i)]; });
      const double total = c.reduce(s);
      if (w == 0) d.s = total;
      break;
    }
    case kernel::dot: {
      double s = 0;
      c.for_loop(0, np, [&](std::int64_t i) {
        s += d.x[static_cast<std::size_t>(i)] * d.y[static_cast<std::size_t>(i)];
      });
      const double total = c.reduce(s);
      if (w == 0) d.s = total;
      break;
    }
    case kernel::matvec:
      std::fill(scratch.begin(), scratch.end(), 0.0);
      c.for_loop(0, np, [&](std::int64_t j) {
        const double xj = d.x[static_cast<std::size_t>(j)];
        const double* col = d.a.data() + j * n;
        for (std::int64_t i = 0; i < n; ++i) scratch[static_cast<std::size_t>(i)] += col[i] * xj;
      });
      c.reduce_array(std::span<const double>(scratch), std::span<double>(d.y));
      break;
    case kernel::matadd:
      c.for_loop(0, np, [&](std::int64_t j) {
        const double* a = d.a.data() + j * n;
        const double* b = d.b.data() + j * n;
        double* cc = d.c.data() + j * n;
        for (std::int64_t i = 0; i < n; ++i) cc[i] = a[i] + b[i];
      });
      break;
    case kernel::matmat: {
      std::fill(scratch.begin(), scratch.end(), 0.0);
      const wl::range ks = wl::static_block(0, np, w, p);  // this worker's columns of A
      for (std::int64_t jj = 0; jj < n; ++jj) {
        double* cc = scratch.data() + jj * n;
        for (std::int64_t k = ks.begin; k < ks.end; ++k) {
          const double bkj = d.b[static_cast<std::size_t>(jj * np + k)];
          const double* ak = d.a.data() + k * n;
          for (std::int64_t i = 0; i < n; ++i) cc[i] += ak[i] * bkj;
        }
      }
      c.reduce_array(std::span<const double>(scratch), std::span<double>(d.c));
      break;
    }
  }
}

// The team's wait policy: WEFT_LOOPS_WAIT=active|passive, else the layer's default.
wl::wait_policy wait_from_environment() {
  const char* v = std::getenv("WEFT_LOOPS_WAIT");
  const std::string_view w = v ? v : "";
  if (w.empty()) return wl::wait_policy::automatic;
  if (w == "active") return wl::wait_policy::active;
  if (w == "passive") return wl::wait_policy::passive;
  std::fprintf(stderr, "WEFT_LOOPS_WAIT='%s': expected active or passive\n", v);
  std::exit(2);
}

std::size_t scratch_size(const problem& pr) {
  if (pr.k == kernel::matvec) return static_cast<std::size_t>(pr.n);
  if (pr.k == kernel::matmat) return static_cast<std::size_t>(pr.n * pr.n);
  return 0;
}

}  // namespace

run_result run_weft(const problem& pr, int trials) {
  data d = make_data(pr);
  std::vector<double> flush_area(flush_bytes() / sizeof(double), 0.0);
  std::vector<std::vector<double>> local(static_cast<std::size_t>(pr.p),
                                         std::vector<double>(static_cast<std::size_t>(trials)));
  wl::parallel(
      [&](wl::worker_context& c) {
        const int w = c.thread_num();
        std::vector<double> scratch(scratch_size(pr), 0.0);
        const wl::range mine =
            wl::static_block(0, static_cast<std::int64_t>(flush_area.size()), w, pr.p);
        for (int k = 0; k < trials; ++k) {
          flush(std::span<double>(flush_area)
                    .subspan(static_cast<std::size_t>(mine.begin),
                             static_cast<std::size_t>(mine.size())));
          c.barrier();
          const auto t0 = clock_type::now();
          trial(pr, d, c, scratch);
          local[static_cast<std::size_t>(w)][static_cast<std::size_t>(k)] =
              std::chrono::duration<double>(clock_type::now() - t0).count();
          c.barrier();
        }
      },
      {.num_workers = pr.p,
       .units = wl::unit_type::ult,
       .place = wl::placement::spread,
       .wait = wait_from_environment()});
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
