// SPDX-License-Identifier: Apache-2.0
// weft_peer_omp: OpenMP tasks (protocol: peer_harness.hpp). The same source builds against GCC's
// libgomp (g++ -fopenmp, peer "omp-gomp") and LLVM's libomp (clang++ -fopenmp=libomp, peer
// "omp-libomp"). Every trial runs inside one parallel region of --streams threads, so region
// start-up is not timed; the runner pins the threads (OMP_PROC_BIND=close, OMP_PLACES=cores).
//
//   --bench=fanout   one thread creates N tasks, then taskwait
//   --bench=chain    task k creates task k+1 and waits for it (taskwait)
//   --bench=phases   N sequential steps, each 8 tasks and a taskwait
//
// A waiting task's frame stays on its thread's stack (OpenMP tasks are stackless), so the chain
// recurses on the thread stacks: the runner caps it at 10^4 levels.
#include <omp.h>

#include <cstdint>
#include <cstdio>

#include "../peer_harness.hpp"

#if defined(__clang__)
#define WEFT_OMP_PEER "omp-libomp"
#else
#define WEFT_OMP_PEER "omp-gomp"
#endif

namespace {

using weft_bench::peer_case;

void chain_level(std::int64_t left) {
  if (left == 0) return;
#pragma omp task firstprivate(left)
  chain_level(left - 1);
#pragma omp taskwait
}

}  // namespace

int main(int argc, char** argv) {
  const peer_case c = weft_bench::parse_case(argc, argv);
  if (c.bench != "fanout" && c.bench != "chain" && c.bench != "phases") {
    weft_bench::skip_case(WEFT_OMP_PEER, c, "unknown benchmark");
  }
#pragma omp parallel num_threads(c.streams)
#pragma omp single
  {
    if (c.bench == "fanout") {
      weft_bench::run_trials(WEFT_OMP_PEER, "fanout", c, [&] {
        for (std::int64_t i = 0; i < c.n; ++i) {
#pragma omp task
          weft_bench::unit_body();
        }
#pragma omp taskwait
        return c.n;
      });
    } else if (c.bench == "phases") {
      weft_bench::run_trials(WEFT_OMP_PEER, "phases", c, [&] {
        for (std::int64_t i = 0; i < c.n; ++i) {
          for (int k = 0; k < 8; ++k) {
#pragma omp task
            weft_bench::unit_body();
          }
#pragma omp taskwait
        }
        return c.n * 8;
      });
    } else {
      weft_bench::run_trials(WEFT_OMP_PEER, "chain", c, [&] {
        chain_level(c.n);
        return c.n;
      });
    }
  }
  return 0;
}
