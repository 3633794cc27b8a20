// SPDX-License-Identifier: Apache-2.0
/* Mutual exclusion: plain and nested omp locks, critical sections (unnamed and named) and
 * omp_test_lock each guard a non-atomic counter; any lost update shows in the count. */
#include <omp.h>

#include "bolt_check.h"

enum { kThreads = 8, kPerThread = 20000 };

int main(void) {
  int failures = 0;
  const long long expected = (long long)kThreads * kPerThread;

  omp_lock_t lock;
  omp_init_lock(&lock);
  long long by_lock = 0;
#pragma omp parallel num_threads(kThreads)
  for (int k = 0; k < kPerThread; ++k) {
    omp_set_lock(&lock);
    by_lock += 1;
    omp_unset_lock(&lock);
  }
  failures += bolt_check("omp_lock", by_lock, expected);

  long long by_test_lock = 0;
#pragma omp parallel num_threads(kThreads)
  for (int k = 0; k < kPerThread; ++k) {
    while (!omp_test_lock(&lock)) {
    }
    by_test_lock += 1;
    omp_unset_lock(&lock);
  }
  omp_destroy_lock(&lock);
  failures += bolt_check("omp_test_lock", by_test_lock, expected);

  omp_nest_lock_t nest;
  omp_init_nest_lock(&nest);
  long long by_nest_lock = 0;
#pragma omp parallel num_threads(kThreads)
  for (int k = 0; k < kPerThread; ++k) {
    omp_set_nest_lock(&nest);
    omp_set_nest_lock(&nest);
    by_nest_lock += 1;
    omp_unset_nest_lock(&nest);
    omp_unset_nest_lock(&nest);
  }
  omp_destroy_nest_lock(&nest);
  failures += bolt_check("omp_nest_lock", by_nest_lock, expected);

  long long by_critical = 0, by_named = 0;
#pragma omp parallel num_threads(kThreads)
  for (int k = 0; k < kPerThread; ++k) {
#pragma omp critical
    by_critical += 1;
#pragma omp critical(named)
    by_named += 1;
  }
  failures += bolt_check("critical", by_critical, expected);
  failures += bolt_check("critical_named", by_named, expected);
  return bolt_exit_status(failures);
}
