/* Microbenchmarks of an OpenMP runtime, unmodified OpenMP C built by GCC (or clang):
     micro region   fork/join of an empty parallel region of 2 threads, us per region
     micro barrier  an empty barrier in a region of 2 threads, us per barrier
     micro fib N    fib(N) with an omp task at every level (no cut-off), ms per run
     micro doacross a chain of 20000 iterations in 2 threads, schedule(static, 1), each waiting
                    for the one before (depend(sink: i-1)): a hand-off per iteration, ns per
                    iteration
   Each prints: what median min kept, over 11 batches (the first dropped, then 002's filter:
   spikes above 1.8x the median dropped, at most 10%). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCHES 11

static int cmp(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static void report(const char* what, double* t, int n) {
  /* drop the first batch, then spikes above 1.8x the median (at most 10%) */
  double v[BATCHES];
  int m = 0;
  for (int i = 1; i < n; ++i) v[m++] = t[i];
  qsort(v, (size_t)m, sizeof v[0], cmp);
  const double med = v[m / 2];
  int kept = m, dropped = 0;
  while (kept > 0 && v[kept - 1] > 1.8 * med && dropped < (m + 9) / 10) {
    --kept;
    ++dropped;
  }
  printf("%-8s %12.3f %12.3f %3d\n", what, v[kept / 2], v[0], kept);
}

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

static long fib_check(int n) {
  long a = 0, b = 1;
  for (int i = 0; i < n; ++i) {
    const long c = a + b;
    a = b;
    b = c;
  }
  return a;
}

#define CHAIN 20000
static long chain[CHAIN];

static void doacross_chain(void) {
#pragma omp parallel for ordered(1) schedule(static, 1) num_threads(2)
  for (long i = 0; i < CHAIN; ++i) {
#pragma omp ordered depend(sink : i - 1)
    chain[i] = (i > 0 ? chain[i - 1] : 0) + 1;
#pragma omp ordered depend(source)
  }
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s region|barrier|fib [N]|doacross\n", argv[0]);
    return 2;
  }
  double t[BATCHES];
  if (strcmp(argv[1], "region") == 0) {
    const int reps = 2000;
    for (int b = 0; b < BATCHES; ++b) {
      const double t0 = omp_get_wtime();
      for (int r = 0; r < reps; ++r) {
#pragma omp parallel num_threads(2)
        { __asm__ __volatile__("" ::: "memory"); /* keeps GCC from dropping the region */ }
      }
      t[b] = (omp_get_wtime() - t0) / reps * 1e6;
    }
    report("region", t, BATCHES);
  } else if (strcmp(argv[1], "barrier") == 0) {
    const int reps = 5000;
    for (int b = 0; b < BATCHES; ++b) {
      double dt = 0;
#pragma omp parallel num_threads(2)
      {
#pragma omp barrier
        const double t0 = omp_get_wtime();
        for (int r = 0; r < reps; ++r) {
#pragma omp barrier
        }
#pragma omp master
        dt = omp_get_wtime() - t0;
      }
      t[b] = dt / reps * 1e6;
    }
    report("barrier", t, BATCHES);
  } else if (strcmp(argv[1], "fib") == 0) {
    const int n = argc > 2 ? atoi(argv[2]) : 30;
    long result = 0;
    for (int b = 0; b < BATCHES; ++b) {
      const double t0 = omp_get_wtime();
#pragma omp parallel num_threads(2)
#pragma omp single
      result = fib(n);
      t[b] = (omp_get_wtime() - t0) * 1e3;
    }
    report("fib", t, BATCHES);
    if (result != fib_check(n)) return 1;
  } else if (strcmp(argv[1], "doacross") == 0) {
    for (int b = 0; b < BATCHES; ++b) {
      const double t0 = omp_get_wtime();
      doacross_chain();
      t[b] = (omp_get_wtime() - t0) / CHAIN * 1e9;
      if (chain[CHAIN - 1] != CHAIN) return 1;
    }
    report("doacross", t, BATCHES);
  } else {
    return 2;
  }
  return 0;
}
