// SPDX-License-Identifier: Apache-2.0
// The barrier of a team: a reusable barrier that can be aborted, so that a worker whose body
// throws releases the workers waiting for it instead of leaving them blocked for ever.
#pragma once

#include <weft/execution_stream.hpp>
#include <weft/pool.hpp>
#include <weft/spinlock.hpp>
#include <weft/this_unit.hpp>
#include <weft/wait_queue.hpp>

#include <atomic>
#include <cstdint>
#include <stdexcept>

namespace weft::loops {

/// Thrown out of a barrier (and so out of the workers waiting in it) when another worker of the
/// team failed; the team's launcher swallows it and rethrows the failing worker's exception.
class team_aborted : public std::runtime_error {
 public:
  team_aborted() : std::runtime_error("weft::loops: another worker of the team threw") {}
};

/// A barrier for `parties` workers. arrive_and_wait() first spins up to `spin` pause rounds on
/// the barrier's round number (a ULT yields to units queued on its stream meanwhile), then blocks
/// the calling ULT (not its stream) until every party has arrived; it may be called from ULTs and
/// external threads, never from tasklets (the team checks that before). abort() wakes every
/// waiter with team_aborted, and every later arrival throws it too.
///
/// Why spin: a worker that blocks leaves its stream idle, and an idle stream soon parks on a
/// futex; waking it then costs a system call in the last arriver and a kernel wake-up (tens of
/// microseconds in a virtual machine, a time slice on a loaded one) before the worker runs again.
/// Team-mates that arrive within the spin never pay it, as with libgomp's spinning barrier.
/// Cost of an arrival: one fetch_add; the last arriver also takes an uncontended spinlock.
class team_barrier {
 public:
  /// A barrier for `parties` workers whose waiters spin `spin` pause rounds before blocking.
  explicit team_barrier(int parties, long spin = 0) noexcept : parties_(parties), spin_(spin) {}
  team_barrier(const team_barrier&) = delete;
  team_barrier& operator=(const team_barrier&) = delete;

  /// Arrives and waits for the round to complete. Throws team_aborted after abort().
  void arrive_and_wait() {
    arrive_and_wait([] {});
  }

  /// Arrives and waits; the last party to arrive runs on_last() before it releases the others,
  /// so on_last() sees everything the parties wrote before arriving, and they see what it wrote.
  /// If on_last() throws, the barrier is aborted (the others throw team_aborted) and the
  /// exception propagates to the last party.
  template <class OnLast>
  void arrive_and_wait(OnLast&& on_last) {
    if (aborted_.load(std::memory_order_acquire)) throw team_aborted();
    const std::uint64_t round = round_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
      arrived_.store(0, std::memory_order_relaxed);  // published by the round's release below
      try {
        on_last();
      } catch (...) {
        abort();
        throw;
      }
      lock_.lock();
      round_.store(round + 1, std::memory_order_release);
      while (wakeup w = waiters_.take()) w();
      lock_.unlock();
      return;
    }
    if (spin_wait(round)) return;
    lock_.lock();
    while (round_.load(std::memory_order_acquire) == round &&
           !aborted_.load(std::memory_order_acquire)) {
      waiter self;
      waiters_.wait(lock_, self);  // releases the lock once blocked
      lock_.lock();
    }
    // Unlocking last: the waker is past its unlock, so the team may destroy the barrier.
    const bool passed = round_.load(std::memory_order_acquire) != round;
    lock_.unlock();
    if (!passed) throw team_aborted();
  }

  /// Releases every waiter (they throw team_aborted) and makes later arrivals throw.
  void abort() noexcept {
    lock_.lock();
    aborted_.store(true, std::memory_order_release);
    while (wakeup w = waiters_.take()) w();
    lock_.unlock();
  }

 private:
  // True once the round passed; false when the spin ran out or the barrier was aborted.
  bool spin_wait(std::uint64_t round) {
    if (spin_ <= 0) return false;
    const bool ult = this_unit::is_ult();
    for (long i = 0; i < spin_; ++i) {
      if (round_.load(std::memory_order_acquire) != round) return true;
      if ((i & 15) == 15) {
        if (aborted_.load(std::memory_order_relaxed)) return false;
        // A team-mate (or other work) queued behind this worker on its stream would otherwise
        // wait for the whole spin.
        if (ult && has_queued_work()) this_unit::yield();
      }
      cpu_relax();
    }
    return round_.load(std::memory_order_acquire) != round;
  }

  // True when units wait in the main pool of the calling ULT's stream (looked up each time: a
  // yield may move the ULT to another stream).
  static bool has_queued_work() {
    execution_stream* s = this_unit::stream();
    return s && !s->main_pool().empty();
  }

  alignas(64) std::atomic<int> arrived_{0};
  alignas(64) std::atomic<std::uint64_t> round_{0};
  std::atomic<bool> aborted_{false};
  int parties_;
  long spin_;
  spinlock lock_;  // guards waiters_ and orders a blocking waiter against the round's change
  wait_queue waiters_;
};

}  // namespace weft::loops
