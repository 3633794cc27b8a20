// SPDX-License-Identifier: Apache-2.0
/* Initialisation and the process-wide services: ABT_init/ABT_finalize/ABT_initialized (nesting,
 * re-initialisation, calls before init), ABT_error_get_str, ABT_get_wtime and ABT_timer_*,
 * ABT_info_*, the ABT_THREAD_STACKSIZE environment variable, and the ABT_tool_* callbacks. */
#include "abt_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void noop(void* arg) {
  (void)arg;
}

static void add_one(void* arg) {
  abt_test_add((int*)arg, 1);
}

/* Creates, joins and frees one ULT on every test stream; fails unless each ran once. */
static void run_one_ult_per_stream(void) {
  int count = 0;
  ABT_thread threads[16];
  for (int i = 0; i < abt_test_num_xstreams; i++) {
    OK(ABT_thread_create(abt_test_pools[i], add_one, &count, ABT_THREAD_ATTR_NULL, &threads[i]));
  }
  OK(ABT_thread_free_many(abt_test_num_xstreams, threads));
  CHECK(count == abt_test_num_xstreams);
}

static void test_calls_before_init(void) {
  ABT_unit_type type = ABT_UNIT_TYPE_THREAD;
  ABT_bool flag = ABT_TRUE;
  void* arg = &flag;
  int id = 7;
  CHECK_RET(ABT_initialized(), ABT_ERR_UNINITIALIZED);
  CHECK_RET(ABT_finalize(), ABT_ERR_UNINITIALIZED);
  CHECK_RET(ABT_self_get_type(&type), ABT_ERR_UNINITIALIZED);
  CHECK(type == ABT_UNIT_TYPE_EXT);
  CHECK_RET(ABT_self_is_primary(&flag), ABT_ERR_UNINITIALIZED);
  CHECK(flag == ABT_FALSE);
  flag = ABT_TRUE;
  CHECK_RET(ABT_self_on_primary_xstream(&flag), ABT_ERR_UNINITIALIZED);
  CHECK(flag == ABT_FALSE);
  CHECK_RET(ABT_self_get_arg(&arg), ABT_ERR_UNINITIALIZED);
  CHECK(arg == NULL);
  CHECK_RET(ABT_self_get_last_pool_id(&id), ABT_ERR_UNINITIALIZED);
  CHECK(id == -1);
}

static void test_nesting(void) {
  OK(ABT_init(0, NULL));
  OK(ABT_initialized());
  OK(ABT_init(0, NULL));
  OK(ABT_init(0, NULL));
  OK(ABT_finalize());
  OK(ABT_initialized());
  OK(ABT_finalize());
  OK(ABT_initialized());
  /* Still usable between the nested finalizations. */
  ABT_pool pool;
  ABT_xstream self;
  OK(ABT_xstream_self(&self));
  OK(ABT_xstream_get_main_pools(self, 1, &pool));
  int count = 0;
  ABT_thread thread;
  OK(ABT_thread_create(pool, add_one, &count, ABT_THREAD_ATTR_NULL, &thread));
  OK(ABT_thread_free(&thread));
  CHECK(count == 1);
  OK(ABT_finalize());
  CHECK_RET(ABT_initialized(), ABT_ERR_UNINITIALIZED);
  CHECK_RET(ABT_finalize(), ABT_ERR_UNINITIALIZED);
}

static void test_reinit(void) {
  for (int round = 0; round < 4; round++) {
    abt_test_start();
    int num = 0;
    OK(ABT_xstream_get_num(&num));
    CHECK(num == abt_test_num_xstreams);
    run_one_ult_per_stream();
    abt_test_stop();
    CHECK_RET(ABT_initialized(), ABT_ERR_UNINITIALIZED);
  }
}

