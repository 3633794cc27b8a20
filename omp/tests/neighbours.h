/* Members that wait for each other outside OpenMP constructs: each member of a team of n (at
   most 8) spins on a flag its left neighbour sets, then reads its neighbour's work (the OpenMP
   examples' a.18.1, with seq_cst atomics for its flushes: the same ordering, which
   ThreadSanitizer also sees, as it does not model standalone fences). Members that share a
   stream without ever yielding would never finish. Checks the results with CHECK (check.h). */
#pragma once
#include <omp.h>

#include "check.h"

static int flag[8], work[8], result[8];

/* `barrier`: the members first meet at a barrier, as in a.18.1 (where one waits there, its
   stream runs a team-mate, which may then spin for a member that has not set its flag yet). */
static void neighbours_after(int n, int barrier) {
  for (int i = 0; i < 8; ++i) flag[i] = work[i] = result[i] = 0;
#pragma omp parallel num_threads(n)
  {
    const int me = omp_get_thread_num(), left = (me + n - 1) % n;
    if (barrier) {
#pragma omp barrier
    }
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

static void neighbours(int n) {
  neighbours_after(n, 0);
}
