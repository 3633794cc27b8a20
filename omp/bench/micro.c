/* Microbenchmarks of an OpenMP runtime, unmodified OpenMP C built by GCC (or clang):
     micro region   fork/join of an empty parallel region of 2 threads, us per region
     micro barrier  an empty barrier in a region of 2 threads, us per barrier
     micro fib N    fib(N) with an omp task at every level (no cut-off), ms per run
     micro doacross a chain of 20000 iterations in 2 threads, schedule(static, 1), each waiting
                    for the one before (depend(sink: i-1)): a hand-off per iteration, ns per
                    iteration
     micro chain    10^5 tasks in a chain, each depend(inout: x) on one variable, ms per run
     micro wavefront a 1024x1024 recurrence in 64x64 blocks of 16x16, one task per block with
                    depend(in) on its upper and left neighbours and depend(out) on itself (4096
                    tasks, the diagonals in parallel), ms per run
     micro taskred  10^6 tasks in_reduction(+) of a taskgroup task_reduction(+), ms per run
     micro doacross2 the same recurrence as wavefront, element by element, as a doacross loop
                    for ordered(2) schedule(static, 1) with depend(sink: i-1, j) and
                    depend(sink: i, j-1), ms per run
   Each checks its result against a sequential computation (a wrong one exits with 1), and
   prints: what median min kept, over 11 batches (the first dropped, then 002's filter:
   spikes above 1.8x the median dropped, at most 10%). */
#include <argp.h>
#include <errno.h>
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

#define CHAIN_TASKS 100000

static long dependence_chain(void) {
  long x = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  for (long i = 0; i < CHAIN_TASKS; ++i) {
#pragma omp task depend(inout : x) shared(x)
    ++x;
  }
  return x;
}

/* The wavefront's recurrence: v[i][j] from its upper and left neighbours (unsigned, so that
   wrap-around is defined); row 0 and column 0 are fixed. */
#define GRID 1024
#define BLOCK 16
#define NBLOCKS (GRID / BLOCK)
static unsigned grid[GRID][GRID];
static unsigned grid_check[GRID][GRID];

static unsigned step(unsigned up, unsigned left) {
  return up * 3u + (left ^ (left >> 7)) + 1u;
}

static void grid_reset(unsigned (*g)[GRID]) {
  for (int i = 0; i < GRID; ++i)
    for (int j = 0; j < GRID; ++j) g[i][j] = (i == 0 || j == 0) ? (unsigned)(i * 7 + j * 13) : 0u;
}

static void grid_block(int bi, int bj) {
  for (int i = bi * BLOCK; i < (bi + 1) * BLOCK; ++i)
    for (int j = bj * BLOCK; j < (bj + 1) * BLOCK; ++j)
      if (i > 0 && j > 0) grid[i][j] = step(grid[i - 1][j], grid[i][j - 1]);
}

static void grid_sequential(void) {
  grid_reset(grid_check);
  for (int i = 1; i < GRID; ++i)
    for (int j = 1; j < GRID; ++j)
      grid_check[i][j] = step(grid_check[i - 1][j], grid_check[i][j - 1]);
}

static void wavefront(void) {
  grid_reset(grid);
#pragma omp parallel num_threads(2)
#pragma omp single
  for (int bi = 0; bi < NBLOCKS; ++bi)
    for (int bj = 0; bj < NBLOCKS; ++bj) {
      /* A block is named by its first element; a neighbour outside the grid by the block itself
         (an address named twice by one task keeps its out). */
      const int i0 = bi * BLOCK, j0 = bj * BLOCK;
      const int up = bi > 0 ? i0 - BLOCK : i0, left = bj > 0 ? j0 - BLOCK : j0;
#pragma omp task depend(in : grid[up][j0], grid[i0][left]) depend(out : grid[i0][j0])
      grid_block(bi, bj);
    }
}

static void doacross_grid(void) {
  grid_reset(grid);
#pragma omp parallel for ordered(2) schedule(static, 1) num_threads(2)
  for (int i = 1; i < GRID; ++i)
    for (int j = 1; j < GRID; ++j) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
      grid[i][j] = step(grid[i - 1][j], grid[i][j - 1]);
#pragma omp ordered depend(source)
    }
}

