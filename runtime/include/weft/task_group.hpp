// SPDX-License-Identifier: Apache-2.0
// Structured fork-join: ULTs run as a group and waited for together.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <exception>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/pool.hpp"
#include "weft/ult.hpp"
#include "weft/unit_handle.hpp"

namespace weft {

/// A group of ULTs started together and waited for together, the fork-join idiom of oneTBB's
/// `task_group` and Taskflow's subflows:
///
///     weft::task_group g;
///     g.run([&] { left = sum(lo, mid); });   // a ULT, in the calling stream's main pool
///     right = sum(mid, hi);                  // meanwhile, in the caller
///     g.wait();                              // joins it; rethrows what it threw
///
/// wait() joins the group's ULTs newest first: each join finds its ULT still queued as the newest
/// unit of the caller's pool (unless another stream stole it) and runs it right there, as a call
/// on the caller's stack when it has room, so recursive fork-join unfolds depth-first on each
/// stream while idle streams steal the oldest (largest) pending pieces. cancel() makes every ULT of
/// the group that has not started yet skip its body; a body that throws cancels the group as well,
/// and wait() rethrows the first exception thrown (the others are dropped). After wait() the
/// group is empty and not cancelled, ready for reuse.
///
/// A group is used by one unit at a time: run() and wait() are not meant to race with each other
/// (a body may create and wait on groups of its own, which is how recursion is written). While a
/// wait() runs, a second wait() (from another unit, or from a body of the group, which runs
/// inside the first) and a run() (from a body) throw errc::invalid_state and change nothing.
/// wait()
/// blocks the calling ULT (from an external thread it sleeps); a tasklet cannot wait on a group
/// whose ULTs have not finished (errc::tasklet_cannot_block). Destroying a group that was not
/// waited for cancels it and waits; an exception left is then reported on stderr. A group holding
/// ULTs of a runtime that has been finalized throws errc::invalid_state from run() and wait(), and
/// reports the lost ULTs on stderr when destroyed.
class task_group {
 public:
  /// A group whose ULTs go to the calling stream's main pool (as ult::create(f)).
  task_group() noexcept = default;
  /// A group whose ULTs go to pool `p`.
  explicit task_group(pool& p) noexcept : pool_(&p) {}
  task_group(const task_group&) = delete;
  task_group& operator=(const task_group&) = delete;
  ~task_group();

  /// Starts `f` as a ULT of the group. `attr` sets its stack size and its name.
  template <class F>
  void run(F&& f, const ult_attributes& attr = {}) {
    using body = std::decay_t<F>;
    static_assert(std::is_invocable_v<body&>, "a task takes no arguments");
    // A unit added while wait() walks the units could be missed by it and outlive the group.
    if (waiting_.load(std::memory_order_relaxed)) [[unlikely]]
      refuse_run();
    if constexpr (sizeof(body) <= detail::inline_callable_size && alignof(body) <= 16 &&
                  std::is_nothrow_move_constructible_v<body>) {
      // The body alone in the descriptor's callable storage and the group in its entry_arg:
      // a body of up to 48 bytes is never allocated (a wrapper capturing `this` would make it 56).
      work_unit* u = detail::allocate_unit(unit_kind::ult, attr.stack_size);
      detail::unit_callable& c = detail::callable_of(u);
      try {
        if (attr.name) [[unlikely]]
          detail::name_unit(u, attr.name);
        detail::store_callable(c, std::forward<F>(f));  // inline: the body fits
      } catch (...) {
        detail::discard_unit(u);
        throw;
      }
      c.invoke = &run_body<body>;
      c.entry_arg = this;
      detail::submit_unit(u, pool_ ? *pool_ : detail::default_pool());
      add(u);
      return;
    }
    work_unit* u = detail::spawn(
        unit_kind::ult, pool_ ? *pool_ : detail::default_pool(), attr.stack_size,
        [this, fn = std::forward<F>(f)]() mutable {
          if (cancelled_.load(std::memory_order_relaxed)) return;
          try {
            fn();
          } catch (...) {
            fail(std::current_exception());
          }
        },
        false, attr.name);
    add(u);
  }

  /// Waits for every ULT of the group, then rethrows the first exception one of them threw.
  void wait();
  /// Makes the group's ULTs that have not started skip their bodies. Any thread.
  void cancel() noexcept { cancelled_.store(true, std::memory_order_relaxed); }
  /// True once cancel() was called or a body threw, until the next wait() returns.
  bool is_canceling() const noexcept { return cancelled_.load(std::memory_order_relaxed); }
  /// ULTs run() and not yet waited for.
  std::size_t size() const noexcept { return count_; }

 private:
  /// unit_callable::invoke of a body stored inline: the group is the callable's entry_arg.
  template <class Body>
  static void run_body(work_unit* u) {
    detail::unit_callable& c = detail::callable_of(u);
    auto* const group = static_cast<task_group*>(c.entry_arg);
    if (group->cancelled_.load(std::memory_order_relaxed)) return;
    try {
      (*std::launder(reinterpret_cast<Body*>(c.storage)))();
    } catch (...) {
      group->fail(std::current_exception());
    }
  }

  static constexpr std::size_t inline_units = 8;  // a tree node's children, without allocation

  void add(work_unit* u);
  void fail(std::exception_ptr e) noexcept;
  [[noreturn]] static void refuse_run();

  pool* pool_ = nullptr;
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> error_lock_{false};
  std::atomic<bool> waiting_{false};  // a wait() is walking the units
  std::exception_ptr error_;          // the first exception, under error_lock_
  std::size_t count_ = 0;
  std::uint64_t epoch_ = 0;  // detail::runtime_epoch when the first of the count_ ULTs was added
  std::array<work_unit*, inline_units> inline_{};  // the first units
  std::vector<work_unit*> more_;                   // the others
};

}  // namespace weft
