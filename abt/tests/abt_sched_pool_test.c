// SPDX-License-Identifier: Apache-2.0
/* Schedulers and pools: ABT_sched_* and ABT_sched_config_* with user-defined schedulers (old
 * ABT_pool_pop/ABT_xstream_run_unit loop and new ABT_pool_pop_thread/ABT_self_schedule loop),
 * the predefined BASIC, BASIC_WAIT, PRIO and RANDWS schedulers, stacking with
 * ABT_pool_add_sched, the predefined FIFO, FIFO_WAIT and RANDWS pools in every access mode,
 * user pools through the old ABT_pool_def and the new ABT_pool_user_def, ABT_pool_config_*, and
 * ABT_unit_*. */
#include "abt_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Work units that count themselves                                                            */

/* What a counted unit checks and adds to. */
struct tally {
  int count;
  ABT_xstream expected; /* ABT_XSTREAM_NULL: any stream */
  int wrong_stream;
  int yields; /* how often each ULT yields before it ends */
};

static void counted(void* arg) {
  struct tally* t = arg;
  for (int i = 0; i < t->yields; i++) OK(ABT_thread_yield());
  if (t->expected != ABT_XSTREAM_NULL) {
    ABT_xstream self;
    OK(ABT_self_get_xstream(&self));
    if (self != t->expected) abt_test_add(&t->wrong_stream, 1);
  }
  abt_test_add(&t->count, 1);
}

static void counted_task(void* arg) {
  struct tally* t = arg;
  if (t->expected != ABT_XSTREAM_NULL) {
    ABT_xstream self;
    OK(ABT_self_get_xstream(&self));
    if (self != t->expected) abt_test_add(&t->wrong_stream, 1);
  }
  abt_test_add(&t->count, 1);
}

/* Pushes `ults` unnamed ULTs and `tasks` unnamed tasklets into `pool`. */
static void spawn(ABT_pool pool, struct tally* t, int ults, int tasks) {
  for (int i = 0; i < ults; i++)
    OK(ABT_thread_create(pool, counted, t, ABT_THREAD_ATTR_NULL, NULL));
  for (int i = 0; i < tasks; i++) OK(ABT_task_create(pool, counted_task, t, NULL));
}

/* ------------------------------------------------------------------------------------------ */
/* A user-defined scheduler                                                                    */

/* Per-scheduler state, kept with ABT_sched_set_data. */
struct user_sched_data {
  int cfg_int;
  double cfg_double;
  void* cfg_ptr;
  int scheduled;
  int event_checks;
};

static int user_sched_inits, user_sched_frees, user_sched_returns;
static int last_freed_scheduled; /* `scheduled` of the last scheduler freed */

static ABT_sched_config_var cfg_int_var = {0, ABT_SCHED_CONFIG_INT};
static ABT_sched_config_var cfg_double_var = {1, ABT_SCHED_CONFIG_DOUBLE};
static ABT_sched_config_var cfg_ptr_var = {2, ABT_SCHED_CONFIG_PTR};

static int user_sched_init(ABT_sched sched, ABT_sched_config config) {
  struct user_sched_data* d = calloc(1, sizeof *d);
  if (!d) return ABT_ERR_MEM;
  d->cfg_int = -1;
  if (config != ABT_SCHED_CONFIG_NULL) {
    OK(ABT_sched_config_read(config, 3, &d->cfg_int, &d->cfg_double, &d->cfg_ptr));
  }
  abt_test_add(&user_sched_inits, 1);
  return ABT_sched_set_data(sched, d);
}

static struct user_sched_data* data_of(ABT_sched sched) {
  void* data = NULL;
  OK(ABT_sched_get_data(sched, &data));
  CHECK(data != NULL);
  return data;
}

/* Polls the stop request and the stream's events every few rounds; true when it must stop. */
static int user_sched_should_stop(ABT_sched sched, struct user_sched_data* d, unsigned round) {
  if (round % 8 != 0) return 0;
  ABT_bool stop = ABT_FALSE;
  OK(ABT_xstream_check_events(sched));
  d->event_checks++;
  OK(ABT_sched_has_to_stop(sched, &stop));
  return stop == ABT_TRUE;
}

/* The Argobots 1.0 loop: ABT_pool_pop + ABT_xstream_run_unit over the pools in order. */
static void user_sched_run_units(ABT_sched sched) {
  struct user_sched_data* d = data_of(sched);
  int num_pools = 0;
  OK(ABT_sched_get_num_pools(sched, &num_pools));
  CHECK(num_pools >= 1 && num_pools <= 4);
  ABT_pool pools[4];
  OK(ABT_sched_get_pools(sched, num_pools, 0, pools));
  for (unsigned round = 0;; round++) {
    for (int i = 0; i < num_pools; i++) {
      ABT_unit unit = ABT_UNIT_NULL;
      OK(ABT_pool_pop(pools[i], &unit));
      if (unit != ABT_UNIT_NULL) {
        OK(ABT_xstream_run_unit(unit, pools[i]));
        d->scheduled++;
        break;
      }
    }
    if (user_sched_should_stop(sched, d, round)) break;
  }
  abt_test_add(&user_sched_returns, 1);
}

/* The Argobots 1.2 loop: ABT_pool_pop_thread + ABT_self_schedule. */
static void user_sched_run_threads(ABT_sched sched) {
  struct user_sched_data* d = data_of(sched);
  int num_pools = 0;
  OK(ABT_sched_get_num_pools(sched, &num_pools));
  CHECK(num_pools >= 1 && num_pools <= 4);
  ABT_pool pools[4];
  OK(ABT_sched_get_pools(sched, num_pools, 0, pools));
  for (unsigned round = 0;; round++) {
    for (int i = 0; i < num_pools; i++) {
      ABT_thread thread = ABT_THREAD_NULL;
      OK(ABT_pool_pop_thread(pools[i], &thread));
      if (thread != ABT_THREAD_NULL) {
        OK(ABT_self_schedule(thread, ABT_POOL_NULL));
        d->scheduled++;
        break;
      }
    }
    if (user_sched_should_stop(sched, d, round)) break;
  }
  abt_test_add(&user_sched_returns, 1);
}

/* What ABT_thread_is_unnamed says of the ULT that runs a stacked scheduler (-1 before it ran):
 * Argobots creates that ULT unnamed (it frees itself when the scheduler ends), and a tool that
 * tracks ULTs relies on it to accept a FREE event without a JOIN. */
static int stacked_sched_unnamed = -1;

static void user_sched_run_threads_probed(ABT_sched sched) {
  ABT_thread self = ABT_THREAD_NULL;
  OK(ABT_self_get_thread(&self));
  ABT_bool unnamed = ABT_FALSE;
  OK(ABT_thread_is_unnamed(self, &unnamed));
  ABT_bool self_unnamed = ABT_FALSE;
  OK(ABT_self_is_unnamed(&self_unnamed));
  CHECK(self_unnamed == unnamed);
  abt_test_store(&stacked_sched_unnamed, unnamed == ABT_TRUE);
  user_sched_run_threads(sched);
}

static int user_sched_free(ABT_sched sched) {
  struct user_sched_data* d = data_of(sched);
  abt_test_store(&last_freed_scheduled, d->scheduled);
  free(d);
  abt_test_add(&user_sched_frees, 1);
  return ABT_SUCCESS;
}

static ABT_pool user_sched_migration_pool(ABT_sched sched) {
  ABT_pool pool = ABT_POOL_NULL;
  OK(ABT_sched_get_pools(sched, 1, 0, &pool));
  return pool;
}

static ABT_sched_def unit_loop_def = {ABT_SCHED_TYPE_ULT, user_sched_init, user_sched_run_units,
                                      user_sched_free, user_sched_migration_pool};
static ABT_sched_def thread_loop_def = {ABT_SCHED_TYPE_ULT, user_sched_init, user_sched_run_threads,
                                        user_sched_free, NULL};
static ABT_sched_def probed_thread_loop_def = {
    ABT_SCHED_TYPE_ULT, user_sched_init, user_sched_run_threads_probed, user_sched_free, NULL};

