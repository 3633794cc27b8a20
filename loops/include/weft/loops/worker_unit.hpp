// SPDX-License-Identifier: Apache-2.0
// The work units the layer creates: every worker 1..n-1 of a team is a ULT or tasklet running
// worker_entry() on a worker_slot, which is also how nested code finds its enclosing team.
#pragma once

#include <weft/loops/nesting.hpp>
#include <weft/loops/team_done.hpp>

namespace weft::loops::detail {

/// What every worker of one team shares: its work (type-erased) and the caller's completion wait.
struct team_work {
  void (*run)(void* work, int w) noexcept;  ///< runs worker w's share; catches everything
  void* work;                               ///< the launcher's callable
  team_done done;                           ///< the caller waits here once for all workers
};

/// One worker unit's argument: its team, its number and its current nesting frame. It lives in
/// the launcher's frame, which outlives the unit's run (the launcher waits for team_done).
struct worker_slot {
  team_work* team;
  const nesting_frame* frame;  ///< changed by frame_scope while the worker opens nested teams
  int w;
};

/// The entry point of every unit the layer creates (`arg`: its worker_slot): runs the worker's
/// share, then counts it done. current_frame() recognises the layer's units by this address, so
/// they need no ULT-local storage.
void worker_entry(void* arg) noexcept;

/// The calling unit's slot if the layer created it, else nullptr. Any context; no allocation.
worker_slot* current_worker() noexcept;

}  // namespace weft::loops::detail
