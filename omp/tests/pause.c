/* omp_pause_resource and omp_pause_resource_all on the host: they fail inside a region; outside
   they release the threads (streams) but not the initial task's ICVs, and the next region
   starts afresh: the threadprivate copies of the other threads start from the initial value,
   as in libgomp (GOMP's own test pause-2 checks the same). */
#include <omp.h>

#include "check.h"

static int t = 128;
#pragma omp threadprivate(t)

int main(void) {
  omp_set_dynamic(0);
  omp_set_num_threads(2);
#pragma omp parallel
  t = omp_get_thread_num() + 256;
  int bad = 0;
#pragma omp parallel reduction(+ : bad)
  bad += t != omp_get_thread_num() + 256;
  CHECK(bad == 0);

  int inside = 0;
#pragma omp parallel num_threads(2)
#pragma omp master
  inside = omp_pause_resource(omp_pause_soft, omp_get_initial_device());
  CHECK(inside != 0);

  CHECK(omp_pause_resource(omp_pause_soft, omp_get_initial_device()) == 0);
  CHECK(omp_get_max_threads() == 2);
#pragma omp parallel reduction(+ : bad)
  {
    bad += omp_get_num_threads() != 2;
    bad += omp_get_thread_num() != 0 && t != 128;
    t = omp_get_thread_num() + 384;
  }
  CHECK(bad == 0);
#pragma omp parallel reduction(+ : bad)
  bad += t != omp_get_thread_num() + 384;
  CHECK(bad == 0);

  CHECK(omp_pause_resource_all(omp_pause_hard) == 0);
  int sum = 0;
#pragma omp parallel for reduction(+ : sum)
  for (int i = 0; i < 100; ++i) sum += i;
  CHECK(sum == 4950);
  return failures;
}
