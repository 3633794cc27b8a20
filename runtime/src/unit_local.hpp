// ULT-local storage, the runtime's side: tearing down a unit's values when it terminates.
#pragma once

#include "weft/work_unit.hpp"

namespace weft::detail {

/// Runs the destructors of the values `u` stored under local keys and frees its table (called
/// by run_callable, in the unit, after its callable was destroyed). No-op when u stored nothing.
void run_local_destructors(work_unit* u) noexcept;

}  // namespace weft::detail
