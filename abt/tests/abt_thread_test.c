// SPDX-License-Identifier: Apache-2.0
/* Work units: ABT_thread_* and ABT_thread_attr_*, ABT_task_*, ABT_self_*, ABT_key_*, and the
 * calling contexts Argobots distinguishes (primary ULT, ULT, tasklet, external thread), with the
 * error codes for invalid handles and misuse. */
#include "abt_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static void add_one(void* arg) {
  abt_test_add((int*)arg, 1);
}

static void noop(void* arg) {
  (void)arg;
}

/* ------------------------------------------------------------------------------------------ */
/* Creation, join and free                                                                     */

/* Where a unit ran, and whether it saw itself as Argobots says. */
struct probe {
  int rank;
  ABT_thread self;
  ABT_unit_id id;
  ABT_bool unnamed;
  ABT_unit_type type;
};

static void probe_self(void* arg) {
  struct probe* p = arg;
  OK(ABT_xstream_self_rank(&p->rank));
  OK(ABT_self_get_thread(&p->self));
  OK(ABT_self_get_thread_id(&p->id));
  OK(ABT_self_is_unnamed(&p->unnamed));
  OK(ABT_self_get_type(&p->type));
}

static void test_create_join_free(void) {
  abt_test_start();
  const int n = abt_test_num_xstreams;
  const int per_stream = abt_test_scaled(100);
  int count = 0;
  /* Named ULTs on every stream's pool, joined and freed in bulk. */
  ABT_thread* threads = malloc(sizeof(ABT_thread) * (size_t)(n * per_stream));
  CHECK(threads != NULL);
  for (int i = 0; i < n * per_stream; i++) {
    OK(ABT_thread_create(abt_test_pools[i % n], add_one, &count, ABT_THREAD_ATTR_NULL,
                         &threads[i]));
  }
  OK(ABT_thread_join_many(n * per_stream, threads));
  CHECK(abt_test_load(&count) == n * per_stream);
  OK(ABT_thread_free_many(n * per_stream, threads));
  for (int i = 0; i < n * per_stream; i++) CHECK(threads[i] == ABT_THREAD_NULL);
  free(threads);

  /* Unnamed ULTs are freed by the runtime. */
  count = 0;
  for (int i = 0; i < n * per_stream; i++) {
    OK(ABT_thread_create(abt_test_pools[i % n], add_one, &count, ABT_THREAD_ATTR_NULL, NULL));
  }
  abt_test_wait_count(&count, n * per_stream);

  /* create_on_xstream, create_many. */
  struct probe probes[16];
  ABT_thread named[16];
  for (int i = 0; i < n; i++) {
    OK(ABT_thread_create_on_xstream(abt_test_xstreams[i], probe_self, &probes[i],
                                    ABT_THREAD_ATTR_NULL, &named[i]));
  }
  for (int i = 0; i < n; i++) {
    ABT_unit_id id;
    OK(ABT_thread_get_id(named[i], &id));
    OK(ABT_thread_join(named[i]));
    CHECK(probes[i].rank == i);
    CHECK(probes[i].self == named[i]);
    CHECK(probes[i].id == id);
    CHECK(probes[i].unnamed == ABT_FALSE);
    CHECK(probes[i].type == ABT_UNIT_TYPE_THREAD);
    OK(ABT_thread_free(&named[i]));
    CHECK(named[i] == ABT_THREAD_NULL);
  }
  ABT_pool pool_list[16];
  void (*funcs[16])(void*);
  void* args[16];
  for (int i = 0; i < n; i++) {
    pool_list[i] = abt_test_pools[i];
    funcs[i] = probe_self;
    args[i] = &probes[i];
  }
  OK(ABT_thread_create_many(n, pool_list, funcs, args, ABT_THREAD_ATTR_NULL, named));
  OK(ABT_thread_free_many(n, named));
  for (int i = 0; i < n; i++) CHECK(probes[i].rank == i);
  /* An unnamed ULT knows it is unnamed. */
  probes[0].unnamed = ABT_FALSE;
  count = 0;
  OK(ABT_thread_create(abt_test_pools[n - 1], probe_self, &probes[0], ABT_THREAD_ATTR_NULL, NULL));
  OK(ABT_thread_create(abt_test_pools[n - 1], add_one, &count, ABT_THREAD_ATTR_NULL, NULL));
  abt_test_wait_count(&count, 1); /* the pool is FIFO: the probe has finished by now */
  CHECK(probes[0].unnamed == ABT_TRUE);
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* Joins of units that have not run                                                            */

/* What a child saw while its creator waited in ABT_thread_join or ABT_thread_free. */
struct join_probe {
  ABT_thread joiner;
  ABT_thread self;
  ABT_pool last_pool;
  ABT_bool is_primary;
  ABT_thread_state joiner_state;
  int rank;
};

static void probe_under_join(void* arg) {
  struct join_probe* p = arg;
  OK(ABT_self_get_thread(&p->self));
  OK(ABT_self_get_last_pool(&p->last_pool));
  OK(ABT_self_is_primary(&p->is_primary));
  OK(ABT_thread_get_state(p->joiner, &p->joiner_state));
  OK(ABT_xstream_self_rank(&p->rank));
}

/* Creates a child in the caller's pool and joins it with ABT_thread_join (`join_first`) or
 * ABT_thread_free: the child runs on the caller's stream, sees itself, its pool and a primary
 * flag of its own, and the caller as blocked in the join. */
static void join_child_and_check(ABT_pool pool, int rank, int join_first) {
  struct join_probe p;
  memset(&p, 0, sizeof p);
  p.rank = -1;
  OK(ABT_self_get_thread(&p.joiner));
  ABT_thread child;
  OK(ABT_thread_create(pool, probe_under_join, &p, ABT_THREAD_ATTR_NULL, &child));
  if (join_first) OK(ABT_thread_join(child));
  const ABT_thread handle = child;
  OK(ABT_thread_free(&child));
  CHECK(child == ABT_THREAD_NULL);
  CHECK(p.self == handle);
  CHECK(p.last_pool == pool);
  CHECK(p.is_primary == ABT_FALSE);
  CHECK(p.joiner_state == ABT_THREAD_STATE_BLOCKED);
  CHECK(p.rank == rank);
}

/* The order in which units ran (`next` counts them). */
struct run_order {
  int next;
  int first;
  int second;
  int spawned;
  int child_end;
};

static void record_first(void* arg) {
  struct run_order* o = arg;
  o->first = abt_test_add(&o->next, 1);
}

static void record_second(void* arg) {
  struct run_order* o = arg;
  o->second = abt_test_add(&o->next, 1);
}

static void record_spawned(void* arg) {
  struct run_order* o = arg;
  o->spawned = abt_test_add(&o->next, 1);
}

/* Queues an unnamed unit behind itself in its pool, yields, then records its end. */
static void spawn_and_yield(void* arg) {
  struct run_order* o = arg;
  ABT_pool pool;
  OK(ABT_self_get_last_pool(&pool));
  OK(ABT_thread_create(pool, record_spawned, o, ABT_THREAD_ATTR_NULL, NULL));
  OK(ABT_thread_yield());
  o->child_end = abt_test_add(&o->next, 1);
}

/* A link of a chain: creates the next link in its pool and frees it (arg: links left). */
struct chain_state {
  ABT_pool pool;
  int links;
  int ran;
};

static void chain_link(void* arg) {
  struct chain_state* c = arg;
  abt_test_add(&c->ran, 1);
  if (abt_test_add(&c->links, -1) <= 0) return;
  ABT_thread next;
  OK(ABT_thread_create(c->pool, chain_link, c, ABT_THREAD_ATTR_NULL, &next));
  OK(ABT_thread_free(&next));
  CHECK(next == ABT_THREAD_NULL);
}

struct join_case {
  ABT_pool pool;
  int rank;
};

/* Where a joined child that migrates itself ran before and after its migration. */
struct migrating_child {
  ABT_xstream target;
  int rank_before;
  int rank_after;
};

static void migrate_and_yield(void* arg) {
  struct migrating_child* m = arg;
  ABT_thread self;
  OK(ABT_self_get_thread(&self));
  OK(ABT_xstream_self_rank(&m->rank_before));
  OK(ABT_thread_migrate_to_xstream(self, m->target));
  OK(ABT_thread_yield());
  OK(ABT_xstream_self_rank(&m->rank_after));
}

static void join_cases_in_ult(void* arg) {
  const struct join_case* c = arg;
  join_child_and_check(c->pool, c->rank, 0);
  join_child_and_check(c->pool, c->rank, 1);

  /* A join keeps the pool's order: a unit queued before the joined one runs first. */
  struct run_order o;
  memset(&o, 0, sizeof o);
  ABT_thread first, second;
  OK(ABT_thread_create(c->pool, record_first, &o, ABT_THREAD_ATTR_NULL, &first));
  OK(ABT_thread_create(c->pool, record_second, &o, ABT_THREAD_ATTR_NULL, &second));
  OK(ABT_thread_free(&second));
  CHECK(o.first == 1 && o.second == 2);
  OK(ABT_thread_free(&first));

  /* A joined child that yields lets the units queued behind it run; the joiner goes on only
   * once the child has ended. */
  memset(&o, 0, sizeof o);
  ABT_thread child;
  OK(ABT_thread_create(c->pool, spawn_and_yield, &o, ABT_THREAD_ATTR_NULL, &child));
  OK(ABT_thread_free(&child));
  CHECK(o.spawned == 1 && o.child_end == 2);

  /* A joined child may migrate to another stream; its joiner goes on on its own. */
  ABT_bool migration = ABT_FALSE;
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_ENABLED_MIGRATION, &migration));
  if (migration && abt_test_num_xstreams > 1) {
    const int target = (c->rank + 1) % abt_test_num_xstreams;
    struct migrating_child m = {abt_test_xstreams[target], -1, -1};
    OK(ABT_thread_create(c->pool, migrate_and_yield, &m, ABT_THREAD_ATTR_NULL, &child));
    OK(ABT_thread_free(&child));
    CHECK(m.rank_before == c->rank && m.rank_after == target);
    int rank = -1;
    OK(ABT_xstream_self_rank(&rank));
    CHECK(rank == c->rank);
  }

  /* A deep chain of joins, each link's child joined before it ran. */
  struct chain_state chain = {c->pool, abt_test_scaled(3000), 0};
  const int links = chain.links;
  chain_link(&chain);
  CHECK(abt_test_load(&chain.ran) == links);
}

