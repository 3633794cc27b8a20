// SPDX-License-Identifier: Apache-2.0
// Wait queues: the blocking mechanism under every weft sync primitive, public so that runtimes
// ported onto weft can build their own.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "weft/spinlock.hpp"
#include "weft/work_unit.hpp"

namespace weft {

/// How a wait ended.
enum class wait_status : std::uint8_t { notified, timed_out };

/// What a blocked unit waits for, as unit dumps (weft/debug.hpp) name it. Primitives built on
/// wait_queue label their waiters with it; `other` is what an unlabelled waiter reports.
enum class wait_kind : std::uint8_t {
  other = 1,
  mutex,
  condition_variable,
  rwlock,
  semaphore,
  barrier,
  channel,
  eventual,
  future,
  sleep,        ///< this_unit::sleep_until/sleep_for (no waiter)
  stream_join,  ///< execution_stream::join of a secondary stream
  resize,       ///< resize_request::wait
  client,       ///< the first kind client_wait_kind() hands out to a layer built on weft
};

/// The wait kind a layer built on weft (an OpenMP or Argobots runtime, ...) labels its waiters
/// with, so that unit dumps say what its units wait for: `label`, a string that outlives every
/// dump (a literal). The same label, by content, gives the same kind. There are 16 such kinds;
/// once they are taken, a new label gets wait_kind::client, whose dumps then name its first label.
/// Any thread.
wait_kind client_wait_kind(const char* label) noexcept;

class wait_queue;

namespace detail {
struct wait_access;
}

/// One party blocked in a wait_queue: a ULT (suspended; its stream runs other work meanwhile) or
/// an external thread (asleep on a futex). It lives on the waiter's own stack during the wait.
/// The primitive may read and write `tag` and `data` under its lock while the waiter is queued,
/// and not after take() has picked it: from then on the waiter may return at any moment.
class waiter {
 public:
  /// What the waiter waits for, in the primitive's terms (reader or writer, a count, ...).
  std::uintptr_t tag = 0;
  /// A hand-off slot (a channel passes a value's address here).
  void* data = nullptr;
  /// What the waiter waits for, reported by unit dumps while it blocks.
  wait_kind kind = wait_kind::other;

  waiter() noexcept = default;
  waiter(const waiter&) = delete;
  waiter& operator=(const waiter&) = delete;

 private:
  friend class wait_queue;
  friend struct detail::wait_access;
  waiter* next_ = nullptr;
  waiter* prev_ = nullptr;
  wait_queue* queue_ = nullptr;  // while linked
  spinlock* lock_ = nullptr;     // the lock guarding queue_
  work_unit* unit_ = nullptr;    // the blocked ULT; nullptr for an external thread
  std::atomic<std::uint32_t> own_state_{0};
  std::atomic<std::uint32_t>* state_ = &own_state_;  // a timer's word when a ULT waits timed
  bool linked_ = false;
};

/// A notified waiter, to be woken once the primitive's lock is released (waking under the lock
/// works too, but makes the lock's hold time include a push into a pool).
class wakeup {
 public:
  wakeup() noexcept = default;
  /// True when there is somebody to wake.
  explicit operator bool() const noexcept { return unit_ || word_; }
  /// Makes the waiter run again: a ULT goes back to its pool (through the pool's access mode,
  /// so a ULT of another stream's private pool travels through that stream's inbox), an external
  /// thread is woken from its futex. At most once per wakeup; any thread.
  void operator()() noexcept;

 private:
  friend class wait_queue;
  work_unit* unit_ = nullptr;
  std::atomic<std::uint32_t>* word_ = nullptr;
};

/// A FIFO of blocked waiters, guarded by a spinlock the primitive owns (one lock may guard
/// several queues). Every member except wakeup() must be called with that lock held.
///
/// Fairness: waiters are taken in the order they arrived; a woken ULT is pushed to the back of
/// its pool, so it runs after the units already queued there. A waiter whose deadline passed
/// leaves the queue by itself (its stream's timer takes it out), never consuming a notification.
///
/// A primitive built on it can be made safe to destroy as soon as a waiter is released (as
/// weft's own are, see weft/detail/sync.hpp): publish the released state and take() under the
/// lock, make the lock's unlock() the operation's last access to the primitive, run the wakeup
/// after it (a wakeup touches only its waiter), and call spinlock::wait_unlocked() in the
/// primitive's destructor. A woken waiter does not touch the queue or the lock again.
class wait_queue {
 public:
  using clock = std::chrono::steady_clock;

  wait_queue() noexcept = default;
  wait_queue(const wait_queue&) = delete;
  wait_queue& operator=(const wait_queue&) = delete;

  /// Blocks the caller, which holds `lock`, until take() picks `w`. `lock` is released once the
  /// caller is queued and can no longer miss its wake-up; it is NOT held on return. Throws
  /// errc::tasklet_cannot_block from a tasklet (`lock` then stays held).
  wait_status wait(spinlock& lock, waiter& w) WEFT_RELEASE(lock);
  /// Same, giving up at `deadline` (returns timed_out; a deadline already past still queues and
  /// gives up at once, releasing the lock). ULTs time out through their stream's timer heap,
  /// external threads through the futex timeout.
  wait_status wait_until(spinlock& lock, waiter& w, clock::time_point deadline) WEFT_RELEASE(lock);
  /// Same, with a timeout relative to now.
  template <class Rep, class Period>
  wait_status wait_for(spinlock& lock, waiter& w, std::chrono::duration<Rep, Period> timeout)
      WEFT_RELEASE(lock) {
    return wait_until(lock, w, clock::now() + std::chrono::ceil<clock::duration>(timeout));
  }

  /// The first waiter that has not timed out, or nullptr. It stays queued. ULTs a finalized
  /// runtime abandoned while they waited here are forgotten, never touched (their stacks are
  /// gone): for the queue they are no longer waiting.
  waiter* front() noexcept;
  /// Removes the first waiter that has not timed out and marks it notified. Returns what wakes
  /// it (empty when the queue holds nobody). Its wait() returns `notified`.
  wakeup take() noexcept;
  /// True when no live waiter is queued.
  bool empty() noexcept { return front() == nullptr; }
  /// Queued waiters, timed-out ones not yet removed included.
  std::size_t size() const noexcept { return size_; }

 private:
  friend struct detail::wait_access;
  void link(waiter& w) noexcept;
  void unlink(waiter& w) noexcept;
  void forget_abandoned() noexcept;

  waiter* head_ = nullptr;
  waiter* tail_ = nullptr;
  std::size_t size_ = 0;
  // The runtime epoch (detail::runtime_epoch) of the ULTs queued here; 0 while none is.
  std::uint64_t epoch_ = 0;
};

}  // namespace weft