static void test_sched_config(void) {
  abt_test_start();
  int marker = 0;
  ABT_sched_config config;
  OK(ABT_sched_config_create(&config, cfg_int_var, 7, cfg_double_var, 2.5, cfg_ptr_var,
                             (void*)&marker, ABT_sched_config_var_end));
  int i = 0;
  double d = 0.0;
  void* p = NULL;
  OK(ABT_sched_config_read(config, 3, &i, &d, &p));
  CHECK(i == 7 && d == 2.5 && p == &marker);
  /* set/get by index (Argobots 1.2). */
  int eleven = 11;
  OK(ABT_sched_config_set(config, 0, ABT_SCHED_CONFIG_INT, &eleven));
  ABT_sched_config_type type = ABT_SCHED_CONFIG_PTR;
  int got = 0;
  OK(ABT_sched_config_get(config, 0, &type, &got));
  CHECK(type == ABT_SCHED_CONFIG_INT && got == 11);
  double half = 0.5, got_double = 0.0;
  OK(ABT_sched_config_set(config, 5, ABT_SCHED_CONFIG_DOUBLE, &half));
  OK(ABT_sched_config_get(config, 5, &type, &got_double));
  CHECK(type == ABT_SCHED_CONFIG_DOUBLE && got_double == 0.5);
  OK(ABT_sched_config_free(&config));
  CHECK(config == ABT_SCHED_CONFIG_NULL);
  CHECK_RET(ABT_sched_config_read(ABT_SCHED_CONFIG_NULL, 1, &i), ABT_ERR_INV_SCHED_CONFIG);
  CHECK_RET(ABT_sched_config_free(&config), ABT_ERR_INV_SCHED_CONFIG);

  /* Predefined variables are accepted by the predefined schedulers. */
  OK(ABT_sched_config_create(&config, ABT_sched_basic_freq, 4, ABT_sched_config_automatic, 1,
                             ABT_sched_config_var_end));
  ABT_pool pool;
  ABT_xstream xstream;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_TRUE, &pool));
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &pool, config, &xstream));
  OK(ABT_sched_config_free(&config));
  struct tally t = {0, xstream, 0, 1};
  spawn(pool, &t, 20, 20);
  abt_test_wait_count(&t.count, 40);
  CHECK(t.wrong_stream == 0);
  OK(ABT_xstream_free(&xstream));
  abt_test_stop();
}

/* Runs one user scheduler on a new stream: config, data, pools, sizes, stop and free. */
static void run_user_sched(ABT_sched_def* def) {
  int marker = 0;
  const int inits = abt_test_load(&user_sched_inits), frees = abt_test_load(&user_sched_frees);
  const int returns = abt_test_load(&user_sched_returns);
  ABT_pool pools[2];
  for (int i = 0; i < 2; i++) {
    OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &pools[i]));
  }
  ABT_sched_config config;
  OK(ABT_sched_config_create(&config, cfg_int_var, 42, cfg_double_var, -1.5, cfg_ptr_var,
                             (void*)&marker, ABT_sched_config_var_end));
  ABT_sched sched;
  OK(ABT_sched_create(def, 2, pools, config, &sched));
  OK(ABT_sched_config_free(&config));
  CHECK(abt_test_load(&user_sched_inits) == inits + 1);
  struct user_sched_data* d = data_of(sched);
  CHECK(d->cfg_int == 42 && d->cfg_double == -1.5 && d->cfg_ptr == &marker);
  int num_pools = 0;
  OK(ABT_sched_get_num_pools(sched, &num_pools));
  CHECK(num_pools == 2);
  ABT_pool second = ABT_POOL_NULL;
  OK(ABT_sched_get_pools(sched, 1, 1, &second));
  CHECK(second == pools[1]);

  /* Units waiting before the stream starts are counted by the scheduler's sizes. */
  struct tally early = {0, ABT_XSTREAM_NULL, 0, 2};
  spawn(pools[0], &early, 3, 2);
  spawn(pools[1], &early, 1, 1);
  size_t size = 0, total = 0;
  OK(ABT_sched_get_size(sched, &size));
  CHECK(size == 7);
  OK(ABT_sched_get_total_size(sched, &total));
  CHECK(total == 7);

  ABT_xstream xstream;
  OK(ABT_xstream_create(sched, &xstream));
  struct tally t = {0, xstream, 0, 2};
  const int ults = abt_test_scaled(200), tasks = abt_test_scaled(200);
  spawn(pools[0], &t, ults / 2, tasks / 2);
  spawn(pools[1], &t, ults - ults / 2, tasks - tasks / 2);
  abt_test_wait_count(&early.count, 7);
  abt_test_wait_count(&t.count, ults + tasks);
  OK(ABT_xstream_free(&xstream));
  CHECK(t.wrong_stream == 0);
  CHECK(abt_test_load(&user_sched_returns) == returns + 1);
  /* Schedulers made by ABT_sched_create are not freed with their stream. */
  CHECK(abt_test_load(&user_sched_frees) == frees);
  CHECK(d->event_checks > 0);
  OK(ABT_sched_free(&sched));
  CHECK(sched == ABT_SCHED_NULL);
  CHECK(abt_test_load(&user_sched_frees) == frees + 1);
  /* Every ULT ran at least three times (it yields twice), every tasklet once. */
  CHECK(abt_test_load(&last_freed_scheduled) >= 3 * (4 + ults) + 3 + tasks);
  for (int i = 0; i < 2; i++) OK(ABT_pool_free(&pools[i]));
}

static void test_user_sched(void) {
  abt_test_start();
  run_user_sched(&unit_loop_def);
  run_user_sched(&thread_loop_def);
  ABT_sched sched;
  ABT_sched_def no_run = {ABT_SCHED_TYPE_ULT, NULL, NULL, NULL, NULL};
  CHECK(ABT_sched_create(&no_run, 0, NULL, ABT_SCHED_CONFIG_NULL, &sched) != ABT_SUCCESS);
  CHECK_RET(ABT_sched_free(&sched), ABT_ERR_INV_SCHED);
  void* data;
  CHECK_RET(ABT_sched_get_data(ABT_SCHED_NULL, &data), ABT_ERR_INV_SCHED);
  CHECK_RET(ABT_sched_finish(ABT_SCHED_NULL), ABT_ERR_INV_SCHED);
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* Predefined schedulers                                                                       */

/* Records the order in which units ran. */
struct order {
  int next;
  int seen[16];
};
struct order_arg {
  struct order* order;
  int id;
};

static void record_order(void* arg) {
  struct order_arg* a = arg;
  a->order->seen[abt_test_add(&a->order->next, 1) - 1] = a->id;
}

static void test_predefined_scheds(void) {
  abt_test_start();
  const ABT_sched_predef kinds[] = {ABT_SCHED_DEFAULT, ABT_SCHED_BASIC, ABT_SCHED_BASIC_WAIT,
                                    ABT_SCHED_PRIO, ABT_SCHED_RANDWS};
  for (size_t k = 0; k < ABT_TEST_COUNT(kinds); k++) {
    ABT_pool pools[2];
    for (int i = 0; i < 2; i++) {
      OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &pools[i]));
    }
    ABT_xstream xstream;
    OK(ABT_xstream_create_basic(kinds[k], 2, pools, ABT_SCHED_CONFIG_NULL, &xstream));
    struct tally t = {0, xstream, 0, 1};
    /* Two waves: the second finds the scheduler idle (BASIC_WAIT sleeps then). */
    for (int wave = 1; wave <= 2; wave++) {
      spawn(pools[0], &t, 10, 10);
      spawn(pools[1], &t, 10, 10);
      abt_test_wait_count(&t.count, 40 * wave);
    }
    CHECK(t.wrong_stream == 0);
    OK(ABT_xstream_free(&xstream));
    for (int i = 0; i < 2; i++) OK(ABT_pool_free(&pools[i]));
  }

  /* A predefined scheduler without pools makes its own. */
  ABT_sched sched;
  int num_pools = 0;
  OK(ABT_sched_create_basic(ABT_SCHED_BASIC, 0, NULL, ABT_SCHED_CONFIG_NULL, &sched));
  OK(ABT_sched_get_num_pools(sched, &num_pools));
  CHECK(num_pools >= 1);
  OK(ABT_sched_free(&sched));

  /* PRIO serves its first pool before its second: both are full when the stream starts. */
  ABT_pool prio_pools[2];
  for (int i = 0; i < 2; i++) {
    OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPSC, ABT_TRUE, &prio_pools[i]));
  }
  struct order order = {0, {0}};
  struct order_arg args[10];
  for (int i = 0; i < 10; i++) {
    args[i].order = &order;
    args[i].id = i;
    /* ids 0-4 go to the low-priority pool first, ids 5-9 to the high-priority one. */
    OK(ABT_thread_create(prio_pools[i < 5 ? 1 : 0], record_order, &args[i], ABT_THREAD_ATTR_NULL,
                         NULL));
  }
  ABT_xstream xstream;
  OK(ABT_xstream_create_basic(ABT_SCHED_PRIO, 2, prio_pools, ABT_SCHED_CONFIG_NULL, &xstream));
  OK(ABT_xstream_free(&xstream));
  CHECK(order.next == 10);
  for (int i = 0; i < 10; i++) CHECK(order.seen[i] == (i < 5 ? i + 5 : i - 5));

  /* RANDWS streams that share their pools steal from one another. */
  const int n = abt_test_num_xstreams + 1;
  ABT_pool shared[8];
  ABT_xstream streams[8];
  for (int i = 0; i < n; i++) {
    OK(ABT_pool_create_basic(ABT_POOL_RANDWS, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &shared[i]));
  }
  for (int i = 0; i < n; i++) {
    ABT_pool mine[8];
    for (int j = 0; j < n; j++) mine[j] = shared[(i + j) % n];
    OK(ABT_xstream_create_basic(ABT_SCHED_RANDWS, n, mine, ABT_SCHED_CONFIG_NULL, &streams[i]));
  }
  struct tally t = {0, ABT_XSTREAM_NULL, 0, 2};
  const int units = abt_test_scaled(400);
  spawn(shared[0], &t, units / 2, units - units / 2);
  abt_test_wait_count(&t.count, units);
  for (int i = 0; i < n; i++) OK(ABT_xstream_free(&streams[i]));
  for (int i = 0; i < n; i++) OK(ABT_pool_free(&shared[i]));
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* Stacked schedulers                                                                          */