static void test_join_of_units_not_run(void) {
  abt_test_start();
  const int n = abt_test_num_xstreams;
  /* From a ULT in each stream's main pool. */
  for (int i = 0; i < n; i++) {
    struct join_case c = {abt_test_pools[i], i};
    ABT_thread t;
    OK(ABT_thread_create(abt_test_pools[i], join_cases_in_ult, &c, ABT_THREAD_ATTR_NULL, &t));
    OK(ABT_thread_free(&t));
  }
  /* From the primary ULT: its child is not the primary ULT, whichever stack it runs on. */
  struct join_case primary = {abt_test_pools[0], 0};
  join_cases_in_ult(&primary);
  abt_test_stop();
}

/* create_to runs the new ULT before the creator continues. */
static void create_to_from_ult(void* arg) {
  int* flag = arg;
  ABT_pool pool;
  OK(ABT_self_get_last_pool(&pool));
  ABT_thread child;
  OK(ABT_thread_create_to(pool, add_one, flag, ABT_THREAD_ATTR_NULL, &child));
  CHECK(abt_test_load(flag) == 1);
  OK(ABT_thread_free(&child));
}

static void test_create_to_and_revive(void) {
  abt_test_start();
  for (int i = 0; i < abt_test_num_xstreams; i++) {
    int flag = 0;
    ABT_thread thread;
    OK(ABT_thread_create(abt_test_pools[i], create_to_from_ult, &flag, ABT_THREAD_ATTR_NULL,
                         &thread));
    OK(ABT_thread_free(&thread));
  }
  /* A joined ULT revives with a new function and argument, on another pool. */
  int a = 0, b = 0;
  ABT_thread thread;
  OK(ABT_thread_create(abt_test_pools[0], add_one, &a, ABT_THREAD_ATTR_NULL, &thread));
  OK(ABT_thread_join(thread));
  const int last = abt_test_num_xstreams - 1;
  OK(ABT_thread_revive(abt_test_pools[last], add_one, &b, &thread));
  OK(ABT_thread_join(thread));
  CHECK(a == 1 && b == 1);
  void* arg = NULL;
  OK(ABT_thread_get_arg(thread, &arg));
  CHECK(arg == &b);
  ABT_xstream ran_on;
  OK(ABT_thread_get_last_xstream(thread, &ran_on));
  CHECK(ran_on == abt_test_xstreams[last]);
  /* Reviving a ULT that has not terminated is an error. */
  ABT_pool idle;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_TRUE, &idle));
  ABT_thread waiting;
  OK(ABT_thread_create(idle, noop, NULL, ABT_THREAD_ATTR_NULL, &waiting));
  CHECK_RET(ABT_thread_revive(abt_test_pools[0], noop, NULL, &waiting), ABT_ERR_INV_THREAD);
  OK(ABT_thread_free(&thread));
  CHECK_RET(ABT_thread_revive(abt_test_pools[0], noop, NULL, &thread), ABT_ERR_INV_THREAD);
  /* Tasklets revive too. */
  ABT_task task;
  OK(ABT_task_create(abt_test_pools[last], add_one, &a, &task));
  OK(ABT_task_join(task));
  OK(ABT_task_revive(abt_test_pools[0], add_one, &b, &task));
  OK(ABT_task_free(&task));
  CHECK(a == 2 && b == 2);
  ABT_xstream xstream;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &idle, ABT_SCHED_CONFIG_NULL, &xstream));
  OK(ABT_thread_free(&waiting));
  OK(ABT_xstream_free(&xstream));
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* Attributes and queries                                                                      */

/* What a ULT found out about its stack. */
struct stack_probe {
  size_t size;
  uintptr_t local_address; /* an address on its stack, as a number: the frame is gone later */
};

static void probe_stack(void* arg) {
  struct stack_probe* p = arg;
  char local = 0;
  ABT_thread self;
  OK(ABT_thread_self(&self));
  OK(ABT_thread_get_stacksize(self, &p->size));
  p->local_address = (uintptr_t)&local;
  /* Keep the address from being optimised into nothing. */
  __asm__ volatile("" : : "r"(&local) : "memory");
}

static void test_attributes(void) {
  abt_test_start();
  ABT_thread_attr attr;
  size_t size = 0, default_size = 0;
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_DEFAULT_THREAD_STACKSIZE, &default_size));
  OK(ABT_thread_attr_create(&attr));
  OK(ABT_thread_attr_get_stacksize(attr, &size));
  CHECK(size == default_size);
  OK(ABT_thread_attr_set_stacksize(attr, 1 << 20));
  OK(ABT_thread_attr_get_stacksize(attr, &size));
  CHECK(size == 1 << 20);
  for (int i = 0; i < abt_test_num_xstreams; i++) {
    struct stack_probe p = {0, 0};
    ABT_thread thread;
    OK(ABT_thread_create(abt_test_pools[i], probe_stack, &p, attr, &thread));
    OK(ABT_thread_join(thread));
    CHECK(p.size == 1 << 20);
    size_t thread_size = 0;
    OK(ABT_thread_get_stacksize(thread, &thread_size));
    CHECK(thread_size == 1 << 20);
    ABT_thread_attr copy;
    OK(ABT_thread_get_attr(thread, &copy));
    OK(ABT_thread_attr_get_stacksize(copy, &size));
    CHECK(size == 1 << 20);
    OK(ABT_thread_attr_free(&copy));
    OK(ABT_thread_free(&thread));
  }
  /* A stack the caller provides is the one the ULT runs on. */
  const size_t user_size = 256 * 1024;
  char* memory = NULL;
  CHECK(posix_memalign((void**)&memory, 4096, user_size) == 0);
  OK(ABT_thread_attr_set_stack(attr, memory, user_size));
  void* addr = NULL;
  OK(ABT_thread_attr_get_stack(attr, &addr, &size));
  CHECK(addr == memory && size == user_size);
  struct stack_probe p = {0, 0};
  ABT_thread thread;
  OK(ABT_thread_create(abt_test_pools[abt_test_num_xstreams - 1], probe_stack, &p, attr, &thread));
  OK(ABT_thread_free(&thread));
  CHECK(p.local_address >= (uintptr_t)memory && p.local_address < (uintptr_t)memory + user_size);
  CHECK(p.size == user_size);
  free(memory);
  OK(ABT_info_print_thread_attr(stdout, attr));
  OK(ABT_thread_attr_free(&attr));
  CHECK(attr == ABT_THREAD_ATTR_NULL);
  CHECK_RET(ABT_thread_attr_free(&attr), ABT_ERR_INV_THREAD_ATTR);
  CHECK_RET(ABT_thread_attr_get_stacksize(ABT_THREAD_ATTR_NULL, &size), ABT_ERR_INV_THREAD_ATTR);
  CHECK_RET(ABT_thread_attr_set_stacksize(ABT_THREAD_ATTR_NULL, 4096), ABT_ERR_INV_THREAD_ATTR);
  abt_test_stop();
}

/* Suspends once, then ends; the flag says it got as far as suspending. */
static void suspend_once(void* arg) {
  abt_test_store((int*)arg, 1);
  OK(ABT_self_suspend());
  abt_test_store((int*)arg, 2);
}

