// SPDX-License-Identifier: Apache-2.0
/* Nested parallel regions: 36 outer threads each open an inner region of 36 threads. Every
 * (outer, inner) pair must run exactly once, in teams of the sizes asked for, at the right
 * levels. */
#include <omp.h>

#include "bolt_check.h"

enum { kOuter = 36, kInner = 36 };

static int visits[kOuter][kInner];
static int inner_team_size[kOuter];
static int inner_level[kOuter];

int main(void) {
  int failures = 0;
  omp_set_max_active_levels(2);
  int outer_team_size = 0;
#pragma omp parallel num_threads(kOuter)
  {
    const int outer = omp_get_thread_num();
#pragma omp single
    outer_team_size = omp_get_num_threads();
#pragma omp parallel num_threads(kInner)
    {
      __atomic_fetch_add(&visits[outer][omp_get_thread_num()], 1, __ATOMIC_RELAXED);
#pragma omp master
      {
        inner_team_size[outer] = omp_get_num_threads();
        inner_level[outer] = omp_get_level() * 10 + omp_get_active_level();
      }
    }
  }
  failures += bolt_check("outer_team_size", outer_team_size, kOuter);
  long long pairs_once = 0, full_inner_teams = 0, level_two = 0;
  for (int o = 0; o < kOuter; ++o) {
    for (int i = 0; i < kInner; ++i) pairs_once += visits[o][i] == 1;
    full_inner_teams += inner_team_size[o] == kInner;
    level_two += inner_level[o] == 22;
  }
  failures += bolt_check("pairs_once", pairs_once, (long long)kOuter * kInner);
  failures += bolt_check("full_inner_teams", full_inner_teams, kOuter);
  failures += bolt_check("inner_regions_at_level_2", level_two, kOuter);
  return bolt_exit_status(failures);
}