static void test_stacking(void) {
  abt_test_start();
  ABT_bool stackable = ABT_FALSE;
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_ENABLED_STACKABLE_SCHED, &stackable));
  CHECK(stackable == ABT_TRUE);
  ABT_pool outer_pool;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &outer_pool));
  ABT_xstream xstream;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &outer_pool, ABT_SCHED_CONFIG_NULL, &xstream));

  /* A user scheduler pushed into the outer pool runs as a unit there and serves its own pool
   * on the same stream; finished, it returns and, being automatic, is freed. */
  const int frees = abt_test_load(&user_sched_frees);
  ABT_pool inner_pool;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &inner_pool));
  ABT_sched_config config;
  OK(ABT_sched_config_create(&config, ABT_sched_config_automatic, 1, ABT_sched_config_var_end));
  ABT_sched inner;
  OK(ABT_sched_create(&probed_thread_loop_def, 1, &inner_pool, config, &inner));
  OK(ABT_pool_add_sched(outer_pool, inner));
  struct tally t = {0, xstream, 0, 1};
  const int units = abt_test_scaled(100);
  spawn(inner_pool, &t, units, units);
  abt_test_wait_count(&t.count, 2 * units);
  CHECK(t.wrong_stream == 0);
  CHECK(abt_test_load(&stacked_sched_unnamed) == 1); /* the units ran: so did the scheduler */
  OK(ABT_sched_finish(inner));
  abt_test_wait_count(&user_sched_frees, frees + 1);

  /* ABT_sched_exit stops a stacked scheduler without waiting for its pool to drain. */
  ABT_sched exiting;
  ABT_pool exiting_pool;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &exiting_pool));
  OK(ABT_sched_create(&unit_loop_def, 1, &exiting_pool, config, &exiting));
  OK(ABT_pool_add_sched(outer_pool, exiting));
  OK(ABT_sched_exit(exiting));
  abt_test_wait_count(&user_sched_frees, frees + 2);

  /* A predefined scheduler stacks the same way. */
  ABT_pool basic_pool;
  ABT_sched basic;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &basic_pool));
  OK(ABT_sched_create_basic(ABT_SCHED_BASIC, 1, &basic_pool, config, &basic));
  OK(ABT_sched_config_free(&config));
  OK(ABT_pool_add_sched(outer_pool, basic));
  spawn(basic_pool, &t, units, units);
  abt_test_wait_count(&t.count, 4 * units);
  CHECK(t.wrong_stream == 0);
  OK(ABT_sched_finish(basic));

  OK(ABT_xstream_free(&xstream));
  OK(ABT_pool_free(&inner_pool));
  OK(ABT_pool_free(&exiting_pool));
  OK(ABT_pool_free(&basic_pool));
  OK(ABT_pool_free(&outer_pool));
  CHECK_RET(ABT_pool_add_sched(ABT_POOL_NULL, basic), ABT_ERR_INV_POOL);
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* Predefined pools                                                                            */

static void count_visit(void* arg, ABT_thread thread) {
  CHECK(thread != ABT_THREAD_NULL);
  abt_test_add((int*)arg, 1);
}

static void count_unit_visit(void* arg, ABT_unit unit) {
  CHECK(unit != ABT_UNIT_NULL);
  abt_test_add((int*)arg, 1);
}

static void check_pool(ABT_pool_kind kind, ABT_pool_access access, int* ids, int* num_ids) {
  ABT_pool pool;
  OK(ABT_pool_create_basic(kind, access, ABT_FALSE, &pool));
  ABT_pool_access got_access;
  OK(ABT_pool_get_access(pool, &got_access));
  CHECK(got_access == access);
  int id = -1;
  OK(ABT_pool_get_id(pool, &id));
  for (int i = 0; i < *num_ids; i++) CHECK(ids[i] != id);
  ids[(*num_ids)++] = id;
  int marker;
  void* data = NULL;
  OK(ABT_pool_set_data(pool, &marker));
  OK(ABT_pool_get_data(pool, &data));
  CHECK(data == &marker);

  ABT_bool empty = ABT_FALSE;
  size_t size = 1;
  OK(ABT_pool_is_empty(pool, &empty));
  CHECK(empty == ABT_TRUE);
  OK(ABT_pool_get_size(pool, &size));
  CHECK(size == 0);
  ABT_thread none = (ABT_thread)&marker;
  OK(ABT_pool_pop_thread(pool, &none));
  CHECK(none == ABT_THREAD_NULL);
  OK(ABT_pool_pop_wait_thread(pool, &none, 0.001));
  CHECK(none == ABT_THREAD_NULL);

  struct tally t = {0, ABT_XSTREAM_NULL, 0, 0};
  ABT_thread units[6];
  for (int i = 0; i < 4; i++) {
    OK(ABT_thread_create(pool, counted, &t, ABT_THREAD_ATTR_NULL, &units[i]));
  }
  for (int i = 4; i < 6; i++) OK(ABT_task_create(pool, counted_task, &t, &units[i]));
  OK(ABT_pool_is_empty(pool, &empty));
  CHECK(empty == ABT_FALSE);
  OK(ABT_pool_get_size(pool, &size));
  CHECK(size == 6);
  OK(ABT_pool_get_total_size(pool, &size));
  CHECK(size == 6);
  int visits = 0;
  OK(ABT_pool_print_all_threads(pool, &visits, count_visit));
  CHECK(visits == 6);
  visits = 0;
  OK(ABT_pool_print_all(pool, &visits, count_unit_visit));
  CHECK(visits == 6);

  /* FIFO pools give units back in the order they came; every pool gives each back once. */
  ABT_thread popped[6];
  size_t num = 0;
  OK(ABT_pool_pop_threads(pool, popped, 6, &num));
  CHECK(num == 6);
  for (int i = 0; i < 6; i++) {
    int found = 0;
    for (int j = 0; j < 6; j++) found += popped[i] == units[j];
    CHECK(found == 1);
    for (int j = 0; j < i; j++) CHECK(popped[j] != popped[i]);
    if (kind != ABT_POOL_RANDWS) CHECK(popped[i] == units[i]);
  }
  OK(ABT_pool_get_size(pool, &size));
  CHECK(size == 0);
  OK(ABT_pool_push_threads(pool, popped, 3));
  OK(ABT_pool_push_thread(pool, popped[3]));
  OK(ABT_pool_push_thread_ex(pool, popped[4], ABT_POOL_CONTEXT_OP_POOL_OTHER));
  OK(ABT_pool_push_threads_ex(pool, &popped[5], 1, ABT_POOL_CONTEXT_OP_POOL_OTHER));
  OK(ABT_pool_get_size(pool, &size));
  CHECK(size == 6);
  ABT_thread one = ABT_THREAD_NULL;
  OK(ABT_pool_pop_thread_ex(pool, &one, ABT_POOL_CONTEXT_OWNER_PRIMARY));
  CHECK(one != ABT_THREAD_NULL);
  OK(ABT_pool_push_thread(pool, one));
  OK(ABT_pool_pop_wait_thread_ex(pool, &one, 0.001, ABT_POOL_CONTEXT_OWNER_PRIMARY));
  CHECK(one != ABT_THREAD_NULL);
  OK(ABT_pool_push_thread(pool, one));

  /* The old unit interface sees the same units. */
  ABT_unit unit = ABT_UNIT_NULL;
  OK(ABT_pool_pop(pool, &unit));
  CHECK(unit != ABT_UNIT_NULL);
  ABT_thread of_unit = ABT_THREAD_NULL;
  OK(ABT_unit_get_thread(unit, &of_unit));
  int found = 0;
  for (int j = 0; j < 6; j++) found += of_unit == units[j];
  CHECK(found == 1);
  OK(ABT_pool_push(pool, unit));
  unit = ABT_UNIT_NULL;
  OK(ABT_pool_pop_wait(pool, &unit, 0.001));
  CHECK(unit != ABT_UNIT_NULL);
  OK(ABT_pool_push(pool, unit));

  /* Run everything on the calling stream, as the access mode allows. */
  for (;;) {
    ABT_thread next = ABT_THREAD_NULL;
    OK(ABT_pool_pop_thread(pool, &next));
    if (next == ABT_THREAD_NULL) break;
    OK(ABT_self_schedule(next, ABT_POOL_NULL));
  }
  CHECK(t.count == 6);
  for (int i = 0; i < 6; i++) {
    ABT_thread_state state;
    OK(ABT_thread_get_state(units[i], &state));
    CHECK(state == ABT_THREAD_STATE_TERMINATED);
  }
  OK(ABT_thread_free_many(6, units));
  OK(ABT_pool_free(&pool));
  CHECK(pool == ABT_POOL_NULL);
}

