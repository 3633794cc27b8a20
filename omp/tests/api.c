/* The omp_* API: ICV controls and queries, schedule, dynamic, nested, thread limit, time,
   places, devices; run with OMP_SCHEDULE="guided,7" and OMP_NUM_THREADS="3,2" (the CTest
   environment) so that the environment is checked too. */
#include <omp.h>
#include <stdlib.h>

#include "check.h"

int main(void) {
  omp_sched_t kind;
  int chunk;
  omp_get_schedule(&kind, &chunk);
  CHECK(kind == omp_sched_guided && chunk == 7);
  omp_set_schedule(omp_sched_dynamic, 0);
  omp_get_schedule(&kind, &chunk);
  CHECK(kind == omp_sched_dynamic && chunk == 1);
  omp_set_schedule(omp_sched_static, 5);
  omp_get_schedule(&kind, &chunk);
  CHECK(kind == omp_sched_static && chunk == 5);

  CHECK(omp_get_max_threads() == 3);
  CHECK(omp_get_nested() == 1); /* a list in OMP_NUM_THREADS enables nesting */
  int outer = 0, inner = 0;
#pragma omp parallel
  {
#pragma omp single
    outer = omp_get_num_threads();
#pragma omp parallel
#pragma omp single
    {
#pragma omp atomic write
      inner = omp_get_num_threads(); /* each outer thread's inner team writes it */
    }
    CHECK(omp_get_max_threads() == 2);
  }
  CHECK(outer == 3 && inner == 2);

  omp_set_dynamic(1);
  CHECK(omp_get_dynamic());
  omp_set_dynamic(0);
  CHECK(!omp_get_dynamic());
  omp_set_nested(0);
  CHECK(!omp_get_nested() && omp_get_max_active_levels() == 1);
  omp_set_nested(1);
  CHECK(omp_get_nested());
  CHECK(omp_get_thread_limit() > 0);
  CHECK(omp_get_num_procs() > 0);
  CHECK(omp_get_supported_active_levels() >= 1);
  CHECK(!omp_in_final());
  CHECK(omp_get_max_task_priority() == 0);
  CHECK(omp_is_initial_device());
  CHECK(omp_get_num_teams() == 1 && omp_get_team_num() == 0);

  const double t0 = omp_get_wtime();
  double t1 = t0;
  while (t1 == t0) t1 = omp_get_wtime();
  CHECK(t1 > t0);
  CHECK(omp_get_wtick() > 0 && omp_get_wtick() < 1);

  const int places = omp_get_num_places();
  CHECK(places >= 0);
  for (int p = 0; p < places; ++p) {
    const int n = omp_get_place_num_procs(p);
    CHECK(n > 0);
    int* ids = malloc(sizeof(int) * (size_t)n);
    omp_get_place_proc_ids(p, ids);
    CHECK(ids[0] >= 0);
    free(ids);
  }
  CHECK(omp_get_partition_num_places() == places);
  void* mem = omp_alloc(64, omp_default_mem_alloc);
  CHECK(mem != NULL);
  omp_free(mem, omp_default_mem_alloc);
  return failures;
}
