/* Worksharing loops: every schedule (static with and without chunk, dynamic, guided, runtime,
   auto, the nonmonotonic forms), long loops with negative steps, unsigned long long loops,
   collapse, nowait, ordered, and reductions as GCC lowers them. Each iteration must run once. */
#include <limits.h>
#include <omp.h>
#include <string.h>

#include "check.h"

#define N 1000
static int hits[N];

static int all_once(void) {
  for (int i = 0; i < N; ++i) {
    if (hits[i] != 1) return 0;
  }
  memset(hits, 0, sizeof hits);
  return 1;
}

int main(void) {
#pragma omp parallel num_threads(3)
  {
#pragma omp for schedule(static)
    for (int i = 0; i < N; ++i) hits[i]++;
#pragma omp single
    CHECK(all_once());
#pragma omp for schedule(static, 7)
    for (int i = 0; i < N; ++i) hits[i]++;
#pragma omp single
    CHECK(all_once());
#pragma omp for schedule(dynamic, 5)
    for (int i = 0; i < N; ++i) hits[i]++;
#pragma omp single
    CHECK(all_once());
#pragma omp for schedule(monotonic : dynamic)
    for (int i = 0; i < N; ++i) hits[i]++;
#pragma omp single
    CHECK(all_once());
#pragma omp for schedule(guided, 3)
    for (int i = 0; i < N; ++i) hits[i]++;
#pragma omp single
    CHECK(all_once());
#pragma omp for schedule(nonmonotonic : guided)
    for (int i = 0; i < N; ++i) hits[i]++;
#pragma omp single
    CHECK(all_once());
#pragma omp for schedule(auto)
    for (int i = 0; i < N; ++i) hits[i]++;
#pragma omp single
    CHECK(all_once());
  }
  const omp_sched_t kinds[] = {omp_sched_static, omp_sched_dynamic, omp_sched_guided,
                               omp_sched_auto};
  for (int k = 0; k < 4; ++k) {
    for (int chunk = 0; chunk < 3; chunk += 2) {
      omp_set_schedule(kinds[k], chunk);
#pragma omp parallel for schedule(runtime) num_threads(3)
      for (int i = 0; i < N; ++i) hits[i]++;
      CHECK(all_once());
    }
  }
  /* long loops with negative steps and odd bounds. */
  long sum = 0;
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : sum) num_threads(3)
  for (long i = 1000000000000L; i > 1000000000000L - 3 * N; i -= 3) sum += 1;
  CHECK(sum == N);
  sum = 0;
#pragma omp parallel for schedule(guided) reduction(+ : sum) num_threads(2)
  for (long i = -5; i < 100; i += 7) sum += i;
  CHECK(sum == 660);
  /* unsigned long long loops, up and down, near the top of the range. */
  unsigned long long usum = 0;
#pragma omp parallel for schedule(dynamic, 3) reduction(+ : usum) num_threads(3)
  for (unsigned long long u = ULLONG_MAX - 100; u < ULLONG_MAX - 1; u += 2) usum += 1;
  CHECK(usum == 50);
  usum = 0;
#pragma omp parallel for schedule(static, 2) reduction(+ : usum) num_threads(3)
  for (unsigned long long u = 1000; u > 10; u -= 10) usum += u;
  CHECK(usum == 50490);
  usum = 0;
#pragma omp parallel for schedule(runtime) reduction(+ : usum) num_threads(2)
  for (unsigned long long u = 0; u < 99; ++u) usum += u;
  CHECK(usum == 4851);
  /* collapse(2) over a rectangle. */
  static int grid[30][40];
#pragma omp parallel for collapse(2) schedule(dynamic, 11) num_threads(3)
  for (int i = 0; i < 30; ++i)
    for (int j = 0; j < 40; ++j) grid[i][j]++;
  int grid_ok = 1;
  for (int i = 0; i < 30; ++i)
    for (int j = 0; j < 40; ++j) grid_ok &= grid[i][j] == 1;
  CHECK(grid_ok);
  /* nowait: a thread may run ahead into the next loop. */
  static int a[N], b[N];
