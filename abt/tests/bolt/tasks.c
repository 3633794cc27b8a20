// SPDX-License-Identifier: Apache-2.0
/* Tasks: fib(n) with a task per call and taskwait, from a single thread of the team, and a
 * taskgroup of independent tasks that each count once. */
#include <omp.h>

#include "bolt_check.h"

enum { kFibN = 22, kGroupTasks = 10000 };

static long long fib_tasks(int n) {
  if (n < 2) return n;
  long long a = 0, b = 0;
#pragma omp task shared(a)
  a = fib_tasks(n - 1);
#pragma omp task shared(b)
  b = fib_tasks(n - 2);
#pragma omp taskwait
  return a + b;
}

static long long fib_serial(int n) {
  return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

int main(void) {
  int failures = 0;
  long long fib = 0;
#pragma omp parallel
#pragma omp single
  fib = fib_tasks(kFibN);
  failures += bolt_check("fib", fib, fib_serial(kFibN));

  long long counted = 0;
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup
  for (int t = 0; t < kGroupTasks; ++t) {
#pragma omp task
    __atomic_fetch_add(&counted, 1, __ATOMIC_RELAXED);
  }
  failures += bolt_check("taskgroup_tasks", counted, kGroupTasks);
  return bolt_exit_status(failures);
}
