// SPDX-License-Identifier: Apache-2.0
// A user-written scheduler: round robin over its pools with a time slice and a pop budget,
// written against the extension API (weft/ext/ext.hpp). It is an example (compiled
// and used by tests/sched_stacking_test) of a policy in docs/schedulers.md: one hook,
// pick_next(), which the runtime's loop and every yielding, blocking or ending ULT ask; it works
// as a main scheduler and stacked alike.
#pragma once

#include <weft/ext/ext.hpp>

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
/// then it moves to the next pool with a fresh slice. The runtime's loop does the rest (event
/// checks, idling, stacking budget).
class round_robin_scheduler final : public weft::scheduler {
 public:
  explicit round_robin_scheduler(std::vector<std::shared_ptr<weft::pool>> pools,
                                 rr_slice slice = {},
                                 const weft::idle_policy& idle = {.spin = {}, .park = true})
      : scheduler(std::move(pools)), slice_(slice) {
    set_idle_policy(idle);
  }

  weft::work_unit* pick_next() noexcept override {
    // pools() may grow between two calls (adopted pools): index it afresh, keep no iterators.
    const auto& ps = pools();
    if (cur_ >= ps.size()) next_pool(ps.size());
    const bool timed = slice_.time.count() > 0;
    for (std::size_t tried = 0; tried <= ps.size(); ++tried) {
      const bool spent = (slice_.pops != 0 && used_ >= slice_.pops) ||
                         (timed && std::chrono::steady_clock::now() - start_ >= slice_.time);
      if (spent) {
        next_pool(ps.size());
        switches_.fetch_add(1, std::memory_order_relaxed);
      }
      if (weft::work_unit* u = ps[cur_]->pop()) {
        ++used_;
        return u;
      }
      next_pool(ps.size());  // empty: on to the next pool, with a fresh slice
    }
    return nullptr;
  }

  /// Times a spent slice (not an empty pool) made it move on.
  std::size_t slice_switches() const noexcept { return switches_.load(std::memory_order_relaxed); }

 private:
  void next_pool(std::size_t n) noexcept {
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
