// Cancellation and C++ copies (run with OMP_CANCELLATION=true): a task whose firstprivate
// objects were copy-constructed runs even once its taskgroup is cancelled, since only its body
// destroys them (as in libgomp); a task created after the cancellation is discarded before any
// copy is made. Every object constructed is destroyed.
#include <omp.h>

#include <atomic>

#include "check.h"

namespace {

std::atomic<int> live{0};

struct counted {
  int v = 0;
  counted() { ++live; }
  counted(const counted& o) : v(o.v) { ++live; }
  ~counted() { --live; }
};

}  // namespace

int main() {
  CHECK(omp_get_cancellation());
  {
    counted a;
#pragma omp parallel num_threads(2) firstprivate(a)
#pragma omp single
#pragma omp taskgroup
    for (int i = 0; i < 200; ++i) {
#pragma omp task firstprivate(a)
      {
        a.v++;
#pragma omp cancel taskgroup if (i > 5)
      }
    }
  }
  CHECK(live.load() == 0);
  return failures;
}
