/* Doacross loops: ordered(n) with depend(sink: ...) and depend(source). Each iteration reads what
   its sinks wrote, so the results equal a serial run's only if every wait held until its sink was
   posted: a 1-D recurrence under every schedule, 2-D wavefronts (also with a sink past the inner
   bound, and collapsed), an unsigned long long loop near 2^63 (the _ull entry points), sinks
   outside the iteration space (i-1 at the first i), nowait loops back to back, teams of one,
   orphaned loops, and GOMP_loop_doacross_start and its _ull twin called directly (schedule
   argument, team-shared memory). Registered also with more threads than streams
   (CMakeLists.txt).

   Teams are no wider than the CPUs (and 4) unless OMP_NUM_THREADS asks: libgomp's waits spin
   without yielding, so a wider team hands each iteration over in kernel time slices. */
#include <omp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

#define N 2000
#define R 60
#define C 70

/* The recurrence: exact in unsigned arithmetic (wraps the same way on every run). */
static uint64_t step(uint64_t prev, uint64_t i) {
  return prev * 6364136223846793005ull + i * 1442695040888963407ull + 1;
}

static uint64_t serial1[N];
static uint64_t a1[N];

static void reset1(void) {
  memset(a1, 0, sizeof a1);
}

static int same1(void) {
  return memcmp(a1, serial1, sizeof a1) == 0;
}

/* One loop body for every schedule: a[i] from a[i-1], which its sink waits for (at i = 0 the
   sink lies outside the iteration space and is not waited for). */
#define RECURRENCE_BODY                                                                \
  {                                                                                    \
    _Pragma("omp ordered depend(sink: i - 1)") a1[i] = step(i > 0 ? a1[i - 1] : 7, i); \
    _Pragma("omp ordered depend(source)")                                              \
  }

static void recurrence_static(void) {
#pragma omp for ordered(1) schedule(static)
  for (long i = 0; i < N; ++i) RECURRENCE_BODY
}
static void recurrence_static1(void) {
#pragma omp for ordered(1) schedule(static, 1)
  for (long i = 0; i < N; ++i) RECURRENCE_BODY
}
static void recurrence_static7(void) {
#pragma omp for ordered(1) schedule(static, 7)
  for (long i = 0; i < N; ++i) RECURRENCE_BODY
}
static void recurrence_dynamic3(void) {
#pragma omp for ordered(1) schedule(dynamic, 3)
  for (long i = 0; i < N; ++i) RECURRENCE_BODY
}
static void recurrence_dynamic(void) {
#pragma omp for ordered(1) schedule(dynamic)
  for (long i = 0; i < N; ++i) RECURRENCE_BODY
}
static void recurrence_guided(void) {
#pragma omp for ordered(1) schedule(guided)
  for (long i = 0; i < N; ++i) RECURRENCE_BODY
}
static void recurrence_guided5(void) {
#pragma omp for ordered(1) schedule(guided, 5)
  for (long i = 0; i < N; ++i) RECURRENCE_BODY
}
static void recurrence_runtime(void) {
#pragma omp for ordered(1) schedule(runtime)
  for (long i = 0; i < N; ++i) RECURRENCE_BODY
}
static void recurrence_auto(void) {
#pragma omp for ordered(1) schedule(auto)
  for (long i = 0; i < N; ++i) RECURRENCE_BODY
}

typedef void (*loop_fn)(void);

/* The team sizes every loop runs with (0: the default, nthreads-var). */
static int teams[4];
#define NTEAMS (int)(sizeof teams / sizeof teams[0])

static void choose_teams(void) {
  int wide = omp_get_num_procs();
  if (wide > 4) wide = 4;
  teams[0] = 0;
  teams[1] = 1;
  teams[2] = 2;
  teams[3] = wide;
}

