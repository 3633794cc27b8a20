// SPDX-License-Identifier: Apache-2.0
// Unit dumps (weft/debug.hpp): the formatter behind dump_units, the dump signal, finalize's
// report of units it cannot finish, and the gdb extension's calls into a stopped process.
#pragma once

#include <cstddef>
#include <ostream>

#include "weft/work_unit.hpp"

namespace weft::detail {

class runtime_state;

/// What write_dump() prints.
struct dump_options {
  bool streams = true;
  bool units = true;
  bool backtraces = true;
  /// False for a debugger's call into a stopped process: locks a stopped thread may hold are
  /// tried, not waited for.
  bool wait_for_locks = true;
  /// A unit left out (finalize's caller, which is not abandoned).
  const work_unit* skip = nullptr;
};

/// Writes the streams and live units of `r`.
void write_dump(std::ostream& out, runtime_state& r, const dump_options& what);
/// Live units of `r` other than `except` (units not terminated).
std::size_t count_live_units(runtime_state& r, const work_unit* except);

/// Points weft_debug_info at the descriptors of `r` (nullptr: none), where a debugger that
/// cannot call into the process (a core file) finds them; init and finalize, under init's lock.
void publish_for_debuggers(runtime_state* r) noexcept;

/// Starts the thread that prints a dump to stderr whenever signal `sig` arrives (init).
void start_dump_signal(int sig);
/// Stops it and restores the signal's previous disposition (finalize; no effect when not started).
void stop_dump_signal() noexcept;

}  // namespace weft::detail
