/* Tasks before any parallel region (orphaned, binding to the initial task): task, task with
   depend (also an iterator over an empty range), taskwait, taskgroup and taskloop run, also
   inside orphaned worksharing constructs (a for with reduction(task) and tasks with
   in_reduction, sections), and a parallel region works afterwards. */
#include <omp.h>

#include "check.h"

static int reduced = 0;

static void reduce_loop(int n) {
#pragma omp for reduction(task, + : reduced)
  for (int i = 0; i < n; ++i) {
#pragma omp task in_reduction(+ : reduced)
    reduced += i;
  }
}

static int in_sections(void) {
  int v = 0;
#pragma omp sections
  {
#pragma omp section
    {
#pragma omp task shared(v)
      v = 5;
#pragma omp taskwait
    }
  }
  return v;
}

static void empty_iterator(int* p, int n) {
#pragma omp task depend(iterator(j = 0 : n), out : p[j]) depend(iterator(j = 0 : n), in : p[j + 2])
  p[3] += 1;
#pragma omp taskwait
}

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
  reduce_loop(10);
  CHECK(reduced == 45);
  CHECK(in_sections() == 5);
  int p[4] = {0, 0, 0, 0};
  empty_iterator(p, 2);
  empty_iterator(p, -1);
  CHECK(p[3] == 2);
  CHECK(omp_get_num_threads() == 1 && !omp_in_parallel());

  int team = 0;
#pragma omp parallel num_threads(2) reduction(+ : team)
  team = 1;
  CHECK(team == 2);
  return failures;
}
