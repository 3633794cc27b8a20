// The same mapper on OpenMP, shaped like the seed's code: an outer team of `workers` threads takes
// query chunks (the MCE workers), and each query opens an inner parallel region of `threads`
// threads over the references with `omp for schedule(static|dynamic, ref_chunk) nowait`, each
// thread reducing into a shared best under `omp critical`.
#include "mapper.hpp"

#ifdef ALIGN_HAVE_OPENMP
#include <omp.h>

#include <algorithm>
#include <exception>

namespace align::detail {

bool have_openmp() {
  return true;
}

namespace {

template <bool Dynamic>
partial scan_query(const std::vector<record>& refs, const record& query, const map_options& opt) {
  partial best;
  std::exception_ptr failure;  // an exception must not leave a parallel region
  const long nrefs = static_cast<long>(refs.size());
  const int rc = opt.ref_chunk;
#pragma omp parallel num_threads(opt.threads) if (opt.threads > 1)
  {
    partial mine;
    std::exception_ptr mine_failure;
    auto one = [&](long r) {
      try {
        mine.add(distance(query, refs[static_cast<std::size_t>(r)], opt),
                 static_cast<std::uint32_t>(r), opt.tie_mode);
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
void run(const std::vector<record>& refs, const std::vector<record>& queries,
         const map_options& opt, run_state* progress, std::vector<query_result>& out,
         std::exception_ptr& failure) {
  const long nq = static_cast<long>(queries.size());
  const int qc = opt.chunk;
#pragma omp parallel num_threads(opt.workers)
  {
    auto one = [&](long q) {
      try {
        auto i = static_cast<std::size_t>(q);
        out[i] = scan_query<Dynamic>(refs, queries[i], opt).finish(opt.tie_mode);
        add_details(refs, queries[i], opt, out[i]);
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

std::vector<query_result> map_omp(const std::vector<record>& refs,
                                  const std::vector<record>& queries, const map_options& opt,
                                  run_state* progress) {
  map_options o = opt;
  if (o.workers <= 0) o.workers = omp_get_num_procs();
  if (progress) progress->workers = o.workers;
  // Nested teams: each outer thread opens its own inner team per query.
  if (o.threads > 1) omp_set_max_active_levels(std::max(2, omp_get_max_active_levels()));
  std::vector<query_result> out(queries.size());
  std::exception_ptr failure;
  if (o.sched == schedule::dynamic) {
    run<true>(refs, queries, o, progress, out, failure);
  } else {
    run<false>(refs, queries, o, progress, out, failure);
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

std::vector<query_result> map_omp(const std::vector<record>&, const std::vector<record>&,
                                  const map_options&, run_state*) {
  throw error("--backend omp: this build has no OpenMP (CMake did not find it)");
}

}  // namespace align::detail

#endif
