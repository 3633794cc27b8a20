// SPDX-License-Identifier: Apache-2.0
// The peers of the headline table that run in weft_headline's own process: Boost.Fiber, OpenMP
// tasks (when the compiler has OpenMP: WEFT_HEADLINE_OPENMP) and oneTBB's task_group (when TBB was
// found: WEFT_HEADLINE_TBB). The one-thread figures run on the calling thread only (one fiber
// scheduler, one OpenMP thread, an arena of one), which weft has bound to the primary stream's
// CPU, so that they are compared with weft's one-stream rows on the same core; the multi-thread
// ones (`threads` > 1) are run by the caller from a thread of the process's whole CPU mask, so
// that the peer's own threads are not confined to one CPU. Each workload returns the units it did.
#pragma once

#include <boost/fiber/all.hpp>

#include <cstdint>
#include <vector>

#ifdef WEFT_HEADLINE_OPENMP
#include <omp.h>
#endif
#ifdef WEFT_HEADLINE_TBB
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#endif

#include "unit_body.hpp"

namespace weft_bench {

/// Boost.Fiber workloads; fibers take pooled 16 KiB stacks (weft's default ULT stack size).
class fiber_peer {
 public:
  /// Creates `n` fibers, then joins them all.
  std::int64_t fan_out(std::int64_t n) {
    fibers_.clear();
    for (std::int64_t i = 0; i < n; ++i) {
      fibers_.emplace_back(std::allocator_arg, stacks_, &unit_body);
    }
    for (auto& f : fibers_) f.join();
    return n;
  }
  /// Two fibers yield `k` times each; returns the yields.
  std::int64_t yield_pair(std::int64_t k) {
    auto body = [k] {
      for (std::int64_t i = 0; i < k; ++i) boost::this_fiber::yield();
    };
    boost::fibers::fiber a(std::allocator_arg, stacks_, body);
    boost::fibers::fiber b(std::allocator_arg, stacks_, body);
    a.join();
    b.join();
    return 2 * k;
  }

 private:
  boost::fibers::pooled_fixedsize_stack stacks_{16 * 1024};
  std::vector<boost::fibers::fiber> fibers_;
};

#ifdef WEFT_HEADLINE_OPENMP
/// One OpenMP thread creates `n` tasks, then waits for them (taskwait). The region is entered per
/// call; with one thread that costs well under a microsecond, against milliseconds of tasks.
inline std::int64_t omp_fan_out(std::int64_t n) {
#pragma omp parallel num_threads(1)
#pragma omp single
  {
    for (std::int64_t i = 0; i < n; ++i) {
#pragma omp task
      unit_body();
    }
#pragma omp taskwait
  }
  return n;
}
#endif

#ifdef WEFT_HEADLINE_TBB
/// A task_group in an arena of one thread runs `n` tasks, then waits.
inline std::int64_t tbb_fan_out(tbb::task_arena& arena, std::int64_t n) {
  arena.execute([n] {
    tbb::task_group g;
    for (std::int64_t i = 0; i < n; ++i) g.run(&unit_body);
    g.wait();
  });
  return n;
}
#endif

#ifdef WEFT_HEADLINE_OPENMP
/// Level `left` of a task chain: a task creates the next level and waits for it (taskwait).
inline void omp_chain_level(std::int64_t left) {
  if (left == 0) return;
#pragma omp task firstprivate(left)
  omp_chain_level(left - 1);
#pragma omp taskwait
}

/// A chain of `n` tasks from one member of a team of `threads`; returns n.
inline std::int64_t omp_chain(std::int64_t n, int threads) {
#pragma omp parallel num_threads(threads)
#pragma omp single
  omp_chain_level(n);
  return n;
}

/// fib(n) with a task for one branch at every level, as OpenMP programs write it.
inline long omp_fib_task(int n) {
  if (n < 2) return n;
  long a = 0;
#pragma omp task shared(a) firstprivate(n)
  a = omp_fib_task(n - 1);
  const long b = omp_fib_task(n - 2);
#pragma omp taskwait
  return a + b;
}

/// omp_fib_task(n) from a team of `threads`; returns fib(n).
inline long omp_fib(int n, int threads = 1) {
  long v = 0;
#pragma omp parallel num_threads(threads)
#pragma omp single
  v = omp_fib_task(n);
  return v;
}
#endif

#ifdef WEFT_HEADLINE_TBB
/// fib(n) with a task_group run() for one branch at every level.
inline long tbb_fib_level(int n) {
  if (n < 2) return n;
  long a = 0;
  tbb::task_group g;
  g.run([&a, n] { a = tbb_fib_level(n - 1); });
  const long b = tbb_fib_level(n - 2);
  g.wait();
  return a + b;
}

/// Level `left` of a chain: runs the next level in a task_group of its own and waits for it.
inline void tbb_chain_level(std::int64_t left) {
  if (left == 0) return;
  tbb::task_group g;
  g.run([left] { tbb_chain_level(left - 1); });
  g.wait();
}

/// A chain of `n` tasks in `arena`; returns n.
inline std::int64_t tbb_chain(tbb::task_arena& arena, std::int64_t n) {
  arena.execute([n] { tbb_chain_level(n); });
  return n;
}

/// tbb_fib_level(n) in `arena`.
inline long tbb_fib(tbb::task_arena& arena, int n) {
  long v = 0;
  arena.execute([&] { v = tbb_fib_level(n); });
  return v;
}
#endif

}  // namespace weft_bench
