// SPDX-License-Identifier: Apache-2.0
/* Behaviours of Argobots 1.2 that ported programs rely on, one case per behaviour: output
 * handles on failure, yields outside ULTs, affinity lists with absent CPUs, stream counts past
 * ABT_MAX_NUM_XSTREAMS, nested finalize from any thread, user pools (is_empty, units of other
 * pools), the PRIO scheduler's own pools, and the version number. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abt_test.h"

static void add_one(void* arg) {
  abt_test_add(arg, 1);
}

/* A value no handle has, to see whether a call wrote its output. */
#define GARBAGE ((void*)(uintptr_t)0x5a5a5a50)

/* ---------------------------------------------------------------------------------------- */
/* Output handles of the self queries on failure                                             */
/* ---------------------------------------------------------------------------------------- */

struct self_codes {
  int task_self;
  ABT_task task;
  int thread_self;
  ABT_thread thread;
};

static void query_self(void* arg) {
  struct self_codes* c = arg;
  c->task = (ABT_task)GARBAGE;
  c->thread = (ABT_thread)GARBAGE;
  c->task_self = ABT_task_self(&c->task);
  c->thread_self = ABT_thread_self(&c->thread);
}

static void* query_self_external(void* arg) {
  query_self(arg);
  return NULL;
}

static void test_self_null_on_failure(void) {
  abt_test_start();
  for (int i = 0; i < abt_test_num_xstreams; i++) {
    /* A ULT is no tasklet: ABT_task_self fails and says NULL. */
    struct self_codes c;
    ABT_thread t;
    OK(ABT_thread_create(abt_test_pools[i], query_self, &c, ABT_THREAD_ATTR_NULL, &t));
    OK(ABT_thread_free(&t));
    CHECK_RET(c.task_self, ABT_ERR_INV_TASK);
    CHECK(c.task == ABT_TASK_NULL);
    OK(c.thread_self);
    CHECK(c.thread != ABT_THREAD_NULL && c.thread != (ABT_thread)GARBAGE);
    /* A tasklet is no ULT: ABT_thread_self fails and says NULL. */
    ABT_task k;
    OK(ABT_task_create(abt_test_pools[i], query_self, &c, &k));
    OK(ABT_task_free(&k));
    OK(c.task_self);
    CHECK(c.task != ABT_TASK_NULL && c.task != (ABT_task)GARBAGE);
    CHECK_RET(c.thread_self, ABT_ERR_INV_THREAD);
    CHECK(c.thread == ABT_THREAD_NULL);
  }
  /* An external thread: both fail with ABT_ERR_INV_XSTREAM and say NULL. */
  struct self_codes c;
  pthread_t th;
  CHECK(pthread_create(&th, NULL, query_self_external, &c) == 0);
  CHECK(pthread_join(th, NULL) == 0);
  CHECK_RET(c.task_self, ABT_ERR_INV_XSTREAM);
  CHECK(c.task == ABT_TASK_NULL);
  CHECK_RET(c.thread_self, ABT_ERR_INV_XSTREAM);
  CHECK(c.thread == ABT_THREAD_NULL);
  /* The primary ULT. */
  query_self(&c);
  CHECK_RET(c.task_self, ABT_ERR_INV_TASK);
  CHECK(c.task == ABT_TASK_NULL);
  OK(c.thread_self);
  abt_test_stop();
  /* Not initialised: ABT_ERR_UNINITIALIZED, and NULL. */
  query_self(&c);
  CHECK_RET(c.task_self, ABT_ERR_UNINITIALIZED);
  CHECK(c.task == ABT_TASK_NULL);
  CHECK_RET(c.thread_self, ABT_ERR_UNINITIALIZED);
  CHECK(c.thread == ABT_THREAD_NULL);
}

/* ---------------------------------------------------------------------------------------- */
/* ABT_thread_yield outside a ULT                                                            */
/* ---------------------------------------------------------------------------------------- */

struct yield_codes {
  int thread_yield;
  int self_yield;
};

static void yield_codes_of_caller(void* arg) {
  struct yield_codes* c = arg;
  c->thread_yield = ABT_thread_yield();
  c->self_yield = ABT_self_yield();
}

static void* yield_external(void* arg) {
  yield_codes_of_caller(arg);
  return NULL;
}

/* A tasklet that yields: in Argobots 1.x the yield does nothing, so nothing else runs on its
 * stream between the two increments. */
struct yield_run {
  int counter;
  int interleaved;
};

static void count_around_yield(void* arg) {
  struct yield_run* r = arg;
  const int mine = abt_test_add(&r->counter, 1);
  OK(ABT_thread_yield());
  if (abt_test_load(&r->counter) != mine) abt_test_add(&r->interleaved, 1);
}

static void test_yield_outside_ult(void) {
  abt_test_start();
  struct yield_codes c = {-1, -1};
  ABT_task k;
  OK(ABT_task_create(abt_test_pools[0], yield_codes_of_caller, &c, &k));
  OK(ABT_task_free(&k));
  OK(c.thread_yield);
  CHECK_RET(c.self_yield, ABT_ERR_INV_THREAD);
  pthread_t th;
  CHECK(pthread_create(&th, NULL, yield_external, &c) == 0);
  CHECK(pthread_join(th, NULL) == 0);
  OK(c.thread_yield);
  CHECK_RET(c.self_yield, ABT_ERR_INV_XSTREAM);
  /* Eight tasklets on a pool that only one stream serves, created before any runs. */
  ABT_pool pool;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPSC, ABT_TRUE, &pool));
  ABT_xstream xs;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &pool, ABT_SCHED_CONFIG_NULL, &xs));
  struct yield_run run = {0, 0};
  ABT_task tasks[8];
  for (int i = 0; i < 8; i++) OK(ABT_task_create(pool, count_around_yield, &run, &tasks[i]));
  for (int i = 0; i < 8; i++) OK(ABT_task_free(&tasks[i]));
  CHECK(run.counter == 8);
  CHECK(run.interleaved == 0);
  OK(ABT_xstream_free(&xs));
  abt_test_stop();
}

/* ---------------------------------------------------------------------------------------- */
/* Affinity lists with CPUs the process does not have                                       */
/* ---------------------------------------------------------------------------------------- */

/* The mask a new kernel thread gets when it binds itself to CPUs 0..1023. */
static void* wide_mask_of_new_thread(void* arg) {
  cpu_set_t* out = arg;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c = 0; c < 1024 && c < CPU_SETSIZE; c++) CPU_SET(c, &set);
  CHECK(pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0);
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof *out, out) == 0);
  return NULL;
}

static void test_affinity_absent_cpus(void) {
  abt_test_start();
  ABT_bool supported = ABT_FALSE;
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_ENABLED_AFFINITY, &supported));
  if (!supported) {
    abt_test_stop();
    return;
  }
  ABT_xstream xs;
  OK(ABT_xstream_create(ABT_SCHED_NULL, &xs));
  /* "CPUs 0..1023": the OS keeps the ones the process has. */
  enum { wide = 1024 };
  static int cpus[wide];
  for (int i = 0; i < wide; i++) cpus[i] = i;
  OK(ABT_xstream_set_affinity(xs, wide, cpus));
  int got[wide], num = -1;
  OK(ABT_xstream_get_affinity(xs, wide, got, &num));
  /* The same mask a kernel thread gets from pthread_setaffinity_np with that list. */
  cpu_set_t wide_set;
  pthread_t th;
  CHECK(pthread_create(&th, NULL, wide_mask_of_new_thread, &wide_set) == 0);
  CHECK(pthread_join(th, NULL) == 0);
  CHECK(num == CPU_COUNT(&wide_set));
  for (int i = 0; i < num; i++) CHECK(CPU_ISSET(got[i], &wide_set));
  /* The primary stream too, from the primary ULT. */
  OK(ABT_xstream_set_affinity(abt_test_xstreams[0], wide, cpus));
  /* A list without a single CPU the process has fails as pthread_setaffinity_np does. */
  int none = -1;
  for (int c = CPU_SETSIZE - 1; c >= 0; c--) {
    if (!CPU_ISSET(c, &wide_set)) {
      none = c;
      break;
    }
  }
  if (none >= 0) {
    CHECK_RET(ABT_xstream_set_affinity(xs, 1, &none), ABT_ERR_SYS);
    CHECK_RET(ABT_xstream_set_cpubind(xs, none), ABT_ERR_SYS);
  }
  /* Work still runs there. */
  ABT_pool pool;
  OK(ABT_xstream_get_main_pools(xs, 1, &pool));
  int count = 0;
  ABT_thread t;
  OK(ABT_thread_create(pool, add_one, &count, ABT_THREAD_ATTR_NULL, &t));
  OK(ABT_thread_free(&t));
  CHECK(count == 1);
  OK(ABT_xstream_free(&xs));
  abt_test_stop();
}

/* ---------------------------------------------------------------------------------------- */
/* Stream counts past ABT_MAX_NUM_XSTREAMS; a taken rank                                     */
/* ---------------------------------------------------------------------------------------- */

