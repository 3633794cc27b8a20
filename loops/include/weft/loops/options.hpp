// SPDX-License-Identifier: Apache-2.0
// What a parallel construct is asked for: team size, the kind of work unit its workers are, where
// they are placed, and the loop schedule.
#pragma once

#include <weft/loops/schedule.hpp>

namespace weft::loops {

/// The kind of work unit a team's workers (other than the caller) are.
///
/// ULTs may block: barriers, worksharing loops inside a region, in-region reductions, nested
/// regions, weft mutexes, MPI waits. Tasklets cannot block and cost less; they are allowed for
/// teams whose workers never wait for one another: parallel_for, parallel_reduce,
/// parallel_reduce_array (the caller then combines the partial results), and parallel() bodies that
/// use only thread_num()/num_threads()/critical(). Asking a tasklet team to wait throws
/// weft::error with errc::tasklet_cannot_block before any work of that construct starts.
enum class unit_type { ult, tasklet };

/// Where the workers of a team are created.
enum class placement {
  automatic,  ///< spread at the outermost level, local when nested in a team (see team_width())
  spread,     ///< worker w on stream (caller's rank + w) mod streams: every stream gets work
  local,      ///< every worker in the caller's stream's main pool: no cross-stream traffic
};

/// How a worker waits for its team-mates in a team-wide call (barrier, the end of for_loop,
/// reduce, reduce_array, single; the combine of a ULT team's parallel_reduce_array), as
/// OMP_WAIT_POLICY does for OpenMP threads.
enum class wait_policy {
  /// Spin 300,000 pause rounds (libgomp's default spin count; about 6 ms on current x86 cores)
  /// before blocking when the team has one worker per stream (spread placement, no wider than the
  /// streams); block at once in any other team, whose workers share streams.
  automatic,
  /// Spin about 2^22 pause rounds (tenths of a second) before blocking, in any team; a spinning
  /// ULT yields whenever other units are queued on its stream.
  active,
  /// Block at once: the worker's stream runs other units or parks.
  passive,
};

/// Options of parallel(), parallel_for() and the reductions. Zero means "the layer's default".
struct options {
  /// Workers in the team, the caller included. 0: default_team_width() (streams at the
  /// outermost level; streams / enclosing width, at least 1, when nested).
  int num_workers = 0;
  /// ULT or tasklet workers.
  unit_type units = unit_type::ult;
  /// Where workers 1..n-1 go.
  placement place = placement::automatic;
  /// The loop schedule (parallel_for and the reductions; worker_context::for_loop takes its own).
  schedule sched = {};
  /// How workers wait for each other (parallel() and a ULT team's parallel_reduce_array).
  wait_policy wait = wait_policy::automatic;
};

}  // namespace weft::loops
