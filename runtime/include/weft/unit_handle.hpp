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
/// the last finalize() sets it back to 0. Objects that outlive their runtime record it, so that
/// one is recognised without touching the memory its units had.
extern std::atomic<std::uint64_t> runtime_epoch;
/// True when an object made under runtime `epoch` belongs to the live runtime.
inline bool epoch_is_live(std::uint64_t epoch) noexcept {
  return epoch == runtime_epoch.load(std::memory_order_relaxed);
}

// A handle is one word: the descriptor's address, and its runtime's tag in the bits an address
// leaves free, so that a handle stays 8 bytes. Linux places no mapping above 2^47 unless asked
// to (also with 5-level paging), descriptors are mapped by weft and checked to lie below
// (unit_cache.cpp), and aligned to unit_alignment (16): the tag has 17 + 4 = 21 bits. The check
// XORs the word with the live runtime's tag: the tag bits cancel for a handle of the live runtime,
// leaving the address, and for no other word (an empty handle, a stale one, any handle while no
// runtime is initialised: the tag is then all ones, which no runtime has).
/// Bits of a descriptor's address in a handle word.
inline constexpr unsigned handle_address_bits = 47;
/// The low bits of a handle word that hold part of the tag (unit_alignment - 1).
inline constexpr std::uintptr_t handle_low_bits = 15;
/// The bits of a handle word that hold the descriptor's address.
inline constexpr std::uintptr_t handle_address_mask =
    ((std::uintptr_t{1} << handle_address_bits) - 1) & ~handle_low_bits;
/// The tag while no runtime is initialised: every tag bit set.
inline constexpr std::uintptr_t handle_no_runtime = ~handle_address_mask;
/// Distinct runtime tags: 1 to 2^21 - 2 (0 would make an empty handle look live; all ones is
/// handle_no_runtime).
inline constexpr std::uint64_t handle_tags = (std::uint64_t{1} << 21) - 2;
static_assert(sizeof(void*) == 8, "handle words need 64-bit addresses");
static_assert(unit_alignment > handle_low_bits, "the low tag bits are alignment bits");

/// The tag of runtime `epoch` (> 0): its bits within the handle word. Tags repeat every
/// handle_tags runtimes.
constexpr std::uintptr_t handle_tag(std::uint64_t epoch) noexcept {
  const std::uint64_t t = (epoch - 1) % handle_tags + 1;
  return static_cast<std::uintptr_t>((t & handle_low_bits) | ((t >> 4) << handle_address_bits));
}
/// The number a tag stands for (the runtime's epoch, modulo handle_tags), for messages.
constexpr std::uint64_t handle_tag_number(std::uintptr_t tag) noexcept {
  return ((tag >> handle_address_bits) << 4) | (tag & handle_low_bits);
}
/// handle_tag(runtime_epoch), or handle_no_runtime while no runtime is initialised.
extern std::atomic<std::uintptr_t> runtime_handle_tag;
/// Sets runtime_epoch and runtime_handle_tag (init and finalize, under their lock).
void set_runtime_epoch(std::uint64_t epoch) noexcept;
/// The handle word for `u`, which is not null, under the live runtime.
inline std::uintptr_t handle_word(work_unit* u) noexcept {
  return reinterpret_cast<std::uintptr_t>(u) | runtime_handle_tag.load(std::memory_order_relaxed);
}
/// The descriptor a handle word names (unchecked).
inline work_unit* handle_unit(std::uintptr_t word) noexcept {
  return reinterpret_cast<work_unit*>(word & handle_address_mask);
}
/// `word` with the live runtime's tag taken out: the descriptor's address if the word is a
/// handle of the live runtime (is_live_handle() then holds), something else otherwise.
inline std::uintptr_t untagged(std::uintptr_t word) noexcept {
  return word ^ runtime_handle_tag.load(std::memory_order_relaxed);
}
/// True when untagged() returned an address: the handle belongs to the live runtime.
inline bool is_live_handle(std::uintptr_t untagged_word) noexcept {
  return (untagged_word & ~handle_address_mask) == 0;
}