static void test_queries_and_states(void) {
  abt_test_start();
  /* A ULT in a pool no scheduler serves stays ready, and everything about it can be read. */
  ABT_pool idle;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &idle));
  int count = 0, other_count = 0;
  ABT_thread thread, other;
  OK(ABT_thread_create(idle, add_one, &count, ABT_THREAD_ATTR_NULL, &thread));
  OK(ABT_thread_create(idle, add_one, &other_count, ABT_THREAD_ATTR_NULL, &other));
  ABT_thread_state state;
  OK(ABT_thread_get_state(thread, &state));
  CHECK(state == ABT_THREAD_STATE_READY);
  ABT_pool pool = ABT_POOL_NULL;
  OK(ABT_thread_get_last_pool(thread, &pool));
  CHECK(pool == idle);
  int pool_id = -1, thread_pool_id = -2;
  OK(ABT_pool_get_id(idle, &pool_id));
  OK(ABT_thread_get_last_pool_id(thread, &thread_pool_id));
  CHECK(pool_id == thread_pool_id);
  void* arg = NULL;
  OK(ABT_thread_get_arg(thread, &arg));
  CHECK(arg == &count);
  void (*func)(void*) = NULL;
  OK(ABT_thread_get_thread_func(thread, &func));
  CHECK(func == add_one);
  ABT_unit_id id = 0, other_id = 0;
  OK(ABT_thread_get_id(thread, &id));
  OK(ABT_thread_get_id(other, &other_id));
  CHECK(id != other_id);
  ABT_bool flag = ABT_TRUE;
  OK(ABT_thread_is_unnamed(thread, &flag));
  CHECK(flag == ABT_FALSE);
  OK(ABT_thread_is_primary(thread, &flag));
  CHECK(flag == ABT_FALSE);
  OK(ABT_thread_equal(thread, thread, &flag));
  CHECK(flag == ABT_TRUE);
  OK(ABT_thread_equal(thread, other, &flag));
  CHECK(flag == ABT_FALSE);
  /* set_arg changes what the function receives. */
  OK(ABT_thread_set_arg(other, &count));
  ABT_xstream xstream;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &idle, ABT_SCHED_CONFIG_NULL, &xstream));
  OK(ABT_thread_join(thread));
  OK(ABT_thread_join(other));
  CHECK(count == 2 && other_count == 0);
  OK(ABT_thread_get_state(thread, &state));
  CHECK(state == ABT_THREAD_STATE_TERMINATED);
  ABT_xstream last = ABT_XSTREAM_NULL;
  OK(ABT_thread_get_last_xstream(thread, &last));
  CHECK(last == xstream);
  OK(ABT_thread_free(&thread));
  OK(ABT_thread_free(&other));

  /* A suspended ULT is blocked until resumed. */
  int stage = 0;
  OK(ABT_thread_create(idle, suspend_once, &stage, ABT_THREAD_ATTR_NULL, &thread));
  abt_test_wait_count(&stage, 1);
  do {
    OK(ABT_thread_get_state(thread, &state));
    if (state != ABT_THREAD_STATE_BLOCKED) OK(ABT_thread_yield());
  } while (state != ABT_THREAD_STATE_BLOCKED);
  CHECK(abt_test_load(&stage) == 1);
  OK(ABT_thread_resume(thread));
  OK(ABT_thread_free(&thread));
  CHECK(stage == 2);
  OK(ABT_xstream_free(&xstream));
  OK(ABT_pool_free(&idle));

  /* The primary ULT. */
  ABT_thread self;
  OK(ABT_thread_self(&self));
  OK(ABT_thread_is_primary(self, &flag));
  CHECK(flag == ABT_TRUE);
  OK(ABT_thread_get_state(self, &state));
  CHECK(state == ABT_THREAD_STATE_RUNNING);
  OK(ABT_thread_self_id(&id));
  OK(ABT_thread_get_id(self, &other_id));
  CHECK(id == other_id);
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* Yield, suspend, resume, exit and their _to forms, on one stream so that orders are exact     */

/* A trace of letters that the ULTs of one scenario append, in the order they run. */
struct trace {
  char text[32];
  int length;
  ABT_pool side;   /* a pool no scheduler serves, to hold targets of the _to calls */
  ABT_thread peer; /* the ULT a scenario hands control to */
};

static void put(struct trace* t, char c) {
  CHECK(t->length < 31);
  t->text[t->length++] = c;
  t->text[t->length] = '\0';
}

static struct trace trace_now;

static void letter_a_yield_b(void* arg) {
  (void)arg;
  for (int i = 0; i < 3; i++) {
    put(&trace_now, 'a');
    OK(ABT_thread_yield());
  }
}

static void letter_b_yield(void* arg) {
  (void)arg;
  for (int i = 0; i < 3; i++) {
    put(&trace_now, 'b');
    OK(ABT_self_yield());
  }
}

static void letter(void* arg) {
  put(&trace_now, (char)(intptr_t)arg);
}

/* yield_to a ULT that is still in the shared pool (ABT_thread_yield_to takes it out). */
static void a_yield_to_peer(void* arg) {
  (void)arg;
  put(&trace_now, 'a');
  OK(ABT_thread_yield_to(trace_now.peer));
  put(&trace_now, 'A');
}

/* The ABT_self_*_to forms take a ULT the caller popped itself. */
static ABT_thread pop_peer(void) {
  ABT_thread peer = ABT_THREAD_NULL;
  OK(ABT_pool_pop_thread(trace_now.side, &peer));
  CHECK(peer == trace_now.peer);
  return peer;
}

static void a_self_yield_to(void* arg) {
  (void)arg;
  put(&trace_now, 'a');
  OK(ABT_self_yield_to(pop_peer()));
  put(&trace_now, 'A');
}

static ABT_thread first_ult;

static void c_resume_first(void* arg) {
  (void)arg;
  put(&trace_now, 'c');
  OK(ABT_thread_resume(first_ult));
}

static void a_suspend_to(void* arg) {
  (void)arg;
  put(&trace_now, 'a');
  OK(ABT_self_suspend_to(pop_peer()));
  put(&trace_now, 'A');
}

static void a_exit_to(void* arg) {
  (void)arg;
  put(&trace_now, 'a');
  OK(ABT_self_exit_to(pop_peer()));
  put(&trace_now, 'X');
}

static void a_suspend(void* arg) {
  (void)arg;
  put(&trace_now, 'a');
  OK(ABT_self_suspend());
  put(&trace_now, 'A');
}

static void b_resume_yield_to_first(void* arg) {
  (void)arg;
  put(&trace_now, 'b');
  OK(ABT_self_resume_yield_to(first_ult));
  put(&trace_now, 'B');
}

static void a_suspend_then_resume_second(void* arg) {
  ABT_thread* second = arg;
  put(&trace_now, 'a');
  OK(ABT_self_suspend());
  put(&trace_now, 'A');
  OK(ABT_thread_resume(*second));
}

static void b_resume_suspend_to_first(void* arg) {
  (void)arg;
  put(&trace_now, 'b');
  OK(ABT_self_resume_suspend_to(first_ult));
  put(&trace_now, 'B');
}

static void b_resume_exit_to_first(void* arg) {
  (void)arg;
  put(&trace_now, 'b');
  OK(ABT_self_resume_exit_to(first_ult));
  put(&trace_now, 'X');
}

static void a_self_exit(void* arg) {
  (void)arg;
  put(&trace_now, 'a');
  OK(ABT_self_exit());
  put(&trace_now, 'X');
}

static void a_thread_exit(void* arg) {
  (void)arg;
  put(&trace_now, 'a');
  OK(ABT_thread_exit());
  put(&trace_now, 'X');
}

/* One scenario: `first` and `second` in a new stream's FIFO pool (second may be NULL), `peer`
 * in the side pool (may be NULL); the trace must read `expected` once all are done. */
static void scenario(void (*first)(void*), void* first_arg, void (*second)(void*), void* second_arg,
                     void (*peer)(void*), void* peer_arg, const char* expected) {
  static int number = 0;
  printf("  scenario %d: expecting \"%s\"\n", ++number, expected);
  fflush(stdout);
  ABT_pool pool;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPSC, ABT_FALSE, &pool));
  memset(&trace_now, 0, sizeof trace_now);
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &trace_now.side));
  ABT_thread units[3] = {ABT_THREAD_NULL, ABT_THREAD_NULL, ABT_THREAD_NULL};
  if (peer) {
    OK(ABT_thread_create(trace_now.side, peer, peer_arg, ABT_THREAD_ATTR_NULL, &units[2]));
    trace_now.peer = units[2];
  }
  OK(ABT_thread_create(pool, first, first_arg, ABT_THREAD_ATTR_NULL, &units[0]));
  first_ult = units[0];
  if (second) {
    OK(ABT_thread_create(pool, second, second_arg, ABT_THREAD_ATTR_NULL, &units[1]));
  }
  /* Everything is queued before the stream starts, so the order is the scheduler's alone. */
  ABT_xstream xstream;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &pool, ABT_SCHED_CONFIG_NULL, &xstream));
  for (int i = 0; i < 3; i++) {
    if (units[i] != ABT_THREAD_NULL) OK(ABT_thread_join(units[i]));
  }
  OK(ABT_xstream_free(&xstream));
  if (strcmp(trace_now.text, expected) != 0) {
    fprintf(stderr, "trace \"%s\", expected \"%s\"\n", trace_now.text, expected);
    CHECK(!"trace differs");
  }
  for (int i = 0; i < 3; i++) {
    if (units[i] == ABT_THREAD_NULL) continue;
    ABT_thread_state state;
    OK(ABT_thread_get_state(units[i], &state));
    CHECK(state == ABT_THREAD_STATE_TERMINATED);
    OK(ABT_thread_free(&units[i]));
  }
  OK(ABT_pool_free(&trace_now.side));
  OK(ABT_pool_free(&pool));
}

static ABT_thread second_ult;

static void a_suspend_resume_second(void* arg) {
  (void)arg;
  a_suspend_then_resume_second(&second_ult);
}

