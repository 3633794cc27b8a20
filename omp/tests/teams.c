/* Host teams as libgomp 12 runs them: num_teams teams (3 by default, or nteams-var), each with
   its team number, distribute dealing iterations by team; omp_set_num_teams and
   omp_set_teams_thread_limit; a teams construct's thread_limit bounds the threads its parallel
   regions use together, nested ones included (never more at once than the limit). */
#include <omp.h>

#include "check.h"

int main(void) {
  int seen[8] = {0}, teams = 0;
#pragma omp teams num_teams(5)
  {
    if (omp_get_team_num() == 0) teams = omp_get_num_teams();
#pragma omp distribute dist_schedule(static, 1)
    for (int i = 0; i < 5; ++i) seen[i] += omp_get_team_num() == i;
  }
  CHECK(teams == 5);
  CHECK(seen[0] + seen[1] + seen[2] + seen[3] + seen[4] == 5);

  int count = 0;
#pragma omp teams
#pragma omp parallel if (0)
  {
#pragma omp atomic
    count++;
  }
  CHECK(count == 3);
  CHECK(omp_get_max_teams() == 0 && omp_get_teams_thread_limit() == 0);
  omp_set_num_teams(4);
  omp_set_teams_thread_limit(3);
  CHECK(omp_get_max_teams() == 4 && omp_get_teams_thread_limit() == 3);

  int limit_bad = 0, width_bad = 0, live = 0, peak = 0;
  omp_set_dynamic(0);
  omp_set_max_active_levels(3);
  count = 0;
#pragma omp teams
  {
#pragma omp parallel if (0)
    {
#pragma omp atomic
      count++;
      if (omp_get_thread_limit() != 3) limit_bad = 1;
    }
#pragma omp parallel num_threads(8)
    if (omp_get_num_threads() > 3) width_bad = 1;
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
    {
      int now;
#pragma omp atomic capture
      now = ++live;
#pragma omp critical
      if (now > peak) peak = now;
#pragma omp barrier
#pragma omp atomic
      live--;
    }
  }
  CHECK(count == 4);
  CHECK(!limit_bad && !width_bad);
  CHECK(peak <= 3);
  CHECK(omp_get_num_teams() == 1 && omp_get_team_num() == 0);
  return failures;
}
