/* Nested regions to depth 3 doing real work: worksharing loops, barriers, single, reductions and
   critical in every inner team (the shape of the 003 benchmark, one more level). */
#include <math.h>
#include <omp.h>

#include "check.h"

#define A 4
#define B 3
#define C 100

int main(void) {
  omp_set_max_active_levels(3);
  static double out[A][B][C];
  long total = 0;
  int single_runs = 0, barrier_ok = 1;
#pragma omp parallel for num_threads(2) schedule(dynamic)
  for (int a = 0; a < A; ++a) {
#pragma omp parallel num_threads(3)
    {
#pragma omp for schedule(static)
      for (int b = 0; b < B; ++b) {
        int flags[3] = {0, 0, 0};
        long mine = 0;
#pragma omp parallel num_threads(3) shared(flags, mine)
        {
#pragma omp for schedule(guided) reduction(+ : mine)
          for (int c = 0; c < C; ++c) {
            out[a][b][c] = cos((double)(a * B * C + b * C + c));
            mine += 1;
          }
          flags[omp_get_thread_num()] = 1;
#pragma omp barrier
          if (!(flags[0] && flags[1] && flags[2])) {
#pragma omp atomic write
            barrier_ok = 0;
          }
#pragma omp single
          {
#pragma omp atomic
            single_runs++;
#pragma omp critical
            total += mine;
          }
        }
      }
    }
  }
  CHECK(total == (long)A * B * C);
  CHECK(single_runs == A * B);
  CHECK(barrier_ok);
  int values_ok = 1;
  for (int a = 0; a < A; ++a)
    for (int b = 0; b < B; ++b)
      for (int c = 0; c < C; ++c) values_ok &= out[a][b][c] == cos((double)(a * B * C + b * C + c));
  CHECK(values_ok);
  return failures;
}
