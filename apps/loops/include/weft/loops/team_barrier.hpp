// SPDX-License-Identifier: Apache-2.0
// The barrier of a team: a reusable barrier that can be aborted, so that a worker whose body
// throws releases the workers waiting for it instead of leaving them blocked for ever.
#pragma once

#include <weft/condition_variable.hpp>
#include <weft/mutex.hpp>

#include <cstdint>
#include <mutex>
#include <stdexcept>

namespace weft::loops {

/// Thrown out of a barrier (and so out of the workers waiting in it) when another worker of the
/// team failed; the team's launcher swallows it and rethrows the failing worker's exception.
class team_aborted : public std::runtime_error {
 public:
  team_aborted() : std::runtime_error("weft::loops: another worker of the team threw") {}
};

/// A barrier for `parties` workers. arrive_and_wait() blocks the calling ULT (not its stream)
/// until every party has arrived; it may be called from ULTs and external threads, never from
/// tasklets (the team checks that before). abort() wakes every waiter with team_aborted, and
/// every later arrival throws it too.
class team_barrier {
 public:
  explicit team_barrier(int parties) : parties_(parties) {}

  /// Arrives and waits for the round to complete. Throws team_aborted after abort().
  void arrive_and_wait() {
    std::unique_lock lock(mutex_);
    if (aborted_) throw team_aborted();
    const std::uint64_t round = round_;
    if (++arrived_ == parties_) {
      arrived_ = 0;
      ++round_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return round_ != round || aborted_; });
    if (round_ == round) throw team_aborted();
  }

  /// Releases every waiter (they throw team_aborted) and makes later arrivals throw.
  void abort() {
    std::lock_guard lock(mutex_);
    aborted_ = true;
    cv_.notify_all();
  }

 private:
  weft::mutex mutex_;
  weft::condition_variable cv_;
  int parties_;
  int arrived_ = 0;
  std::uint64_t round_ = 0;
  bool aborted_ = false;
};

}  // namespace weft::loops