static void test_predefined_pools(void) {
  abt_test_start();
  const ABT_pool_kind kinds[] = {ABT_POOL_FIFO, ABT_POOL_FIFO_WAIT, ABT_POOL_RANDWS};
  const ABT_pool_access modes[] = {ABT_POOL_ACCESS_PRIV, ABT_POOL_ACCESS_SPSC, ABT_POOL_ACCESS_MPSC,
                                   ABT_POOL_ACCESS_SPMC, ABT_POOL_ACCESS_MPMC};
  int ids[32], num_ids = 0;
  for (size_t k = 0; k < ABT_TEST_COUNT(kinds); k++) {
    for (size_t m = 0; m < ABT_TEST_COUNT(modes); m++)
      check_pool(kinds[k], modes[m], ids, &num_ids);
  }
  ABT_pool pool;
  size_t size;
  CHECK_RET(ABT_pool_get_size(ABT_POOL_NULL, &size), ABT_ERR_INV_POOL);
  CHECK_RET(ABT_pool_push_thread(ABT_POOL_NULL, ABT_THREAD_NULL), ABT_ERR_INV_POOL);
  pool = ABT_POOL_NULL;
  CHECK_RET(ABT_pool_free(&pool), ABT_ERR_INV_POOL);
  CHECK_RET(ABT_thread_create(ABT_POOL_NULL, counted, NULL, ABT_THREAD_ATTR_NULL, NULL),
            ABT_ERR_INV_POOL);

  /* Pools in every access mode, shared the way the mode allows, serve several streams: MPMC
   * and SPMC pools (pushed by the primary only) are popped by all streams' schedulers. */
  for (int shared_mode = 0; shared_mode < 2; shared_mode++) {
    ABT_pool shared_pool;
    const ABT_pool_access access = shared_mode ? ABT_POOL_ACCESS_MPMC : ABT_POOL_ACCESS_SPMC;
    OK(ABT_pool_create_basic(ABT_POOL_FIFO, access, ABT_FALSE, &shared_pool));
    ABT_xstream streams[4];
    for (int i = 0; i < abt_test_num_xstreams; i++) {
      OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &shared_pool, ABT_SCHED_CONFIG_NULL,
                                  &streams[i]));
    }
    struct tally t = {0, ABT_XSTREAM_NULL, 0, 0};
    const int units = abt_test_scaled(300);
    spawn(shared_pool, &t, units, units);
    abt_test_wait_count(&t.count, 2 * units);
    for (int i = 0; i < abt_test_num_xstreams; i++) OK(ABT_xstream_free(&streams[i]));
    OK(ABT_pool_free(&shared_pool));
  }
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* A user pool through the Argobots 1.2 ABT_pool_user_def interface                            */

/* One unit of the user pools below: a list node that remembers its thread. */
struct user_unit {
  struct user_unit* next;
  ABT_thread thread;
  ABT_pool pool; /* for the old interface, which has no pool argument on free */
};

/* A locked FIFO list, the state of a user pool. */
struct user_pool {
  pthread_mutex_t lock;
  struct user_unit *head, *tail;
  size_t size;
  int config_value;
};

static int user_units_created, user_units_freed, user_pool_inits, user_pool_frees;

static struct user_pool* user_pool_of(ABT_pool pool) {
  void* data = NULL;
  OK(ABT_pool_get_data(pool, &data));
  CHECK(data != NULL);
  return data;
}

static void list_push(struct user_pool* p, struct user_unit* u) {
  pthread_mutex_lock(&p->lock);
  u->next = NULL;
  if (p->tail)
    p->tail->next = u;
  else
    p->head = u;
  p->tail = u;
  p->size++;
  pthread_mutex_unlock(&p->lock);
}

/* The number of units queued, read under the lock (pushes and pops come from any stream). */
static size_t list_size(struct user_pool* p) {
  pthread_mutex_lock(&p->lock);
  const size_t size = p->size;
  pthread_mutex_unlock(&p->lock);
  return size;
}

static struct user_unit* list_pop(struct user_pool* p) {
  pthread_mutex_lock(&p->lock);
  struct user_unit* u = p->head;
  if (u) {
    p->head = u->next;
    if (!p->head) p->tail = NULL;
    p->size--;
  }
  pthread_mutex_unlock(&p->lock);
  return u;
}

static int make_user_pool(ABT_pool pool, ABT_pool_config config) {
  struct user_pool* p = calloc(1, sizeof *p);
  if (!p) return ABT_ERR_MEM;
  pthread_mutex_init(&p->lock, NULL);
  p->config_value = -1;
  if (config != ABT_POOL_CONFIG_NULL) {
    ABT_pool_config_type type;
    OK(ABT_pool_config_get(config, 3, &type, &p->config_value));
    CHECK(type == ABT_POOL_CONFIG_INT);
  }
  abt_test_add(&user_pool_inits, 1);
  return ABT_pool_set_data(pool, p);
}

static void destroy_user_pool(ABT_pool pool) {
  struct user_pool* p = user_pool_of(pool);
  CHECK(p->size == 0);
  pthread_mutex_destroy(&p->lock);
  free(p);
  abt_test_add(&user_pool_frees, 1);
}

/* Set: the pools of the new interface make no units (their create_unit gives ABT_UNIT_NULL). */
static int refuse_units;

static ABT_unit new_create_unit(ABT_pool pool, ABT_thread thread) {
  if (abt_test_load(&refuse_units)) return ABT_UNIT_NULL;
  struct user_unit* u = calloc(1, sizeof *u);
  if (!u) return ABT_UNIT_NULL;
  u->thread = thread;
  u->pool = pool;
  abt_test_add(&user_units_created, 1);
  return (ABT_unit)u;
}

static void new_free_unit(ABT_pool pool, ABT_unit unit) {
  CHECK(((struct user_unit*)unit)->pool == pool);
  free(unit);
  abt_test_add(&user_units_freed, 1);
}

static ABT_bool new_is_empty(ABT_pool pool) {
  return list_size(user_pool_of(pool)) == 0 ? ABT_TRUE : ABT_FALSE;
}

static ABT_thread new_pop(ABT_pool pool, ABT_pool_context context) {
  (void)context;
  struct user_unit* u = list_pop(user_pool_of(pool));
  return u ? u->thread : ABT_THREAD_NULL;
}

/* The contexts of the pushes into a user pool, in order, while `context_log_on` is set (the
 * pool that records them is served by one stream). */
enum { context_log_len = 256 };
static ABT_pool_context context_log[context_log_len];
static ABT_thread context_log_thread[context_log_len];
static int context_log_n, context_log_on;

static void new_push(ABT_pool pool, ABT_unit unit, ABT_pool_context context) {
  if (abt_test_load(&context_log_on) && context_log_n < context_log_len) {
    context_log_thread[context_log_n] = ((struct user_unit*)unit)->thread;
    context_log[context_log_n++] = context;
  }
  list_push(user_pool_of(pool), (struct user_unit*)unit);
}

static int new_init(ABT_pool pool, ABT_pool_config config) {
  return make_user_pool(pool, config);
}

static void new_free(ABT_pool pool) {
  destroy_user_pool(pool);
}

static size_t new_get_size(ABT_pool pool) {
  return list_size(user_pool_of(pool));
}

static ABT_thread new_pop_wait(ABT_pool pool, double secs, ABT_pool_context context) {
  (void)secs;
  return new_pop(pool, context);
}

/* What the many-unit callbacks were last called with (the pools that use them run on one
 * stream when these are read). */
static int pop_many_calls, push_many_calls;
static ABT_pool_context pop_many_context, push_many_context;
static size_t pop_many_max, push_many_num;

static void new_pop_many(ABT_pool pool, ABT_thread* threads, size_t max, size_t* num,
                         ABT_pool_context context) {
  abt_test_add(&pop_many_calls, 1);
  pop_many_context = context;
  pop_many_max = max;
  size_t n = 0;
  while (n < max) {
    ABT_thread t = new_pop(pool, context);
    if (t == ABT_THREAD_NULL) break;
    threads[n++] = t;
  }
  *num = n;
}

static void new_push_many(ABT_pool pool, const ABT_unit* units, size_t num,
                          ABT_pool_context context) {
  abt_test_add(&push_many_calls, 1);
  push_many_context = context;
  push_many_num = num;
  for (size_t i = 0; i < num; i++) new_push(pool, units[i], context);
}

static void new_print_all(ABT_pool pool, void* arg, void (*print)(void*, ABT_thread)) {
  struct user_pool* p = user_pool_of(pool);
  pthread_mutex_lock(&p->lock);
  for (struct user_unit* u = p->head; u; u = u->next) print(arg, u->thread);
  pthread_mutex_unlock(&p->lock);
}

