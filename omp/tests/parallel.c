/* Parallel regions: team sizes (num_threads, if, the ICV), thread numbers, nesting to depth 3
   with level, active level, ancestor and team-size queries, max-active-levels, and the legacy
   GOMP_parallel_start form's behaviour through plain regions. */
#include <omp.h>

#include "check.h"

/* The OpenMP 2.5 entry points older GCC versions emit: the caller runs the body itself between
   start and end. Both runtimes still export them. */
void GOMP_parallel_start(void (*fn)(void*), void* data, unsigned num_threads);
void GOMP_parallel_end(void);

static void legacy_body(void* data) {
  int* seen = data;
  if (omp_get_num_threads() == 3)
    __atomic_fetch_add(&seen[omp_get_thread_num()], 1, __ATOMIC_RELAXED);
}

int main(void) {
  int seen[8] = {0};
#pragma omp parallel num_threads(4)
  {
    CHECK(omp_get_num_threads() == 4);
    CHECK(omp_in_parallel());
    CHECK(omp_get_level() == 1 && omp_get_active_level() == 1);
#pragma omp atomic
    seen[omp_get_thread_num()]++;
  }
  for (int i = 0; i < 4; ++i) CHECK(seen[i] == 1);
  CHECK(!omp_in_parallel() && omp_get_level() == 0);

  int n = -1;
#pragma omp parallel num_threads(3) if (0)
  {
    n = omp_get_num_threads();
    CHECK(omp_get_level() == 1 && omp_get_active_level() == 0);
  }
  CHECK(n == 1);

  omp_set_num_threads(3);
  CHECK(omp_get_max_threads() == 3);
#pragma omp parallel
#pragma omp single
  n = omp_get_num_threads();
  CHECK(n == 3);

  /* Depth 3: 2 x 3 x 2 threads, each innermost thread checks its ancestry. */
  omp_set_max_active_levels(3);
  CHECK(omp_get_max_active_levels() == 3);
  int count = 0, bad = 0;
#pragma omp parallel num_threads(2)
  {
    const int a = omp_get_thread_num();
#pragma omp parallel num_threads(3)
    {
      const int b = omp_get_thread_num();
#pragma omp parallel num_threads(2)
      {
        const int c = omp_get_thread_num();
        int ok = omp_get_level() == 3 && omp_get_active_level() == 3 &&
                 omp_get_num_threads() == 2 && omp_get_team_size(1) == 2 &&
                 omp_get_team_size(2) == 3 && omp_get_team_size(3) == 2 &&
                 omp_get_team_size(0) == 1 && omp_get_ancestor_thread_num(0) == 0 &&
                 omp_get_ancestor_thread_num(1) == a && omp_get_ancestor_thread_num(2) == b &&
                 omp_get_ancestor_thread_num(3) == c && omp_get_ancestor_thread_num(4) == -1 &&
                 omp_get_team_size(4) == -1;
#pragma omp critical
        {
          ++count;
          if (!ok) ++bad;
        }
      }
    }
  }
  CHECK(count == 12);
  CHECK(bad == 0);

  /* Past max-active-levels inner regions are inactive teams of one. */
  omp_set_max_active_levels(1);
  int inner = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp parallel num_threads(2)
    {
#pragma omp atomic
      inner += omp_get_num_threads();
      CHECK(omp_get_level() == 2 && omp_get_active_level() == 1);
    }
  }
  CHECK(inner == 2);

  int legacy[3] = {0, 0, 0};
  GOMP_parallel_start(legacy_body, legacy, 3);
  legacy_body(legacy);
  GOMP_parallel_end();
  CHECK(legacy[0] == 1 && legacy[1] == 1 && legacy[2] == 1);
  CHECK(omp_get_level() == 0);
  return failures;
}
