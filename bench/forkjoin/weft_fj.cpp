// SPDX-License-Identifier: Apache-2.0
// weft_fj_weft: weft's side of the fork-join suite (forkjoin.hpp; protocol: peer_harness.hpp).
//
//   --bench=ult-B       a ULT per spawn (ult::create in the calling stream's main pool), joined
//   --bench=tg-B        weft::task_group (when the tree has weft/task_group.hpp)
//   --bench=tasklet-B   a detached tasklet per spawn; the results are counted, not joined
//
// for B one of fib, fib-cutoff, nqueens, uts-bin, uts-geo, qsort, msort (not for tasklets) and
// empty. weft runs with --streams streams (compact affinity) and its default scheduler, or the one
// WEFT_SCHED names.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <weft/weft.hpp>
#if __has_include(<weft/task_group.hpp>)
#include <weft/task_group.hpp>
#endif

#include "forkjoin.hpp"

namespace {

using weft_bench::peer_case;

/// The task-group interface from ult::create and join: run() creates a ULT, wait() joins them all.
/// The first handles live in the frame, constructed only as run() makes them, so a frame with few
/// children allocates nothing and pays nothing for the slots it does not use (a fork-join frame
/// spawns one or two: eight default-constructed handles per frame cost more than the spawn's
/// bookkeeping they sit beside).
class ult_group {
 public:
  ult_group() = default;
  ult_group(const ult_group&) = delete;
  ult_group& operator=(const ult_group&) = delete;
  ~ult_group() {
    for (std::size_t i = 0; i < count_; ++i) slot(i)->~ult();  // each joins if wait() did not
  }

  /// Spawns `f` as a ULT in the calling stream's main pool.
  template <class F>
  void run(F&& f) {
    weft::ult u = weft::ult::create(std::forward<F>(f));
    if (count_ < kFew) {
      ::new (static_cast<void*>(slot(count_))) weft::ult(std::move(u));
      ++count_;
    } else {
      many_.push_back(std::move(u));
    }
  }
  /// Joins every ULT run() created, newest first: a join takes back the newest unit of the
  /// stream's pool and runs it on the joiner's stack (see weft::task_group::wait).
  void wait() {
    for (auto u = many_.rbegin(); u != many_.rend(); ++u) u->join();
    many_.clear();
    for (std::size_t i = count_; i > 0; --i) {
      slot(i - 1)->join();
      slot(i - 1)->~ult();
    }
    count_ = 0;
  }

 private:
  static constexpr std::size_t kFew = 8;
  weft::ult* slot(std::size_t i) { return std::launder(reinterpret_cast<weft::ult*>(few_) + i); }

  alignas(weft::ult) unsigned char few_[kFew * sizeof(weft::ult)];
  std::size_t count_ = 0;
  std::vector<weft::ult> many_;
};

/// Tasklets cannot wait for their children, so the tasklet forms count instead of joining: every
/// spawn adds one to `pending_`; a tasklet adds what it computed to `total_` and takes one off
/// `pending_` when it ends, and the one that brings it to zero sets `done_`, which the primary
/// ULT waits for.
class tasklet_tree {
 public:
  /// Runs `f` (which returns its part of the total) in a detached tasklet.
  template <class F>
  void spawn(F f) {
    pending_.fetch_add(1, std::memory_order_relaxed);
    weft::tasklet::create_detached(weft::execution_stream::self()->main_pool(), [this, f] {
      const std::int64_t part = f();
      if (part != 0) total_.fetch_add(part, std::memory_order_relaxed);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.set();
    });
  }
  /// Runs `root` as the first tasklet, waits until every tasklet has ended and returns the total.
  template <class F>
  std::int64_t run(F root) {
    total_.store(0, std::memory_order_relaxed);
    done_.reset();
    spawn(root);
    done_.wait();
    return total_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<std::int64_t> pending_{0}, total_{0};
  weft::eventual<void> done_;
};

/// The benchmarks as detached tasklets, with the same spawns as the task-group forms; msort is
/// missing (a merge must wait for both halves).
struct tasklet_algorithms {
  static inline tasklet_tree tree;