/* Runs units through `pool` on a new stream and checks the pool's callbacks were balanced. */
static void exercise_user_pool(ABT_pool pool) {
  const int units = abt_test_scaled(200);
  struct tally early = {0, ABT_XSTREAM_NULL, 0, 2};
  spawn(pool, &early, 4, 4);
  size_t size = 0;
  OK(ABT_pool_get_size(pool, &size));
  CHECK(size == 8);
  int visits = 0;
  OK(ABT_pool_print_all_threads(pool, &visits, count_visit));
  CHECK(visits == 8);
  ABT_xstream xstream;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &pool, ABT_SCHED_CONFIG_NULL, &xstream));
  struct tally t = {0, xstream, 0, 2};
  spawn(pool, &t, units, units);
  abt_test_wait_count(&early.count, 8);
  abt_test_wait_count(&t.count, 2 * units);
  OK(ABT_xstream_free(&xstream));
  CHECK(t.wrong_stream == 0);
}

static void test_pool_user_def(void) {
  abt_test_start();
  ABT_pool_user_def def;
  CHECK_RET(ABT_pool_user_def_create(NULL, new_free_unit, new_is_empty, new_pop, new_push, &def),
            ABT_ERR_INV_ARG);
  OK(ABT_pool_user_def_create(new_create_unit, new_free_unit, new_is_empty, new_pop, new_push,
                              &def));
  OK(ABT_pool_user_def_set_init(def, new_init));
  OK(ABT_pool_user_def_set_free(def, new_free));
  OK(ABT_pool_user_def_set_get_size(def, new_get_size));
  OK(ABT_pool_user_def_set_pop_wait(def, new_pop_wait));
  OK(ABT_pool_user_def_set_pop_many(def, new_pop_many));
  OK(ABT_pool_user_def_set_push_many(def, new_push_many));
  OK(ABT_pool_user_def_set_print_all(def, new_print_all));

  ABT_pool_config config;
  OK(ABT_pool_config_create(&config));
  int value = 31, got = 0;
  ABT_pool_config_type type = ABT_POOL_CONFIG_PTR;
  OK(ABT_pool_config_set(config, 3, ABT_POOL_CONFIG_INT, &value));
  OK(ABT_pool_config_get(config, 3, &type, &got));
  CHECK(type == ABT_POOL_CONFIG_INT && got == 31);
  int automatic = 0;
  OK(ABT_pool_config_set(config, ABT_pool_config_automatic.key, ABT_pool_config_automatic.type,
                         &automatic));

  const int created = user_units_created, freed = user_units_freed;
  const int inits = user_pool_inits, frees = user_pool_frees;
  ABT_pool pool;
  OK(ABT_pool_create(def, config, &pool));
  OK(ABT_pool_config_free(&config));
  CHECK(config == ABT_POOL_CONFIG_NULL);
  CHECK(user_pool_inits == inits + 1);
  CHECK(user_pool_of(pool)->config_value == 31);
  exercise_user_pool(pool);
  OK(ABT_pool_free(&pool));
  CHECK(user_pool_frees == frees + 1);
  /* Many-unit pops and pushes go through the user's callbacks; on a second pool of the same
   * definition that no stream has served (weft serves a pool whose stream ended from other
   * streams, so the first one is not quiet). */
  OK(ABT_pool_create(def, ABT_POOL_CONFIG_NULL, &pool));
  ABT_thread threads[3];
  struct tally three = {0, ABT_XSTREAM_NULL, 0, 0};
  for (int i = 0; i < 3; i++) {
    OK(ABT_thread_create(pool, counted, &three, ABT_THREAD_ATTR_NULL, &threads[i]));
  }
  ABT_thread popped[3];
  size_t num = 0;
  const int pops = pop_many_calls, pushes = push_many_calls;
  const int units_before = user_units_created - user_units_freed;
  OK(ABT_pool_pop_threads(pool, popped, 3, &num));
  CHECK(num == 3);
  /* One call of the definition's pop_many, with Argobots' context for this call. */
  CHECK(pop_many_calls == pops + 1);
  CHECK(pop_many_context == ABT_POOL_CONTEXT_OP_POOL_OTHER && pop_many_max == 3);
  /* Popped units stay: a unit is freed with its thread, or when the thread goes to another pool. */
  CHECK(user_units_created - user_units_freed == units_before);
  for (int i = 0; i < 3; i++) {
    CHECK((popped[i] == threads[0]) + (popped[i] == threads[1]) + (popped[i] == threads[2]) == 1);
    for (int j = 0; j < i; j++) CHECK(popped[j] != popped[i]);
  }
  /* Null handles are skipped; the rest go to one push_many call. */
  ABT_thread with_null[4] = {popped[0], ABT_THREAD_NULL, popped[1], popped[2]};
  OK(ABT_pool_push_threads_ex(pool, with_null, 4, (ABT_pool_context)0x777));
  CHECK(push_many_calls == pushes + 1);
  CHECK(push_many_context == (ABT_pool_context)0x777 && push_many_num == 3);
  CHECK(user_units_created - user_units_freed == units_before);
  OK(ABT_pool_pop_threads_ex(pool, popped, 3, &num, (ABT_pool_context)0x555));
  CHECK(num == 3 && pop_many_calls == pops + 2 && pop_many_context == (ABT_pool_context)0x555);
  OK(ABT_pool_push_threads(pool, popped, 3));
  CHECK(push_many_calls == pushes + 2 && push_many_context == ABT_POOL_CONTEXT_OP_POOL_OTHER);
  /* No many-unit call when there is nothing to do. */
  OK(ABT_pool_pop_threads(pool, popped, 0, &num));
  OK(ABT_pool_push_threads(pool, popped, 0));
  CHECK(num == 0 && pop_many_calls == pops + 2 && push_many_calls == pushes + 2);
  ABT_xstream xstream;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &pool, ABT_SCHED_CONFIG_NULL, &xstream));
  OK(ABT_thread_free_many(3, threads));
  CHECK(three.count == 3);
  OK(ABT_xstream_free(&xstream));
  OK(ABT_pool_free(&pool));
  CHECK(user_pool_frees == frees + 2);
  CHECK(user_units_created - created == user_units_freed - freed);
  CHECK(user_units_created - created >= 8 + 2 * abt_test_scaled(200));
  OK(ABT_pool_user_def_free(&def));
  CHECK(def == ABT_POOL_USER_DEF_NULL);

  /* Without pop_many and push_many, the many-unit calls pop and push one unit at a time. */
  OK(ABT_pool_user_def_create(new_create_unit, new_free_unit, new_is_empty, new_pop, new_push,
                              &def));
  OK(ABT_pool_user_def_set_init(def, new_init));
  OK(ABT_pool_user_def_set_free(def, new_free));
  OK(ABT_pool_create(def, ABT_POOL_CONFIG_NULL, &pool));
  OK(ABT_pool_user_def_free(&def));
  three.count = 0;
  for (int i = 0; i < 3; i++) {
    OK(ABT_thread_create(pool, counted, &three, ABT_THREAD_ATTR_NULL, &threads[i]));
  }
  const int many_pops = pop_many_calls, many_pushes = push_many_calls;
  OK(ABT_pool_pop_threads(pool, popped, 2, &num));
  CHECK(num == 2 && list_size(user_pool_of(pool)) == 1);
  OK(ABT_pool_push_threads(pool, popped, 2));
  CHECK(list_size(user_pool_of(pool)) == 3);
  CHECK(pop_many_calls == many_pops && push_many_calls == many_pushes);
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &pool, ABT_SCHED_CONFIG_NULL, &xstream));
  OK(ABT_thread_free_many(3, threads));
  CHECK(three.count == 3);
  OK(ABT_xstream_free(&xstream));
  OK(ABT_pool_free(&pool));
  CHECK(user_units_created - created == user_units_freed - freed);
  CHECK_RET(ABT_pool_create(ABT_POOL_USER_DEF_NULL, ABT_POOL_CONFIG_NULL, &pool),
            ABT_ERR_INV_POOL_USER_DEF);
  CHECK_RET(ABT_pool_config_free(&config), ABT_ERR_INV_POOL_CONFIG);
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* A user pool through the old (Argobots 1.0) ABT_pool_def interface                           */

static ABT_unit_type old_get_type(ABT_unit unit) {
  (void)unit;
  return ABT_UNIT_TYPE_THREAD;
}

static ABT_thread old_get_thread(ABT_unit unit) {
  return ((struct user_unit*)unit)->thread;
}

static ABT_bool old_is_in_pool(ABT_unit unit) {
  (void)unit;
  return ABT_FALSE;
}

static ABT_unit old_create_from_thread(ABT_thread thread) {
  return new_create_unit(ABT_POOL_NULL, thread);
}

