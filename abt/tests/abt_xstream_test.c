// SPDX-License-Identifier: Apache-2.0
/* Execution streams (ABT_xstream_*) and execution-stream barriers (ABT_xstream_barrier_*):
 * creation in every form, ranks, join/revive/free, cancel and exit, main schedulers and pools,
 * CPU binding and affinity, states, and the errors for invalid handles and misuse. */
#define _GNU_SOURCE
#include "abt_test.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

static void add_one(void* arg) {
  abt_test_add((int*)arg, 1);
}

/* Where a ULT ran: its stream's rank, whether that stream is primary, and its handle. */
struct place {
  int rank;
  ABT_bool primary;
  ABT_bool on_primary;
  ABT_xstream xstream;
};

static void record_place(void* arg) {
  struct place* p = arg;
  OK(ABT_xstream_self_rank(&p->rank));
  OK(ABT_xstream_self(&p->xstream));
  OK(ABT_xstream_is_primary(p->xstream, &p->primary));
  OK(ABT_self_on_primary_xstream(&p->on_primary));
}

/* Runs record_place in a ULT of `pool` and returns where it ran. */
static struct place place_of_pool(ABT_pool pool) {
  struct place p = {-1, ABT_TRUE, ABT_TRUE, ABT_XSTREAM_NULL};
  ABT_thread thread;
  OK(ABT_thread_create(pool, record_place, &p, ABT_THREAD_ATTR_NULL, &thread));
  OK(ABT_thread_free(&thread));
  return p;
}

static void test_self_and_ranks(void) {
  abt_test_start();
  ABT_xstream self;
  ABT_bool flag = ABT_FALSE;
  int rank = -1, num = 0;
  ABT_xstream_state state = ABT_XSTREAM_STATE_TERMINATED;
  OK(ABT_xstream_self(&self));
  OK(ABT_xstream_is_primary(self, &flag));
  CHECK(flag == ABT_TRUE);
  OK(ABT_xstream_self_rank(&rank));
  CHECK(rank == 0);
  OK(ABT_xstream_get_rank(self, &rank));
  CHECK(rank == 0);
  OK(ABT_self_get_xstream_rank(&rank));
  CHECK(rank == 0);
  OK(ABT_xstream_get_num(&num));
  CHECK(num == abt_test_num_xstreams);
  OK(ABT_xstream_equal(self, abt_test_xstreams[0], &flag));
  CHECK(flag == ABT_TRUE);
  OK(ABT_xstream_get_state(self, &state));
  CHECK(state == ABT_XSTREAM_STATE_RUNNING);
  for (int i = 1; i < abt_test_num_xstreams; i++) {
    OK(ABT_xstream_get_rank(abt_test_xstreams[i], &rank));
    CHECK(rank == i);
    OK(ABT_xstream_equal(self, abt_test_xstreams[i], &flag));
    CHECK(flag == ABT_FALSE);
    OK(ABT_xstream_is_primary(abt_test_xstreams[i], &flag));
    CHECK(flag == ABT_FALSE);
    OK(ABT_xstream_get_state(abt_test_xstreams[i], &state));
    CHECK(state == ABT_XSTREAM_STATE_RUNNING);
  }
  for (int i = 0; i < abt_test_num_xstreams; i++) {
    struct place p = place_of_pool(abt_test_pools[i]);
    CHECK(p.rank == i);
    CHECK(p.xstream == abt_test_xstreams[i]);
    CHECK(p.primary == (i == 0 ? ABT_TRUE : ABT_FALSE));
    CHECK(p.on_primary == (i == 0 ? ABT_TRUE : ABT_FALSE));
  }
  abt_test_stop();
}

