/* Cancellation (run with OMP_CANCELLATION=true): parallel, for, sections and taskgroup. A
   cancelled construct skips the work not yet started; what ran before stays done, and the
   constructs after it run in full (static loops too, which tell the runtime nothing when they
   start). A task created in a cancelled taskgroup is discarded; a worksharing loop's
   reduction(task) taskgroup passes a cancellation to the taskgroup around it. */
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

  /* Static loops, one cancelled, then two that must run in full. */
  int first = 0, second = 0, third = 0;
  volatile int yes = 1, no = 0;
#pragma omp parallel num_threads(4)
  {
#pragma omp for
    for (int i = 0; i < 1000; ++i) {
#pragma omp cancel for if (yes)
#pragma omp atomic
      first++;
    }
#pragma omp for
    for (int i = 0; i < 1000; ++i) {
#pragma omp cancel for if (no)
#pragma omp atomic
      second++;
    }
#pragma omp for schedule(static, 7)
    for (int i = 0; i < 1000; ++i) {
#pragma omp cancellation point for
#pragma omp atomic
      third++;
    }
  }
  CHECK(first == 0 && second == 1000 && third == 1000);

  /* A task in a for reduction(task) loop cancels the user's taskgroup: the task made after the
     loop, in that taskgroup, is discarded. */
  int total = 0, late = 0;
#pragma omp parallel num_threads(2) shared(late)
#pragma omp taskgroup
  {
#pragma omp for reduction(task, + : total)
    for (int i = 0; i < 8; ++i) {
#pragma omp task in_reduction(+ : total)
      {
        total += 1;
#pragma omp cancel taskgroup
      }
    }
#pragma omp task shared(late)
    {
#pragma omp atomic
      late++;
    }
  }
  CHECK(late == 0);
  CHECK(total <= 8);
  return failures;
}