/* Runs `f` as an orphaned loop in a team of `threads` (0: the default) and checks the result. */
static void check_recurrence(loop_fn f, int threads, const char* what) {
  reset1();
  if (threads > 0) {
#pragma omp parallel num_threads(threads)
    f();
  } else {
#pragma omp parallel
    f();
  }
  if (!same1()) fprintf(stderr, "recurrence wrong: %s, %d threads\n", what, threads);
  CHECK(same1());
}

/* 2-D wavefront: w[i][j] from its upper and left neighbours (row and column 0 are the boundary,
   outside the iteration space 1..R-1 x 1..C-1). */
static uint64_t w[R][C], wserial[R][C];

static void wave_boundary(uint64_t (*m)[C]) {
  for (int i = 0; i < R; ++i) m[i][0] = (uint64_t)i + 1;
  for (int j = 0; j < C; ++j) m[0][j] = (uint64_t)j * 3 + 1;
}

static uint64_t wave_cell(uint64_t up, uint64_t left, uint64_t diag, int i, int j) {
  return up * 31 + left * 17 + diag + (uint64_t)(i * C + j);
}

static void wave_serial(void) {
  memset(wserial, 0, sizeof wserial);
  wave_boundary(wserial);
  for (int i = 1; i < R; ++i) {
    for (int j = 1; j < C; ++j) {
      wserial[i][j] = wave_cell(wserial[i - 1][j], wserial[i][j - 1], 0, i, j);
    }
  }
}

static void wave_reset(void) {
  memset(w, 0, sizeof w);
  wave_boundary(w);
}

static void wave_static(void) {
#pragma omp for ordered(2) schedule(static)
  for (int i = 1; i < R; ++i) {
    for (int j = 1; j < C; ++j) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
      w[i][j] = wave_cell(w[i - 1][j], w[i][j - 1], 0, i, j);
#pragma omp ordered depend(source)
    }
  }
}

static void wave_dynamic(void) {
#pragma omp for ordered(2) schedule(dynamic, 2)
  for (int i = 1; i < R; ++i) {
    for (int j = 1; j < C; ++j) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
      w[i][j] = wave_cell(w[i - 1][j], w[i][j - 1], 0, i, j);
#pragma omp ordered depend(source)
    }
  }
}

static void wave_guided(void) {
#pragma omp for ordered(2) schedule(guided)
  for (int i = 1; i < R; ++i) {
    for (int j = 1; j < C; ++j) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
      w[i][j] = wave_cell(w[i - 1][j], w[i][j - 1], 0, i, j);
#pragma omp ordered depend(source)
    }
  }
}

static void wave_static1(void) {
#pragma omp for ordered(2) schedule(static, 1)
  for (int i = 1; i < R; ++i) {
    for (int j = 1; j < C; ++j) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
      w[i][j] = wave_cell(w[i - 1][j], w[i][j - 1], 0, i, j);
#pragma omp ordered depend(source)
    }
  }
}

/* collapse(2) ordered(2): the team shares out the collapsed (i, j) space, and the sinks are
   given in the collapsed iteration's logical number. */
static void wave_collapse(void) {
#pragma omp for collapse(2) ordered(2) schedule(dynamic, 3)
  for (int i = 1; i < R; ++i) {
    for (int j = 1; j < C; ++j) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
      w[i][j] = wave_cell(w[i - 1][j], w[i][j - 1], 0, i, j);
#pragma omp ordered depend(source)
    }
  }
}

static void check_wave(loop_fn f, int threads, const char* what) {
  wave_reset();
  if (threads > 0) {
#pragma omp parallel num_threads(threads)
    f();
  } else {
#pragma omp parallel
    f();
  }
  const int ok = memcmp(w, wserial, sizeof w) == 0;
  if (!ok) fprintf(stderr, "wavefront wrong: %s, %d threads\n", what, threads);
  CHECK(ok);
}

/* A diagonal dependence (i-1, j+1): at the last column the sink lies past the inner bound and
   names no iteration; the cell then reads the boundary value, which is never written. */
static uint64_t d[R][C + 1], dserial[R][C + 1];

