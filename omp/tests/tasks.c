/* Explicit tasks: fib with a task at every level, taskwait, taskgroup, depend(in/out/inout)
   ordering, if(0), final and omp_in_final, mergeable, untied, priority, taskyield, taskloop with
   grainsize, num_tasks and nogroup, and tasks created in nested teams. */
#include <omp.h>

#include "check.h"

static long fib(int n) {
  if (n < 2) return n;
  long a, b;
#pragma omp task shared(a) firstprivate(n)
  a = fib(n - 1);
#pragma omp task shared(b) firstprivate(n) untied
  b = fib(n - 2);
#pragma omp taskwait
  return a + b;
}

int main(void) {
  long f = 0;
#pragma omp parallel num_threads(3)
#pragma omp single
  f = fib(20);
  CHECK(f == 6765);

  /* Tasks finish by the end of the region's barrier, and by taskgroup end. */
  int done = 0, in_group = 0;
#pragma omp parallel num_threads(3)
  {
#pragma omp single
    for (int i = 0; i < 50; ++i) {
#pragma omp task
      {
#pragma omp atomic
        done++;
      }
    }
#pragma omp single
    {
#pragma omp taskgroup
      {
        for (int i = 0; i < 20; ++i) {
#pragma omp task
          {
#pragma omp task
            {
#pragma omp atomic
              in_group++;
            }
          }
        }
      }
      CHECK(in_group == 20);
    }
  }
  CHECK(done == 50);

  /* depend: a chain out -> inout -> in,in -> out must see the writes in order. */
  int x = 0, log[5] = {0}, step = 0;
#pragma omp parallel num_threads(3)
#pragma omp single
  {
#pragma omp task depend(out : x)
    {
      x = 1;
      log[step++] = 1;
    }
#pragma omp task depend(inout : x)
    {
      x *= 10;
#pragma omp atomic
      step++;
    }
    int r1 = 0, r2 = 0;
#pragma omp task depend(in : x) shared(r1)
    r1 = x;
#pragma omp task depend(in : x) shared(r2)
    r2 = x;
#pragma omp task depend(out : x) shared(r1, r2)
    {
      CHECK(r1 == 10 && r2 == 10);
      x = 7;
    }
#pragma omp taskwait
    CHECK(x == 7 && log[0] == 1 && step == 2);
  }

  /* if(0) runs at once; final makes descendants final and undeferred. */
  int undeferred = 0, finals = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task if (0) shared(undeferred)
    undeferred = 1;
    CHECK(undeferred == 1);
#pragma omp task final(1) shared(finals)
    {
      if (omp_in_final()) finals++;
#pragma omp task shared(finals)
      {
        if (omp_in_final()) finals++;
      }
      CHECK(finals == 2); /* the child was undeferred */
    }
#pragma omp taskwait
#pragma omp task mergeable priority(3) shared(finals)
    finals += 10;
#pragma omp taskyield
#pragma omp taskwait
    CHECK(finals == 12);
  }

  /* taskloop with the default, grainsize, num_tasks, nogroup; long and unsigned long long. */
  static int hits[1000];
  long total = 0;
#pragma omp parallel num_threads(3)
#pragma omp single
  {
#pragma omp taskloop
    for (int i = 0; i < 1000; ++i) hits[i]++;
#pragma omp taskloop grainsize(37)
    for (long i = 999; i >= 0; --i) hits[i]++;
#pragma omp taskloop num_tasks(7)
    for (unsigned long long i = 0; i < 1000; ++i) hits[i]++;
#pragma omp taskgroup
    {
#pragma omp taskloop nogroup
      for (int i = 0; i < 1000; i += 2) hits[i]++;
    }
#pragma omp taskloop shared(total)
    for (int i = 0; i < 100; ++i) {
#pragma omp atomic
      total += i;
    }
  }
  int hits_ok = 1;
  for (int i = 0; i < 1000; ++i) hits_ok &= hits[i] == 3 + (i % 2 == 0);
  CHECK(hits_ok);
  CHECK(total == 4950);

  /* Tasks in nested teams (depth 2 and 3). */
  omp_set_max_active_levels(3);
  int nested_tasks = 0;
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
  {
    for (int i = 0; i < 5; ++i) {
#pragma omp task
      {
#pragma omp atomic
        nested_tasks++;
      }
    }
  }
  CHECK(nested_tasks == 40);
  return failures;
}
