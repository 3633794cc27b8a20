// C++: tasks capturing objects with copy constructors (GCC passes a copy function to GOMP_task),
// a user-defined reduction over std::vector, and exceptions caught inside a region.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.h"

static std::atomic<int> copies{0};

struct counted {
  std::string text = "payload";
  counted() = default;
  counted(const counted& o) : text(o.text) { ++copies; }
};

#pragma omp declare reduction(vec_add : std::vector<long> : \
    std::transform(omp_out.begin(), omp_out.end(), omp_in.begin(), omp_out.begin(), std::plus<long>())) \
    initializer(omp_priv = std::vector<long>(omp_orig.size(), 0))

int main() {
  counted c;
  std::atomic<int> ok{0};
#pragma omp parallel num_threads(3)
#pragma omp single
  for (int i = 0; i < 20; ++i) {
#pragma omp task firstprivate(c)
    {
      if (c.text == "payload") ++ok;
    }
  }
  CHECK(ok == 20);
  CHECK(copies >= 20);

  std::vector<long> sums(8, 0);
#pragma omp parallel for reduction(vec_add : sums) num_threads(3)
  for (int i = 0; i < 800; ++i) sums[i % 8] += i;
  long total = std::accumulate(sums.begin(), sums.end(), 0L);
  CHECK(total == 799L * 800 / 2);

  int caught = 0;
#pragma omp parallel num_threads(2) reduction(+ : caught)
  {
    try {
      throw std::runtime_error("inside a region");
    } catch (const std::exception&) {
      caught = 1;
    }
  }
  CHECK(caught == 2);
  return failures;
}