static uint64_t diag_cell(uint64_t (*m)[C + 1], int i, int j) {
  return m[i - 1][j + 1] * 13 + m[i][j - 1] * 7 + m[i - 1][j - 1] + (uint64_t)j;
}

static void diag_init(uint64_t (*m)[C + 1]) {
  memset(m, 0, sizeof d);
  for (int i = 0; i < R; ++i) m[i][0] = (uint64_t)i * 5 + 2, m[i][C] = (uint64_t)i + 9;
  for (int j = 0; j <= C; ++j) m[0][j] = (uint64_t)j + 4;
}

static void diag_loop(int threads) {
#pragma omp parallel for ordered(2) schedule(dynamic) num_threads(threads)
  for (int i = 1; i < R; ++i) {
    for (int j = 1; j < C; ++j) {
#pragma omp ordered depend(sink : i - 1, j + 1) depend(sink : i, j - 1) depend(sink : i - 1, j - 1)
      d[i][j] = diag_cell(d, i, j);
#pragma omp ordered depend(source)
    }
  }
}

/* unsigned long long loop starting near 2^63: the bounds are only known at run time, so GCC
   calls the _ull entry points. */
#define UN 1500
static uint64_t u[UN], userial[UN];

static void ull_loop(unsigned long long lo, unsigned long long hi, int threads) {
#pragma omp parallel for ordered(1) schedule(dynamic, 4) num_threads(threads)
  for (unsigned long long i = lo; i < hi; ++i) {
#pragma omp ordered depend(sink : i - 1)
    u[i - lo] = step(i > lo ? u[i - lo - 1] : 11, i);
#pragma omp ordered depend(source)
  }
}

static void ull_loop_static(unsigned long long lo, unsigned long long hi, int threads) {
#pragma omp parallel for ordered(1) schedule(static) num_threads(threads)
  for (unsigned long long i = lo; i < hi; ++i) {
#pragma omp ordered depend(sink : i - 1)
    u[i - lo] = step(i > lo ? u[i - lo - 1] : 11, i);
#pragma omp ordered depend(source)
  }
}

static void ull_loop_guided(unsigned long long lo, unsigned long long hi, int threads) {
#pragma omp parallel for ordered(1) schedule(guided, 2) num_threads(threads)
  for (unsigned long long i = lo; i < hi; ++i) {
#pragma omp ordered depend(sink : i - 1)
    u[i - lo] = step(i > lo ? u[i - lo - 1] : 11, i);
#pragma omp ordered depend(source)
  }
}

static void ull_loop_runtime(unsigned long long lo, unsigned long long hi, int threads) {
#pragma omp parallel for ordered(1) schedule(runtime) num_threads(threads)
  for (unsigned long long i = lo; i < hi; ++i) {
#pragma omp ordered depend(sink : i - 1)
    u[i - lo] = step(i > lo ? u[i - lo - 1] : 11, i);
#pragma omp ordered depend(source)
  }
}

/* A sink two back and one back, with a source reached only after both: a Fibonacci-like
   recurrence (i-2 is out of range at i = 0 and 1). */
static uint64_t f2[N], f2serial[N];

static void fib_loop(void) {
#pragma omp for ordered(1) schedule(static, 2) nowait
  for (long i = 0; i < N; ++i) {
#pragma omp ordered depend(sink : i - 2) depend(sink : i - 1)
    f2[i] = (i > 1 ? f2[i - 1] + f2[i - 2] * 3 : (uint64_t)i + 1);
#pragma omp ordered depend(source)
  }
}

/* GOMP_loop_doacross_start and its _ull twin (GCC 9+), called directly: GCC 12 emits them only
   for task reductions, which neither is given here. The schedule comes before the chunk size;
   *mem asks for team-shared zeroed memory. The compiler only passes sinks inside the space. */