static void record_second_then(void* arg) {
  OK(ABT_self_get_thread(&second_ult));
  ((void (*)(void*))arg)(NULL);
}

/* Each scenario is a test of its own, so that one that hangs names itself. */
static void test_switch_yield(void) {
  abt_test_start();
  scenario(letter_a_yield_b, NULL, letter_b_yield, NULL, NULL, NULL, "ababab");
  abt_test_stop();
}

/* a yields to c (in the side pool); c ends; b runs; then a again. */
static void test_switch_thread_yield_to(void) {
  abt_test_start();
  scenario(a_yield_to_peer, NULL, letter, (void*)'b', letter, (void*)'c', "acbA");
  abt_test_stop();
}

static void test_switch_self_yield_to(void) {
  abt_test_start();
  scenario(a_self_yield_to, NULL, letter, (void*)'b', letter, (void*)'c', "acbA");
  abt_test_stop();
}

/* a suspends to c, which resumes a; b was queued before a came back. */
static void test_switch_self_suspend_to(void) {
  abt_test_start();
  scenario(a_suspend_to, NULL, letter, (void*)'b', c_resume_first, NULL, "acbA");
  abt_test_stop();
}

static void test_switch_self_exit_to(void) {
  abt_test_start();
  scenario(a_exit_to, NULL, letter, (void*)'b', letter, (void*)'c', "acb");
  abt_test_stop();
}

static void test_switch_self_resume_yield_to(void) {
  abt_test_start();
  scenario(a_suspend, NULL, b_resume_yield_to_first, NULL, NULL, NULL, "abAB");
  abt_test_stop();
}

static void test_switch_self_resume_suspend_to(void) {
  abt_test_start();
  scenario(a_suspend_resume_second, NULL, record_second_then, (void*)b_resume_suspend_to_first,
           NULL, NULL, "abAB");
  abt_test_stop();
}

static void test_switch_self_resume_exit_to(void) {
  abt_test_start();
  scenario(a_suspend, NULL, b_resume_exit_to_first, NULL, NULL, NULL, "abA");
  abt_test_stop();
}

static void test_switch_exit(void) {
  abt_test_start();
  scenario(a_self_exit, NULL, letter, (void*)'b', NULL, NULL, "ab");
  scenario(a_thread_exit, NULL, letter, (void*)'b', NULL, NULL, "ab");
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* Cancellation and migration                                                                  */

static void test_cancel(void) {
  abt_test_start();
  ABT_bool thread_cancel = ABT_FALSE, task_cancel = ABT_FALSE;
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_ENABLED_THREAD_CANCEL, &thread_cancel));
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_ENABLED_TASK_CANCEL, &task_cancel));
  ABT_pool idle;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &idle));
  int ran = 0;
  ABT_thread thread;
  ABT_task task;
  OK(ABT_thread_create(idle, add_one, &ran, ABT_THREAD_ATTR_NULL, &thread));
  OK(ABT_task_create(idle, add_one, &ran, &task));
  CHECK_RET(ABT_thread_cancel(thread), thread_cancel ? ABT_SUCCESS : ABT_ERR_FEATURE_NA);
  CHECK_RET(ABT_task_cancel(task), task_cancel ? ABT_SUCCESS : ABT_ERR_FEATURE_NA);
  ABT_xstream xstream;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &idle, ABT_SCHED_CONFIG_NULL, &xstream));
  OK(ABT_thread_free(&thread));
  OK(ABT_task_free(&task));
  /* A unit cancelled before it ran never runs. */
  CHECK(ran == (thread_cancel ? 0 : 1) + (task_cancel ? 0 : 1));
  OK(ABT_xstream_free(&xstream));
  OK(ABT_pool_free(&idle));
  CHECK_RET(ABT_thread_cancel(ABT_THREAD_NULL), ABT_ERR_INV_THREAD);
  abt_test_stop();
}

static int migration_callbacks;

static void on_migrate(ABT_thread thread, void* arg) {
  CHECK(thread != ABT_THREAD_NULL);
  CHECK(arg == &migration_callbacks);
  abt_test_add(&migration_callbacks, 1);
}

/* Visits the streams in turn by migrating itself (to a stream, a pool, a scheduler), checking
 * where it lands each time. Needs two streams or more. */
static void tour(void* arg) {
  int* wrong = arg;
  ABT_thread self;
  OK(ABT_thread_self(&self));
  const int n = abt_test_num_xstreams;
  int rank = -1;
  OK(ABT_xstream_self_rank(&rank));
  for (int step = 0; step < 3 * n; step++) {
    const int target = (rank + 1) % n;
    if (step % 3 == 0) {
      OK(ABT_thread_migrate_to_xstream(self, abt_test_xstreams[target]));
    } else if (step % 3 == 1) {
      OK(ABT_thread_migrate_to_pool(self, abt_test_pools[target]));
    } else {
      ABT_sched sched;
      OK(ABT_xstream_get_main_sched(abt_test_xstreams[target], &sched));
      OK(ABT_thread_migrate_to_sched(self, sched));
    }
    /* A migration is a request, carried out at the unit's next scheduling point at the latest. */
    OK(ABT_thread_yield());
    OK(ABT_xstream_self_rank(&rank));
    if (rank != target) abt_test_add(wrong, 1);
  }
  OK(ABT_thread_migrate(self));
}

static void test_migration(void) {
  abt_test_start();
  ABT_bool supported = ABT_FALSE;
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_ENABLED_MIGRATION, &supported));
  ABT_thread self;
  OK(ABT_thread_self(&self));
  if (!supported) {
    CHECK_RET(ABT_thread_migrate_to_xstream(self, abt_test_xstreams[0]), ABT_ERR_FEATURE_NA);
    abt_test_stop();
    return;
  }
  /* The primary ULT cannot migrate. */
  ABT_bool migratable = ABT_TRUE;
  CHECK_RET(ABT_thread_migrate_to_xstream(self, abt_test_xstreams[0]), ABT_ERR_INV_THREAD);
  ABT_thread_attr attr;
  OK(ABT_thread_attr_create(&attr));
  OK(ABT_thread_attr_set_callback(attr, on_migrate, &migration_callbacks));
  OK(ABT_thread_attr_set_migratable(attr, ABT_TRUE));
  if (abt_test_num_xstreams > 1) {
    int wrong = 0;
    const int tourists = 4;
    ABT_thread threads[4];
    for (int i = 0; i < tourists; i++) {
      OK(ABT_thread_create(abt_test_pools[i % abt_test_num_xstreams], tour, &wrong, attr,
                           &threads[i]));
    }
    OK(ABT_thread_free_many(tourists, threads));
    CHECK(wrong == 0);
    CHECK(migration_callbacks >= tourists);
  }

  /* A ULT marked not migratable refuses; so does one created with that attribute. */
  ABT_pool idle;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &idle));
  ABT_thread stay;
  OK(ABT_thread_create(idle, noop, NULL, ABT_THREAD_ATTR_NULL, &stay));
  OK(ABT_thread_set_migratable(stay, ABT_FALSE));
  OK(ABT_thread_is_migratable(stay, &migratable));
  CHECK(migratable == ABT_FALSE);
  OK(ABT_thread_set_migratable(stay, ABT_TRUE));
  OK(ABT_thread_set_callback(stay, on_migrate, &migration_callbacks));
  OK(ABT_thread_attr_set_migratable(attr, ABT_FALSE));
  ABT_thread fixed;
  OK(ABT_thread_create(idle, noop, NULL, attr, &fixed));
  OK(ABT_thread_is_migratable(fixed, &migratable));
  CHECK(migratable == ABT_FALSE);
  OK(ABT_thread_attr_free(&attr));
  ABT_task task;
  OK(ABT_task_create(idle, noop, NULL, &task));
  OK(ABT_task_set_migratable(task, ABT_FALSE));
  OK(ABT_task_is_migratable(task, &migratable));
  CHECK(migratable == ABT_FALSE);
  ABT_xstream xstream;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &idle, ABT_SCHED_CONFIG_NULL, &xstream));
  OK(ABT_thread_free(&stay));
  OK(ABT_thread_free(&fixed));
  OK(ABT_task_free(&task));
  OK(ABT_xstream_free(&xstream));
  OK(ABT_pool_free(&idle));
  CHECK_RET(ABT_thread_migrate_to_xstream(ABT_THREAD_NULL, abt_test_xstreams[0]),
            ABT_ERR_INV_THREAD);
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* Tasklets                                                                                    */

/* What a tasklet saw of itself. */
struct task_view {
  ABT_unit_type type;
  ABT_task self;
  ABT_thread as_thread;
  int thread_self_code;
  int yield_code;
  int suspend_code;
  int is_primary_code;
  ABT_xstream xstream;
  void* arg;
};

static void view_task(void* arg) {
  struct task_view* v = arg;
  OK(ABT_self_get_type(&v->type));
  OK(ABT_task_self(&v->self));
  OK(ABT_self_get_thread(&v->as_thread));
  ABT_thread thread;
  v->thread_self_code = ABT_thread_self(&thread);
  v->yield_code = ABT_thread_yield();
  v->suspend_code = ABT_self_suspend();
  ABT_bool primary;
  v->is_primary_code = ABT_self_is_primary(&primary);
  OK(ABT_self_get_xstream(&v->xstream));
  OK(ABT_self_get_arg(&v->arg));
  uint64_t id = 0;
  OK(ABT_task_self_id(&id));
  ABT_unit_id unit_id = 0;
  OK(ABT_task_get_id(v->self, &unit_id));
  CHECK(id == unit_id);
}