static void test_streams_past_max(void) {
  CHECK(setenv("ABT_MAX_NUM_XSTREAMS", "2", 1) == 0);
  OK(ABT_init(0, NULL));
  CHECK(unsetenv("ABT_MAX_NUM_XSTREAMS") == 0);
  enum { extra = 4 };
  ABT_xstream xs[extra];
  int count = 0;
  for (int i = 0; i < extra; i++) OK(ABT_xstream_create(ABT_SCHED_NULL, &xs[i]));
  int num = 0;
  OK(ABT_xstream_get_num(&num));
  CHECK(num == extra + 1);
  for (int i = 0; i < extra; i++) {
    ABT_pool pool;
    OK(ABT_xstream_get_main_pools(xs[i], 1, &pool));
    OK(ABT_thread_create(pool, add_one, &count, ABT_THREAD_ATTR_NULL, NULL));
  }
  abt_test_wait_count(&count, extra);
  /* A taken rank is reported as such, whatever the count. */
  ABT_xstream other = (ABT_xstream)GARBAGE;
  CHECK_RET(ABT_xstream_create_with_rank(ABT_SCHED_NULL, 0, &other), ABT_ERR_INV_XSTREAM_RANK);
  CHECK(other == ABT_XSTREAM_NULL);
  int rank = -1;
  OK(ABT_xstream_get_rank(xs[extra - 1], &rank));
  CHECK_RET(ABT_xstream_create_with_rank(ABT_SCHED_NULL, rank, &other), ABT_ERR_INV_XSTREAM_RANK);
  for (int i = 0; i < extra; i++) OK(ABT_xstream_free(&xs[i]));
  OK(ABT_finalize());
}

/* ---------------------------------------------------------------------------------------- */
/* Nested finalize from an external thread                                                   */
/* ---------------------------------------------------------------------------------------- */

static void* finalize_external(void* arg) {
  *(int*)arg = ABT_finalize();
  return NULL;
}

static void test_nested_finalize_external(void) {
  abt_test_start();
  OK(ABT_init(0, NULL)); /* depth 2 */
  int rc = -1;
  pthread_t th;
  CHECK(pthread_create(&th, NULL, finalize_external, &rc) == 0);
  CHECK(pthread_join(th, NULL) == 0);
  OK(rc);
  OK(ABT_initialized());
  /* The last one from an external thread is refused, and leaves the library initialised. */
  CHECK(pthread_create(&th, NULL, finalize_external, &rc) == 0);
  CHECK(pthread_join(th, NULL) == 0);
  CHECK_RET(rc, ABT_ERR_INV_XSTREAM);
  OK(ABT_initialized());
  abt_test_stop();
  CHECK_RET(ABT_initialized(), ABT_ERR_UNINITIALIZED);
}

/* ---------------------------------------------------------------------------------------- */
/* User-defined pools                                                                        */
/* ---------------------------------------------------------------------------------------- */

/* A LIFO of ABT_threads under a mutex, with call counters. */
struct upool {
  pthread_mutex_t lock;
  ABT_thread items[256];
  int size;
  int is_empty_calls;
  int get_size_calls;
  int lie_about_size; /* get_size says 0 whatever it holds */
};

struct uunit {
  ABT_thread thread;
};

static ABT_unit u_create(ABT_pool pool, ABT_thread thread) {
  (void)pool;
  struct uunit* u = malloc(sizeof *u);
  CHECK(u != NULL);
  u->thread = thread;
  return (ABT_unit)u;
}

static void u_free(ABT_pool pool, ABT_unit unit) {
  (void)pool;
  free(unit);
}

static struct upool* upool_of(ABT_pool pool) {
  void* data = NULL;
  OK(ABT_pool_get_data(pool, &data));
  return data;
}

static ABT_bool u_is_empty(ABT_pool pool) {
  struct upool* p = upool_of(pool);
  pthread_mutex_lock(&p->lock);
  p->is_empty_calls++;
  const int size = p->size;
  pthread_mutex_unlock(&p->lock);
  return size == 0 ? ABT_TRUE : ABT_FALSE;
}

static size_t u_get_size(ABT_pool pool) {
  struct upool* p = upool_of(pool);
  pthread_mutex_lock(&p->lock);
  p->get_size_calls++;
  const size_t size = p->lie_about_size ? 0 : (size_t)p->size;
  pthread_mutex_unlock(&p->lock);
  return size;
}

static void u_push(ABT_pool pool, ABT_unit unit, ABT_pool_context ctx) {
  (void)ctx;
  struct upool* p = upool_of(pool);
  struct uunit* u = (struct uunit*)unit;
  pthread_mutex_lock(&p->lock);
  CHECK(p->size < 256);
  p->items[p->size++] = u->thread;
  pthread_mutex_unlock(&p->lock);
}

static ABT_thread u_pop(ABT_pool pool, ABT_pool_context ctx) {
  (void)ctx;
  struct upool* p = upool_of(pool);
  pthread_mutex_lock(&p->lock);
  ABT_thread t = p->size > 0 ? p->items[--p->size] : ABT_THREAD_NULL;
  pthread_mutex_unlock(&p->lock);
  return t;
}

static int u_init(ABT_pool pool, ABT_pool_config config) {
  (void)config;
  struct upool* p = calloc(1, sizeof *p);
  CHECK(p != NULL);
  pthread_mutex_init(&p->lock, NULL);
  return ABT_pool_set_data(pool, p);
}

static void u_fini(ABT_pool pool) {
  struct upool* p = upool_of(pool);
  pthread_mutex_destroy(&p->lock);
  free(p);
}

static ABT_pool make_user_pool(void) {
  ABT_pool_user_def def;
  OK(ABT_pool_user_def_create(u_create, u_free, u_is_empty, u_pop, u_push, &def));
  OK(ABT_pool_user_def_set_init(def, u_init));
  OK(ABT_pool_user_def_set_free(def, u_fini));
  OK(ABT_pool_user_def_set_get_size(def, u_get_size));
  ABT_pool pool;
  OK(ABT_pool_create(def, ABT_POOL_CONFIG_NULL, &pool));
  OK(ABT_pool_user_def_free(&def));
  return pool;
}

static void test_user_pool_is_empty(void) {
  abt_test_start();
  ABT_pool pool = make_user_pool();
  struct upool* p = upool_of(pool);
  ABT_bool empty = ABT_FALSE;
  OK(ABT_pool_is_empty(pool, &empty));
  CHECK(empty == ABT_TRUE);
  CHECK(p->is_empty_calls == 1);
  CHECK(p->get_size_calls == 0);
  /* A unit in it; get_size lies: is_empty is what ABT_pool_is_empty asks. */
  int count = 0;
  ABT_thread t;
  OK(ABT_thread_create(pool, add_one, &count, ABT_THREAD_ATTR_NULL, &t));
  p->lie_about_size = 1;
  OK(ABT_pool_is_empty(pool, &empty));
  CHECK(empty == ABT_FALSE);
  CHECK(p->is_empty_calls == 2);
  CHECK(p->get_size_calls == 0);
  size_t size = 99;
  OK(ABT_pool_get_size(pool, &size));
  CHECK(size == 0);
  CHECK(p->get_size_calls == 1);
  p->lie_about_size = 0;
  /* Hand the unit to a stream's pool so that it runs. */
  ABT_thread popped = ABT_THREAD_NULL;
  OK(ABT_pool_pop_thread(pool, &popped));
  CHECK(popped == t);
  OK(ABT_pool_push_thread(abt_test_pools[0], popped));
  OK(ABT_thread_free(&t));
  CHECK(count == 1);
  OK(ABT_pool_free(&pool));
  abt_test_stop();
}

static void test_push_foreign_unit(void) {
  abt_test_start();
  /* A built-in pool no scheduler serves, and a user pool. */
  ABT_pool fifo;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &fifo));
  ABT_pool user = make_user_pool();
  int count = 0;
  ABT_thread t;
  OK(ABT_thread_create(fifo, add_one, &count, ABT_THREAD_ATTR_NULL, &t));
  /* A unit of the built-in pool goes into the user pool. */
  ABT_unit unit = ABT_UNIT_NULL;
  OK(ABT_pool_pop(fifo, &unit));
  CHECK(unit != ABT_UNIT_NULL);
  ABT_thread of_unit = ABT_THREAD_NULL;
  OK(ABT_unit_get_thread(unit, &of_unit));
  CHECK(of_unit == t);
  OK(ABT_pool_push(user, unit));
  size_t size = 0;
  OK(ABT_pool_get_size(user, &size));
  CHECK(size == 1);
  ABT_pool last = ABT_POOL_NULL;
  OK(ABT_thread_get_last_pool(t, &last));
  CHECK(last == user);
  /* And back: a unit of the user pool goes into the built-in one. */
  OK(ABT_pool_pop(user, &unit));
  CHECK(unit != ABT_UNIT_NULL);
  OK(ABT_unit_get_thread(unit, &of_unit));
  CHECK(of_unit == t);
  OK(ABT_pool_push(fifo, unit));
  OK(ABT_pool_get_size(fifo, &size));
  CHECK(size == 1);
  /* Into a served pool, where it runs. */
  ABT_thread popped = ABT_THREAD_NULL;
  OK(ABT_pool_pop_thread(fifo, &popped));
  CHECK(popped == t);
  OK(ABT_pool_push_thread(abt_test_pools[abt_test_num_xstreams - 1], popped));
  OK(ABT_thread_free(&t));
  CHECK(count == 1);
  CHECK_RET(ABT_pool_push(user, ABT_UNIT_NULL), ABT_ERR_INV_UNIT);
  OK(ABT_pool_free(&user));
  OK(ABT_pool_free(&fifo));
  abt_test_stop();
}

