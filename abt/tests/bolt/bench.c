// SPDX-License-Identifier: Apache-2.0
/* Timings of three OpenMP kernels, for comparing BOLT over weft with BOLT over Argobots:
 *   nested  36 outer threads each opening a region of 36 (1296 trivial bodies)
 *   fib     fib(25) with a task per call and taskwait
 *   for     a parallel for sum reduction over 10^7 iterations (static schedule)
 * Usage: bench KERNEL REPETITIONS. After one untimed run, prints "KERNEL median_us RESULT": the
 * median wall time of one run in microseconds and the kernel's result (checked; a wrong result
 * exits with status 1). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kOuter = 36, kInner = 36, kFibN = 25, kForIterations = 10000000, kMaxRepetitions = 1000 };

static long long nested(void) {
  long long bodies = 0;
#pragma omp parallel num_threads(kOuter)
#pragma omp parallel num_threads(kInner)
  __atomic_fetch_add(&bodies, 1, __ATOMIC_RELAXED);
  return bodies;
}

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

static long long fib(void) {
  long long result = 0;
#pragma omp parallel
#pragma omp single
  result = fib_tasks(kFibN);
  return result;
}

static long long parallel_for(void) {
  long long sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
  for (int i = 0; i < kForIterations; ++i) sum += i % 7;
  return sum;
}

static long long fib_serial(int n) {
  return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

static long long for_serial(void) {
  long long sum = 0;
  for (int i = 0; i < kForIterations; ++i) sum += i % 7;
  return sum;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s nested|fib|for REPETITIONS\n", argv[0]);
    return 2;
  }
  long long (*kernel)(void) = NULL;
  long long expected = 0;
  if (strcmp(argv[1], "nested") == 0) {
    kernel = nested;
    expected = (long long)kOuter * kInner;
    omp_set_max_active_levels(2);
  } else if (strcmp(argv[1], "fib") == 0) {
    kernel = fib;
    expected = fib_serial(kFibN);
  } else if (strcmp(argv[1], "for") == 0) {
    kernel = parallel_for;
    expected = for_serial();
  } else {
    fprintf(stderr, "unknown kernel '%s' (nested, fib or for)\n", argv[1]);
    return 2;
  }
  const int repetitions = atoi(argv[2]);
  if (repetitions < 1 || repetitions > kMaxRepetitions) {
    fprintf(stderr, "REPETITIONS must be 1 to %d\n", kMaxRepetitions);
    return 2;
  }
  long long result = kernel();
  static double microseconds[kMaxRepetitions];
  for (int r = 0; r < repetitions; ++r) {
    const double start = omp_get_wtime();
    result = kernel();
    microseconds[r] = (omp_get_wtime() - start) * 1e6;
    if (result != expected) break;
  }
  if (result != expected) {
    fprintf(stderr, "FAIL %s: got %lld, expected %lld\n", argv[1], result, expected);
    return 1;
  }
  qsort(microseconds, (size_t)repetitions, sizeof microseconds[0], compare_doubles);
  printf("%s %.1f %lld\n", argv[1], microseconds[repetitions / 2], result);
  return 0;
}
