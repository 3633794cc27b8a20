// SPDX-License-Identifier: Apache-2.0
// Starting a team: creates workers 1..n-1 as ULTs or tasklets, runs worker 0 in the caller, waits
// once for them all and rethrows the first exception. Every construct of the layer is built on
// launch().
#pragma once

#include <weft/loops/nesting.hpp>
#include <weft/loops/options.hpp>
#include <weft/loops/team_barrier.hpp>
#include <weft/loops/worker_unit.hpp>

#include <exception>
#include <memory>
#include <mutex>

namespace weft::loops::detail {

/// True when workers 1..n-1 go round-robin over the streams rather than into the caller's pool.
inline bool spreads(placement p, const nesting_frame& outer) {
  return p == placement::spread || (p == placement::automatic && outer.level == 0);
}

/// Collects the first real exception of a team; a team_aborted is only an echo of it.
class failure {
 public:
  void record(std::exception_ptr e) {
    std::lock_guard lock(mutex_);  // workers on several streams may fail at once
    try {
      std::rethrow_exception(e);
    } catch (const team_aborted&) {
      if (!echo_) echo_ = e;
    } catch (...) {
      if (!first_) first_ = e;
    }
  }
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
    if (echo_) std::rethrow_exception(echo_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_, echo_;
};

/// Runs guarded work of type G for worker w (the team_work::run of a launch).
template <class G>
void run_guarded(void* work, int w) noexcept {
  (*static_cast<G*>(work))(w);
}

/// Per-worker slots of a team: on the launcher's stack for small teams, one allocation for wide
/// ones (never one per unit).
class worker_slots {
 public:
  explicit worker_slots(int count)
      : heap_(count > inline_count ? std::make_unique<worker_slot[]>(count) : nullptr),
        slots_(heap_ ? heap_.get() : inline_) {}
  worker_slot& operator[](int i) noexcept { return slots_[i]; }

 private:
  static constexpr int inline_count = 16;
  worker_slot inline_[inline_count];
  std::unique_ptr<worker_slot[]> heap_;
  worker_slot* slots_;
};

/// Creates workers 1..width-1 of `team` as detached units (ULTs if `ults`, else tasklets)
/// running worker_entry() on slots[0..width-2], each starting with nesting frame `frame`: at
/// `spread` placement worker w goes to stream (caller's rank + w) mod streams, otherwise all go
/// into the caller's stream's main pool (the primary stream's for an external thread), and a ULT
/// caller then yields every 64 creations when the frame's active width (the product of the
/// enclosing teams' widths) exceeds 4096, so that the units created so far run (their
/// descriptors and stacks recycled while still in the cache) before it creates more: a very wide
/// nested team has at most ~64 units waiting at a time instead of all of them. Narrower teams
/// are created whole, which is cheaper while they fit in the caches. Terminates the
/// process if a creation fails (the units already started may be waiting for the missing one).
void start_workers(team_work& team, worker_slot* slots, int width, bool ults, bool spread,
                   const nesting_frame* frame) noexcept;

/// Runs `work(w)` for w = 0..width-1 in a team: w = 0 in the caller, the others in new units of
/// kind `units` at `spread` or local placement. `abort` (may be null) is called once a worker
/// throws, so that its team-mates blocked in a team barrier are released. Returns when all have
/// finished; rethrows the first exception. The caller must be able to block (checked by the
/// constructs). Each worker unit is created detached, runs worker_entry() on its slot and counts
/// itself done; the caller waits once for the whole team. No heap allocation per unit (teams
/// wider than 17 allocate their slot array once). Unit creation failing (out of memory)
/// terminates the process: the workers already started may be waiting for the missing one.
template <class Work>
void launch(int width, unit_type units, bool spread, const nesting_frame& outer, Work& work,
            team_barrier* abort) {
  const nesting_frame inner{outer.level + 1, outer.active_width * width, false};
  failure fail;
  auto guarded = [&](int w) noexcept {
    try {
      work(w);
    } catch (...) {
      fail.record(std::current_exception());
      if (abort) abort->abort();
    }
  };
  const bool ults = units == unit_type::ult;
  // The caller's share of a tasklet team keeps the tasklet rules, whatever the width, so that
  // what is allowed in a team does not depend on its width.
  nesting_frame caller_share = inner;
  caller_share.cannot_block = !ults;
  if (width <= 1) {
    frame_scope scope(&caller_share);
    guarded(0);
    fail.rethrow();
    return;
  }
  team_work team{&run_guarded<decltype(guarded)>, &guarded, team_done(width - 1)};
  worker_slots slots(width - 1);
  frame_scope scope(&caller_share);
  start_workers(team, &slots[0], width, ults, spread, ults ? &inner : &caller_share);
  guarded(0);
  team.done.wait();
  fail.rethrow();
}

}  // namespace weft::loops::detail
