// SPDX-License-Identifier: Apache-2.0
// Yield-, suspend- and exit-and-switch for a layer built on weft
// (weft/internal/layer_support.hpp): a direct switch to the target (as this_unit::yield_to makes
// one) whose record yields or suspends the caller, or blocks it with a landing hook that ends it
// once it no longer runs.
#include "weft/internal/layer_support.hpp"

#include "core/stream.hpp"
#include "core/unit.hpp"
#include "core/unit_extras.hpp"
#include "memory/overflow.hpp"
#include "memory/stack.hpp"
#include "observe/observe.hpp"
#include "platform/sanitizer.hpp"
#include "scheduling/pool_access.hpp"
#include "weft/this_unit.hpp"

namespace weft::detail {

namespace {

/// Takes `target` for a direct switch from `s`: out of its pool when queued in one this stream
/// may take it from, or as it is when it is in no pool. False when it cannot be taken.
bool take_target(stream* s, work_unit* self, work_unit* w) {
  unit* const target = as_unit(w);
  if (!target || target == self || target->kind != unit_kind::ult ||
      target->state.load(std::memory_order_acquire) != unit_state::ready ||
      target->migrate_to.load(std::memory_order_acquire)) {
    return false;
  }
  execution_stream* pin = target->pinned_to.load(std::memory_order_relaxed);
  if (pin && pin != s) return false;
  if (!target->pool_holder.load(std::memory_order_acquire)) return true;  // popped: its owner's
  pool* home = target->home.load(std::memory_order_relaxed);
  if (!home) return false;
  if (single_consumer(home->access()) &&
      pool_access::consumer(*home, std::memory_order_acquire) != s) {
    return false;
  }
  if (!home->remove(target)) return false;
  assert_invariant(
      [target] {
        return target->state.load(std::memory_order_relaxed) == unit_state::ready &&
               target->pool_holder.load(std::memory_order_relaxed) == nullptr;
      },
      "invariant 2: a unit remove() took out is ready and in no pool");
  return true;
}

/// Runs where the exit-and-switch lands, once the leaver no longer runs: gives its stack back
/// (as a terminating ULT's, but with no context parked on it: the leaver stopped mid-stack) and
/// completes it.
void finish_exited(work_unit* from, void*) {
  assert_invariant(
      [from] {
        return as_unit(from)->state.load(std::memory_order_relaxed) == unit_state::blocked;
      },
      "invariant 4: a ULT that exits by a switch is blocked once its landing saved it");
  const stack_region stack = as_unit(from)->stack;
  // exit_and_switch() refuses the primary ULT (native stack) and a ULT on its joiner's stack.
  assert_invariant(
      [&stack] { return stack.lo && !(stack.flags & (stack_foreign | stack_borrowed)); },
      "invariant 9: an exit-and-switch gives back a stack the leaver owns");
  if (!stack_intact(stack)) report_stack_overflow(from);
  as_unit(from)->stack = {};
  as_unit(from)->context = nullptr;
  if (stack.flags & stack_user) {
    tsan_destroy_fiber(tsan_fiber(stack));  // the memory stays the user's
  } else {
    asan_unpoison(stack.lo, stack.size);  // the leaver's frames never returned
    current_stream_no_switch()->stacks().release(stack, nullptr);
  }
  complete(from);
}

}  // namespace

bool yield_and_switch(work_unit* target) {
  stream* s = current_stream_no_switch();
  work_unit* self = s ? s->current() : nullptr;
  if (!self || as_unit(self)->kind != unit_kind::ult) return false;
  if (!take_target(s, self, target)) return false;
  obs::yielded(self);
  switch_record rec{self, switch_action::yield};
  s->switch_to_unit(target, rec);
  return true;
}

void submit_and_yield_to(work_unit* u, pool& p) {
  assert_invariant(
      [u] {
        return as_unit(u)->state.load(std::memory_order_relaxed) == unit_state::ready &&
               u->pool_holder.load(std::memory_order_relaxed) == nullptr;
      },
      "invariant 2: a unit submitted to run next is ready and in no pool");
  stream* s = current_stream_no_switch();
  work_unit* self = s ? s->current() : nullptr;
  as_unit(u)->home.store(&p, std::memory_order_relaxed);
  obs::created(u);
  if (self && as_unit(self)->kind == unit_kind::ult && take_target(s, self, u)) {
    obs::yielded(self);
    switch_record rec{self, switch_action::yield};
    s->switch_to_unit(u, rec);
    return;
  }
  route(u);
  if (self && as_unit(self)->kind == unit_kind::ult) this_unit::yield_to(u);
}

bool suspend_and_switch(work_unit* target) {
  stream* s = current_stream_no_switch();
  work_unit* self = s ? s->current() : nullptr;
  if (!self || as_unit(self)->kind != unit_kind::ult || is_primary_unit(self)) return false;
  if (!take_target(s, self, target)) return false;
  switch_record rec{self, switch_action::suspend};
  s->switch_to_unit(target, rec);
  return true;
}

bool exit_and_switch(work_unit* target) {
  stream* s = current_stream_no_switch();
  work_unit* self = s ? s->current() : nullptr;
  if (!self || as_unit(self)->kind != unit_kind::ult || is_primary_unit(self)) return false;
  // On its joiner's stack the caller must return to end: its joiner's frames lie below.
  if (as_unit(self)->stack.flags & stack_borrowed) return false;
  if (!take_target(s, self, target)) return false;
  // What run_callable does once a callable has returned.
  if (as_unit(self)->callable.destroy) as_unit(self)->callable.destroy(self);
  as_unit(self)->callable.destroy = nullptr;
  if (as_unit(self)->extras) settle_extras(self);
  switch_record rec{self, switch_action::block};
  rec.on_block = &finish_exited;
  s->switch_to_unit(target, rec);
  // Back only when the target could not be given a stack (it has ended with that error): end
  // the caller the ordinary way; its callable's teardown has been done already.
  throw unit_exit{};
}

}  // namespace weft::detail