#define REDUCTION_TASKS 1000000L

static long task_reduction(void) {
  long s = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
#pragma omp taskgroup task_reduction(+ : s)
  for (long i = 0; i < REDUCTION_TASKS; ++i) {
#pragma omp task in_reduction(+ : s) firstprivate(i)
    s += i;
  }
  return s;
}

/* The command line, read with glibc's argp: the case, and fib's N. */
static const char* const cases[] = {"region", "barrier",   "fib",     "doacross",
                                    "chain",  "wavefront", "taskred", "doacross2"};

struct options {
  const char* name;
  int n;
};

static error_t parse_option(int key, char* arg, struct argp_state* state) {
  struct options* o = state->input;
  if (key == ARGP_KEY_END && o->name == NULL) argp_error(state, "which case?");
  if (key != ARGP_KEY_ARG) return ARGP_ERR_UNKNOWN;
  if (state->arg_num == 0) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
      if (strcmp(arg, cases[i]) == 0) o->name = cases[i];
    if (o->name == NULL) argp_error(state, "no case '%s'", arg);
    return 0;
  }
  if (state->arg_num > 1 || strcmp(o->name, "fib") != 0) argp_error(state, "too many arguments");
  char* end = NULL;
  errno = 0;
  const long v = strtol(arg, &end, 10);
  if (errno != 0 || end == arg || *end != '\0' || v < 1 || v > 45)
    argp_error(state, "N: '%s' is not an integer from 1 to 45", arg);
  o->n = (int)v;
  return 0;
}

int main(int argc, char** argv) {
  static const struct argp parser = {
      NULL,
      parse_option,
      "region|barrier|fib [N]|doacross|chain|wavefront|taskred|doacross2",
      "OpenMP micro-benchmarks, each checked: one case per run (fib: N, default 30).",
      NULL,
      NULL,
      NULL};
  struct options opts = {NULL, 30};
  argp_err_exit_status = 2;
  if (argp_parse(&parser, argc, argv, 0, NULL, &opts) != 0) return 2;
  const char* const name = opts.name;
  double t[BATCHES];
  if (strcmp(name, "region") == 0) {
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
  } else if (strcmp(name, "barrier") == 0) {
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
  } else if (strcmp(name, "fib") == 0) {
    const int n = opts.n;
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
  } else if (strcmp(name, "doacross") == 0) {
    for (int b = 0; b < BATCHES; ++b) {
      const double t0 = omp_get_wtime();
      doacross_chain();
      t[b] = (omp_get_wtime() - t0) / CHAIN * 1e9;
      if (chain[CHAIN - 1] != CHAIN) return 1;
    }
    report("doacross", t, BATCHES);
  } else if (strcmp(name, "chain") == 0) {
    for (int b = 0; b < BATCHES; ++b) {
      const double t0 = omp_get_wtime();
      const long x = dependence_chain();
      t[b] = (omp_get_wtime() - t0) * 1e3;
      if (x != CHAIN_TASKS) return 1;
    }
    report("chain", t, BATCHES);
  } else if (strcmp(name, "wavefront") == 0 || strcmp(name, "doacross2") == 0) {
    const int tasks = strcmp(name, "wavefront") == 0;
    grid_sequential();
    for (int b = 0; b < BATCHES; ++b) {
      const double t0 = omp_get_wtime();
      if (tasks) {
        wavefront();
      } else {
        doacross_grid();
      }
      t[b] = (omp_get_wtime() - t0) * 1e3;
      if (memcmp(grid, grid_check, sizeof grid) != 0) return 1;
    }
    report(name, t, BATCHES);
  } else if (strcmp(name, "taskred") == 0) {
    for (int b = 0; b < BATCHES; ++b) {
      const double t0 = omp_get_wtime();
      const long s = task_reduction();
      t[b] = (omp_get_wtime() - t0) * 1e3;
      if (s != REDUCTION_TASKS * (REDUCTION_TASKS - 1) / 2) return 1;
    }
    report("taskred", t, BATCHES);
  } else {
    return 2;
  }
  return 0;
}
