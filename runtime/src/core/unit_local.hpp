// SPDX-License-Identifier: Apache-2.0
// ULT-local storage, the runtime's side: tearing down a unit's values when it terminates.
#pragma once

#include "core/unit_extras.hpp"

namespace weft::detail {

/// Runs the destructors of the values a unit stored under local keys and frees its table, leaving
/// x.locals empty (called through settle_extras, in the unit, after its callable was destroyed).
/// No-op when the unit stored nothing.
void run_local_destructors(unit_extras& x) noexcept;

}  // namespace weft::detail