static void old_free(ABT_unit* unit) {
  free(*unit);
  *unit = ABT_UNIT_NULL;
  abt_test_add(&user_units_freed, 1);
}

static int old_init(ABT_pool pool, ABT_pool_config config) {
  return make_user_pool(pool, config);
}

static size_t old_get_size(ABT_pool pool) {
  return list_size(user_pool_of(pool));
}

static void old_push(ABT_pool pool, ABT_unit unit) {
  list_push(user_pool_of(pool), (struct user_unit*)unit);
}

static ABT_unit old_pop(ABT_pool pool) {
  struct user_unit* u = list_pop(user_pool_of(pool));
  return u ? (ABT_unit)u : ABT_UNIT_NULL;
}

static int old_free_pool(ABT_pool pool) {
  destroy_user_pool(pool);
  return ABT_SUCCESS;
}

static int old_print_all(ABT_pool pool, void* arg, void (*print)(void*, ABT_unit)) {
  struct user_pool* p = user_pool_of(pool);
  pthread_mutex_lock(&p->lock);
  for (struct user_unit* u = p->head; u; u = u->next) print(arg, (ABT_unit)u);
  pthread_mutex_unlock(&p->lock);
  return ABT_SUCCESS;
}

/* The old-interface definition of the list pool above. */
static ABT_pool_def old_pool_def(void) {
  ABT_pool_def def = {0};
  def.access = ABT_POOL_ACCESS_MPMC;
  def.u_get_type = old_get_type;
  def.u_get_thread = old_get_thread;
  def.u_is_in_pool = old_is_in_pool;
  def.u_create_from_thread = old_create_from_thread;
  def.u_free = old_free;
  def.p_init = old_init;
  def.p_get_size = old_get_size;
  def.p_push = old_push;
  def.p_pop = old_pop;
  def.p_free = old_free_pool;
  def.p_print_all = old_print_all;
  return def;
}

static void test_pool_def_old(void) {
  abt_test_start();
  ABT_pool_def def = old_pool_def();
  const int inits = user_pool_inits, frees = user_pool_frees;
  const int created = user_units_created, freed = user_units_freed;
  ABT_pool pool;
  OK(ABT_pool_create(&def, ABT_POOL_CONFIG_NULL, &pool));
  CHECK(user_pool_inits == inits + 1);
  ABT_pool_access access;
  OK(ABT_pool_get_access(pool, &access));
  CHECK(access == ABT_POOL_ACCESS_MPMC);
  int visits = 0;
  struct tally t = {0, ABT_XSTREAM_NULL, 0, 0};
  spawn(pool, &t, 2, 1);
  OK(ABT_pool_print_all(pool, &visits, count_unit_visit));
  CHECK(visits == 3);
  ABT_xstream xstream;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &pool, ABT_SCHED_CONFIG_NULL, &xstream));
  abt_test_wait_count(&t.count, 3);
  OK(ABT_xstream_free(&xstream));
  OK(ABT_pool_free(&pool));
  /* A second pool of the definition, since weft lets other streams serve a pool whose stream
   * ended. */
  OK(ABT_pool_create(&def, ABT_POOL_CONFIG_NULL, &pool));
  exercise_user_pool(pool);
  OK(ABT_pool_free(&pool));
  CHECK(user_pool_frees == frees + 2);
  CHECK(user_units_created - created == user_units_freed - freed);
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* Units                                                                                       */

static void test_units(void) {
  abt_test_start();
  ABT_pool first, second;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &first));
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &second));
  struct tally t = {0, ABT_XSTREAM_NULL, 0, 0};
  ABT_thread thread, task;
  OK(ABT_thread_create(first, counted, &t, ABT_THREAD_ATTR_NULL, &thread));
  OK(ABT_task_create(first, counted_task, &t, &task));
  ABT_unit unit = ABT_UNIT_NULL;
  ABT_thread back = ABT_THREAD_NULL;
  OK(ABT_thread_get_unit(thread, &unit));
  CHECK(unit != ABT_UNIT_NULL);
  OK(ABT_unit_get_thread(unit, &back));
  CHECK(back == thread);
  OK(ABT_thread_get_unit(task, &unit));
  OK(ABT_unit_get_thread(unit, &back));
  CHECK(back == task);
  CHECK_RET(ABT_unit_get_thread(ABT_UNIT_NULL, &back), ABT_ERR_INV_UNIT);

  /* Moving a popped unit to another pool. */
  ABT_thread popped = ABT_THREAD_NULL;
  OK(ABT_pool_pop_thread(first, &popped));
  CHECK(popped == thread);
  OK(ABT_thread_set_associated_pool(thread, second));
  ABT_pool last = ABT_POOL_NULL;
  OK(ABT_thread_get_last_pool(thread, &last));
  CHECK(last == second);
  OK(ABT_thread_get_unit(thread, &unit));
  OK(ABT_unit_set_associated_pool(unit, second));
  OK(ABT_thread_get_unit(thread, &unit));
  OK(ABT_pool_push(second, unit));
  size_t size = 0;
  OK(ABT_pool_get_size(second, &size));
  CHECK(size == 1);
  OK(ABT_pool_get_size(first, &size));
  CHECK(size == 1);
  CHECK_RET(ABT_unit_set_associated_pool(unit, ABT_POOL_NULL), ABT_ERR_INV_POOL);

  ABT_pool both[2] = {first, second};
  ABT_xstream xstream;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 2, both, ABT_SCHED_CONFIG_NULL, &xstream));
  OK(ABT_thread_free(&thread));
  OK(ABT_task_free(&task));
  CHECK(t.count == 2);
  OK(ABT_xstream_free(&xstream));
  OK(ABT_pool_free(&first));
  OK(ABT_pool_free(&second));
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* Units run for a pool of another kind (Argobots' tests unit and pool_custom)                 */

/* A scheduler over two pools that pops them in turn and runs each unit for the other pool. */
static void cross_sched_run(ABT_sched sched) {
  ABT_pool pools[2];
  OK(ABT_sched_get_pools(sched, 2, 0, pools));
  for (unsigned round = 0;; round++) {
    ABT_unit unit = ABT_UNIT_NULL;
    OK(ABT_pool_pop(pools[round % 2], &unit));
    if (unit != ABT_UNIT_NULL) OK(ABT_xstream_run_unit(unit, pools[(round + 1) % 2]));
    if (round % 8 == 0) {
      ABT_bool stop = ABT_FALSE;
      OK(ABT_xstream_check_events(sched));
      OK(ABT_sched_has_to_stop(sched, &stop));
      if (stop == ABT_TRUE) break;
    }
  }
}

/* What the hopping ULTs count: how many ended, and how often a yield brought one back from the
 * other pool than the one it last ran for. */
struct hops {
  int ended;
  int changes;
};

static void hopping(void* arg) {
  struct hops* h = arg;
  ABT_pool before = ABT_POOL_NULL, now = ABT_POOL_NULL;
  OK(ABT_self_get_last_pool(&before));
  for (int i = 0; i < 4; i++) {
    OK(ABT_thread_yield());
    OK(ABT_self_get_last_pool(&now));
    if (now != before) abt_test_add(&h->changes, 1);
    before = now;
  }
  abt_test_add(&h->ended, 1);
}

static void test_run_unit_across_pools(void) {
  abt_test_start();
  ABT_pool_def def = old_pool_def();
  const int created = user_units_created, freed = user_units_freed;
  ABT_pool pools[2];
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &pools[0]));
  OK(ABT_pool_create(&def, ABT_POOL_CONFIG_NULL, &pools[1]));
  ABT_sched_def sched_def = {ABT_SCHED_TYPE_ULT, NULL, cross_sched_run, NULL, NULL};
  ABT_sched sched;
  OK(ABT_sched_create(&sched_def, 2, pools, ABT_SCHED_CONFIG_NULL, &sched));
  struct hops h = {0, 0};
  struct tally t = {0, ABT_XSTREAM_NULL, 0, 0};
  ABT_thread threads[8];
  ABT_task tasks[2];
  for (int i = 0; i < 8; i++)
    OK(ABT_thread_create(pools[i % 2], hopping, &h, ABT_THREAD_ATTR_NULL, &threads[i]));
  for (int i = 0; i < 2; i++) OK(ABT_task_create(pools[i], counted_task, &t, &tasks[i]));
  ABT_xstream xstream;
  OK(ABT_xstream_create(sched, &xstream));
  OK(ABT_thread_free_many(8, threads));
  for (int i = 0; i < 2; i++) OK(ABT_task_free(&tasks[i]));
  /* Each run was for the other pool, where each yield then queued the ULT. */
  CHECK(h.ended == 8 && h.changes == 8 * 4);
  CHECK(t.count == 2);
  OK(ABT_xstream_free(&xstream));
  OK(ABT_sched_free(&sched));
  for (int i = 0; i < 2; i++) OK(ABT_pool_free(&pools[i]));
  CHECK(user_units_created - created == user_units_freed - freed);
  CHECK(user_units_created - created >= 8 * 2);
  /* Argobots checks the pool first. */
  CHECK_RET(ABT_xstream_run_unit((ABT_unit)&h, ABT_POOL_NULL), ABT_ERR_INV_POOL);
  abt_test_stop();
}

