// SPDX-License-Identifier: Apache-2.0
/* Synchronisation between work units: ABT_mutex_* (plain, recursive, priority lock and unlock
 * forms, spinlock, static initialisers), ABT_cond_*, ABT_rwlock_*, ABT_eventual_*,
 * ABT_future_* and ABT_barrier_*, used by ULTs on every stream, tasklets where Argobots allows
 * it, and external threads; plus the errors for invalid handles and misuse. */
#include "abt_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Starts `count` ULTs of `fn(arg)` spread over the test streams and frees them all. */
static void run_ults(int count, void (*fn)(void*), void* arg) {
  ABT_thread* threads = malloc(sizeof(ABT_thread) * (size_t)count);
  CHECK(threads != NULL);
  for (int i = 0; i < count; i++) {
    OK(ABT_thread_create(abt_test_pools[i % abt_test_num_xstreams], fn, arg, ABT_THREAD_ATTR_NULL,
                         &threads[i]));
  }
  OK(ABT_thread_free_many(count, threads));
  free(threads);
}

/* ------------------------------------------------------------------------------------------ */
/* Mutexes                                                                                     */

/* A counter guarded by a mutex, bumped with every lock and unlock form in turn. */
struct guarded {
  ABT_mutex mutex;
  int rounds;
  long value; /* plain: the mutex is what keeps it exact */
  int turn;
};

static void bump_with_every_form(void* arg) {
  struct guarded* g = arg;
  const int form = abt_test_add(&g->turn, 1);
  for (int i = 0; i < g->rounds; i++) {
    switch ((form + i) % 4) {
      case 0:
        OK(ABT_mutex_lock(g->mutex));
        break;
      case 1:
        OK(ABT_mutex_lock_high(g->mutex));
        break;
      case 2:
        OK(ABT_mutex_lock_low(g->mutex));
        break;
      default:
        while (ABT_mutex_trylock(g->mutex) != ABT_SUCCESS) OK(ABT_thread_yield());
        break;
    }
    const long seen = g->value;
    if (i % 7 == 0) OK(ABT_thread_yield()); /* hold the lock across a switch now and then */
    g->value = seen + 1;
    switch ((form + i) % 3) {
      case 0:
        OK(ABT_mutex_unlock(g->mutex));
        break;
      case 1:
        OK(ABT_mutex_unlock_se(g->mutex));
        break;
      default:
        OK(ABT_mutex_unlock_de(g->mutex));
        break;
    }
  }
}

static void bump_with_spinlock_task(void* arg) {
  struct guarded* g = arg;
  OK(ABT_mutex_spinlock(g->mutex));
  g->value++;
  OK(ABT_mutex_unlock(g->mutex));
}

