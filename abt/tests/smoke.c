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

static void test_error_strings(void) {
  char buf[64];
  size_t len = 0;
  CHECK(ABT_error_get_str(ABT_ERR_INV_THREAD, buf, &len) == ABT_SUCCESS);
  CHECK(strcmp(buf, "ABT_ERR_INV_THREAD") == 0);
  CHECK(len == strlen("ABT_ERR_INV_THREAD"));
  CHECK(ABT_error_get_str(ABT_SUCCESS, NULL, &len) == ABT_SUCCESS && len == 11);
}

int main(void) {
  test_error_strings();
  puts("weft_abt_smoke: ok");
  return 0;
}
