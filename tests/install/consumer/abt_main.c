// SPDX-License-Identifier: Apache-2.0
/* A C consumer of the installed Argobots-compatible API: an unmodified Argobots-style program. */
#include <abt.h>
#include <stdio.h>

static void add(void* arg) {
  *(int*)arg += 1;
}

int main(int argc, char** argv) {
  ABT_xstream xstream;
  ABT_pool pool;
  ABT_thread thread;
  int x = 41;
  if (ABT_init(argc, argv) != ABT_SUCCESS) return 1;
  if (ABT_xstream_self(&xstream) != ABT_SUCCESS) return 2;
  if (ABT_xstream_get_main_pools(xstream, 1, &pool) != ABT_SUCCESS) return 3;
  if (ABT_thread_create(pool, add, &x, ABT_THREAD_ATTR_NULL, &thread) != ABT_SUCCESS) return 4;
  if (ABT_thread_free(&thread) != ABT_SUCCESS) return 5;
  if (ABT_finalize() != ABT_SUCCESS) return 6;
  printf("abt consumer: x = %d\n", x);
  return x == 42 ? 0 : 7;
}
