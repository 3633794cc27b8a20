// SPDX-License-Identifier: Apache-2.0
// Seeing inside a running program: a dump of every execution stream and live unit.
#pragma once

#include <iosfwd>

namespace weft {

/// Writes every execution stream and every live unit to `out`: id, kind, state, pool, stream,
/// what a blocked unit waits for, and a symbolised backtrace of every ULT that is not running.
/// Callable from any thread or unit while weft is initialised (errc::not_initialized otherwise).
/// The streams keep running meanwhile: a unit that changes state during the dump may be shown
/// in its old state. Setting WEFT_DUMP_SIGNAL makes a signal print the same dump to stderr.
void dump_units(std::ostream& out);

}  // namespace weft
