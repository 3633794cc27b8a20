/* Dependences among many sibling tasks, where most dependants start before their predecessors
   have completed (a task then waits for them): a chain of inout tasks on one variable, each
   checking it runs in creation order; runs of in tasks between out tasks, each checking the
   value the last out wrote; a blocked 2-D wavefront with depend(in) on the upper and left
   blocks and depend(out) on its own, checked against the sequential recurrence; and a chain
   whose tasks each create a nested chain of their own. */
#include <omp.h>
#include <stdlib.h>

#include "check.h"

enum { chain_tasks = 20000, rounds = 200, readers = 8, nb = 24, bs = 4, n = nb * bs };

static unsigned grid[n][n], expect[n][n];

static unsigned step(unsigned up, unsigned left) {
  return up * 3u + (left ^ (left >> 5)) + 1u;
}

static void reset(unsigned (*g)[n]) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) g[i][j] = (i == 0 || j == 0) ? (unsigned)(i * 7 + j * 13) : 0u;
}

static void block(int bi, int bj) {
  for (int i = bi * bs; i < (bi + 1) * bs; ++i)
    for (int j = bj * bs; j < (bj + 1) * bs; ++j)
      if (i > 0 && j > 0) grid[i][j] = step(grid[i - 1][j], grid[i][j - 1]);
}

static int nested_chain(int base) {
  int y = base;
  for (int k = 0; k < 50; ++k) {
#pragma omp task depend(inout : y) shared(y) firstprivate(k, base)
    {
      if (y != base + k) y = -1000000;
      if (y >= 0) ++y;
    }
  }
#pragma omp taskwait
  return y;
}

int main(void) {
  long x = 0, wrong = 0;
#pragma omp parallel
#pragma omp single
  {
    for (long i = 0; i < chain_tasks; ++i) {
#pragma omp task depend(inout : x) shared(x, wrong) firstprivate(i)
      {
        if (x != i) {
#pragma omp atomic
          ++wrong;
        }
        ++x;
      }
    }
  }
  CHECK(x == chain_tasks);
  CHECK(wrong == 0);

  long v = 0, bad_reads = 0;
#pragma omp parallel
#pragma omp single
  for (long r = 1; r <= rounds; ++r) {
#pragma omp task depend(out : v) shared(v) firstprivate(r)
    v = r;
    for (int k = 0; k < readers; ++k) {
#pragma omp task depend(in : v) shared(v, bad_reads) firstprivate(r)
      if (v != r) {
#pragma omp atomic
        ++bad_reads;
      }
    }
  }
  CHECK(v == rounds);
  CHECK(bad_reads == 0);

  reset(expect);
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < n; ++j) expect[i][j] = step(expect[i - 1][j], expect[i][j - 1]);
  reset(grid);
#pragma omp parallel
#pragma omp single
  for (int bi = 0; bi < nb; ++bi)
    for (int bj = 0; bj < nb; ++bj) {
      const int i0 = bi * bs, j0 = bj * bs;
      const int up = bi > 0 ? i0 - bs : i0, left = bj > 0 ? j0 - bs : j0;
#pragma omp task depend(in : grid[up][j0], grid[i0][left]) depend(out : grid[i0][j0])
      block(bi, bj);
    }
  int same = 1;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) same &= grid[i][j] == expect[i][j];
  CHECK(same);

  int outer = 0, nested_wrong = 0;
#pragma omp parallel
#pragma omp single
  for (int k = 0; k < 40; ++k) {
#pragma omp task depend(inout : outer) shared(outer, nested_wrong) firstprivate(k)
    {
      if (outer != k || nested_chain(k * 100) != k * 100 + 50) ++nested_wrong;
      ++outer;
    }
  }
  CHECK(outer == 40);
  CHECK(nested_wrong == 0);
  return failures;
}