  /// fib: the tasklet for n spawns n-1 and goes on with n-2, as fib<Group> does.
  static std::int64_t fib_part(int n, int cutoff) {
    for (; n >= cutoff && n >= 2; n -= 2) {
      tree.spawn([n, cutoff] { return fib_part(n - 1, cutoff); });
    }
    return weft_fj::fib_serial(n);
  }
  static std::int64_t fib(int n, int cutoff) {
    return tree.run([n, cutoff] { return fib_part(n, cutoff); });
  }

  static std::int64_t nqueens_part(int n, int row, weft_fj::board b) {
    if (row == n) return 1;
    for (std::uint32_t avail = b.free(n); avail != 0; avail &= avail - 1) {
      const weft_fj::board next = b.place(avail & -avail);
      tree.spawn([n, row, next] { return nqueens_part(n, row + 1, next); });
    }
    return 0;
  }
  static std::int64_t nqueens(int n) {
    return tree.run([n] { return nqueens_part(n, 0, {}); });
  }

  static std::int64_t uts_part(weft_fj::uts_shape shape, std::int64_t param, weft_fj::uts_node v) {
    const int k = weft_fj::uts_children(shape, param, v);
    for (int i = 0; i < k; ++i) {
      const weft_fj::uts_node child = weft_fj::uts_child(v, i);
      tree.spawn([shape, param, child] { return uts_part(shape, param, child); });
    }
    return 1;
  }
  static std::int64_t uts(weft_fj::uts_shape shape, std::int64_t param) {
    return tree.run([shape, param] { return uts_part(shape, param, weft_fj::uts_root()); });
  }

  /// qsort: partitions, spawns the lower part, goes on with the upper one; returns its spawns.
  static std::int64_t qsort_part(std::uint32_t* lo, std::uint32_t* hi) {
    std::int64_t spawns = 0;
    while (hi - lo > weft_fj::sort_cutoff) {
      std::uint32_t *less, *more;
      std::tie(less, more) = weft_fj::partition(lo, hi);
      tree.spawn([lo, less] { return qsort_part(lo, less); });
      ++spawns;
      lo = more;
    }
    std::sort(lo, hi);
    return spawns;
  }
  static std::int64_t qsort(std::uint32_t* p, std::int64_t n) {
    return tree.run([p, n] { return qsort_part(p, p + n); });
  }
};

int run(const peer_case& c) {
  weft::config cfg;
  cfg.num_streams = c.streams;
  cfg.affinity.how = weft::affinity_policy::kind::compact;
  weft::runtime rt(cfg);
  if (weft::execution_stream::count() != c.streams) {
    std::fprintf(stderr, "weft_fj_weft: %d streams, asked for %d\n",
                 weft::execution_stream::count(), c.streams);
    return 1;
  }
  // The bench without its prefix, so that results and skips name the benchmark alone.
  peer_case inner = c;
  if (c.bench.starts_with("ult-")) {
    inner.bench = c.bench.substr(4);
    weft_fj::run_bench<weft_fj::group_algorithms<ult_group>>("weft-ult", inner);
  } else if (c.bench.starts_with("tasklet-")) {
    inner.bench = c.bench.substr(8);
    weft_fj::run_bench<tasklet_algorithms>("weft-tasklet", inner);
  } else if (c.bench.starts_with("tg-")) {
    inner.bench = c.bench.substr(3);
#if __has_include(<weft/task_group.hpp>)
    weft_fj::run_bench<weft_fj::group_algorithms<weft::task_group>>("weft-task_group", inner);
#else
    weft_bench::skip_case("weft-task_group", inner, "this tree has no weft/task_group.hpp");
#endif
  } else {
    weft_bench::skip_case("weft", c, "unknown benchmark (ult-, tg- or tasklet- and a name)");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const peer_case c = weft_bench::parse_case(argc, argv);
  try {
    return run(c);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft_fj_weft: %s\n", e.what());
    return 1;
  }
}
