/* Task reductions (OpenMP 5.0): taskgroup task_reduction with task in_reduction, nested
   taskgroups, several variables and operators, array sections, reduction(task, ...) on
   parallel, for and sections, taskloop reduction and in_reduction, orphaned constructs, and
   teams of 1, 2 and 4 threads. Every result is exact. */
#include <omp.h>
#include <unistd.h>

#include "check.h"

enum { ntasks = 1000 };

static const long sum_to_n = (long)ntasks * (ntasks - 1) / 2; /* 0 + 1 + ... + 999 */

/* Called from inside a region or outside any: the taskgroup binds to whatever team runs it. */
static long orphaned_sum(int n) {
  long x = 0;
#pragma omp taskgroup task_reduction(+ : x)
  {
    for (int i = 0; i < n; ++i) {
#pragma omp task in_reduction(+ : x) firstprivate(i)
      x += i;
    }
  }
  return x;
}

static long orphaned_taskloop(int n) {
  long x = 0;
#pragma omp taskloop reduction(+ : x) num_tasks(7)
  for (int i = 0; i < n; ++i) x += i;
  return x;
}

static void basic(int nt) {
  long x = 0;
  int dep = 0;
#pragma omp parallel num_threads(nt)
#pragma omp single
  {
#pragma omp taskgroup task_reduction(+ : x)
    {
      for (int i = 0; i < ntasks; ++i) {
#pragma omp task in_reduction(+ : x) firstprivate(i)
        x += i;
      }
      /* An undeferred task waiting for a deferred one that needs a member's place to run. */
#pragma omp task in_reduction(+ : x) depend(out : dep)
      x += 1;
#pragma omp task in_reduction(+ : x) depend(in : dep) if (0)
      x += 2;
    }
    CHECK(x == sum_to_n + 3);
  }
  CHECK(x == sum_to_n + 3);
}

/* Tasks creating tasks, an inner taskgroup with its own reduction, and undeferred tasks. */
static void nested(int nt) {
  long x = 0, y = 0;
#pragma omp parallel num_threads(nt)
#pragma omp single
  {
#pragma omp taskgroup task_reduction(+ : x)
    {
      for (int i = 0; i < 50; ++i) {
#pragma omp task in_reduction(+ : x) firstprivate(i)
        {
          x += 1;
          for (int j = 0; j < 4; ++j) {
#pragma omp task in_reduction(+ : x) firstprivate(j)
            x += j;
          }
#pragma omp taskwait
          x += 100;
        }
      }
#pragma omp taskgroup task_reduction(+ : y)
      {
        for (int i = 0; i < 100; ++i) {
#pragma omp task in_reduction(+ : x, y) firstprivate(i)
          {
            x += 2;
            y += i;
          }
        }
#pragma omp task in_reduction(+ : y) if (0)
        y += 1000;
      }
      CHECK(y == 4950 + 1000);
    }
  }
  CHECK(x == 50 * (1 + 6 + 100) + 100 * 2);
  CHECK(y == 4950 + 1000);
}

static void operators(int nt) {
  long long prod = 1;
  int mx = -1, mn = 1 << 30;
  unsigned and_bits = ~0u, or_bits = 0;
  double d = 0.5;
#pragma omp parallel num_threads(nt)
#pragma omp single
  {
#pragma omp taskgroup task_reduction(* : prod) task_reduction(max : mx) task_reduction(min : mn) \
    task_reduction(& : and_bits) task_reduction(| : or_bits) task_reduction(+ : d)
    {
      for (int i = 0; i < 40; ++i) {
#pragma omp task in_reduction(* : prod) in_reduction(max : mx) in_reduction(min : mn) \
    in_reduction(& : and_bits) in_reduction(| : or_bits) in_reduction(+ : d) firstprivate(i)
        {
          prod *= 2;
          if (i * 7 % 40 > mx) mx = i * 7 % 40;
          if (i + 3 < mn) mn = i + 3;
          and_bits &= ~(1u << (i % 16));
          or_bits |= 1u << i % 32;
          d += 0.25; /* sums of quarters are exact */
        }
      }
    }
  }
  CHECK(prod == 1ll << 40);
  CHECK(mx == 39);
  CHECK(mn == 3);
  CHECK(and_bits == 0xffff0000u);
  CHECK(or_bits == 0xffffffffu);
  CHECK(d == 10.5);
}