/* ---------------------------------------------------------------------------------------- */
/* ABT_SCHED_PRIO without pools                                                              */
/* ---------------------------------------------------------------------------------------- */

static void test_prio_default_pools(void) {
  abt_test_start();
  ABT_sched sched;
  OK(ABT_sched_create_basic(ABT_SCHED_PRIO, 0, NULL, ABT_SCHED_CONFIG_NULL, &sched));
  int num = 0;
  OK(ABT_sched_get_num_pools(sched, &num));
  CHECK(num == 3);
  ABT_xstream xs;
  OK(ABT_xstream_create(sched, &xs));
  ABT_pool pools[3];
  OK(ABT_xstream_get_main_pools(xs, 3, pools));
  CHECK(pools[0] != pools[1] && pools[1] != pools[2] && pools[0] != pools[2]);
  int count = 0;
  for (int i = 0; i < 3; i++)
    OK(ABT_thread_create(pools[i], add_one, &count, ABT_THREAD_ATTR_NULL, NULL));
  abt_test_wait_count(&count, 3);
  OK(ABT_xstream_free(&xs));
  /* The same through ABT_xstream_create_basic. */
  OK(ABT_xstream_create_basic(ABT_SCHED_PRIO, 0, NULL, ABT_SCHED_CONFIG_NULL, &xs));
  OK(ABT_xstream_get_main_sched(xs, &sched));
  OK(ABT_sched_get_num_pools(sched, &num));
  CHECK(num == 3);
  OK(ABT_xstream_free(&xs));
  /* Other predefined schedulers make one. */
  OK(ABT_sched_create_basic(ABT_SCHED_BASIC, 0, NULL, ABT_SCHED_CONFIG_NULL, &sched));
  OK(ABT_sched_get_num_pools(sched, &num));
  CHECK(num == 1);
  OK(ABT_sched_free(&sched));
  abt_test_stop();
}

/* ---------------------------------------------------------------------------------------- */
/* Version                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static void test_version(void) {
  CHECK(ABT_NUMVERSION == 10200201);
  CHECK(strcmp(ABT_VERSION, "1.2") == 0);
  CHECK(ABT_NUMVERSION >= ABT_CALC_VERSION(1, 2, 0, ABT_RELEASE_TYPE_ALPHA, 0));
  CHECK(ABT_NUMVERSION < ABT_CALC_VERSION(1, 3, 0, ABT_RELEASE_TYPE_ALPHA, 0));
}

/* ---------------------------------------------------------------------------------------- */
/* Stack bounds of a ULT; a user-given stack's guard page                                    */
/* ---------------------------------------------------------------------------------------- */

struct stack_view {
  void* stack;
  size_t size;
  uintptr_t local; /* the address of a local variable of the ULT */
  int attr_code;
  int guard_readable; /* -1: not checked */
  void* guard;
};

static void view_own_stack(void* arg) {
  struct stack_view* v = arg;
  volatile char local = 0;
  v->local = (uintptr_t)&local;
  ABT_thread self;
  OK(ABT_self_get_thread(&self));
  ABT_thread_attr attr;
  v->attr_code = ABT_thread_get_attr(self, &attr);
  if (v->attr_code != ABT_SUCCESS) return;
  OK(ABT_thread_attr_get_stack(attr, &v->stack, &v->size));
  OK(ABT_thread_attr_free(&attr));
  if (v->guard) {
    /* The kernel says EFAULT for a buffer it cannot read: a protected page, without a fault. */
    int fds[2];
    CHECK(pipe(fds) == 0);
    v->guard_readable = write(fds[1], v->guard, 1) == 1;
    close(fds[0]);
    close(fds[1]);
  }
}

static int readable(void* p) {
  int fds[2];
  CHECK(pipe(fds) == 0);
  const int ok = write(fds[1], p, 1) == 1;
  close(fds[0]);
  close(fds[1]);
  return ok;
}

/* Runs a ULT on a malloc'd stack of 16 pages and a bit: reported as given; with `guarded`
 * (ABT_STACK_OVERFLOW_CHECK=mprotect) its lowest whole page is a guard while the ULT lives. */
static void run_on_user_stack(size_t page, int guarded) {
  const size_t size = 16 * page + 100;
  char* mem = malloc(size);
  CHECK(mem != NULL);
  ABT_thread_attr attr;
  OK(ABT_thread_attr_create(&attr));
  OK(ABT_thread_attr_set_stack(attr, mem, size));
  struct stack_view u = {NULL, 0, 0, -1, -1, NULL};
  u.guard = (void*)(((uintptr_t)mem + page - 1) / page * page);
  ABT_thread t;
  OK(ABT_thread_create(abt_test_pools[0], view_own_stack, &u, attr, &t));
  OK(ABT_thread_attr_free(&attr));
  OK(ABT_thread_free(&t));
  OK(u.attr_code);
  CHECK(u.stack == mem);
  CHECK(u.size == size);
  CHECK((uintptr_t)mem <= u.local && u.local < (uintptr_t)mem + size);
  CHECK(u.guard_readable == !guarded);
  CHECK(readable(u.guard)); /* the user's memory again once the ULT ended */
  free(mem);
}

static void test_stack_bounds(void) {
  abt_test_start();
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  /* A default stack: its bounds hold the ULT's locals. */
  struct stack_view v = {NULL, 0, 0, -1, -1, NULL};
  ABT_thread t;
  OK(ABT_thread_create(abt_test_pools[abt_test_num_xstreams - 1], view_own_stack, &v,
                       ABT_THREAD_ATTR_NULL, &t));
  OK(ABT_thread_free(&t));
  OK(v.attr_code);
  CHECK(v.stack != NULL);
  CHECK((uintptr_t)v.stack <= v.local && v.local < (uintptr_t)v.stack + v.size);
  /* A user stack: reported as given, and the ULT has all of it (no guard page by default, as
   * Argobots). */
  run_on_user_stack(page, 0);
  ABT_thread_attr attr;
  /* A ULT that has not run has no stack yet (lazy allocation). */
  ABT_pool idle;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &idle));
  int count = 0;
  OK(ABT_thread_create(idle, add_one, &count, ABT_THREAD_ATTR_NULL, &t));
  OK(ABT_thread_get_attr(t, &attr));
  void* stack = GARBAGE;
  size_t stacksize = 0;
  OK(ABT_thread_attr_get_stack(attr, &stack, &stacksize));
  CHECK(stack == NULL);
  size_t default_size = 0;
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_DEFAULT_THREAD_STACKSIZE, &default_size));
  CHECK(stacksize == default_size);
  OK(ABT_thread_attr_free(&attr));
  ABT_thread popped;
  OK(ABT_pool_pop_thread(idle, &popped));
  OK(ABT_pool_push_thread(abt_test_pools[0], popped));
  OK(ABT_thread_free(&t));
  OK(ABT_pool_free(&idle));
  /* A tasklet has no ULT attributes (Argobots 1.x). */
  ABT_task k;
  OK(ABT_task_create(abt_test_pools[0], add_one, &count, &k));
  OK(ABT_task_join(k));
  attr = (ABT_thread_attr)GARBAGE;
  CHECK_RET(ABT_thread_get_attr(k, &attr), ABT_ERR_INV_THREAD);
  OK(ABT_task_free(&k));
  abt_test_stop();
}

/* ABT_STACK_OVERFLOW_CHECK=mprotect guards user stacks, as Argobots' setting does. */
static void test_user_stack_guard(void) {
  CHECK(setenv("ABT_STACK_OVERFLOW_CHECK", "mprotect", 1) == 0);
  abt_test_start();
  run_on_user_stack((size_t)sysconf(_SC_PAGESIZE), 1);
  abt_test_stop();
  CHECK(unsetenv("ABT_STACK_OVERFLOW_CHECK") == 0);
}

/* ---------------------------------------------------------------------------------------- */
/* ABT_info_trigger_print_all_thread_stacks waits for the streams, or for its timeout        */
/* ---------------------------------------------------------------------------------------- */

struct dump_result {
  int called;
  ABT_bool timed_out;
};

static void on_dumped(ABT_bool timed_out, void* arg) {
  struct dump_result* r = arg;
  r->timed_out = timed_out;
  abt_test_store(&r->called, 1);
}

static void spin_until(void* arg) {
  const int* release = arg;
  while (!abt_test_load(release)) {
  }
}

static void test_trigger_stack_dump(void) {
  abt_test_start();
  FILE* out = tmpfile();
  CHECK(out != NULL);
  /* Every stream answers: printed, and not timed out. */
  struct dump_result r = {0, ABT_TRUE};
  OK(ABT_info_trigger_print_all_thread_stacks(out, 30.0, on_dumped, &r));
  abt_test_wait_flag(&r.called);
  CHECK(r.timed_out == ABT_FALSE);
  CHECK(ftell(out) > 0);
  /* A stream busy in a ULT that never yields does not answer: the dump waits for the timeout
   * and says so. */
  /* Its own pool and a BASIC scheduler: no other stream takes the spinner from it. */
  ABT_pool busy_pool;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPSC, ABT_TRUE, &busy_pool));
  ABT_xstream busy;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &busy_pool, ABT_SCHED_CONFIG_NULL, &busy));
  int release = 0, started = 0;
  ABT_thread spinner;
  OK(ABT_thread_create(busy_pool, add_one, &started, ABT_THREAD_ATTR_NULL, NULL));
  abt_test_wait_flag(&started);
  OK(ABT_thread_create(busy_pool, spin_until, &release, ABT_THREAD_ATTR_NULL, &spinner));
  ABT_thread_state state = ABT_THREAD_STATE_READY;
  while (state != ABT_THREAD_STATE_RUNNING) {
    OK(ABT_thread_get_state(spinner, &state));
    OK(ABT_self_yield());
  }
  struct dump_result r2 = {0, ABT_FALSE};
  OK(ABT_info_trigger_print_all_thread_stacks(out, 0.2, on_dumped, &r2));
  abt_test_wait_flag(&r2.called);
  CHECK(r2.timed_out == ABT_TRUE);
  abt_test_store(&release, 1);
  OK(ABT_thread_free(&spinner));
  OK(ABT_xstream_free(&busy));
  fclose(out);
  abt_test_stop();
}

