// SPDX-License-Identifier: Apache-2.0
// Which team the calling unit works in: the nesting level and the width of the enclosing teams,
// kept with the unit (its worker slot, or ULT-local storage) so that it follows a ULT across
// streams.
#pragma once

#include <weft/loops/options.hpp>

namespace weft::loops {

namespace detail {
struct worker_slot;
}

/// What a worker knows about the teams around it. Stored by pointer in ULT-local storage while
/// the worker runs; a unit without one is at level 0 (not inside any team).
struct nesting_frame {
  int level = 0;              ///< 1 inside an outermost team, 2 inside a team nested in it, ...
  int active_width = 1;       ///< product of the widths of the enclosing teams
  bool cannot_block = false;  ///< set while the caller of a tasklet team runs its share
};

/// The calling unit's frame; a level-0 frame (static, never modified) outside any team.
const nesting_frame& current_frame() noexcept;

/// Installs `f` as the calling unit's frame until destroyed, then restores the previous one.
/// Used by the team launcher for the caller's own share. Any unit or thread. In a unit the layer
/// created it only swaps a pointer in the unit's worker slot; elsewhere it uses ULT-local storage
/// and may allocate the unit's local-storage table on first use.
class frame_scope {
 public:
  explicit frame_scope(const nesting_frame* f);
  ~frame_scope();
  frame_scope(const frame_scope&) = delete;
  frame_scope& operator=(const frame_scope&) = delete;

 private:
  detail::worker_slot* slot_;
  const nesting_frame* saved_;
};

/// Number of live execution streams (1 when weft is not initialised).
int stream_count() noexcept;

/// The team width used when options::num_workers is 0: the number of streams at level 0; inside
/// a team, streams / active_width (at least 1), so that nesting never asks for more workers than
/// there are streams to run them. A nested team of width 1 runs inline in the caller.
int default_team_width(const nesting_frame& outer) noexcept;

/// Throws weft::error (errc::tasklet_cannot_block) when the caller cannot open a team that
/// needs to wait: a tasklet, or the caller's share of a tasklet team. `what` names the construct.
void require_blocking_caller(const char* what);

/// Throws weft::error (errc::not_initialized) when weft is not initialised.
void require_runtime(const char* what);

}  // namespace weft::loops