static void test_create_variants(void) {
  abt_test_start();
  int base = abt_test_num_xstreams, num = 0, rank = -1;
  ABT_xstream plain, basic, ranked, clash;
  ABT_pool pool, got;

  OK(ABT_xstream_create(ABT_SCHED_NULL, &plain));
  OK(ABT_xstream_get_rank(plain, &rank));
  CHECK(rank == base);

  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_TRUE, &pool));
  OK(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &pool, ABT_SCHED_CONFIG_NULL, &basic));
  OK(ABT_xstream_get_main_pools(basic, 1, &got));
  CHECK(got == pool);

  ABT_sched sched;
  OK(ABT_sched_create_basic(ABT_SCHED_DEFAULT, 0, NULL, ABT_SCHED_CONFIG_NULL, &sched));
  OK(ABT_xstream_create_with_rank(sched, 40, &ranked));
  OK(ABT_xstream_get_rank(ranked, &rank));
  CHECK(rank == 40);
  ABT_sched main_sched;
  OK(ABT_xstream_get_main_sched(ranked, &main_sched));
  CHECK(main_sched == sched);
  /* A rank in use, a negative rank, and a scheduler already in use are refused. */
  CHECK_RET(ABT_xstream_create_with_rank(ABT_SCHED_NULL, 40, &clash), ABT_ERR_INV_XSTREAM_RANK);
  CHECK_RET(ABT_xstream_create_with_rank(ABT_SCHED_NULL, 0, &clash), ABT_ERR_INV_XSTREAM_RANK);
  CHECK_RET(ABT_xstream_create_with_rank(ABT_SCHED_NULL, -3, &clash), ABT_ERR_INV_XSTREAM_RANK);
  CHECK_RET(ABT_xstream_create(sched, &clash), ABT_ERR_INV_SCHED);

  OK(ABT_xstream_get_num(&num));
  CHECK(num == base + 3);
  CHECK(place_of_pool(got).xstream == basic);
  ABT_pool ranked_pool;
  OK(ABT_xstream_get_main_pools(ranked, 1, &ranked_pool));
  CHECK(place_of_pool(ranked_pool).rank == 40);

  OK(ABT_xstream_free(&plain));
  OK(ABT_xstream_free(&basic));
  OK(ABT_xstream_free(&ranked));
  CHECK(plain == ABT_XSTREAM_NULL && basic == ABT_XSTREAM_NULL && ranked == ABT_XSTREAM_NULL);
  OK(ABT_xstream_get_num(&num));
  CHECK(num == base);
  /* Freed ranks can be taken again. */
  OK(ABT_xstream_create_with_rank(ABT_SCHED_NULL, 40, &ranked));
  OK(ABT_xstream_free(&ranked));
  abt_test_stop();
}

static void test_join_revive(void) {
  abt_test_start();
  ABT_xstream xstream;
  ABT_pool pool;
  ABT_xstream_state state;
  int count = 0;
  OK(ABT_xstream_create(ABT_SCHED_NULL, &xstream));
  OK(ABT_xstream_get_main_pools(xstream, 1, &pool));
  for (int round = 0; round < 3; round++) {
    OK(ABT_thread_create(pool, add_one, &count, ABT_THREAD_ATTR_NULL, NULL));
    /* Join waits for the stream's pools to drain and its scheduler to finish. */
    OK(ABT_xstream_join(xstream));
    CHECK(abt_test_load(&count) == round + 1);
    OK(ABT_xstream_get_state(xstream, &state));
    CHECK(state == ABT_XSTREAM_STATE_TERMINATED);
    OK(ABT_xstream_revive(xstream));
    OK(ABT_xstream_get_state(xstream, &state));
    CHECK(state == ABT_XSTREAM_STATE_RUNNING);
  }
  CHECK(place_of_pool(pool).xstream == xstream);
  OK(ABT_xstream_free(&xstream));
  abt_test_stop();
}

static void join_self(void* arg) {
  ABT_xstream self;
  OK(ABT_xstream_self(&self));
  CHECK_RET(ABT_xstream_join(self), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_xstream_free(&self), ABT_ERR_INV_XSTREAM);
  CHECK(self != ABT_XSTREAM_NULL);
  abt_test_add((int*)arg, 1);
}

