// SPDX-License-Identifier: Apache-2.0
/* abt_bench: create/join, yield and mutex costs written against abt.h alone (the Argobots 1.x
 * API), so that the very same source builds against weft's Argobots-compatible layer (CMake target
 * weft::abt; bench/run runs it) and against any Argobots installation (bench/abt/Makefile, with
 * pkg-config argobots). See docs/benchmarks.md.
 *
 *   abt_bench [N [TRIALS]]     N units / yields / lock rounds per trial (default 10000), 21 trials
 *
 * Everything runs on the primary execution stream's main pool. Each case prints one line of
 * bench/peer_harness.hpp's protocol ("raw PEER BENCH N 1 UNITS NS_TRIAL..."); weft_bench_collect
 * applies 002's filter. PEER is ABT_BENCH_NAME ("abt" unless the build defines it) followed by
 * -ult, -tasklet or -mutex:
 *   fanout     N ULTs (tasklets) created with ABT_thread_create (ABT_task_create), then freed
 *              (ABT_thread_free / ABT_task_free join them)
 *   yield      two ULTs call ABT_thread_yield N times each
 *   yield_to   two ULTs hand the stream to each other with ABT_thread_yield_to, N times each
 *   chain      a chain N deep: each ULT creates the next with ABT_thread_create and frees it
 *   fib        fork-join fib(D), D the smallest depth that creates at least N ULTs: each level
 *              creates a ULT for fib(D-1), computes fib(D-2) itself, then frees (joins) the ULT;
 *              UNITS is the number of ULTs created, and a wrong result fails the run
 *   lock       the primary ULT locks and unlocks an uncontended ABT_mutex N times
 *   lock-yield two ULTs lock, yield while holding the lock, unlock, N times each (the other waits)
 */
#include <abt.h>
#include <argp.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef ABT_BENCH_NAME
#define ABT_BENCH_NAME "abt"
#endif

static ABT_pool g_pool;
static ABT_mutex g_mutex;
static ABT_thread g_peer[2];
static long g_rounds;

static void check(int rc, const char* what) {
  if (rc != ABT_SUCCESS) {
    fprintf(stderr, "abt_bench: %s failed with error %d\n", what, rc);
    exit(1);
  }
}

static void unit_body(void* arg) {
  volatile int x = 0;
  (void)arg;
  x = x + 1;
}

static void yield_body(void* arg) {
  (void)arg;
  for (long i = 0; i < g_rounds; ++i) check(ABT_thread_yield(), "ABT_thread_yield");
}

static void yield_to_body(void* arg) {
  const int self = (int)(intptr_t)arg;
  for (long i = 0; i < g_rounds; ++i) {
    check(ABT_thread_yield_to(g_peer[1 - self]), "ABT_thread_yield_to");
  }
}

static void lock_yield_body(void* arg) {
  (void)arg;
  for (long i = 0; i < g_rounds; ++i) {
    check(ABT_mutex_lock(g_mutex), "ABT_mutex_lock");
    check(ABT_thread_yield(), "ABT_thread_yield");
    check(ABT_mutex_unlock(g_mutex), "ABT_mutex_unlock");
  }
}

/* One link of a chain: creates the next link (arg: the links left after this one), frees it. */
static void chain_link(void* arg) {
  const long left = (long)(intptr_t)arg;
  if (left == 0) return;
  ABT_thread next;
  check(ABT_thread_create(g_pool, chain_link, (void*)(intptr_t)(left - 1), ABT_THREAD_ATTR_NULL,
                          &next),
        "ABT_thread_create");
  check(ABT_thread_free(&next), "ABT_thread_free");
}

/* One level of a fork-join fib: the argument and, once the level returns, its result. */
typedef struct {
  long n;
  long result;
} fib_level;

static void fib_ult(void* arg) {
  fib_level* const level = arg;
  if (level->n < 2) {
    level->result = level->n;
    return;
  }
  fib_level child = {level->n - 1, 0};
  ABT_thread t;
  check(ABT_thread_create(g_pool, fib_ult, &child, ABT_THREAD_ATTR_NULL, &t), "ABT_thread_create");
  fib_level here = {level->n - 2, 0};
  fib_ult(&here);
  check(ABT_thread_free(&t), "ABT_thread_free");
  level->result = child.result + here.result;
}

typedef long (*trial_fn)(long n, void* scratch);

static long ult_fan_out(long n, void* scratch) {
  ABT_thread* t = scratch;
  for (long i = 0; i < n; ++i) {
    check(ABT_thread_create(g_pool, unit_body, NULL, ABT_THREAD_ATTR_NULL, &t[i]),
          "ABT_thread_create");
  }
  for (long i = 0; i < n; ++i) check(ABT_thread_free(&t[i]), "ABT_thread_free");
  return n;
}

static long tasklet_fan_out(long n, void* scratch) {
  ABT_task* t = scratch;
  for (long i = 0; i < n; ++i) {
    check(ABT_task_create(g_pool, unit_body, NULL, &t[i]), "ABT_task_create");
  }
  for (long i = 0; i < n; ++i) check(ABT_task_free(&t[i]), "ABT_task_free");
  return n;
}

/* Two ULTs running `body` (given their index); both exist before either runs. */
static long pair(long n, void (*body)(void*)) {
  g_rounds = n;
  for (int i = 0; i < 2; ++i) {
    check(ABT_thread_create(g_pool, body, (void*)(intptr_t)i, ABT_THREAD_ATTR_NULL, &g_peer[i]),
          "ABT_thread_create");
  }
  for (int i = 0; i < 2; ++i) check(ABT_thread_free(&g_peer[i]), "ABT_thread_free");
  return 2 * n;
}