static void test_tasklets(void) {
  abt_test_start();
  const int n = abt_test_num_xstreams;
  const int per_stream = abt_test_scaled(200);
  int count = 0;
  ABT_task* tasks = malloc(sizeof(ABT_task) * (size_t)(n * per_stream));
  CHECK(tasks != NULL);
  for (int i = 0; i < n * per_stream; i++) {
    OK(ABT_task_create(abt_test_pools[i % n], add_one, &count, &tasks[i]));
  }
  for (int i = 0; i < n * per_stream; i++) {
    OK(ABT_task_join(tasks[i]));
    OK(ABT_task_free(&tasks[i]));
    CHECK(tasks[i] == ABT_TASK_NULL);
  }
  CHECK(count == n * per_stream);
  free(tasks);
  count = 0;
  for (int i = 0; i < n * per_stream; i++) {
    OK(ABT_task_create(abt_test_pools[i % n], add_one, &count, NULL));
  }
  abt_test_wait_count(&count, n * per_stream);

  for (int i = 0; i < n; i++) {
    struct task_view v;
    memset(&v, 0, sizeof v);
    ABT_task task;
    OK(ABT_task_create_on_xstream(abt_test_xstreams[i], view_task, &v, &task));
    OK(ABT_task_free(&task));
    CHECK(v.type == ABT_UNIT_TYPE_TASK);
    CHECK(v.self != ABT_TASK_NULL);
    CHECK(v.as_thread == v.self);
    CHECK(v.thread_self_code == ABT_ERR_INV_THREAD);
    CHECK(v.yield_code == ABT_SUCCESS); /* Argobots 1.x: a no-op in a tasklet */
    CHECK(v.suspend_code == ABT_ERR_INV_THREAD);
    CHECK(v.xstream == abt_test_xstreams[i]);
    CHECK(v.arg == &v);
  }

  /* Queries on a tasklet waiting in a pool no scheduler serves. */
  ABT_pool idle;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &idle));
  ABT_task task, other;
  OK(ABT_task_create(idle, add_one, &count, &task));
  OK(ABT_task_create(idle, noop, NULL, &other));
  ABT_task_state state;
  OK(ABT_task_get_state(task, &state));
  CHECK(state == ABT_TASK_STATE_READY);
  ABT_pool pool;
  int id = -1, pool_id = -2;
  OK(ABT_task_get_last_pool(task, &pool));
  CHECK(pool == idle);
  OK(ABT_task_get_last_pool_id(task, &id));
  OK(ABT_pool_get_id(idle, &pool_id));
  CHECK(id == pool_id);
  ABT_bool flag;
  OK(ABT_task_equal(task, task, &flag));
  CHECK(flag == ABT_TRUE);
  OK(ABT_task_equal(task, other, &flag));
  CHECK(flag == ABT_FALSE);
  uint64_t a = 0, b = 0;
  OK(ABT_task_get_id(task, &a));
  OK(ABT_task_get_id(other, &b));
  CHECK(a != b);
  void* arg = NULL;
  OK(ABT_task_get_arg(task, &arg));
  CHECK(arg == &count);
  OK(ABT_task_is_unnamed(task, &flag));
  CHECK(flag == ABT_FALSE);
  ABT_xstream xstream;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &idle, ABT_SCHED_CONFIG_NULL, &xstream));
  OK(ABT_task_join(task));
  OK(ABT_task_get_state(task, &state));
  CHECK(state == ABT_TASK_STATE_TERMINATED);
  ABT_xstream ran_on;
  OK(ABT_task_get_xstream(task, &ran_on));
  CHECK(ran_on == xstream);
  OK(ABT_task_free(&task));
  OK(ABT_task_free(&other));
  OK(ABT_xstream_free(&xstream));
  OK(ABT_pool_free(&idle));

  CHECK_RET(ABT_task_join(ABT_TASK_NULL), ABT_ERR_INV_TASK);
  CHECK_RET(ABT_task_free(&task), ABT_ERR_INV_TASK);
  CHECK_RET(ABT_task_get_state(ABT_TASK_NULL, &state), ABT_ERR_INV_TASK);
  CHECK_RET(ABT_task_create(ABT_POOL_NULL, noop, NULL, &task), ABT_ERR_INV_POOL);
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* Work-unit-specific data                                                                     */

static int destructor_calls;

static void free_value(void* value) {
  free(value);
  abt_test_add(&destructor_calls, 1);
}

static ABT_key the_key;

/* Stores its own value, yields a few times (maybe moving between streams) and reads it back. */
static void keep_value(void* arg) {
  int* wrong = arg;
  void* value = NULL;
  OK(ABT_key_get(the_key, &value));
  if (value != NULL) abt_test_add(wrong, 1);
  int* mine = malloc(sizeof *mine);
  CHECK(mine != NULL);
  *mine = 5;
  OK(ABT_key_set(the_key, mine));
  for (int i = 0; i < 3; i++) {
    OK(ABT_thread_yield());
    OK(ABT_key_get(the_key, &value));
    if (value != mine) abt_test_add(wrong, 1);
    OK(ABT_self_get_specific(the_key, &value));
    if (value != mine) abt_test_add(wrong, 1);
  }
}

static void keep_value_task(void* arg) {
  int* mine = malloc(sizeof *mine);
  CHECK(mine != NULL);
  OK(ABT_self_set_specific(the_key, mine));
  void* value = NULL;
  OK(ABT_key_get(the_key, &value));
  if (value != mine) abt_test_add((int*)arg, 1);
}

static void test_keys(void) {
  abt_test_start();
  OK(ABT_key_create(free_value, &the_key));
  const int n = abt_test_num_xstreams, units = abt_test_scaled(100);
  int wrong = 0;
  ABT_thread* threads = malloc(sizeof(ABT_thread) * (size_t)(2 * units));
  CHECK(threads != NULL);
  for (int i = 0; i < units; i++) {
    OK(ABT_thread_create(abt_test_pools[i % n], keep_value, &wrong, ABT_THREAD_ATTR_NULL,
                         &threads[i]));
    OK(ABT_task_create(abt_test_pools[i % n], keep_value_task, &wrong, &threads[units + i]));
  }
  OK(ABT_thread_free_many(2 * units, threads));
  free(threads);
  CHECK(wrong == 0);
  /* Each unit's value was destroyed when it ended. */
  CHECK(abt_test_load(&destructor_calls) == 2 * units);

  /* Values set from outside the unit, and a key without destructor. */
  ABT_key plain;
  OK(ABT_key_create(NULL, &plain));
  ABT_pool idle;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &idle));
  ABT_thread thread;
  OK(ABT_thread_create(idle, noop, NULL, ABT_THREAD_ATTR_NULL, &thread));
  int marker = 0;
  void* value = &marker;
  OK(ABT_thread_get_specific(thread, plain, &value));
  CHECK(value == NULL);
  OK(ABT_thread_set_specific(thread, plain, &marker));
  OK(ABT_thread_get_specific(thread, plain, &value));
  CHECK(value == &marker);
  ABT_task task;
  OK(ABT_task_create(idle, noop, NULL, &task));
  OK(ABT_task_set_specific(task, plain, &wrong));
  OK(ABT_task_get_specific(task, plain, &value));
  CHECK(value == &wrong);
  /* The primary ULT has its own values too. */
  OK(ABT_key_set(plain, &idle));
  OK(ABT_key_get(plain, &value));
  CHECK(value == &idle);
  ABT_xstream xstream;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &idle, ABT_SCHED_CONFIG_NULL, &xstream));
  OK(ABT_thread_free(&thread));
  OK(ABT_task_free(&task));
  OK(ABT_xstream_free(&xstream));
  OK(ABT_pool_free(&idle));
  OK(ABT_key_set(plain, NULL));
  OK(ABT_key_free(&plain));
  CHECK(plain == ABT_KEY_NULL);
  OK(ABT_key_free(&the_key));
  CHECK_RET(ABT_key_set(ABT_KEY_NULL, &value), ABT_ERR_INV_KEY);
  CHECK_RET(ABT_key_get(ABT_KEY_NULL, &value), ABT_ERR_INV_KEY);
  CHECK_RET(ABT_key_free(&plain), ABT_ERR_INV_KEY);
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* Calling contexts and errors                                                                 */

/* What a ULT on a secondary stream saw of itself. */
struct ult_view {
  ABT_bool primary;
  ABT_bool on_primary;
  ABT_unit_type type;
  ABT_pool last_pool;
  int last_pool_id;
  void (*func)(void*);
  ABT_unit unit;
  int join_self_code;
  int free_self_code;
};