static void array_section(int nt) {
  long a[8] = {0};
#pragma omp parallel num_threads(nt)
#pragma omp single
  {
#pragma omp taskgroup task_reduction(+ : a [2:4])
    {
      for (int i = 0; i < 200; ++i) {
#pragma omp task in_reduction(+ : a [2:4]) firstprivate(i)
        {
          a[2] += 1;
          a[3] += i;
          a[5] += 2;
        }
      }
    }
  }
  CHECK(a[0] == 0 && a[1] == 0 && a[6] == 0 && a[7] == 0);
  CHECK(a[2] == 200 && a[3] == 19900 && a[4] == 0 && a[5] == 400);
}

/* reduction(task, ...) on parallel: the members' own updates and their tasks' are combined. */
static void parallel_task(int nt) {
  long x = 0;
  int members = 0;
#pragma omp parallel num_threads(nt) reduction(task, + : x) reduction(+ : members)
  {
    members += 1;
    x += 1000;
    for (int i = 0; i < 100; ++i) {
#pragma omp task in_reduction(+ : x) firstprivate(i)
      x += i;
    }
  }
  CHECK(x == members * (1000 + 4950));
  CHECK(members == nt);
}

static void for_task(int nt) {
  long y = 0;
#pragma omp parallel num_threads(nt)
  {
#pragma omp for reduction(task, + : y) schedule(dynamic, 3)
    for (int i = 0; i < ntasks; ++i) {
#pragma omp task in_reduction(+ : y) firstprivate(i)
      y += i;
      y += 1;
    }
    CHECK(y == sum_to_n + ntasks);
  }
  CHECK(y == sum_to_n + ntasks);
}

static void sections_task(int nt) {
  long z = 0;
#pragma omp parallel num_threads(nt)
#pragma omp sections reduction(task, + : z)
  {
#pragma omp section
    {
      for (int i = 0; i < 10; ++i) {
#pragma omp task in_reduction(+ : z) firstprivate(i)
        z += i;
      }
    }
#pragma omp section
    z += 100;
#pragma omp section
    {
#pragma omp task in_reduction(+ : z)
      z += 1000;
    }
  }
  CHECK(z == 45 + 100 + 1000);
}

/* scope (OpenMP 5.1) with reduction(task, ...), twice in a row: the second reuses nothing of
   the first. */
static void scope_task(int nt) {
  long z = 0;
#pragma omp parallel num_threads(nt)
  {
    for (int round = 0; round < 2; ++round) {
#pragma omp scope reduction(task, + : z)
      {
        z += 1;
        for (int i = 0; i < 20; ++i) {
#pragma omp task in_reduction(+ : z) firstprivate(i)
          z += i;
        }
      }
    }
  }
  CHECK(z == 2 * nt * (1 + 190));
}

/* Combined constructs: GCC passes the reductions to GOMP_parallel_reductions and the members
   register them again on the worksharing construct. */
static void combined(int nt) {
  long x = 0, y = 0, z = 0, w = 0;
#pragma omp parallel for reduction(task, + : x) num_threads(nt) schedule(static, 7)
  for (int i = 0; i < 100; ++i) {
#pragma omp task in_reduction(+ : x) firstprivate(i)
    x += i;
  }
#pragma omp parallel sections reduction(task, + : y) num_threads(nt)
  {
#pragma omp section
    {
#pragma omp task in_reduction(+ : y)
      y += 5;
    }
#pragma omp section
    y += 7;
  }
#pragma omp parallel master taskloop reduction(+ : z) num_threads(nt)
  for (int i = 0; i < 100; ++i) z += i;
#pragma omp parallel num_threads(nt)
#pragma omp single
#pragma omp taskloop simd reduction(+ : w)
  for (int i = 0; i < 100; ++i) w += i;
  CHECK(x == 4950 && y == 12 && z == 4950 && w == 4950);
}

