/* Cancellation (run with OMP_CANCELLATION=true): parallel, for, sections and taskgroup. A
   cancelled construct skips the work not yet started; what ran before stays done. */
#include <omp.h>

#include "check.h"

int main(void) {
  CHECK(omp_get_cancellation());
  int after = 0;
#pragma omp parallel num_threads(3)
  {
#pragma omp cancel parallel if (omp_get_thread_num() == 0)
#pragma omp barrier
#pragma omp atomic
    after++;
  }
  /* Thread 0 left at the cancel; the others leave at the barrier (a cancellation point). */
  CHECK(after == 0);

  int iterations = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp for schedule(dynamic, 1)
    for (int i = 0; i < 100000; ++i) {
#pragma omp atomic
      iterations++;
      if (i == 10) {
#pragma omp cancel for
      }
#pragma omp cancellation point for
    }
  }
  CHECK(iterations >= 11 && iterations < 100000);

  int sections = 0;
#pragma omp parallel num_threads(1)
#pragma omp sections
  {
#pragma omp section
    {
      sections++;
#pragma omp cancel sections
    }
#pragma omp section
    sections += 100;
  }
  CHECK(sections == 1);

  int ran = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp taskgroup
    {
#pragma omp task shared(ran)
      {
#pragma omp atomic
        ran++;
#pragma omp cancel taskgroup
      }
#pragma omp taskwait
      for (int i = 0; i < 100; ++i) {
#pragma omp task shared(ran)
        {
#pragma omp atomic
          ran++;
        }
      }
    }
  }
  CHECK(ran == 1);
  return failures;
}
