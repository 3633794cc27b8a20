// SPDX-License-Identifier: Apache-2.0
/* The harness of abt_test.h: failure reports, the stream set-up shared by the tests, bounded
 * waits and the test runner. */
#include "abt_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int abt_test_num_xstreams = 1;
ABT_xstream abt_test_xstreams[16];
ABT_pool abt_test_pools[16];

static const char* current_test = "?";

/* The name of an error code from the library under test, or "?" if it has none for it. */
static const char* code_name(int code, char* buf, size_t size) {
  size_t len = 0;
  if (ABT_error_get_str(code, NULL, &len) != ABT_SUCCESS || len >= size) return "?";
  if (ABT_error_get_str(code, buf, &len) != ABT_SUCCESS) return "?";
  return buf;
}

void abt_test_fail(const char* file, int line, const char* expr) {
  fprintf(stderr, "%s:%d: in test %s: CHECK(%s) failed\n", file, line, current_test, expr);
  fflush(stderr);
  _Exit(1);
}

void abt_test_fail_code(const char* file, int line, const char* call, int got, int expected) {
  char got_name[64], exp_name[64];
  fprintf(stderr, "%s:%d: in test %s: %s returned %d (%s), expected %d (%s)\n", file, line,
          current_test, call, got, code_name(got, got_name, sizeof got_name), expected,
          code_name(expected, exp_name, sizeof exp_name));
  fflush(stderr);
  _Exit(1);
}

void abt_test_start(void) {
  OK(ABT_init(0, NULL));
  CHECK(abt_test_num_xstreams >= 1 && abt_test_num_xstreams <= 16);
  OK(ABT_xstream_self(&abt_test_xstreams[0]));
  for (int i = 1; i < abt_test_num_xstreams; i++) {
    OK(ABT_xstream_create(ABT_SCHED_NULL, &abt_test_xstreams[i]));
  }
  for (int i = 0; i < abt_test_num_xstreams; i++) {
    OK(ABT_xstream_get_main_pools(abt_test_xstreams[i], 1, &abt_test_pools[i]));
  }
}

void abt_test_stop(void) {
  for (int i = 1; i < abt_test_num_xstreams; i++) {
    OK(ABT_xstream_free(&abt_test_xstreams[i]));
    CHECK(abt_test_xstreams[i] == ABT_XSTREAM_NULL);
  }
  OK(ABT_finalize());
}

int abt_test_scaled(int n) {
  const char* v = getenv("WEFT_TEST_SCALE");
  long scale = v && *v ? strtol(v, NULL, 10) : 1;
  if (scale < 1) scale = 1;
  long s = n / scale;
  return s < 1 ? 1 : (int)s;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Lets other work run: a yield in a ULT; a short sleep in a tasklet or an external thread. */
static void pause_once(void) {
  if (ABT_self_yield() != ABT_SUCCESS) usleep(50);
}

void abt_test_wait_count(const int* counter, int target) {
  const double deadline = now_seconds() + 60.0;
  while (abt_test_load(counter) < target) {
    if (now_seconds() > deadline) {
      fprintf(stderr, "in test %s: waited a minute for a count of %d, have %d\n", current_test,
              target, abt_test_load(counter));
      fflush(stderr);
      _Exit(1);
    }
    pause_once();
  }
}

void abt_test_wait_flag(const int* flag) {
  abt_test_wait_count(flag, 1);
}

/* Whether `name` is in ABT_TEST_LEFT_OUT, the space-separated cases the build leaves out
 * because the library under test deviates from Argobots there (named in CMakeLists.txt, so that
 * they are listed, not lost; run one by name to see it fail). */
static int left_out(const char* name) {
#ifdef ABT_TEST_LEFT_OUT
  const char* list = ABT_TEST_LEFT_OUT;
  const size_t len = strlen(name);
  for (const char* p = list; (p = strstr(p, name)) != NULL; p += len) {
    if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0')) return 1;
  }
#endif
  (void)name;
  return 0;
}

int abt_test_main(int argc, char** argv, const struct abt_test_case* cases, size_t num_cases) {
  if (argc > 1) abt_test_num_xstreams = atoi(argv[1]);
  if (abt_test_num_xstreams < 1 || abt_test_num_xstreams > 16) {
    fprintf(stderr, "usage: %s [streams 1..16] [test name]\n", argv[0]);
    return 2;
  }
  const char* only = argc > 2 ? argv[2] : NULL;
  int ran = 0;
  for (size_t i = 0; i < num_cases; i++) {
    if (only && strcmp(only, cases[i].name) != 0) continue;
    if (!only && left_out(cases[i].name)) {
      printf("[ LEFT OUT ] %s: the library deviates here (abt/tests/CMakeLists.txt)\n",
             cases[i].name);
      continue;
    }
    current_test = cases[i].name;
    printf("[ RUN  ] %s (%d streams)\n", cases[i].name, abt_test_num_xstreams);
    fflush(stdout);
    cases[i].fn();
    printf("[   OK ] %s\n", cases[i].name);
    fflush(stdout);
    ran++;
  }
  if (ran == 0) {
    fprintf(stderr, "no test named %s\n", only ? only : "(none)");
    return 2;
  }
  printf("%d tests passed\n", ran);
  return 0;
}
