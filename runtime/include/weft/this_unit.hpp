// SPDX-License-Identifier: Apache-2.0
// Operations on the calling work unit, in the manner of std::this_thread.
#pragma once

#include <chrono>
#include <cstddef>

#include "weft/work_unit.hpp"

namespace weft {

class pool;
class execution_stream;
class ult;

namespace this_unit {

/// The calling unit's descriptor: a ULT, a tasklet, or nullptr on an external thread (or in a
/// scheduler's own loop).
work_unit* current() noexcept;
/// The calling unit's id, 0 outside units.
unit_id id() noexcept;
/// True when called from a ULT (the primary thread after init is a ULT too).
bool is_ult() noexcept;
/// True when called from a tasklet.
bool is_tasklet() noexcept;
/// The stream the caller runs on, or nullptr on an external thread.
execution_stream* stream() noexcept;
/// Bytes of the calling ULT's stack below the caller's frame: how much deeper it may call
/// before it overflows (a ULT running on its joiner's stack counts what is left of that; the
/// primary ULT, what is left of its thread's stack). 0 where the runtime knows no stack for the
/// caller: on an external thread, in a tasklet, or on a stack the ULT switched to by itself.
/// Costs a thread-local read; for layers that choose between running work here and on a stack
/// of its own.
std::size_t stack_left() noexcept;

/// Puts the calling ULT back in its pool and lets the scheduler run something else.
/// Throws errc::tasklet_cannot_block in a tasklet and errc::not_in_ult on an external thread.
void yield();
/// Hands the core directly to `target`, a ready ULT, without passing through the scheduler; the
/// caller goes back to its pool. Returns false (after a plain yield) when `target` is not ready in
/// a pool that can remove it, is pinned elsewhere, or is the caller.
bool yield_to(work_unit* target);
/// Same, for a handle.
bool yield_to(const ult& target);
/// Blocks the calling ULT until another unit or thread calls resume() on it.
void suspend();
/// Ends the calling ULT now, unwinding its stack (destructors run). Joiners see a normal end.
[[noreturn]] void exit();
/// Blocks the calling ULT until `deadline`; its stream runs other work meanwhile (the deadline
/// sits in the stream's timer heap, no thread per sleeper). A deadline already past yields once.
/// On an external thread it is std::this_thread::sleep_until; a tasklet gets
/// errc::tasklet_cannot_block. A sleeping ULT wakes no earlier than `deadline`, and no later than
/// its stream's next scheduling point after it (timers are checked with the other events).
void sleep_until(std::chrono::steady_clock::time_point deadline);
/// Blocks the calling ULT for `d` at least (see sleep_until).
template <class Rep, class Period>
void sleep_for(std::chrono::duration<Rep, Period> d) {
  sleep_until(std::chrono::steady_clock::now() +
              std::chrono::ceil<std::chrono::steady_clock::duration>(d));
}
/// Moves the calling ULT to pool `p` and continues it there.
void migrate_to(pool& p);
/// Moves the calling ULT to stream `s` (its scheduler's migration pool) and continues it there.
void migrate_to(execution_stream& s);

}  // namespace this_unit
}  // namespace weft
