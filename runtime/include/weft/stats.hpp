// SPDX-License-Identifier: Apache-2.0
// Counters every execution stream keeps about itself (always on: an increment on a field the
// stream owns), and their sum. WEFT_STATS=1 prints them at finalize.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <vector>

namespace weft {

/// One stream's counters since it was created (or all streams' sum).
struct stream_stats {
  /// The stream's rank (-1 in runtime_stats::total).
  int rank = -1;
  /// Runs of units begun on the stream: a unit resumed three times counts three.
  std::uint64_t units_run = 0;
  /// Jumps between contexts: into a ULT, from one ULT to another, back to the scheduler.
  std::uint64_t context_switches = 0;
  /// Units taken from other streams' pools by a work-stealing scheduler.
  std::uint64_t steals = 0;
  /// Tries to take some (successful or not).
  std::uint64_t steal_attempts = 0;
  /// Times the stream went to sleep for want of work.
  std::uint64_t parks = 0;
  /// Time spent asleep.
  std::chrono::nanoseconds time_parked{0};
  /// Units moved to another pool (migrate_to) by this stream.
  std::uint64_t migrations = 0;
  /// ULT stacks mapped for this stream (cache misses that reached the kernel or a fresh arena).
  std::uint64_t stacks_mapped = 0;
};

/// The counters of every stream the runtime has had, by rank order, and their sum.
struct runtime_stats {
  /// One entry per stream, running or stopped, freed ones included.
  std::vector<stream_stats> streams;
  /// The sum over `streams`.
  stream_stats total;
};

/// The counters now. Values of other streams are read while they run, each one exact at some
/// recent moment. Throws errc::not_initialized without a runtime.
runtime_stats stats();

/// Prints `s` as a table (a row per stream, then the total).
void print_stats(std::ostream& out, const runtime_stats& s);

}  // namespace weft
