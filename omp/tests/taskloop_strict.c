/* taskloop grainsize(strict: g): every task but the last runs exactly g iterations (OpenMP 5.1),
   where a plain grainsize spreads the remainder over the tasks. A task's iterations are counted
   through a firstprivate slot (each task has its own copy): the sizes of the tasks made are
   compared, for int, long and unsigned long long loops, upwards and downwards. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int sizes[64], ntasks;

static int cmp_desc(const void* a, const void* b) {
  return *(const int*)b - *(const int*)a;
}

/* The sizes recorded, largest first, equal to want[0..n)? */
static int sizes_are(const int* want, int n) {
  qsort(sizes, (size_t)ntasks, sizeof(int), cmp_desc);
  int ok = ntasks == n;
  for (int i = 0; ok && i < n; ++i) ok = sizes[i] == want[i];
  if (!ok) {
    fprintf(stderr, "task sizes:");
    for (int i = 0; i < ntasks; ++i) fprintf(stderr, " %d", sizes[i]);
    fprintf(stderr, "\n");
  }
  memset(sizes, 0, sizeof sizes);
  ntasks = 0;
  return ok;
}

#define COUNT_ITERATION()                            \
  do {                                               \
    if (slot < 0) {                                  \
      _Pragma("omp atomic capture") slot = ntasks++; \
    }                                                \
    _Pragma("omp atomic") sizes[slot]++;             \
  } while (0)

int main(void) {
  static const int strict7[] = {7, 7, 7, 7, 2}, plain7[] = {8, 8, 7, 7}, whole[] = {30},
                   exact[] = {10, 10, 10}, strict4_of_10[] = {4, 4, 2};
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    int slot = -1;
#pragma omp taskloop grainsize(strict : 7) firstprivate(slot)
    for (int i = 0; i < 30; ++i) COUNT_ITERATION();
    CHECK(sizes_are(strict7, 5));

#pragma omp taskloop grainsize(7) firstprivate(slot)
    for (int i = 0; i < 30; ++i) COUNT_ITERATION();
    CHECK(sizes_are(plain7, 4));

#pragma omp taskloop grainsize(strict : 40) firstprivate(slot)
    for (int i = 0; i < 30; ++i) COUNT_ITERATION();
    CHECK(sizes_are(whole, 1));

#pragma omp taskloop grainsize(strict : 10) firstprivate(slot)
    for (int i = 0; i < 30; ++i) COUNT_ITERATION();
    CHECK(sizes_are(exact, 3));

#pragma omp taskloop grainsize(strict : 7) firstprivate(slot)
    for (long i = 60; i > 0; i -= 2) COUNT_ITERATION();
    CHECK(sizes_are(strict7, 5));

#pragma omp taskloop grainsize(strict : 7) firstprivate(slot)
    for (unsigned long long i = 0; i < 30; ++i) COUNT_ITERATION();
    CHECK(sizes_are(strict7, 5));

#pragma omp taskloop grainsize(strict : 4) firstprivate(slot)
    for (unsigned long long i = 100; i > 90; --i) COUNT_ITERATION();
    CHECK(sizes_are(strict4_of_10, 3));

    /* Every iteration once, in order within a task. */
    int hits[30] = {0};
#pragma omp taskloop grainsize(strict : 7) shared(hits)
    for (int i = 0; i < 30; ++i) hits[i]++;
    for (int i = 0; i < 30; ++i) CHECK(hits[i] == 1);
  }
  return failures;
}