/* ---------------------------------------------------------------------------------------- */
/* ABT_thread_set_specific on a running ULT while it uses ABT_key_set                        */
/* ---------------------------------------------------------------------------------------- */

enum { race_keys = 64 };

struct key_race {
  ABT_key* keys; /* even: the ULT's own, odd: set from outside */
  ABT_thread target;
  int rounds;
  int running;
  int outside_done;
};

/* Both sides start with an empty table and grow it key by key, so that the table's allocation
 * and growth race with the other side's stores. */
static void key_race_ult(void* arg) {
  struct key_race* r = arg;
  abt_test_store(&r->running, 1);
  for (int round = 1; round <= r->rounds || !abt_test_load(&r->outside_done); round++) {
    for (int k = 0; k < race_keys; k += 2) {
      OK(ABT_key_set(r->keys[k], (void*)(uintptr_t)(round * race_keys + k)));
      void* v = NULL;
      OK(ABT_key_get(r->keys[k], &v));
      CHECK(v == (void*)(uintptr_t)(round * race_keys + k));
    }
  }
  /* What the outside thread set last is there. */
  for (int k = 1; k < race_keys; k += 2) {
    void* v = NULL;
    OK(ABT_key_get(r->keys[k], &v));
    CHECK(v == (void*)(uintptr_t)(r->rounds * race_keys + k));
  }
}

static void* key_race_outside(void* arg) {
  struct key_race* r = arg;
  abt_test_wait_flag(&r->running);
  for (int round = 1; round <= r->rounds; round++) {
    for (int k = 1; k < race_keys; k += 2)
      OK(ABT_thread_set_specific(r->target, r->keys[k], (void*)(uintptr_t)(round * race_keys + k)));
    void* v = NULL;
    OK(ABT_thread_get_specific(r->target, r->keys[race_keys - 1], &v));
    CHECK(v == (void*)(uintptr_t)(round * race_keys + race_keys - 1));
  }
  abt_test_store(&r->outside_done, 1);
  return NULL;
}

static void test_set_specific_race(void) {
  abt_test_start();
  ABT_key keys[race_keys];
  for (int k = 0; k < race_keys; k++) OK(ABT_key_create(NULL, &keys[k]));
  const int reps = abt_test_scaled(200);
  for (int rep = 0; rep < reps; rep++) {
    struct key_race r;
    memset(&r, 0, sizeof r);
    r.keys = keys;
    r.rounds = 8;
    OK(ABT_thread_create(abt_test_pools[rep % abt_test_num_xstreams], key_race_ult, &r,
                         ABT_THREAD_ATTR_NULL, &r.target));
    pthread_t th;
    CHECK(pthread_create(&th, NULL, key_race_outside, &r) == 0);
    OK(ABT_thread_free(&r.target));
    CHECK(pthread_join(th, NULL) == 0);
  }
  for (int k = 0; k < race_keys; k++) OK(ABT_key_free(&keys[k]));
  abt_test_stop();
}

/* ---------------------------------------------------------------------------------------- */
/* Tool events: what Argobots reports for each unit, in its order                            */
/* ---------------------------------------------------------------------------------------- */

enum { max_events = 4096 };

/* The primary ULT's handle: its events (its waits yield in loops) are not recorded. */
static ABT_thread g_primary;

struct event_log {
  pthread_mutex_t lock;
  int n;
  ABT_thread unit[max_events];
  uint64_t event[max_events];
  ABT_sync_event_type sync[max_events];
  ABT_xstream xstream[max_events]; /* the stream the callback was given */
  ABT_pool pool[max_events];       /* CREATE only: ABT_TOOL_QUERY_KIND_POOL */
};

static struct event_log g_log = {PTHREAD_MUTEX_INITIALIZER, 0, {0}, {0}, {0}, {0}, {0}};

static void record_event(ABT_thread thread, ABT_xstream xstream, uint64_t event,
                         ABT_tool_context context, void* arg) {
  struct event_log* log = arg;
  if (thread == g_primary) return;
  ABT_sync_event_type sync = ABT_SYNC_EVENT_TYPE_UNKNOWN;
  if (event == ABT_TOOL_EVENT_THREAD_SUSPEND || event == ABT_TOOL_EVENT_THREAD_YIELD)
    OK(ABT_tool_query_thread(context, event, ABT_TOOL_QUERY_KIND_SYNC_OBJECT_TYPE, &sync));
  ABT_pool pool = ABT_POOL_NULL;
  if (event == ABT_TOOL_EVENT_THREAD_CREATE)
    OK(ABT_tool_query_thread(context, event, ABT_TOOL_QUERY_KIND_POOL, &pool));
  pthread_mutex_lock(&log->lock);
  CHECK(log->n < max_events);
  log->unit[log->n] = thread;
  log->event[log->n] = event;
  log->sync[log->n] = sync;
  log->xstream[log->n] = xstream;
  log->pool[log->n] = pool;
  log->n++;
  pthread_mutex_unlock(&log->lock);
}

static void clear_log(void) {
  pthread_mutex_lock(&g_log.lock);
  g_log.n = 0;
  pthread_mutex_unlock(&g_log.lock);
}

static const char* event_name(uint64_t e) {
  switch (e) {
    case ABT_TOOL_EVENT_THREAD_CREATE:
      return "CREATE";
    case ABT_TOOL_EVENT_THREAD_JOIN:
      return "JOIN";
    case ABT_TOOL_EVENT_THREAD_FREE:
      return "FREE";
    case ABT_TOOL_EVENT_THREAD_REVIVE:
      return "REVIVE";
    case ABT_TOOL_EVENT_THREAD_RUN:
      return "RUN";
    case ABT_TOOL_EVENT_THREAD_FINISH:
      return "FINISH";
    case ABT_TOOL_EVENT_THREAD_CANCEL:
      return "CANCEL";
    case ABT_TOOL_EVENT_THREAD_YIELD:
      return "YIELD";
    case ABT_TOOL_EVENT_THREAD_SUSPEND:
      return "SUSPEND";
    case ABT_TOOL_EVENT_THREAD_RESUME:
      return "RESUME";
    default:
      return "?";
  }
}

/* Checks the events reported for `t` or `u` (the handle a revive gave it, which may differ)
 * against `expected` (a 0-terminated list). */
static void check_events_of_either(ABT_thread t, ABT_thread u, const uint64_t* expected, int line) {
  pthread_mutex_lock(&g_log.lock);
  int k = 0, ok = 1;
  for (int i = 0; i < g_log.n; i++) {
    if (g_log.unit[i] != t && g_log.unit[i] != u) continue;
    if (expected[k] != g_log.event[i]) ok = 0;
    if (expected[k]) k++;
  }
  if (expected[k] != 0) ok = 0;
  if (!ok) {
    fprintf(stderr, "line %d: events of %p/%p:", line, (void*)t, (void*)u);
    for (int i = 0; i < g_log.n; i++)
      if (g_log.unit[i] == t || g_log.unit[i] == u)
        fprintf(stderr, " %s", event_name(g_log.event[i]));
    fprintf(stderr, "\n  expected:");
    for (int i = 0; expected[i]; i++) fprintf(stderr, " %s", event_name(expected[i]));
    fprintf(stderr, "\n");
  }
  pthread_mutex_unlock(&g_log.lock);
  CHECK(ok);
}

/* Checks the events reported for `t` against `expected` (a 0-terminated list). */
static void check_events_of(ABT_thread t, const uint64_t* expected, int line) {
  check_events_of_either(t, t, expected, line);
}

/* The position of the n-th (0-based) `event` of `t` in the log, -1 if none. */
static int event_index(ABT_thread t, uint64_t event, int nth) {
  pthread_mutex_lock(&g_log.lock);
  int found = -1;
  for (int i = 0; i < g_log.n && found < 0; i++)
    if (g_log.unit[i] == t && g_log.event[i] == event && nth-- == 0) found = i;
  pthread_mutex_unlock(&g_log.lock);
  return found;
}

static ABT_sync_event_type suspend_sync_of(ABT_thread t) {
  const int i = event_index(t, ABT_TOOL_EVENT_THREAD_SUSPEND, 0);
  CHECK(i >= 0);
  return g_log.sync[i];
}

static void yield_once(void* arg) {
  (void)arg;
  OK(ABT_thread_yield());
}

static void migrate_self_to(void* arg) {
  ABT_thread self;
  OK(ABT_thread_self(&self));
  OK(ABT_thread_migrate_to_pool(self, *(ABT_pool*)arg));
}

