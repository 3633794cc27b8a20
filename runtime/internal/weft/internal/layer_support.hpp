// SPDX-License-Identifier: Apache-2.0
// What a layer built on weft (the Argobots-compatible C API in abt/) needs from the runtime beyond
// weft's public API: a read-only view of the descriptor (weft/internal/unit_view.hpp) and a call
// for each change the layer makes to one (its home pool, a pin, a self-freeing unit, a stand-in
// for code that runs outside any unit), switches (suspend-and-switch, exit-and-switch), a
// join-and-free in one call, yields that report misuse instead of throwing, user stacks, a join
// that keeps placement, the error of a unit, the unit events of a tool interface and what a
// blocked unit waits for. Internal to the project: the weft_internal CMake target puts it on the
// include path of the runtime and of the layer; it is not installed, and the functions it
// declares are exported from libweft.so for the layer only (cmake/libweft.map).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>

#include "weft/internal/unit.hpp"
#include "weft/internal/unit_view.hpp"
#include "weft/work_unit.hpp"

namespace weft::detail {

/// Resumes the user-suspended ULT `u` as weft::resume does, but leaves it ready in no pool, held
/// for the caller to switch to at once (yield_and_switch, suspend_and_switch, exit_and_switch):
/// no other stream can take it first. Where the calling stream may not run `u` (it is pinned to
/// another stream or about to migrate, or the caller is no work unit) it is queued as
/// weft::resume queues it. True when held; then the caller must switch to it or queue it. Throws
/// as weft::resume.
bool resume_held(work_unit* u);

/// Yields the calling ULT (it goes back to its pool, ready) and runs `target` next on the calling
/// stream, in one switch, as this_unit::yield_to does, but `target` may also be a ready ULT in no
/// pool (popped by the caller): it never passes through a pool another stream could pop it from.
/// Returns false, having done nothing, when `target` cannot be run so (see suspend_and_switch);
/// true once the caller runs again. Call from a ULT, the primary ULT included.
bool yield_and_switch(work_unit* target);

/// submit_unit() of the allocated unit `u` into `p` followed by a yield of the calling ULT to it,
/// in one switch: `u` runs next on the calling stream without ever being queued (the caller is),
/// as Argobots' create-to and revive-to do. Where the stream cannot run a ULT `u` (a tasklet, or
/// the caller is no ULT) `u` is queued and the caller yields to it as this_unit::yield_to does.
void submit_and_yield_to(work_unit* u, pool& p);

/// Suspends the calling ULT and runs `target` next on the calling stream, in one switch: the
/// caller is suspended (resumable with weft::resume) before `target` runs. `target` must be a
/// ready ULT this stream may run: one queued in a pool this stream may take it out of, or one
/// that is in no pool (popped by its owner). Returns false, having done nothing, when it is not;
/// true once the caller has been resumed. Call from a ULT.
bool suspend_and_switch(work_unit* target);

/// Ends the calling ULT and runs `target` (as for suspend_and_switch) next, in one switch. The
/// caller's callable must be done with: what weft does once a callable returns (the destroy hook,
/// the unit's local values) happens here, the caller's stack is given back and the caller
/// completes (its joiner wakes, a detached one is freed) once `target` has the stream. Returns
/// false, having done nothing, when `target` cannot be run so; does not return otherwise.
bool exit_and_switch(work_unit* target);

/// Makes a ULT that was allocated but not submitted yet run on [lo, lo + size) instead of a stack
/// weft maps (Argobots' ABT_thread_attr_set_stack). The memory stays the caller's: weft neither
/// caches nor unmaps it, and it has no guard page; it must outlive the ULT.
void set_user_stack(work_unit* u, void* lo, std::size_t size) noexcept;

/// wait_unit() that never runs `u` on the caller's stream: the caller blocks until the stream
/// that pops `u` has run it (the Argobots layer, whose programs count on placement).
void wait_unit_in_place(work_unit* u);

/// submit_unit() for a C layer's create that ends in it: queues the allocated unit `u` in `p` and
/// returns 0 (the layer's status for success), so that the layer's call is a tail call of this
/// one and the unit's creator returns straight from here. Any thread, as submit_unit().
int submit_and_succeed(work_unit* u, pool& p) noexcept;

/// submit_and_succeed() for a unit that frees itself when it ends: marked so before anyone can
/// see it, which a create of an unnamed unit needs (nobody will join it).
int submit_detached_and_succeed(work_unit* u, pool& p) noexcept;

/// Makes `p` the pool `u` goes back to when it becomes ready: for a unit the caller is about to
/// push into `p` itself, or one whose next pool a layer chooses (Argobots' associated pool). The
/// caller keeps `u` from being queued meanwhile.
void set_home(work_unit* u, pool& p) noexcept;

/// Makes the allocated, not yet submitted unit `u` run on `s` only.
void pin_unit(work_unit* u, execution_stream& s) noexcept;

/// A ULT descriptor that stands for code running outside any unit (a user scheduler's loop, which
/// the layer's clients see as a ULT): reported as running on the calling stream, never queued and
/// never run. Freed with discard_unit(). Throws as allocate_unit().
[[gnu::returns_nonnull]] work_unit* allocate_stand_in();

/// Where a layer's join (join_and_free(), wait_unit_helping()) may run the unit it waits for.
enum class join_help : std::uint8_t {
  none,  // never on the caller's stream (wait_unit_in_place)
  // On the caller's stream when the unit is ready in the joiner's own pool, which one stream
  // consumes, and the caller may take it out: as wait_unit does, and, from a pool of the stream's
  // own scheduler, also when the unit is the one unit queued in that scheduler's pools (the unit
  // the scheduler runs next anyway, so that the order of its pools is kept). The caller then runs
  // it in place, on its own stack when enough of it is left (else by a direct switch). Not for a
  // pinned joiner (its pin would hold the unit); a joiner whose stack went to another stream with
  // the unit (it migrated) yields back into its own pool before the join returns.
  same_pool,
};

/// wait_unit() for a layer's join: waits for `u` to terminate, running it on the caller's stream
/// where `help` allows (join_help). The caller checked what check_join() checks (`u` is not the
/// caller, nobody else joins it, the caller is not a tasklet). Call from a ULT or an external
/// thread; throws what wait_unit() throws.
void wait_unit_helping(work_unit* u, join_help help);

/// Why join_and_free() did not free the unit (what it passes its fallback).
enum class join_result : std::uint8_t {
  kept,     // it terminated and holds extras (unit_error may be set): free it with discard_unit
  refused,  // nothing was done: the caller is the unit, another joiner waits for it, or the
            // caller is a tasklet and the unit has not terminated
  threw,    // the wait threw (the fallback runs inside the catch block)
};

/// What a C layer's join-and-free does when the runtime did not free the unit; `context` is
/// what the layer passed along. Returns the layer's status code.
using join_fallback = int (*)(void* context, join_result why) noexcept;

/// A layer's join-and-free in one call: waits for `u` to terminate (a ULT blocks, an external
/// thread sleeps), frees it, stores a null pointer in the pointer-sized handle at `slot`, and
/// returns 0; otherwise returns otherwise(context, why), `u` left as join_result says. The
/// caller checked what the runtime cannot (`u` is not the primary ULT; no tool needs to see the
/// wait). The layer's call ends in a tail call of this one, so that no frame of the layer lies
/// on the joiner's stack while it waits.
int join_and_free(work_unit* u, void* slot, join_help help, join_fallback otherwise,
                  void* context) noexcept;

/// What a C layer's call returns when the runtime did not carry it out: `context` is what the
/// layer passed along; `threw` tells that an exception escaped, and the handler then runs inside
/// the catch block (it may rethrow to read the exception). Returns the layer's status code.
using c_refusal = int (*)(void* context, bool threw) noexcept;

/// this_unit::yield() for a C layer whose calls return a status: yields the calling ULT and
/// returns 0 once it has its stream again; returns refused(context, false), having done nothing,
/// when the caller is not a ULT, and refused(context, true) when the yield threw. The layer's
/// call ends in a tail call of this one, so that no frame of the layer lies on the ULT's stack
/// across the switch: one more call level there costs about a fifth of a yield's time.
int checked_yield(c_refusal refused, void* context) noexcept;

/// this_unit::yield_to() for a C layer, as checked_yield(): returns 0 once the caller has its
/// stream again (after a plain yield when `target` could not be taken), refused(context, false)
/// when the caller is not a ULT or `target` is null, the caller or not a ULT.
int checked_yield_to(work_unit* target, c_refusal refused, void* context) noexcept;

/// The exception that escaped the terminated unit `u` (null if none), left in place for its
/// join; for layers whose join does not rethrow (the Argobots C API).
std::exception_ptr unit_error(const work_unit* u) noexcept;

/// Unit events reported to the hook (the Argobots tool interface's thread events).
enum class unit_event : std::uint8_t { create, run, yield, suspend, resume, finish, join, free };

/// Receives every unit event while installed; runs on the thread where the event happens (in a
/// scheduler context for `run` and for some `resume`s) and must not block.
using unit_event_hook = void (*)(work_unit* u, unit_event e) noexcept;

/// Installs `hook` (nullptr: none). Events that happen while it is being replaced may go to
/// either hook.
void set_unit_event_hook(unit_event_hook hook) noexcept;

/// The bits of unit::flags above unit_flags: the wait_kind of a ULT blocked in a wait queue
/// or a sleep (0 otherwise), for unit dumps. Written by the ULT itself, around its switch.
inline constexpr unsigned unit_wait_shift = 2;

/// What a blocked ULT waits for (a wait_kind value), 0 when it did not record it.
inline std::uint8_t wait_kind_of(const work_unit* u) noexcept {
  return static_cast<std::uint8_t>(as_unit(u)->flags >> unit_wait_shift);
}

}  // namespace weft::detail
