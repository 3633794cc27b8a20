/* Smoke test of weft's Argobots layer from C: the core groups, briefly. The full suite is in
 * tests/abt/. Exits non-zero (after printing the failed check) on the first failure. */
#include <abt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)
#define OK(call) CHECK((call) == ABT_SUCCESS)

static void test_error_strings(void) {
  char buf[64];
  size_t len = 0;
  OK(ABT_error_get_str(ABT_ERR_INV_THREAD, buf, &len));
  CHECK(strcmp(buf, "ABT_ERR_INV_THREAD") == 0);
  CHECK(len == strlen("ABT_ERR_INV_THREAD"));
  OK(ABT_error_get_str(ABT_SUCCESS, NULL, &len));
  CHECK(len == strlen("ABT_SUCCESS"));
}

/* ---- work units ---- */

static void add_one(void* arg) {
  __atomic_fetch_add((int*)arg, 1, __ATOMIC_RELAXED);
}

static void yield_then_add(void* arg) {
  ABT_unit_type type;
  OK(ABT_self_get_type(&type));
  CHECK(type == ABT_UNIT_TYPE_THREAD);
  OK(ABT_thread_yield());
  __atomic_fetch_add((int*)arg, 1, __ATOMIC_RELAXED);
}

static void tasklet_body(void* arg) {
  ABT_unit_type type;
  OK(ABT_self_get_type(&type));
  CHECK(type == ABT_UNIT_TYPE_TASK);
  CHECK(ABT_thread_yield() == ABT_ERR_INV_THREAD); /* tasklets cannot yield */
  __atomic_fetch_add((int*)arg, 1, __ATOMIC_RELAXED);
}

static void test_threads_on_primary(void) {
  ABT_xstream self;
  ABT_pool pool;
  int counter = 0, i;
  ABT_thread threads[8];
  OK(ABT_xstream_self(&self));
  OK(ABT_xstream_get_main_pools(self, 1, &pool));
  for (i = 0; i < 8; ++i)
    OK(ABT_thread_create(pool, yield_then_add, &counter, ABT_THREAD_ATTR_NULL, &threads[i]));
  for (i = 0; i < 8; ++i) {
    ABT_thread_state st;
    OK(ABT_thread_join(threads[i]));
    OK(ABT_thread_get_state(threads[i], &st));
    CHECK(st == ABT_THREAD_STATE_TERMINATED);
    OK(ABT_thread_free(&threads[i]));
    CHECK(threads[i] == ABT_THREAD_NULL);
  }
  CHECK(counter == 8);

  /* unnamed units free themselves; a yield loop lets them run */
  counter = 0;
  for (i = 0; i < 4; ++i)
    OK(ABT_thread_create(pool, add_one, &counter, ABT_THREAD_ATTR_NULL, NULL));
  while (__atomic_load_n(&counter, __ATOMIC_RELAXED) < 4) OK(ABT_thread_yield());

  /* tasklets */
  {
    ABT_task task;
    ABT_thread_state st;
    counter = 0;
    OK(ABT_task_create(pool, tasklet_body, &counter, &task));
    OK(ABT_thread_join(task));
    OK(ABT_thread_get_state(task, &st));
    CHECK(st == ABT_THREAD_STATE_TERMINATED);
    OK(ABT_task_free(&task));
    CHECK(counter == 1);
  }

  /* attributes and queries */
  {
    ABT_thread_attr attr;
    ABT_thread t;
    size_t sz = 0;
    void* arg = NULL;
    ABT_bool flag;
    OK(ABT_thread_attr_create(&attr));
    OK(ABT_thread_attr_set_stacksize(attr, 64 * 1024));
    counter = 0;
    OK(ABT_thread_create(pool, add_one, &counter, attr, &t));
    OK(ABT_thread_attr_free(&attr));
    OK(ABT_thread_get_stacksize(t, &sz));
    CHECK(sz >= 64 * 1024);
    OK(ABT_thread_get_arg(t, &arg));
    CHECK(arg == &counter);
    OK(ABT_thread_is_primary(t, &flag));
    CHECK(flag == ABT_FALSE);
    OK(ABT_thread_free(&t));
    CHECK(counter == 1);
  }
}

/* ---- errors and contexts ---- */

static void test_errors(void) {
  ABT_thread self, t = ABT_THREAD_NULL;
  ABT_bool flag;
  CHECK(ABT_thread_join(ABT_THREAD_NULL) == ABT_ERR_INV_THREAD);
  CHECK(ABT_thread_free(&t) == ABT_ERR_INV_THREAD);
  CHECK(ABT_pool_get_size(ABT_POOL_NULL, NULL) == ABT_ERR_INV_POOL);
  CHECK(ABT_xstream_join(ABT_XSTREAM_NULL) == ABT_ERR_INV_XSTREAM);
  CHECK(ABT_thread_create(ABT_POOL_NULL, add_one, NULL, ABT_THREAD_ATTR_NULL, NULL) ==
        ABT_ERR_INV_POOL);
  OK(ABT_self_get_thread(&self));
  OK(ABT_self_is_primary(&flag));
  CHECK(flag == ABT_TRUE);
  CHECK(ABT_thread_free(&self) == ABT_ERR_INV_THREAD); /* the primary ULT */
  CHECK(ABT_thread_exit() == ABT_ERR_INV_THREAD);      /* the primary ULT cannot exit */
  {
    ABT_xstream primary;
    OK(ABT_xstream_self(&primary));
    CHECK(ABT_xstream_free(&primary) == ABT_ERR_INV_XSTREAM);
  }
}

/* ---- streams, pools and schedulers ---- */