static long yields(long n, void* scratch) {
  (void)scratch;
  return pair(n, yield_body);
}

static long yield_tos(long n, void* scratch) {
  (void)scratch;
  return pair(n, yield_to_body);
}

static long chain(long n, void* scratch) {
  (void)scratch;
  chain_link((void*)(intptr_t)n);
  return n;
}

/* fib(d), computed in a loop: what fib_ult must find. */
static long fib_value(long d) {
  long a = 0, b = 1;
  for (long i = 0; i < d; ++i) {
    const long next = a + b;
    a = b;
    b = next;
  }
  return a;
}

static long fibs(long n, void* scratch) {
  (void)scratch;
  /* ULTs(d) = ULTs(d-1) + ULTs(d-2) + 1: the smallest depth that creates at least n. */
  long depth = 2, prev = 0, ults = 1;
  while (ults < n) {
    const long next = ults + prev + 1;
    prev = ults;
    ults = next;
    ++depth;
  }
  const long expected = fib_value(depth);
  fib_level top = {depth, 0};
  fib_ult(&top);
  if (top.result != expected) {
    fprintf(stderr, "abt_bench: fib(%ld) = %ld, expected %ld\n", depth, top.result, expected);
    exit(1);
  }
  return ults;
}

static long locks(long n, void* scratch) {
  (void)scratch;
  for (long i = 0; i < n; ++i) {
    check(ABT_mutex_lock(g_mutex), "ABT_mutex_lock");
    check(ABT_mutex_unlock(g_mutex), "ABT_mutex_unlock");
  }
  return n;
}

static long lock_yields(long n, void* scratch) {
  (void)scratch;
  return pair(n, lock_yield_body);
}

/* One warm-up run, then `trials` timed ones, printed as a raw line. */
static void run(const char* peer, const char* bench, long n, int trials, trial_fn fn,
                void* scratch) {
  long units = fn(n, scratch);
  double* ns = malloc(sizeof(double) * (size_t)trials);
  if (!ns) check(ABT_ERR_MEM, "malloc");
  for (int i = 0; i < trials; ++i) {
    const double start = ABT_get_wtime();
    units = fn(n, scratch);
    ns[i] = (ABT_get_wtime() - start) * 1e9;
  }
  printf("raw\t%s-%s\t%s\t%ld\t1\t%ld", ABT_BENCH_NAME, peer, bench, n, units);
  for (int i = 0; i < trials; ++i) printf("\t%.0f", ns[i]);
  printf("\n");
  fflush(stdout);
  free(ns);
}

/* The command line, read with glibc's argp (the program is C and builds against Argobots too). */
struct options {
  long n;
  long trials;
};

static error_t parse_option(int key, char* arg, struct argp_state* state) {
  struct options* o = state->input;
  if (key != ARGP_KEY_ARG) return ARGP_ERR_UNKNOWN;
  if (state->arg_num > 1) argp_error(state, "too many arguments");
  char* end = NULL;
  errno = 0;
  const long v = strtol(arg, &end, 10);
  if (errno != 0 || end == arg || *end != '\0' || v < 1 || v > (1L << 30))
    argp_error(state, "%s: '%s' is not an integer from 1 to 2^30",
               state->arg_num == 0 ? "N" : "TRIALS", arg);
  if (state->arg_num == 0)
    o->n = v;
  else
    o->trials = v;
  return 0;
}

int main(int argc, char** argv) {
  static const struct argp parser = {
      NULL,
      parse_option,
      "[N [TRIALS]]",
      "The abt.h benchmark: fan-outs, yields, a chain and a fork-join fib of N units, TRIALS "
      "timed trials each (default 10000 and 21).",
      NULL,
      NULL,
      NULL};
  struct options opts = {10000, 21};
  /* Usage errors exit with status 2, like the other benchmark programs. */
  argp_err_exit_status = 2;
  if (argp_parse(&parser, argc, argv, 0, NULL, &opts) != 0) return 2;
  const long n = opts.n;
  const int trials = (int)opts.trials;
  check(ABT_init(0, NULL), "ABT_init");
  ABT_xstream self;
  check(ABT_xstream_self(&self), "ABT_xstream_self");
  check(ABT_xstream_get_main_pools(self, 1, &g_pool), "ABT_xstream_get_main_pools");
  check(ABT_mutex_create(&g_mutex), "ABT_mutex_create");

  void* scratch = malloc(sizeof(ABT_thread) * (size_t)n);
  if (!scratch) check(ABT_ERR_MEM, "malloc");
  run("ult", "fanout", n, trials, ult_fan_out, scratch);
  run("tasklet", "fanout", n, trials, tasklet_fan_out, scratch);
  run("ult", "yield", n, trials, yields, NULL);
  run("ult", "yield_to", n, trials, yield_tos, NULL);
  run("ult", "chain", n, trials, chain, NULL);
  run("ult", "fib", n, trials, fibs, NULL);
  run("mutex", "lock", n, trials, locks, NULL);
  run("mutex", "lock-yield", n, trials, lock_yields, NULL);
  free(scratch);

  check(ABT_mutex_free(&g_mutex), "ABT_mutex_free");
  check(ABT_finalize(), "ABT_finalize");
  return 0;
}