static void* external_xstream_calls(void* arg) {
  ABT_xstream xstream;
  int rank;
  CHECK_RET(ABT_xstream_self(&xstream), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_xstream_self_rank(&rank), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_xstream_exit(), ABT_ERR_INV_XSTREAM);
  int num = 0;
  OK(ABT_xstream_get_num(&num));
  CHECK(num == abt_test_num_xstreams);
  /* An external thread may create and free streams. */
  OK(ABT_xstream_create(ABT_SCHED_NULL, &xstream));
  OK(ABT_xstream_free(&xstream));
  *(int*)arg = 1;
  return NULL;
}

static void test_errors(void) {
  abt_test_start();
  ABT_xstream primary = abt_test_xstreams[0], null = ABT_XSTREAM_NULL;
  int rank;
  ABT_xstream_state state;
  CHECK_RET(ABT_xstream_free(&primary), ABT_ERR_INV_XSTREAM);
  CHECK(primary == abt_test_xstreams[0]);
  CHECK_RET(ABT_xstream_join(primary), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_xstream_cancel(primary), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_xstream_revive(primary), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_xstream_join(ABT_XSTREAM_NULL), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_xstream_get_rank(ABT_XSTREAM_NULL, &rank), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_xstream_get_state(ABT_XSTREAM_NULL, &state), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_xstream_revive(ABT_XSTREAM_NULL), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_xstream_free(&null), ABT_SUCCESS);
  CHECK_RET(ABT_xstream_exit(), ABT_ERR_INV_XSTREAM);
  ABT_pool pools[1];
  CHECK_RET(ABT_xstream_get_main_pools(ABT_XSTREAM_NULL, 1, pools), ABT_ERR_INV_XSTREAM);
  /* Reviving a running stream is misuse. */
  if (abt_test_num_xstreams > 1) {
    CHECK(ABT_xstream_revive(abt_test_xstreams[1]) != ABT_SUCCESS);
  }
  int done = 0;
  for (int i = 0; i < abt_test_num_xstreams; i++) {
    if (i == 0) continue; /* the primary stream is covered above */
    OK(ABT_thread_create(abt_test_pools[i], join_self, &done, ABT_THREAD_ATTR_NULL, NULL));
  }
  abt_test_wait_count(&done, abt_test_num_xstreams - 1);
  pthread_t external;
  int external_done = 0;
  CHECK(pthread_create(&external, NULL, external_xstream_calls, &external_done) == 0);
  CHECK(pthread_join(external, NULL) == 0);
  CHECK(external_done == 1);
  abt_test_stop();
}

static void exit_stream(void* arg) {
  int* flags = arg;
  abt_test_store(&flags[0], 1);
  OK(ABT_xstream_exit());
  abt_test_store(&flags[1], 1); /* not reached: the calling ULT ends with its stream */
}

static void test_cancel_and_exit(void) {
  abt_test_start();
  ABT_xstream xstream;
  ABT_xstream_state state;
  OK(ABT_xstream_create(ABT_SCHED_NULL, &xstream));
  OK(ABT_xstream_cancel(xstream));
  OK(ABT_xstream_join(xstream));
  OK(ABT_xstream_get_state(xstream, &state));
  CHECK(state == ABT_XSTREAM_STATE_TERMINATED);
  OK(ABT_xstream_free(&xstream));

  int flags[2] = {0, 0};
  ABT_pool pool;
  OK(ABT_xstream_create(ABT_SCHED_NULL, &xstream));
  OK(ABT_xstream_get_main_pools(xstream, 1, &pool));
  OK(ABT_thread_create(pool, exit_stream, flags, ABT_THREAD_ATTR_NULL, NULL));
  OK(ABT_xstream_join(xstream));
  CHECK(abt_test_load(&flags[0]) == 1);
  CHECK(abt_test_load(&flags[1]) == 0);
  OK(ABT_xstream_get_state(xstream, &state));
  CHECK(state == ABT_XSTREAM_STATE_TERMINATED);
  OK(ABT_xstream_free(&xstream));
  abt_test_stop();
}

/* Replaces the main scheduler of the caller's own stream by a basic one over a new pool. */
static void replace_own_sched(void* arg) {
  ABT_pool* pool = arg;
  ABT_xstream self;
  OK(ABT_xstream_self(&self));
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_TRUE, pool));
  OK(ABT_xstream_set_main_sched_basic(self, ABT_SCHED_BASIC, 1, pool));
}