static void taskloops(int nt) {
  long x = 0, y = 0, empty = 0;
#pragma omp parallel num_threads(nt)
#pragma omp single
  {
#pragma omp taskloop reduction(+ : x) grainsize(10)
    for (int i = 0; i < ntasks; ++i) x += i;
    CHECK(x == sum_to_n);
#pragma omp taskgroup task_reduction(+ : y)
    {
#pragma omp taskloop in_reduction(+ : y) num_tasks(13)
      for (int i = 0; i < ntasks; ++i) y += i;
#pragma omp task in_reduction(+ : y)
      y += 5;
    }
    CHECK(y == sum_to_n + 5);
    int lo = 5, hi = 5;
#pragma omp taskloop reduction(+ : empty)
    for (int i = lo; i < hi; ++i) empty += 1;
    CHECK(empty == 0);
  }
  CHECK(x == sum_to_n && y == sum_to_n + 5 && empty == 0);
}

static void orphaned(int nt) {
  long a = 0, b = 0;
  int bad = 0;
#pragma omp parallel num_threads(nt) reduction(+ : bad)
  {
    /* Every member runs its own taskgroup on its own variable. */
    if (orphaned_sum(300) != 44850) bad += 1;
#pragma omp single
    {
      a = orphaned_sum(ntasks);
      b = orphaned_taskloop(ntasks);
    }
  }
  CHECK(bad == 0);
  CHECK(a == sum_to_n && b == sum_to_n);
}

/* A reduction opened inside a task while the members already wait (taskwait, barrier): the
   task's children must still find a member's place to run in. */
static void late_scope(int nt) {
  long total = 0;
#pragma omp parallel num_threads(nt) reduction(+ : total)
  {
    long mine = 0;
#pragma omp task shared(mine)
    {
      long x = 0;
#pragma omp taskgroup task_reduction(+ : x)
      {
        for (int i = 0; i < 30; ++i) {
#pragma omp task in_reduction(+ : x) firstprivate(i)
          {
            x += i;
#pragma omp task in_reduction(+ : x) if (0)
            x += 1;
          }
        }
      }
      mine = x;
    }
#pragma omp taskwait
    total += mine;
  }
  CHECK(total == nt * (435 + 30));
}

/* Long read-modify-write sequences on the private copies, with task scheduling points in
   between: two tasks updating one copy at the same time would lose updates. */
static void contention(int nt) {
  long x = 0;
#pragma omp parallel num_threads(nt)
  {
#pragma omp single nowait
    {
#pragma omp taskgroup task_reduction(+ : x)
      {
        for (int i = 0; i < 64; ++i) {
#pragma omp task in_reduction(+ : x)
          {
            for (int k = 0; k < 2000; ++k) {
              long v = x;
              if (k % 100 == 0) {
#pragma omp taskyield
              }
              x = v + 1;
            }
          }
        }
      }
    }
  }
  CHECK(x == 64 * 2000);
}

int main(void) {
  alarm(50); /* a lost wake-up hangs: fail instead */
  static const int widths[] = {1, 2, 4};
  for (int k = 0; k < 3; ++k) {
    const int nt = widths[k];
    for (int rep = 0; rep < 3; ++rep) {
      basic(nt);
      nested(nt);
      operators(nt);
      array_section(nt);
      parallel_task(nt);
      for_task(nt);
      sections_task(nt);
      scope_task(nt);
      combined(nt);
      taskloops(nt);
      orphaned(nt);
      contention(nt);
      late_scope(nt);
    }
  }
  /* Outside any region: a team of one. */
  CHECK(orphaned_sum(ntasks) == sum_to_n);
  CHECK(orphaned_taskloop(ntasks) == sum_to_n);
  return failures;
}