static void test_error_strings(void) {
  /* ABT_error_get_str works with or without the runtime. */
  char buf[128];
  size_t len = 0;
  OK(ABT_error_get_str(ABT_SUCCESS, buf, &len));
  CHECK(strcmp(buf, "ABT_SUCCESS") == 0);
  CHECK(len == strlen("ABT_SUCCESS"));
  len = 0;
  OK(ABT_error_get_str(ABT_ERR_INV_THREAD, NULL, &len));
  CHECK(len == strlen("ABT_ERR_INV_THREAD"));
  OK(ABT_error_get_str(ABT_ERR_INV_THREAD, buf, NULL));
  CHECK(strcmp(buf, "ABT_ERR_INV_THREAD") == 0);
  OK(ABT_error_get_str(ABT_ERR_INV_XSTREAM, buf, &len));
  CHECK(strcmp(buf, "ABT_ERR_INV_XSTREAM") == 0);
  OK(ABT_error_get_str(ABT_ERR_MUTEX_LOCKED, buf, &len));
  CHECK(strcmp(buf, "ABT_ERR_MUTEX_LOCKED") == 0);
  OK(ABT_error_get_str(ABT_ERR_COND_TIMEDOUT, buf, &len));
  CHECK(strcmp(buf, "ABT_ERR_COND_TIMEDOUT") == 0);
  OK(ABT_error_get_str(ABT_ERR_INV_POOL_USER_DEF, buf, &len));
  CHECK(strcmp(buf, "ABT_ERR_INV_POOL_USER_DEF") == 0);
  /* Every defined code has a distinct name starting with ABT_. */
  for (int code = ABT_SUCCESS; code <= ABT_ERR_INV_POOL_USER_DEF; code++) {
    OK(ABT_error_get_str(code, buf, &len));
    CHECK(strncmp(buf, "ABT_", 4) == 0);
    CHECK(len == strlen(buf));
  }
  CHECK(ABT_error_get_str(-5, buf, &len) != ABT_SUCCESS);
  CHECK(ABT_error_get_str(1000, buf, &len) != ABT_SUCCESS);
}

static void test_timer(void) {
  abt_test_start();
  double t0 = ABT_get_wtime();
  double t1 = ABT_get_wtime();
  CHECK(t0 > 0.0);
  CHECK(t1 >= t0);

  ABT_timer timer, copy;
  double secs = -1.0, overhead = -1.0;
  OK(ABT_timer_create(&timer));
  OK(ABT_timer_start(timer));
  run_one_ult_per_stream();
  OK(ABT_timer_stop(timer));
  OK(ABT_timer_read(timer, &secs));
  CHECK(secs >= 0.0);
  OK(ABT_timer_dup(timer, &copy));
  double copied = -1.0;
  OK(ABT_timer_read(copy, &copied));
  CHECK(copied == secs);

  OK(ABT_timer_start(timer));
  double first = -1.0;
  OK(ABT_timer_stop_and_read(timer, &first));
  CHECK(first >= 0.0);
  double total = 1.0;
  OK(ABT_timer_start(timer));
  OK(ABT_timer_stop_and_add(timer, &total));
  CHECK(total >= 1.0);
  OK(ABT_timer_get_overhead(&overhead));
  CHECK(overhead >= 0.0);

  OK(ABT_timer_free(&copy));
  CHECK(copy == ABT_TIMER_NULL);
  OK(ABT_timer_free(&timer));
  CHECK(timer == ABT_TIMER_NULL);
  CHECK_RET(ABT_timer_start(ABT_TIMER_NULL), ABT_ERR_INV_TIMER);
  CHECK_RET(ABT_timer_read(ABT_TIMER_NULL, &secs), ABT_ERR_INV_TIMER);
  CHECK_RET(ABT_timer_free(&timer), ABT_ERR_INV_TIMER);
  abt_test_stop();
}

/* The number of bytes a print function wrote, through a temporary file. */
static long printed_size(FILE* fp) {
  fflush(fp);
  long size = ftell(fp);
  rewind(fp);
  return size;
}

static ABT_bool print_callback_timed_out = ABT_TRUE;

static void on_stacks_printed(ABT_bool timed_out, void* arg) {
  print_callback_timed_out = timed_out;
  abt_test_store((int*)arg, 1);
}

