// SPDX-License-Identifier: Apache-2.0
// Execution traces in the Chrome trace event format (Perfetto and chrome://tracing open them):
// a track per execution stream, a slice per run of a unit, flow arrows from a unit's creation to
// its first run and from each wake-up to the run it allowed, and instants for steals,
// migrations, parks, stacked schedulers and shrink/expand events. See docs/tracing.md.
#pragma once

#include <string>

namespace weft::trace {

/// Starts recording; stop() (or finalize) writes the trace to `path`. Each stream records into
/// its own buffer without a lock; nothing is written to the file until flush() or stop().
/// Throws errc::not_initialized without a runtime and errc::invalid_state if a trace is being
/// recorded already.
void start(const std::string& path);

/// Stops recording and writes the trace to the file given to start(). Throws
/// errc::invalid_state if no trace is being recorded, errc::resource if the file cannot be
/// written (the events are then lost).
void stop();

/// Writes what has been recorded so far to the file given to start() (the whole trace, not just
/// what is new) and goes on recording. Throws as stop() does.
void flush();

/// True while a trace is being recorded.
bool active() noexcept;

}  // namespace weft::trace
