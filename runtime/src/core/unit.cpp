// SPDX-License-Identifier: Apache-2.0
// Creation, routing, completion, join and detach of work units.
#include "core/unit.hpp"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "core/eh_state.hpp"
#include "core/runtime_state.hpp"
#include "core/unit_local.hpp"
#include "memory/overflow.hpp"
#include "memory/stack.hpp"
#include "observe/observe.hpp"
#include "platform/futex.hpp"
#include "platform/spinlock.hpp"
#include "scheduling/pool_access.hpp"
#include "weft/error.hpp"
#include "weft/tasklet.hpp"
#include "weft/this_unit.hpp"
#include "weft/ult.hpp"

namespace weft {
namespace detail {

namespace {

/// A joiner that is not a ULT sleeps on this futex word; its address, tagged, is the join word.
struct alignas(8) external_waiter {
  std::atomic<std::uint32_t> done{0};
};
constexpr std::uintptr_t external_tag = 4;

std::mutex external_units_mutex;  // external threads share one cache, under this lock

void register_joiner(work_unit* self, void* arg) {
  auto* target = static_cast<work_unit*>(arg);
  std::uintptr_t expected = join_none;
  if (!as_unit(target)->join_word.compare_exchange_strong(
          expected, reinterpret_cast<std::uintptr_t>(self), std::memory_order_acq_rel,
          std::memory_order_acquire)) {
    assert_invariant([expected] { return expected != join_detached; },
                     "invariant 8: a unit is not detached while a joiner registers on it");
    // It finished while we were switching out, or another joiner registered first: the join
    // finds out which once it runs again (wait_unit_as).
    make_ready(self);
  }
}

/// Stack bytes kept for the frames between a helping join and the borrowed run's callable.
constexpr std::size_t borrow_frames = 512;

/// True when the calling stream may take units out of `p` (pop-side promise of its mode).
bool may_remove_from(pool& p, stream* here) {
  if (!single_consumer(p.access())) return true;
  return pool_access::consumer(p, std::memory_order_acquire) == here;
}

/// True when the ULT `u`, taken out of its pool by its joiner `self` running on `s`, may run as a
/// call on `self`'s stack: `u` never ran and has no stack of its own yet (no user stack), `self`
/// is a ULT, and the part of `self`'s stack below the caller holds at least the stack size `u`
/// asked for, so that `u` gets what it would get on a stack of its own.
[[gnu::always_inline]] inline bool may_borrow_stack(stream* s, unit* self, unit* u) noexcept {
  if (u->kind != unit_kind::ult || u->context || u->stack.lo || self->kind != unit_kind::ult ||
      !self->stack.lo) {
    return false;
  }
  const std::size_t need = u->stack_size != 0 ? u->stack_size : s->stacks().default_request();
  // The frame must lie on that stack: a ULT may run code on a stack of its own making.
  const auto here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  const auto lo = reinterpret_cast<std::uintptr_t>(self->stack.lo);
  return here > lo && here - lo <= self->stack.size && here - lo >= need + borrow_frames;
}

/// run_callable() inline, for the paths that run a callable on a stack that already holds many
/// frames (a join that runs its child as a call): one frame fewer per fork-join level.
[[gnu::always_inline]] inline void run_callable_here(unit* u) noexcept {
  try {
    u->callable.invoke(u);
  } catch (const unit_exit&) {
  } catch (...) {
    capture_error(u);
  }
  if (u->callable.destroy) u->callable.destroy(u);
  u->callable.destroy = nullptr;
  if (u->extras) settle_extras(u);  // ULT-local values; an error stays for the join
}

/// run_callable_here() for a joiner whose thread's exception state `g` is held: the state stays in
/// this frame while `u` runs, and goes back into the state of the thread `u` ends on.
[[gnu::cold, gnu::noinline]] void run_callable_stowing(unit* u, eh_globals* g) noexcept {
  const eh_globals mine = *g;
  *g = eh_globals{};
  run_callable_here(u);
  *thread_eh_globals() = mine;
}

/// Runs the ULT `u`, which never ran, on its joiner `self`'s stack as a call: a fork-join child
/// joined before anyone else took it costs no stack and no context switch. `self` counts as
/// blocked in the join meanwhile (it is below `u` on the stack and cannot run before `u` ends)
/// and has no saved context, so dumps do not unwind it. `u` is a ULT like any other while it
/// runs: it may yield, block and, unless `self` is pinned, resume on another stream, which then
/// is where `self` goes on. Where `self` is pinned (the primary ULT, whose stack is its thread's),
/// `u` is pinned there too until it ends.
[[gnu::always_inline]] inline void run_on_joiner_stack(stream* s, unit* self, unit* u) noexcept {
  u->stack = self->stack;
  u->stack.flags |= stack_borrowed;
  // The joiner registers as any joiner does (with a plain store: only it reaches the word now),
  // so that a second join while `u` runs finds it joined and throws not_joinable, as for a unit
  // on a stack of its own, rather than register where the end below would overwrite it.
  u->join_word.store(reinterpret_cast<std::uintptr_t>(self), std::memory_order_relaxed);
  if (execution_stream* pin = self->pinned_to.load(std::memory_order_relaxed))
    u->pinned_to.store(pin, std::memory_order_relaxed);
  self->context = nullptr;
  self->state.store(unit_state::blocked, std::memory_order_relaxed);
  s->switch_state().set_current(u);
  u->last_stream.store(s, std::memory_order_relaxed);
  u->state.store(unit_state::running, std::memory_order_release);
  obs::lent_stack(*s, self, u);
  // `u` starts with no exception state, as on a stack of its own, although it runs inside the
  // join, which may be in a handler of `self`'s or in a destructor run by unwinding.
  if (eh_globals* const eh = s->switch_state().eh_globals_of_thread(); eh_held(eh)) [[unlikely]] {
    run_callable_stowing(u, eh);
  } else {
    run_callable_here(u);
  }
  // `u` may have resumed on another stream: `s` is stale from here on (an initial-exec load
  // reads the calling thread's stream afresh).
  stream* const here = current_stream_no_switch();
  if ((u->stack.flags & stack_canary) && !stack_intact(u->stack)) report_stack_overflow(u);
  u->stack = {};
  u->context = nullptr;
  // complete() without its races: the joiner is registered and here, and nothing else writes
  // a word that holds a joiner, so a plain store ends it.
  assert_invariant(
      [u, self] {
        return u->join_word.load(std::memory_order_relaxed) ==
               reinterpret_cast<std::uintptr_t>(self);
      },
      "invariant 8: a unit that runs on its joiner's stack has no other joiner");
  u->state.store(unit_state::terminated, std::memory_order_release);
  u->join_word.store(join_done, std::memory_order_release);
  obs::stack_returned(*here, u, self);
  here->switch_state().set_current(self);
  self->last_stream.store(here, std::memory_order_relaxed);
  self->state.store(unit_state::running, std::memory_order_relaxed);
}

/// A join that helps: when `u` waits in a pool the calling stream may take it from without
/// reordering its own scheduler's pools, and may run here (no pin elsewhere, no pending
/// migration), takes it out and runs it now, the joiner
/// `self` switched out as its joiner: a ULT by a direct switch, a tasklet right after, on the
/// scheduler's stack (not on the joiner's, which may be too small for it). Returns false, having
/// changed nothing, when `u` cannot be taken; the caller then blocks as usual. What runs after
/// `u` is what runs after any unit that ends: for the stock work-stealing pools the joiner, whom
/// the end of `u` made the newest unit of its pool. `when_next`: `u` may also be taken from a
/// pool of the scheduler's that the stream does not own when it is the one unit queued in that
/// scheduler's pools (a layer's join, join_help::same_pool).
[[gnu::always_inline]] inline bool help_join(stream* s, work_unit* self, work_unit* w,
                                             bool when_next = false) {
  unit* const u = as_unit(w);
  if (u->state.load(std::memory_order_acquire) != unit_state::ready) return false;
  pool* home = u->home.load(std::memory_order_relaxed);
  if (!home || !may_remove_from(*home, s)) return false;
  // The order of the pools this stream's scheduler serves is the scheduler's to keep: there the
  // join only takes the newest unit of an owned pool, the unit that scheduler pops next anyway
  // (its remove() refuses any other), or, when_next, the only unit queued in them, which any
  // scheduler runs next. From any other pool it takes the unit wherever it is.
  if (pool_access::owner(*home, std::memory_order_relaxed) != s && s->installed_scheduler()) {
    for (const auto& p : s->installed_scheduler()->pools()) {
      if (p.get() != home) continue;
      if (!when_next || !s->pools_hold_one_unit()) return false;
      break;
    }
  }
  execution_stream* pin = u->pinned_to.load(std::memory_order_relaxed);
  if ((pin && pin != s) || u->migrate_to.load(std::memory_order_relaxed)) return false;
  // remove() decides: once it succeeds no other stream can run u.
  if (!home->remove(u)) return false;
  assert_invariant(
      [u] {
        return u->state.load(std::memory_order_relaxed) == unit_state::ready &&
               u->pool_holder.load(std::memory_order_relaxed) == nullptr;
      },
      "invariant 2: a unit remove() took out is ready and in no pool");
  if (may_borrow_stack(s, as_unit(self), u)) {
    run_on_joiner_stack(s, as_unit(self), u);
    return true;
  }
  // A ULT that cannot get a stack ends now, with its error, before the joiner registers: found
  // out by the switch below, its completion would make the joiner ready while it still runs.
  if (u->kind == unit_kind::ult && !u->context && !s->try_prepare(u)) return true;
  assert_invariant([u] { return u->join_word.load(std::memory_order_relaxed) == join_none; },
                   "invariant 8: a helping join registers on a unit nobody joined");
  // Nobody else can reach u's join word now (u has not run, its handle is ours): the joiner is
  // registered before the switch, with no compare-and-swap; u sees it when it completes, which is
  // after the landing has saved the joiner and marked it blocked.
  u->join_word.store(reinterpret_cast<std::uintptr_t>(self), std::memory_order_release);
  switch_record rec{self, switch_action::block};
  obs::blocked(self);
  s->switch_directly(u, rec);
  return true;
}

}  // namespace

void route_slow(work_unit* u) noexcept {
  for (;;) {
    pool& p = *as_unit(u)->home.load(std::memory_order_relaxed);
    if (!single_producer(p.access())) {
      p.push(u);
      return;
    }
    stream* owner = pool_access::producer(p, std::memory_order_acquire);
    if (owner == nullptr || owner == current_stream_no_switch()) {
      p.push(u);
      return;
    }
    if (owner == orphaned_producer) {
      if (rt().attachment().push_orphaned(p, u)) return;
      continue;  // adopted meanwhile: go through the new producer
    }
    if (owner->inbox_push(u)) return;
    if (owner->state() == stream_state::terminated) {
      // Its producer ended without handing the pool over (set_producer named a stream that
      // does not use it): from now on pushes serialise on the orphan lock.
      rt().attachment().orphan_producer(p, owner);
      continue;
    }
    cpu_relax();  // the producer is ending; it hands the pool over within a few instructions
  }
}

namespace {

/// Wakes the joiner `waiter` (a join word holding an address) of a unit that has completed.
void wake_joiner(std::uintptr_t waiter) noexcept {
  assert_invariant([waiter] { return waiter > join_detached && (waiter & 3) == 0; },
                   "invariant 8: a woken joiner is a waiter's address");
  if (waiter & external_tag) {
    auto* w = reinterpret_cast<external_waiter*>(waiter & ~std::uintptr_t{7});
    w->done.store(1, std::memory_order_release);
    futex_wake(&w->done, 1);
    return;
  }
  make_ready(reinterpret_cast<work_unit*>(waiter));
}

}  // namespace

namespace {

// complete(), complete_reported() and complete_to_joiner() in one body, inlined into each: a
// tasklet's completion (here == nullptr) then folds away the joiner hand-off and pays no call.
// `announce`: report the end to observers here (the caller has not).
template <bool announce>
[[gnu::always_inline]] inline work_unit* complete_unit(work_unit* u, stream* here) noexcept {
  // invariant 8: a unit completes once (`done` is final; the descriptor is freed once).
  assert_invariant(
      [u] {
        return as_unit(u)->state.load(std::memory_order_relaxed) != unit_state::terminated &&
               as_unit(u)->join_word.load(std::memory_order_relaxed) != join_done;
      },
      "invariant 8: complete() of a unit that already terminated");
  if constexpr (announce) obs::finished(u);
  as_unit(u)->state.store(unit_state::terminated, std::memory_order_release);
  // A detached unit has no handle, so nothing can change its join word any more: no race to
  // settle, and no locked instruction (units created detached never take one). Neither can
  // anything change it once a joiner is registered: the joiner waits, and only this store
  // releases it. Only a word still at join_none races with a joiner arriving.
  const std::uintptr_t seen = as_unit(u)->join_word.load(std::memory_order_acquire);
  if (seen == join_detached) {
    if (has_error(u)) report_detached_error(u);
    free_unit(u);
    return nullptr;
  }
  const std::uintptr_t prev =
      seen != join_none ? (as_unit(u)->join_word.store(join_done, std::memory_order_release), seen)
                        : as_unit(u)->join_word.exchange(join_done, std::memory_order_acq_rel);
  if (prev == join_none) return nullptr;
  if (prev == join_detached) {
    if (has_error(u)) report_detached_error(u);
    free_unit(u);
    return nullptr;
  }
  if (prev & external_tag) {
    wake_joiner(prev);
    return nullptr;
  }
  auto* joiner = reinterpret_cast<work_unit*>(prev);
  assert_invariant(
      [joiner] {
        return as_unit(joiner)->state.load(std::memory_order_relaxed) == unit_state::blocked;
      },
      "invariant 8: a registered joiner stays blocked until its target completes");
  obs::woken(joiner);
  // The joiner can run next here, without the trip through its pool, when that pool is one this
  // stream owns: there it would be the newest unit, the first popped.
  if (here) {
    pool* home = as_unit(joiner)->home.load(std::memory_order_relaxed);
    execution_stream* pin = as_unit(joiner)->pinned_to.load(std::memory_order_relaxed);
    if (pool_access::owner(*home, std::memory_order_relaxed) == here && (!pin || pin == here) &&
        !as_unit(joiner)->migrate_to.load(std::memory_order_relaxed)) {
      return joiner;
    }
  }
  if (here) {
    make_ready(joiner);
    return nullptr;
  }
  return joiner;
}

}  // namespace

void complete(work_unit* u) noexcept {
  if (work_unit* j = complete_unit<true>(u, nullptr)) make_ready(j);
}

void complete_reported(work_unit* u) noexcept {
  if (work_unit* j = complete_unit<false>(u, nullptr)) make_ready(j);
}

work_unit* complete_to_joiner(work_unit* u, stream* here) noexcept {
  return complete_unit<true>(u, here);
}

void run_callable(work_unit* w) noexcept {
  run_callable_here(as_unit(w));
}

namespace {

/// free_unit() less its report to observers, for callers that made it (reap()).
[[gnu::always_inline]] inline void recycle_unit(work_unit* u) noexcept {
  // invariant 9: a terminated ULT gave its stack back before its descriptor is recycled (a user's
  // or a thread's own stack is not the runtime's: only the descriptor's record of it remains).
  assert_invariant(
      [u] {
        return !as_unit(u)->stack.lo || (as_unit(u)->stack.flags & (stack_user | stack_foreign));
      },
      "invariant 9: a descriptor is freed while it holds a stack");
  if (as_unit(u)->extras) [[unlikely]]
    (void)take_error(u);  // nobody will join it now; init_unit relies on extras being empty
  if (stream* s = current_stream_no_switch()) [[likely]] {
    s->units().push(u);
    return;
  }
  std::lock_guard lock(external_units_mutex);
  rt().external_units().push(u);
}

}  // namespace

void free_unit(work_unit* u) noexcept {
  obs::freed(u);
  recycle_unit(u);
}

void report_detached_error(work_unit* u) noexcept {
  std::string what = "unknown exception";
  try {
    std::rethrow_exception(extras_of(u)->error);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  std::fprintf(stderr, "weft: exception escaped detached %s %llu: %s\n",
               as_unit(u)->kind == unit_kind::ult ? "ULT" : "tasklet",
               static_cast<unsigned long long>(as_unit(u)->id), what.c_str());
}

namespace {

/// allocate_unit() for an external thread or a stack size other than the default: kept out of
/// the fast path so that the common case needs no stack frame.
[[gnu::noinline]] work_unit* allocate_unit_slow(unit_kind kind, std::size_t stack_size) {
  if (stack_size > max_stack_size) {
    throw error(errc::invalid_config,
                "weft: ULT stack size " + std::to_string(stack_size) + " is larger than 2 GiB");
  }
  work_unit* u;
  unit_id id;
  if (stream* s = current_stream_no_switch()) {
    u = s->units().pop();
    id = s->next_id();
  } else {
    runtime_state& r = rt();
    std::lock_guard lock(external_units_mutex);
    u = r.external_units().pop();
    id = next_id_block.fetch_add(1, std::memory_order_relaxed) * 1024 + 1;
  }
  init_unit(u, kind,
            stack_size && kind == unit_kind::ult
                ? static_cast<std::uint32_t>(round_to_pages(stack_size))
                : 0,
            id);
  return u;
}

}  // namespace

work_unit* allocate_unit(unit_kind kind, std::size_t stack_size) {
  stream* const s = current_stream_no_switch();
  if (!s || stack_size) [[unlikely]]
    return allocate_unit_slow(kind, stack_size);
  work_unit* const u = s->units().pop();
  init_unit(u, kind, 0, s->next_id());
  return u;
}

void discard_unit(work_unit* u) noexcept {
  // Never submitted: unit dumps, which take every descriptor not terminated for a live unit,
  // must not list it.
  as_unit(u)->state.store(unit_state::terminated, std::memory_order_relaxed);
  free_unit(u);
}

namespace {

/// submit_unit()'s body, shared with submit_and_succeed().
[[gnu::always_inline]] inline void submit_here(work_unit* u, pool& p) noexcept {
  as_unit(u)->home.store(&p, std::memory_order_relaxed);
  obs::created(u);
  route(u);
}

}  // namespace

void submit_unit(work_unit* u, pool& p) {
  submit_here(u, p);
}

int submit_and_succeed(work_unit* u, pool& p) noexcept {
  submit_here(u, p);
  return 0;
}

int submit_detached_and_succeed(work_unit* u, pool& p) noexcept {
  assert_invariant(
      [u] { return as_unit(u)->join_word.load(std::memory_order_relaxed) == join_none; },
      "invariant 8: a unit created detached starts with no joiner");
  as_unit(u)->join_word.store(join_detached, std::memory_order_relaxed);
  submit_here(u, p);
  return 0;
}

void submit_detached_unit(work_unit* u, pool& p) {
  assert_invariant(
      [u] { return as_unit(u)->join_word.load(std::memory_order_relaxed) == join_none; },
      "invariant 8: a unit created detached starts with no joiner");
  as_unit(u)->join_word.store(join_detached, std::memory_order_relaxed);
  submit_unit(u, p);
}

pool& default_pool() {
  stream* s = current_stream_no_switch();  // no switch here: one %fs load, no call
  if (!s) s = rt().primary();
  return *s->first_pool();
}

void invoke_c(work_unit* u) {
  as_unit(u)->callable.entry_fn(as_unit(u)->callable.entry_arg);
}

work_unit* spawn_c(unit_kind kind, pool& p, std::size_t stack_size, void (*fn)(void*), void* arg,
                   bool detached) {
  if (!fn) throw error(errc::invalid_state, "weft: a work unit needs a function");
  work_unit* u = allocate_unit(kind, stack_size);
  unit_callable& c = as_unit(u)->callable;
  c.invoke = &invoke_c;
  c.entry_fn = fn;
  c.entry_arg = arg;
  if (detached)
    submit_detached_unit(u, p);
  else
    submit_unit(u, p);
  return u;
}

bool is_primary_unit(const work_unit* u) noexcept {
  return g_runtime && g_runtime->primary() && g_runtime->primary()->primary_unit() == u;
}

void check_join(work_unit* u) {
  const std::uintptr_t w = as_unit(u)->join_word.load(std::memory_order_acquire);
  if (w == join_done) return;  // the common case of a fan-out; a finished unit is not the caller
  stream* s = current_stream();
  work_unit* self = s ? s->current() : nullptr;
  if (self == u) throw error(errc::invalid_state, "weft: a work unit cannot join itself");
  if (w != join_none) throw error(errc::not_joinable, "weft: the unit is already being joined");
  if (self && as_unit(self)->kind == unit_kind::tasklet) {
    throw error(errc::tasklet_cannot_block,
                "weft: a tasklet cannot join a unit that has not finished (tasklets never block)");
  }
}

namespace {

/// reap_if_done() inline, for the joins of this file.
[[gnu::always_inline]] inline bool reap_here_if_done(work_unit* u) noexcept {
  // Acquire: everything the unit did happens before the caller goes on (as in wait_unit).
  // extras (an error, or values set from outside after the end) take the full join.
  if (as_unit(u)->join_word.load(std::memory_order_acquire) != join_done || as_unit(u)->extras)
    return false;
  obs::reaped(u);
  assert_invariant(
      [u] { return as_unit(u)->state.load(std::memory_order_relaxed) == unit_state::terminated; },
      "invariant 8: a unit whose join word is done has terminated");
  if (stream* s = current_stream_no_switch()) [[likely]] {
    s->units().push(u);
  } else {
    free_unit(u);
  }
  return true;
}

}  // namespace

bool reap_if_done(work_unit* u) noexcept {
  return reap_here_if_done(u);
}

namespace {

/// wait_unit() for a caller that knows its stream `s` and unit `self`; `help`: a join that
/// helps (help_join) may run `u` here; `when_next`: help_join's.
[[gnu::always_inline]] inline void wait_unit_as(work_unit* u, stream* s, work_unit* self,
                                                bool help = true, bool when_next = false) {
  std::uintptr_t w = as_unit(u)->join_word.load(std::memory_order_acquire);
  if (w != join_done) {
    if (self) {
      if (!help || !help_join(s, self, u, when_next)) {
        switch_record rec{self, switch_action::block, &register_joiner, u};
        obs::blocked(self);
        s->switch_out(rec);
        assert_invariant(
            [self] {
              stream* here = current_stream();
              return here && here->current() == self &&
                     as_unit(self)->state.load(std::memory_order_relaxed) == unit_state::running;
            },
            "invariant 4: a joiner resumes as the running unit of the stream it is on");
      }
    } else {
      external_waiter waiter;
      std::uintptr_t expected = join_none;
      if (as_unit(u)->join_word.compare_exchange_strong(
              expected, reinterpret_cast<std::uintptr_t>(&waiter) | external_tag,
              std::memory_order_acq_rel, std::memory_order_acquire)) {
        while (!waiter.done.load(std::memory_order_acquire)) futex_wait(&waiter.done, 0);
      }
    }
    // Synchronise with complete(): everything the unit did happens before what follows. A word
    // that is not done names another joiner that registered first (two joins raced past
    // check_join): this one is refused, never returned from as if the unit had ended.
    if (as_unit(u)->join_word.load(std::memory_order_acquire) != join_done) [[unlikely]]
      throw error(errc::not_joinable, "weft: the unit is already being joined");
    assert_invariant(
        [u] { return as_unit(u)->join_word.load(std::memory_order_relaxed) == join_done; },
        "invariant 8: a join returns once its unit is done");
  }
}

/// reap() of a unit with extras: an error to rethrow, ULT-local values to settle.
[[gnu::cold, gnu::noinline]] void reap_with_extras(work_unit* u) {
  std::exception_ptr e = take_error(u);
  obs::joined(u);
  free_unit(u);
  if (e) std::rethrow_exception(e);
}

/// Frees the joined unit `u` and rethrows what escaped it. Inline: it ends every join, and the
/// common unit, which has no extras, needs no exception_ptr.
[[gnu::always_inline]] inline void reap(work_unit* u) {
  assert_invariant(
      [u] {
        return as_unit(u)->join_word.load(std::memory_order_relaxed) == join_done &&
               as_unit(u)->state.load(std::memory_order_relaxed) == unit_state::terminated;
      },
      "invariant 8: a joiner frees its unit only once it is done");
  if (as_unit(u)->extras) [[unlikely]] {
    reap_with_extras(u);
    return;
  }
  obs::reaped(u);  // the join and the free, under one test
  recycle_unit(u);
}

}  // namespace

void join_unit(work_unit* u) {
  wait_unit(u);
  reap(u);
}

namespace {

/// join_handle()'s body for `u`, the unit of a handle: waits for it, runs `release` (which
/// empties the handle) and frees it, then rethrows what escaped it. Both handle forms share it
/// inline, so that a join that blocks has one frame of it on the stack, not two.
template <class Release>
[[gnu::always_inline]] inline void join_owned(work_unit* u, Release release) {
  // Read before the wait only (it may switch): an initial-exec load, no call.
  stream* s = current_stream_no_switch();
  work_unit* self = s ? s->current() : nullptr;
  const std::uintptr_t w = as_unit(u)->join_word.load(std::memory_order_acquire);
  if (w != join_done) {
    if (self == u) throw error(errc::invalid_state, "weft: a work unit cannot join itself");
    if (w != join_none) throw error(errc::not_joinable, "weft: the unit is already being joined");
    if (self && as_unit(self)->kind == unit_kind::tasklet) {
      throw error(errc::tasklet_cannot_block,
                  "weft: a tasklet cannot join a unit that has not finished (tasklets never "
                  "block)");
    }
    // The helping join inline, so that a child it runs on this stack has one frame of the join
    // below it (fork-join recursion puts the join's frames on the stack at every level).
    if (self && help_join(s, self, u)) {
      // Synchronise with complete(): everything the unit did happens before what follows.
      (void)as_unit(u)->join_word.load(std::memory_order_acquire);
    } else {
      wait_unit_as(u, s, self, false);
    }
  }
  release();
  reap(u);
}

}  // namespace

void join_handle(work_unit*& slot) {
  join_owned(slot, [&slot] { slot = nullptr; });
}

void wait_unit(work_unit* u) {
  if (as_unit(u)->join_word.load(std::memory_order_acquire) != join_done) {
    stream* s = current_stream();
    wait_unit_as(u, s, s ? s->current() : nullptr);
  }
}

void wait_unit_in_place(work_unit* u) {
  if (as_unit(u)->join_word.load(std::memory_order_acquire) != join_done) {
    stream* s = current_stream();
    wait_unit_as(u, s, s ? s->current() : nullptr, false);
  }
}

namespace {

/// True when a layer's join by `self` (null: not a unit) may run `u` on the calling stream, as
/// `help` allows (join_help::same_pool: both units' pool is one that only one stream consumes).
/// Not for a pinned joiner (the primary ULT): a unit run on its stack would be pinned with it
/// and could not migrate, which a layer's unit may ask to do.
[[gnu::always_inline]] inline bool layer_join_helps(join_help help, const work_unit* self,
                                                    const work_unit* u) noexcept {
  if (help != join_help::same_pool || !self) return false;
  pool* const home = as_unit(u)->home.load(std::memory_order_relaxed);
  return home && as_unit(self)->home.load(std::memory_order_relaxed) == home &&
         single_consumer(home->access()) &&
         !as_unit(self)->pinned_to.load(std::memory_order_relaxed);
}

/// A layer's joiner whose stack went to another stream with the unit it ran there (the unit
/// migrated) goes back to the stream its pool is served by before the layer's caller runs
/// again: it yields into that pool. The layer's units run where their pool is served.
[[gnu::cold, gnu::noinline]] void return_to_own_stream() {
  this_unit::yield();
}

}  // namespace

void wait_unit_helping(work_unit* u, join_help help) {
  if (as_unit(u)->join_word.load(std::memory_order_acquire) != join_done) {
    stream* s = current_stream();
    work_unit* const self = s ? s->current() : nullptr;
    const bool helps = layer_join_helps(help, self, u);
    wait_unit_as(u, s, self, helps, helps);
    if (helps && current_stream_no_switch() != s) [[unlikely]]
      return_to_own_stream();
  }
}

int join_and_free(work_unit* u, void* slot, join_help help, join_fallback otherwise,
                  void* context) noexcept {
  const std::uintptr_t w = as_unit(u)->join_word.load(std::memory_order_acquire);
  if (w != join_done) {
    // Read before the wait only (it may switch): an initial-exec load, no call.
    stream* s = current_stream_no_switch();
    work_unit* self = s ? s->current() : nullptr;
    if (self == u || w != join_none || (self && as_unit(self)->kind == unit_kind::tasklet))
      return otherwise(context, join_result::refused);
    const bool helps = layer_join_helps(help, self, u);
    try {
      wait_unit_as(u, s, self, helps, helps);
      if (helps && current_stream_no_switch() != s) [[unlikely]]
        return_to_own_stream();
    } catch (...) {
      return otherwise(context, join_result::threw);
    }
  }
  if (!reap_here_if_done(u)) return otherwise(context, join_result::kept);
  void* const none = nullptr;
  std::memcpy(slot, &none, sizeof none);  // the layer's handle type, not ours
  return 0;
}

std::atomic<std::uint64_t> runtime_epoch{0};
std::atomic<std::uintptr_t> runtime_handle_tag{handle_no_runtime};

void set_runtime_epoch(std::uint64_t epoch) noexcept {
  runtime_epoch.store(epoch, std::memory_order_relaxed);
  runtime_handle_tag.store(epoch ? handle_tag(epoch) : handle_no_runtime,
                           std::memory_order_relaxed);
}

void join_handle(std::uintptr_t& word) {
  join_owned(handle_unit(word), [&word] { word = 0; });
}

void throw_stale_handle(const char* what, std::uint64_t epoch) {
  const std::uint64_t live = runtime_epoch.load(std::memory_order_relaxed);
  throw error(errc::invalid_state,
              std::string("weft: ") + what + " on a handle whose runtime was finalized (runtime " +
                  std::to_string(epoch) + "; " +
                  (live ? "the live runtime is " + std::to_string(live) : "none is initialised") +
                  "): its unit was abandoned with it");
}

void report_stale_handle() noexcept {
  std::fprintf(stderr, "weft: a unit handle outlived the runtime; its unit was lost\n");
}

void join_unit_noexcept(work_unit* u) noexcept {
  if (!g_runtime) {
    report_stale_handle();
    return;
  }
  try {
    check_join(u);
    join_unit(u);
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "weft: exception escaped unit %llu, joined by its handle's destructor: %s\n",
                 static_cast<unsigned long long>(as_unit(u)->id), e.what());
  } catch (...) {
    std::fprintf(stderr,
                 "weft: unknown exception escaped a unit joined by its handle's destructor\n");
  }
}

std::exception_ptr unit_error(const work_unit* u) noexcept {
  const unit_extras* x = extras_of(u);
  return x ? x->error : nullptr;
}

void detach_unit(work_unit* u) noexcept {
  const std::uintptr_t prev =
      as_unit(u)->join_word.exchange(join_detached, std::memory_order_acq_rel);
  // invariant 8: handles give up their pointer before detaching, so nobody joins or detached it.
  assert_invariant([prev] { return prev == join_none || prev == join_done; },
                   "invariant 8: detach of a unit that is being joined or already detached");
  if (prev == join_done) {
    if (has_error(u)) report_detached_error(u);
    free_unit(u);
  }
}

}  // namespace detail

unit_id unit_handle::id() const {
  return joinable() ? detail::as_unit(live_unit("id"))->id : 0;
}

unit_state unit_handle::state() const {
  if (!joinable()) return unit_state::terminated;
  const detail::unit* u = detail::as_unit(live_unit("state"));
  const unit_state st = u->state.load(std::memory_order_acquire);
  // complete() writes the state just before the join word: a handle reads terminated only once
  // a join of it no longer waits (a tasklet may then join it).
  if (st == unit_state::terminated &&
      u->join_word.load(std::memory_order_acquire) != detail::join_done)
    return unit_state::running;
  return st;
}

execution_stream* unit_handle::last_stream() const {
  return joinable() ? detail::as_unit(live_unit("last_stream"))
                          ->last_stream.load(std::memory_order_relaxed)
                    : nullptr;
}

pool* unit_handle::last_pool() const {
  return joinable() ? detail::as_unit(live_unit("last_pool"))->home.load(std::memory_order_relaxed)
                    : nullptr;
}

work_unit* unit_handle::release_or_throw() {
  if (!word_) {
    throw error(errc::not_joinable,
                "weft: join or detach on a handle that owns no unit (already joined, detached or "
                "moved from)");
  }
  return detail::handle_unit(std::exchange(word_, 0));
}

namespace {
/// Ends the user suspension of `u` (it stays blocked: the caller makes it ready).
void end_suspension(work_unit* u) {
  bool expected = true;
  if (!u || !detail::as_unit(u)->user_suspended.compare_exchange_strong(
                expected, false, std::memory_order_acq_rel)) {
    throw error(errc::invalid_state, "weft: resume of a ULT that is not suspended (ULT " +
                                         std::to_string(u ? detail::as_unit(u)->id : 0) + ")");
  }
  // The suspending side publishes user_suspended just before state = blocked: wait out that
  // window (a few instructions on the landing stream) so the unit is never made ready twice.
  while (detail::as_unit(u)->state.load(std::memory_order_acquire) != unit_state::blocked) {
    detail::assert_invariant(
        [u] {
          return detail::as_unit(u)->state.load(std::memory_order_relaxed) !=
                 unit_state::terminated;
        },
        "unit life cycle: a suspended ULT terminated before its resume()");
    detail::cpu_relax();
  }
  detail::obs::woken(u);
}
}  // namespace

void resume(work_unit* u) {
  end_suspension(u);
  detail::make_ready(u);
}

namespace detail {
bool resume_held(work_unit* u) {
  end_suspension(u);
  unit* const d = as_unit(u);
  stream* const here = current_stream_no_switch();
  execution_stream* const pin = d->pinned_to.load(std::memory_order_relaxed);
  if (!here || !here->current() || (pin && pin != here) ||
      d->migrate_to.load(std::memory_order_acquire)) {
    make_ready(u);
    return false;
  }
  assert_invariant([d] { return d->pool_holder.load(std::memory_order_relaxed) == nullptr; },
                   "invariant 2: a suspended ULT is in no pool");
  d->state.store(unit_state::ready, std::memory_order_release);
  return true;
}
}  // namespace detail

void ult::resume() const {
  if (!joinable()) throw error(errc::not_joinable, "weft: resume on an empty handle");
  weft::resume(live_unit("resume"));
}

namespace {
void request_migration(work_unit* w, pool& p) {
  detail::unit* const u = detail::as_unit(w);
  if (!u) throw error(errc::not_joinable, "weft: migrate_to on an empty handle");
  if (u->state.load(std::memory_order_acquire) == unit_state::terminated) {
    throw error(errc::invalid_state, "weft: cannot migrate a terminated unit");
  }
  if (detail::is_primary_unit(u)) {
    throw error(errc::invalid_state, "weft: the primary ULT cannot migrate");
  }
  u->migrate_to.store(&p, std::memory_order_release);
  // A queued unit whose pool lets us take it out moves now; otherwise the request is applied at
  // its next scheduling point (pop or resume).
  pool* home = u->home.load(std::memory_order_relaxed);
  if (u->state.load(std::memory_order_acquire) == unit_state::ready && home &&
      detail::may_remove_from(*home, detail::current_stream()) && home->remove(u)) {
    if (pool* m = u->migrate_to.exchange(nullptr, std::memory_order_acq_rel)) {
      detail::obs::migrated(u, m);
      u->home.store(m, std::memory_order_relaxed);
    }
    detail::route(u);
  }
}
}  // namespace

void ult::migrate_to(pool& p) const {
  request_migration(joinable() ? live_unit("migrate_to") : nullptr, p);
}

void tasklet::migrate_to(pool& p) const {
  request_migration(joinable() ? live_unit("migrate_to") : nullptr, p);
}

void ult::pin_to(execution_stream* s) const {
  if (!joinable()) throw error(errc::not_joinable, "weft: pin_to on an empty handle");
  detail::unit* const u = detail::as_unit(live_unit("pin_to"));
  // A pin is applied when the ULT is next popped, which a terminated one never is.
  if (u->state.load(std::memory_order_acquire) == unit_state::terminated) {
    throw error(errc::invalid_state, "weft: cannot pin a terminated unit");
  }
  u->pinned_to.store(s, std::memory_order_relaxed);
}

}  // namespace weft
