// SPDX-License-Identifier: Apache-2.0
// Tasklets: stackless work units that run to completion on their scheduler's stack.
#pragma once

#include "weft/execution_stream.hpp"
#include "weft/unit_handle.hpp"

namespace weft {

/// A handle to a tasklet. A tasklet never yields: yield, suspend, blocking joins and exit from a
/// tasklet throw errc::tasklet_cannot_block (and the exception is delivered by join).
class tasklet : public unit_handle {
 public:
  tasklet() noexcept = default;
  explicit tasklet(work_unit* u) noexcept : unit_handle(u) {}

  /// Creates a tasklet running `f` in the calling stream's main pool.
  template <class F>
  static tasklet create(F&& f) {
    return create(detail::default_pool(), std::forward<F>(f));
  }
  /// Creates a tasklet running `f` in pool `p`.
  template <class F>
  static tasklet create(pool& p, F&& f) {
    return tasklet(detail::spawn(unit_kind::tasklet, p, 0, std::forward<F>(f)));
  }
  /// Creates a tasklet running `f` in the main pool of stream `s`.
  template <class F>
  static tasklet create_on(execution_stream& s, F&& f) {
    return create(s.main_pool(), std::forward<F>(f));
  }
  /// Creates a tasklet running fn(arg) in pool `p`.
  static tasklet create(pool& p, void (*fn)(void*), void* arg) {
    return tasklet(detail::spawn_c(unit_kind::tasklet, p, 0, fn, arg));
  }
  /// Creates a tasklet running `f` in pool `p` that frees itself when it ends:
  /// create(...).detach() in one step, without the atomic exchange a detach costs. An exception
  /// escaping it is reported on stderr.
  template <class F>
  static void create_detached(pool& p, F&& f) {
    detail::spawn(unit_kind::tasklet, p, 0, std::forward<F>(f), true);
  }
  /// create_detached() for the C-style form fn(arg).
  static void create_detached(pool& p, void (*fn)(void*), void* arg) {
    detail::spawn_c(unit_kind::tasklet, p, 0, fn, arg, true);
  }

  /// Moves a tasklet that has not started yet to pool `p` (applied when it is next popped).
  void migrate_to(pool& p) const;
};

}  // namespace weft
