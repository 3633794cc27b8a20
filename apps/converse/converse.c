// SPDX-License-Identifier: Apache-2.0
/* The Converse-style runtime of converse.h on abt.h: PEs are execution streams with a custom
 * scheduler, messages are tasklets, CthThreads are ULTs that suspend on a condition variable. */
#include "converse.h"

#include <abt.h>

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Errors                                                                                      */

/* A failed abt.h call inside the runtime is a bug or exhaustion the caller cannot handle: report
 * it and stop, as Converse's CmiAbort does. */
static void check(int rc, const char* what) {
  if (rc == ABT_SUCCESS) return;
  char name[64] = "?";
  size_t len = 0;
  ABT_error_get_str(rc, name, &len);
  fprintf(stderr, "converse: %s failed: %s (%d)\n", what, name, rc);
  abort();
}

/* ------------------------------------------------------------------------------------------ */
/* State of a run                                                                              */

/* One PE: its stream, and the two pools its scheduler serves (messages before threads). */
struct pe {
  ABT_xstream xstream;
  ABT_pool messages;
  ABT_pool threads;
};

static CmiHandler handlers[CMI_MAX_HANDLERS];
static int num_handlers;
static struct pe pes[CMI_MAX_PES];
static int num_pes;
static ABT_key self_key;       /* the CthThread of the calling ULT (NULL in handlers) */
static ABT_eventual quiescent; /* set when `outstanding` drops to zero */
/* Messages sent but not yet handled, plus threads created but not yet ended. It only rises
 * inside work it counts (a handler or thread sends before it ends), so once it is zero nothing
 * can raise it again: that is quiescence. */
static int outstanding;

static void work_begin(void) {
  __atomic_add_fetch(&outstanding, 1, __ATOMIC_SEQ_CST);
}

static void work_end(void) {
  if (__atomic_sub_fetch(&outstanding, 1, __ATOMIC_SEQ_CST) == 0) {
    check(ABT_eventual_set(quiescent, NULL, 0), "ABT_eventual_set");
  }
}

/* ------------------------------------------------------------------------------------------ */
/* The per-PE scheduler                                                                        */

/* Converse's scheduler loop as an ABT_sched_def: messages first (Converse drains arrivals
 * before resuming threads), then threads, then any pool the runtime added (a stream whose
 * scheduler is replaced may hand its old pools to the new one); the stream's events and stop
 * requests every 64 units and whenever it is idle. Idle, it gives the CPU away rather than
 * spin, since PEs may share cores. */
static void pe_scheduler_run(ABT_sched sched) {
  for (unsigned n = 1;; n++) {
    /* Asked again each round: the pool list may grow while the scheduler runs. */
    ABT_pool pools[8];
    int num_pools = 0;
    check(ABT_sched_get_num_pools(sched, &num_pools), "ABT_sched_get_num_pools");
    if (num_pools > 8) num_pools = 8;
    check(ABT_sched_get_pools(sched, num_pools, 0, pools), "ABT_sched_get_pools");
    ABT_thread unit = ABT_THREAD_NULL;
    for (int i = 0; i < num_pools && unit == ABT_THREAD_NULL; i++) {
      check(ABT_pool_pop_thread(pools[i], &unit), "ABT_pool_pop_thread");
    }
    if (unit != ABT_THREAD_NULL) check(ABT_self_schedule(unit, ABT_POOL_NULL), "ABT_self_schedule");
    if (unit == ABT_THREAD_NULL || n % 64 == 0) {
      ABT_bool stop = ABT_FALSE;
      /* weft's ABT_finalize reports ABT_ERR_UNINITIALIZED here while it stops the primary
       * stream's scheduler: that too means stop. */
      int rc = ABT_xstream_check_events(sched);
      if (rc == ABT_ERR_UNINITIALIZED) break;
      check(rc, "ABT_xstream_check_events");
      rc = ABT_sched_has_to_stop(sched, &stop);
      if (rc == ABT_ERR_UNINITIALIZED) break;
      check(rc, "ABT_sched_has_to_stop");
      if (stop) break;
      if (unit == ABT_THREAD_NULL) sched_yield();
    }
  }
}

static ABT_sched_def pe_scheduler = {ABT_SCHED_TYPE_ULT, NULL, pe_scheduler_run, NULL, NULL};

/* A scheduler for PE `pe` over its pools (and `extra`, unless ABT_POOL_NULL), freed with its
 * stream. */