static void test_main_sched(void) {
  abt_test_start();
  for (int i = 0; i < abt_test_num_xstreams; i++) {
    ABT_sched sched;
    int num_pools = 0;
    ABT_pool pool;
    OK(ABT_xstream_get_main_sched(abt_test_xstreams[i], &sched));
    OK(ABT_sched_get_num_pools(sched, &num_pools));
    CHECK(num_pools == 1);
    OK(ABT_sched_get_pools(sched, 1, 0, &pool));
    CHECK(pool == abt_test_pools[i]);
  }
  /* The primary ULT sets its own stream's scheduler, as Argobots programs often do first. */
  ABT_pool shared;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_TRUE, &shared));
  OK(ABT_xstream_set_main_sched_basic(abt_test_xstreams[0], ABT_SCHED_DEFAULT, 1, &shared));
  ABT_pool got;
  OK(ABT_xstream_get_main_pools(abt_test_xstreams[0], 1, &got));
  CHECK(got == shared);
  CHECK(place_of_pool(shared).rank == 0);

  /* A ULT on a secondary stream replaces that stream's scheduler; a user-made scheduler in use
   * cannot be set on a second stream. */
  for (int i = 1; i < abt_test_num_xstreams; i++) {
    ABT_pool fresh = ABT_POOL_NULL;
    ABT_thread thread;
    OK(ABT_thread_create(abt_test_pools[i], replace_own_sched, &fresh, ABT_THREAD_ATTR_NULL,
                         &thread));
    OK(ABT_thread_free(&thread));
    OK(ABT_xstream_get_main_pools(abt_test_xstreams[i], 1, &got));
    CHECK(got == fresh);
    CHECK(place_of_pool(fresh).rank == i);
    abt_test_pools[i] = fresh;
  }
  ABT_xstream a, b;
  ABT_sched sched;
  OK(ABT_sched_create_basic(ABT_SCHED_BASIC, 0, NULL, ABT_SCHED_CONFIG_NULL, &sched));
  OK(ABT_xstream_create(sched, &a));
  OK(ABT_xstream_create(ABT_SCHED_NULL, &b));
  OK(ABT_xstream_join(b));
  CHECK_RET(ABT_xstream_set_main_sched(b, sched), ABT_ERR_INV_SCHED);
  /* A terminated stream takes a new scheduler and runs it once revived. */
  ABT_sched other;
  ABT_pool other_pool;
  OK(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_TRUE, &other_pool));
  OK(ABT_sched_create_basic(ABT_SCHED_BASIC, 1, &other_pool, ABT_SCHED_CONFIG_NULL, &other));
  OK(ABT_xstream_set_main_sched(b, other));
  OK(ABT_xstream_revive(b));
  CHECK(place_of_pool(other_pool).xstream == b);
  OK(ABT_xstream_free(&a));
  OK(ABT_xstream_free(&b));
  CHECK_RET(ABT_xstream_get_main_sched(ABT_XSTREAM_NULL, &sched), ABT_ERR_INV_XSTREAM);
  abt_test_stop();
}

/* The first CPU this process may run on. */
static int allowed_cpu(void) {
  cpu_set_t set;
  CHECK(sched_getaffinity(0, sizeof set, &set) == 0);
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
    if (CPU_ISSET(cpu, &set)) return cpu;
  }
  CHECK(!"no allowed CPU");
  return -1;
}

