/* threadprivate with copyin: every member starts with the primary thread's value. (GCC keeps
   threadprivate variables in the kernel thread's TLS: on weft a member shares it with the other
   units of its stream; docs/omp.md says what that allows.) */
#include <omp.h>

#include "check.h"

static int tp = 0;
#pragma omp threadprivate(tp)

int main(void) {
  tp = 17;
  int ok = 1;
#pragma omp parallel copyin(tp) num_threads(2)
  {
    if (tp != 17) ok = 0;
  }
  CHECK(ok);
  CHECK(tp == 17);
  return failures;
}
