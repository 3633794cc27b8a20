// SPDX-License-Identifier: Apache-2.0
// weft_fj_omp: OpenMP tasks' side of the fork-join suite (forkjoin.hpp; protocol:
// peer_harness.hpp). The same source builds against GCC's libgomp (g++ -fopenmp, peer "omp-gomp")
// and LLVM's libomp (clang++ -fopenmp=libomp, peer "omp-libomp"). Every trial runs inside one
// parallel region of --streams threads, so region start-up is not timed; the runner pins the
// threads (OMP_PROC_BIND=close, OMP_PLACES=cores).
//
//   --bench=fib|fib-cutoff|nqueens|uts-bin|uts-geo|qsort|msort|empty
#include <omp.h>

#include "forkjoin.hpp"

namespace {

/// The task-group interface as OpenMP tasks: run() is `omp task`, wait() is `omp taskwait` (which
/// waits for every child task of the frame's task, the ones run() created).
struct omp_group {
  /// Spawns a copy of `f` as a child task.
  template <class F>
  void run(const F& f) {
    F task = f;
#pragma omp task firstprivate(task)
    task();
  }
  /// Waits for the children.
  void wait() {
#pragma omp taskwait
  }
};

}  // namespace

int main(int argc, char** argv) {
  const weft_bench::peer_case c = weft_bench::parse_case(argc, argv);
#if defined(__clang__)
  const char* const peer = "omp-libomp";
#else
  const char* const peer = "omp-gomp";
#endif
#pragma omp parallel num_threads(c.streams)
#pragma omp single
  weft_fj::run_bench<weft_fj::group_algorithms<omp_group>>(peer, c);
  return 0;
}