static void test_mutex(void) {
  abt_test_start();
  struct guarded g = {ABT_MUTEX_NULL, abt_test_scaled(200), 0, 0};
  OK(ABT_mutex_create(&g.mutex));
  const int ults = 4 * abt_test_num_xstreams;
  run_ults(ults, bump_with_every_form, &g);
  CHECK(g.value == (long)ults * g.rounds);
  /* Tasklets may take a mutex with the spinning form. */
  const int tasks = abt_test_scaled(100);
  ABT_task* handles = malloc(sizeof(ABT_task) * (size_t)tasks);
  CHECK(handles != NULL);
  for (int i = 0; i < tasks; i++) {
    OK(ABT_task_create(abt_test_pools[i % abt_test_num_xstreams], bump_with_spinlock_task, &g,
                       &handles[i]));
  }
  for (int i = 0; i < tasks; i++) OK(ABT_task_free(&handles[i]));
  free(handles);
  CHECK(g.value == (long)ults * g.rounds + tasks);

  /* A held plain mutex cannot be taken again, even by its holder. */
  OK(ABT_mutex_lock(g.mutex));
  CHECK_RET(ABT_mutex_trylock(g.mutex), ABT_ERR_MUTEX_LOCKED);
  OK(ABT_mutex_unlock(g.mutex));
  OK(ABT_mutex_trylock(g.mutex));
  OK(ABT_mutex_unlock(g.mutex));

  ABT_mutex other;
  ABT_bool equal = ABT_FALSE;
  OK(ABT_mutex_create(&other));
  OK(ABT_mutex_equal(g.mutex, g.mutex, &equal));
  CHECK(equal == ABT_TRUE);
  OK(ABT_mutex_equal(g.mutex, other, &equal));
  CHECK(equal == ABT_FALSE);
  ABT_mutex_attr attr;
  ABT_bool recursive = ABT_TRUE;
  OK(ABT_mutex_get_attr(other, &attr));
  OK(ABT_mutex_attr_get_recursive(attr, &recursive));
  CHECK(recursive == ABT_FALSE);
  OK(ABT_mutex_attr_free(&attr));
  OK(ABT_mutex_free(&other));
  OK(ABT_mutex_free(&g.mutex));
  CHECK(g.mutex == ABT_MUTEX_NULL);
  CHECK_RET(ABT_mutex_lock(ABT_MUTEX_NULL), ABT_ERR_INV_MUTEX);
  CHECK_RET(ABT_mutex_unlock(ABT_MUTEX_NULL), ABT_ERR_INV_MUTEX);
  CHECK_RET(ABT_mutex_trylock(ABT_MUTEX_NULL), ABT_ERR_INV_MUTEX);
  CHECK_RET(ABT_mutex_free(&g.mutex), ABT_ERR_INV_MUTEX);
  CHECK_RET(ABT_mutex_attr_free(&attr), ABT_ERR_INV_MUTEX_ATTR);
  abt_test_stop();
}

/* Takes a recursive mutex three deep around each increment. */
static void bump_recursively(void* arg) {
  struct guarded* g = arg;
  for (int i = 0; i < g->rounds; i++) {
    OK(ABT_mutex_lock(g->mutex));
    OK(ABT_mutex_lock(g->mutex));
    OK(ABT_mutex_trylock(g->mutex));
    const long seen = g->value;
    if (i % 5 == 0) OK(ABT_thread_yield());
    g->value = seen + 1;
    OK(ABT_mutex_unlock(g->mutex));
    OK(ABT_mutex_unlock(g->mutex));
    OK(ABT_mutex_unlock(g->mutex));
  }
}

static ABT_mutex_memory static_mutex = ABT_MUTEX_INITIALIZER;
static ABT_mutex_memory static_recursive_mutex = ABT_RECURSIVE_MUTEX_INITIALIZER;

static void bump_plain(void* arg) {
  struct guarded* g = arg;
  for (int i = 0; i < g->rounds; i++) {
    OK(ABT_mutex_lock(g->mutex));
    const long seen = g->value;
    if (i % 5 == 0) OK(ABT_thread_yield());
    g->value = seen + 1;
    OK(ABT_mutex_unlock(g->mutex));
  }
}

