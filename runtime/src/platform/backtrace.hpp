// SPDX-License-Identifier: Apache-2.0
// Backtraces of parked ULTs, unwound from their saved contexts with libunwind.
#pragma once

#include <ostream>

namespace weft::detail {

/// Writes the frames of the context saved at `fctx` (the fcontext of a ULT that is not running),
/// one "<indent>#N 0xADDRESS function+offset[ at FILE:LINE]" line each, innermost first.
/// libunwind is loaded on first use (libunwind.so.8, privately: its _Unwind_* functions must not
/// replace the C++ runtime's); without it, writes one line saying so. FILE:LINE comes from debug
/// information through libdw.so.1, also loaded privately on first use; without it, or without
/// debug information for a frame, that frame has no FILE:LINE. Not async-signal-safe (it loads
/// libraries, reads files and allocates): call it outside signal handlers. False when nothing
/// could be unwound.
bool write_saved_backtrace(std::ostream& out, void* fctx, const char* indent);

}  // namespace weft::detail
