// SPDX-License-Identifier: Apache-2.0
// Which streams serve which pools: the one owner of a pool's producer, consumer and attachment
// count, and of the pools and timers that no running stream has (the orphans).
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "platform/locks.hpp"
#include "weft/detail/thread_annotations.hpp"
#include "weft/pool.hpp"

namespace weft::detail {

class stream;
class timer_heap;
struct timer_node;

/// Marks a single-producer pool whose producer stream has stopped: pushes take the orphan lock.
inline stream* const orphaned_producer = reinterpret_cast<stream*>(std::uintptr_t{1});

/// Every change of a pool's attachment goes through this class, under its one lock: a stream's
/// scheduler attaching its pools (start, revival, replacement), a stream's shutdown handing them
/// on, an adoption of orphans, `scheduler::add_pool`, a stacked scheduler entering and leaving,
/// and a push into a pool whose single producer has ended. It keeps, and in builds with
/// `WEFT_DEBUG_ASSERTS` checks, the invariants of docs/design.md about attachment:
///
///  5. a push into an attached single-producer pool runs on its producer's thread, or under this
///     lock when the producer is `orphaned_producer`;
///  6. an attached single-consumer pool has one consumer stream: a second stream's scheduler
///     never lists it (attach() drops it, add() refuses it);
///  7. `attached(p)` counts the schedulers that list `p` on streams that are not terminated, and
///     `p` is on the orphan list only while that count is 0.
///
/// Callers: the stream that changes its own scheduler's pools (from its thread, or while it is
/// terminated), and any stream serving orphans. Each call takes the lock once; none of them is on
/// a hot path (the flags has_orphans()/has_timers() are, and are one relaxed load).
class pool_attachment {
 public:
  using pool_list = std::vector<std::shared_ptr<pool>>;

  pool_attachment() = default;
  pool_attachment(const pool_attachment&) = delete;
  pool_attachment& operator=(const pool_attachment&) = delete;
  ~pool_attachment();

  /// The main scheduler of `s` takes `pools` (first start, revival, after a replacement): each
  /// leaves the orphan list, counts `s`, gets `s` as its single consumer and, when it has none,
  /// as its single producer. A single-consumer pool that another running stream serves is
  /// dropped from `pools` instead (invariant 6).
  void attach(stream& s, pool_list& pools);

  /// A replacement scheduler was attached on `s` (attach()); the old one's `old` pools leave it.
  /// A pool no other scheduler lists moves into `next` (its units must not be lost); one kept by
  /// another stream's scheduler stops having `s` as producer (unless `next` lists it too).
  void hand_over(stream& s, const pool_list& old, pool_list& next);

  /// `next` replaces the scheduler of the terminated stream `s`, whose `old` pools are not
  /// attached: `next` takes those that hold units. Attachment waits for the revival.
  void hand_over_unattached(const pool_list& old, pool_list& next);

  /// `s` shuts its scheduling down: it stops producing into `pools`, each counts it no more,
  /// and one that no scheduler lists becomes an orphan; the deadlines of `timers` are handed on.
  /// Never fails (an ending stream must not lose units: it waits for memory). True when another
  /// stream must look soon: timers were handed on or an orphan holds units.
  bool release(stream& s, const pool_list& pools, timer_heap& timers) noexcept;

  /// Moves the orphans (`busy_only`: those holding units) into `pools`, the main scheduler's of
  /// `s`, attached to `s`. True if any was adopted (the caller tells its scheduler).
  bool adopt(stream& s, pool_list& pools, bool busy_only) noexcept;

  /// `scheduler::add_pool` on `s`: attaches `p` to `s`. False (nothing done) when another stream
  /// attached as `p`'s single consumer serves it. `consumes` is set when `s` became its single
  /// consumer (a stacked scheduler's ULT must then stay on `s`).
  bool add(stream& s, const std::shared_ptr<pool>& p, bool& consumes);

  /// A stacked scheduler's `pools` are served from `here` for one run of its loop; `counted`: its
  /// earlier runs counted it already. True when `here` became the single consumer of one of
  /// them (the stacking ULT must then stay on `here`).
  bool attach_stacked(stream& here, const pool_list& pools, bool counted);

  /// The stacked scheduler is done: it counts no more, pools that nobody lists become orphans.
  /// True if any did (the stream's main scheduler should adopt them).
  bool detach_stacked(stream& here, const pool_list& pools);

  /// Pushes `u` into `p` under the orphan lock if `p`'s producer is still `orphaned_producer`;
  /// false (nothing done) if a stream adopted `p` meanwhile.
  bool push_orphaned(pool& p, work_unit* u);

  /// The producer `ended` of `p` terminated without handing `p` over: pushes take the lock.
  void orphan_producer(pool& p, stream* ended);

  /// One unit from an orphaned pool; nullptr when none holds any or another stream is at it
  /// (one pops at a time, so single-consumer orphans stay single-consumer).
  work_unit* pop_orphan() noexcept;

  /// Moves the deadlines handed on by stopped streams into `timers` (what does not fit for lack
  /// of memory waits for the next call).
  void take_timers(timer_heap& timers) noexcept;

  /// True when an orphaned pool holds units (for checks: takes the lock).
  bool orphans_hold_units() const;

  /// True while orphaned pools may hold units (any thread; may be stale).
  bool has_orphans() const noexcept { return has_orphans_.load(std::memory_order_relaxed); }
  /// True while deadlines wait to be taken over (any thread; may be stale).
  bool has_timers() const noexcept { return has_timers_.load(std::memory_order_relaxed); }

 private:
  /// Names `s` single consumer (and single producer when the old one is gone, `take_producer`
  /// forcing it) of `p`. Under mutex_.
  void serve_from(pool& p, stream& s, bool take_producer) WEFT_REQUIRES(mutex_);
  /// orphans_ for checks, which run in lambdas the analysis does not see the lock in (their
  /// caller holds mutex_).
  const pool_list& orphans_for_checks() const noexcept WEFT_NO_THREAD_SAFETY_ANALYSIS {
    return orphans_;
  }
  /// Removes `p` from orphans_ if it is there; true if it was.
  bool leave_orphans(const pool* p) WEFT_REQUIRES(mutex_);

  mutable mutex mutex_;
  pool_list orphans_ WEFT_GUARDED_BY(mutex_);
  std::vector<timer_node*> timers_ WEFT_GUARDED_BY(mutex_);
  std::atomic<bool> has_orphans_{false};
  std::atomic<bool> has_timers_{false};
};

}  // namespace weft::detail
