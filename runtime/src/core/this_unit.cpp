// SPDX-License-Identifier: Apache-2.0
#include "weft/this_unit.hpp"

#include <string>

#include "core/stream.hpp"
#include "core/unit.hpp"
#include "observe/observe.hpp"
#include "platform/assert.hpp"
#include "scheduling/pool_access.hpp"
#include "weft/error.hpp"
#include "weft/internal/layer_support.hpp"
#include "weft/ult.hpp"

namespace weft::this_unit {

namespace {

/// Throws the error for calling `what` from a tasklet (u != nullptr) or outside any unit.
[[noreturn, gnu::cold, gnu::noinline]] void not_a_ult(const char* what, const work_unit* u) {
  if (!u) {
    throw error(errc::not_in_ult, std::string("weft: ") + what + " must be called from a ULT");
  }
  throw error(
      errc::tasklet_cannot_block,
      std::string("weft: ") + what + " called from a tasklet (tasklets never yield or block)");
}

/// The calling ULT and its stream; throws the right error for tasklets and external threads.
/// Inline, on every yield: the thread-local load happens before any switch in the caller, and an
/// initial-exec load is never cached across one (stream.hpp).
inline std::pair<detail::stream*, work_unit*> calling_ult(const char* what) {
  detail::stream* s = detail::current_stream_no_switch();
  work_unit* u = s ? s->current() : nullptr;
  if (!u || detail::as_unit(u)->kind == unit_kind::tasklet) [[unlikely]]
    not_a_ult(what, u);
  detail::assert_invariant(
      [u] {
        return detail::as_unit(u)->state.load(std::memory_order_relaxed) == unit_state::running;
      },
      "invariant 4: the current unit of a stream is running");
  return {s, u};
}

/// yield() for the calling ULT `self` on its stream `s`.
/// Invariant 4 as a ULT back from a switch sees it, maybe on another stream (read through
/// current_stream(), which does not reuse the thread-local address from before the switch).
inline void assert_running_again(work_unit* self) noexcept {
  detail::assert_invariant(
      [self] {
        detail::stream* here = detail::current_stream();
        return here && here->current() == self &&
               detail::as_unit(self)->state.load(std::memory_order_relaxed) == unit_state::running;
      },
      "invariant 4: a ULT back from a switch is the running unit of the stream it is on");
}

[[gnu::always_inline]] inline void yield_as(detail::stream* s, work_unit* self) {
  if (s->switch_state().direct_policy() && s->yield_directly(self)) {
    assert_running_again(self);
    return;  // it reports the yield itself
  }
  detail::obs::yielded(self);
  detail::switch_record rec{self, detail::switch_action::yield};
  s->switch_to_scheduler(rec);
  assert_running_again(self);
}

/// yield_to() for the calling ULT `self` on its stream `s`.
[[gnu::always_inline]] inline bool yield_to_as(detail::stream* s, work_unit* self,
                                               detail::unit* target) {
  pool* home = target ? target->home.load(std::memory_order_relaxed) : nullptr;
  const bool eligible = target && target != self && target->kind == unit_kind::ult &&
                        target->state.load(std::memory_order_acquire) == unit_state::ready &&
                        (!target->pinned_to.load(std::memory_order_relaxed) ||
                         target->pinned_to.load(std::memory_order_relaxed) == s) &&
                        !target->migrate_to.load(std::memory_order_acquire) && home &&
                        (!single_consumer(home->access()) ||
                         detail::pool_access::consumer(*home, std::memory_order_acquire) == s);
  if (!eligible || !home->remove(target)) {
    yield_as(s, self);
    return false;
  }
  detail::assert_invariant(
      [target] { return target->state.load(std::memory_order_relaxed) == unit_state::ready; },
      "invariant 2: a unit removed from its pool is ready and nowhere else");
  detail::assert_invariant(
      [target] { return target->pool_holder.load(std::memory_order_relaxed) == nullptr; },
      "invariant 1: a unit removed from its pool is linked in no pool");
  detail::obs::yielded(self);
  detail::switch_record rec{self, detail::switch_action::yield};
  s->switch_to_unit(target, rec);
  assert_running_again(self);
  return true;
}

}  // namespace

// The leaves below read the stream's thread-local pointer inline: none switches context between
// the read and its use, and a caller in another library cannot carry the result over a switch.
work_unit* current() noexcept {
  detail::stream* s = detail::current_stream_no_switch();
  return s ? s->current() : nullptr;
}

unit_id id() noexcept {
  work_unit* u = current();
  return u ? detail::as_unit(u)->id : 0;
}

bool is_ult() noexcept {
  work_unit* u = current();
  return u && detail::as_unit(u)->kind == unit_kind::ult;
}

bool is_tasklet() noexcept {
  work_unit* u = current();
  return u && detail::as_unit(u)->kind == unit_kind::tasklet;
}

execution_stream* stream() noexcept {
  return detail::current_stream_no_switch();
}

std::size_t stack_left() noexcept {
  work_unit* u = current();
  if (!u) return 0;
  const detail::stack_region& st = detail::as_unit(u)->stack;
  if (!st.lo) return 0;
  const auto here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  const auto lo = reinterpret_cast<std::uintptr_t>(st.lo);
  if (here <= lo || here - lo > st.size) return 0;
  return static_cast<std::size_t>(here - lo);
}

void yield() {
  auto [s, self] = calling_ult("yield");
  yield_as(s, self);
}

bool yield_to(work_unit* target) {
  auto [s, self] = calling_ult("yield_to");
  return yield_to_as(s, self, detail::as_unit(target));
}

bool yield_to(const ult& target) {
  return yield_to(target.native_handle());
}

void suspend() {
  auto [s, self] = calling_ult("suspend");
  detail::obs::blocked(self);
  detail::switch_record rec{self, detail::switch_action::suspend};
  s->switch_out(rec);
  assert_running_again(self);
  detail::assert_invariant(
      [u = self] { return !detail::as_unit(u)->user_suspended.load(std::memory_order_acquire); },
      "a suspended ULT runs again only once resume() cleared its flag");
}

void exit() {
  auto [s, self] = calling_ult("exit");
  if (detail::is_primary_unit(self)) {
    throw error(errc::invalid_state, "weft: the primary ULT cannot exit; return from main instead");
  }
  throw detail::unit_exit{};
}

void migrate_to(pool& p) {
  auto [s, self] = calling_ult("migrate_to");
  if (detail::is_primary_unit(self)) {
    throw error(errc::invalid_state, "weft: the primary ULT cannot migrate");
  }
  detail::switch_record rec{self, detail::switch_action::migrate};
  rec.target = &p;
  s->switch_to_scheduler(rec);
  assert_running_again(self);
}

void migrate_to(execution_stream& s) {
  migrate_to(s.migration_pool());
}

}  // namespace weft::this_unit

namespace weft::detail {

int checked_yield(c_refusal refused, void* context) noexcept {
  stream* s = current_stream_no_switch();
  work_unit* self = s ? s->current() : nullptr;
  if (!self || as_unit(self)->kind != unit_kind::ult) [[unlikely]]
    return refused(context, false);
  try {
    this_unit::yield_as(s, self);
  } catch (...) {
    return refused(context, true);
  }
  return 0;
}

int checked_yield_to(work_unit* target, c_refusal refused, void* context) noexcept {
  stream* s = current_stream_no_switch();
  work_unit* self = s ? s->current() : nullptr;
  if (!self || as_unit(self)->kind != unit_kind::ult || !target || target == self ||
      as_unit(target)->kind != unit_kind::ult) [[unlikely]]
    return refused(context, false);
  try {
    this_unit::yield_to_as(s, self, as_unit(target));
  } catch (...) {
    return refused(context, true);
  }
  return 0;
}

}  // namespace weft::detail