/* A definition of the list pool above with init and free; `push_many` adds the many-unit push. */
static ABT_pool_user_def list_pool_def(int push_many) {
  ABT_pool_user_def def;
  OK(ABT_pool_user_def_create(new_create_unit, new_free_unit, new_is_empty, new_pop, new_push,
                              &def));
  OK(ABT_pool_user_def_set_init(def, new_init));
  OK(ABT_pool_user_def_set_free(def, new_free));
  if (push_many) OK(ABT_pool_user_def_set_push_many(def, new_push_many));
  return def;
}

/* A user pool that makes no unit for a work unit refuses it with Argobots' ABT_ERR_OTHER; the
 * work unit stays its caller's. */
static void test_push_refused(void) {
  abt_test_start();
  ABT_pool_user_def def = list_pool_def(1);
  ABT_pool user, fifo;
  OK(ABT_pool_create(def, ABT_POOL_CONFIG_NULL, &user));
  OK(ABT_pool_user_def_free(&def));
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &fifo));
  struct tally t = {0, ABT_XSTREAM_NULL, 0, 0};
  ABT_thread threads[2];
  for (int i = 0; i < 2; i++)
    OK(ABT_thread_create(fifo, counted, &t, ABT_THREAD_ATTR_NULL, &threads[i]));
  ABT_unit unit = ABT_UNIT_NULL;
  ABT_thread popped = ABT_THREAD_NULL;
  OK(ABT_pool_pop(fifo, &unit));
  OK(ABT_pool_pop_thread(fifo, &popped));
  CHECK(unit != ABT_UNIT_NULL && popped != ABT_THREAD_NULL);
  const int pushes = push_many_calls;
  abt_test_store(&refuse_units, 1);
  CHECK_RET(ABT_pool_push(user, unit), ABT_ERR_OTHER);
  CHECK_RET(ABT_pool_push_thread(user, popped), ABT_ERR_OTHER);
  CHECK_RET(ABT_pool_push_threads(user, threads, 2), ABT_ERR_OTHER);
  /* A create in such a pool fails as well, and leaves nothing behind. */
  const int created = user_units_created, freed = user_units_freed;
  ABT_thread refused = (ABT_thread)&t;
  CHECK_RET(ABT_thread_create(user, counted, &t, ABT_THREAD_ATTR_NULL, &refused), ABT_ERR_OTHER);
  CHECK(refused == ABT_THREAD_NULL);
  CHECK_RET(ABT_thread_create(user, counted, &t, ABT_THREAD_ATTR_NULL, NULL), ABT_ERR_OTHER);
  refused = (ABT_thread)&t;
  CHECK_RET(ABT_task_create(user, counted_task, &t, &refused), ABT_ERR_OTHER);
  CHECK(refused == ABT_TASK_NULL);
  CHECK(user_units_created == created && user_units_freed == freed);
  abt_test_store(&refuse_units, 0);
  /* Accepted again: the unit made at the create is the one queued. */
  ABT_thread later;
  OK(ABT_thread_create(user, counted, &t, ABT_THREAD_ATTR_NULL, &later));
  CHECK(user_units_created == created + 1 && list_size(user_pool_of(user)) == 1);
  ABT_thread got = ABT_THREAD_NULL;
  OK(ABT_pool_pop_thread(user, &got));
  CHECK(got == later && user_units_freed == freed); /* popped, still the user pool's */
  OK(ABT_pool_push_thread(fifo, later));            /* now the FIFO's: its unit goes */
  CHECK(user_units_freed == freed + 1);
  CHECK(list_size(user_pool_of(user)) == 0 && push_many_calls == pushes);
  ABT_pool last = ABT_POOL_NULL;
  for (int i = 0; i < 2; i++) {
    OK(ABT_thread_get_last_pool(threads[i], &last));
    CHECK(last == fifo);
  }
  /* Both are still their caller's: back to their pool, they run. */
  OK(ABT_pool_push(fifo, unit));
  OK(ABT_pool_push_thread(fifo, popped));
  ABT_xstream xstream;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &fifo, ABT_SCHED_CONFIG_NULL, &xstream));
  OK(ABT_thread_free_many(2, threads));
  OK(ABT_thread_free(&later));
  CHECK(t.count == 3);
  OK(ABT_xstream_free(&xstream));
  OK(ABT_pool_free(&user));
  OK(ABT_pool_free(&fifo));
  abt_test_stop();
}

/* Out-of-range enumeration values get Argobots' error codes. */
static void test_invalid_enum_values(void) {
  abt_test_start();
  ABT_sched sched;
  ABT_pool pool;
  CHECK_RET(ABT_sched_create_basic((ABT_sched_predef)77, 0, NULL, ABT_SCHED_CONFIG_NULL, &sched),
            ABT_ERR_INV_SCHED_PREDEF);
  CHECK_RET(ABT_pool_create_basic((ABT_pool_kind)55, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &pool),
            ABT_ERR_INV_POOL_KIND);
  CHECK_RET(ABT_pool_create_basic(ABT_POOL_FIFO, (ABT_pool_access)55, ABT_FALSE, &pool),
            ABT_ERR_INV_POOL_ACCESS);
  abt_test_stop();
}

/* ------------------------------------------------------------------------------------------ */
/* A user scheduler stopped by ABT_finalize and by ABT_xstream_join                           */

/* The loop of Argobots' examples/scheduling/sched_user.c: pop, run, and every few rounds ask
 * ABT_sched_has_to_stop then ABT_xstream_check_events, with nothing else to end it. In Argobots
 * both calls succeed until the scheduler returns, also while ABT_finalize drains the stream. */
struct drain_sched {
  int runs;
  int frees;
  int stopped_with_work; /* has_to_stop said TRUE while a pool still held a unit */
};
static struct drain_sched drain_primary, drain_secondary;

static int drain_sched_init(ABT_sched sched, ABT_sched_config config) {
  (void)config;
  return ABT_sched_set_data(sched, NULL);
}

static void drain_sched_run(ABT_sched sched) {
  void* data = NULL;
  OK(ABT_sched_get_data(sched, &data));
  struct drain_sched* d = data;
  CHECK(d != NULL);
  ABT_pool pool = ABT_POOL_NULL;
  OK(ABT_sched_get_pools(sched, 1, 0, &pool));
  /* As in Argobots' test/basic/main_sched.c, the loop is a ULT that may ask for itself and
   * yield. */
  ABT_thread self = ABT_THREAD_NULL;
  OK(ABT_self_get_thread(&self));
  CHECK(self != ABT_THREAD_NULL);
  OK(ABT_thread_yield());
  for (unsigned work_count = 0;;) {
    ABT_thread thread = ABT_THREAD_NULL;
    OK(ABT_pool_pop_thread(pool, &thread));
    if (thread != ABT_THREAD_NULL) OK(ABT_self_schedule(thread, ABT_POOL_NULL));
    if (++work_count >= 4) {
      work_count = 0;
      ABT_bool stop = ABT_FALSE;
      OK(ABT_sched_has_to_stop(sched, &stop));
      if (stop == ABT_TRUE) {
        size_t left = 0;
        OK(ABT_pool_get_size(pool, &left));
        if (left != 0) abt_test_add(&d->stopped_with_work, 1);
        break;
      }
      OK(ABT_xstream_check_events(sched));
    }
  }
  abt_test_add(&d->runs, 1);
}

static int drain_sched_free(ABT_sched sched) {
  void* data = NULL;
  OK(ABT_sched_get_data(sched, &data));
  abt_test_add(&((struct drain_sched*)data)->frees, 1);
  return ABT_SUCCESS;
}

static ABT_sched_def drain_sched_def = {ABT_SCHED_TYPE_ULT, drain_sched_init, drain_sched_run,
                                        drain_sched_free, NULL};

/* Counts itself; while `more` > 0, first pushes another unnamed ULT into its own pool, so that
 * the pool fills again while the scheduler drains it. */
struct drain_unit {
  int* count;
  int more;
};
static struct drain_unit drain_chain;
static int drain_count;

static void drain_counted(void* arg) {
  struct drain_unit* u = arg;
  if (abt_test_add(&u->more, -1) >= 0) {
    ABT_pool pool = ABT_POOL_NULL;
    OK(ABT_self_get_last_pool(&pool));
    OK(ABT_thread_create(pool, drain_counted, u, ABT_THREAD_ATTR_NULL, NULL));
  }
  abt_test_add(u->count, 1);
}

/* Argobots' codes for a check of events made outside the scheduler's loop. */
static void* check_events_outside(void* arg) {
  CHECK_RET(ABT_xstream_check_events((ABT_sched)arg), ABT_ERR_INV_XSTREAM);
  return NULL;
}