static void view_ult(void* arg) {
  struct ult_view* v = arg;
  OK(ABT_self_is_primary(&v->primary));
  OK(ABT_self_on_primary_xstream(&v->on_primary));
  OK(ABT_self_get_type(&v->type));
  OK(ABT_self_get_last_pool(&v->last_pool));
  OK(ABT_self_get_last_pool_id(&v->last_pool_id));
  OK(ABT_self_get_thread_func(&v->func));
  OK(ABT_self_get_unit(&v->unit));
  ABT_thread self;
  OK(ABT_thread_self(&self));
  v->join_self_code = ABT_thread_join(self);
  v->free_self_code = ABT_thread_free(&self);
  OK(ABT_self_set_arg(NULL));
  void* arg_now = &arg_now;
  OK(ABT_self_get_arg(&arg_now));
  CHECK(arg_now == NULL);
}

/* What an external thread may and may not do. */
static void* external_thread(void* arg) {
  int* done = arg;
  ABT_unit_type type = ABT_UNIT_TYPE_THREAD;
  CHECK_RET(ABT_self_get_type(&type), ABT_ERR_INV_XSTREAM);
  CHECK(type == ABT_UNIT_TYPE_EXT);
  ABT_thread thread;
  ABT_xstream xstream;
  ABT_bool flag;
  int rank;
  CHECK_RET(ABT_thread_self(&thread), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_self_get_thread(&thread), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_self_get_xstream(&xstream), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_self_get_xstream_rank(&rank), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_self_is_primary(&flag), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_self_on_primary_xstream(&flag), ABT_ERR_INV_XSTREAM);
  OK(ABT_thread_yield()); /* Argobots 1.x: a no-op outside a ULT */
  CHECK_RET(ABT_self_yield(), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_self_suspend(), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_thread_exit(), ABT_ERR_INV_XSTREAM);
  OK(ABT_initialized());
  /* It may create, join and free work units. */
  int count = 0;
  ABT_task task;
  OK(ABT_thread_create(abt_test_pools[abt_test_num_xstreams - 1], add_one, &count,
                       ABT_THREAD_ATTR_NULL, &thread));
  OK(ABT_task_create(abt_test_pools[0], add_one, &count, &task));
  OK(ABT_thread_free(&thread));
  OK(ABT_task_free(&task));
  CHECK(count == 2);
  abt_test_store(done, 1);
  return NULL;
}

static void test_calling_contexts(void) {
  abt_test_start();
  /* Primary ULT. */
  ABT_bool flag = ABT_FALSE;
  ABT_unit_type type = ABT_UNIT_TYPE_EXT;
  OK(ABT_self_is_primary(&flag));
  CHECK(flag == ABT_TRUE);
  OK(ABT_self_on_primary_xstream(&flag));
  CHECK(flag == ABT_TRUE);
  OK(ABT_self_get_type(&type));
  CHECK(type == ABT_UNIT_TYPE_THREAD);
  ABT_thread self;
  OK(ABT_thread_self(&self));
  CHECK_RET(ABT_thread_exit(), ABT_ERR_INV_THREAD);
  CHECK_RET(ABT_self_exit(), ABT_ERR_INV_THREAD);
  CHECK_RET(ABT_thread_join(self), ABT_ERR_INV_THREAD);
  CHECK_RET(ABT_thread_free(&self), ABT_ERR_INV_THREAD);
  CHECK(self != ABT_THREAD_NULL);
  OK(ABT_thread_yield());
  OK(ABT_self_yield());

  /* ULTs on every stream. */
  for (int i = 0; i < abt_test_num_xstreams; i++) {
    struct ult_view v;
    memset(&v, 0, sizeof v);
    ABT_thread thread;
    OK(ABT_thread_create(abt_test_pools[i], view_ult, &v, ABT_THREAD_ATTR_NULL, &thread));
    ABT_unit unit;
    OK(ABT_thread_get_unit(thread, &unit));
    OK(ABT_thread_free(&thread));
    CHECK(v.primary == ABT_FALSE);
    CHECK(v.on_primary == (i == 0 ? ABT_TRUE : ABT_FALSE));
    CHECK(v.type == ABT_UNIT_TYPE_THREAD);
    CHECK(v.last_pool == abt_test_pools[i]);
    int pool_id;
    OK(ABT_pool_get_id(abt_test_pools[i], &pool_id));
    CHECK(v.last_pool_id == pool_id);
    CHECK(v.func == view_ult);
    CHECK(v.unit == unit);
    CHECK(v.join_self_code == ABT_ERR_INV_THREAD);
    CHECK(v.free_self_code == ABT_ERR_INV_THREAD);
  }

  /* External threads, several at once. */
  pthread_t externals[3];
  int done[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++) {
    CHECK(pthread_create(&externals[i], NULL, external_thread, &done[i]) == 0);
  }
  for (int i = 0; i < 3; i++) {
    abt_test_wait_flag(&done[i]);
    CHECK(pthread_join(externals[i], NULL) == 0);
  }
  abt_test_stop();
}

static void test_invalid_handles(void) {
  abt_test_start();
  ABT_thread null = ABT_THREAD_NULL;
  ABT_thread_state state;
  ABT_pool pool;
  ABT_xstream xstream;
  void* arg;
  size_t size;
  ABT_bool flag;
  ABT_unit_id id;
  CHECK_RET(ABT_thread_join(ABT_THREAD_NULL), ABT_ERR_INV_THREAD);
  CHECK_RET(ABT_thread_free(&null), ABT_ERR_INV_THREAD);
  CHECK_RET(ABT_thread_get_state(ABT_THREAD_NULL, &state), ABT_ERR_INV_THREAD);
  CHECK_RET(ABT_thread_get_last_pool(ABT_THREAD_NULL, &pool), ABT_ERR_INV_THREAD);
  CHECK_RET(ABT_thread_get_last_xstream(ABT_THREAD_NULL, &xstream), ABT_ERR_INV_THREAD);
  CHECK_RET(ABT_thread_get_arg(ABT_THREAD_NULL, &arg), ABT_ERR_INV_THREAD);
  CHECK_RET(ABT_thread_get_stacksize(ABT_THREAD_NULL, &size), ABT_ERR_INV_THREAD);
  CHECK_RET(ABT_thread_get_id(ABT_THREAD_NULL, &id), ABT_ERR_INV_THREAD);
  CHECK_RET(ABT_thread_is_migratable(ABT_THREAD_NULL, &flag), ABT_ERR_INV_THREAD);
  CHECK_RET(ABT_thread_resume(ABT_THREAD_NULL), ABT_ERR_INV_THREAD);
  CHECK_RET(ABT_thread_yield_to(ABT_THREAD_NULL), ABT_ERR_INV_THREAD);
  CHECK_RET(ABT_self_yield_to(ABT_THREAD_NULL), ABT_ERR_INV_THREAD);
  CHECK_RET(ABT_thread_join_many(1, &null), ABT_ERR_INV_THREAD);
  CHECK_RET(ABT_thread_create_on_xstream(ABT_XSTREAM_NULL, noop, NULL, ABT_THREAD_ATTR_NULL, NULL),
            ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_task_create_on_xstream(ABT_XSTREAM_NULL, noop, NULL, NULL), ABT_ERR_INV_XSTREAM);
  /* Resuming a ULT that is not blocked is misuse. */
  ABT_pool idle;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &idle));
  ABT_thread ready;
  OK(ABT_thread_create(idle, noop, NULL, ABT_THREAD_ATTR_NULL, &ready));
  CHECK(ABT_thread_resume(ready) != ABT_SUCCESS);
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &idle, ABT_SCHED_CONFIG_NULL, &xstream));
  OK(ABT_thread_free(&ready));
  OK(ABT_xstream_free(&xstream));
  OK(ABT_pool_free(&idle));
  abt_test_stop();
}

/* Argobots 1.x: a ULT marked not migratable refuses every migration with ABT_ERR_INV_THREAD. */
static void test_migration_refused(void) {
  abt_test_start();
  ABT_bool supported = ABT_FALSE;
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_ENABLED_MIGRATION, &supported));
  ABT_pool idle;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &idle));
  ABT_thread stay;
  OK(ABT_thread_create(idle, noop, NULL, ABT_THREAD_ATTR_NULL, &stay));
  if (supported) {
    OK(ABT_thread_set_migratable(stay, ABT_FALSE));
    CHECK_RET(ABT_thread_migrate_to_pool(stay, abt_test_pools[0]), ABT_ERR_INV_THREAD);
    CHECK_RET(ABT_thread_migrate_to_xstream(stay, abt_test_xstreams[0]), ABT_ERR_INV_THREAD);
  }
  ABT_xstream xstream;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &idle, ABT_SCHED_CONFIG_NULL, &xstream));
  OK(ABT_thread_free(&stay));
  OK(ABT_xstream_free(&xstream));
  OK(ABT_pool_free(&idle));
  abt_test_stop();
}

static void is_primary_in_task(void* arg) {
  ABT_bool primary;
  abt_test_store((int*)arg, ABT_self_is_primary(&primary));
}

