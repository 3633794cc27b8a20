/* The affinity format (run with OMP_AFFINITY_FORMAT=hello and OMP_PROC_BIND=spread,master,close):
   the environment's format, omp_get/set_affinity_format truncation, omp_capture_affinity's
   fields (level, thread number, team size, ancestor, host, pid, team number) with left, right
   and zero-padded widths, and bind-var per nesting level from the OMP_PROC_BIND list and the
   proc_bind clause. */
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

int main(void) {
  char buf[256];
  CHECK(omp_get_affinity_format(NULL, 0) == 5);
  CHECK(omp_get_affinity_format(buf, 3) == 5 && strcmp(buf, "he") == 0);
  omp_set_affinity_format("%L|%n|%N|%a|%t|%T");
  CHECK(omp_get_affinity_format(buf, sizeof buf) == 17 && strcmp(buf, "%L|%n|%N|%a|%t|%T") == 0);

  CHECK(omp_capture_affinity(buf, sizeof buf, NULL) == 12 && strcmp(buf, "0|0|1|-1|0|1") == 0);
  CHECK(omp_capture_affinity(buf, sizeof buf, "%0.4{nesting_level}|%.3n|%3N|%%") == 14 &&
        strcmp(buf, "0000|  0|1  |%") == 0);
  char host[200], want[260];
  CHECK(gethostname(host, sizeof host) == 0);
  snprintf(want, sizeof want, "%s:%d", host, (int)getpid());
  CHECK(omp_capture_affinity(buf, sizeof buf, "%H:%P") == strlen(want) && strcmp(buf, want) == 0);
  /* Truncated: the full length is returned. */
  CHECK(omp_capture_affinity(buf, 3, "%H:%P") == strlen(want) && strlen(buf) == 2);

  int bad = 0;
  omp_set_nested(1);
#pragma omp parallel num_threads(2) reduction(+ : bad)
  {
    char line[64], expect[64];
    omp_capture_affinity(line, sizeof line, NULL);
    snprintf(expect, sizeof expect, "1|%d|2|0|0|1", omp_get_thread_num());
    bad += strcmp(line, expect) != 0;
    bad += omp_get_proc_bind() != omp_proc_bind_master;
#pragma omp parallel num_threads(1) reduction(+ : bad)
    bad += omp_get_proc_bind() != omp_proc_bind_close;
  }
  CHECK(bad == 0);
  CHECK(omp_get_proc_bind() == omp_proc_bind_spread);
  return failures;
}
