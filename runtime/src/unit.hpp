// Operations on work units shared by the runtime's translation units.
#pragma once

#include "stream.hpp"
#include "weft/work_unit.hpp"

namespace weft::detail {

/// Resets a recycled descriptor for a new unit.
void init_unit(work_unit* u, unit_kind kind, std::uint32_t stack_size, unit_id id) noexcept;
/// Pushes a ready unit into u->home, honouring the pool's access mode: single-producer pools
/// owned by another stream get it through that stream's inbox, orphaned ones under the orphan lock.
void route(work_unit* u) noexcept;
/// Marks `u` ready and routes it (applying a pending migration request).
void make_ready(work_unit* u) noexcept;
/// Publishes the termination of `u` to its joiner (or frees it when detached).
void complete(work_unit* u) noexcept;
/// Runs the callable of `u`, capturing what escapes it; destroys the callable.
void run_callable(work_unit* u) noexcept;
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
