// SPDX-License-Identifier: Apache-2.0
// The pool interface: where ready work units wait for a scheduler.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>

#include "weft/detail/current_stream.hpp"
#include "weft/work_unit.hpp"

namespace weft {

namespace detail {
class stream;
class pool_access;
struct park_entry;
}  // namespace detail

/// Which streams may push and pop concurrently. It is a promise made by whoever builds the
/// schedulers: the runtime routes its own pushes (wake-ups, migrations, creations from other
/// streams) through the producer stream's inbox whenever a mode allows one producer only, so a
/// single-producer pool only ever sees pushes from its producer stream.
enum class access_mode {
  priv,  ///< One stream pushes and pops. No atomics at all.
  spsc,  ///< One producer stream, one consumer stream.
  mpsc,  ///< Any thread pushes, one consumer stream pops.
  spmc,  ///< One producer stream, any stream pops.
  mpmc,  ///< Anyone pushes and pops.
};

/// True for the modes in which only the producer stream may push.
constexpr bool single_producer(access_mode m) noexcept {
  return m == access_mode::priv || m == access_mode::spsc || m == access_mode::spmc;
}

/// True for the modes in which only one stream may pop.
constexpr bool single_consumer(access_mode m) noexcept {
  return m == access_mode::priv || m == access_mode::spsc || m == access_mode::mpsc;
}

/// A pool of ready work units. Implementations (schedulers/ has the stock ones) honour the access
/// mode they are built for and nothing more: for `priv` neither push nor pop may race with any
/// other call; for `spsc` one push may race with one pop; for `mpsc` pushes race with each other
/// and with one pop; `spmc` and `mpmc` likewise with many pops. `size()` may be called from any
/// thread and may be stale. None of the operations may block, allocate on the fast path or throw,
/// except `pop_wait`, which may sleep up to its timeout.
///
/// `push` is not virtual (the std::pmr::memory_resource pattern): implementations provide
/// do_push(), and the base class adds what every pool owes the runtime, waking a stream that
/// parked waiting for work in this pool. An implementation therefore needs no wake-up logic of
/// its own; `size()` must count a pushed unit by the time do_push() returns, since a parking
/// stream decides to sleep by reading it.
class pool {
 public:
  explicit pool(access_mode mode) noexcept : mode_(mode) {}
  virtual ~pool();
  pool(const pool&) = delete;
  pool& operator=(const pool&) = delete;

  /// Adds a ready unit (do_push), then wakes one stream parked on this pool, if any. Called by the
  /// runtime and by schedulers, honouring the access mode. Costs a fence only for pushes that a
  /// parked stream could be waiting for (not from a single-consumer pool's own consumer).
  void push(work_unit* u) noexcept;
  /// Takes a unit, or returns nullptr when the pool is empty.
  virtual work_unit* pop() noexcept = 0;
  /// Like pop(), but waits up to `timeout` for a push when empty. The default polls with backoff;
  /// stock pools sleep on a futex and wake on push.
  virtual work_unit* pop_wait(std::chrono::nanoseconds timeout) noexcept;
  /// Takes `u` out of the pool if it is queued here. Used by yield_to and migration; a pool that
  /// cannot do it returns false (the default) and those operations fall back gracefully.
  virtual bool remove(work_unit* u) noexcept;
  /// Number of queued units; may be stale when other streams push or pop concurrently.
  virtual std::size_t size() const noexcept = 0;

  /// True when size() is 0.
  bool empty() const noexcept { return size() == 0; }
  /// The access mode this pool was built for.
  access_mode access() const noexcept { return mode_; }
  /// The stream allowed to push directly in single-producer modes (nullptr: not yet attached).
  execution_stream* producer() const noexcept;
  /// The stream that pops from a single-consumer pool (nullptr: not yet attached, or a
  /// multi-consumer mode). Pools may use it to give their consumer a fast path.
  execution_stream* consumer() const noexcept;
  /// Names the producer stream of a single-producer pool. By default the first stream whose main
  /// scheduler uses the pool becomes its producer.
  void set_producer(execution_stream& s) noexcept;
  /// The stream that owns a work-stealing pool (set_owner), or nullptr.
  execution_stream* owner() const noexcept;
  /// Number of schedulers currently using this pool.
  int attached_schedulers() const noexcept { return attached_.load(std::memory_order_acquire); }
  /// True when the calling thread is the stream that pops this single-consumer pool (consumer()):
  /// its pushes race with none of its own pops, so a pool may give them a lane without atomics.
  /// One thread-local load and one relaxed load; may be stale only for other streams' pools.
  bool caller_is_consumer() const noexcept {
    detail::stream* s = detail::tls_stream;
    return s && consumer_.load(std::memory_order_relaxed) == s;
  }
  /// True when the calling thread is the stream that owns this pool (owner(), set_owner). Costs
  /// what caller_is_consumer() costs.
  bool caller_is_owner() const noexcept {
    detail::stream* s = detail::tls_stream;
    return s && owner_.load(std::memory_order_relaxed) == s;
  }

