/* Synchronisation and the other worksharing constructs: barrier, single (with nowait and
   copyprivate), master and masked, critical (unnamed and named), atomic (native and the
   lock-based fallback), sections, simple and nest locks. */
#include <omp.h>

#include "check.h"

int main(void) {
  int phase_ok = 1, singles = 0, single_nowait = 0, masters = 0, masked1 = 0;
  int crit = 0, crit_a = 0, crit_b = 0, atom = 0, sect[5] = {0};
  long double wide = 0; /* no native atomic: GCC takes GOMP_atomic_start/end */
  int copied_ok = 1;
  static int arrived[4];
#pragma omp parallel num_threads(4)
  {
    const int me = omp_get_thread_num();
    for (int round = 1; round <= 20; ++round) {
      arrived[me] = round;
#pragma omp barrier
      for (int t = 0; t < 4; ++t) {
        if (arrived[t] != round) {
#pragma omp atomic write
          phase_ok = 0;
        }
      }
#pragma omp barrier
    }
    for (int i = 0; i < 10; ++i) {
#pragma omp single
      singles++;
#pragma omp single nowait
      {
#pragma omp atomic
        single_nowait++;
      }
    }
#pragma omp barrier
    int value = -1;
#pragma omp single copyprivate(value)
    value = 42 + omp_get_thread_num();
    if (value < 42 || value > 45) copied_ok = 0;
#pragma omp master
    masters++;
#pragma omp masked filter(1)
    masked1 += omp_get_thread_num();
    for (int i = 0; i < 500; ++i) {
#pragma omp critical
      crit++;
#pragma omp critical(a)
      crit_a++;
#pragma omp critical(b)
      crit_b += 2;
#pragma omp atomic
      atom++;
#pragma omp atomic
      wide += 1.0L;
    }
#pragma omp sections
    {
#pragma omp section
      sect[0]++;
#pragma omp section
      sect[1]++;
#pragma omp section
      sect[2]++;
#pragma omp section
      sect[3]++;
#pragma omp section
      sect[4]++;
    }
  }
  CHECK(phase_ok);
  CHECK(singles == 10 && single_nowait == 10);
  CHECK(copied_ok);
  CHECK(masters == 1 && masked1 == 1);
  CHECK(crit == 2000 && crit_a == 2000 && crit_b == 4000 && atom == 2000 && wide == 2000.0L);
  for (int i = 0; i < 5; ++i) CHECK(sect[i] == 1);

  int which[3] = {0, 0, 0};
#pragma omp parallel sections num_threads(2)
  {
#pragma omp section
    which[0] = 1;
#pragma omp section
    which[1] = 2;
#pragma omp section
    which[2] = 3;
  }
  CHECK(which[0] == 1 && which[1] == 2 && which[2] == 3);

  omp_lock_t lock;
  omp_nest_lock_t nest;
  omp_init_lock(&lock);
  omp_init_nest_lock(&nest);
  int guarded = 0, nest_guarded = 0, nested_depth_ok = 1, tests = 0;
#pragma omp parallel num_threads(3)
  {
    for (int i = 0; i < 300; ++i) {
      omp_set_lock(&lock);
      guarded++;
      omp_unset_lock(&lock);
      omp_set_nest_lock(&nest);
      omp_set_nest_lock(&nest);
      if (omp_test_nest_lock(&nest) != 3) nested_depth_ok = 0;
      nest_guarded++;
      omp_unset_nest_lock(&nest);
      omp_unset_nest_lock(&nest);
      omp_unset_nest_lock(&nest);
    }
#pragma omp barrier
#pragma omp single
    {
      CHECK(omp_test_lock(&lock));
      tests = 1;
      omp_unset_lock(&lock);
    }
  }
  omp_destroy_lock(&lock);
  omp_destroy_nest_lock(&nest);
  CHECK(guarded == 900 && nest_guarded == 900);
  CHECK(nested_depth_ok);
  CHECK(tests == 1);
  return failures;
}
