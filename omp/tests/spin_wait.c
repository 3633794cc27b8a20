/* Members that wait for each other outside OpenMP constructs, in a program without
   thread-local storage of its own: each member of a team of 6 (wider than this machine's CPUs)
   spins on a flag its left neighbour sets (the OpenMP examples' a.18.1 with seq_cst atomics for
   its flushes). libweft-omp first runs such a team's members as ULTs on the streams it has;
   members that spin there starve the ones queued behind them until its starvation watch adds
   streams, so the team completes. Twice, and a team of 3 in between. */
#include <omp.h>

#include "check.h"

static int flag[8], work[8], result[8];

static void neighbours(int n) {
  for (int i = 0; i < 8; ++i) flag[i] = work[i] = result[i] = 0;
#pragma omp parallel num_threads(n)
  {
    const int me = omp_get_thread_num(), left = (me + n - 1) % n;
    work[me] = 2 * me;
#pragma omp atomic write seq_cst
    flag[me] = 1;
    int seen = 0;
    while (!seen) {
#pragma omp atomic read seq_cst
      seen = flag[left];
    }
    result[me] = work[left] + work[me];
  }
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += result[i] != 2 * i + 2 * ((i + n - 1) % n);
  CHECK(bad == 0);
}

int main(void) {
  omp_set_dynamic(0);
  neighbours(6);
  neighbours(3);
  neighbours(6);
  return failures;
}