static void suspend_once(void* arg) {
  (void)arg;
  OK(ABT_self_suspend());
}

static void wait_eventual(void* arg) {
  OK(ABT_eventual_wait(*(ABT_eventual*)arg, NULL));
}

static void join_other(void* arg) {
  OK(ABT_thread_join(*(ABT_thread*)arg));
}

static void wait_blocked(ABT_thread t) {
  ABT_thread_state st = ABT_THREAD_STATE_READY;
  while (st != ABT_THREAD_STATE_BLOCKED) {
    OK(ABT_thread_get_state(t, &st));
    OK(ABT_self_yield());
  }
}

#define EV(name) ABT_TOOL_EVENT_THREAD_##name

static void test_tool_events(void) {
  abt_test_start();
  OK(ABT_thread_self(&g_primary));
  OK(ABT_tool_register_thread_callback(record_event, ABT_TOOL_EVENT_THREAD_ALL, &g_log));
  ABT_pool pool = abt_test_pools[abt_test_num_xstreams - 1];
  int count = 0;
  ABT_thread t;

  /* A named ULT: JOIN comes once it has finished. */
  clear_log();
  OK(ABT_thread_create(pool, add_one, &count, ABT_THREAD_ATTR_NULL, &t));
  OK(ABT_thread_join(t));
  OK(ABT_thread_free(&t));
  {
    ABT_thread was = g_log.unit[0];
    static const uint64_t e[] = {EV(CREATE), EV(RUN), EV(FINISH), EV(JOIN), EV(JOIN), EV(FREE), 0};
    check_events_of(was, e, __LINE__);
    /* CREATE names the pool the ULT went to and the creator's stream; RUN the stream that
     * serves that pool. */
    const int created = event_index(was, EV(CREATE), 0), ran = event_index(was, EV(RUN), 0);
    CHECK(g_log.pool[created] == pool);
    CHECK(g_log.xstream[created] == abt_test_xstreams[0]);
    CHECK(g_log.xstream[ran] == abt_test_xstreams[abt_test_num_xstreams - 1]);
  }

  /* The same for a tasklet. */
  clear_log();
  ABT_task task;
  OK(ABT_task_create(pool, add_one, &count, &task));
  OK(ABT_task_free(&task));
  {
    ABT_thread was = g_log.unit[0];
    const int created = event_index(was, EV(CREATE), 0), ran = event_index(was, EV(RUN), 0);
    CHECK(created >= 0 && ran > created);
    CHECK(g_log.pool[created] == pool);
    CHECK(g_log.xstream[created] == abt_test_xstreams[0]);
    CHECK(g_log.xstream[ran] == abt_test_xstreams[abt_test_num_xstreams - 1]);
  }

  /* A yield: YIELD, then RUN when it is scheduled again. */
  clear_log();
  OK(ABT_thread_create(pool, yield_once, NULL, ABT_THREAD_ATTR_NULL, &t));
  ABT_thread handle = t;
  OK(ABT_thread_free(&t));
  {
    static const uint64_t e[] = {EV(CREATE), EV(RUN),  EV(YIELD), EV(RUN),
                                 EV(FINISH), EV(JOIN), EV(FREE),  0};
    check_events_of(handle, e, __LINE__);
  }

  /* A ULT that migrates itself yields on its stream and runs again on the target's, as in
   * Argobots: a tool that tracks the stream of each RUN sees it FINISH where it last ran. */
  if (abt_test_num_xstreams > 1) {
    clear_log();
    OK(ABT_thread_create(pool, migrate_self_to, &abt_test_pools[0], ABT_THREAD_ATTR_NULL, &t));
    handle = t;
    OK(ABT_thread_free(&t));
    static const uint64_t e[] = {EV(CREATE), EV(RUN),  EV(YIELD), EV(RUN),
                                 EV(FINISH), EV(JOIN), EV(FREE),  0};
    check_events_of(handle, e, __LINE__);
  }

  /* A suspension: SUSPEND, RESUME (from the resumer), RUN. */
  clear_log();
  OK(ABT_thread_create(pool, suspend_once, NULL, ABT_THREAD_ATTR_NULL, &t));
  wait_blocked(t);
  OK(ABT_thread_resume(t));
  handle = t;
  OK(ABT_thread_free(&t));
  {
    static const uint64_t e[] = {EV(CREATE), EV(RUN),  EV(SUSPEND), EV(RESUME), EV(RUN),
                                 EV(FINISH), EV(JOIN), EV(FREE),    0};
    check_events_of(handle, e, __LINE__);
    CHECK(suspend_sync_of(handle) == ABT_SYNC_EVENT_TYPE_USER);
  }

  /* The same, resumed by ABT_self_resume_yield_to: the resumer reports RESUME there too. The
   * target is in the caller's stream's pool, the case Argobots' test/basic self_resume_to takes. */
  clear_log();
  OK(ABT_thread_create(abt_test_pools[0], suspend_once, NULL, ABT_THREAD_ATTR_NULL, &t));
  wait_blocked(t);
  OK(ABT_self_resume_yield_to(t));
  handle = t;
  OK(ABT_thread_free(&t));
  {
    static const uint64_t e[] = {EV(CREATE), EV(RUN),  EV(SUSPEND), EV(RESUME), EV(RUN),
                                 EV(FINISH), EV(JOIN), EV(FREE),    0};
    check_events_of(handle, e, __LINE__);
  }

  /* Blocking on an eventual and on a join: SUSPEND, RESUME, RUN, with the object's type; the
   * joiner resumes after the joined unit finished, and the join is reported after that. */
  clear_log();
  ABT_eventual ev;
  OK(ABT_eventual_create(0, &ev));
  ABT_thread waiter, joiner;
  OK(ABT_thread_create(pool, wait_eventual, &ev, ABT_THREAD_ATTR_NULL, &waiter));
  wait_blocked(waiter);
  OK(ABT_thread_create(abt_test_pools[0], join_other, &waiter, ABT_THREAD_ATTR_NULL, &joiner));
  wait_blocked(joiner);
  OK(ABT_eventual_set(ev, NULL, 0));
  ABT_thread w = waiter, j = joiner;
  OK(ABT_thread_free(&joiner));
  OK(ABT_thread_free(&waiter));
  OK(ABT_eventual_free(&ev));
  {
    static const uint64_t e[] = {EV(CREATE), EV(RUN),  EV(SUSPEND), EV(RESUME), EV(RUN),
                                 EV(FINISH), EV(JOIN), EV(JOIN),    EV(FREE),   0};
    check_events_of(w, e, __LINE__);
    CHECK(suspend_sync_of(w) == ABT_SYNC_EVENT_TYPE_EVENTUAL);
    static const uint64_t f[] = {EV(CREATE), EV(RUN),  EV(SUSPEND), EV(RESUME), EV(RUN),
                                 EV(FINISH), EV(JOIN), EV(FREE),    0};
    check_events_of(j, f, __LINE__);
    CHECK(suspend_sync_of(j) == ABT_SYNC_EVENT_TYPE_THREAD_JOIN);
    CHECK(event_index(w, EV(FINISH), 0) < event_index(j, EV(RESUME), 0));
    CHECK(event_index(j, EV(RESUME), 0) < event_index(w, EV(JOIN), 0));
  }

  /* An unnamed ULT and an unnamed tasklet free themselves: FREE after FINISH. */
  for (int kind = 0; kind < 2; kind++) {
    clear_log();
    count = 0;
    if (kind == 0)
      OK(ABT_thread_create(pool, add_one, &count, ABT_THREAD_ATTR_NULL, NULL));
    else
      OK(ABT_task_create(pool, add_one, &count, NULL));
    abt_test_wait_count(&count, 1);
    /* The FREE is reported just after the count, before the unit ends: wait for it. */
    while (event_index(g_log.unit[0], EV(FREE), 0) < 0) OK(ABT_self_yield());
    static const uint64_t e[] = {EV(CREATE), EV(RUN), EV(FINISH), EV(FREE), 0};
    check_events_of(g_log.unit[0], e, __LINE__);
  }

  /* A revive after a join: REVIVE only (Argobots revives the unit in place: no second JOIN,
   * no FREE or CREATE), then the new run, and JOIN and FREE from the free. A tasklet too, and a
   * tasklet freed without a join reports its JOIN before its FREE. */
  for (int kind = 0; kind < 2; kind++) {
    clear_log();
    count = 0;
    if (kind == 0)
      OK(ABT_thread_create(pool, add_one, &count, ABT_THREAD_ATTR_NULL, &t));
    else
      OK(ABT_task_create(pool, add_one, &count, &t));
    OK(ABT_thread_join(t));
    ABT_thread first = t;
    if (kind == 0)
      OK(ABT_thread_revive(pool, add_one, &count, &t));
    else
      OK(ABT_task_revive(pool, add_one, &count, &t));
    ABT_thread revived = t;
    OK(ABT_thread_free(&t));
    CHECK(count == 2);
    static const uint64_t e[] = {EV(CREATE), EV(RUN),    EV(FINISH), EV(JOIN), EV(REVIVE),
                                 EV(RUN),    EV(FINISH), EV(JOIN),   EV(FREE), 0};
    check_events_of_either(first, revived, e, __LINE__);
    /* Freed without a join. */
    clear_log();
    if (kind == 0)
      OK(ABT_thread_create(pool, add_one, &count, ABT_THREAD_ATTR_NULL, &t));
    else
      OK(ABT_task_create(pool, add_one, &count, &t));
    handle = t;
    OK(kind == 0 ? ABT_thread_free(&t) : ABT_task_free(&t));
    static const uint64_t f[] = {EV(CREATE), EV(RUN), EV(FINISH), EV(JOIN), EV(FREE), 0};
    check_events_of(handle, f, __LINE__);
  }

  /* A ULT cancelled before it ran: CANCEL, no RUN or FINISH. */
  clear_log();
  ABT_pool idle;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &idle));
  OK(ABT_thread_create(idle, add_one, &count, ABT_THREAD_ATTR_NULL, &t));
  OK(ABT_thread_cancel(t));
  ABT_thread popped;
  OK(ABT_pool_pop_thread(idle, &popped));
  OK(ABT_pool_push_thread(pool, popped));
  handle = t;
  OK(ABT_thread_free(&t));
  OK(ABT_pool_free(&idle));
  {
    static const uint64_t e[] = {EV(CREATE), EV(CANCEL), EV(JOIN), EV(FREE), 0};
    check_events_of(handle, e, __LINE__);
  }

  OK(ABT_tool_register_thread_callback(NULL, ABT_TOOL_EVENT_THREAD_NONE, NULL));
  abt_test_stop();
}

