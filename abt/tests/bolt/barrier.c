// SPDX-License-Identifier: Apache-2.0
/* Barriers: in each phase every thread writes its slot, waits at the barrier, then reads its
 * neighbour's slot, which must hold the neighbour's value of this phase; a second barrier keeps
 * the next phase's writes after every read. */
#include <omp.h>

#include "bolt_check.h"

enum { kThreads = 8, kPhases = 1000 };

static int slot[kThreads];

int main(void) {
  int failures = 0;
  long long stale_reads = 0;
  int team_size = 0;
#pragma omp parallel num_threads(kThreads) reduction(+ : stale_reads)
  {
    const int me = omp_get_thread_num();
    const int n = omp_get_num_threads();
#pragma omp single
    team_size = n;
    for (int phase = 0; phase < kPhases; ++phase) {
      slot[me] = phase * kThreads + me;
#pragma omp barrier
      const int neighbour = (me + 1) % n;
      stale_reads += slot[neighbour] != phase * kThreads + neighbour;
#pragma omp barrier
    }
  }
  failures += bolt_check("team_size", team_size, kThreads);
  failures += bolt_check("stale_reads", stale_reads, 0);
  return bolt_exit_status(failures);
}