/// Throws errc::invalid_state for an object made under runtime `epoch`, which has been
/// finalized; `what` names the operation.
[[noreturn]] void throw_stale_handle(const char* what, std::uint64_t epoch);
/// Reports on stderr that a handle owning a unit outlived its runtime (its destructor cannot
/// throw); the unit was abandoned with the runtime.
void report_stale_handle() noexcept;

/// Takes a descriptor from the calling stream's cache (no lock, no syscall once warm), its
/// callable empty (the four hooks null). Never null (it throws), which lets a handle made from it
/// skip a null check.
[[gnu::returns_nonnull]] work_unit* allocate_unit(unit_kind kind, std::size_t stack_size);
/// Returns a never-submitted descriptor to the cache (used when constructing the callable threw),
/// or a terminated one that wait_unit() returned.
void discard_unit(work_unit* u) noexcept;
/// Makes a new unit ready in `p`, routing the push through the pool's access mode.
void submit_unit(work_unit* u, pool& p);
/// submit_unit() for a unit that frees itself when it ends: it is marked before anyone can see
/// it, which saves the atomic exchange of a later detach_unit().
void submit_detached_unit(work_unit* u, pool& p);
/// The pool create() uses when none is named: the calling stream's main pool, or the primary
/// stream's for an external thread.
pool& default_pool();
/// Waits for `u` to terminate (blocking a ULT, futex-waiting an external thread), frees it and
/// rethrows what escaped it. The caller has passed check_join(u).
void join_unit(work_unit* u);
/// Waits for `u` to terminate like join_unit, but leaves it allocated (terminated, its error
/// kept): the caller frees it later with discard_unit(). For layers whose join and free are
/// separate calls (the Argobots C API). The caller has passed check_join(u); afterwards later
/// waits return at once.
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
/// join_handle() for a handle word: `word` is set to 0 once the unit is freed.
void join_handle(std::uintptr_t& word);

/// unit_callable::invoke for a callable stored inside the descriptor.
template <class F>
void invoke_inline(work_unit* u) {
  (*std::launder(reinterpret_cast<F*>(callable_of(u).storage)))();
}
/// unit_callable::destroy for a callable stored inside the descriptor.
template <class F>
void destroy_inline(work_unit* u) {
  std::launder(reinterpret_cast<F*>(callable_of(u).storage))->~F();
}
/// unit_callable::invoke for a heap-allocated callable.
template <class F>
void invoke_heap(work_unit* u) {
  (*static_cast<F*>(callable_of(u).entry_arg))();
}
/// unit_callable::destroy for a heap-allocated callable.
template <class F>
void destroy_heap(work_unit* u) {
  delete static_cast<F*>(callable_of(u).entry_arg);
}
/// unit_callable::invoke for a C-style entry: calls entry_fn(entry_arg).
void invoke_c(work_unit* u);

/// Stores `f` in `c` (inline when it fits) and sets the invoke/destroy hooks.
template <class F>
void store_callable(unit_callable& c, F&& f) {
  using fn = std::decay_t<F>;
  static_assert(std::is_invocable_v<fn&>, "a work unit's callable takes no arguments");
  if constexpr (sizeof(fn) <= inline_callable_size && alignof(fn) <= 16 &&
                std::is_nothrow_move_constructible_v<fn>) {
    ::new (static_cast<void*>(c.storage)) fn(std::forward<F>(f));
    c.invoke = &invoke_inline<fn>;
    c.destroy = &destroy_inline<fn>;
    c.entry_arg = c.storage;
  } else {
    c.entry_arg = new fn(std::forward<F>(f));
    c.invoke = &invoke_heap<fn>;
    c.destroy = &destroy_heap<fn>;
  }
  c.entry_fn = nullptr;
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
    store_callable(callable_of(u), std::forward<F>(f));
  } catch (...) {
    discard_unit(u);
    throw;
  }
  if (detached)
    submit_detached_unit(u, p);
  else
    submit_unit(u, p);
  return u;
}