/* ---------------------------------------------------------------------------------------- */
/* A user scheduler's run() is a ULT; ABT_xstream_run_unit from an ordinary ULT               */
/* ---------------------------------------------------------------------------------------- */

struct sched_view {
  int seen;
  int get_thread_code;
  ABT_thread thread;
  int thread_self_code;
  ABT_thread thread_self;
  int type_code;
  ABT_unit_type type;
  int thread_yield_code;
  int self_yield_code;
  int task_self_code;
  int is_primary_code;
  ABT_bool is_primary;
  ABT_xstream xstream;
  ABT_xstream self_xstream;
  int rank;
  ABT_bool on_primary;
  int create_code;
  int created_ran;
};

static struct sched_view g_sched_view;

/* A new stream whose main scheduler is a user scheduler running `run` over one FIFO pool, which
 * goes to `pool`. */
static ABT_xstream start_user_sched_stream(void (*run)(ABT_sched), ABT_pool* pool) {
  ABT_sched_def def = {ABT_SCHED_TYPE_ULT, NULL, run, NULL, NULL};
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPSC, ABT_TRUE, pool));
  ABT_sched sched;
  OK(ABT_sched_create(&def, 1, pool, ABT_SCHED_CONFIG_NULL, &sched));
  ABT_xstream xs;
  OK(ABT_xstream_create(sched, &xs));
  return xs;
}

/* The loop of a minimal user scheduler: runs what `pool` holds, checking events every 16 units,
 * until asked to stop. */
static void run_until_stopped(ABT_sched sched, ABT_pool pool) {
  for (int n = 0;; n++) {
    ABT_thread t;
    OK(ABT_pool_pop_thread(pool, &t));
    if (t != ABT_THREAD_NULL) OK(ABT_self_schedule(t, ABT_POOL_NULL));
    if (n % 16 == 0) {
      OK(ABT_xstream_check_events(sched));
      ABT_bool stop = ABT_FALSE;
      OK(ABT_sched_has_to_stop(sched, &stop));
      if (stop == ABT_TRUE) break;
    }
  }
}

static void viewing_sched_run(ABT_sched sched) {
  ABT_pool pool;
  OK(ABT_sched_get_pools(sched, 1, 0, &pool));
  struct sched_view* v = &g_sched_view;
  if (!v->seen) {
    v->thread = (ABT_thread)GARBAGE;
    v->get_thread_code = ABT_self_get_thread(&v->thread);
    v->thread_self_code = ABT_thread_self(&v->thread_self);
    v->type_code = ABT_self_get_type(&v->type);
    v->thread_yield_code = ABT_thread_yield();
    v->self_yield_code = ABT_self_yield();
    ABT_task task;
    v->task_self_code = ABT_task_self(&task);
    v->is_primary_code = ABT_self_is_primary(&v->is_primary);
    /* What any ULT may do: its stream, a new unit in its pool. */
    OK(ABT_xstream_self(&v->xstream));
    OK(ABT_self_get_xstream(&v->self_xstream));
    OK(ABT_xstream_self_rank(&v->rank));
    OK(ABT_self_on_primary_xstream(&v->on_primary));
    v->create_code = ABT_thread_create(pool, add_one, &v->created_ran, ABT_THREAD_ATTR_NULL, NULL);
    abt_test_store(&v->seen, 1);
  }
  run_until_stopped(sched, pool);
}

static void test_scheduler_is_a_ult(void) {
  abt_test_start();
  memset(&g_sched_view, 0, sizeof g_sched_view);
  ABT_pool pool;
  ABT_xstream xs = start_user_sched_stream(viewing_sched_run, &pool);
  abt_test_wait_flag(&g_sched_view.seen);
  struct sched_view* v = &g_sched_view;
  OK(v->get_thread_code);
  CHECK(v->thread != ABT_THREAD_NULL && v->thread != (ABT_thread)GARBAGE);
  OK(v->thread_self_code);
  CHECK(v->thread_self == v->thread);
  OK(v->type_code);
  CHECK(v->type == ABT_UNIT_TYPE_THREAD);
  OK(v->thread_yield_code);
  OK(v->self_yield_code);
  CHECK_RET(v->task_self_code, ABT_ERR_INV_TASK);
  OK(v->is_primary_code);
  CHECK(v->is_primary == ABT_FALSE);
  CHECK(v->xstream == xs);
  CHECK(v->self_xstream == xs);
  int rank = -1;
  OK(ABT_xstream_get_rank(xs, &rank));
  CHECK(v->rank == rank);
  CHECK(v->on_primary == ABT_FALSE);
  OK(v->create_code);
  abt_test_wait_flag(&v->created_ran);
  ABT_xstream last = ABT_XSTREAM_NULL;
  OK(ABT_thread_get_last_xstream(v->thread, &last));
  CHECK(last == xs);
  /* Its handle answers queries like a running ULT's. */
  ABT_thread_state state;
  OK(ABT_thread_get_state(v->thread, &state));
  CHECK(state == ABT_THREAD_STATE_RUNNING);
  /* And it schedules work. */
  int count = 0;
  OK(ABT_thread_create(pool, add_one, &count, ABT_THREAD_ATTR_NULL, NULL));
  abt_test_wait_count(&count, 1);
  OK(ABT_xstream_free(&xs));
  abt_test_stop();
}

/* A yield in a user main scheduler's run: Argobots' scheduler is a ULT, whose yield goes to its
 * parent (the stream's root) and comes straight back; a tool sees it start, yield and run. */
struct sched_yield_view {
  int seen;
  ABT_thread thread;
  int thread_yield_code;
  int self_yield_code;
};

static struct sched_yield_view g_sched_yield;

static void yielding_sched_run(ABT_sched sched) {
  ABT_pool pool;
  OK(ABT_sched_get_pools(sched, 1, 0, &pool));
  struct sched_yield_view* v = &g_sched_yield;
  if (!abt_test_load(&v->seen)) {
    OK(ABT_self_get_thread(&v->thread));
    v->thread_yield_code = ABT_thread_yield();
    v->self_yield_code = ABT_self_yield();
    abt_test_store(&v->seen, 1);
  }
  run_until_stopped(sched, pool);
}

static void test_scheduler_yield(void) {
  abt_test_start();
  memset(&g_sched_yield, 0, sizeof g_sched_yield);
  clear_log();
  OK(ABT_thread_self(&g_primary));
  OK(ABT_tool_register_thread_callback(
      record_event, EV(CREATE) | EV(RUN) | EV(YIELD) | EV(FINISH) | EV(JOIN) | EV(FREE), &g_log));
  ABT_pool pool;
  ABT_xstream xs = start_user_sched_stream(yielding_sched_run, &pool);
  abt_test_wait_flag(&g_sched_yield.seen);
  struct sched_yield_view* v = &g_sched_yield;
  OK(v->thread_yield_code);
  OK(v->self_yield_code);
  /* Units still run under it after the yields. */
  int count = 0;
  OK(ABT_thread_create(pool, add_one, &count, ABT_THREAD_ATTR_NULL, NULL));
  abt_test_wait_count(&count, 1);
  OK(ABT_xstream_free(&xs));
  OK(ABT_tool_register_thread_callback(NULL, ABT_TOOL_EVENT_THREAD_NONE, NULL));
  /* Created, started by the stream's root (RUN), then each yield: YIELD (sync type USER), RUN;
   * at the stream's end it returns (FINISH), is joined and freed. A tool that tracks each ULT's
   * state (Argobots' test/util/abttest.c) needs all of them, in this order. */
  const uint64_t expected[] = {EV(CREATE), EV(RUN),    EV(YIELD), EV(RUN),  EV(YIELD),
                               EV(RUN),    EV(FINISH), EV(JOIN),  EV(FREE), 0};
  check_events_of(v->thread, expected, __LINE__);
  for (int i = 0; i < 2; i++) {
    const int at = event_index(v->thread, EV(YIELD), i);
    CHECK(at >= 0 && g_log.sync[at] == ABT_SYNC_EVENT_TYPE_USER);
  }
  abt_test_stop();
}