/* Argobots 1.x: ABT_self_is_primary in a tasklet returns ABT_ERR_INV_THREAD. */
static void test_tasklet_self_is_primary(void) {
  abt_test_start();
  for (int i = 0; i < abt_test_num_xstreams; i++) {
    int code = -1;
    ABT_task task;
    OK(ABT_task_create(abt_test_pools[i], is_primary_in_task, &code, &task));
    OK(ABT_task_free(&task));
    CHECK_RET(code, ABT_ERR_INV_THREAD);
  }
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* The primary ULT is a ULT: argument and queries                                              */

/* Reads the primary ULT's argument from another ULT (BOLT's per-thread record). */
struct primary_view {
  ABT_thread primary;
  void* arg;
  ABT_bool is_primary;
};

static void view_primary(void* arg) {
  struct primary_view* v = arg;
  OK(ABT_thread_get_arg(v->primary, &v->arg));
  OK(ABT_thread_is_primary(v->primary, &v->is_primary));
}

static void test_primary_ult(void) {
  abt_test_start();
  ABT_thread primary = ABT_THREAD_NULL, self = ABT_THREAD_NULL;
  OK(ABT_self_get_thread(&primary));
  OK(ABT_thread_self(&self));
  ABT_bool flag = ABT_FALSE;
  OK(ABT_thread_equal(primary, self, &flag));
  CHECK(flag == ABT_TRUE);
  OK(ABT_thread_is_primary(primary, &flag));
  CHECK(flag == ABT_TRUE);
  /* No argument until one is set; then every way of reading it sees it. */
  void* arg = &flag;
  OK(ABT_thread_get_arg(primary, &arg));
  CHECK(arg == NULL);
  int record = 0, other_record = 0;
  OK(ABT_thread_set_arg(primary, &record));
  OK(ABT_thread_get_arg(primary, &arg));
  CHECK(arg == &record);
  OK(ABT_self_get_arg(&arg));
  CHECK(arg == &record);
  OK(ABT_self_set_arg(&other_record));
  OK(ABT_thread_get_arg(self, &arg));
  CHECK(arg == &other_record);
  for (int i = 0; i < abt_test_num_xstreams; i++) {
    struct primary_view v = {primary, NULL, ABT_FALSE};
    ABT_thread thread;
    OK(ABT_thread_create(abt_test_pools[i], view_primary, &v, ABT_THREAD_ATTR_NULL, &thread));
    OK(ABT_thread_free(&thread));
    CHECK(v.arg == &other_record);
    CHECK(v.is_primary == ABT_TRUE);
  }
  /* Queries. */
  ABT_unit_id id = 0, self_id = 1;
  OK(ABT_thread_get_id(primary, &id));
  OK(ABT_self_get_thread_id(&self_id));
  CHECK(id == self_id);
  ABT_thread_state state = ABT_THREAD_STATE_TERMINATED;
  OK(ABT_thread_get_state(primary, &state));
  CHECK(state == ABT_THREAD_STATE_RUNNING);
  ABT_pool pool = ABT_POOL_NULL;
  OK(ABT_thread_get_last_pool(primary, &pool));
  CHECK(pool == abt_test_pools[0]);
  ABT_xstream xstream = ABT_XSTREAM_NULL;
  OK(ABT_thread_get_last_xstream(primary, &xstream));
  CHECK(xstream == abt_test_xstreams[0]);
  /* Argobots' primary ULT runs on the process's stack: no stack, size 0, not migratable. */
  size_t stacksize = 1, attr_size = 1;
  OK(ABT_thread_get_stacksize(primary, &stacksize));
  ABT_thread_attr attr = ABT_THREAD_ATTR_NULL;
  OK(ABT_thread_get_attr(primary, &attr));
  void* stack = &flag;
  OK(ABT_thread_attr_get_stack(attr, &stack, &attr_size));
  CHECK(stack == NULL);
  CHECK(attr_size == stacksize);
  CHECK(stacksize == 0);
  OK(ABT_thread_attr_free(&attr));
  OK(ABT_thread_is_migratable(primary, &flag));
  CHECK(flag == ABT_FALSE);
  abt_test_stop();
  /* A new initialisation starts without the old argument. */
  abt_test_start();
  OK(ABT_self_get_thread(&primary));
  OK(ABT_thread_get_arg(primary, &arg));
  CHECK(arg == NULL);
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* A ULT made by ABT_thread_create_to without a handle is unnamed from its start               */

static ABT_thread unnamed_child; /* the child's own handle, as it saw it */
static int unnamed_finishes, unnamed_frees;

static void count_child_events(ABT_thread thread, ABT_xstream xstream, uint64_t event,
                               ABT_tool_context context, void* user_arg) {
  (void)xstream;
  (void)context;
  (void)user_arg;
  if (thread != __atomic_load_n(&unnamed_child, __ATOMIC_SEQ_CST)) return;
  if (event == ABT_TOOL_EVENT_THREAD_FINISH) abt_test_add(&unnamed_finishes, 1);
  if (event == ABT_TOOL_EVENT_THREAD_FREE) abt_test_add(&unnamed_frees, 1);
}

struct unnamed_probe {
  ABT_bool self_unnamed;
  ABT_bool thread_unnamed;
  int done;
};

static void probe_unnamed(void* arg) {
  struct unnamed_probe* p = arg;
  ABT_thread self;
  OK(ABT_self_get_thread(&self));
  __atomic_store_n(&unnamed_child, self, __ATOMIC_SEQ_CST);
  OK(ABT_self_is_unnamed(&p->self_unnamed));
  OK(ABT_thread_is_unnamed(self, &p->thread_unnamed));
  abt_test_store(&p->done, 1);
}

static void create_to_unnamed(void* arg) {
  struct unnamed_probe* p = arg;
  ABT_pool pool;
  OK(ABT_self_get_last_pool(&pool));
  OK(ABT_thread_create_to(pool, probe_unnamed, p, ABT_THREAD_ATTR_NULL, NULL));
  /* The child ran first and saw itself unnamed before the creator was back. */
  CHECK(abt_test_load(&p->done) == 1);
}

static void test_create_to_unnamed(void) {
  abt_test_start();
  ABT_bool tool = ABT_FALSE;
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_ENABLED_TOOL, &tool));
  for (int i = 0; i < abt_test_num_xstreams; i++) {
    __atomic_store_n(&unnamed_child, ABT_THREAD_NULL, __ATOMIC_SEQ_CST);
    abt_test_store(&unnamed_finishes, 0);
    abt_test_store(&unnamed_frees, 0);
    if (tool) {
      OK(ABT_tool_register_thread_callback(
          count_child_events, ABT_TOOL_EVENT_THREAD_FINISH | ABT_TOOL_EVENT_THREAD_FREE, NULL));
    }
    struct unnamed_probe p = {ABT_FALSE, ABT_FALSE, 0};
    ABT_thread thread;
    OK(ABT_thread_create(abt_test_pools[i], create_to_unnamed, &p, ABT_THREAD_ATTR_NULL, &thread));
    OK(ABT_thread_free(&thread));
    CHECK(p.self_unnamed == ABT_TRUE);
    CHECK(p.thread_unnamed == ABT_TRUE);
    if (tool) {
      /* Its end is reported as an unnamed ULT's: FINISH, then FREE (it frees itself). */
      abt_test_wait_count(&unnamed_frees, 1);
      OK(ABT_tool_register_thread_callback(NULL, ABT_TOOL_EVENT_THREAD_NONE, NULL));
      CHECK(abt_test_load(&unnamed_finishes) == 1);
      CHECK(abt_test_load(&unnamed_frees) == 1);
    }
  }
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* ABT_thread_get_attr reports the stack size ABT_thread_get_stacksize does                    */

/* Argobots' test/basic/thread_attr.c: a ULT compares the two from inside. */
struct attr_sizes {
  size_t from_attr;
  size_t from_query;
};

static void compare_stack_sizes(void* arg) {
  struct attr_sizes* s = arg;
  ABT_thread self;
  OK(ABT_self_get_thread(&self));
  ABT_thread_attr attr;
  OK(ABT_thread_get_attr(self, &attr));
  OK(ABT_thread_attr_get_stacksize(attr, &s->from_attr));
  OK(ABT_thread_attr_free(&attr));
  OK(ABT_thread_get_stacksize(self, &s->from_query));
}

static void test_attr_stack_size(void) {
  abt_test_start();
  size_t default_size = 0;
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_DEFAULT_THREAD_STACKSIZE, &default_size));
  /* The default, whole pages, and sizes that are not (weft maps whole pages). */
  const size_t sizes[] = {0, 16 * 1024, 64 * 1024, 256 * 1024, 20000, 100 * 1024 + 1};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    ABT_thread_attr attr = ABT_THREAD_ATTR_NULL;
    if (sizes[k]) {
      OK(ABT_thread_attr_create(&attr));
      OK(ABT_thread_attr_set_stacksize(attr, sizes[k]));
    }
    const size_t expected = sizes[k] ? sizes[k] : default_size;
    for (int i = 0; i < abt_test_num_xstreams; i++) {
      struct attr_sizes s = {0, 0};
      ABT_thread thread;
      OK(ABT_thread_create(abt_test_pools[i], compare_stack_sizes, &s, attr, &thread));
      OK(ABT_thread_join(thread));
      CHECK(s.from_attr == expected);
      CHECK(s.from_query == expected);
      /* And from outside, after it ended. */
      ABT_thread_attr copy;
      size_t size = 0;
      OK(ABT_thread_get_attr(thread, &copy));
      OK(ABT_thread_attr_get_stacksize(copy, &size));
      CHECK(size == expected);
      OK(ABT_thread_attr_free(&copy));
      /* A revived ULT keeps its size. */
      OK(ABT_thread_revive(abt_test_pools[i], compare_stack_sizes, &s, &thread));
      OK(ABT_thread_free(&thread));
      CHECK(s.from_attr == expected && s.from_query == expected);
    }
    if (attr != ABT_THREAD_ATTR_NULL) OK(ABT_thread_attr_free(&attr));
  }
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* ULTs that pop units from the pools of other streams and switch to them                     */

