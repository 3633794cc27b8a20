// SPDX-License-Identifier: Apache-2.0
/* converse_test: checks the primitives of converse.h on a given number of PEs (argv[1]): where
 * handlers run, message copies, broadcasts, thread start/suspend/awaken across PEs, an awakening
 * that comes before the suspension, CthSelf, stack sizes, and quiescence. Exits with status 1 on
 * the first failed expectation (after printing it). */
#include "converse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

/* Records and prints a failed expectation; main() turns any into the exit status. */
#define EXPECT(cond)                                                      \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);                 \
    }                                                                     \
  } while (0)

static void count(int* counter) {
  __atomic_add_fetch(counter, 1, __ATOMIC_SEQ_CST);
}
static int load(const int* counter) {
  return __atomic_load_n(counter, __ATOMIC_SEQ_CST);
}

static int where_handler, broadcast_handler, poke_handler, wake_handler;

/* ---- handlers ---------------------------------------------------------------------------- */

struct where_msg {
  int expected_pe;
  int value;
};
static int where_seen;

/* Runs on the PE it was sent to, with the bytes as they were when sent. */
static void on_where(void* msg) {
  struct where_msg* m = msg;
  EXPECT(CmiMyPe() == m->expected_pe);
  EXPECT(m->value == 1234);
  EXPECT(CthSelf() == NULL);
  EXPECT(CmiGetHandler(msg) == where_handler);
  count(&where_seen);
  CmiFree(msg);
}

static int broadcast_seen[CMI_MAX_PES];

static void on_broadcast(void* msg) {
  count(&broadcast_seen[CmiMyPe()]);
  CmiFree(msg);
}

/* A message that carries a thread to awaken. */
struct thread_msg {
  CthThread thread;
  int* flag;
};

static void on_poke(void* msg) {
  struct thread_msg* m = msg;
  CthAwaken(m->thread);
  __atomic_store_n(m->flag, 1, __ATOMIC_SEQ_CST);
  CmiFree(msg);
}

static void on_wake(void* msg) {
  struct thread_msg* m = msg;
  EXPECT(CmiMyPe() == CmiNumPes() - 1);
  CthAwaken(m->thread);
  CmiFree(msg);
}

/* ---- threads ----------------------------------------------------------------------------- */

static int early_awakenings_done;

/* Asks its own PE to awaken it, waits until that happened, then suspends: the awakening was
 * kept, so the suspension returns at once. */
static void awakened_early(void* arg) {
  (void)arg;
  int poked = 0;
  struct thread_msg* m = CmiAlloc(sizeof *m);
  m->thread = CthSelf();
  m->flag = &poked;
  CmiSetHandler(m, poke_handler);
  CmiSyncSendAndFree(CmiMyPe(), sizeof *m, m);
  while (!__atomic_load_n(&poked, __ATOMIC_SEQ_CST)) CthYield();
  CthSuspend();
  count(&early_awakenings_done);
}

static int cross_pe_done;

/* Suspends until a handler on the last PE awakens it, then checks it is still on its PE. */
static void awakened_remotely(void* arg) {
  const int pe = CmiMyPe();
  EXPECT(pe == (int)(long)arg);
  struct thread_msg* m = CmiAlloc(sizeof *m);
  m->thread = CthSelf();
  m->flag = NULL;
  CmiSetHandler(m, wake_handler);
  CmiSyncSendAndFree(CmiNumPes() - 1, sizeof *m, m);
  CthSuspend();
  EXPECT(CmiMyPe() == pe);
  count(&cross_pe_done);
}

static int big_stack_done;

static void uses_big_stack(void* arg) {
  (void)arg;
  volatile char buffer[256 * 1024];
  memset((char*)buffer, 7, sizeof buffer);
  EXPECT(buffer[sizeof buffer - 1] == 7);
  count(&big_stack_done);
}

static void start(void* arg) {
  (void)arg;
  const int n = CmiNumPes();
  EXPECT(CmiMyPe() == 0);
  EXPECT(CthSelf() != NULL);
  /* Sends: the sender's buffer changes right after CmiSyncSend, the copy does not. */
  for (int pe = 0; pe < n; pe++) {
    struct where_msg* m = CmiAlloc(sizeof *m);
    m->expected_pe = pe;
    m->value = 1234;
    CmiSetHandler(m, where_handler);
    CmiSyncSend(pe, sizeof *m, m);
    m->value = -1;
    CmiFree(m);
    m = CmiAlloc(sizeof *m);
    m->expected_pe = pe;
    m->value = 1234;
    CmiSetHandler(m, where_handler);
    CmiSyncSendAndFree(pe, sizeof *m, m);
  }
  void* b = CmiAlloc(0);
  CmiSetHandler(b, broadcast_handler);
  for (int i = 0; i < 3; i++) CmiSyncBroadcastAll(0, b);
  CmiFree(b);
  /* Threads: one awakened before it suspends, one per PE awakened from the last PE. */
  CthAwaken(CthCreate(awakened_early, NULL, 0));
  CthAwaken(CthCreate(awakened_remotely, (void*)0L, 0));
  CthAwaken(CthCreate(uses_big_stack, NULL, 1 << 20));
}

int main(int argc, char** argv) {
  const int pes = argc > 1 ? atoi(argv[1]) : 2;
  if (pes < 1 || pes > CMI_MAX_PES) {
    fprintf(stderr, "usage: %s [PEs 1..%d]\n", argv[0], CMI_MAX_PES);
    return 2;
  }
  where_handler = CmiRegisterHandler(on_where);
  broadcast_handler = CmiRegisterHandler(on_broadcast);
  poke_handler = CmiRegisterHandler(on_poke);
  wake_handler = CmiRegisterHandler(on_wake);
  EXPECT(CmiRegisterHandler(NULL) == -1);
  for (int run = 0; run < 2; run++) { /* a second run in the same process starts afresh */
    where_seen = early_awakenings_done = cross_pe_done = big_stack_done = 0;
    memset(broadcast_seen, 0, sizeof broadcast_seen);
    EXPECT(ConverseRun(pes, start, NULL) == 0);
    /* Quiescence: everything sent was handled and every thread ended before the run returned. */
    EXPECT(load(&where_seen) == 2 * pes);
    for (int pe = 0; pe < pes; pe++) EXPECT(load(&broadcast_seen[pe]) == 3);
    EXPECT(load(&early_awakenings_done) == 1);
    EXPECT(load(&cross_pe_done) == 1);
    EXPECT(load(&big_stack_done) == 1);
  }
  EXPECT(ConverseRun(0, start, NULL) != 0);
  if (failures) {
    fprintf(stderr, "%d expectations failed\n", failures);
    return 1;
  }
  printf("converse_test: all expectations met on %d PEs\n", pes);
  return 0;
}
