/* One address named more than once in a task's depend clauses (depend(out: x, x),
   depend(in: x) depend(out: x), depend(inout: x) depend(in: x)) orders the task after its
   predecessors only: it must not wait for itself. */
#include <omp.h>
#include <unistd.h>

#include "check.h"

int main(void) {
  alarm(30); /* a task waiting for itself hangs: fail instead */
  int x = 0, y = 0, log[8], pos = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task shared(x, log, pos) depend(out : x, x)
    {
      x = 1;
      log[pos++] = 1;
    }
#pragma omp task shared(x, log, pos) depend(in : x) depend(out : x)
    {
      x *= 10;
      log[pos++] = 2;
    }
#pragma omp task shared(x, y, log, pos) depend(inout : x) depend(in : x, y) depend(out : y, y)
    {
      y = x + 5;
      log[pos++] = 3;
    }
#pragma omp task shared(y, log, pos) depend(in : y, y)
    log[pos++] = y == 15 ? 4 : -4;
#pragma omp taskwait
  }
  CHECK(x == 10 && y == 15 && pos == 4);
  for (int i = 0; i < pos; ++i) CHECK(log[i] == i + 1);

  /* Undeferred (if(0)) and outside any region. */
  int z = 0;
#pragma omp task shared(z) depend(out : z, z) if (0)
  z = 7;
#pragma omp task shared(z) depend(in : z) depend(out : z)
  z += 1;
#pragma omp taskwait
  CHECK(z == 8);
  return failures;
}