bool GOMP_loop_doacross_start(unsigned, long*, long, long, long*, long*, uintptr_t*, void**);
bool GOMP_loop_ull_doacross_start(unsigned, unsigned long long*, long, unsigned long long,
                                  unsigned long long*, unsigned long long*, uintptr_t*, void**);
bool GOMP_loop_runtime_next(long*, long*);
bool GOMP_loop_ull_runtime_next(unsigned long long*, unsigned long long*);
void GOMP_loop_end(void);
void GOMP_doacross_post(long*);
void GOMP_doacross_wait(long, ...);
void GOMP_doacross_ull_post(unsigned long long*);
void GOMP_doacross_ull_wait(unsigned long long, ...);

#define MONOTONIC 0x80000000l
#define MAXT 8

static void direct_abi(long sched, long chunk) {
  void* seen[MAXT] = {0};
  int zeroed[MAXT] = {0};
  int nthreads = 1;
  reset1();
#pragma omp parallel num_threads(teams[3])
  {
    const int me = omp_get_thread_num();
    if (me == 0) nthreads = omp_get_num_threads();
    long counts[1] = {N};
    long s, e;
    void* mem = (void*)(uintptr_t)64;
    if (GOMP_loop_doacross_start(1, counts, sched, chunk, &s, &e, NULL, &mem)) {
      do {
        for (long i = s; i < e; ++i) {
          if (i > 0) GOMP_doacross_wait(i - 1);
          a1[i] = step(i > 0 ? a1[i - 1] : 7, (uint64_t)i);
          long v[1] = {i};
          GOMP_doacross_post(v);
        }
      } while (GOMP_loop_runtime_next(&s, &e));
    }
    const unsigned char* m = mem;
    int z = m != NULL;
    for (int k = 0; z && k < 64; ++k) z = m[k] == 0;
    if (me < MAXT) seen[me] = mem, zeroed[me] = z;
    GOMP_loop_end();
  }
  CHECK(same1());
  for (int t = 0; t < nthreads && t < MAXT; ++t) {
    CHECK(zeroed[t]);
    CHECK(seen[t] == seen[0]);
  }
}

static void direct_abi_ull(long sched, unsigned long long chunk) {
  memset(u, 0, sizeof u);
#pragma omp parallel num_threads(teams[3])
  {
    unsigned long long counts[2] = {UN, 3};
    unsigned long long s, e;
    if (GOMP_loop_ull_doacross_start(2, counts, sched, chunk, &s, &e, NULL, NULL)) {
      do {
        for (unsigned long long i = s; i < e; ++i) {
          for (unsigned long long j = 0; j < 3; ++j) {
            if (i > 0) GOMP_doacross_ull_wait(i - 1, 2ull);
            if (j == 2) u[i] = step(i > 0 ? u[i - 1] : 11, i);
            unsigned long long v[2] = {i, j};
            GOMP_doacross_ull_post(v);
          }
        }
      } while (GOMP_loop_ull_runtime_next(&s, &e));
    }
    GOMP_loop_end();
  }
  uint64_t expect = 11;
  int ok = 1;
  for (unsigned long long i = 0; i < UN; ++i) {
    expect = step(expect, i);
    ok &= u[i] == expect;
  }
  CHECK(ok);
}

