// SPDX-License-Identifier: Apache-2.0
// The ULTs that wait for a stream to terminate.
#pragma once

#include "weft/spinlock.hpp"
#include "weft/wait_queue.hpp"

namespace weft::detail {

/// The ULTs blocked in stream::wait_terminated() (threads sleep on the futex of the stream's
/// state word instead). Any ULT may wait; the stream's own thread wakes them all once it has
/// stored `terminated`, and before it exits: the waiter's pthread_join waits for that exit, so
/// the lock outlives every use.
class termination_waiters {
 public:
  /// Blocks the calling ULT until wake_all(), unless `done()`, evaluated under the lock that
  /// wake_all() takes (so the wake-up cannot be missed), is true: then returns false at once.
  template <class Done>
  bool wait(Done done) {
    lock_.lock();
    if (done()) {
      lock_.unlock();
      return false;
    }
    waiter w;
    w.kind = wait_kind::stream_join;
    waiters_.wait(lock_, w);
    return true;
  }
  /// Wakes every waiting ULT; the stream's thread, once terminated.
  void wake_all() noexcept {
    // Under the lock: a woken ULT never touches the lock or the queue again.
    lock_.lock();
    while (wakeup w = waiters_.take()) w();
    lock_.unlock();
  }

 private:
  spinlock lock_;
  wait_queue waiters_;  // under lock_
};

}  // namespace weft::detail