/* The default scheduler's pools are MPMC, as in Argobots: ULTs may pop from any stream's pool
 * (Argobots' test/basic ext_thread2). Each unit counts one run; every fourth exits to a unit it
 * popped, every other fourth yields to one; an external thread joins and frees them all. */
enum { popping_units = 200 };
static ABT_thread popping[popping_units];
static int popping_runs;

static ABT_pool secondary_pool(int i) {
  return abt_test_pools[1 + i % (abt_test_num_xstreams - 1)];
}

static void popper(void* arg) {
  const int id = (int)(intptr_t)arg;
  abt_test_add(&popping_runs, 1);
  ABT_unit unit = ABT_UNIT_NULL;
  OK(ABT_pool_pop(secondary_pool(id / 4), &unit));
  if (unit == ABT_UNIT_NULL) return;
  ABT_thread target;
  OK(ABT_unit_get_thread(unit, &target));
  if (id % 2 == 0) {
    OK(ABT_self_exit_to(target));
  } else {
    OK(ABT_self_yield_to(target));
  }
}

static void* join_all_popping(void* arg) {
  (void)arg;
  for (int i = 0; i < popping_units; i++) OK(ABT_thread_free(&popping[i]));
  return NULL;
}

static void test_switch_to_popped_from_other_streams(void) {
  abt_test_start();
  if (abt_test_num_xstreams < 2) {
    abt_test_stop();
    return; /* needs a secondary stream: the primary's pool is weft's own */
  }
  for (int i = 1; i < abt_test_num_xstreams; i++) {
    ABT_pool_access access;
    OK(ABT_pool_get_access(abt_test_pools[i], &access));
    CHECK(access == ABT_POOL_ACCESS_MPMC);
  }
  const int rounds = abt_test_scaled(20);
  for (int r = 0; r < rounds; r++) {
    popping_runs = 0;
    for (int i = 0; i < popping_units; i++) {
      OK(ABT_thread_create(secondary_pool(i), popper, (void*)(intptr_t)i, ABT_THREAD_ATTR_NULL,
                           &popping[i]));
    }
    pthread_t joiner;
    CHECK(pthread_create(&joiner, NULL, join_all_popping, NULL) == 0);
    CHECK(pthread_join(joiner, NULL) == 0);
    CHECK(abt_test_load(&popping_runs) == popping_units);
  }
  abt_test_stop();
}

/* ABT_self_yield_to runs a popped target next on the caller's stream: no other stream takes it
 * first (Argobots' test/basic self_yield_to checks this with a per-stream "next" slot). */
enum { next_slots = 16 };
static ABT_thread next_on_stream[next_slots];
static int next_violations;

static void check_next(int rank) {
  ABT_thread self;
  OK(ABT_self_get_thread(&self));
  ABT_thread expected = __atomic_load_n(&next_on_stream[rank], __ATOMIC_ACQUIRE);
  if (expected != ABT_THREAD_NULL && expected != self) abt_test_add(&next_violations, 1);
  __atomic_store_n(&next_on_stream[rank], ABT_THREAD_NULL, __ATOMIC_RELEASE);
}

static void direct_switcher(void* arg) {
  (void)arg;
  for (int i = 0; i < 12; i++) {
    int rank;
    OK(ABT_self_get_xstream_rank(&rank));
    check_next(rank);
    ABT_unit unit = ABT_UNIT_NULL;
    OK(ABT_pool_pop(secondary_pool(i + rank), &unit));
    if (unit == ABT_UNIT_NULL) {
      OK(ABT_self_yield());
      continue;
    }
    ABT_thread target;
    OK(ABT_unit_get_thread(unit, &target));
    __atomic_store_n(&next_on_stream[rank], target, __ATOMIC_RELEASE);
    OK(ABT_self_yield_to(target));
  }
  int rank;
  OK(ABT_self_get_xstream_rank(&rank));
  check_next(rank);
}

static void test_switch_to_runs_target_next(void) {
  abt_test_start();
  if (abt_test_num_xstreams < 2 || abt_test_num_xstreams > next_slots) {
    abt_test_stop();
    return; /* the ULTs run on secondary streams, whose pools every stream may pop */
  }
  const int units = abt_test_scaled(200);
  ABT_thread* threads = malloc(sizeof(ABT_thread) * (size_t)units);
  CHECK(threads != NULL);
  next_violations = 0;
  for (int i = 0; i < units; i++)
    OK(ABT_thread_create(secondary_pool(i), direct_switcher, NULL, ABT_THREAD_ATTR_NULL,
                         &threads[i]));
  for (int i = 0; i < units; i++) OK(ABT_thread_free(&threads[i]));
  free(threads);
  CHECK(abt_test_load(&next_violations) == 0);
  abt_test_stop();
}

/* A single-consumer pool a stream serves is popped by that stream only: another stream's pop
 * finds it empty (weft's single-consumer lanes take no lock), and its units stay for their
 * stream, which runs them. */
struct foreign_pop_probe {
  int code;
  ABT_unit unit;
  int done;
};

static void pop_primary_pool(void* arg) {
  struct foreign_pop_probe* p = arg;
  p->code = ABT_pool_pop(abt_test_pools[0], &p->unit);
  if (p->code == ABT_SUCCESS && p->unit != ABT_UNIT_NULL)
    OK(ABT_pool_push(abt_test_pools[0], p->unit)); /* not lost: the check below fails instead */
  abt_test_add(&p->done, 1);
}

static void test_foreign_pop_finds_nothing(void) {
  abt_test_start();
  ABT_pool_access access;
  OK(ABT_pool_get_access(abt_test_pools[0], &access));
  ABT_unit unit;
  OK(ABT_pool_pop(abt_test_pools[0], &unit)); /* the consumer itself */
  CHECK(unit == ABT_UNIT_NULL);
  if (abt_test_num_xstreams >= 2 && access != ABT_POOL_ACCESS_MPMC &&
      access != ABT_POOL_ACCESS_SPMC) {
    int runs = 0;
    ABT_thread queued;
    OK(ABT_thread_create(abt_test_pools[0], add_one, &runs, ABT_THREAD_ATTR_NULL, &queued));
    struct foreign_pop_probe probe = {ABT_ERR_OTHER, (ABT_unit)&probe, 0};
    ABT_thread t;
    OK(ABT_thread_create(abt_test_pools[1], pop_primary_pool, &probe, ABT_THREAD_ATTR_NULL, &t));
    /* The primary ULT keeps its stream (no ABT call that yields) until the probe has popped, so
     * `queued` is still in the pool then. */
    const double give_up = ABT_get_wtime() + 60;
    while (!abt_test_load(&probe.done)) CHECK(ABT_get_wtime() < give_up);
    OK(ABT_thread_free(&t));
    CHECK(probe.code == ABT_SUCCESS && probe.unit == ABT_UNIT_NULL);
    OK(ABT_thread_free(&queued)); /* still queued for the primary stream, which runs it */
    CHECK(runs == 1);
  }
  abt_test_stop();
}

int main(int argc, char** argv) {
  static const struct abt_test_case cases[] = {
      {"create_join_free", test_create_join_free},
      {"join_of_units_not_run", test_join_of_units_not_run},
      {"create_to_and_revive", test_create_to_and_revive},
      {"attributes", test_attributes},
      {"queries_and_states", test_queries_and_states},
      {"switch_yield", test_switch_yield},
      {"switch_thread_yield_to", test_switch_thread_yield_to},
      {"switch_self_yield_to", test_switch_self_yield_to},
      {"switch_self_suspend_to", test_switch_self_suspend_to},
      {"switch_self_exit_to", test_switch_self_exit_to},
      {"switch_self_resume_yield_to", test_switch_self_resume_yield_to},
      {"switch_self_resume_suspend_to", test_switch_self_resume_suspend_to},
      {"switch_self_resume_exit_to", test_switch_self_resume_exit_to},
      {"switch_exit", test_switch_exit},
      {"cancel", test_cancel},
      {"migration", test_migration},
      {"tasklets", test_tasklets},
      {"tasklet_self_is_primary", test_tasklet_self_is_primary},
      {"migration_refused", test_migration_refused},
      {"keys", test_keys},
      {"calling_contexts", test_calling_contexts},
      {"invalid_handles", test_invalid_handles},
      {"primary_ult", test_primary_ult},
      {"create_to_unnamed", test_create_to_unnamed},
      {"attr_stack_size", test_attr_stack_size},
      {"switch_to_popped_from_other_streams", test_switch_to_popped_from_other_streams},
      {"switch_to_runs_target_next", test_switch_to_runs_target_next},
      {"foreign_pop_finds_nothing", test_foreign_pop_finds_nothing},
  };
  return abt_test_main(argc, argv, cases, ABT_TEST_COUNT(cases));
}
