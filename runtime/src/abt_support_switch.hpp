// SPDX-License-Identifier: Apache-2.0
// Switches the Argobots layer needs and weft's public API does not offer: suspend-and-switch and
// exit-and-switch (ABT_self_suspend_to, ABT_self_exit_to and their resume_ forms). Private to the
// library: libweft-abt includes it from the source tree.
#pragma once

#include "weft/work_unit.hpp"

namespace weft::detail {

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

}  // namespace weft::detail