static void test_info(void) {
  abt_test_start();
  ABT_bool enabled = 7;
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_ENABLED_THREAD_CANCEL, &enabled));
  CHECK(enabled == ABT_TRUE || enabled == ABT_FALSE);
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_ENABLED_MIGRATION, &enabled));
  CHECK(enabled == ABT_TRUE || enabled == ABT_FALSE);
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_ENABLED_STACKABLE_SCHED, &enabled));
  CHECK(enabled == ABT_TRUE);
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_ENABLED_EXTERNAL_THREAD, &enabled));
  CHECK(enabled == ABT_TRUE);
  size_t stacksize = 0;
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_DEFAULT_THREAD_STACKSIZE, &stacksize));
  CHECK(stacksize >= 4096);
  int max_xstreams = 0;
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_MAX_NUM_XSTREAMS, &max_xstreams));
  CHECK(max_xstreams >= abt_test_num_xstreams);
  CHECK_RET(ABT_info_query_config((ABT_info_query_kind)9999, &enabled), ABT_ERR_INV_QUERY_KIND);

  FILE* fp = tmpfile();
  CHECK(fp != NULL);
  OK(ABT_info_print_config(fp));
  CHECK(printed_size(fp) > 0);
  OK(ABT_info_print_all_xstreams(fp));
  CHECK(printed_size(fp) > 0);
  OK(ABT_info_print_xstream(fp, abt_test_xstreams[0]));
  CHECK(printed_size(fp) > 0);
  ABT_sched sched;
  OK(ABT_xstream_get_main_sched(abt_test_xstreams[0], &sched));
  OK(ABT_info_print_sched(fp, sched));
  CHECK(printed_size(fp) > 0);
  OK(ABT_info_print_pool(fp, abt_test_pools[0]));
  CHECK(printed_size(fp) > 0);

  /* A ULT and a tasklet that have not run yet sit in a pool no scheduler serves. */
  ABT_pool idle;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE, &idle));
  ABT_thread thread;
  ABT_task task;
  ABT_thread_attr attr;
  OK(ABT_thread_create(idle, noop, NULL, ABT_THREAD_ATTR_NULL, &thread));
  OK(ABT_task_create(idle, noop, NULL, &task));
  OK(ABT_info_print_thread(fp, thread));
  CHECK(printed_size(fp) > 0);
  OK(ABT_info_print_task(fp, task));
  CHECK(printed_size(fp) > 0);
  OK(ABT_info_print_thread_stack(fp, thread));
  OK(ABT_info_print_thread_stacks_in_pool(fp, idle));
  CHECK(printed_size(fp) > 0);
  OK(ABT_thread_attr_create(&attr));
  OK(ABT_info_print_thread_attr(fp, attr));
  CHECK(printed_size(fp) > 0);
  OK(ABT_thread_attr_free(&attr));

  /* The triggered dump happens when every stream passes its event check; the primary ULT lets
   * its stream do so by yielding. */
  int done = 0;
  OK(ABT_info_trigger_print_all_thread_stacks(fp, 30.0, on_stacks_printed, &done));
  abt_test_wait_flag(&done);
  CHECK(printed_size(fp) > 0);
  CHECK(print_callback_timed_out == ABT_FALSE);
  fclose(fp);

  /* Let the two units run so that the pool can be freed. */
  ABT_xstream xstream;
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &idle, ABT_SCHED_CONFIG_NULL, &xstream));
  OK(ABT_thread_free(&thread));
  OK(ABT_task_free(&task));
  OK(ABT_xstream_free(&xstream));
  OK(ABT_pool_free(&idle));
  CHECK(idle == ABT_POOL_NULL);
  abt_test_stop();
}

static void check_stacksize(void* arg) {
  size_t size = 0;
  ABT_thread self;
  OK(ABT_self_get_thread(&self));
  OK(ABT_thread_get_stacksize(self, &size));
  CHECK(size == *(size_t*)arg);
}

static void test_stacksize_environment(void) {
  CHECK(setenv("ABT_THREAD_STACKSIZE", "262144", 1) == 0);
  CHECK(setenv("ABT_SCHED_EVENT_FREQ", "7", 1) == 0);
  abt_test_start();
  size_t size = 0;
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_DEFAULT_THREAD_STACKSIZE, &size));
  CHECK(size == 262144);
  /* Zeroed 64 bits: right whether the value is stored as an int or as a 64-bit integer. */
  uint64_t freq = 0;
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_DEFAULT_SCHED_EVENT_FREQ, &freq));
  CHECK(freq == 7);
  for (int i = 0; i < abt_test_num_xstreams; i++) {
    ABT_thread thread;
    OK(ABT_thread_create(abt_test_pools[i], check_stacksize, &size, ABT_THREAD_ATTR_NULL, &thread));
    OK(ABT_thread_free(&thread));
  }
  abt_test_stop();
  CHECK(unsetenv("ABT_THREAD_STACKSIZE") == 0);
  CHECK(unsetenv("ABT_SCHED_EVENT_FREQ") == 0);
}

/* Argobots' power-event server names weft's resource manager: a half-given or non-loopback
 * address fails ABT_init and leaves nothing initialised. */
