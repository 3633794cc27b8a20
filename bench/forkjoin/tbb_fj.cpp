// SPDX-License-Identifier: Apache-2.0
// weft_fj_tbb: oneTBB's side of the fork-join suite (forkjoin.hpp; protocol: peer_harness.hpp).
// A tbb::task_group per frame, in a task_arena of --streams threads (TBB does not pin its
// workers).
//
//   --bench=fib|fib-cutoff|nqueens|uts-bin|uts-geo|qsort|msort|empty
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include "forkjoin.hpp"

int main(int argc, char** argv) {
  const weft_bench::peer_case c = weft_bench::parse_case(argc, argv);
  tbb::task_arena arena(c.streams);
  arena.execute([&] { weft_fj::run_bench<weft_fj::group_algorithms<tbb::task_group>>("tbb", c); });
  return 0;
}