static ABT_sched make_scheduler(int pe, ABT_pool extra) {
  check(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPSC, ABT_TRUE, &pes[pe].messages),
        "ABT_pool_create_basic");
  check(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPSC, ABT_TRUE, &pes[pe].threads),
        "ABT_pool_create_basic");
  ABT_sched_config config;
  check(ABT_sched_config_create(&config, ABT_sched_config_automatic, 1, ABT_sched_config_var_end),
        "ABT_sched_config_create");
  ABT_pool pools[3] = {pes[pe].messages, pes[pe].threads, extra};
  ABT_sched sched;
  check(ABT_sched_create(&pe_scheduler, extra == ABT_POOL_NULL ? 2 : 3, pools, config, &sched),
        "ABT_sched_create");
  check(ABT_sched_config_free(&config), "ABT_sched_config_free");
  return sched;
}

/* ------------------------------------------------------------------------------------------ */
/* Messages                                                                                    */

/* The header in front of every message; the union keeps the payload aligned for any type. */
typedef union {
  struct {
    int handler;
    size_t size;
  } h;
  long double align;
} cmi_header;

static cmi_header* header_of(const void* msg) {
  return (cmi_header*)msg - 1;
}

void* CmiAlloc(size_t size) {
  cmi_header* header = malloc(sizeof(cmi_header) + size);
  if (!header) {
    fprintf(stderr, "converse: out of memory for a message of %zu bytes\n", size);
    abort();
  }
  header->h.handler = -1;
  header->h.size = size;
  return header + 1;
}

void CmiFree(void* msg) {
  if (msg) free(header_of(msg));
}

void CmiSetHandler(void* msg, int handler) {
  header_of(msg)->h.handler = handler;
}

int CmiGetHandler(const void* msg) {
  return header_of(msg)->h.handler;
}

int CmiRegisterHandler(CmiHandler handler) {
  if (num_handlers == CMI_MAX_HANDLERS || !handler) return -1;
  handlers[num_handlers] = handler;
  return num_handlers++;
}

/* The tasklet body of a message: run its handler, which now owns it. */
static void deliver(void* msg) {
  const int handler = CmiGetHandler(msg);
  if (handler < 0 || handler >= num_handlers) {
    fprintf(stderr, "converse: message with unregistered handler %d\n", handler);
    abort();
  }
  handlers[handler](msg);
  work_end();
}

void CmiSyncSendAndFree(int pe, size_t size, void* msg) {
  if (pe < 0 || pe >= num_pes) {
    fprintf(stderr, "converse: send to PE %d of %d\n", pe, num_pes);
    abort();
  }
  (void)size; /* the header knows the size; Converse's signature carries it anyway */
  work_begin();
  /* Unnamed: the runtime frees the tasklet when it ends. */
  check(ABT_task_create(pes[pe].messages, deliver, msg, NULL), "ABT_task_create");
}

void CmiSyncSend(int pe, size_t size, const void* msg) {
  void* copy = CmiAlloc(size);
  memcpy(copy, msg, size);
  CmiSetHandler(copy, CmiGetHandler(msg));
  CmiSyncSendAndFree(pe, size, copy);
}

void CmiSyncBroadcastAll(size_t size, const void* msg) {
  for (int pe = 0; pe < num_pes; pe++) CmiSyncSend(pe, size, msg);
}

int CmiMyPe(void) {
  int rank = -1;
  return ABT_self_get_xstream_rank(&rank) == ABT_SUCCESS ? rank : -1;
}

int CmiNumPes(void) {
  return num_pes;
}

/* ------------------------------------------------------------------------------------------ */
/* Threads                                                                                     */

/* A CthThread: a ULT started at its first awakening, with a one-token suspend/awaken protocol
 * under a mutex and condition variable (as Charm++ on Argobots does it). */
struct CthThreadStruct {
  CthVoidFn fn;
  void* arg;
  size_t stacksize;
  int pe;
  ABT_mutex mutex;
  ABT_cond cond;
  int started;  /* under mutex */
  int awakened; /* under mutex: an awakening not yet consumed by CthSuspend */
};

static void thread_main(void* arg) {
  CthThread self = arg;
  check(ABT_key_set(self_key, self), "ABT_key_set");
  self->fn(self->arg);
  check(ABT_cond_free(&self->cond), "ABT_cond_free");
  check(ABT_mutex_free(&self->mutex), "ABT_mutex_free");
  free(self);
  work_end();
}