static void test_power_event_environment(void) {
  CHECK(setenv("ABT_ENV_POWER_EVENT_HOSTNAME", "127.0.0.1", 1) == 0);
  CHECK_RET(ABT_init(0, NULL), ABT_ERR_INV_ARG); /* no port */
  CHECK_RET(ABT_initialized(), ABT_ERR_UNINITIALIZED);
  CHECK(setenv("ABT_ENV_POWER_EVENT_HOSTNAME", "10.1.1.1", 1) == 0);
  CHECK(setenv("ABT_ENV_POWER_EVENT_PORT", "6000", 1) == 0);
  CHECK_RET(ABT_init(0, NULL), ABT_ERR_INV_ARG); /* not loopback */
  CHECK_RET(ABT_initialized(), ABT_ERR_UNINITIALIZED);
  CHECK(unsetenv("ABT_ENV_POWER_EVENT_HOSTNAME") == 0);
  CHECK_RET(ABT_init(0, NULL), ABT_ERR_INV_ARG); /* no host */
  CHECK_RET(ABT_initialized(), ABT_ERR_UNINITIALIZED);
  CHECK(unsetenv("ABT_ENV_POWER_EVENT_PORT") == 0);
}

/* Events seen by the tool callback, by kind. */
static int tool_creates, tool_runs, tool_finishes, tool_frees, tool_pool_matches;
static ABT_pool tool_expected_pool;

static void on_thread_event(ABT_thread thread, ABT_xstream xstream, uint64_t event,
                            ABT_tool_context context, void* user_arg) {
  (void)thread;
  (void)xstream;
  CHECK(user_arg == &tool_creates);
  if (event == ABT_TOOL_EVENT_THREAD_CREATE) {
    abt_test_add(&tool_creates, 1);
    ABT_pool pool = ABT_POOL_NULL;
    OK(ABT_tool_query_thread(context, event, ABT_TOOL_QUERY_KIND_POOL, &pool));
    if (pool == tool_expected_pool) abt_test_add(&tool_pool_matches, 1);
  } else if (event == ABT_TOOL_EVENT_THREAD_RUN) {
    abt_test_add(&tool_runs, 1);
  } else if (event == ABT_TOOL_EVENT_THREAD_FINISH) {
    abt_test_add(&tool_finishes, 1);
  } else if (event == ABT_TOOL_EVENT_THREAD_FREE) {
    abt_test_add(&tool_frees, 1);
  }
}

static void test_tool_callbacks(void) {
  abt_test_start();
  ABT_bool enabled = ABT_FALSE;
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_ENABLED_TOOL, &enabled));
  const uint64_t mask = ABT_TOOL_EVENT_THREAD_CREATE | ABT_TOOL_EVENT_THREAD_RUN |
                        ABT_TOOL_EVENT_THREAD_FINISH | ABT_TOOL_EVENT_THREAD_FREE;
  if (!enabled) {
    CHECK_RET(ABT_tool_register_thread_callback(on_thread_event, mask, &tool_creates),
              ABT_ERR_FEATURE_NA);
    abt_test_stop();
    return;
  }
  tool_expected_pool = abt_test_pools[abt_test_num_xstreams - 1];
  OK(ABT_tool_register_thread_callback(on_thread_event, mask, &tool_creates));
  const int n = 8;
  ABT_thread threads[8];
  for (int i = 0; i < n; i++) {
    OK(ABT_thread_create(tool_expected_pool, noop, NULL, ABT_THREAD_ATTR_NULL, &threads[i]));
  }
  OK(ABT_thread_free_many(n, threads));
  ABT_task task;
  OK(ABT_task_create(tool_expected_pool, noop, NULL, &task));
  OK(ABT_task_free(&task));
  /* Unregister: later units raise no events. */
  OK(ABT_tool_register_thread_callback(NULL, ABT_TOOL_EVENT_THREAD_NONE, NULL));
  CHECK(abt_test_load(&tool_creates) == n + 1);
  CHECK(abt_test_load(&tool_pool_matches) == n + 1);
  CHECK(abt_test_load(&tool_runs) >= n + 1);
  CHECK(abt_test_load(&tool_finishes) == n + 1);
  CHECK(abt_test_load(&tool_frees) == n + 1);
  OK(ABT_thread_create(tool_expected_pool, noop, NULL, ABT_THREAD_ATTR_NULL, &threads[0]));
  OK(ABT_thread_free(&threads[0]));
  CHECK(abt_test_load(&tool_creates) == n + 1);
  CHECK(abt_test_load(&tool_frees) == n + 1);
  abt_test_stop();
}

int main(int argc, char** argv) {
  static const struct abt_test_case cases[] = {
      {"calls_before_init", test_calls_before_init},
      {"nesting", test_nesting},
      {"reinit", test_reinit},
      {"error_strings", test_error_strings},
      {"timer", test_timer},
      {"info", test_info},
      {"environment", test_stacksize_environment},
      {"power_event_environment", test_power_event_environment},
      {"tool_callbacks", test_tool_callbacks},
  };
  return abt_test_main(argc, argv, cases, ABT_TEST_COUNT(cases));
}