int main(void) {
  choose_teams();
  serial1[0] = step(7, 0);
  for (long i = 1; i < N; ++i) serial1[i] = step(serial1[i - 1], (uint64_t)i);

  static const struct {
    loop_fn f;
    const char* name;
  } loops[] = {
      {recurrence_static, "static"},    {recurrence_static1, "static,1"},
      {recurrence_static7, "static,7"}, {recurrence_dynamic3, "dynamic,3"},
      {recurrence_dynamic, "dynamic"},  {recurrence_guided, "guided"},
      {recurrence_guided5, "guided,5"}, {recurrence_runtime, "runtime (unset)"},
      {recurrence_auto, "auto"},
  };
  for (unsigned k = 0; k < sizeof loops / sizeof loops[0]; ++k) {
    for (int t = 0; t < NTEAMS; ++t) {
      check_recurrence(loops[k].f, teams[t], loops[k].name);
    }
  }

  /* schedule(runtime) under every run-sched-var the API can set. */
  const omp_sched_t kinds[] = {omp_sched_static, omp_sched_dynamic, omp_sched_guided,
                               omp_sched_auto};
  for (int k = 0; k < 4; ++k) {
    for (int chunk = 0; chunk <= 3; chunk += 3) {
      omp_set_schedule(kinds[k], chunk);
      check_recurrence(recurrence_runtime, 0, "runtime (omp_set_schedule)");
    }
  }
  omp_set_schedule(omp_sched_dynamic, 1);

  /* Orphaned, outside any region: a team of one runs the iterations in order. */
  reset1();
  recurrence_dynamic3();
  CHECK(same1());

  wave_serial();
  for (int t = 0; t < NTEAMS; ++t) {
    check_wave(wave_static, teams[t], "static");
    check_wave(wave_static1, teams[t], "static,1");
    check_wave(wave_dynamic, teams[t], "dynamic,2");
    check_wave(wave_guided, teams[t], "guided");
    check_wave(wave_collapse, teams[t], "collapse(2), dynamic,3");
  }

  diag_init(dserial);
  for (int i = 1; i < R; ++i) {
    for (int j = 1; j < C; ++j) dserial[i][j] = diag_cell(dserial, i, j);
  }
  for (int k = 0; k < NTEAMS; ++k) {
    diag_init(d);
    diag_loop(teams[k] > 0 ? teams[k] : omp_get_max_threads());
    CHECK(memcmp(d, dserial, sizeof d) == 0);
  }

  /* The bounds pass through volatile so that the compiler cannot narrow the loop to long. */
  volatile unsigned long long base = (1ull << 63) + 12345;
  const unsigned long long lo = base, hi = base + UN;
  userial[0] = step(11, lo);
  for (unsigned long long i = 1; i < UN; ++i) userial[i] = step(userial[i - 1], lo + i);
  for (int k = 0; k < NTEAMS; ++k) {
    const int t = teams[k] > 0 ? teams[k] : omp_get_max_threads();
    memset(u, 0, sizeof u);
    ull_loop(lo, hi, t);
    CHECK(memcmp(u, userial, sizeof u) == 0);
    memset(u, 0, sizeof u);
    ull_loop_static(lo, hi, t);
    CHECK(memcmp(u, userial, sizeof u) == 0);
    memset(u, 0, sizeof u);
    ull_loop_guided(lo, hi, t);
    CHECK(memcmp(u, userial, sizeof u) == 0);
    memset(u, 0, sizeof u);
    ull_loop_runtime(lo, hi, t);
    CHECK(memcmp(u, userial, sizeof u) == 0);
  }

  /* Two doacross loops back to back with nowait in one region, many times over (the team's
     work-share slots are reused; a member may enter the second loop while others are still in
     the first). */
  f2serial[0] = 1;
  f2serial[1] = 2;
  for (long i = 2; i < N; ++i) f2serial[i] = f2serial[i - 1] + f2serial[i - 2] * 3;
  for (int round = 0; round < 3; ++round) {
    memset(f2, 0, sizeof f2);
    reset1();
#pragma omp parallel
    {
      for (int rep = 0; rep < 20; ++rep) {
        fib_loop();
        recurrence_dynamic3();
      }
    }
    CHECK(memcmp(f2, f2serial, sizeof f2) == 0);
    CHECK(same1());
  }
  direct_abi(2 | MONOTONIC, 3); /* dynamic, 3 */
  direct_abi(1, 0);             /* static */
  direct_abi(3, 2);             /* guided, 2 */
  direct_abi(0, 0);             /* runtime: the ICV (dynamic, 1 here) */
  direct_abi_ull(2 | MONOTONIC, 4);
  direct_abi_ull(1, 1);
  return failures;
}