struct fifo_sched_data {
  int runs;
};

static void user_sched_run(ABT_sched sched) {
  ABT_pool pool;
  int n = 0;
  OK(ABT_sched_get_pools(sched, 1, 0, &pool));
  for (;;) {
    ABT_thread t;
    OK(ABT_pool_pop_thread(pool, &t));
    if (t != ABT_THREAD_NULL) {
      ABT_unit unit;
      OK(ABT_thread_get_unit(t, &unit));
      OK(ABT_xstream_run_unit(unit, pool));
    }
    if (++n % 16 == 0) {
      ABT_bool stop;
      OK(ABT_xstream_check_events(sched));
      OK(ABT_sched_has_to_stop(sched, &stop));
      if (stop) break;
    }
  }
}

static int user_sched_init(ABT_sched sched, ABT_sched_config config) {
  (void)config;
  return ABT_sched_set_data(sched, NULL);
}

static void on_rank(void* arg) {
  int rank = -1;
  OK(ABT_self_get_xstream_rank(&rank));
  ((int*)arg)[rank] += 1;
}

static void test_streams(void) {
  ABT_pool shared;
  ABT_xstream xs[2];
  ABT_sched user;
  ABT_sched_def def;
  ABT_pool user_pool;
  int per_rank[8] = {0};
  int counter = 0, i, num = 0;

  /* a shared MPMC pool served by a BASIC stream */
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_TRUE, &shared));
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &shared, ABT_SCHED_CONFIG_NULL, &xs[0]));

  /* a user-defined scheduler over its own pool */
  memset(&def, 0, sizeof def);
  def.type = ABT_SCHED_TYPE_ULT;
  def.init = user_sched_init;
  def.run = user_sched_run;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPSC, ABT_TRUE, &user_pool));
  OK(ABT_sched_create(&def, 1, &user_pool, ABT_SCHED_CONFIG_NULL, &user));
  OK(ABT_xstream_create(user, &xs[1]));
  OK(ABT_xstream_get_num(&num));
  CHECK(num == 3);

  {
    ABT_thread threads[16];
    for (i = 0; i < 16; ++i)
      OK(ABT_thread_create(i % 2 ? shared : user_pool, on_rank, per_rank, ABT_THREAD_ATTR_NULL,
                           &threads[i]));
    OK(ABT_thread_free_many(16, threads));
  }
  {
    int r0, r1;
    OK(ABT_xstream_get_rank(xs[0], &r0));
    OK(ABT_xstream_get_rank(xs[1], &r1));
    CHECK(per_rank[r0] == 8);
    CHECK(per_rank[r1] == 8);
  }

  /* pool operations from the primary: push and pop a unit the primary holds */
  {
    ABT_pool mine;
    ABT_thread t, popped;
    size_t size = 99;
    OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &mine));
    OK(ABT_thread_create(mine, add_one, &counter, ABT_THREAD_ATTR_NULL, &t));
    OK(ABT_pool_get_size(mine, &size));
    CHECK(size == 1);
    OK(ABT_pool_pop_thread(mine, &popped));
    CHECK(popped == t);
    OK(ABT_pool_push_thread(shared, popped)); /* run it on xs[0] instead */
    OK(ABT_thread_free(&t));
    CHECK(counter == 1);
    OK(ABT_pool_free(&mine));
  }

  for (i = 0; i < 2; ++i) {
    ABT_xstream_state st;
    OK(ABT_xstream_join(xs[i]));
    OK(ABT_xstream_get_state(xs[i], &st));
    CHECK(st == ABT_XSTREAM_STATE_TERMINATED);
    OK(ABT_xstream_free(&xs[i]));
    CHECK(xs[i] == ABT_XSTREAM_NULL);
  }
  OK(ABT_sched_free(&user));
}

/* ---- keys ---- */

static int destructed;
static void key_dtor(void* v) {
  (void)v;
  destructed++;
}
static void key_user(void* arg) {
  ABT_key key = *(ABT_key*)arg;
  void* v = NULL;
  OK(ABT_key_get(key, &v));
  CHECK(v == NULL);
  OK(ABT_key_set(key, &destructed));
  OK(ABT_key_get(key, &v));
  CHECK(v == &destructed);
}

static void test_keys(void) {
  ABT_key key;
  ABT_thread t;
  ABT_pool pool;
  ABT_xstream self;
  OK(ABT_key_create(key_dtor, &key));
  OK(ABT_xstream_self(&self));
  OK(ABT_xstream_get_main_pools(self, 1, &pool));
  OK(ABT_thread_create(pool, key_user, &key, ABT_THREAD_ATTR_NULL, &t));
  OK(ABT_thread_free(&t));
  CHECK(destructed == 1);
  OK(ABT_key_free(&key));
}

int main(int argc, char** argv) {
  ABT_bool flag;
  test_error_strings();
  CHECK(ABT_initialized() == ABT_ERR_UNINITIALIZED);
  CHECK(ABT_xstream_get_num(NULL) == ABT_ERR_UNINITIALIZED);
  OK(ABT_init(argc, argv));
  OK(ABT_init(argc, argv)); /* nested: counts */
  OK(ABT_initialized());
  OK(ABT_self_on_primary_xstream(&flag));
  CHECK(flag == ABT_TRUE);
  test_threads_on_primary();
  test_errors();
  test_streams();
  test_keys();
  OK(ABT_finalize());
  OK(ABT_initialized());
  OK(ABT_finalize());
  CHECK(ABT_initialized() == ABT_ERR_UNINITIALIZED);
  puts("weft_abt_smoke: ok");
  return 0;
}