 protected:
  /// Adds a ready unit; what push() does before the wake-up. Same races as the mode allows push.
  virtual void do_push(work_unit* u) noexcept = 0;
  /// Adds a unit that yielded: where it goes so that the units queued beside it run before it
  /// again. The default is do_push(), right for a FIFO pool; a LIFO pool puts yielders at its
  /// other end. Called by the runtime wherever it would call do_push() for a yield.
  virtual void do_push_yield(work_unit* u) noexcept { do_push(u); }
  /// do_push_yield(u), then pop(), as one call: what a yield does when the scheduler lets the
  /// yielding ULT choose its successor (scheduler::push_pop_yielder). Called only by a
  /// single-consumer pool's consumer stream that is also its producer in single-producer modes,
  /// or by an owned pool's owner stream, so it races only with the pushes (and, for an owned
  /// pool, the thefts) of other streams that the mode allows. The default makes the two calls; a
  /// pool with nothing else queued may hand `u` straight back.
  virtual work_unit* do_push_pop(work_unit* u) noexcept;
  /// Makes `s` the owner of this pool, for a work-stealing pool whose owner keeps a part of it
  /// that other streams cannot take from: the owner's pushes (creations and wake-ups on its
  /// stream) go there without a fence, since the owner runs what it pushes itself if no thief
  /// comes, and a unit the owner pushes with do_push_yield() stays invisible to other streams
  /// until the owner pops it, so that a yielding ULT may queue itself while it still runs.
  /// An owned pool must be multi-consumer (mpmc or spmc) and its owner may push in any mode.
  /// Call it from the scheduler that serves the pool on `s`, before `s` pushes into it.
  void set_owner(execution_stream& s) noexcept;
  /// Gives up the owner: from now on every stream's pushes are other streams' pushes. The owner
  /// calls it when it stops serving the pool, after making what only it could see visible.
  void clear_owner() noexcept;
  /// True when a stream is parked waiting for a push into this pool (may be stale). An owned
  /// pool may use it to make what only its owner sees visible to others when they are idle.
  bool has_parked_streams() const noexcept { return parked_.load(std::memory_order_relaxed) != 0; }
  /// Wakes one stream parked on this pool, if any and if no stream serving the pool is looking
  /// for work already (what push() does after do_push()).
  void wake_one_parked() noexcept {
    if (wants_wake()) wake_parked();
  }

 private:
  friend class detail::pool_access;
  void wake_parked() noexcept;
  /// A push wakes a parked stream only while no stream that serves this pool is spinning for
  /// work: a spinning one finds the unit itself, and waking a second thief for the same unit
  /// costs the pusher a system call for nothing (Go's scheduler keeps to the same rule). The
  /// spinner that stops wakes a parked stream when it leaves units behind (see scheduler.cpp).
  bool wants_wake() const noexcept {
    return parked_.load(std::memory_order_relaxed) != 0 &&
           spinning_.load(std::memory_order_relaxed) == 0;
  }

  access_mode mode_;
  // Streams parked on this pool (see stream::park): an intrusive list under park_lock_, and its
  // length, which push() reads after a fence.
  std::atomic<std::uint32_t> parked_{0};
  // Streams serving this pool that are idle and spinning, not yet parked (pool_access).
  std::atomic<std::uint32_t> spinning_{0};
  std::atomic<bool> park_lock_{false};
  detail::park_entry* park_head_ = nullptr;
  std::atomic<detail::stream*> producer_{nullptr};  // single-producer modes
  std::atomic<detail::stream*> consumer_{nullptr};  // single-consumer modes
  std::atomic<detail::stream*> owner_{nullptr};     // owned (work-stealing) pools
  std::atomic<int> attached_{0};
};

}  // namespace weft
