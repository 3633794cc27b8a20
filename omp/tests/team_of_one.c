/* Tasks of a team of one thread, which libweft-omp keeps in their creator's list until a
   scheduling point runs them (no ULT): every task runs exactly once, before the taskwait, the
   taskgroup end or the barrier that waits for it; a detached sibling's event fulfilled by such a
   task lets the tasks that depend on it run; deep recursions and tasks left to the region's end
   complete; an inactive region nested in an active one has a team of one too. Run with any
   OMP_NUM_THREADS (the teams here name their width). */
#include <omp.h>
#include <stdlib.h>

#include "check.h"

static long fib(int n) {
  if (n < 2) return n;
  long a, b;
#pragma omp task shared(a)
  a = fib(n - 1);
#pragma omp task shared(b)
  b = fib(n - 2);
#pragma omp taskwait
  return a + b;
}

/* A chain of tasks, each creating the next, deeper than a small stack holds when each level
   nests on its creator's: `depth` levels, each adds one. */
static void chain(int depth, long* sum) {
  if (depth == 0) return;
#pragma omp task firstprivate(depth, sum)
  {
    volatile char pad[512];
    pad[0] = 1;
    *sum += pad[0];
    chain(depth - 1, sum);
  }
}

int main(void) {
  /* Each task once, all before the taskwait; task data is its own. */
  enum { N = 1000 };
  static int ran[N];
#pragma omp parallel num_threads(1)
  {
    CHECK(omp_get_num_threads() == 1);
    for (int i = 0; i < N; ++i) {
#pragma omp task firstprivate(i)
      {
        CHECK(omp_get_thread_num() == 0);
        CHECK(!omp_in_final());
        ran[i] += 1;
      }
    }
#pragma omp taskwait
    for (int i = 0; i < N; ++i) CHECK(ran[i] == 1);
  }

  /* A taskgroup waits for its tasks and their descendants, not for tasks created before it. */
  int outside = 0, inside = 0, grandchildren = 0;
#pragma omp parallel num_threads(1)
#pragma omp single
  {
#pragma omp task shared(outside)
    outside = 1;
#pragma omp taskgroup
    {
      for (int i = 0; i < 10; ++i) {
#pragma omp task shared(inside, grandchildren)
        {
#pragma omp atomic
          inside++;
#pragma omp task shared(grandchildren)
          {
#pragma omp atomic
            grandchildren++;
          }
        }
      }
    }
    CHECK(inside == 10);
    CHECK(grandchildren == 10);
  }
  CHECK(outside == 1); /* the region's end waits for it */

  /* A detached task whose event a plain sibling fulfils, a task that depends on it, and a
     taskwait on that dependence. */
  {
    int x = 0, y = 0, z = 0, dep = 0;
    omp_event_handle_t ev;
#pragma omp parallel num_threads(1)
#pragma omp single
    {
#pragma omp task depend(out : dep) detach(ev) shared(x)
      x++;
#pragma omp task shared(y, ev)
      {
        y++;
        omp_fulfill_event(ev);
      }
#pragma omp task depend(in : dep) shared(x, z)
      {
        CHECK(x == 1);
        z++;
      }
#pragma omp taskwait depend(in : dep)
      CHECK(x == 1);
    }
    (void)dep;
    CHECK(x == 1 && y == 1 && z == 1);
  }

  /* A task recursion, and a chain deeper than one stack holds nested. */
  long f = 0, sum = 0;
#pragma omp parallel num_threads(1)
#pragma omp single
  {
    f = fib(20);
    chain(20000, &sum);
  }
  CHECK(f == 6765);
  CHECK(sum == 20000);

  /* Inactive regions nested in an active one: each inner team of one runs its own tasks. */
  int per_member[2] = {0, 0};
#pragma omp parallel num_threads(2)
  {
    const int me = omp_get_thread_num();
#pragma omp parallel num_threads(2) shared(per_member)
    {
      CHECK(omp_get_num_threads() == 1);
      for (int i = 0; i < 100; ++i) {
#pragma omp task shared(per_member) firstprivate(me)
        {
#pragma omp atomic
          per_member[me]++;
        }
      }
    }
    /* The inner region's end waited for its tasks. */
    int seen;
#pragma omp atomic read
    seen = per_member[me];
    CHECK(seen == 100);
  }

  /* A taskloop in a team of one. */
  static int hits[257];
#pragma omp parallel num_threads(1)
#pragma omp single
#pragma omp taskloop grainsize(7)
  for (int i = 0; i < 257; ++i) hits[i]++;
  for (int i = 0; i < 257; ++i) CHECK(hits[i] == 1);

  return failures;
}
