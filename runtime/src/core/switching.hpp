// SPDX-License-Identifier: Apache-2.0
// A stream's switching state: the unit it runs, the scheduler context that unit returns to, and
// what the direct switches (a ULT switching straight to the policy's next choice) need.
#pragma once

#include <utility>

#include "platform/assert.hpp"
#include "platform/jump.hpp"
#include "weft/internal/unit.hpp"

namespace weft {
class scheduler;
}

namespace weft::detail {

struct eh_globals;  // core/eh_state.hpp

/// The switching state of one stream. Owner: the stream's own thread, which alone writes it, in
/// the switch functions (context.cpp), the loop's run of a unit (stream::run_one, run_unit,
/// check_events) and the primary stream's set-up (runtime.cpp). Other threads read current()
/// only for reports (unit dumps), where a stale value is harmless.
class switching {
 public:
  // --- the running unit ---

  /// The unit running on the stream; nullptr while one of its schedulers runs.
  work_unit* current() const noexcept { return current_; }
  /// Makes `u` the running unit (nullptr: the scheduler context), just before the switch into
  /// it or just after the switch back.
  void set_current(work_unit* u) noexcept { current_ = u; }

  // --- the scheduler context ---

  /// The context the running unit returns to (the stream's scheduler, or the ULT of a stacked
  /// one); valid while a unit runs.
  fcontext scheduler_context() const noexcept { return sched_ctx_; }
  /// Records where the scheduler waits: set by land() when a scheduler switched into a unit, and
  /// once for the primary stream's fresh scheduler context.
  void save_scheduler_context(fcontext c) noexcept { sched_ctx_ = c; }
  /// The stack of that context (primary: mapped at init; secondary: its thread's own).
  const stack_region& scheduler_stack() const noexcept { return sched_stack_; }
  /// Sets the stream's scheduler stack, once, when the stream's scheduler context is made.
  void set_scheduler_stack(const stack_region& s) noexcept { sched_stack_ = s; }

  /// What enter() replaced, for leave().
  struct frame {
    work_unit* outer;  // the ULT that runs a stacked scheduler, or nullptr
    fcontext ctx;
    stack_region stack;
    scheduler* direct;
  };
  /// The scheduler side runs `u` next. Called from the stream's scheduler context, or from a ULT
  /// that runs a stacked scheduler: in that case the ULT is the scheduler `u` returns to, so
  /// its stack is the scheduler stack until leave(), and no direct switch is made (a stacked
  /// scheduler's loop chooses). `policy`: the main scheduler a ULT resumed by the stream's own
  /// loop asks when it switches (nullptr: the scheduler writes its loop, no direct switches).
  [[gnu::always_inline]] frame enter(work_unit* u, scheduler* policy) noexcept {
    assert_invariant([this, u] { return u != nullptr && u != current_; },
                     "invariant 4: the unit a scheduler enters is not the running one");
    const frame f{current_, sched_ctx_, sched_stack_, direct_};
    if (f.outer) sched_stack_ = as_unit(f.outer)->stack;
    direct_ = f.outer ? nullptr : policy;
    current_ = u;
    return f;
  }
  /// Back on the scheduler side once the unit entered with `f` switched back: restores what a
  /// stacked scheduler's run replaced.
  [[gnu::always_inline]] void leave(const frame& f) noexcept {
    current_ = f.outer;
    if (f.outer) {
      sched_ctx_ = f.ctx;
      sched_stack_ = f.stack;
      direct_ = f.direct;
    }
  }

  // --- the thread's C++ exception state ---

  /// The exception state of the stream's thread, tested by every switch (core/eh_state.hpp);
  /// nullptr where it stays per thread.
  eh_globals* eh_globals_of_thread() const noexcept { return eh_; }
  /// Records it; by the stream's thread, when it starts to run units.
  void set_eh_globals(eh_globals* g) noexcept { eh_ = g; }

  // --- direct switches ---

  /// The policy a switching ULT asks for the next unit, while the running ULT was resumed by the
  /// main scheduler's loop and that scheduler is a policy; nullptr otherwise.
  scheduler* direct_policy() const noexcept { return direct_; }
  /// True while direct choices are left before the scheduler must see one; when none is left,
  /// marks the skipped event check as due (run_unit() makes it) and returns false.
  bool direct_budget_left() noexcept {
    if (direct_left_ == 0) [[unlikely]] {
      events_due_ = true;
      return false;
    }
    return true;
  }
  /// Counts one direct choice (after direct_budget_left()).
  void spend_direct_choice() noexcept {
    assert_invariant([this] { return direct_left_ > 0; },
                     "switching: a direct choice is spent only while the budget lasts");
    --direct_left_;
  }
  /// Allows `n` direct choices until the next event check (set by each check).
  void refill_direct_budget(unsigned n) noexcept { direct_left_ = n; }
  /// Leaves `u`, popped by a direct switch that could not switch into it, for the scheduler
  /// side to run first (nullptr: nothing).
  void hand_off(work_unit* u) noexcept {
    assert_invariant([this, u] { return u == nullptr || handoff_ == nullptr; },
                     "invariant 2: one unit at a time is handed to the scheduler side");
    handoff_ = u;
  }
  /// Takes the unit hand_off() left, if any.
  work_unit* take_handoff() noexcept { return std::exchange(handoff_, nullptr); }
  /// True, once, when direct choices skipped an event check that must run now: not while an
  /// event check runs (it runs units itself).
  bool take_due_events() noexcept {
    if (!events_due_ || checking_events_) return false;
    events_due_ = false;
    return true;
  }

  /// Marks the stream as inside an event check for its lifetime. Nests: a stacked scheduler run
  /// from inside a check makes checks of its own, which restore the mark when they end.
  class event_check {
   public:
    explicit event_check(switching& s) noexcept
        : flag_(s.checking_events_), before_(std::exchange(flag_, true)) {}
    ~event_check() { flag_ = before_; }
    event_check(const event_check&) = delete;
    event_check& operator=(const event_check&) = delete;

   private:
    bool& flag_;
    bool before_;
  };

 private:
  work_unit* current_ = nullptr;  // the unit running on the stream, nullptr in the scheduler
  fcontext sched_ctx_ = nullptr;  // the scheduler context, saved while a unit runs
  scheduler* direct_ = nullptr;   // see direct_policy()
  unsigned direct_left_ = 0;      // direct choices before the scheduler must see one
  work_unit* handoff_ = nullptr;  // see hand_off()
  eh_globals* eh_ = nullptr;      // see eh_globals_of_thread()
  bool events_due_ = false;       // a direct choice found the budget spent
  bool checking_events_ = false;  // inside stream::check_events()
  stack_region sched_stack_;      // see scheduler_stack()
};

}  // namespace weft::detail
