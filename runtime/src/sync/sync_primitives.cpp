// SPDX-License-Identifier: Apache-2.0
// The out-of-line parts of barrier, counting_semaphore and rwlock.
#include <mutex>
#include <thread>

#include "platform/assert.hpp"
#include "platform/locks.hpp"
#include "weft/barrier.hpp"
#include "weft/error.hpp"
#include "weft/rwlock.hpp"
#include "weft/semaphore.hpp"
#include "weft/this_unit.hpp"

namespace weft {

// --- barrier -------------------------------------------------------------------------------

barrier::barrier(std::size_t parties) : parties_(parties) {
  if (parties == 0) throw error(errc::invalid_state, "weft: a barrier needs at least one party");
}

std::size_t barrier::waiting() const noexcept {
  lock_.lock();
  const std::size_t n = arrived_;
  lock_.unlock();
  return n;
}

bool barrier::reset(std::size_t parties) {
  if (parties == 0) throw error(errc::invalid_state, "weft: a barrier needs at least one party");
  lock_.lock();
  const bool idle = arrived_ == 0;
  if (idle) parties_.store(parties, std::memory_order_relaxed);
  lock_.unlock();
  return idle;
}

barrier::~barrier() {
  // A party destroys the barrier once it is back from a completed round. The last arriver may
  // still be waking the others (it leaves with lock_.unlock()), and a party that timed out as
  // the round completed still has to check it under lock_: wait for both.
  lock_.lock();
  while (stragglers_ != 0) {
    lock_.unlock();
    // The straggler may be a ULT of our own stream: let it run.
    if (this_unit::is_ult()) {
      this_unit::yield();
    } else {
      std::this_thread::yield();
    }
    lock_.lock();
  }
  lock_.unlock();
}

bool barrier::arrive_and_wait() {
  return *arrive(nullptr);
}

std::optional<bool> barrier::arrive(const detail::sync_clock::time_point* deadline,
                                    const block_report* report) {
  lock_.lock();
  detail::assert_invariant([n = arrived_, p = parties()] { return n < p; },
                           "barrier: a round holds fewer arrivals than parties");
  if (arrived_ + 1 == parties()) {
    // Every other party of the round is either woken here or has timed out meanwhile; the
    // latter come back under lock_ and must find the barrier alive (stragglers_, ~barrier).
    std::size_t woken = 0;
    while (wakeup wk = queue_.take()) {
      wk();
      ++woken;
    }
    // Woken parties were queued, so counted in arrived_; the rest timed out and come back.
    detail::assert_invariant([n = arrived_, woken] { return woken <= n; },
                             "barrier: a round wakes no more parties than arrived");
    stragglers_ += arrived_ - woken;
    arrived_ = 0;
    ++generation_;
    lock_.unlock();  // our last access: a woken party may destroy the barrier from here on
    return true;
  }
  if (this_unit::is_tasklet()) {
    lock_.unlock();
    detail::throw_tasklet_cannot_block("barrier::arrive_and_wait");
  }
  ++arrived_;
  const std::uint64_t generation = generation_;
  waiter w;
  w.kind = wait_kind::barrier;
  if (report) report->call(report->target);
  std::exception_ptr failed;  // no timer for the deadline (out of memory): we did not wait
  try {
    if (detail::wait_releasing(queue_, lock_, w, deadline) == wait_status::notified) return false;
  } catch (...) {
    failed = std::current_exception();
  }
  lock_.lock();
  // Completed while we were timing out (or failing): the round counted us, and we are through.
  const bool completed = generation_ != generation;
  // The counts are read here, under lock_ (the analysis does not follow them into the lambda).
  detail::assert_invariant([n = completed ? stragglers_ : arrived_] { return n > 0; },
                           "barrier: a timed-out arrival is counted where it is taken back");
  if (completed) {
    --stragglers_;
  } else {
    --arrived_;
  }
  lock_.unlock();
  if (completed) return false;
  if (failed) std::rethrow_exception(failed);
  return std::nullopt;
}

// --- counting_semaphore --------------------------------------------------------------------

namespace detail {

bool semaphore_base::acquire_slow(const sync_clock::time_point* deadline) {
  lock_.lock();
  if (try_acquire()) {
    lock_.unlock();
    return true;
  }
  waiter w;
  w.kind = wait_kind::semaphore;
  // release() hands the unit over when it takes us: a notified acquirer owns it.
  return wait_releasing(queue_, lock_, w, deadline) == wait_status::notified;
}

void semaphore_base::release(std::ptrdiff_t n) {
  if (n <= 0) return;
  lock_.lock();
  wakeup first = queue_.take();
  if (first) {
    --n;
    // Several waiters: wake them under the lock, in queue order (the first one included).
    while (n > 0) {
      wakeup wk = queue_.take();
      if (!wk) break;
      --n;
      first();  // no-op after the first call
      wk();
    }
  }
  if (n > 0) count_.fetch_add(n, std::memory_order_release);
  detail::assert_invariant([c = count_.load(std::memory_order_relaxed)] { return c >= 0; },
                           "semaphore: the count of free permits is never negative");
  lock_.unlock();
  first();
}

}  // namespace detail

// --- rwlock --------------------------------------------------------------------------------

bool rwlock::try_lock() noexcept {
  detail::lock_guard g(lock_);
  if (writer_ || readers_ != 0) return false;
  writer_ = true;
  return true;
}

bool rwlock::lock_until(const detail::sync_clock::time_point* deadline) {
  lock_.lock();
  if (!writer_ && readers_ == 0) {
    writer_ = true;
    lock_.unlock();
    return true;
  }
  waiter w;
  w.kind = wait_kind::rwlock;
  if (detail::wait_releasing(writers_q_, lock_, w, deadline) == wait_status::notified) {
    return true;  // handed over: writer_ was set for us
  }
  // Timed out. Readers may have queued only because we were waiting: let them in.
  lock_.lock();
  if (!writer_) admit_locked();
  lock_.unlock();
  return false;
}

void rwlock::unlock() noexcept {
  lock_.lock();
  detail::assert_invariant(
      [writer = writer_, readers = readers_] { return writer && readers == 0; },
      "rwlock: unlock() by a writer that does not hold the lock");
  writer_ = false;
  // Readers that queued behind us go first (phase-fair), then the next writer.
  bool admitted = false;
  while (wakeup wk = readers_q_.take()) {
    ++readers_;
    admitted = true;
    wk();
  }
  wakeup next;
  if (!admitted && (next = writers_q_.take())) writer_ = true;
  detail::assert_invariant(
      [writer = writer_, readers = readers_] { return !writer || readers == 0; },
      "rwlock: a writer and readers never hold the lock together");
  lock_.unlock();
  next();
}

bool rwlock::try_lock_shared() noexcept {
  detail::lock_guard g(lock_);
  if (writer_ || !writers_q_.empty()) return false;
  ++readers_;
  return true;
}

bool rwlock::lock_shared_until(const detail::sync_clock::time_point* deadline) {
  lock_.lock();
  if (!writer_ && writers_q_.empty()) {
    ++readers_;
    lock_.unlock();
    return true;
  }
  waiter w;
  w.kind = wait_kind::rwlock;
  // Admitted readers are counted in readers_ by whoever woke them.
  return detail::wait_releasing(readers_q_, lock_, w, deadline) == wait_status::notified;
}

void rwlock::unlock_shared() noexcept {
  lock_.lock();
  detail::assert_invariant(
      [writer = writer_, readers = readers_] { return !writer && readers > 0; },
      "rwlock: unlock_shared() with no reader holding the lock");
  if (--readers_ == 0) admit_locked();
  detail::assert_invariant(
      [writer = writer_, readers = readers_] { return !writer || readers == 0; },
      "rwlock: a writer and readers never hold the lock together");
  lock_.unlock();
}

void rwlock::admit_locked() noexcept {
  detail::assert_invariant([writer = writer_] { return !writer; },
                           "rwlock: waiters are admitted only while no writer holds the lock");
  if (readers_ == 0) {
    if (wakeup wk = writers_q_.take()) {
      writer_ = true;
      wk();
      return;
    }
  }
  // Test emptiness with take(), never with empty() followed by take(): a waiter may time out
  // in between.
  if (writers_q_.empty()) {
    while (wakeup wk = readers_q_.take()) {
      ++readers_;
      wk();
    }
  }
}

}  // namespace weft
