// SPDX-License-Identifier: Apache-2.0
// Per-stream timers: deadlines of ULTs in timed waits and sleeps.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "platform/assert.hpp"
#include "weft/wait_queue.hpp"

namespace weft::detail {

/// Values of a waiter's state word.
inline constexpr std::uint32_t wait_pending = 0;
inline constexpr std::uint32_t wait_notified = 1;
inline constexpr std::uint32_t wait_timed_out = 2;

/// A ULT's deadline. Shared by the waiting ULT and the heap of the stream it waited on, which may
/// differ from the stream it is resumed on: each drops its reference when done, the last frees it.
/// The state word lives here rather than in the waiter so that a timer whose waiter was notified
/// (and may be gone) can still read it.
///
/// Invariant: `w` may be dereferenced only by whoever moved `state` away from wait_pending, and
/// only until it wakes the waiter.
struct timer_node {
  std::chrono::steady_clock::time_point deadline;
  std::atomic<std::uint32_t> state{wait_pending};
  std::atomic<int> refs{2};
  waiter* w = nullptr;
  work_unit* unit = nullptr;  // the sleeping ULT (for sleeps, which have no waiter)
};

/// Drops one reference; frees the node with the last one.
inline void release(timer_node* n) noexcept {
  const int before = n->refs.fetch_sub(1, std::memory_order_acq_rel);
  assert_invariant([before] { return before > 0; }, "timers: a node is released once per holder");
  if (before == 1) delete n;
}

/// Drops the references to `n` left at teardown: the heap's and, when its waiter still waits (a
/// sleeper that finalize abandoned, which will never run again), the waiter's as well.
inline void release_at_teardown(timer_node* n) noexcept {
  const int refs = n->state.load(std::memory_order_acquire) == wait_pending ? 2 : 1;
  const int before = n->refs.fetch_sub(refs, std::memory_order_acq_rel);
  assert_invariant([before, refs] { return before >= refs; },
                   "timers: teardown drops only the references still held");
  if (before == refs) delete n;
}

/// Fires an expired timer: if the waiter is still waiting, takes it out of its queue and wakes
/// it with `timed_out`. Then drops the heap's reference. (wait.cpp)
void fire(timer_node* n) noexcept;

/// A min-heap of deadlines, touched only by its stream's thread.
class timer_heap {
 public:
  using clock = std::chrono::steady_clock;

  /// Destroyed at teardown only (a stream that stops earlier hands its timers on).
  ~timer_heap() {
    for (timer_node* n : heap_) release_at_teardown(n);
  }
  /// Adds `n` (the heap takes one reference). May throw std::bad_alloc, leaving `n` out.
  void add(timer_node* n) {
    assert_invariant([n] { return n != nullptr && n->refs.load(std::memory_order_relaxed) > 0; },
                     "timers: a live node enters the heap");
    assert_invariant([n] { return n->unit != nullptr; }, "timers: a node names the ULT it wakes");
    if (heap_.size() >= prune_at_) prune();
    heap_.push_back(n);
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  bool empty() const noexcept { return heap_.empty(); }
  /// True when some timer's waiter still waits (a ULT will become ready when it fires).
  bool has_pending() const noexcept {
    return std::any_of(heap_.begin(), heap_.end(), [](const timer_node* n) {
      return n->state.load(std::memory_order_acquire) == wait_pending;
    });
  }
  clock::time_point next() const noexcept {
    assert_invariant([this] { return !heap_.empty(); }, "timers: next() of a non-empty heap");
    return heap_.front()->deadline;
  }
  /// Fires every timer due at `now`; returns how many fired.
  unsigned fire_due(clock::time_point now) noexcept {
    unsigned n = 0;
    while (!heap_.empty() && heap_.front()->deadline <= now) {
      std::pop_heap(heap_.begin(), heap_.end(), later);
      timer_node* t = heap_.back();
      heap_.pop_back();
      assert_invariant([t] { return t->refs.load(std::memory_order_relaxed) > 0; },
                       "timers: a node in the heap is alive");
      assert_invariant(
          [this, t] { return heap_.empty() || heap_.front()->deadline >= t->deadline; },
          "timers: the heap fires its deadlines in order");
      fire(t);
      ++n;
    }
    return n;
  }
  /// Moves every timer into `to` (a stopping stream hands its timers over).
  void move_into(std::vector<timer_node*>& to) {
    to.insert(to.end(), heap_.begin(), heap_.end());
    heap_.clear();
  }

 private:
  /// Drops timers whose waiter was already notified (they would otherwise stay until their
  /// deadline: a loop of long timed waits that are notified early would grow the heap without
  /// bound). Amortised O(1) per add: the next prune waits until the heap has doubled.
  void prune() noexcept {
    std::erase_if(heap_, [](timer_node* n) {
      if (n->state.load(std::memory_order_acquire) == wait_pending) return false;
      release(n);
      return true;
    });
    std::make_heap(heap_.begin(), heap_.end(), later);
    prune_at_ = std::max<std::size_t>(64, 2 * heap_.size());
  }
  static bool later(const timer_node* a, const timer_node* b) noexcept {
    return a->deadline > b->deadline;
  }
  std::vector<timer_node*> heap_;
  std::size_t prune_at_ = 64;
};

}  // namespace weft::detail