/* A ULT that replaces its own stream's main scheduler continues in the new scheduler's pool:
 * a tool sees it yield and run again, as in Argobots, whose ULT yields to the new scheduler. */
struct replacing_view {
  ABT_xstream xstream;
  ABT_pool next_pool;
  ABT_thread self;
  int done;
};

static void replace_own_sched(void* arg) {
  struct replacing_view* v = arg;
  OK(ABT_self_get_thread(&v->self));
  OK(ABT_xstream_set_main_sched_basic(v->xstream, ABT_SCHED_BASIC, 1, &v->next_pool));
  ABT_pool pool = ABT_POOL_NULL;
  OK(ABT_self_get_last_pool(&pool));
  CHECK(pool == v->next_pool);
  abt_test_store(&v->done, 1);
}

static void test_replace_sched_events(void) {
  abt_test_start();
  clear_log();
  OK(ABT_thread_self(&g_primary));
  struct replacing_view v = {ABT_XSTREAM_NULL, ABT_POOL_NULL, ABT_THREAD_NULL, 0};
  OK(ABT_xstream_create(ABT_SCHED_NULL, &v.xstream));
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_TRUE, &v.next_pool));
  ABT_pool pool;
  OK(ABT_xstream_get_main_pools(v.xstream, 1, &pool));
  OK(ABT_tool_register_thread_callback(record_event, EV(RUN) | EV(YIELD), &g_log));
  ABT_thread thread;
  OK(ABT_thread_create(pool, replace_own_sched, &v, ABT_THREAD_ATTR_NULL, &thread));
  OK(ABT_thread_join(thread));
  OK(ABT_tool_register_thread_callback(NULL, ABT_TOOL_EVENT_THREAD_NONE, NULL));
  CHECK(v.done == 1 && v.self == thread);
  const uint64_t expected[] = {EV(RUN), EV(YIELD), EV(RUN), 0};
  check_events_of(thread, expected, __LINE__);
  OK(ABT_thread_free(&thread));
  OK(ABT_xstream_free(&v.xstream));
  abt_test_stop();
}

/* A yield in a stacked user scheduler's run goes back to its parent scheduler, which runs the
 * work queued behind the stacked scheduler before the stacked run continues. */
struct stacked_yield {
  int entered;
  int other_ran;
  int other_ran_at_return;
  int yield_code;
  int done;
};

static struct stacked_yield g_stacked_yield;

static void stacked_yielding_run(ABT_sched sched) {
  struct stacked_yield* s = &g_stacked_yield;
  if (!abt_test_load(&s->entered)) {
    abt_test_store(&s->entered, 1);
    s->yield_code = ABT_thread_yield();
    s->other_ran_at_return = abt_test_load(&s->other_ran);
    abt_test_store(&s->done, 1);
  }
  for (;;) {
    OK(ABT_xstream_check_events(sched));
    ABT_bool stop = ABT_FALSE;
    OK(ABT_sched_has_to_stop(sched, &stop));
    if (stop == ABT_TRUE) break;
  }
}

static void test_stacked_scheduler_yield(void) {
  abt_test_start();
  memset(&g_stacked_yield, 0, sizeof g_stacked_yield);
  /* A stream of its own whose main pool holds the stacked scheduler, then one more unit. */
  ABT_pool main_pool;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPSC, ABT_TRUE, &main_pool));
  ABT_sched main_sched;
  OK(ABT_sched_create_basic(ABT_SCHED_BASIC, 1, &main_pool, ABT_SCHED_CONFIG_NULL, &main_sched));
  ABT_sched_def def = {ABT_SCHED_TYPE_ULT, NULL, stacked_yielding_run, NULL, NULL};
  ABT_pool stacked_pool;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPSC, ABT_TRUE, &stacked_pool));
  ABT_sched stacked;
  OK(ABT_sched_create(&def, 1, &stacked_pool, ABT_SCHED_CONFIG_NULL, &stacked));
  OK(ABT_pool_add_sched(main_pool, stacked));
  OK(ABT_thread_create(main_pool, add_one, &g_stacked_yield.other_ran, ABT_THREAD_ATTR_NULL, NULL));
  ABT_xstream xs;
  OK(ABT_xstream_create(main_sched, &xs));
  abt_test_wait_flag(&g_stacked_yield.done);
  OK(g_stacked_yield.yield_code);
  CHECK(g_stacked_yield.other_ran_at_return == 1);
  OK(ABT_xstream_free(&xs));
  abt_test_stop();
}

struct run_unit_args {
  ABT_pool idle;
  int count;
  int task_code;
};

static void run_units_from_ult(void* arg) {
  struct run_unit_args* a = arg;
  for (int i = 0; i < 2; i++) {
    ABT_unit unit = ABT_UNIT_NULL;
    OK(ABT_pool_pop(a->idle, &unit));
    CHECK(unit != ABT_UNIT_NULL);
    OK(ABT_xstream_run_unit(unit, a->idle));
  }
}

static void run_unit_from_tasklet(void* arg) {
  struct run_unit_args* a = arg;
  a->task_code = ABT_xstream_run_unit((ABT_unit)GARBAGE, a->idle);
}

static void test_run_unit_from_ult(void) {
  abt_test_start();
  struct run_unit_args a = {ABT_POOL_NULL, 0, -1};
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &a.idle));
  ABT_thread t;
  ABT_task k;
  OK(ABT_thread_create(a.idle, add_one, &a.count, ABT_THREAD_ATTR_NULL, &t));
  OK(ABT_task_create(a.idle, add_one, &a.count, &k));
  ABT_thread runner;
  OK(ABT_thread_create(abt_test_pools[abt_test_num_xstreams - 1], run_units_from_ult, &a,
                       ABT_THREAD_ATTR_NULL, &runner));
  OK(ABT_thread_free(&runner));
  OK(ABT_thread_free(&t));
  OK(ABT_task_free(&k));
  CHECK(a.count == 2);
  /* The primary ULT may do it too; a tasklet and an external thread may not. */
  OK(ABT_thread_create(a.idle, add_one, &a.count, ABT_THREAD_ATTR_NULL, &t));
  ABT_unit unit;
  OK(ABT_pool_pop(a.idle, &unit));
  OK(ABT_xstream_run_unit(unit, a.idle));
  OK(ABT_thread_free(&t));
  CHECK(a.count == 3);
  OK(ABT_task_create(abt_test_pools[0], run_unit_from_tasklet, &a, &k));
  OK(ABT_task_free(&k));
  CHECK_RET(a.task_code, ABT_ERR_INV_THREAD);
  OK(ABT_pool_free(&a.idle));
  abt_test_stop();
}

/* ---------------------------------------------------------------------------------------- */
/* The primary ULT under a user main scheduler; its associated pool                           */
/* ---------------------------------------------------------------------------------------- */

/* A user scheduler that reads its pool list once, as many Argobots programs' schedulers do; any
 * error from the event checks counts as "stop". */
static void read_once_sched_run(ABT_sched sched) {
  int num = 0;
  OK(ABT_sched_get_num_pools(sched, &num));
  CHECK(num >= 1 && num <= 4);
  ABT_pool pools[4];
  OK(ABT_sched_get_pools(sched, num, 0, pools));
  for (int n = 1;; n++) {
    for (int i = 0; i < num; i++) {
      ABT_unit unit = ABT_UNIT_NULL;
      OK(ABT_pool_pop(pools[i], &unit));
      if (unit != ABT_UNIT_NULL) OK(ABT_xstream_run_unit(unit, pools[i]));
    }
    if (n % 8 == 0) {
      if (ABT_xstream_check_events(sched) != ABT_SUCCESS) break;
      ABT_bool stop = ABT_FALSE;
      if (ABT_sched_has_to_stop(sched, &stop) != ABT_SUCCESS || stop == ABT_TRUE) break;
    }
  }
}

static void test_primary_under_user_sched(void) {
  abt_test_start();
  ABT_pool pool;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_TRUE, &pool));
  ABT_sched_def def = {ABT_SCHED_TYPE_ULT, NULL, read_once_sched_run, NULL, NULL};
  ABT_sched sched;
  OK(ABT_sched_create(&def, 1, &pool, ABT_SCHED_CONFIG_NULL, &sched));
  OK(ABT_xstream_set_main_sched(abt_test_xstreams[0], sched));
  /* The primary ULT now lives in the new scheduler's pool: it blocks and comes back. */
  ABT_pool last = ABT_POOL_NULL;
  OK(ABT_self_get_last_pool(&last));
  CHECK(last == pool);
  int count = 0;
  for (int i = 0; i < 4; i++) {
    ABT_thread t;
    OK(ABT_thread_create(pool, add_one, &count, ABT_THREAD_ATTR_NULL, &t));
    OK(ABT_thread_free(&t)); /* blocks the primary ULT until t ends */
    OK(ABT_thread_yield());
  }
  CHECK(count == 4);
  abt_test_stop();
}

