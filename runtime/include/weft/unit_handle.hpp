// SPDX-License-Identifier: Apache-2.0
// What ULT and tasklet handles have in common: join, detach, identity, introspection.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <type_traits>
#include <utility>

#include "weft/work_unit.hpp"

namespace weft {

class pool;
class execution_stream;

namespace detail {

/// The live runtime's epoch: init() numbers every runtime it starts (1, 2, ...; never reused) and
/// the last finalize() sets it back to 0. Handles record it, so that one outliving its runtime is
/// recognised without touching the memory its unit had.
extern std::atomic<std::uint64_t> runtime_epoch;
/// True when a handle made under runtime `epoch` belongs to the live runtime.
inline bool epoch_is_live(std::uint64_t epoch) noexcept {
  return epoch == runtime_epoch.load(std::memory_order_relaxed);
}
/// Throws errc::invalid_state for a handle made under runtime `epoch`, which has been finalized;
/// `what` names the operation.
[[noreturn]] void throw_stale_handle(const char* what, std::uint64_t epoch);
/// Reports on stderr that a handle owning a unit outlived its runtime (its destructor cannot
/// throw); the unit was abandoned with the runtime.
void report_stale_handle() noexcept;

/// Takes a descriptor from the calling stream's cache (no lock, no syscall once warm).
work_unit* allocate_unit(unit_kind kind, std::size_t stack_size);
/// Returns a never-submitted descriptor to the cache (used when constructing the callable threw),
/// or a terminated one that wait_unit() returned.
void discard_unit(work_unit* u) noexcept;
/// Makes a new unit ready in `p`, routing the push through the pool's access mode.
void submit_unit(work_unit* u, pool& p);
/// The pool create() uses when none is named: the calling stream's main pool, or the primary
/// stream's for an external thread.
pool& default_pool();
/// Waits for `u` to terminate (blocking a ULT, futex-waiting an external thread), frees it and
/// rethrows what escaped it. The caller has passed check_join(u).
void join_unit(work_unit* u);
/// Waits for `u` to terminate like join_unit, but leaves it allocated (terminated, its error
/// kept): the caller frees it later with discard_unit(). For layers whose join and free are
/// separate calls (the Argobots C API). The caller has passed check_join(u); afterwards
/// u->join_word is join_done, so later waits return at once.
void wait_unit(work_unit* u);
/// Throws if the caller may not join `u` (a unit joining itself; a tasklet joining a unit that
/// has not finished).
void check_join(work_unit* u);
/// Lets `u` free itself when it terminates.
void detach_unit(work_unit* u) noexcept;
/// The common case of a join: if `u` has terminated and no exception escaped it, frees it and
/// returns true (any caller may, since a finished unit cannot be misused by joining it); otherwise
/// returns false and leaves it alone.
bool reap_if_done(work_unit* u) noexcept;
/// Joins in a destructor: like join_unit, but an escaped exception is reported on stderr.
void join_unit_noexcept(work_unit* u) noexcept;
/// unit_handle::join() past its fast path: check_join(slot), then join_unit(slot), with `slot`
/// set to nullptr once the unit is freed (before an exception that escaped it is rethrown). On
/// misuse it throws with `slot` unchanged.
void join_handle(work_unit*& slot);

template <class F>
void invoke_inline(work_unit* u) {
  (*std::launder(reinterpret_cast<F*>(u->storage)))();
}
template <class F>
void destroy_inline(work_unit* u) {
  std::launder(reinterpret_cast<F*>(u->storage))->~F();
}
template <class F>
void invoke_heap(work_unit* u) {
  (*static_cast<F*>(u->entry_arg))();
}
template <class F>
void destroy_heap(work_unit* u) {
  delete static_cast<F*>(u->entry_arg);
}
void invoke_c(work_unit* u);

/// Stores `f` in `u` (inline when it fits) and sets the invoke/destroy hooks.
template <class F>
void store_callable(work_unit* u, F&& f) {
  using fn = std::decay_t<F>;
  static_assert(std::is_invocable_v<fn&>, "a work unit's callable takes no arguments");
  if constexpr (sizeof(fn) <= inline_callable_size && alignof(fn) <= 16 &&
                std::is_nothrow_move_constructible_v<fn>) {
    ::new (static_cast<void*>(u->storage)) fn(std::forward<F>(f));
    u->invoke = &invoke_inline<fn>;
    u->destroy = &destroy_inline<fn>;
    u->entry_arg = u->storage;
  } else {
    u->entry_arg = new fn(std::forward<F>(f));
    u->invoke = &invoke_heap<fn>;
    u->destroy = &destroy_heap<fn>;
  }
  u->entry_fn = nullptr;
}

/// Gives the unit `u`, not yet submitted, the name `name` (copied) for traces.
void name_unit(work_unit* u, const char* name);

/// Allocates, fills and submits a unit; returns it. A `detached` unit frees itself when it ends
/// (the caller must not use the returned pointer): it is marked before anyone can see it, which
/// saves the atomic exchange of a later detach_unit(). `name`: see ult_attributes::name.
template <class F>
work_unit* spawn(unit_kind kind, pool& p, std::size_t stack_size, F&& f, bool detached = false,
                 const char* name = nullptr) {
  work_unit* u = allocate_unit(kind, stack_size);
  try {
    if (name) [[unlikely]]
      name_unit(u, name);
    store_callable(u, std::forward<F>(f));
  } catch (...) {
    discard_unit(u);
    throw;
  }
  if (detached) u->join_word.store(join_detached, std::memory_order_relaxed);
  submit_unit(u, p);
  return u;
}

/// Same, for a C-style entry point.
work_unit* spawn_c(unit_kind kind, pool& p, std::size_t stack_size, void (*fn)(void*), void* arg,
                   bool detached = false);

}  // namespace detail

/// Owns a work unit until it is joined or detached. Move-only. Like std::jthread, destroying a
/// handle that still owns a unit joins it (an exception that escaped the unit is then reported on
/// stderr, since a destructor cannot rethrow it).
///
/// A handle belongs to the runtime it was made under: once that runtime is finalized, every
/// operation that needs the unit throws errc::invalid_state, also after a later init() (the
/// handle never reaches a unit of the new runtime), and destroying it reports the lost unit on
/// stderr.
class unit_handle {
 public:
  unit_handle() noexcept = default;
  explicit unit_handle(work_unit* u) noexcept
      : u_(u), epoch_(detail::runtime_epoch.load(std::memory_order_relaxed)) {}
  unit_handle(unit_handle&& o) noexcept : u_(std::exchange(o.u_, nullptr)), epoch_(o.epoch_) {}
  unit_handle& operator=(unit_handle&& o) noexcept {
    if (this != &o) {
      reset();
      u_ = std::exchange(o.u_, nullptr);
      epoch_ = o.epoch_;
    }
    return *this;
  }
  ~unit_handle() { reset(); }

