// SPDX-License-Identifier: Apache-2.0
// A stream's parking: the word it sleeps on when idle, and what it knows about its sleeps.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "platform/assert.hpp"
#include "platform/futex.hpp"

namespace weft::detail {

class stream;

/// A parked stream's place in one pool's parked list (pool::push wakes the first one).
struct park_entry {
  stream* owner = nullptr;
  park_entry* next = nullptr;
  park_entry* prev = nullptr;
  bool linked = false;  // under the pool's park lock
};

/// The parking state of one stream. The stream's thread parks (announce, sleep, end); any thread
/// wakes it (wake) and reads parked() and count(). What decides whether to park, and which pools
/// and timers bound the sleep, is the stream's (stream::park).
class parking {
 public:
  /// Announces a park over `pools` pools: counts it, sets the parked flag (seq_cst: the Dekker
  /// pair of every pusher that reads it after publishing work) and returns the wake-up word's
  /// value, which sleep() compares against.
  std::uint32_t announce(std::size_t pools) {
    assert_invariant([this] { return !parked_.load(std::memory_order_relaxed); },
                     "parking: a stream announces one park at a time");
    assert_invariant(
        [this] {
          return std::none_of(entries_.begin(), entries_.end(),
                              [](const park_entry& e) { return e.linked; });
        },
        "parking: no entry of a stream stays linked in a pool between its parks");
    if (entries_.size() < pools) entries_.resize(pools);  // none linked
    const std::uint32_t seen = seq_.load(std::memory_order_acquire);
    parks_.store(parks_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    parked_.store(true, std::memory_order_seq_cst);
    return seen;
  }
  /// The entry for the stream's `i`-th pool while it parks.
  park_entry& entry(std::size_t i) noexcept {
    assert_invariant([this, i] { return i < entries_.size(); },
                     "parking: an entry per pool was made by announce()");
    return entries_[i];
  }
  /// `limit`, stretched while parks keep ending with nothing to do: each such park doubles it, up
  /// to `cap` (or `limit` when that is longer), so that many idle streams do not wake ten times a
  /// second each for nothing. The limit is a safety net against missed wake-ups; what wakes the
  /// stream for real still does at once.
  std::chrono::nanoseconds stretched(std::chrono::nanoseconds limit,
                                     std::chrono::nanoseconds cap) const noexcept {
    if (idle_parks_ == 0) return limit;
    cap = std::max(limit, cap);
    const unsigned shift = std::min(idle_parks_, 20u);
    return limit.count() > (cap.count() >> shift) ? cap : limit * (std::int64_t{1} << shift);
  }
  /// True when stretched(limit, cap) has reached its cap: the stream has been idle about `cap`.
  bool reached_cap(std::chrono::nanoseconds limit, std::chrono::nanoseconds cap) const noexcept {
    if (idle_parks_ == 0) return false;
    cap = std::max(limit, cap);
    const unsigned shift = std::min(idle_parks_, 20u);
    return limit.count() > (cap.count() >> shift);
  }
  /// Marks the coming sleep as deep (true) or the deep sleep as over (false); the stream only.
  void set_deep(bool deep) noexcept {
    deep_.store(deep, deep ? std::memory_order_seq_cst : std::memory_order_relaxed);
  }
  /// True while the stream sleeps deep. Any thread; may be stale.
  bool deep() const noexcept { return deep_.load(std::memory_order_seq_cst); }
  /// Sleeps until wake() (after announce() returned `seen`) or `limit`; may wake spuriously.
  void sleep(std::uint32_t seen, std::chrono::nanoseconds limit) noexcept {
    futex_wait(&seq_, seen, limit);
  }
  /// Ends the park: clears the flag. `idle`: the park ran to its limit; it counts as idle (and
  /// stretches the next one) if no wake-up came since announce() returned `seen` and `no_work`.
  template <class NoWork>
  void end(std::uint32_t seen, bool idle, NoWork&& no_work) noexcept {
    assert_invariant([this] { return parked_.load(std::memory_order_relaxed); },
                     "parking: a park ends once, after its announce()");
    parked_.store(false, std::memory_order_relaxed);
    // Woken (wake bumped the word) or work found anyway (a missed wake-up): back to the base.
    if (idle && seq_.load(std::memory_order_relaxed) == seen && no_work()) {
      ++idle_parks_;
    } else {
      idle_parks_ = 0;
    }
  }
  /// True when wake() was called since announce() returned `seen`. The stream only.
  bool woken_since(std::uint32_t seen) const noexcept {
    return seq_.load(std::memory_order_relaxed) != seen;
  }
  /// Wakes the stream from sleep(), or makes its next sleep() return at once. Any thread.
  void wake() noexcept {
    seq_.fetch_add(1, std::memory_order_release);
    futex_wake(&seq_, 1);
  }
  /// True while the stream parks; `order` as the caller's protocol needs. Any thread.
  bool parked(std::memory_order order = std::memory_order_acquire) const noexcept {
    return parked_.load(order);
  }
  /// Parks so far (revivals included). Any thread.
  std::uint64_t count() const noexcept { return parks_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint32_t> seq_{0};  // the futex word; bumped by wake()
  std::atomic<bool> parked_{false};
  std::atomic<std::uint64_t> parks_{0};  // written by the stream only
  std::atomic<bool> deep_{false};        // inside a deep park (stream::park, `deep`)
  unsigned idle_parks_ = 0;              // parks in a row that ran to their limit for nothing
  std::vector<park_entry> entries_;      // one per pool of the main scheduler, while parked
};

}  // namespace weft::detail
