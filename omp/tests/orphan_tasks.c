/* Tasks before any parallel region (orphaned, binding to the initial task): task, task with
   depend, taskwait, taskgroup and taskloop run, and a parallel region works afterwards. */
#include <omp.h>

#include "check.h"

static int sum_loop(int n) {
  int sum = 0;
#pragma omp taskloop shared(sum) num_tasks(3)
  for (int i = 0; i < n; ++i) {
#pragma omp atomic
    sum += i;
  }
  return sum;
}

int main(void) {
  int a = 0, b = 0, c = 0, order[3] = {0, 0, 0}, pos = 0;
#pragma omp task shared(a)
  a = 1;
#pragma omp taskwait
  CHECK(a == 1);

#pragma omp task shared(b, order, pos) depend(out : b)
  {
    b = 2;
    order[pos++] = 1;
  }
#pragma omp task shared(b, c, order, pos) depend(in : b)
  {
    c = b + 1;
    order[pos++] = 2;
  }
#pragma omp taskwait
  CHECK(b == 2 && c == 3 && pos == 2 && order[0] == 1 && order[1] == 2);

  int in_group = 0;
#pragma omp taskgroup
  {
#pragma omp task shared(in_group)
    {
#pragma omp atomic
      in_group += 1;
    }
#pragma omp task shared(in_group)
    {
#pragma omp atomic
      in_group += 1;
    }
  }
  CHECK(in_group == 2);

  int hits[40] = {0};
#pragma omp taskloop grainsize(5) shared(hits)
  for (int i = 0; i < 40; ++i) hits[i] += 1;
  int all = 1;
  for (int i = 0; i < 40; ++i) all &= hits[i] == 1;
  CHECK(all);

  CHECK(sum_loop(100) == 4950);
  CHECK(omp_get_num_threads() == 1 && !omp_in_parallel());

  int team = 0;
#pragma omp parallel num_threads(2) reduction(+ : team)
  team = 1;
  CHECK(team == 2);
  return failures;
}
