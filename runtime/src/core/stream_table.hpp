// SPDX-License-Identifier: Apache-2.0
// The execution streams of the runtime by rank, and the freed ones kept until teardown.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <vector>

#include "platform/assert.hpp"

namespace weft::detail {

class stream;

/// The table of streams: a slot per rank (empty for a free rank) and the retired streams, which
/// free() took out of their slot. A retired stream keeps its object (closed inbox, no scheduler)
/// until teardown, so a unit pinned to it, or a stale reference, finds a stream that refuses work
/// instead of freed memory.
///
/// Any thread may call any member; each takes the table's lock, which is never held while a
/// stream runs units. The callbacks of for_each() run under it and must not call the table.
class stream_table {
 public:
  stream_table() = default;
  stream_table(const stream_table&) = delete;
  stream_table& operator=(const stream_table&) = delete;

  /// Puts the stream `make(rank)` returns in the slot of `wanted` (-1: the lowest free rank) and
  /// returns it. Throws errc::invalid_state when `wanted` is taken, and whatever `make` throws
  /// (nothing is then left in the slot). `make` runs under the lock.
  template <class Make>
  stream* insert(int wanted, Make&& make) {
    std::lock_guard lock(mutex_);
    const int rank = wanted < 0 ? lowest_free() : check_free(wanted);
    // The slot first: out of memory, no stream object is left without an owner.
    if (rank >= static_cast<int>(slots_.size())) slots_.resize(static_cast<std::size_t>(rank) + 1);
    stream* s = make(rank);
    assert_invariant([&] { return s && !slots_[static_cast<std::size_t>(rank)]; },
                     "stream table: a stream takes a free slot");
    slots_[static_cast<std::size_t>(rank)] = s;
    live_.fetch_add(1, std::memory_order_relaxed);
    return s;
  }
  /// Empties the slot of `rank` (a stream whose start failed; its creator deletes it).
  void erase(int rank) noexcept;
  /// Makes room for one more retired stream, so that retire() cannot fail.
  void reserve_retired();
  /// Moves the stream of `rank` from its slot to the retired list (after reserve_retired()).
  void retire(int rank) noexcept;

  /// The stream of `rank`; nullptr for a free or invalid rank.
  stream* at(int rank) const noexcept;
  /// The content of slot `i` without allocating (finalize walks the table this way, out of memory
  /// too); `end` is set when `i` is past the last slot.
  stream* slot(std::size_t i, bool& end) const noexcept;
  /// The number of streams in slots.
  int count() const noexcept;
  /// count() without the lock, for the idle loop: exact once the streams' creations and frees
  /// have returned, a moment stale while one runs.
  int live() const noexcept { return live_.load(std::memory_order_relaxed); }
  /// The ranks the next `n` streams created with the lowest free rank will take.
  std::vector<int> free_ranks(int n) const;

  /// Calls `f(stream&)` for each stream in a slot, in rank order, under the lock. `wait`: false
  /// tries the lock and goes on without it when it is held (a dump from a signal or a hang).
  template <class F>
  void for_each(F&& f, bool wait = true) const {
    std::unique_lock lock(mutex_, std::defer_lock);
    if (wait) {
      lock.lock();
    } else {
      (void)lock.try_lock();
    }
    for (stream* s : slots_)
      if (s) f(*s);
  }
  /// for_each() over the retired streams as well (statistics count their work).
  template <class F>
  void for_each_with_retired(F&& f) const {
    std::lock_guard lock(mutex_);
    for (stream* s : slots_)
      if (s) f(*s);
    for (stream* s : retired_) f(*s);
  }

  /// Teardown, once every secondary thread has ended: deletes every stream but `keep` (the
  /// primary, torn down last) and empties the table.
  void delete_all_but(const stream* keep) noexcept;

 private:
  int lowest_free() const noexcept;
  int check_free(int rank) const;

  mutable std::mutex mutex_;
  std::vector<stream*> slots_;    // index = rank
  std::vector<stream*> retired_;  // freed, kept until teardown
  std::atomic<int> live_{0};      // streams in slots_, written under mutex_
};

}  // namespace weft::detail