static void test_cpubind_affinity(void) {
  abt_test_start();
  ABT_bool supported = ABT_FALSE;
  OK(ABT_info_query_config(ABT_INFO_QUERY_KIND_ENABLED_AFFINITY, &supported));
  const int cpu = allowed_cpu();
  ABT_xstream xstream;
  OK(ABT_xstream_create(ABT_SCHED_NULL, &xstream));
  if (!supported) {
    CHECK_RET(ABT_xstream_set_cpubind(xstream, cpu), ABT_ERR_FEATURE_NA);
    OK(ABT_xstream_free(&xstream));
    abt_test_stop();
    return;
  }
  int got = -1, num = -1, cpus[8];
  OK(ABT_xstream_set_cpubind(xstream, cpu));
  OK(ABT_xstream_get_cpubind(xstream, &got));
  CHECK(got == cpu);
  int one[1] = {cpu};
  OK(ABT_xstream_set_affinity(xstream, 1, one));
  OK(ABT_xstream_get_affinity(xstream, 8, cpus, &num));
  CHECK(num == 1);
  CHECK(cpus[0] == cpu);
  num = -1;
  OK(ABT_xstream_get_affinity(xstream, 0, NULL, &num));
  CHECK(num == 1);
  /* Work still runs on a pinned stream. */
  ABT_pool pool;
  OK(ABT_xstream_get_main_pools(xstream, 1, &pool));
  CHECK(place_of_pool(pool).xstream == xstream);
  /* An empty affinity set lets the stream run anywhere again. */
  OK(ABT_xstream_set_affinity(xstream, 0, NULL));
  CHECK_RET(ABT_xstream_set_cpubind(ABT_XSTREAM_NULL, cpu), ABT_ERR_INV_XSTREAM);
  CHECK_RET(ABT_xstream_get_cpubind(ABT_XSTREAM_NULL, &got), ABT_ERR_INV_XSTREAM);
  OK(ABT_xstream_free(&xstream));
  abt_test_stop();
}

/* Shared state of the stream-barrier rounds. */
struct barrier_run {
  ABT_xstream_barrier barrier;
  int rounds;
  int arrived;
  int failures;
};

static void barrier_rounds(void* arg) {
  struct barrier_run* run = arg;
  for (int r = 0; r < run->rounds; r++) {
    abt_test_add(&run->arrived, 1);
    OK(ABT_xstream_barrier_wait(run->barrier));
    /* Every stream arrived for this round before anyone passed. */
    if (abt_test_load(&run->arrived) < (r + 1) * abt_test_num_xstreams)
      abt_test_add(&run->failures, 1);
    OK(ABT_xstream_barrier_wait(run->barrier));
  }
}

static void test_xstream_barrier(void) {
  abt_test_start();
  struct barrier_run run = {ABT_XSTREAM_BARRIER_NULL, abt_test_scaled(200), 0, 0};
  OK(ABT_xstream_barrier_create((uint32_t)abt_test_num_xstreams, &run.barrier));
  ABT_thread threads[16];
  for (int i = 1; i < abt_test_num_xstreams; i++) {
    OK(ABT_thread_create(abt_test_pools[i], barrier_rounds, &run, ABT_THREAD_ATTR_NULL,
                         &threads[i]));
  }
  barrier_rounds(&run); /* the primary ULT is the waiter of stream 0 */
  for (int i = 1; i < abt_test_num_xstreams; i++) OK(ABT_thread_free(&threads[i]));
  CHECK(run.failures == 0);
  CHECK(run.arrived == run.rounds * abt_test_num_xstreams);
  OK(ABT_xstream_barrier_free(&run.barrier));
  CHECK(run.barrier == ABT_XSTREAM_BARRIER_NULL);
  CHECK_RET(ABT_xstream_barrier_wait(ABT_XSTREAM_BARRIER_NULL), ABT_ERR_INV_XSTREAM_BARRIER);
  CHECK_RET(ABT_xstream_barrier_free(&run.barrier), ABT_ERR_INV_XSTREAM_BARRIER);
  ABT_xstream_barrier zero;
  CHECK_RET(ABT_xstream_barrier_create(0, &zero), ABT_ERR_INV_ARG);
  abt_test_stop();
}

int main(int argc, char** argv) {
  static const struct abt_test_case cases[] = {
      {"self_and_ranks", test_self_and_ranks},     {"create_variants", test_create_variants},
      {"join_revive", test_join_revive},           {"errors", test_errors},
      {"cancel_and_exit", test_cancel_and_exit},   {"main_sched", test_main_sched},
      {"cpubind_affinity", test_cpubind_affinity}, {"xstream_barrier", test_xstream_barrier},
  };
  return abt_test_main(argc, argv, cases, ABT_TEST_COUNT(cases));
}
