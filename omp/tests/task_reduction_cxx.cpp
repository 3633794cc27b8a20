// C++ task reductions: a class type with a constructor and destructor combined by a
// declare reduction, in a taskgroup task_reduction and a taskloop reduction.
#include <omp.h>

#include <atomic>
#include <string>

#include "check.h"

static std::atomic<long> live{0};

// A histogram of small values, with a member that owns memory (so copies must be constructed,
// initialised by the initializer and destroyed by the runtime's caller).
struct histogram {
  long bins[4] = {0, 0, 0, 0};
  std::string tag = "histogram";
  histogram() { ++live; }
  histogram(const histogram& o) : tag(o.tag) {
    for (int i = 0; i < 4; ++i) bins[i] = o.bins[i];
    ++live;
  }
  histogram& operator=(const histogram&) = default;
  ~histogram() { --live; }
  void add(const histogram& o) {
    for (int i = 0; i < 4; ++i) bins[i] += o.bins[i];
  }
};

#pragma omp declare reduction(merge:histogram \
                              : omp_out.add(omp_in)) initializer(omp_priv = histogram())

static void run(int nt) {
  histogram h;
#pragma omp parallel num_threads(nt)
#pragma omp single
  {
#pragma omp taskgroup task_reduction(merge : h)
    {
      for (int i = 0; i < 400; ++i) {
#pragma omp task in_reduction(merge : h) firstprivate(i)
        h.bins[i % 4] += i;
      }
    }
  }
  CHECK(h.bins[0] == 19800 && h.bins[1] == 19900 && h.bins[2] == 20000 && h.bins[3] == 20100);
  CHECK(h.tag == "histogram");

  histogram g;
#pragma omp parallel num_threads(nt)
#pragma omp single
#pragma omp taskloop reduction(merge : g) num_tasks(9)
  for (int i = 0; i < 100; ++i) g.bins[i % 2] += 1;
  CHECK(g.bins[0] == 50 && g.bins[1] == 50 && g.bins[2] == 0);
}

int main() {
  for (int nt : {1, 2, 4}) run(nt);
  CHECK(live == 0);
  return failures;
}
