// SPDX-License-Identifier: Apache-2.0
/* The check shared by the OpenMP programs run on BOLT (the LLVM OpenMP runtime over Argobots or
 * over weft's abt.h): each program prints its results, one "name value" line each, so that the
 * driver can compare the output of two runtimes line by line, and checks every result against the
 * value computed without OpenMP, so that one runtime alone is tested too. */
#ifndef WEFT_BOLT_CHECK_H
#define WEFT_BOLT_CHECK_H

#include <stdio.h>
#include <stdlib.h>

/* Prints "name got" and, when got differs from expected, a diagnostic on stderr; returns 1 on a
 * mismatch and 0 otherwise, to be summed into the exit status. */
static inline int bolt_check(const char* name, long long got, long long expected) {
  printf("%s %lld\n", name, got);
  if (got != expected) {
    fprintf(stderr, "FAIL %s: got %lld, expected %lld\n", name, got, expected);
    return 1;
  }
  return 0;
}

/* The exit status of a program whose checks summed to failures. */
static inline int bolt_exit_status(int failures) {
  if (failures != 0) fprintf(stderr, "%d check(s) failed\n", failures);
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
