// SPDX-License-Identifier: Apache-2.0
/* parallel for: a sum reduction under static, dynamic and guided schedules, and a loop whose
 * every iteration writes its own element (each must be written exactly once). */
#include <omp.h>

#include "bolt_check.h"

enum { kIterations = 1000000 };

static int written[kIterations];

int main(void) {
  int failures = 0;
  const long long expected_sum = (long long)kIterations * (kIterations - 1) / 2;

  long long sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
  for (int i = 0; i < kIterations; ++i) sum += i;
  failures += bolt_check("sum_static", sum, expected_sum);

  sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(dynamic, 64)
  for (int i = 0; i < kIterations; ++i) sum += i;
  failures += bolt_check("sum_dynamic", sum, expected_sum);

  sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(guided)
  for (int i = 0; i < kIterations; ++i) sum += i;
  failures += bolt_check("sum_guided", sum, expected_sum);

#pragma omp parallel for
  for (int i = 0; i < kIterations; ++i) written[i] += 1;
  long long written_once = 0;
  for (int i = 0; i < kIterations; ++i) written_once += written[i] == 1;
  failures += bolt_check("written_once", written_once, kIterations);

  return bolt_exit_status(failures);
}
