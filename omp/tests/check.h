/* The conformance tests' check: reports the failing condition and counts it; main returns the
   count, so a test fails on any wrong result (each test runs on libweft-omp and on libgomp). */
#pragma once
#include <stdio.h>

static int failures;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)
