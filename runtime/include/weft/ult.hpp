// SPDX-License-Identifier: Apache-2.0
// ULTs: stackful user-level threads that may yield, block, suspend and migrate.
#pragma once

#include "weft/execution_stream.hpp"
#include "weft/unit_handle.hpp"

namespace weft {

/// Per-ULT creation options.
struct ult_attributes {
  /// Stack size in bytes; 0 means config::stack_size.
  std::size_t stack_size = 0;
  /// A name shown for the ULT in traces (weft/trace.hpp); copied at creation (each distinct name
  /// is kept once, for the life of the process). nullptr: none, and no cost.
  const char* name = nullptr;
};

/// A handle to a ULT. The ULT takes a stack when it first runs and returns it as soon as it
/// terminates, so created-but-not-started ULTs cost a descriptor only.
class ult : public unit_handle {
 public:
  ult() noexcept = default;
  explicit ult(work_unit* u) noexcept : unit_handle(u) {}

  /// Creates a ULT running `f` in the calling stream's main pool.
  template <class F>
  static ult create(F&& f) {
    return create(detail::default_pool(), std::forward<F>(f));
  }
  /// Creates a ULT running `f` in pool `p`.
  template <class F>
  static ult create(pool& p, F&& f, const ult_attributes& attr = {}) {
    return ult(
        detail::spawn(unit_kind::ult, p, attr.stack_size, std::forward<F>(f), false, attr.name));
  }
  /// Creates a ULT running `f` in the main pool of stream `s`.
  template <class F>
  static ult create_on(execution_stream& s, F&& f, const ult_attributes& attr = {}) {
    return create(s.main_pool(), std::forward<F>(f), attr);
  }
  /// Creates a ULT running fn(arg) in pool `p` (the C-style form).
  static ult create(pool& p, void (*fn)(void*), void* arg, const ult_attributes& attr = {}) {
    if (attr.name && fn) [[unlikely]]
      return create(
          p, [fn, arg] { fn(arg); }, attr);
    return ult(detail::spawn_c(unit_kind::ult, p, attr.stack_size, fn, arg));
  }

  /// Creates a ULT running `f` in pool `p` that frees itself when it ends: create(...).detach()
  /// in one step, without the atomic exchange a detach costs. An exception escaping it is
  /// reported on stderr.
  template <class F>
  static void create_detached(pool& p, F&& f, const ult_attributes& attr = {}) {
    detail::spawn(unit_kind::ult, p, attr.stack_size, std::forward<F>(f), true, attr.name);
  }
  /// create_detached() for the C-style form fn(arg).
  static void create_detached(pool& p, void (*fn)(void*), void* arg,
                              const ult_attributes& attr = {}) {
    if (attr.name && fn) [[unlikely]] {
      create_detached(
          p, [fn, arg] { fn(arg); }, attr);
      return;
    }
    detail::spawn_c(unit_kind::ult, p, attr.stack_size, fn, arg, true);
  }

  /// Resumes a ULT that suspended itself with this_unit::suspend(). Throws errc::invalid_state if
  /// it is not suspended.
  void resume() const;
  /// Moves the ULT to pool `p`: at once if it is queued (and its pool can remove it), otherwise at
  /// its next scheduling point (when it is popped, or when a suspended ULT is resumed). Any
  /// context. Throws errc::not_joinable (empty handle: never set, moved from or joined),
  /// errc::invalid_state (the ULT terminated and waits for its join; the primary ULT).
  void migrate_to(pool& p) const;
  /// Moves the ULT to stream `s` (into its scheduler's migration pool).
  void migrate_to(execution_stream& s) const { migrate_to(s.migration_pool()); }
  /// Restricts the ULT to stream `s` (nullptr lifts it): if another stream pops it, that stream
  /// hands it to `s` instead of running it. Any context. Throws errc::not_joinable (empty handle),
  /// errc::invalid_state (the ULT terminated and waits for its join: it is never popped again).
  void pin_to(execution_stream* s) const;
};

/// Resumes the suspended ULT behind `u` (for code that holds descriptors, e.g. sync primitives).
void resume(work_unit* u);

}  // namespace weft
