// SPDX-License-Identifier: Apache-2.0
// A user-written pool: a bounded ring buffer with an overflow list, written against the extension
// API (weft/ext/ext.hpp), as the stock pools are. It is an example (compiled and used by
// tests/sched_stacking_test) of what docs/schedulers.md explains: the hook, the NVI push, size()
// and the access mode.
#pragma once

#include <weft/ext/ext.hpp>

#include <atomic>
#include <cstddef>
#include <memory>

namespace weft_examples {

/// A FIFO pool whose units live in a fixed array of `capacity` slots: no pointer chasing while the
/// ring has room. A pool's push cannot fail, so a push that finds the ring full appends the unit
/// to an overflow list threaded through the hook; every pop moves the oldest overflowed unit into
/// the slot it freed, so ring + overflow stay one FIFO queue. One spinlock makes it correct for
/// every access mode. remove() is not supported (the base class answers false).
class bounded_ring_pool final : public weft::pool {
 public:
  explicit bounded_ring_pool(std::size_t capacity, weft::access_mode mode = weft::access_mode::mpmc)
      : pool(mode), cap_(capacity ? capacity : 1), slots_(new weft::work_unit*[cap_]) {}

  weft::work_unit* pop() noexcept override {
    if (size_.load(std::memory_order_relaxed) == 0) return nullptr;  // no lock when empty
    weft::ext::lock_guard g(lock_);
    if (count_ == 0) return nullptr;
    weft::work_unit* u = slots_[head_];
    head_ = (head_ + 1) % cap_;
    --count_;
    if (overflow_head_) {  // refill: the oldest overflowed unit joins the ring's tail
      weft::work_unit* o = overflow_head_;
      overflow_head_ = o->pool_next;
      if (!overflow_head_) overflow_tail_ = nullptr;
      slots_[(head_ + count_) % cap_] = o;
      ++count_;
    }
    size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return u;
  }

  std::size_t size() const noexcept override { return size_.load(std::memory_order_relaxed); }

  std::size_t capacity() const noexcept { return cap_; }
  /// Pushes that found the ring full.
  std::size_t overflowed() const noexcept { return overflowed_.load(std::memory_order_relaxed); }

 protected:
  // push() (the base class) calls this, then wakes a stream parked on the pool: nothing to do
  // here but queue the unit, and count it in size() before returning.
  void do_push(weft::work_unit* u) noexcept override {
    weft::ext::lock_guard g(lock_);
    if (count_ < cap_ && !overflow_head_) {
      slots_[(head_ + count_) % cap_] = u;
      ++count_;
    } else {
      u->pool_next = nullptr;  // the hook holds garbage on entry: set what we rely on
      (overflow_tail_ ? overflow_tail_->pool_next : overflow_head_) = u;
      overflow_tail_ = u;
      overflowed_.fetch_add(1, std::memory_order_relaxed);
    }
    size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

 private:
  const std::size_t cap_;
  std::unique_ptr<weft::work_unit*[]> slots_;  // under lock_
  std::size_t head_ = 0, count_ = 0;           // under lock_
  weft::work_unit* overflow_head_ = nullptr;   // under lock_
  weft::work_unit* overflow_tail_ = nullptr;
  weft::spinlock lock_;               // never sleeps, as a pool must not block
  std::atomic<std::size_t> size_{0};  // written under lock_, read anywhere
  std::atomic<std::size_t> overflowed_{0};
};

}  // namespace weft_examples
