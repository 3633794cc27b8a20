// SPDX-License-Identifier: Apache-2.0
// The barrier of a team of workers: reusable, spins then blocks, and can be aborted, so that a
// cancelled OpenMP region or a weft::loops worker that threw releases the team-mates waiting in
// it instead of leaving them blocked for ever.
#pragma once

#include <weft/execution_stream.hpp>
#include <weft/pool.hpp>
#include <weft/spinlock.hpp>
#include <weft/this_unit.hpp>
#include <weft/wait_queue.hpp>

#include <atomic>
#include <cstdint>
#include <utility>

namespace weft::parallel {

/// A barrier for `parties` workers. arrive_and_wait(spin) first spins up to `spin` pause rounds
/// on the barrier's round number (a ULT yields to units queued on its stream meanwhile), then
/// blocks the calling ULT (not its stream) until every party has arrived. Callers: ULTs and
/// external threads, never tasklets. abort() releases every waiter and makes every later arrival
/// return at once, until reset().
///
/// Why spin: a worker that blocks leaves its stream idle, and an idle stream soon parks on a
/// futex; waking it then costs a system call in the last arriver and a kernel wake-up (tens of
/// microseconds in a virtual machine, a time slice on a loaded one) before the worker runs again.
/// Team-mates that arrive within the spin never pay it, as with libgomp's spinning barrier.
/// Cost of an arrival: one fetch_add; the last arriver stores the round and reads whether any
/// waiter blocked, taking the lock only then (a release that always took the lock, which shared
/// the round's cache line, was 26% slower in EPCC syncbench BARRIER).
///
/// Invariant (no lost wake-up): a waiter counts itself in sleepers_ before it reads the round
/// under the lock; the last arriver stores the round before it reads sleepers_ (both sequentially
/// consistent). So either the arriver sees the sleeper and wakes it under the lock, or the
/// sleeper's read comes after the store and sees the round passed.
class team_barrier {
 public:
  /// A barrier for `parties` workers whose blocked waiters carry the label `kind`.
  explicit team_barrier(int parties, wait_kind kind = wait_kind::other) noexcept
      : parties_(parties), kind_(kind) {}
  team_barrier(const team_barrier&) = delete;
  team_barrier& operator=(const team_barrier&) = delete;

  /// Arrives and waits for the round to complete; false if the barrier was aborted first.
  bool arrive_and_wait(long spin) {
    return arrive_and_wait(spin, [] {});
  }

  /// Arrives and waits; the last party to arrive runs on_last() before it releases the others,
  /// so on_last() sees everything the parties wrote before arriving, and they see what it wrote.
  /// Returns true once the round passed, false if the barrier was aborted before it did. If
  /// on_last() throws, the barrier is aborted and the exception propagates to the last party.
  template <class OnLast>
  bool arrive_and_wait(long spin, OnLast&& on_last) {
    return arrive_and_wait(spin, std::forward<OnLast>(on_last), [] { return false; });
  }

  /// The same, and a waiter stops spinning (blocks at once) when `stop_spinning()` answers true
  /// (asked every 256 rounds): a caller that knows work is waiting elsewhere, which the waiter's
  /// stream would run once the waiter blocks, says so here (an OpenMP team with tasks queued on a
  /// team-mate's stream: libgomp's waiting threads run them too).
  template <class OnLast, class StopSpinning>
  bool arrive_and_wait(long spin, OnLast&& on_last, StopSpinning&& stop_spinning) {
    if (aborted_.load(std::memory_order_acquire)) return false;
    const std::uint64_t round = round_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
      arrived_.store(0, std::memory_order_relaxed);  // published by the round's release below
      try {
        on_last();
      } catch (...) {
        abort();
        throw;
      }
      round_.store(round + 1, std::memory_order_seq_cst);
      if (sleepers_.load(std::memory_order_seq_cst) != 0) {
        lock_.lock();
        while (wakeup w = waiters_.take()) w();
        lock_.unlock();
      }
      return true;
    }
    if (spin_wait(round, spin, stop_spinning)) return true;
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    lock_.lock();
    while (round_.load(std::memory_order_seq_cst) == round &&
           !aborted_.load(std::memory_order_acquire)) {
      waiter self;
      self.kind = kind_;
      waiters_.wait(lock_, self);  // releases the lock once blocked
      lock_.lock();
    }
    // Unlocking last: a waker is past its unlock, so the team may destroy the barrier.
    const bool passed = round_.load(std::memory_order_acquire) != round;
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    lock_.unlock();
    return passed;
  }

  /// Releases every waiter (their arrive_and_wait() returns false) and makes later arrivals
  /// return false at once.
  void abort() noexcept {
    lock_.lock();
    aborted_.store(true, std::memory_order_release);
    while (wakeup w = waiters_.take()) w();
    lock_.unlock();
  }

  /// True after abort(), until reset().
  bool aborted() const noexcept { return aborted_.load(std::memory_order_acquire); }

  /// Makes a barrier left by an aborted round usable again. No party may be inside.
  void reset() noexcept {
    arrived_.store(0, std::memory_order_relaxed);
    aborted_.store(false, std::memory_order_relaxed);
  }

 private:
  // True once the round passed; false when the spin ran out or the barrier was aborted.
  template <class StopSpinning>
  bool spin_wait(std::uint64_t round, long spin, StopSpinning& stop_spinning) {
    if (spin <= 0) return false;
    const bool ult = this_unit::is_ult();
    for (long i = 0; i < spin; ++i) {
      if (round_.load(std::memory_order_acquire) != round) return true;
      if ((i & 15) == 15) {
        if (aborted_.load(std::memory_order_relaxed)) return false;
        // A team-mate (or other work) queued behind this worker on its stream would otherwise
        // wait for the whole spin.
        if (ult && has_queued_work()) this_unit::yield();
        if (ult && (i & 255) == 255 && stop_spinning()) break;
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
  wait_kind kind_;
  // Off the round's line: spinning waiters read that one, and only blocking ones touch these.
  alignas(64) std::atomic<int> sleepers_{0};  // waiters that may block (see the invariant)
  spinlock lock_;  // guards waiters_ and orders a blocking waiter against the round's change
  wait_queue waiters_;
};

}  // namespace weft::parallel
