// SPDX-License-Identifier: Apache-2.0
// Operations on work units shared by the runtime's translation units.
#pragma once

#include "core/stream.hpp"
#include "core/unit_extras.hpp"
#include "platform/assert.hpp"
#include "scheduling/pool_access.hpp"
#include "weft/internal/unit.hpp"

namespace weft::detail {

/// Resets a recycled descriptor for a new unit (inline: it is on every creation).
inline void init_unit(work_unit* w, unit_kind kind, std::uint32_t stack_size, unit_id id) noexcept {
  unit* const u = as_unit(w);
  u->pool_next = u->pool_prev = nullptr;
  u->pool_holder.store(nullptr, std::memory_order_relaxed);
  u->context = nullptr;
  u->stack = {};
  u->callable.invoke = nullptr;
  u->callable.destroy = nullptr;
  u->callable.entry_fn = nullptr;
  u->callable.entry_arg = nullptr;
  u->join_word.store(join_none, std::memory_order_relaxed);
  u->migrate_to.store(nullptr, std::memory_order_relaxed);
  u->home.store(nullptr, std::memory_order_relaxed);
  u->last_stream.store(nullptr, std::memory_order_relaxed);
  u->pinned_to.store(nullptr, std::memory_order_relaxed);
  u->extras = nullptr;
  u->id = id;
  u->stack_size = stack_size;
  u->state.store(unit_state::ready, std::memory_order_relaxed);
  u->user_suspended.store(false, std::memory_order_relaxed);
  u->kind = kind;
  u->flags = 0;
}
/// route() for every case but a push by the pool's own consumer.
void route_slow(work_unit* u) noexcept;

/// Pushes a ready unit into u->home, honouring the pool's access mode: single-producer pools
/// owned by another stream get it through that stream's inbox, orphaned ones under the orphan lock.
inline void route(work_unit* u) noexcept {
  assert_invariant(
      [u] {
        return as_unit(u)->home.load(std::memory_order_relaxed) != nullptr &&
               as_unit(u)->state.load(std::memory_order_relaxed) == unit_state::ready;
      },
      "invariant 2: a routed unit is ready and has a home pool");
  assert_invariant([u] { return u->pool_holder.load(std::memory_order_relaxed) == nullptr; },
                   "invariant 2: a routed unit is in no pool");
  // The common case inline: a stream pushing into a pool it consumes (a yield, a wake-up or a
  // creation on the unit's own stream), which needs no wake-up. consumer() is set for
  // single-consumer modes only; a single-producer mode also needs the stream to be its producer.
  pool& p = *as_unit(u)->home.load(std::memory_order_relaxed);
  stream* const here = current_stream_no_switch();
  if (pool_access::consumer(p, std::memory_order_relaxed) == here && here &&
      (!single_producer(p.access()) || pool_access::producer(p, std::memory_order_relaxed) == here))
      [[likely]] {
    pool_access::push_as_consumer(p, u);
    return;
  }
  // The other common case: a stream pushing into the work-stealing pool it owns.
  if (pool_access::owner(p, std::memory_order_relaxed) == here && here) [[likely]] {
    pool_access::push_as_owner(p, u);
    return;
  }
  route_slow(u);
}
/// True when the calling stream `here` may queue a unit in `p` that still runs: no other stream
/// can take it out before `here` pops it (`p`'s consumer and producer, or its owner, whose
/// yield pushes stay private).
inline bool queues_privately(pool& p, stream* here) noexcept {
  if (pool_access::owner(p, std::memory_order_relaxed) == here) return true;
  return pool_access::consumer(p, std::memory_order_relaxed) == here &&
         (!single_producer(p.access()) ||
          pool_access::producer(p, std::memory_order_relaxed) == here);
}
/// Marks `u` ready and routes it (applying a pending migration request).
inline void make_ready(work_unit* w) noexcept {
  unit* const u = as_unit(w);
  // Life cycle: only a unit that runs (and switches away) or is blocked becomes ready; a second
  // wake-up of one unit would queue it twice (invariant 2).
  assert_invariant(
      [u] {
        const unit_state st = u->state.load(std::memory_order_acquire);
        return st == unit_state::running || st == unit_state::blocked;
      },
      "invariant 2: make_ready() of a unit that is neither running nor blocked");
  if (u->migrate_to.load(std::memory_order_relaxed)) [[unlikely]] {
    if (pool* m = u->migrate_to.exchange(nullptr, std::memory_order_acq_rel))
      u->home.store(m, std::memory_order_relaxed);
  }
  u->state.store(unit_state::ready, std::memory_order_relaxed);
  route(u);
}
/// make_ready() for a ULT that yielded: it goes where its pool puts yielders (behind the units
/// queued beside it).
inline void make_ready_yielded(work_unit* u) noexcept {
  assert_invariant([u] { return as_unit(u)->kind == unit_kind::ult; },
                   "only a ULT yields (a tasklet runs to completion)");
  assert_invariant(
      [u] { return as_unit(u)->state.load(std::memory_order_relaxed) == unit_state::running; },
      "invariant 4: a yielding ULT is running until its landing requeues it");
  if (as_unit(u)->migrate_to.load(std::memory_order_relaxed)) [[unlikely]] {
    make_ready(u);
    return;
  }
  as_unit(u)->state.store(unit_state::ready, std::memory_order_relaxed);
  pool& p = *as_unit(u)->home.load(std::memory_order_relaxed);
  stream* const here = current_stream_no_switch();
  if (here && queues_privately(p, here)) [[likely]] {
    pool_access::push_yield_as_consumer(p, u);
    return;
  }
  route_slow(u);
}
/// Publishes the termination of `u` to its joiner (or frees it when detached).
void complete(work_unit* u) noexcept;
/// complete() for a unit whose end the caller has already reported (obs::tasklet_ended).
void complete_reported(work_unit* u) noexcept;
/// complete() for a ULT that ended on stream `here`, which chooses what runs next: returns the
/// ULT that joined `u` when it may run next on `here` without going through its pool (a pool
/// `here` owns, where it would be the first popped); else makes the joiner ready as complete()
/// does and returns nullptr. With `here` null, returns any ULT joiner unready for the caller.
work_unit* complete_to_joiner(work_unit* u, stream* here) noexcept;
/// Runs the callable of `w`, capturing what escapes it; destroys the callable.
void run_callable(work_unit* w) noexcept;
/// Recycles a terminated descriptor into the calling stream's cache (or the global allocator).
void free_unit(work_unit* u) noexcept;
/// Reports an exception that escaped a detached unit.
void report_detached_error(work_unit* u) noexcept;

/// True for the primary ULT. Compares with the runtime's record rather than reading u->flags,
/// which the stream holding the unit may be writing meanwhile.
bool is_primary_unit(const work_unit* u) noexcept;

/// Thrown by this_unit::exit() and caught at the bottom of the ULT: unwinds the ULT's stack.
struct unit_exit {};

}  // namespace weft::detail
