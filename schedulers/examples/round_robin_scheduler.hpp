// SPDX-License-Identifier: Apache-2.0
// A user-written scheduler: round robin over its pools with a time slice and a pop budget,
// written against the public interface only (weft/scheduler.hpp). It is an example (compiled
// and used by tests/sched_stacking_test) of the run() contract in docs/schedulers.md, and it
// works as a main scheduler and stacked alike.
#pragma once

#include <weft/scheduler.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

namespace weft_examples {

/// How long the scheduler stays on one pool before it moves to the next.
struct rr_slice {
  /// At most this many units in a row from one pool (0: no limit).
  unsigned pops = 8;
  /// At most this long on one pool, checked after each unit (zero: no limit). A unit is never
  /// interrupted: ULTs are cooperative, the slice only decides where the next pop comes from.
  std::chrono::nanoseconds time{0};
};

/// Serves pools()[0], pools()[1], ... in turn: it stays on a pool until it has run `slice.pops`
/// units from it, or `slice.time` has passed since it came to that pool, or the pool is empty;
/// then it moves to the next pool with a fresh slice. Contract duties: check_events() every
/// event_freq() units and on every empty round, return when it says so, wait_for_work() when a
/// whole round found nothing (which also hands control back to the parent when stacked).
class round_robin_scheduler final : public weft::scheduler {
 public:
  explicit round_robin_scheduler(std::vector<std::shared_ptr<weft::pool>> pools,
                                 rr_slice slice = {},
                                 const weft::idle_policy& idle = {.spin = {}, .park = true})
      : scheduler(std::move(pools)), slice_(slice) {
    set_idle_policy(idle);
  }

  void run() override {
    using clock = std::chrono::steady_clock;
    const bool timed = slice_.time.count() > 0;
    const unsigned freq = event_freq();
    unsigned pops = 0;
    unsigned idle = 0;
    for (;;) {
      // pools() may grow in check_events(): index it afresh, never keep iterators.
      const auto& ps = pools();
      if (cur_ >= ps.size()) next_pool(ps.size());
      weft::work_unit* u = nullptr;
      for (std::size_t tried = 0; tried <= ps.size() && !u; ++tried) {
        const bool spent = (slice_.pops != 0 && used_ >= slice_.pops) ||
                           (timed && clock::now() - start_ >= slice_.time);
        if (spent) {
          next_pool(ps.size());
          switches_.fetch_add(1, std::memory_order_relaxed);
        }
        if ((u = ps[cur_]->pop())) break;
        next_pool(ps.size());  // empty: on to the next pool, with a fresh slice
      }
      if (u) {
        ++used_;
        run_unit(u);
        idle = 0;
        // Stacked: hand control back to the parent as soon as the budget is spent.
        if (stacked() && has_to_stop()) return;
        if (++pops < freq) continue;
        pops = 0;
        if (check_events()) return;
        continue;
      }
      pops = 0;
      if (check_events()) return;
      if (wait_for_work(idle)) return;
    }
  }

  /// Times a spent slice (not an empty pool) made it move on.
  std::size_t slice_switches() const noexcept { return switches_.load(std::memory_order_relaxed); }

 private:
  void next_pool(std::size_t n) {
    cur_ = (cur_ + 1) % n;
    used_ = 0;
    if (slice_.time.count() > 0) start_ = std::chrono::steady_clock::now();
  }

  rr_slice slice_;
  std::size_t cur_ = 0;
  unsigned used_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::atomic<std::size_t> switches_{0};
};

}  // namespace weft_examples
