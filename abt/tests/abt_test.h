// SPDX-License-Identifier: Apache-2.0
/* A small harness for the C tests of weft's Argobots-compatible API (abt.h).
 *
 * Each test executable is a list of named test functions run in order by abt_test_main(). The
 * executable takes the number of execution streams to use as its first argument (1, 2 or 4 in
 * CTest) and, optionally, the name of a single test to run. A failed check prints file:line and
 * the failing expression (and, for return codes, both codes by name) and ends the process with
 * status 1 at once, from whatever context it runs in (primary ULT, ULT, tasklet, external
 * thread), so that a failure cannot be lost in a work unit nobody joins.
 */
#ifndef WEFT_TESTS_ABT_TEST_H
#define WEFT_TESTS_ABT_TEST_H

#include <abt.h>

#include <stddef.h>
#include <stdint.h>

/* Reports a failed check and ends the process with status 1. */
void abt_test_fail(const char* file, int line, const char* expr);
/* Reports a call that returned `got` instead of `expected` and ends the process with status 1. */
void abt_test_fail_code(const char* file, int line, const char* call, int got, int expected);

/* Fails the test unless `expr` is true. */
#define CHECK(expr)                                        \
  do {                                                     \
    if (!(expr)) abt_test_fail(__FILE__, __LINE__, #expr); \
  } while (0)

/* Fails the test unless `call` returns the error code `expected`. */
#define CHECK_RET(call, expected)                                                  \
  do {                                                                             \
    int abt_test_got_ = (call);                                                    \
    int abt_test_exp_ = (expected);                                                \
    if (abt_test_got_ != abt_test_exp_)                                            \
      abt_test_fail_code(__FILE__, __LINE__, #call, abt_test_got_, abt_test_exp_); \
  } while (0)

/* Fails the test unless `call` returns ABT_SUCCESS. */
#define OK(call) CHECK_RET(call, ABT_SUCCESS)

/* The number of execution streams the tests use (argv[1]; 1 if absent). */
extern int abt_test_num_xstreams;

/* The execution streams and their main pools set up by abt_test_start(): index 0 is the primary
 * stream, the others were made with ABT_xstream_create(ABT_SCHED_NULL, ...). */
extern ABT_xstream abt_test_xstreams[16];
extern ABT_pool abt_test_pools[16];

/* ABT_init() plus abt_test_num_xstreams - 1 secondary streams with default schedulers. */
void abt_test_start(void);
/* Frees the secondary streams made by abt_test_start(), then ABT_finalize(). */
void abt_test_stop(void);

/* A stress size divided by WEFT_TEST_SCALE (sanitizer runs set 10), at least 1. */
int abt_test_scaled(int n);

/* Yields the calling work unit (or, outside one, sleeps a little) until *flag != 0; fails the
 * test after a minute so that a lost wake-up ends as a failure rather than a hang. */
void abt_test_wait_flag(const int* flag);
/* Yields (or sleeps) until *counter >= target, with the same one-minute limit. */
void abt_test_wait_count(const int* counter, int target);

/* Sequentially consistent atomics on plain ints, for counters shared by work units. */
static inline int abt_test_add(int* p, int v) {
  return __atomic_add_fetch(p, v, __ATOMIC_SEQ_CST);
}
static inline int abt_test_load(const int* p) {
  return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}
static inline void abt_test_store(int* p, int v) {
  __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

/* One named test of an executable. */
struct abt_test_case {
  const char* name;
  void (*fn)(void);
};

/* Runs the cases (all, or the one named by argv[2]) and returns the process's exit status. */
int abt_test_main(int argc, char** argv, const struct abt_test_case* cases, size_t num_cases);

#define ABT_TEST_COUNT(array) (sizeof(array) / sizeof((array)[0]))

#endif
