// SPDX-License-Identifier: Apache-2.0
// Observation points: the runtime calls these where something worth seeing happens (a unit is
// created, starts or stops running, wakes another, is stolen, ...). Each keeps the stream's
// counters, which cost an increment on a field the stream owns, and otherwise tests one global
// flag: only while a trace is recorded or an Argobots tool callback is registered does anything
// leave the inline path (observe.cpp).
#pragma once

#include <atomic>
#include <cstdint>

#include "core/stream.hpp"
#include "observe/observe_state.hpp"
#include "weft/internal/layer_support.hpp"

#include <chrono>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace weft::detail {

/// Bits of g_watch: who observes.
inline constexpr std::uint8_t watch_trace = 1u << 0;  // a trace is being recorded
inline constexpr std::uint8_t watch_tool = 1u << 1;   // a unit-event hook is installed

/// Nonzero while anything observes; read (relaxed) by every observation point.
/// Hidden: read without a GOT indirection from inside the library.
[[gnu::visibility("hidden")]] extern constinit std::atomic<std::uint8_t> g_watch;

// unit_event, unit_event_hook and set_unit_event_hook(): weft/internal/layer_support.hpp.

/// The trace's time stamp: the TSC where there is one (converted to time when the trace is
/// written), else the steady clock's nanoseconds.
inline std::uint64_t trace_now() noexcept {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

namespace obs {

inline bool watching() noexcept {
  return g_watch.load(std::memory_order_relaxed) != 0;
}

// The out-of-line halves (observe.cpp), reached only while something observes. Cold: the
// compiler lays the calls out of the hot paths and does not let them shape the fast path.
[[gnu::cold]] void created_slow(work_unit* u) noexcept;
[[gnu::cold]] void run_begin_slow(stream& s, work_unit* u) noexcept;
[[gnu::cold]] void run_end_slow(stream& s) noexcept;
[[gnu::cold]] void event_slow(work_unit* u, unit_event e) noexcept;
[[gnu::cold]] void woken_slow(work_unit* u) noexcept;
[[gnu::cold]] void record_slow(stream* s, trace_kind what, std::uint64_t a, std::uint64_t b,
                               std::uint32_t c) noexcept;
/// Records the unit running on `s` (if any) as beginning a run now: the run a trace starts in.
void record_current(stream& s) noexcept;

/// `u` was created (any thread), before it is submitted.
inline void created(work_unit* u) noexcept {
  if (watching()) [[unlikely]]
    created_slow(u);
}
/// `u` starts (or resumes) running on `s`; `switched`: through a context switch.
inline void run_begin(stream& s, work_unit* u, bool switched) noexcept {
  (switched ? s.observer().runs_switched : s.observer().runs_direct).add();
  if (watching()) [[unlikely]]
    run_begin_slow(s, u);
}
/// The unit that ran on `s` switched back to the scheduler context (which then runs s.current(),
/// the stacked scheduler's ULT, if any).
inline void run_end(stream& s) noexcept {
  if (watching()) [[unlikely]]
    run_end_slow(s);
}
/// The tasklet `u` that ran on `s` ended: run_end() and finished() under one test, since a
/// tasklet's run and its life end together (the tasklet path is the cheapest create+join, where
/// each test shows).
inline void tasklet_ended(stream& s, work_unit* u) noexcept {
  if (watching()) [[unlikely]] {
    run_end_slow(s);
    event_slow(u, unit_event::finish);
  }
}
/// The yielding ULT `from` on `s` switches straight to `u` (a direct yield): yielded() and
/// run_begin() under one test, since a yield's switch is the shortest path the runtime has.
inline void yielded_to(stream& s, work_unit* from, work_unit* u) noexcept {
  s.observer().runs_switched.add();
  if (watching()) [[unlikely]] {
    event_slow(from, unit_event::yield);
    run_begin_slow(s, u);
  }
}
/// The yielding ULT `u` on `s` goes on at once (nothing else was ready): reported as a yield and
/// a new run, as a yield through the scheduler would be, so that every yield is followed by a run.
inline void yielded_in_place(stream& s, work_unit* u) noexcept {
  if (watching()) [[unlikely]] {
    event_slow(u, unit_event::yield);
    run_begin_slow(s, u);
  }
}
/// The ULT `self` on `s` blocks in a join and lends its stack to the ULT `u`, which starts on it
/// as a call: blocked() and run_begin() under one test. Always inline: the join that calls it is
/// large enough for the compiler to leave it out of line otherwise (a call per fork-join level).
[[gnu::always_inline]] inline void lent_stack(stream& s, work_unit* self, work_unit* u) noexcept {
  s.observer().runs_direct.add();
  if (watching()) [[unlikely]] {
    event_slow(self, unit_event::suspend);
    run_begin_slow(s, u);
  }
}
/// `u`, which ran on its joiner `self`'s stack and is still `s`'s running unit, finished, and
/// `self` goes on: finished(), woken() and run_begin() under one test. Always inline, as
/// lent_stack().
[[gnu::always_inline]] inline void stack_returned(stream& s, work_unit* u,
                                                  work_unit* self) noexcept {
  s.observer().runs_direct.add();
  if (watching()) [[unlikely]] {
    event_slow(u, unit_event::finish);
    woken_slow(self);
    s.switch_state().set_current(self);
    run_begin_slow(s, self);
  }
}
/// A ULT on `s` jumps to the scheduler context.
inline void to_scheduler(stream& s) noexcept {
  s.observer().to_scheduler.add();
}
/// `u` finished running its callable (before its joiner is woken).
inline void finished(work_unit* u) noexcept {
  if (watching()) [[unlikely]]
    event_slow(u, unit_event::finish);
}
/// `u`'s descriptor is given back.
inline void freed(work_unit* u) noexcept {
  if (watching()) [[unlikely]]
    event_slow(u, unit_event::free);
}
/// A join of `u` returned (u has terminated).
inline void joined(work_unit* u) noexcept {
  if (watching()) [[unlikely]]
    event_slow(u, unit_event::join);
}
/// A join of the finished `u` returned, and `u` is given back (a join's fast path).
inline void reaped(work_unit* u) noexcept {
  if (watching()) [[unlikely]] {
    event_slow(u, unit_event::join);
    event_slow(u, unit_event::free);
  }
}
/// The running ULT `u` blocks (or suspends itself).
inline void blocked(work_unit* u) noexcept {
  if (watching()) [[unlikely]]
    event_slow(u, unit_event::suspend);
}
/// The running ULT `u` yields.
inline void yielded(work_unit* u) noexcept {
  if (watching()) [[unlikely]]
    event_slow(u, unit_event::yield);
}
/// The blocked `u` is made ready by the caller (a unit, a scheduler, a timer or a thread).
inline void woken(work_unit* u) noexcept {
  if (watching()) [[unlikely]]
    woken_slow(u);
}
/// The calling stream tries to steal.
inline void steal_attempt() noexcept {
  if (stream* s = current_stream_no_switch()) s->observer().steal_attempts.add();
}
/// The calling stream stole `n` units, the first of them `u`.
inline void stole(work_unit* u, std::size_t n) noexcept {
  stream* s = current_stream_no_switch();
  if (!s) return;
  s->observer().steals.add(n);
  if (watching()) [[unlikely]]
    record_slow(s, trace_kind::steal, as_unit(u)->id, 0, static_cast<std::uint32_t>(n));
}
/// `u` moves to pool `to`, done by the calling stream.
inline void migrated(work_unit* u, const void* to) noexcept {
  stream* s = current_stream_no_switch();
  if (!s) return;
  s->observer().migrations.add();
  if (watching()) [[unlikely]]
    record_slow(s, trace_kind::migrate, as_unit(u)->id, reinterpret_cast<std::uintptr_t>(to), 0);
}
/// `s` goes to sleep (a slow path already: it ends in a futex wait); returns the time, for
/// park_end().
inline std::chrono::steady_clock::time_point park_begin(stream& s) noexcept {
  if (watching()) [[unlikely]]
    record_slow(&s, trace_kind::park_begin, 0, 0, 0);
  return std::chrono::steady_clock::now();
}
/// `s` wakes from the sleep that began at `since`.
inline void park_end(stream& s, std::chrono::steady_clock::time_point since) noexcept {
  const auto slept = std::chrono::steady_clock::now() - since;
  s.observer().parked_ns.add(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(slept).count()));
  if (watching()) [[unlikely]]
    record_slow(&s, trace_kind::park_end, 0, 0, 0);
}
/// A stacked scheduler starts (`begin`) or stops running on `s`.
inline void stacked(stream& s, bool begin) noexcept {
  if (watching()) [[unlikely]]
    record_slow(&s, begin ? trace_kind::stack_push : trace_kind::stack_pop, 0, 0, 0);
}
/// A shrink (or an expand) of `n` streams is handled by `s` (nullptr: a thread outside).
inline void resized(stream* s, bool shrink, std::size_t n) noexcept {
  if (watching()) [[unlikely]]
    record_slow(s, shrink ? trace_kind::shrink : trace_kind::expand, 0, 0,
                static_cast<std::uint32_t>(n));
}
/// `n` ULT stacks were mapped for the calling stream.
inline void mapped_stacks(std::size_t n) noexcept {
  if (stream* s = current_stream_no_switch()) s->observer().stacks_mapped.add(n);
}

}  // namespace obs

}  // namespace weft::detail
