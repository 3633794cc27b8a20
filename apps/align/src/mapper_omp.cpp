// SPDX-License-Identifier: Apache-2.0
// The same mapper on OpenMP, shaped like the seed's code: an outer team of `workers` threads takes
// query chunks (the MCE workers), and each query opens an inner parallel region of `threads`
// threads over the references with `omp for schedule(static|dynamic, ref_chunk) nowait`, each
// thread reducing into a shared best under `omp critical`.
#include "mapper.hpp"

#ifdef ALIGN_HAVE_OPENMP
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>

namespace align::detail {

bool have_openmp() {
  return true;
}

namespace {

template <bool Dynamic>
partial scan_query(const job& j, std::size_t q) {
  const auto& refs = j.refs;
  const auto& opt = j.opt;
  partial best;
  std::atomic<int> best_dist{-1};  // every thread's k (pruning)
  std::exception_ptr failure;      // an exception must not leave a parallel region
  const long nrefs = static_cast<long>(refs.size());
  const int rc = opt.ref_chunk;
#pragma omp parallel num_threads(opt.threads) if (opt.threads > 1)
  {
    partial mine;
    std::exception_ptr mine_failure;
    auto one = [&](long r) {
      try {
        for (int s = j.first_strand; s <= j.last_strand; ++s) {
          int d = distance(j, q, s, refs[static_cast<std::size_t>(r)],
                           j.k_for(best_dist.load(std::memory_order_relaxed)));
          mine.add(d, static_cast<std::uint32_t>(r * 2 + s), opt.tie_mode);
          if (d >= 0) lower(best_dist, d);
        }
      } catch (...) {
        if (!mine_failure) mine_failure = std::current_exception();
      }
    };
    if constexpr (Dynamic) {
#pragma omp for schedule(dynamic, rc) nowait
      for (long r = 0; r < nrefs; ++r) one(r);
    } else {
#pragma omp for schedule(static, rc) nowait
      for (long r = 0; r < nrefs; ++r) one(r);
    }
#pragma omp critical(align_reduce)
    {
      best.merge(mine, opt.tie_mode);
      if (mine_failure && !failure) failure = mine_failure;
    }
  }
  if (failure) std::rethrow_exception(failure);
  return best;
}

template <bool Dynamic>
void run(const job& j, const map_options& opt, run_state* progress, std::vector<query_result>& out,
         std::exception_ptr& failure) {
  const long nq = static_cast<long>(j.queries.size());
  const int qc = opt.chunk;
#pragma omp parallel num_threads(opt.workers)
  {
    auto one = [&](long q) {
      try {
        auto i = static_cast<std::size_t>(q);
        out[i] = scan_query<Dynamic>(j, i).finish(opt.tie_mode);
        add_details(j, i, out[i]);
      } catch (...) {
#pragma omp critical(align_failure)
        if (!failure) failure = std::current_exception();
      }
      if (progress) progress->done.fetch_add(1, std::memory_order_relaxed);
    };
    if constexpr (Dynamic) {
#pragma omp for schedule(dynamic, qc) nowait
      for (long q = 0; q < nq; ++q) one(q);
    } else {
#pragma omp for schedule(static, qc) nowait
      for (long q = 0; q < nq; ++q) one(q);
    }
  }
}

}  // namespace

std::vector<query_result> map_omp(const job& j, run_state* progress) {
  map_options o = j.opt;
  if (o.workers <= 0) o.workers = omp_get_num_procs();
  if (progress) progress->workers = o.workers;
  // Nested teams: each outer thread opens its own inner team per query.
  if (o.threads > 1) omp_set_max_active_levels(std::max(2, omp_get_max_active_levels()));
  std::vector<query_result> out(j.queries.size());
  std::exception_ptr failure;
  if (o.sched == schedule::dynamic) {
    run<true>(j, o, progress, out, failure);
  } else {
    run<false>(j, o, progress, out, failure);
  }
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace align::detail

#else

namespace align::detail {

bool have_openmp() {
  return false;
}

std::vector<query_result> map_omp(const job&, run_state*) {
  throw error("--backend omp: this build has no OpenMP (CMake did not find it)");
}

}  // namespace align::detail

#endif