static void test_primary_associated_pool(void) {
  abt_test_start();
  ABT_thread primary;
  OK(ABT_thread_self(&primary));
  /* A pool the primary stream's scheduler serves: its main pool of another kind. */
  ABT_pool pool;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_TRUE, &pool));
  ABT_pool pools[2] = {abt_test_pools[0], pool};
  ABT_sched sched;
  OK(ABT_sched_create_basic(ABT_SCHED_BASIC, 2, pools, ABT_SCHED_CONFIG_NULL, &sched));
  OK(ABT_xstream_set_main_sched(abt_test_xstreams[0], sched));
  OK(ABT_thread_set_associated_pool(primary, pool));
  ABT_pool last = ABT_POOL_NULL;
  OK(ABT_thread_get_last_pool(primary, &last));
  CHECK(last == pool);
  OK(ABT_thread_yield()); /* goes through `pool` and comes back */
  OK(ABT_self_set_associated_pool(abt_test_pools[0]));
  OK(ABT_thread_yield());
  OK(ABT_thread_get_last_pool(primary, &last));
  CHECK(last == abt_test_pools[0]);
  abt_test_stop();
}

/* ---------------------------------------------------------------------------------------- */
/* ABT_self_suspend_to and ABT_self_exit_to switch in one step                               */
/* ---------------------------------------------------------------------------------------- */

struct switch_pair {
  ABT_pool pool;
  ABT_thread x, y;   /* written by the primary ULT when its create returns */
  ABT_thread x_self; /* X's handle as X sees it (Y may run before the create returned) */
  ABT_thread_state x_state_seen_by_y;
  int y_code;
  int x_back;
  int x_returned_from_exit;
  int y_done;
};

static void y_resumes_x(void* arg) {
  struct switch_pair* p = arg;
  OK(ABT_thread_get_state(p->x_self, &p->x_state_seen_by_y));
  p->y_code = ABT_self_resume_yield_to(p->x_self);
}

static void x_suspends_to_y(void* arg) {
  struct switch_pair* p = arg;
  OK(ABT_self_get_thread(&p->x_self));
  OK(ABT_thread_create(p->pool, y_resumes_x, p, ABT_THREAD_ATTR_NULL, &p->y));
  OK(ABT_self_suspend_to(p->y));
  abt_test_store(&p->x_back, 1);
}

static void y_looks_at_x(void* arg) {
  struct switch_pair* p = arg;
  OK(ABT_thread_get_state(p->x_self, &p->x_state_seen_by_y));
  /* The exited ULT is in no pool: the only unit queued is none. */
  size_t size = 99;
  OK(ABT_pool_get_size(p->pool, &size));
  p->y_code = size == 0 ? ABT_SUCCESS : ABT_ERR_OTHER;
  abt_test_store(&p->y_done, 1);
}

static void x_exits_to_y(void* arg) {
  struct switch_pair* p = arg;
  OK(ABT_self_get_thread(&p->x_self));
  OK(ABT_thread_create(p->pool, y_looks_at_x, p, ABT_THREAD_ATTR_NULL, &p->y));
  ABT_self_exit_to(p->y);
  p->x_returned_from_exit = 1;
}

static void test_suspend_exit_to(void) {
  abt_test_start();
  for (int round = 0; round < abt_test_scaled(20); round++) {
    struct switch_pair p;
    memset(&p, 0, sizeof p);
    OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPSC, ABT_TRUE, &p.pool));
    ABT_xstream xs;
    OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &p.pool, ABT_SCHED_CONFIG_NULL, &xs));
    /* Suspend-to: the caller is suspended when the target runs, so the target can resume it. */
    OK(ABT_thread_create(p.pool, x_suspends_to_y, &p, ABT_THREAD_ATTR_NULL, &p.x));
    abt_test_wait_flag(&p.x_back);
    OK(ABT_thread_free(&p.y));
    OK(ABT_thread_free(&p.x));
    CHECK(p.x_state_seen_by_y == ABT_THREAD_STATE_BLOCKED);
    OK(p.y_code);
    /* Exit-to: the caller has terminated when the target runs, and is in no pool. */
    p.y_code = -1;
    OK(ABT_thread_create(p.pool, x_exits_to_y, &p, ABT_THREAD_ATTR_NULL, &p.x));
    abt_test_wait_flag(&p.y_done);
    OK(ABT_thread_free(&p.y));
    OK(ABT_thread_free(&p.x));
    CHECK(p.x_state_seen_by_y == ABT_THREAD_STATE_TERMINATED);
    OK(p.y_code);
    CHECK(p.x_returned_from_exit == 0);
    OK(ABT_xstream_free(&xs));
  }
  abt_test_stop();
}

/* ---------------------------------------------------------------------------------------- */
/* Porter's checks: create functions set their output to NULL when they fail (Argobots 1.x)   */
/* ---------------------------------------------------------------------------------------- */

static void test_create_outputs_on_failure(void) {
  /* Not initialised. */
  ABT_thread t = (ABT_thread)GARBAGE;
  ABT_task k = (ABT_task)GARBAGE;
  ABT_xstream xs = (ABT_xstream)GARBAGE;
  ABT_pool pool = (ABT_pool)GARBAGE;
  ABT_sched sched = (ABT_sched)GARBAGE;
  ABT_thread_attr attr = (ABT_thread_attr)GARBAGE;
  CHECK_RET(ABT_thread_create(ABT_POOL_NULL, add_one, NULL, ABT_THREAD_ATTR_NULL, &t),
            ABT_ERR_UNINITIALIZED);
  CHECK(t == ABT_THREAD_NULL);
  CHECK_RET(ABT_xstream_create(ABT_SCHED_NULL, &xs), ABT_ERR_UNINITIALIZED);
  CHECK(xs == ABT_XSTREAM_NULL);
  CHECK_RET(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPSC, ABT_TRUE, &pool),
            ABT_ERR_UNINITIALIZED);
  CHECK(pool == ABT_POOL_NULL);
  CHECK_RET(ABT_sched_create_basic(ABT_SCHED_BASIC, 0, NULL, ABT_SCHED_CONFIG_NULL, &sched),
            ABT_ERR_UNINITIALIZED);
  CHECK(sched == ABT_SCHED_NULL);
  CHECK_RET(ABT_thread_attr_create(&attr), ABT_ERR_UNINITIALIZED);
  CHECK(attr == ABT_THREAD_ATTR_NULL);
  abt_test_start();
  /* Invalid arguments. */
  t = (ABT_thread)GARBAGE;
  CHECK_RET(ABT_thread_create(ABT_POOL_NULL, add_one, NULL, ABT_THREAD_ATTR_NULL, &t),
            ABT_ERR_INV_POOL);
  CHECK(t == ABT_THREAD_NULL);
  k = (ABT_task)GARBAGE;
  CHECK_RET(ABT_task_create(ABT_POOL_NULL, add_one, NULL, &k), ABT_ERR_INV_POOL);
  CHECK(k == ABT_TASK_NULL);
  t = (ABT_thread)GARBAGE;
  CHECK_RET(ABT_thread_create_on_xstream(ABT_XSTREAM_NULL, add_one, NULL, ABT_THREAD_ATTR_NULL, &t),
            ABT_ERR_INV_XSTREAM);
  CHECK(t == ABT_THREAD_NULL);
  /* A scheduler that is a stream's main scheduler already cannot start another stream. */
  ABT_sched in_use;
  OK(ABT_xstream_get_main_sched(abt_test_xstreams[0], &in_use));
  xs = (ABT_xstream)GARBAGE;
  CHECK_RET(ABT_xstream_create(in_use, &xs), ABT_ERR_INV_SCHED);
  CHECK(xs == ABT_XSTREAM_NULL);
  pool = (ABT_pool)GARBAGE;
  CHECK_RET(ABT_pool_create_basic((ABT_pool_kind)99, ABT_POOL_ACCESS_MPSC, ABT_TRUE, &pool),
            ABT_ERR_INV_POOL_KIND);
  CHECK(pool == ABT_POOL_NULL);
  sched = (ABT_sched)GARBAGE;
  CHECK_RET(ABT_sched_create_basic((ABT_sched_predef)99, 0, NULL, ABT_SCHED_CONFIG_NULL, &sched),
            ABT_ERR_INV_SCHED_PREDEF);
  CHECK(sched == ABT_SCHED_NULL);
  abt_test_stop();
}

int main(int argc, char** argv) {
  static const struct abt_test_case cases[] = {
      {"self_null_on_failure", test_self_null_on_failure},
      {"yield_outside_ult", test_yield_outside_ult},
      {"affinity_absent_cpus", test_affinity_absent_cpus},
      {"streams_past_max", test_streams_past_max},
      {"nested_finalize_external", test_nested_finalize_external},
      {"user_pool_is_empty", test_user_pool_is_empty},
      {"push_foreign_unit", test_push_foreign_unit},
      {"prio_default_pools", test_prio_default_pools},
      {"version", test_version},
      {"stack_bounds", test_stack_bounds},
      {"user_stack_guard", test_user_stack_guard},
      {"trigger_stack_dump", test_trigger_stack_dump},
      {"set_specific_race", test_set_specific_race},
      {"tool_events", test_tool_events},
      {"scheduler_is_a_ult", test_scheduler_is_a_ult},
      {"scheduler_yield", test_scheduler_yield},
      {"replace_sched_events", test_replace_sched_events},
      {"stacked_scheduler_yield", test_stacked_scheduler_yield},
      {"run_unit_from_ult", test_run_unit_from_ult},
      {"primary_under_user_sched", test_primary_under_user_sched},
      {"primary_associated_pool", test_primary_associated_pool},
      {"suspend_exit_to", test_suspend_exit_to},
      {"create_outputs_on_failure", test_create_outputs_on_failure},
  };
  return abt_test_main(argc, argv, cases, ABT_TEST_COUNT(cases));
}
