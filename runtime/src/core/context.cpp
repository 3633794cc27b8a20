// SPDX-License-Identifier: Apache-2.0
// Context switching. Every jump carries a switch_record saying what the context that leaves wants
// done with itself; the context that lands carries it out in land(), once the leaver's registers
// are saved. Doing the "after" work on the other side of the switch is what makes blocking
// race-free: a ULT is published as blocked (or pushed back to a pool) only when it no longer runs.
#include <boost/context/detail/fcontext.hpp>

#include "core/eh_state.hpp"
#include "core/stream.hpp"
#include "core/unit.hpp"
#include "memory/overflow.hpp"
#include "observe/observe.hpp"
#include "platform/assert.hpp"
#include "platform/sanitizer.hpp"

namespace weft::detail {

namespace bc = boost::context::detail;

namespace {

stack_region take_finished_stack(work_unit* w) noexcept;

/// The bottom of every ULT stack: runs the current unit, then parks. A parked entry loop stays on
/// its stack in the stream's stack cache and runs the next ULT that takes that stack, which saves
/// building a context per ULT.
[[noreturn]] void ult_entry(transfer t) noexcept {
  asan_finish_switch(nullptr);
  stream::land(t);
  for (;;) {
    // Ask each time: the previous ULT on this stack may have migrated to another stream, and
    // pass_stack() may have made the next one current.
    work_unit* self = current_stream()->current();
    assert_invariant(
        [self] {
          return self && as_unit(self)->kind == unit_kind::ult &&
                 as_unit(self)->state.load(std::memory_order_relaxed) == unit_state::running;
        },
        "invariant 4: the ULT an entry loop starts is its stream's current(), running");
    run_callable(self);
    stream* here = current_stream();
    // Straight on to the policy's choice when the main scheduler is a policy: on this
    // very stack if it is a ULT that never ran, else through a switch, and whoever runs next
    // frees this stack. The unit completes before the choice, so that a joiner it wakes on this
    // stream can be the choice: a fork-join parent goes on at once (a LIFO pool pops it first).
    // From here on only `rec.stack` is used, never `self`: its joiner may free it at any time.
    if (here->switch_state().direct_policy() && here->direct_allowed()) {
      switch_record rec{nullptr, switch_action::release_stack};
      rec.stack = take_finished_stack(self);
      work_unit* next = complete_to_joiner(self, here);
      if (!next) next = here->switch_state().direct_policy()->pick_next();
      if (here->pass_stack(rec.stack, next)) continue;
      here->switch_directly(next, rec);
    } else {
      switch_record rec{self, switch_action::terminate};
      here->switch_to_scheduler(rec);
    }
  }
}

/// Takes the stack of a ULT that has finished on it, after checking the stack's canary (while
/// the unit still holds the stack, so that the report names the unit and the stack's size).
stack_region take_finished_stack(work_unit* w) noexcept {
  unit* const u = as_unit(w);
  const stack_region stack = u->stack;
  assert_invariant([&stack] { return stack.lo != nullptr && !(stack.flags & stack_borrowed); },
                   "invariant 9: a ULT that ends on its own stack holds that stack");
  if (!stack_intact(stack)) report_stack_overflow(u);
  u->stack = {};
  u->context = nullptr;
  return stack;
}

/// Returns the stack of a ULT that ended to the stream's cache, with `parked`, the context that
/// left it (the ULT's entry loop, which the stack's next ULT resumes).
void release_finished_stack(stream& s, const stack_region& stack, void* parked) noexcept {
  assert_invariant([&s] { return current_stream_no_switch() == &s; },
                   "invariant 9: a finished stack is cached by the stream it ended on");
  if (stack.flags & stack_user)
    tsan_destroy_fiber(tsan_fiber(stack));  // the memory stays the user's
  else
    s.stacks().release(stack, parked);
}

/// Gives a unit that never ran its stack and its initial context.
void prepare_first_run(stream& s, work_unit* w) {
  unit* const u = as_unit(w);
  if (u->stack.flags & stack_user) {  // set_user_stack: the user's memory, set before submission
    u->context = bc::make_fcontext(static_cast<char*>(u->stack.lo) + u->stack.size, u->stack.size,
                                   &ult_entry);
    return;
  }
  void* const parked = s.stacks().acquire(u->stack_size, u->stack);
  if (tsan_enabled && !tsan_fiber(u->stack)) set_tsan_fiber(u->stack, tsan_create_fiber());
  u->context = parked ? parked
                      : bc::make_fcontext(static_cast<char*>(u->stack.lo) + u->stack.size,
                                          u->stack.size, &ult_entry);
}

}  // namespace

bool stream::pass_stack(const stack_region& stack, work_unit* w) noexcept {
  unit* const next = as_unit(w);
  // `next` must be a plain ULT of the default size that never ran (no context, no user stack),
  // free to run here; the stack a cached one of that size (not the user's, not a custom size).
  assert_invariant([&stack] { return stack.lo != nullptr; },
                   "invariant 9: a finished ULT passes on the stack it ran on");
  if (!next || next->kind != unit_kind::ult || next->context || next->stack.lo ||
      (next->stack_size != 0 && next->stack_size != stacks_.default_request()) ||
      next->pinned_to.load(std::memory_order_relaxed) ||
      next->migrate_to.load(std::memory_order_relaxed) || stack.size != stacks_.default_size() ||
      !(stack.flags & stack_arena)) {
    return false;
  }
  assert_invariant(
      [next] {
        const unit_state st = next->state.load(std::memory_order_relaxed);
        return st != unit_state::running && st != unit_state::terminated;
      },
      "invariant 3: a unit started on a passed stack runs nowhere else");
  next->stack = stack;
  switching_.set_current(next);
  next->last_stream.store(this, std::memory_order_relaxed);
  next->state.store(unit_state::running, std::memory_order_relaxed);
  obs::run_begin(*this, next, false);
  return true;
}

namespace {

/// Debug builds check a leaver's stack at each of its switches out: the stack pointer it saved
/// must lie within its stack, and the canary of a stack that has one instead of a guard page must
/// be intact. A frame that jumped over the canary (a large one that touched nothing below the
/// stack) is then reported at the leaver's next switch, while its stack pointer is still below
/// the stack, rather than never; release builds leave overflows to the guard page, the fault
/// handler and the check at the ULT's end. Stacks that are not weft's (the primary thread's, a
/// user's) are not checked: their bounds are what their owner says.
[[gnu::always_inline]] inline void check_leaver_stack(const work_unit* from,
                                                      const void* saved_sp) noexcept {
  if constexpr (asserts_enabled) {
    const stack_region& s = as_unit(from)->stack;
    if (!s.lo || (s.flags & (stack_foreign | stack_user))) return;
    if (static_cast<const char*>(saved_sp) < static_cast<const char*>(s.lo) || !stack_intact(s))
      report_stack_overflow(from);
  }
}

}  // namespace

/// A ULT that cannot get a stack ends at once; join rethrows why.
bool stream::try_prepare(work_unit* u) noexcept {
  try {
    prepare_first_run(*this, u);
    return true;
  } catch (...) {
    capture_error(u);
    if (as_unit(u)->callable.destroy) as_unit(u)->callable.destroy(u);
    as_unit(u)->callable.destroy = nullptr;
    complete(u);
    return false;
  }
}

template <bool inline_requeued, bool holds_no_eh_state>
[[gnu::always_inline]] inline void stream::jump_to(work_unit* w, switch_record& rec) {
  unit* const target = as_unit(w);
  assert_invariant([this, &rec] { return !rec.from || rec.from == switching_.current(); },
                   "invariant 4: the leaver of a jump is its stream's current() unit");
  assert_invariant(
      [target] {
        const unit_state st = target->state.load(std::memory_order_relaxed);
        return target->context != nullptr && target->kind == unit_kind::ult &&
               st != unit_state::running && st != unit_state::terminated;
      },
      "invariant 3: a jump enters a saved ULT context that runs nowhere else");
  switching_.set_current(target);
  target->last_stream.store(this, std::memory_order_relaxed);
  target->state.store(unit_state::running, std::memory_order_relaxed);
  if constexpr (inline_requeued) {
    obs::yielded_to(*this, rec.from, target);
  } else {
    obs::run_begin(*this, target, true);
  }
  rec.on_stream = this;
  eh_globals* const eh = switching_.eh_globals_of_thread();
  void* fake_stack = nullptr;
  asan_start_switch(&fake_stack, target->stack.lo, target->stack.size);
  transfer t;
  assert_invariant([eh] { return !holds_no_eh_state || !eh_held(eh); },
                   "a jump told the leaver holds no exception state finds none");
  if (!holds_no_eh_state && eh_held(eh)) [[unlikely]] {
    t = jump_to_peer_stowing(target->context, &rec, eh, tsan_fiber(target->stack));
  } else {
    tsan_switch(tsan_fiber(target->stack));
    t = jump_to_peer(target->context, &rec);
  }
  asan_finish_switch(fake_stack);
  // Most landings after a direct yield are another yielder's: take those without the call.
  if constexpr (inline_requeued) {
    if (auto* in = static_cast<switch_record*>(t.data); in->action == switch_action::requeued) {
      check_leaver_stack(in->from, t.fctx);
      as_unit(in->from)->context = t.fctx;
      return;
    }
  }
  land(t);
}

void stream::resume_unit(work_unit* w) {
  unit* const u = as_unit(w);
  if (!u->context && !try_prepare(u)) return;
  assert_invariant([u] { return u->kind == unit_kind::ult && u->context != nullptr; },
                   "a resumed ULT has a context to jump into");
  // Called from the stream's scheduler context, or from a ULT that runs a stacked scheduler
  // (switching::enter says what changes for the run of `u`).
  assert_invariant([this] { return current_stream_no_switch() == this; },
                   "a stream resumes units on its own thread only");
  assert_invariant(
      [u] {
        const unit_state st = u->state.load(std::memory_order_relaxed);
        return st != unit_state::running && st != unit_state::terminated;
      },
      "invariant 3: a unit resumed by a scheduler is not running elsewhere, nor ended");
  const switching::frame outer = switching_.enter(u, sched_->writes_loop_ ? nullptr : sched_.get());
  u->last_stream.store(this, std::memory_order_relaxed);
  u->state.store(unit_state::running, std::memory_order_relaxed);
  obs::run_begin(*this, u, true);
  switch_record rec;  // from = nullptr: the scheduler
  rec.on_stream = this;
  // The scheduler side is a context like any other (a stacked scheduler's ULT may be inside a
  // handler).
  eh_globals* const eh = switching_.eh_globals_of_thread();
  void* fake_stack = nullptr;
  asan_start_switch(&fake_stack, u->stack.lo, u->stack.size);
  transfer t;
  if (eh_held(eh)) [[unlikely]] {
    t = jump_stowing(u->context, &rec, eh, tsan_fiber(u->stack));
  } else {
    tsan_switch(tsan_fiber(u->stack));
    t = jump(u->context, &rec);
    assert_invariant([eh] { return !eh_held(eh); },
                     "exception state: every context leaves its thread's state empty");
  }
  asan_finish_switch(fake_stack);
  switching_.leave(outer);
  obs::run_end(*this);
  land(t);
}

bool stream::direct_allowed() noexcept {
  // The scheduler sees at least every event_freq-th choice, and every one while a request
  // (stop, join, replacement, adoption) waits: those are decided in its loop.
  if (!switching_.direct_budget_left()) [[unlikely]]
    return false;
  if (requests_.load(std::memory_order_relaxed) != 0) [[unlikely]]
    return false;
  switching_.spend_direct_choice();
  return true;
}

namespace {

/// switch_to_unit()'s body, inlined into switch_directly(): a fork-join spawn passes there twice
/// (the helping join into the child, the child's end back to its parent).
[[gnu::always_inline]] inline void switch_into(stream& s, work_unit* target, switch_record& rec) {
  if (!as_unit(target)->context && !s.try_prepare(target)) {
    // `target` ended without a stack (its join rethrows why), but the leaver must still leave:
    // returning here would let a blocking ULT run on holding its primitive's lock, a requeued
    // one run while queued, and a finished one run again.
    s.switch_to_scheduler(rec);
    return;
  }
  // Without the inline check: a terminating ULT's stack parks in this call, and its next user
  // lands here after a `terminate`, which the check would only delay.
  s.jump_to<false>(target, rec);
}

}  // namespace

void stream::switch_directly(work_unit* next, switch_record& rec) {
  if (next) {
    execution_stream* pin = as_unit(next)->pinned_to.load(std::memory_order_relaxed);
    if (as_unit(next)->kind == unit_kind::ult && (!pin || pin == this) &&
        !as_unit(next)->migrate_to.load(std::memory_order_relaxed)) [[likely]] {
      switch_into(*this, next, rec);
      return;
    }
  }
  // Nothing to run, or a unit only run_unit() knows how to treat (a tasklet, a unit pinned
  // elsewhere or migrating): run_unit() takes it right after the scheduler lands.
  switching_.hand_off(next);
  switch_to_scheduler(rec);
}

void stream::switch_out(switch_record& rec) {
  assert_invariant(
      [&rec] {
        return rec.from &&
               (rec.action == switch_action::block || rec.action == switch_action::suspend);
      },
      "switch records: switch_out() carries a unit that blocks or suspends");
  // As a finished ULT does (ult_entry): straight to the policy's choice, when the main
  // scheduler is a policy and something is ready; the lander carries out the record (marks the
  // leaver blocked, runs on_block) exactly as the loop would. switch_directly() takes a null
  // `next` (nothing ready) to the loop.
  if (scheduler* const policy = switching_.direct_policy(); policy && direct_allowed()) {
    switch_directly(policy->pick_next(), rec);
  } else {
    switch_to_scheduler(rec);
  }
}

bool stream::yield_directly(work_unit* w) {
  unit* const self = as_unit(w);
  // The yielder queues itself and asks the policy, as the loop would after a plain yield, so the
  // choice is the policy's for any pool discipline (FIFO, LIFO, ...). Being queued while still
  // running is safe only where no other stream can take it out: its home must be a pool this
  // stream consumes (and, single-producer, produces for).
  assert_invariant(
      [self] { return self->state.load(std::memory_order_relaxed) == unit_state::running; },
      "invariant 4: a yielding ULT is the running unit of its stream");
  pool& home = *self->home.load(std::memory_order_relaxed);
  // A yielder inside a catch handler or an unwinding goes through the scheduler, whose switch
  // keeps its exception state: tested once here, the direct jump below needs no test.
  if (!queues_privately(home, this) || self->migrate_to.load(std::memory_order_relaxed) ||
      eh_held(switching_.eh_globals_of_thread()) || !direct_allowed()) {
    return false;
  }
  self->state.store(unit_state::ready, std::memory_order_relaxed);
  work_unit* const next = switching_.direct_policy()->pick_after_yield(self, home);
  if (next == self) {  // nothing queued ahead of it: it goes on
    self->state.store(unit_state::running, std::memory_order_relaxed);
    obs::yielded_in_place(*this, self);
    return true;
  }
  switch_record rec{self, switch_action::requeued};
  if (next && as_unit(next)->context && as_unit(next)->kind == unit_kind::ult &&
      !as_unit(next)->pinned_to.load(std::memory_order_relaxed) &&
      !as_unit(next)->migrate_to.load(std::memory_order_relaxed)) [[likely]] {
    jump_to<true, true>(next, rec);  // switch_directly's common case, inline; reports the yield
    return true;
  }
  obs::yielded(self);
  switch_directly(next, rec);
  return true;
}

void stream::switch_to_scheduler(switch_record& rec) {
  assert_invariant([this] { return current_stream_no_switch() == this; },
                   "invariant 3: a unit leaves for the scheduler of the stream it runs on");
  assert_invariant([this, &rec] { return !rec.from || rec.from == switching_.current(); },
                   "invariant 4: the leaver of a switch is its stream's current() unit");
  assert_invariant([this] { return switching_.scheduler_context() != nullptr; },
                   "switch records: a unit leaves for a saved scheduler context");
  obs::to_scheduler(*this);
  rec.on_stream = this;
  eh_globals* const eh = switching_.eh_globals_of_thread();
  void* fake_stack = nullptr;
  const stack_region& sched_stack = switching_.scheduler_stack();
  asan_start_switch(&fake_stack, sched_stack.lo, sched_stack.size);
  transfer t;
  if (eh_held(eh)) [[unlikely]] {
    t = jump_stowing(switching_.scheduler_context(), &rec, eh, tsan_fiber(sched_stack));
  } else {
    tsan_switch(tsan_fiber(sched_stack));
    t = jump(switching_.scheduler_context(), &rec);
  }
  // `this` may be another stream's object now: the ULT can have been resumed elsewhere.
  asan_finish_switch(fake_stack);
  land(t);
}

void stream::switch_to_unit(work_unit* target, switch_record& rec) {
  switch_into(*this, target, rec);
}

void stream::land(transfer t) {
  auto* rec = static_cast<switch_record*>(t.data);
  stream* here = rec->on_stream;  // jumps never cross threads: the leaver's stream is ours
  if (rec->action == switch_action::release_stack) {
    release_finished_stack(*here, rec->stack, t.fctx);
    return;
  }
  assert_invariant([here] { return here == current_stream_no_switch(); },
                   "invariant 3: a switch lands on the thread of the stream it left");
  work_unit* from = rec->from;
  // (A requeued yielder reads ready: it queued itself before the jump; an ending one may be done.)
  assert_invariant(
      [from, rec] {
        const switch_action a = rec->action;
        return !from ||
               (a != switch_action::yield && a != switch_action::block &&
                a != switch_action::suspend && a != switch_action::migrate) ||
               as_unit(from)->state.load(std::memory_order_relaxed) == unit_state::running;
      },
      "invariant 4: a unit that switched away reads running until its landing");
  if (!from) {
    // A scheduler resumed us (or, at finalize, returned for good): remember where it waits.
    here->switch_state().save_scheduler_context(t.fctx);
    return;
  }
  if (rec->action != switch_action::terminate) check_leaver_stack(from, t.fctx);
  switch (rec->action) {
    case switch_action::yield:
      as_unit(from)->context = t.fctx;
      make_ready_yielded(from);
      break;
    case switch_action::migrate:
      assert_invariant([rec] { return rec->target != nullptr; },
                       "switch records: a migration names its target pool");
      obs::migrated(from, rec->target);
      as_unit(from)->context = t.fctx;
      as_unit(from)->home.store(rec->target, std::memory_order_relaxed);
      make_ready(from);
      break;
    case switch_action::block:
      as_unit(from)->context = t.fctx;
      as_unit(from)->state.store(unit_state::blocked, std::memory_order_release);
      if (rec->on_block) rec->on_block(from, rec->arg);
      break;
    case switch_action::suspend:
      // Resumable before it reads as blocked: whoever sees `blocked` can resume it.
      as_unit(from)->context = t.fctx;
      as_unit(from)->user_suspended.store(true, std::memory_order_release);
      as_unit(from)->state.store(unit_state::blocked, std::memory_order_release);
      break;
    case switch_action::terminate:
      assert_invariant(
          [from] {
            return as_unit(from)->state.load(std::memory_order_relaxed) == unit_state::running;
          },
          "invariant 4: a ULT that ends is running until its landing completes it");
      release_finished_stack(*here, take_finished_stack(from), t.fctx);
      complete(from);
      break;
    case switch_action::requeued:
      assert_invariant(
          [from] {
            return as_unit(from)->state.load(std::memory_order_relaxed) == unit_state::ready;
          },
          "invariant 4: a direct yielder is ready once it queued itself");
      // Queued before the switch (yield_directly); only this stream can take it out, and
      // nobody runs here before this landing.
      as_unit(from)->context = t.fctx;
      break;
    case switch_action::none:
    case switch_action::sched_exit:
    case switch_action::release_stack:
      break;
  }
}

}  // namespace weft::detail