/// Same, for a C-style entry point.
[[gnu::returns_nonnull]] work_unit* spawn_c(unit_kind kind, pool& p, std::size_t stack_size,
                                            void (*fn)(void*), void* arg, bool detached = false);

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
  explicit unit_handle(work_unit* u) noexcept : word_(u ? detail::handle_word(u) : 0) {}
  unit_handle(unit_handle&& o) noexcept : word_(std::exchange(o.word_, 0)) {}
  unit_handle& operator=(unit_handle&& o) noexcept {
    if (this != &o) {
      reset();
      word_ = std::exchange(o.word_, 0);
    }
    return *this;
  }
  ~unit_handle() { reset(); }

  /// Waits until the unit terminates, frees it, and rethrows any exception that escaped it.
  /// From a ULT the wait suspends only the caller; from a tasklet it is an error
  /// (errc::tasklet_cannot_block); from an external thread it sleeps on a futex.
  void join() {
    const std::uintptr_t u = detail::untagged(word_);
    if (detail::is_live_handle(u) && detail::reap_if_done(reinterpret_cast<work_unit*>(u)))
        [[likely]] {
      word_ = 0;
      return;
    }
    live_unit_or_throw("join");
    detail::join_handle(word_);
  }
  /// Lets the unit free itself when it terminates. An exception escaping it is reported on stderr.
  void detach() {
    live_unit_or_throw("detach");
    detail::detach_unit(release_or_throw());
  }
  /// True while the handle owns a unit (also after its runtime was finalized: join() then
  /// throws errc::invalid_state).
  bool joinable() const noexcept { return word_ != 0; }

  /// The unit's id (0 for an empty handle).
  unit_id id() const;
  /// The unit's state (terminated for an empty handle).
  unit_state state() const;
  /// The stream the unit last ran on (nullptr before it first ran).
  execution_stream* last_stream() const;
  /// The pool the unit returns to when it becomes ready.
  pool* last_pool() const;
  /// The C entry point it was created with, or nullptr for a C++ callable.
  void (*function() const)(void*) {
    return word_ ? detail::callable_of(live_unit("function")).entry_fn : nullptr;
  }
  /// The argument it was created with (for a C++ callable: the stored callable's address).
  void* argument() const {
    return word_ ? detail::callable_of(live_unit("argument")).entry_arg : nullptr;
  }
  /// The descriptor, for schedulers and the C layer (not checked: it dangles once the handle's
  /// runtime is finalized).
  work_unit* native_handle() const noexcept { return detail::handle_unit(word_); }

 protected:
  /// Takes the unit out of the handle (which becomes empty); throws errc::not_joinable for an
  /// empty handle.
  work_unit* release_or_throw();
  /// The unit, which is not null, after checking that its runtime is the live one.
  work_unit* live_unit(const char* what) const {
    const std::uintptr_t u = detail::untagged(word_);
    if (!detail::is_live_handle(u)) [[unlikely]]
      detail::throw_stale_handle(what,
                                 detail::handle_tag_number(word_ & ~detail::handle_address_mask));
    return reinterpret_cast<work_unit*>(u);
  }
  /// The unit of a handle that owns one under the live runtime; throws errc::not_joinable for
  /// an empty handle and errc::invalid_state for a stale one.
  work_unit* live_unit_or_throw(const char* what) {
    if (!word_) release_or_throw();  // throws: the handle owns no unit
    return live_unit(what);
  }
  /// Empties the handle without joining (for handles that borrow a unit).
  void forget() noexcept { word_ = 0; }
  void reset() noexcept {
    if (!word_) return;
    const std::uintptr_t u = detail::untagged(std::exchange(word_, 0));
    if (detail::is_live_handle(u)) [[likely]] {
      detail::join_unit_noexcept(reinterpret_cast<work_unit*>(u));
    } else {
      detail::report_stale_handle();
    }
  }

 private:
  std::uintptr_t word_ = 0;  // handle_word(): the unit and its runtime's tag; 0 when empty
};
static_assert(sizeof(unit_handle) == sizeof(void*), "a handle is one word");

}  // namespace weft
