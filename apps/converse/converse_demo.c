// SPDX-License-Identifier: Apache-2.0
/* converse_demo: two classic Converse programs on the runtime of converse.h.
 *
 *  1. A ring: a token message goes around all PEs `laps` times; each hop adds one.
 *  2. A parallel reduction with blocking threads: every PE runs `threads` CthThreads; each sums
 *     its slice of 1..N, sends its part to PE 0 and suspends until PE 0 broadcasts the total;
 *     awakened by its PE's result handler, it checks the total and ends.
 *
 * Usage: converse_demo [PEs (default 4)] [laps (default 100)] [threads per PE (default 8)].
 * Prints the results and exits with status 1 unless each is exactly the expected value.
 */
#include "converse.h"

#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static int ring_handler, part_handler, result_handler, spawn_handler;
static int laps, threads_per_pe;
static long long n_terms;

/* Results, written by the handlers on PE 0 (ring, reduction) or counted atomically (checks). */
static long long ring_hops;
static long long reduced_total;
static int verified_threads;
static int failed_threads;

/* ---- the ring ---------------------------------------------------------------------------- */

struct token {
  long long hops;
  int laps_left;
};

static void on_ring(void* msg) {
  struct token* t = msg;
  t->hops++;
  const int next = (CmiMyPe() + 1) % CmiNumPes();
  if (next == 0) t->laps_left--;
  if (t->laps_left == 0) {
    ring_hops = t->hops; /* on PE n-1 after the last lap; read after quiescence */
    CmiFree(msg);
    return;
  }
  CmiSyncSendAndFree(next, sizeof *t, msg);
}

/* ---- the reduction ----------------------------------------------------------------------- */

struct part {
  long long value;
};

/* Per-PE state of the reduction; only its PE's handlers and threads touch it. */
struct pe_state {
  CthThread waiting[256];
  int num_waiting;
  long long total; /* the broadcast result */
  int have_total;
  /* PE 0 only: parts received so far and their sum. */
  int parts;
  long long sum;
};
static struct pe_state states[CMI_MAX_PES];

static void on_part(void* msg) {
  struct pe_state* s = &states[CmiMyPe()];
  s->sum += ((struct part*)msg)->value;
  CmiFree(msg);
  if (++s->parts == CmiNumPes() * threads_per_pe) {
    reduced_total = s->sum;
    struct part* result = CmiAlloc(sizeof *result);
    result->value = s->sum;
    CmiSetHandler(result, result_handler);
    CmiSyncBroadcastAll(sizeof *result, result);
    CmiFree(result);
  }
}

static void on_result(void* msg) {
  struct pe_state* s = &states[CmiMyPe()];
  s->total = ((struct part*)msg)->value;
  s->have_total = 1;
  CmiFree(msg);
  for (int i = 0; i < s->num_waiting; i++) CthAwaken(s->waiting[i]);
  s->num_waiting = 0;
}

/* A worker thread: its slice of 1..N is every terms-th number from its global index. */
static void worker(void* arg) {
  const int index = (int)(long)arg;
  const int workers = CmiNumPes() * threads_per_pe;
  long long partial = 0;
  for (long long k = index + 1; k <= n_terms; k += workers) {
    partial += k;
    if (k % 1000 == 0) CthYield(); /* let the PE's other threads and messages in */
  }
  struct part* p = CmiAlloc(sizeof *p);
  p->value = partial;
  CmiSetHandler(p, part_handler);
  CmiSyncSendAndFree(0, sizeof *p, p);
  /* Block until the result is here: the handler that brings it awakens the waiting threads. */
  struct pe_state* s = &states[CmiMyPe()];
  if (!s->have_total) {
    s->waiting[s->num_waiting++] = CthSelf();
    CthSuspend();
  }
  if (s->total == n_terms * (n_terms + 1) / 2)
    __atomic_add_fetch(&verified_threads, 1, __ATOMIC_SEQ_CST);
  else
    __atomic_add_fetch(&failed_threads, 1, __ATOMIC_SEQ_CST);
}

/* Runs on every PE: starts its workers. */
static void on_spawn(void* msg) {
  CmiFree(msg);
  for (int i = 0; i < threads_per_pe; i++) {
    const long index = (long)CmiMyPe() * threads_per_pe + i;
    CthAwaken(CthCreate(worker, (void*)index, 0));
  }
}

/* ---- the start thread -------------------------------------------------------------------- */

static void start(void* arg) {
  (void)arg;
  struct token* t = CmiAlloc(sizeof *t);
  t->hops = 0;
  t->laps_left = laps;
  CmiSetHandler(t, ring_handler);
  CmiSyncSendAndFree(0, sizeof *t, t);
  void* spawn = CmiAlloc(0);
  CmiSetHandler(spawn, spawn_handler);
  CmiSyncBroadcastAll(0, spawn);
  CmiFree(spawn);
}

/* The command line, read with glibc's argp: up to three positional integers in ranges. */
static error_t parse_option(int key, char* arg, struct argp_state* state) {
  static const char* const names[] = {"PEs", "LAPS", "THREADS"};
  const long lo[] = {1, 1, 1};
  const long hi[] = {CMI_MAX_PES, 1L << 30, 256};
  int* values = state->input;
  if (key != ARGP_KEY_ARG) return ARGP_ERR_UNKNOWN;
  if (state->arg_num > 2) argp_error(state, "too many arguments");
  const unsigned i = state->arg_num;
  char* end = NULL;
  errno = 0;
  const long v = strtol(arg, &end, 10);
  if (errno != 0 || end == arg || *end != '\0' || v < lo[i] || v > hi[i])
    argp_error(state, "%s: '%s' is not an integer from %ld to %ld", names[i], arg, lo[i], hi[i]);
  values[i] = (int)v;
  return 0;
}

int main(int argc, char** argv) {
  static const struct argp parser = {
      NULL,
      parse_option,
      "[PEs [LAPS [THREADS]]]",
      "The Converse-style runtime's demo: a token ring of LAPS laps over PEs processing elements "
      "(default 4, 100), and a reduction by THREADS threads per PE (default 8, at most 256).",
      NULL,
      NULL,
      NULL};
  int values[3] = {4, 100, 8};
  argp_err_exit_status = 2;
  if (argp_parse(&parser, argc, argv, 0, NULL, values) != 0) return 2;
  const int pes = values[0];
  laps = values[1];
  threads_per_pe = values[2];
  n_terms = 100000;
  ring_handler = CmiRegisterHandler(on_ring);
  part_handler = CmiRegisterHandler(on_part);
  result_handler = CmiRegisterHandler(on_result);
  spawn_handler = CmiRegisterHandler(on_spawn);
  const int rc = ConverseRun(pes, start, NULL);
  if (rc != 0) {
    fprintf(stderr, "ConverseRun failed: %d\n", rc);
    return 1;
  }
  const long long expected_total = n_terms * (n_terms + 1) / 2;
  const int workers = pes * threads_per_pe;
  printf(
      "PEs %d: ring %lld hops (expected %lld), reduction %lld (expected %lld), "
      "%d of %d threads saw the total\n",
      pes, ring_hops, (long long)laps * pes, reduced_total, expected_total, verified_threads,
      workers);
  const int ok = ring_hops == (long long)laps * pes && reduced_total == expected_total &&
                 verified_threads == workers && failed_threads == 0;
  return ok ? 0 : 1;
}
