// SPDX-License-Identifier: Apache-2.0
// Wait queues, timed waits and sleeps.
//
// A waiter's state word goes wait_pending -> wait_notified (take(), under the primitive's lock)
// or wait_pending -> wait_timed_out (the timer, or an external thread's own timeout), exactly
// once, by compare-and-swap: whoever wins wakes the waiter; the loser leaves it alone.
#include <string>
#include <thread>

#include "core/stream.hpp"
#include "core/unit.hpp"
#include "elasticity/events.hpp"
#include "observe/observe.hpp"
#include "platform/assert.hpp"
#include "platform/futex.hpp"
#include "sync/timer.hpp"
#include "weft/error.hpp"
#include "weft/this_unit.hpp"
#include "weft/unit_handle.hpp"
#include "weft/wait_queue.hpp"

namespace weft {

namespace detail {

struct wait_access {
  static void unlink_if_linked(waiter& w) noexcept {
    if (w.linked_) w.queue_->unlink(w);
  }
  static spinlock* lock_of(waiter& w) noexcept { return w.lock_; }
};

namespace {

/// The calling ULT and its stream; throws for tasklets and inside event callbacks (which run in
/// a stream's scheduler context: sleeping there stalls the stream, and with it, often, the unit
/// that would wake the callback). nullptr stream: an external thread.
std::pair<stream*, work_unit*> caller(const char* what) {
  if (in_event_callback()) {
    throw error(errc::invalid_state, std::string("weft: ") + what +
                                         " would block inside an event callback (event "
                                         "callbacks must not block)");
  }
  stream* s = current_stream();
  work_unit* u = s ? s->current() : nullptr;
  if (u && as_unit(u)->kind == unit_kind::tasklet) {
    throw error(errc::tasklet_cannot_block,
                std::string("weft: ") + what + " would block a tasklet (tasklets never block)");
  }
  return {u ? s : nullptr, u};
}

// The analysis cannot see that this runs for the lock wait() handed over before the switch.
void unlock_after_switch(work_unit*, void* lock) WEFT_NO_THREAD_SAFETY_ANALYSIS {
  static_cast<spinlock*>(lock)->unlock();
}

/// Switches the calling ULT out as blocked; `lock` (if any) is released once it is switched out,
/// so whoever wakes it under that lock finds it resumable. `kind`: what it waits for (dumps).
void block(stream* s, work_unit* self, spinlock* lock, wait_kind kind) {
  assert_invariant(
      [s, self] {
        return s->current() == self &&
               as_unit(self)->state.load(std::memory_order_relaxed) == unit_state::running &&
               as_unit(self)->kind == unit_kind::ult;
      },
      "invariant 4: only the running ULT of a stream blocks");
  switch_record rec{self, switch_action::block};
  set_wait_kind(self, static_cast<std::uint8_t>(kind));  // before the observers: tools read it
  obs::blocked(self);
  if (lock) {
    rec.on_block = &unlock_after_switch;
    rec.arg = lock;
  }
  s->switch_out(rec);
  assert_invariant(
      [self] {
        stream* here = current_stream();
        return here && here->current() == self &&
               as_unit(self)->state.load(std::memory_order_relaxed) == unit_state::running;
      },
      "invariant 4: a ULT woken from a wait is the running unit of the stream it is on");
  set_wait_kind(self, 0);
}

/// Adds a timer for the calling ULT on its stream; returns it with two references.
timer_node* arm(stream* s, work_unit* self, waiter* w, std::chrono::steady_clock::time_point at) {
  assert_invariant([s, self] { return s == current_stream_no_switch() && s->current() == self; },
                   "timed waits: a ULT arms its deadline on the stream it runs on");
  auto* n = new timer_node;
  n->deadline = at;
  n->w = w;
  n->unit = self;
  try {
    s->add_timer(n);
  } catch (...) {
    delete n;
    throw;
  }
  return n;
}

}  // namespace

void fire(timer_node* n) noexcept {
  assert_invariant([n] { return n->unit != nullptr; }, "timers: a node names the ULT it wakes");
  std::uint32_t expected = wait_pending;
  if (n->state.compare_exchange_strong(expected, wait_timed_out, std::memory_order_acq_rel)) {
    // We won: the ULT is still blocked (nobody else may wake it), so n->w is alive.
    assert_invariant(
        [n] {
          return as_unit(n->unit)->state.load(std::memory_order_acquire) == unit_state::blocked;
        },
        "timed waits: a timer that won its waiter finds it blocked");
    if (waiter* w = n->w) {
      spinlock* lock = wait_access::lock_of(*w);
      lock->lock();
      wait_access::unlink_if_linked(*w);
      lock->unlock();
    }
    obs::woken(n->unit);
    make_ready(n->unit);
  }
  release(n);
}

}  // namespace detail

using detail::wait_notified;
using detail::wait_pending;
using detail::wait_timed_out;

void wakeup::operator()() noexcept {
  if (unit_) {
    detail::obs::woken(unit_);
    detail::make_ready(unit_);
  } else if (word_) {
    // The external waiter may already have seen the state and returned; a futex wake on its
    // (stack) word is harmless then: futex waiters tolerate spurious wake-ups.
    detail::futex_wake(word_, 1);
  }
  unit_ = nullptr;
  word_ = nullptr;
}

void wait_queue::link(waiter& w) noexcept {
  detail::assert_invariant([&w] { return !w.linked_; },
                           "wait queues: a waiter is queued in one wait_queue at a time");
  w.next_ = nullptr;
  w.prev_ = tail_;
  (tail_ ? tail_->next_ : head_) = &w;
  tail_ = &w;
  w.queue_ = this;
  w.linked_ = true;
  ++size_;
  detail::assert_invariant(
      [&w] { return w.state_ && w.state_->load(std::memory_order_relaxed) == wait_pending; },
      "wait queues: a waiter is queued while its wait is pending");
  if (w.unit_) epoch_ = detail::runtime_epoch.load(std::memory_order_relaxed);
}

void wait_queue::unlink(waiter& w) noexcept {
  detail::assert_invariant([&] { return w.linked_ && w.queue_ == this && size_ > 0; },
                           "wait queues: unlink of a waiter this queue does not hold");
  (w.prev_ ? w.prev_->next_ : head_) = w.next_;
  (w.next_ ? w.next_->prev_ : tail_) = w.prev_;
  w.next_ = w.prev_ = nullptr;
  w.linked_ = false;
  if (--size_ == 0) epoch_ = 0;
}

void wait_queue::forget_abandoned() noexcept {
  // The ULTs queued here belong to a finalized runtime: they were abandoned with it and their
  // stacks unmapped, so the waiter records on those stacks cannot even be unlinked.
  head_ = tail_ = nullptr;
  size_ = 0;
  epoch_ = 0;
}

waiter* wait_queue::front() noexcept {
  if (epoch_ != 0 && !detail::epoch_is_live(epoch_)) [[unlikely]]
    forget_abandoned();
  while (head_ && head_->state_->load(std::memory_order_acquire) == wait_timed_out) {
    unlink(*head_);  // its timer or its thread will find it unlinked
  }
  return head_;
}

wakeup wait_queue::take() noexcept {
  wakeup wk;
  while (waiter* w = front()) {
    unlink(*w);
    // Read what wakes it before publishing `notified`: an external waiter may return right after.
    work_unit* unit = w->unit_;
    std::atomic<std::uint32_t>* word = w->state_;
    std::uint32_t expected = wait_pending;
    if (w->state_->compare_exchange_strong(expected, wait_notified, std::memory_order_acq_rel)) {
      wk.unit_ = unit;
      wk.word_ = unit ? nullptr : word;
      return wk;
    }
    // Timed out meanwhile: its timer (or thread) wakes it; try the next one.
  }
  return wk;
}

// No analysis: a ULT hands `lock` to the landing of its switch, which releases it (block()).
wait_status wait_queue::wait(spinlock& lock, waiter& w) WEFT_NO_THREAD_SAFETY_ANALYSIS {
  auto [s, self] = detail::caller("wait");
  w.lock_ = &lock;
  w.unit_ = self;
  w.state_ = &w.own_state_;
  w.own_state_.store(wait_pending, std::memory_order_relaxed);
  link(w);
  if (self) {
    detail::block(s, self, &lock, w.kind);
    detail::assert_invariant(
        [&w] { return w.own_state_.load(std::memory_order_acquire) == wait_notified; },
        "wait queues: an untimed wait ends only when it is notified");
    return wait_status::notified;
  }
  lock.unlock();
  while (w.own_state_.load(std::memory_order_acquire) == wait_pending)
    detail::futex_wait(&w.own_state_, wait_pending);
  detail::assert_invariant(
      [&w] { return w.own_state_.load(std::memory_order_acquire) == wait_notified; },
      "wait queues: an untimed wait of a thread ends only when it is notified");
  return wait_status::notified;
}

// No analysis: as for wait().
wait_status wait_queue::wait_until(spinlock& lock, waiter& w,
                                   clock::time_point deadline) WEFT_NO_THREAD_SAFETY_ANALYSIS {
  auto [s, self] = detail::caller("wait_until");
  w.lock_ = &lock;
  w.unit_ = self;
  w.own_state_.store(wait_pending, std::memory_order_relaxed);
  if (self) {
    detail::timer_node* n = detail::arm(s, self, &w, deadline);
    w.state_ = &n->state;
    link(w);
    detail::block(s, self, &lock, w.kind);
    detail::assert_invariant(
        [n] { return n->state.load(std::memory_order_acquire) != wait_pending; },
        "timed waits: a waiter resumes once notified or timed out");
    const bool timed_out = n->state.load(std::memory_order_acquire) == wait_timed_out;
    detail::release(n);
    return timed_out ? wait_status::timed_out : wait_status::notified;
  }
  w.state_ = &w.own_state_;
  link(w);
  lock.unlock();
  for (;;) {
    if (w.own_state_.load(std::memory_order_acquire) != wait_pending) return wait_status::notified;
    const auto left = deadline - clock::now();
    if (left <= clock::duration::zero()) break;
    detail::futex_wait(&w.own_state_, wait_pending,
                       std::chrono::duration_cast<std::chrono::nanoseconds>(left));
  }
  std::uint32_t expected = wait_pending;
  if (!w.own_state_.compare_exchange_strong(expected, wait_timed_out, std::memory_order_acq_rel)) {
    return wait_status::notified;  // notified at the last moment: the notification counts
  }
  lock.lock();
  if (w.linked_) unlink(w);
  lock.unlock();
  return wait_status::timed_out;
}

namespace this_unit {

void sleep_until(std::chrono::steady_clock::time_point deadline) {
  auto [s, self] = detail::caller("sleep_until");
  if (!self) {
    std::this_thread::sleep_until(deadline);
    return;
  }
  if (deadline <= std::chrono::steady_clock::now()) {
    yield();  // a sleep is a scheduling point even when it has nothing to wait for
    return;
  }
  detail::timer_node* n = detail::arm(s, self, nullptr, deadline);
  detail::block(s, self, nullptr, wait_kind::sleep);
  detail::assert_invariant(
      [n] { return n->state.load(std::memory_order_acquire) == wait_timed_out; },
      "timers: only its timer wakes a sleeping ULT");
  detail::release(n);
}

}  // namespace this_unit

}  // namespace weft
