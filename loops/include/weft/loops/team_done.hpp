// SPDX-License-Identifier: Apache-2.0
// The one wait a team's caller does for all its workers: a count of unfinished workers and a
// wait queue, instead of a join per worker.
#pragma once

#include <weft/spinlock.hpp>
#include <weft/wait_queue.hpp>

#include <atomic>

namespace weft::loops::detail {

/// Counts down the workers of a team; the caller waits once for all of them.
///
/// Contract: worker_done() is called exactly once by each of the `workers` workers, from any unit
/// or thread (tasklets included: it never blocks); wait() is called once, by the team's caller
/// (a ULT or an external thread, never a tasklet), and returns when every worker has called
/// worker_done(). The last worker's worker_done() touches the object (and wakes the caller) only
/// under the lock, and wait() takes the lock after its wait too, so the caller may destroy the
/// object as soon as wait() returns.
/// Cost: one atomic decrement per worker; one lock, plus one block and wake-up if the caller
/// finishes its own share first, per team.
class team_done {
 public:
  explicit team_done(int workers) noexcept : pending_(workers) {}
  team_done(const team_done&) = delete;
  team_done& operator=(const team_done&) = delete;

  /// Marks one worker finished; the last one wakes the waiting caller.
  void worker_done() noexcept {
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    lock_.lock();
    done_ = true;
    // Woken under the lock: an external thread's wait may return as soon as take() marks it,
    // and wait() takes the lock once more before returning, so *this outlives this call.
    if (wakeup wake = queue_.take()) wake();
    lock_.unlock();
  }

  /// Blocks the caller (its ULT, not its stream) until every worker has finished.
  void wait() {
    lock_.lock();
    if (done_) {
      lock_.unlock();
      return;
    }
    waiter self;
    try {
      queue_.wait(lock_, self);  // returns once worker_done() took `self`; the lock is released
    } catch (...) {              // a tasklet (excluded by the constructs): the lock stays held
      lock_.unlock();
      throw;
    }
    lock_.lock();  // the last worker_done() is past its unlock: *this may be destroyed now
    lock_.unlock();
  }

 private:
  std::atomic<int> pending_;
  spinlock lock_;
  bool done_ = false;  // guarded by lock_
  wait_queue queue_;
};

}  // namespace weft::loops::detail