#pragma omp parallel num_threads(3)
  {
    for (int rep = 0; rep < 40; ++rep) {
#pragma omp for schedule(dynamic, 9) nowait
      for (int i = 0; i < N; ++i) {
#pragma omp atomic
        a[i]++; /* a thread may already be in the next round's loop */
      }
#pragma omp for schedule(guided) nowait
      for (int i = 0; i < N; ++i) {
#pragma omp atomic
        b[i]++;
      }
    }
  }
  int nowait_ok = 1;
  for (int i = 0; i < N; ++i) nowait_ok &= a[i] == 40 && b[i] == 40;
  CHECK(nowait_ok);
  /* ordered: the ordered parts run in iteration order under each schedule. */
  int order[N], pos = 0;
#pragma omp parallel for ordered schedule(dynamic, 3) num_threads(3)
  for (int i = 0; i < N; ++i) {
#pragma omp ordered
    order[pos++] = i;
  }
  int ordered_ok = pos == N;
  for (int i = 0; i < N; ++i) ordered_ok &= order[i] == i;
  CHECK(ordered_ok);
  pos = 0;
#pragma omp parallel for ordered schedule(static) num_threads(3)
  for (int i = 0; i < N; ++i) {
#pragma omp ordered
    order[pos++] = i;
  }
  ordered_ok = pos == N;
  for (int i = 0; i < N; ++i) ordered_ok &= order[i] == i;
  CHECK(ordered_ok);
  pos = 0;
#pragma omp parallel for ordered schedule(guided, 2) num_threads(3)
  for (unsigned long long i = 0; i < N; ++i) {
#pragma omp ordered
    order[pos++] = (int)i;
  }
  ordered_ok = pos == N;
  for (int i = 0; i < N; ++i) ordered_ok &= order[i] == i;
  CHECK(ordered_ok);
  /* Reductions: one scalar (an atomic), several (GOMP_atomic_start), min/max/logical, arrays. */
  long s1 = 0, s2 = 0;
  double prod = 1.0;
  int mx = INT_MIN, mn = INT_MAX, all = 1, any = 0;
  long arr[4] = {0, 0, 0, 0};
#pragma omp parallel for reduction(+ : s1, s2) reduction(* : prod) reduction(max : mx) \
    reduction(min : mn) reduction(&& : all) reduction(|| : any) reduction(+ : arr[:4])   \
    num_threads(3)
  for (int i = 1; i <= 20; ++i) {
    s1 += i;
    s2 += 2 * i;
    prod *= i <= 10 ? 2.0 : 1.0;
    mx = i > mx ? i : mx;
    mn = i < mn ? i : mn;
    all = all && i > 0;
    any = any || i == 13;
    arr[i % 4] += i;
  }
  CHECK(s1 == 210 && s2 == 420 && prod == 1024.0 && mx == 20 && mn == 1 && all && any);
  CHECK(arr[0] == 60 && arr[1] == 45 && arr[2] == 50 && arr[3] == 55);
  /* lastprivate. */
  int last = -1;
#pragma omp parallel for lastprivate(last) schedule(dynamic) num_threads(3)
  for (int i = 0; i < 77; ++i) last = i;
  CHECK(last == 76);
  /* lastprivate(conditional:): the value of the last iteration that assigned it. */
  int cond = -1;
#pragma omp parallel for lastprivate(conditional : cond) schedule(dynamic, 3) num_threads(3)
  for (int i = 0; i < 100; ++i) {
    if (i % 7 == 3) cond = i;
  }
  CHECK(cond == 94);
  /* An orphaned loop outside any region runs in a team of one. */
#pragma omp for schedule(dynamic, 3)
  for (int i = 0; i < N; ++i) hits[i]++;
  CHECK(all_once());
  return failures;
}
