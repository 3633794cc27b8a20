/* Task priorities (run with OMP_MAX_TASK_PRIORITY=10 on one stream, so that no task starts
   before its creator waits): among siblings not yet started, higher priorities run first
   (priorities above the maximum count as the maximum), equal ones in creation order, tasks
   without a priority (0) last; within a taskgroup and for taskloop too. Checked only when no
   task started before the last was created, as libgomp's own test does. */
#include <omp.h>

#include "check.h"

#define N 40

static int order[N], pos;

static void record(int p) {
  int at;
#pragma omp atomic capture
  at = pos++;
  order[at] = p;
}

/* Priorities must not increase along `order`. */
static int sorted(const int* o, int n) {
  for (int i = 1; i < n; ++i)
    if (o[i] > o[i - 1]) return 0;
  return 1;
}

int main(void) {
  CHECK(omp_get_max_task_priority() == 10);
  int started = 0;
#pragma omp parallel num_threads(1)
#pragma omp single
  {
    for (int i = 0; i < N; ++i) {
      const int p = (i * 7) % 13; /* 0..12: 11 and 12 count as 10 */
#pragma omp task priority(p) firstprivate(p)
      record(p > 10 ? 10 : p);
    }
#pragma omp atomic read
    started = pos;
  }
  if (started == 0) {
    CHECK(pos == N);
    CHECK(sorted(order, N));
    CHECK(order[N - 1] == 0);
  }

  pos = 0;
#pragma omp parallel num_threads(1)
#pragma omp single
  {
#pragma omp taskgroup
    {
      for (int i = 0; i < N; ++i) {
        const int p = i % 5;
#pragma omp task priority(p) firstprivate(p)
        record(p);
      }
#pragma omp atomic read
      started = pos;
    }
    CHECK(pos == N);
  }
  if (started == 0) CHECK(sorted(order, N));

  pos = 0;
#pragma omp parallel num_threads(1)
#pragma omp single
  {
#pragma omp taskloop priority(3) num_tasks(4)
    for (int i = 0; i < 4; ++i) record(3);
  }
  CHECK(pos == 4);
  return failures;
}