static void check_events_in_ult(void* arg) {
  CHECK_RET(ABT_xstream_check_events((ABT_sched)arg), ABT_ERR_INV_THREAD);
}

static void check_events_misuse(ABT_sched sched) {
  CHECK_RET(ABT_xstream_check_events(ABT_SCHED_NULL), ABT_ERR_INV_SCHED);
  CHECK_RET(ABT_xstream_check_events(sched), ABT_ERR_INV_THREAD); /* the primary ULT */
  ABT_thread thread;
  OK(ABT_thread_create(abt_test_pools[abt_test_num_xstreams - 1], check_events_in_ult, sched,
                       ABT_THREAD_ATTR_NULL, &thread));
  OK(ABT_thread_free(&thread));
  pthread_t external;
  CHECK(pthread_create(&external, NULL, check_events_outside, sched) == 0);
  CHECK(pthread_join(external, NULL) == 0);
}

static ABT_sched make_drain_sched(ABT_pool* pool, struct drain_sched* d) {
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_TRUE, pool));
  ABT_sched sched = ABT_SCHED_NULL;
  OK(ABT_sched_create(&drain_sched_def, 1, pool, ABT_SCHED_CONFIG_NULL, &sched));
  OK(ABT_sched_set_data(sched, d));
  return sched;
}

static void test_user_sched_stopped(void) {
  abt_test_start();
  memset(&drain_primary, 0, sizeof drain_primary);
  memset(&drain_secondary, 0, sizeof drain_secondary);

  /* A secondary stream's user scheduler ends at ABT_xstream_join once its pool is empty. */
  ABT_pool pool = ABT_POOL_NULL;
  ABT_sched sched = make_drain_sched(&pool, &drain_secondary);
  check_events_misuse(sched);
  int count = 0;
  struct drain_unit chain = {&count, 10};
  for (int i = 0; i < 20; i++)
    OK(ABT_thread_create(pool, drain_counted, &chain, ABT_THREAD_ATTR_NULL, NULL));
  ABT_xstream xstream = ABT_XSTREAM_NULL;
  OK(ABT_xstream_create(sched, &xstream));
  OK(ABT_xstream_join(xstream));
  check_events_misuse(sched); /* its loop has ended */
  CHECK(abt_test_load(&count) == 30);
  CHECK(abt_test_load(&drain_secondary.runs) == 1);
  CHECK(drain_secondary.stopped_with_work == 0);
  OK(ABT_xstream_free(&xstream));
  OK(ABT_sched_free(&sched));
  CHECK(drain_secondary.frees == 1);

  /* The primary's: the primary ULT moves into the scheduler's pool, and units it leaves there
   * (and the ones they push) run before ABT_finalize returns. */
  sched = make_drain_sched(&pool, &drain_primary);
  OK(ABT_xstream_set_main_sched(abt_test_xstreams[0], sched));
  ABT_pool main_pool = ABT_POOL_NULL;
  OK(ABT_xstream_get_main_pools(abt_test_xstreams[0], 1, &main_pool));
  CHECK(main_pool == pool);
  drain_count = 0;
  drain_chain.count = &drain_count;
  drain_chain.more = 10;
  for (int i = 0; i < 20; i++)
    OK(ABT_thread_create(pool, drain_counted, &drain_chain, ABT_THREAD_ATTR_NULL, NULL));
  abt_test_stop(); /* ABT_finalize */
  CHECK(abt_test_load(&drain_count) == 30);
  CHECK(abt_test_load(&drain_primary.runs) == 1);
  CHECK(drain_primary.stopped_with_work == 0);
  CHECK(drain_primary.frees == 1);
}

/* The push contexts a user pool sees, as Argobots passes them: the operation that pushes (a
 * create, a yield, a yield to a popped ULT, a create-to, a resume), one push per operation. */
static void empty_ult(void* arg) {
  (void)arg;
}

static void suspending_ult(void* arg) {
  (void)arg;
  OK(ABT_self_suspend());
}

static void expect_pushes(int n, ABT_pool_context context, ABT_thread thread) {
  CHECK(context_log_n == n);
  CHECK(context_log[n - 1] == context);
  CHECK(context_log_thread[n - 1] == thread);
}

static void push_context_driver(void* arg) {
  ABT_pool pool = *(ABT_pool*)arg;
  ABT_thread self, t;
  OK(ABT_self_get_thread(&self));
  context_log_n = 0;
  abt_test_add(&context_log_on, 1);
  OK(ABT_self_yield());
  expect_pushes(1, ABT_POOL_CONTEXT_OP_THREAD_YIELD, self);
  OK(ABT_thread_create(pool, empty_ult, NULL, ABT_THREAD_ATTR_NULL, &t));
  expect_pushes(2, ABT_POOL_CONTEXT_OP_THREAD_CREATE, t);
  ABT_thread popped = ABT_THREAD_NULL;
  OK(ABT_pool_pop_thread(pool, &popped));
  CHECK(popped == t);
  OK(ABT_self_yield_to(t)); /* only the caller is pushed: the popped target runs directly */
  expect_pushes(3, ABT_POOL_CONTEXT_OP_THREAD_YIELD_TO, self);
  OK(ABT_thread_free(&t));
  OK(ABT_thread_create_to(pool, empty_ult, NULL, ABT_THREAD_ATTR_NULL, &t));
  expect_pushes(4, ABT_POOL_CONTEXT_OP_THREAD_CREATE_TO, self);
  OK(ABT_thread_free(&t));
  OK(ABT_thread_create(pool, suspending_ult, NULL, ABT_THREAD_ATTR_NULL, &t));
  expect_pushes(5, ABT_POOL_CONTEXT_OP_THREAD_CREATE, t);
  ABT_thread_state state = ABT_THREAD_STATE_READY;
  while (state != ABT_THREAD_STATE_BLOCKED) {
    OK(ABT_self_yield());
    OK(ABT_thread_get_state(t, &state));
  }
  const int after_yields = context_log_n;
  CHECK(context_log[after_yields - 1] == ABT_POOL_CONTEXT_OP_THREAD_YIELD);
  OK(ABT_thread_resume(t));
  expect_pushes(after_yields + 1, ABT_POOL_CONTEXT_OP_THREAD_RESUME, t);
  /* A revive in the same pool keeps the thread's unit (no create_unit, no free_unit), which
   * goes with the thread's free. */
  OK(ABT_thread_join(t)); /* its wake-ups push too: counted from here */
  const int created = abt_test_load(&user_units_created);
  const int freed = abt_test_load(&user_units_freed);
  OK(ABT_thread_revive(pool, empty_ult, NULL, &t));
  expect_pushes(context_log_n > 0 ? context_log_n : 1, ABT_POOL_CONTEXT_OP_THREAD_REVIVE, t);
  OK(ABT_thread_join(t));
  const int before_revive_to = context_log_n;
  OK(ABT_thread_revive_to(pool, empty_ult, NULL, &t));
  expect_pushes(before_revive_to + 1, ABT_POOL_CONTEXT_OP_THREAD_REVIVE_TO, self);
  CHECK(abt_test_load(&user_units_created) == created);
  CHECK(abt_test_load(&user_units_freed) == freed);
  OK(ABT_thread_free(&t));
  CHECK(abt_test_load(&user_units_freed) == freed + 1);
  abt_test_add(&context_log_on, -1);
}

static void test_user_pool_push_contexts(void) {
  abt_test_start();
  ABT_pool_user_def def = list_pool_def(0);
  OK(ABT_pool_user_def_set_get_size(def, new_get_size));
  ABT_pool pool;
  OK(ABT_pool_create(def, ABT_POOL_CONFIG_NULL, &pool));
  ABT_xstream xstream;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &pool, ABT_SCHED_CONFIG_NULL, &xstream));
  ABT_thread driver;
  OK(ABT_thread_create_on_xstream(xstream, push_context_driver, &pool, ABT_THREAD_ATTR_NULL,
                                  &driver));
  OK(ABT_thread_free(&driver));
  OK(ABT_xstream_free(&xstream));
  OK(ABT_pool_free(&pool));
  OK(ABT_pool_user_def_free(&def));
  abt_test_stop();
}

int main(int argc, char** argv) {
  static const struct abt_test_case cases[] = {
      {"sched_config", test_sched_config},
      {"user_sched", test_user_sched},
      {"predefined_scheds", test_predefined_scheds},
      {"stacking", test_stacking},
      {"predefined_pools", test_predefined_pools},
      {"pool_user_def", test_pool_user_def},
      {"user_pool_push_contexts", test_user_pool_push_contexts},
      {"pool_def_old", test_pool_def_old},
      {"units", test_units},
      {"user_sched_stopped", test_user_sched_stopped},
      {"run_unit_across_pools", test_run_unit_across_pools},
      {"push_refused", test_push_refused},
      {"invalid_enum_values", test_invalid_enum_values},
  };
  return abt_test_main(argc, argv, cases, ABT_TEST_COUNT(cases));
}
