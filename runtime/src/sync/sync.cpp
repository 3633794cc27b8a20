// SPDX-License-Identifier: Apache-2.0
// Helpers of the synchronisation primitives, and the out-of-line paths of mutex.
#include <string>

#include "platform/assert.hpp"
#include "weft/detail/sync.hpp"
#include "weft/error.hpp"
#include "weft/mutex.hpp"
#include "weft/this_unit.hpp"

namespace weft {

namespace detail {

namespace {
// Only its address matters: one per thread, used as the identity of non-units.
thread_local char thread_identity_byte;

[[gnu::noinline]] std::uintptr_t thread_identity() noexcept {
  return reinterpret_cast<std::uintptr_t>(&thread_identity_byte) | 1;
}
}  // namespace

void throw_tasklet_cannot_block(const char* what) {
  throw error(errc::tasklet_cannot_block,
              std::string("weft: ") + what + " would block a tasklet (tasklets never block)");
}

void throw_cv_mutex_mismatch() {
  throw error(errc::invalid_state,
              "weft: condition_variable::wait with a mutex other than the one its queued waiters "
              "wait with (every waiter queued at the same time must use the same mutex)");
}

void throw_if_tasklet(const char* what) {
  if (this_unit::is_tasklet()) throw_tasklet_cannot_block(what);
}

std::uintptr_t caller_identity() noexcept {
  if (work_unit* u = this_unit::current()) {
    // Descriptors are aligned, so a unit's identity never looks like a thread's (tagged with 1).
    assert_invariant([u] { return (reinterpret_cast<std::uintptr_t>(u) & 1) == 0; },
                     "sync: a unit's identity has bit 0 clear");
    return reinterpret_cast<std::uintptr_t>(u);
  }
  return thread_identity();
}

}  // namespace detail

// --- mutex ---------------------------------------------------------------------------------

namespace {
/// Spin iterations of a contended lock() before it blocks: long enough to ride out a holder on
/// another core finishing a short critical section, short next to a context switch.
constexpr int mutex_spin = 64;
}  // namespace

bool mutex::lock_slow(const detail::sync_clock::time_point* deadline) {
  for (int i = 0; i < mutex_spin; ++i) {
    cpu_relax();
    if (try_lock()) return true;
  }
  for (;;) {
    lock_.lock();
    // Mark the mutex contended (only done under lock_); if it was free, we own it now.
    if (state_.exchange(contended, std::memory_order_acquire) == unlocked) {
      // Nobody else can set `contended` while we hold lock_: with no waiter left we may go
      // back to plain `locked`, and spare our unlock() the slow path.
      if (queue_.empty()) state_.store(locked, std::memory_order_relaxed);
      lock_.unlock();
      return true;
    }
    waiter w;
    w.kind = wait_kind::mutex;
    if (detail::wait_releasing(queue_, lock_, w, deadline) == wait_status::timed_out) {
      return try_lock();
    }
  }
}

void mutex::unlock_slow() noexcept {
  // The state is `contended`, so nobody can take the mutex until we release it below; and only
  // we (holding lock_) may change it. Releasing it under lock_ makes lock_.unlock() our last
  // access: a unit that locks, unlocks and destroys the mutex right after the store finds lock_
  // held in ~mutex() and waits for us (detail/sync.hpp, "Destruction safety").
  lock_.lock();
  wakeup wk = queue_.take();
  state_.store(unlocked, std::memory_order_release);
  lock_.unlock();
  wk();  // touches the waiter only, which stays blocked until this wakes it
}

}  // namespace weft