CthThread CthCreate(CthVoidFn fn, void* arg, size_t stacksize) {
  CthThread t = calloc(1, sizeof *t);
  if (!t) {
    fprintf(stderr, "converse: out of memory for a thread\n");
    abort();
  }
  t->fn = fn;
  t->arg = arg;
  t->stacksize = stacksize;
  t->pe = CmiMyPe();
  check(ABT_mutex_create(&t->mutex), "ABT_mutex_create");
  check(ABT_cond_create(&t->cond), "ABT_cond_create");
  work_begin();
  return t;
}

void CthAwaken(CthThread t) {
  /* The spinning lock form: CthAwaken is called from handlers, which are tasklets. */
  check(ABT_mutex_spinlock(t->mutex), "ABT_mutex_spinlock");
  if (!t->started) {
    t->started = 1;
    check(ABT_mutex_unlock(t->mutex), "ABT_mutex_unlock");
    ABT_thread_attr attr = ABT_THREAD_ATTR_NULL;
    if (t->stacksize) {
      check(ABT_thread_attr_create(&attr), "ABT_thread_attr_create");
      check(ABT_thread_attr_set_stacksize(attr, t->stacksize), "ABT_thread_attr_set_stacksize");
    }
    check(ABT_thread_create(pes[t->pe].threads, thread_main, t, attr, NULL), "ABT_thread_create");
    if (attr != ABT_THREAD_ATTR_NULL) check(ABT_thread_attr_free(&attr), "ABT_thread_attr_free");
    return;
  }
  t->awakened = 1;
  check(ABT_cond_signal(t->cond), "ABT_cond_signal");
  check(ABT_mutex_unlock(t->mutex), "ABT_mutex_unlock");
}

void CthSuspend(void) {
  CthThread self = CthSelf();
  if (!self) {
    fprintf(stderr, "converse: CthSuspend outside a thread\n");
    abort();
  }
  check(ABT_mutex_lock(self->mutex), "ABT_mutex_lock");
  while (!self->awakened) check(ABT_cond_wait(self->cond, self->mutex), "ABT_cond_wait");
  self->awakened = 0;
  check(ABT_mutex_unlock(self->mutex), "ABT_mutex_unlock");
}

void CthYield(void) {
  check(ABT_thread_yield(), "ABT_thread_yield");
}

CthThread CthSelf(void) {
  void* value = NULL;
  /* A ULT's key value follows the ULT: unlike a thread_local, it stays right after a switch. */
  return ABT_key_get(self_key, &value) == ABT_SUCCESS ? value : NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* A run                                                                                       */

int ConverseRun(int n, CthVoidFn start, void* arg) {
  if (n < 1 || n > CMI_MAX_PES || !start) return ABT_ERR_INV_ARG;
  int rc = ABT_init(0, NULL);
  if (rc != ABT_SUCCESS) return rc;
  num_pes = n;
  outstanding = 0;
  check(ABT_key_create(NULL, &self_key), "ABT_key_create");
  check(ABT_eventual_create(0, &quiescent), "ABT_eventual_create");
  /* PE 0 is the primary stream, rescheduled onto Converse's scheduler; PE i is rank i. */
  check(ABT_xstream_self(&pes[0].xstream), "ABT_xstream_self");
  /* The primary ULT (this code) keeps the pool it is in; PE 0's scheduler serves that pool too,
   * so the primary ULT runs again when the quiescence wait below ends. */
  ABT_pool primary_pool;
  check(ABT_self_get_last_pool(&primary_pool), "ABT_self_get_last_pool");
  check(ABT_xstream_set_main_sched(pes[0].xstream, make_scheduler(0, primary_pool)),
        "ABT_xstream_set_main_sched");
  for (int pe = 1; pe < n; pe++) {
    check(ABT_xstream_create_with_rank(make_scheduler(pe, ABT_POOL_NULL), pe, &pes[pe].xstream),
          "ABT_xstream_create_with_rank");
  }
  CthAwaken(CthCreate(start, arg, 0));
  /* The primary ULT blocks here; PE 0's scheduler runs the work meanwhile. */
  check(ABT_eventual_wait(quiescent, NULL), "ABT_eventual_wait");
  for (int pe = 1; pe < n; pe++) check(ABT_xstream_free(&pes[pe].xstream), "ABT_xstream_free");
  check(ABT_eventual_free(&quiescent), "ABT_eventual_free");
  check(ABT_key_free(&self_key), "ABT_key_free");
  num_pes = 0;
  return ABT_finalize();
}
