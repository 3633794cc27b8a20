/* threadprivate and members that wait for each other outside OpenMP constructs. GCC keeps
   threadprivate variables in the kernel thread's TLS, and a top-level team gets a stream per
   member (more than the CPUs if it is wider), so: copyin gives every member the primary
   thread's value, each member keeps its own copy, and the copies persist from one region to
   the next of the same width; a member may spin on a flag a team-mate sets (OpenMP examples,
   a.18.1), which members sharing a stream would never see. Teams of 2 and of 6 (wider than
   this machine's CPUs). */
#include <omp.h>

#include "check.h"

static int tp = 0;
#pragma omp threadprivate(tp)

static void copies(int n) {
  tp = 17;
  int bad = 0;
#pragma omp parallel copyin(tp) num_threads(n) reduction(+ : bad)
  {
    bad += tp != 17;
    tp = 100 + omp_get_thread_num();
  }
  CHECK(bad == 0);
  CHECK(tp == 100);
#pragma omp parallel num_threads(n) reduction(+ : bad)
  bad += tp != 100 + omp_get_thread_num();
  CHECK(bad == 0);
}

static int flag[8], work[8], result[8];

static void neighbours(int n) {
  for (int i = 0; i < 8; ++i) flag[i] = work[i] = result[i] = 0;
#pragma omp parallel num_threads(n)
  {
    const int me = omp_get_thread_num(), left = (me + n - 1) % n;
    work[me] = 2 * me;
    /* seq_cst atomics rather than a.18.1's bare flushes: the same ordering, which ThreadSanitizer
       also sees (it does not model standalone fences). */
#pragma omp atomic write seq_cst
    flag[me] = 1;
    int seen = 0;
    while (!seen) {
#pragma omp atomic read seq_cst
      seen = flag[left];
    }
    result[me] = work[left] + work[me];
  }
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += result[i] != 2 * i + 2 * ((i + n - 1) % n);
  CHECK(bad == 0);
}

int main(void) {
  omp_set_dynamic(0);
  copies(2);
  copies(6);
  copies(6);
  neighbours(2);
  neighbours(6);
  return failures;
}
