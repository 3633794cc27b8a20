// SPDX-License-Identifier: Apache-2.0
// The barrier of a team: weft::parallel's team barrier with the team's spin, turning an abort
// into team_aborted, so that a worker whose body throws releases the workers waiting for it
// instead of leaving them blocked for ever.
#pragma once

#include <weft/parallel/team_barrier.hpp>

#include <stdexcept>
#include <utility>

namespace weft::loops {

/// Thrown out of a barrier (and so out of the workers waiting in it) when another worker of the
/// team failed; the team's launcher swallows it and rethrows the failing worker's exception.
class team_aborted : public std::runtime_error {
 public:
  team_aborted() : std::runtime_error("weft::loops: another worker of the team threw") {}
};

/// A barrier for `parties` workers that spin `spin` pause rounds before blocking (see
/// parallel::team_barrier for the waiting and why it spins). Callers: ULTs and external
/// threads, never tasklets (the team checks that before). abort() wakes every waiter with
/// team_aborted, and every later arrival throws it too.
class team_barrier {
 public:
  /// A barrier for `parties` workers whose waiters spin `spin` pause rounds before blocking.
  explicit team_barrier(int parties, long spin = 0) noexcept : barrier_(parties), spin_(spin) {}
  team_barrier(const team_barrier&) = delete;
  team_barrier& operator=(const team_barrier&) = delete;

  /// Arrives and waits for the round to complete. Throws team_aborted after abort().
  void arrive_and_wait() {
    if (!barrier_.arrive_and_wait(spin_)) throw team_aborted();
  }

  /// Arrives and waits; the last party to arrive runs on_last() before it releases the others,
  /// so on_last() sees everything the parties wrote before arriving, and they see what it wrote.
  /// If on_last() throws, the barrier is aborted (the others throw team_aborted) and the
  /// exception propagates to the last party.
  template <class OnLast>
  void arrive_and_wait(OnLast&& on_last) {
    if (!barrier_.arrive_and_wait(spin_, std::forward<OnLast>(on_last))) throw team_aborted();
  }

  /// Releases every waiter (they throw team_aborted) and makes later arrivals throw.
  void abort() noexcept { barrier_.abort(); }

 private:
  parallel::team_barrier barrier_;
  long spin_;
};

}  // namespace weft::loops