  /// Waits until the unit terminates, frees it, and rethrows any exception that escaped it.
  /// From a ULT the wait suspends only the caller; from a tasklet it is an error
  /// (errc::tasklet_cannot_block); from an external thread it sleeps on a futex.
  void join() {
    if (u_ && detail::epoch_is_live(epoch_) && detail::reap_if_done(u_)) [[likely]] {
      u_ = nullptr;
      return;
    }
    detail::join_handle(live_unit_or_throw("join"));
  }
  /// Lets the unit free itself when it terminates. An exception escaping it is reported on stderr.
  void detach() {
    live_unit_or_throw("detach");
    detail::detach_unit(release_or_throw());
  }
  /// True while the handle owns a unit (also after its runtime was finalized: join() then
  /// throws errc::invalid_state).
  bool joinable() const noexcept { return u_ != nullptr; }

  /// The unit's id (0 for an empty handle).
  unit_id id() const { return u_ ? live_unit("id")->id : 0; }
  /// The unit's state (terminated for an empty handle).
  unit_state state() const;
  /// The stream the unit last ran on (nullptr before it first ran).
  execution_stream* last_stream() const;
  /// The pool the unit returns to when it becomes ready.
  pool* last_pool() const;
  /// The C entry point it was created with, or nullptr for a C++ callable.
  void (*function() const)(void*) { return u_ ? live_unit("function")->entry_fn : nullptr; }
  /// The argument it was created with (for a C++ callable: the stored callable's address).
  void* argument() const { return u_ ? live_unit("argument")->entry_arg : nullptr; }
  /// The descriptor, for schedulers and the C layer (not checked: it dangles once the handle's
  /// runtime is finalized).
  work_unit* native_handle() const noexcept { return u_; }

 protected:
  work_unit* release_or_throw();
  /// u_, which is not null, after checking that its runtime is the live one.
  work_unit* live_unit(const char* what) const {
    if (!detail::epoch_is_live(epoch_)) [[unlikely]]
      detail::throw_stale_handle(what, epoch_);
    return u_;
  }
  /// The slot of a unit this handle owns under the live runtime; throws errc::not_joinable for
  /// an empty handle and errc::invalid_state for a stale one.
  work_unit*& live_unit_or_throw(const char* what) {
    if (!u_) release_or_throw();  // throws: the handle owns no unit
    live_unit(what);
    return u_;
  }
  void reset() noexcept {
    if (!u_) return;
    if (detail::epoch_is_live(epoch_)) [[likely]] {
      detail::join_unit_noexcept(std::exchange(u_, nullptr));
    } else {
      u_ = nullptr;
      detail::report_stale_handle();
    }
  }
  work_unit* u_ = nullptr;
  std::uint64_t epoch_ = 0;  // runtime_epoch when the unit was created
};

}  // namespace weft