static void test_mutex_recursive_and_static(void) {
  abt_test_start();
  ABT_mutex_attr attr;
  ABT_bool recursive = ABT_FALSE;
  OK(ABT_mutex_attr_create(&attr));
  OK(ABT_mutex_attr_set_recursive(attr, ABT_TRUE));
  OK(ABT_mutex_attr_get_recursive(attr, &recursive));
  CHECK(recursive == ABT_TRUE);
  struct guarded g = {ABT_MUTEX_NULL, abt_test_scaled(100), 0, 0};
  OK(ABT_mutex_create_with_attr(attr, &g.mutex));
  OK(ABT_mutex_attr_free(&attr));
  CHECK(attr == ABT_MUTEX_ATTR_NULL);
  const int ults = 3 * abt_test_num_xstreams;
  run_ults(ults, bump_recursively, &g);
  CHECK(g.value == (long)ults * g.rounds);
  OK(ABT_mutex_get_attr(g.mutex, &attr));
  OK(ABT_mutex_attr_get_recursive(attr, &recursive));
  CHECK(recursive == ABT_TRUE);
  OK(ABT_mutex_attr_free(&attr));
  OK(ABT_mutex_free(&g.mutex));

  /* Statically initialised mutexes need no create and no free. */
  struct guarded s = {ABT_MUTEX_MEMORY_GET_HANDLE(&static_mutex), abt_test_scaled(100), 0, 0};
  run_ults(ults, bump_plain, &s);
  CHECK(s.value == (long)ults * s.rounds);
  OK(ABT_mutex_lock(s.mutex));
  CHECK_RET(ABT_mutex_trylock(s.mutex), ABT_ERR_MUTEX_LOCKED);
  OK(ABT_mutex_unlock(s.mutex));
  struct guarded r = {ABT_MUTEX_MEMORY_GET_HANDLE(&static_recursive_mutex), abt_test_scaled(100), 0,
                      0};
  run_ults(ults, bump_recursively, &r);
  CHECK(r.value == (long)ults * r.rounds);
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* Condition variables                                                                         */

/* A bounded queue of ints between producers and consumers. */
struct queue {
  ABT_mutex mutex;
  ABT_cond not_empty, not_full;
  int items[8];
  int head, size;
  int per_producer;
  long consumed_sum;
  int consumed;
  int total;
};

static void produce(void* arg) {
  struct queue* q = arg;
  for (int i = 1; i <= q->per_producer; i++) {
    OK(ABT_mutex_lock(q->mutex));
    while (q->size == 8) OK(ABT_cond_wait(q->not_full, q->mutex));
    q->items[(q->head + q->size) % 8] = i;
    q->size++;
    OK(ABT_cond_signal(q->not_empty));
    OK(ABT_mutex_unlock(q->mutex));
  }
}

static void consume(void* arg) {
  struct queue* q = arg;
  for (;;) {
    OK(ABT_mutex_lock(q->mutex));
    while (q->size == 0 && q->consumed < q->total) OK(ABT_cond_wait(q->not_empty, q->mutex));
    if (q->consumed == q->total) {
      OK(ABT_cond_broadcast(q->not_empty)); /* let the other consumers see the end */
      OK(ABT_mutex_unlock(q->mutex));
      return;
    }
    q->consumed_sum += q->items[q->head];
    q->head = (q->head + 1) % 8;
    q->size--;
    q->consumed++;
    if (q->consumed == q->total) OK(ABT_cond_broadcast(q->not_empty));
    OK(ABT_cond_signal(q->not_full));
    OK(ABT_mutex_unlock(q->mutex));
  }
}

/* Waits on a flag under a static mutex and condition variable. */
static ABT_mutex_memory gate_mutex = ABT_MUTEX_INITIALIZER;
static ABT_cond_memory gate_cond = ABT_COND_INITIALIZER;
static int gate_open, gate_waiting, gate_passed;

static void wait_at_gate(void* arg) {
  (void)arg;
  ABT_mutex mutex = ABT_MUTEX_MEMORY_GET_HANDLE(&gate_mutex);
  ABT_cond cond = ABT_COND_MEMORY_GET_HANDLE(&gate_cond);
  OK(ABT_mutex_lock(mutex));
  gate_waiting++;
  while (!gate_open) OK(ABT_cond_wait(cond, mutex));
  gate_passed++;
  OK(ABT_mutex_unlock(mutex));
}

static void* external_gate_waiter(void* arg) {
  wait_at_gate(arg);
  return NULL;
}

static void test_cond(void) {
  abt_test_start();
  struct queue q;
  memset(&q, 0, sizeof q);
  OK(ABT_mutex_create(&q.mutex));
  OK(ABT_cond_create(&q.not_empty));
  OK(ABT_cond_create(&q.not_full));
  const int producers = 2 * abt_test_num_xstreams, consumers = 2 * abt_test_num_xstreams;
  q.per_producer = abt_test_scaled(300);
  q.total = producers * q.per_producer;
  ABT_thread* threads = malloc(sizeof(ABT_thread) * (size_t)(producers + consumers));
  CHECK(threads != NULL);
  for (int i = 0; i < producers + consumers; i++) {
    OK(ABT_thread_create(abt_test_pools[i % abt_test_num_xstreams], i % 2 ? produce : consume, &q,
                         ABT_THREAD_ATTR_NULL, &threads[i]));
  }
  OK(ABT_thread_free_many(producers + consumers, threads));
  free(threads);
  CHECK(q.consumed == q.total);
  CHECK(q.consumed_sum == (long)producers * q.per_producer * (q.per_producer + 1) / 2);

  /* Broadcast wakes every waiter, ULTs and an external thread alike. */
  const int waiters = 3 * abt_test_num_xstreams;
  ABT_thread gate_threads[64];
  for (int i = 0; i < waiters; i++) {
    OK(ABT_thread_create(abt_test_pools[i % abt_test_num_xstreams], wait_at_gate, NULL,
                         ABT_THREAD_ATTR_NULL, &gate_threads[i]));
  }
  pthread_t external;
  CHECK(pthread_create(&external, NULL, external_gate_waiter, NULL) == 0);
  ABT_mutex mutex = ABT_MUTEX_MEMORY_GET_HANDLE(&gate_mutex);
  ABT_cond cond = ABT_COND_MEMORY_GET_HANDLE(&gate_cond);
  for (;;) {
    OK(ABT_mutex_lock(mutex));
    const int waiting = gate_waiting;
    OK(ABT_mutex_unlock(mutex));
    if (waiting == waiters + 1) break;
    OK(ABT_thread_yield());
  }
  OK(ABT_mutex_lock(mutex));
  gate_open = 1;
  OK(ABT_cond_broadcast(cond));
  OK(ABT_mutex_unlock(mutex));
  OK(ABT_thread_free_many(waiters, gate_threads));
  CHECK(pthread_join(external, NULL) == 0);
  CHECK(gate_passed == waiters + 1);

  /* A timed wait nobody signals times out. */
  struct timespec deadline;
  CHECK(clock_gettime(CLOCK_REALTIME, &deadline) == 0);
  deadline.tv_nsec += 20 * 1000 * 1000;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  OK(ABT_mutex_lock(q.mutex));
  CHECK_RET(ABT_cond_timedwait(q.not_empty, q.mutex, &deadline), ABT_ERR_COND_TIMEDOUT);
  /* The mutex is held again after the timeout. */
  CHECK_RET(ABT_mutex_trylock(q.mutex), ABT_ERR_MUTEX_LOCKED);
  OK(ABT_mutex_unlock(q.mutex));
  /* Signalling a condition nobody waits on is harmless. */
  OK(ABT_cond_signal(q.not_empty));
  OK(ABT_cond_broadcast(q.not_empty));

  OK(ABT_cond_free(&q.not_empty));
  OK(ABT_cond_free(&q.not_full));
  CHECK(q.not_empty == ABT_COND_NULL);
  OK(ABT_mutex_free(&q.mutex));
  CHECK_RET(ABT_cond_signal(ABT_COND_NULL), ABT_ERR_INV_COND);
  CHECK_RET(ABT_cond_free(&q.not_full), ABT_ERR_INV_COND);
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* Readers-writer locks                                                                        */

/* Two counters a writer moves together; readers must never see them apart. */
struct pair {
  ABT_rwlock lock;
  long a, b;
  int rounds;
  int torn;
  int turn;
};

static void read_or_write(void* arg) {
  struct pair* p = arg;
  const int writer = abt_test_add(&p->turn, 1) % 3 == 0;
  for (int i = 0; i < p->rounds; i++) {
    if (writer) {
      OK(ABT_rwlock_wrlock(p->lock));
      p->a++;
      if (i % 4 == 0) OK(ABT_thread_yield());
      p->b++;
    } else {
      OK(ABT_rwlock_rdlock(p->lock));
      const long a = p->a;
      if (i % 4 == 0) OK(ABT_thread_yield());
      if (a != p->b) abt_test_add(&p->torn, 1);
    }
    OK(ABT_rwlock_unlock(p->lock));
  }
}

static void test_rwlock(void) {
  abt_test_start();
  struct pair p = {ABT_RWLOCK_NULL, 0, 0, abt_test_scaled(200), 0, 0};
  OK(ABT_rwlock_create(&p.lock));
  const int ults = 6 * abt_test_num_xstreams; /* a third of them write */
  run_ults(ults, read_or_write, &p);
  CHECK(p.torn == 0);
  CHECK(p.a == (long)(ults / 3) * p.rounds);
  CHECK(p.b == p.a);
  /* Several read locks at once. */
  OK(ABT_rwlock_rdlock(p.lock));
  OK(ABT_rwlock_rdlock(p.lock));
  OK(ABT_rwlock_unlock(p.lock));
  OK(ABT_rwlock_unlock(p.lock));
  OK(ABT_rwlock_free(&p.lock));
  CHECK(p.lock == ABT_RWLOCK_NULL);
  CHECK_RET(ABT_rwlock_rdlock(ABT_RWLOCK_NULL), ABT_ERR_INV_RWLOCK);
  CHECK_RET(ABT_rwlock_free(&p.lock), ABT_ERR_INV_RWLOCK);
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* Eventuals and futures                                                                       */

struct eventual_run {
  ABT_eventual eventual;
  int wrong;
};

static void wait_for_value(void* arg) {
  struct eventual_run* r = arg;
  void* value = NULL;
  OK(ABT_eventual_wait(r->eventual, &value));
  if (value == NULL || *(int*)value != 42) abt_test_add(&r->wrong, 1);
}

static void set_value(void* arg) {
  struct eventual_run* r = arg;
  int v = 42;
  OK(ABT_eventual_set(r->eventual, &v, sizeof v));
}

static void* external_eventual_waiter(void* arg) {
  wait_for_value(arg);
  return NULL;
}

static ABT_eventual_memory static_eventual = ABT_EVENTUAL_INITIALIZER;

static void signal_static_eventual(void* arg) {
  (void)arg;
  OK(ABT_eventual_set(ABT_EVENTUAL_MEMORY_GET_HANDLE(&static_eventual), NULL, 0));
}

static void test_eventual(void) {
  abt_test_start();
  struct eventual_run r = {ABT_EVENTUAL_NULL, 0};
  OK(ABT_eventual_create(sizeof(int), &r.eventual));
  ABT_bool ready = ABT_TRUE;
  void* value = &ready;
  OK(ABT_eventual_test(r.eventual, &value, &ready));
  CHECK(ready == ABT_FALSE);
  for (int round = 0; round < 2; round++) {
    const int waiters = 3 * abt_test_num_xstreams;
    ABT_thread threads[64];
    for (int i = 0; i < waiters; i++) {
      OK(ABT_thread_create(abt_test_pools[i % abt_test_num_xstreams], wait_for_value, &r,
                           ABT_THREAD_ATTR_NULL, &threads[i]));
    }
    pthread_t external;
    CHECK(pthread_create(&external, NULL, external_eventual_waiter, &r) == 0);
    /* The value comes from a tasklet on the last stream. */
    ABT_task setter;
    OK(ABT_task_create(abt_test_pools[abt_test_num_xstreams - 1], set_value, &r, &setter));
    OK(ABT_thread_free_many(waiters, threads));
    CHECK(pthread_join(external, NULL) == 0);
    OK(ABT_task_free(&setter));
    CHECK(r.wrong == 0);
    OK(ABT_eventual_test(r.eventual, &value, &ready));
    CHECK(ready == ABT_TRUE);
    CHECK(*(int*)value == 42);
    /* A second set before a reset is an error. */
    int again = 1;
    CHECK_RET(ABT_eventual_set(r.eventual, &again, sizeof again), ABT_ERR_EVENTUAL);
    OK(ABT_eventual_reset(r.eventual));
    OK(ABT_eventual_test(r.eventual, &value, &ready));
    CHECK(ready == ABT_FALSE);
  }
  /* A value larger than the eventual's size is refused (Argobots 1.x: ABT_ERR_INV_EVENTUAL). */
  long long big = 1;
  CHECK_RET(ABT_eventual_set(r.eventual, &big, (int)sizeof big + 4), ABT_ERR_INV_EVENTUAL);
  OK(ABT_eventual_free(&r.eventual));
  CHECK(r.eventual == ABT_EVENTUAL_NULL);

  /* Eventuals without a value, and the static one. */
  ABT_eventual empty;
  OK(ABT_eventual_create(0, &empty));
  OK(ABT_eventual_set(empty, NULL, 0));
  OK(ABT_eventual_wait(empty, NULL));
  OK(ABT_eventual_free(&empty));
  ABT_eventual st = ABT_EVENTUAL_MEMORY_GET_HANDLE(&static_eventual);
  ABT_task setter;
  OK(ABT_task_create(abt_test_pools[abt_test_num_xstreams - 1], signal_static_eventual, NULL,
                     &setter));
  OK(ABT_eventual_wait(st, NULL));
  OK(ABT_task_free(&setter));
  OK(ABT_eventual_reset(st));

  CHECK_RET(ABT_eventual_wait(ABT_EVENTUAL_NULL, &value), ABT_ERR_INV_EVENTUAL);
  CHECK_RET(ABT_eventual_set(ABT_EVENTUAL_NULL, NULL, 0), ABT_ERR_INV_EVENTUAL);
  CHECK_RET(ABT_eventual_free(&r.eventual), ABT_ERR_INV_EVENTUAL);
  CHECK_RET(ABT_eventual_create(-1, &empty), ABT_ERR_INV_ARG);
  abt_test_stop();
}

/* The values the future's callback saw. */
static int future_callbacks;
static long future_callback_sum;
static int future_slots;

static void on_future_ready(void** values) {
  long sum = 0;
  for (int i = 0; i < future_slots; i++) sum += *(int*)values[i];
  future_callback_sum = sum;
  abt_test_add(&future_callbacks, 1);
}

struct future_run {
  ABT_future future;
  int values[64];
  int next;
};

static void contribute(void* arg) {
  struct future_run* r = arg;
  const int i = abt_test_add(&r->next, 1) - 1;
  r->values[i] = i + 1;
  OK(ABT_future_set(r->future, &r->values[i]));
}

static void wait_future(void* arg) {
  struct future_run* r = arg;
  OK(ABT_future_wait(r->future));
}

static void test_future(void) {
  abt_test_start();
  struct future_run r;
  memset(&r, 0, sizeof r);
  future_slots = 4 * abt_test_num_xstreams;
  OK(ABT_future_create((uint32_t)future_slots, on_future_ready, &r.future));
  ABT_bool ready = ABT_TRUE;
  OK(ABT_future_test(r.future, &ready));
  CHECK(ready == ABT_FALSE);
  ABT_thread waiters[16];
  for (int i = 0; i < abt_test_num_xstreams; i++) {
    OK(ABT_thread_create(abt_test_pools[i], wait_future, &r, ABT_THREAD_ATTR_NULL, &waiters[i]));
  }
  /* Contributions come from ULTs and tasklets on every stream. */
  ABT_thread setters[64];
  for (int i = 0; i < future_slots; i++) {
    if (i % 2) {
      OK(ABT_thread_create(abt_test_pools[i % abt_test_num_xstreams], contribute, &r,
                           ABT_THREAD_ATTR_NULL, &setters[i]));
    } else {
      OK(ABT_task_create(abt_test_pools[i % abt_test_num_xstreams], contribute, &r, &setters[i]));
    }
  }
  OK(ABT_future_wait(r.future));
  OK(ABT_thread_free_many(abt_test_num_xstreams, waiters));
  OK(ABT_thread_free_many(future_slots, setters));
  OK(ABT_future_test(r.future, &ready));
  CHECK(ready == ABT_TRUE);
  CHECK(future_callbacks == 1);
  CHECK(future_callback_sum == (long)future_slots * (future_slots + 1) / 2);
  /* Full: one more value is an error until a reset. */
  int extra = 0;
  CHECK_RET(ABT_future_set(r.future, &extra), ABT_ERR_FUTURE);
  OK(ABT_future_reset(r.future));
  OK(ABT_future_test(r.future, &ready));
  CHECK(ready == ABT_FALSE);
  r.next = 0;
  run_ults(future_slots, contribute, &r);
  OK(ABT_future_wait(r.future));
  CHECK(future_callbacks == 2);
  OK(ABT_future_free(&r.future));
  CHECK(r.future == ABT_FUTURE_NULL);

  /* A future without callback. */
  ABT_future plain;
  int one = 1;
  OK(ABT_future_create(1, NULL, &plain));
  OK(ABT_future_set(plain, &one));
  OK(ABT_future_wait(plain));
  OK(ABT_future_free(&plain));
  CHECK_RET(ABT_future_wait(ABT_FUTURE_NULL), ABT_ERR_INV_FUTURE);
  CHECK_RET(ABT_future_set(ABT_FUTURE_NULL, &one), ABT_ERR_INV_FUTURE);
  CHECK_RET(ABT_future_free(&plain), ABT_ERR_INV_FUTURE);
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* Barriers                                                                                    */

struct barrier_run {
  ABT_barrier barrier;
  int parties;
  int rounds;
  int arrived;
  int early;
};

static void barrier_rounds(void* arg) {
  struct barrier_run* r = arg;
  for (int i = 0; i < r->rounds; i++) {
    abt_test_add(&r->arrived, 1);
    OK(ABT_barrier_wait(r->barrier));
    if (abt_test_load(&r->arrived) < (i + 1) * r->parties) abt_test_add(&r->early, 1);
    OK(ABT_barrier_wait(r->barrier));
  }
}

static void test_barrier(void) {
  abt_test_start();
  struct barrier_run r = {ABT_BARRIER_NULL, 3 * abt_test_num_xstreams, abt_test_scaled(100), 0, 0};
  OK(ABT_barrier_create((uint32_t)r.parties, &r.barrier));
  uint32_t num = 0;
  OK(ABT_barrier_get_num_waiters(r.barrier, &num));
  CHECK(num == (uint32_t)r.parties);
  run_ults(r.parties, barrier_rounds, &r);
  CHECK(r.early == 0);
  CHECK(r.arrived == r.parties * r.rounds);
  /* Reinitialised for a different number of parties. */
  r.parties = 2 * abt_test_num_xstreams;
  r.arrived = 0;
  OK(ABT_barrier_reinit(r.barrier, (uint32_t)r.parties));
  OK(ABT_barrier_get_num_waiters(r.barrier, &num));
  CHECK(num == (uint32_t)r.parties);
  run_ults(r.parties, barrier_rounds, &r);
  CHECK(r.early == 0);
  CHECK(r.arrived == r.parties * r.rounds);
  /* A barrier of one never waits. */
  OK(ABT_barrier_reinit(r.barrier, 1));
  OK(ABT_barrier_wait(r.barrier));
  OK(ABT_barrier_free(&r.barrier));
  CHECK(r.barrier == ABT_BARRIER_NULL);
  CHECK_RET(ABT_barrier_wait(ABT_BARRIER_NULL), ABT_ERR_INV_BARRIER);
  CHECK_RET(ABT_barrier_free(&r.barrier), ABT_ERR_INV_BARRIER);
  CHECK_RET(ABT_barrier_create(0, &r.barrier), ABT_ERR_INV_ARG);
  abt_test_stop();
}

int main(int argc, char** argv) {
  static const struct abt_test_case cases[] = {
      {"mutex", test_mutex},       {"mutex_recursive_and_static", test_mutex_recursive_and_static},
      {"cond", test_cond},         {"rwlock", test_rwlock},
      {"eventual", test_eventual}, {"future", test_future},
      {"barrier", test_barrier},
  };
  return abt_test_main(argc, argv, cases, ABT_TEST_COUNT(cases));
}
