/* Inner teams that never wait (a combined parallel for with a static schedule), run repeatedly:
   with WEFT_OMP_INNER=tasklet libweft-omp runs them as tasklets from their second run on. The
   results, thread numbers and team sizes must be the same as with ULTs (and on libgomp). */
#include <math.h>
#include <omp.h>

#include "check.h"

#define OUTER 8
#define INNER 4
#define M 200

int main(void) {
  omp_set_max_active_levels(2);
  static double out[OUTER][M];
  static int who[OUTER][M];
  for (int rep = 0; rep < 5; ++rep) {
#pragma omp parallel for num_threads(4) schedule(dynamic)
    for (int x = 0; x < OUTER; ++x) {
#pragma omp parallel for num_threads(INNER) schedule(static)
      for (int j = 0; j < M; ++j) {
        out[x][j] = cos((double)(x * M + j + rep));
        who[x][j] = omp_get_thread_num() * 100 + omp_get_num_threads() * 10000 + omp_get_level();
      }
    }
    int ok = 1;
    for (int x = 0; x < OUTER; ++x) {
      for (int j = 0; j < M; ++j) {
        /* a static schedule gives thread t the t-th block of M / INNER iterations */
        const int t = j / (M / INNER);
        ok &= out[x][j] == cos((double)(x * M + j + rep));
        ok &= who[x][j] == t * 100 + INNER * 10000 + 2;
      }
    }
    CHECK(ok);
  }
  return failures;
}
