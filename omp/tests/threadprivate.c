/* threadprivate and members that wait for each other outside OpenMP constructs. GCC keeps
   threadprivate variables in the kernel thread's TLS, and a top-level team gets a stream per
   member (more than the CPUs if it is wider), so: copyin gives every member the primary
   thread's value, each member keeps its own copy, and the copies persist from one region to
   the next of the same width; a member may spin on a flag a team-mate sets (OpenMP examples,
   a.18.1), which members sharing a stream would never see. Teams of 2 and of 6 (wider than
   this machine's CPUs). */
#include <omp.h>

#include "check.h"
#include "neighbours.h"

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

int main(void) {
  omp_set_dynamic(0);
  copies(2);
  copies(6);
  copies(6);
  neighbours(2);
  neighbours(6);
  return failures;
}
