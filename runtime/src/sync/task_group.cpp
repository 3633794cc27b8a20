// SPDX-License-Identifier: Apache-2.0
#include "weft/task_group.hpp"

#include <cstdio>
#include <cstdlib>

#include "platform/assert.hpp"
#include "platform/spinlock.hpp"
#include "weft/error.hpp"

namespace weft {

task_group::~task_group() {
  if (count_ == 0 && !error_) return;
  if (count_ != 0 && !detail::epoch_is_live(epoch_)) {
    detail::report_stale_handle();  // its ULTs were abandoned with their runtime
    return;
  }
  if (count_ != 0) cancel();
  try {
    wait();
  } catch (const error&) {
    if (count_ != 0) {
      // Misuse left units the group cannot wait for (a tasklet destroys it, say, or a body of
      // its own while the group is being waited for): they refer to the group, which is gone.
      std::fprintf(stderr,
                   "weft: a task_group destroyed while %zu of its ULTs may still run, and it "
                   "cannot wait for them here; aborting\n",
                   count_);
      std::abort();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft: exception escaped a task_group destroyed without wait(): %s\n",
                 e.what());
  } catch (...) {
    std::fprintf(stderr, "weft: unknown exception escaped a task_group destroyed without wait()\n");
  }
}

namespace {

/// The group's units are its first min(count, inline_units) inline slots and then `more`, in
/// creation order: wait() walks them newest first by index.
bool holds_exactly(std::size_t count, std::size_t inline_units, std::size_t more) noexcept {
  return more == (count > inline_units ? count - inline_units : 0);
}

}  // namespace

void task_group::add(work_unit* u) {
  detail::assert_invariant([u] { return u != nullptr; }, "task_group adds a unit it created");
  if (count_ == 0) {
    epoch_ = detail::runtime_epoch.load(std::memory_order_relaxed);
  } else if (!detail::epoch_is_live(epoch_)) [[unlikely]] {
    unit_handle h(u);  // u runs already: wait for it rather than lose it, then report
    h.join();
    detail::throw_stale_handle("task_group::run", epoch_);
  }
  if (count_ < inline_units) {
    inline_[count_++] = u;
    return;
  }
  try {
    more_.push_back(u);
  } catch (...) {
    // Out of memory keeping the handle: the unit runs already, so wait for it here rather
    // than lose track of it, then report.
    unit_handle h(u);
    h.join();
    throw;
  }
  ++count_;
  detail::assert_invariant([this] { return holds_exactly(count_, inline_units, more_.size()); },
                           "a task_group's count covers its inline slots and then its list");
}

void task_group::fail(std::exception_ptr e) noexcept {
  cancel();
  while (error_lock_.exchange(true, std::memory_order_acquire)) detail::cpu_relax();
  if (!error_) error_ = std::move(e);
  error_lock_.store(false, std::memory_order_release);
}

void task_group::refuse_run() {
  throw error(errc::invalid_state,
              "weft: task_group::run while the group is being waited for (from one of its "
              "bodies?)");
}

void task_group::wait() {
  // Newest first: the newest unit is the one the stream's work-stealing pool gives back to a
  // join, so each join takes its unit out of the pool and, unless another stream took it, runs
  // it at once on this stack (a join that helps); then the next newest is the newest. Joined
  // oldest first, every join but the last would block and the units would run through the
  // scheduler, each on a stack of its own.
  if (count_ != 0 && !detail::epoch_is_live(epoch_)) [[unlikely]]
    detail::throw_stale_handle("task_group::wait", epoch_);
  // One walk at a time: a second one (a body waiting on its own group runs inside the first)
  // would join units the first has freed, and free them again.
  if (waiting_.exchange(true, std::memory_order_acquire)) {
    throw error(errc::invalid_state,
                "weft: task_group::wait while the group is being waited for (by another unit, or "
                "by the wait that runs this body)");
  }
  struct walk_end {
    std::atomic<bool>& flag;
    ~walk_end() { flag.store(false, std::memory_order_release); }
  } end{waiting_};
  detail::assert_invariant([this] { return holds_exactly(count_, inline_units, more_.size()); },
                           "a task_group's count covers its inline slots and then its list");
  auto unit_at = [this](std::size_t i) -> work_unit*& {
    return i < inline_units ? inline_[i] : more_[i - inline_units];
  };
  for (std::size_t left = count_; left > 0; --left) {
    work_unit* u = unit_at(left - 1);
    try {
      if (!detail::reap_if_done(u)) detail::join_handle(u);
    } catch (const error&) {
      if (!u) {
        fail(std::current_exception());  // what escaped the wrapper itself: no stack, say
        continue;
      }
      // Misuse (a tasklet waiting, say): u and the units before it stay in the group.
      count_ = left;
      if (count_ <= inline_units) {
        more_.clear();
      } else {
        more_.resize(count_ - inline_units);
      }
      detail::assert_invariant([this] { return holds_exactly(count_, inline_units, more_.size()); },
                               "a task_group keeps the units a failed wait left, in order");
      throw;
    } catch (...) {
      fail(std::current_exception());
    }
  }
  count_ = 0;
  more_.clear();
  // Every body has ended: nobody else touches the error any more.
  std::exception_ptr e = std::exchange(error_, nullptr);
  cancelled_.store(false, std::memory_order_relaxed);
  if (e) std::rethrow_exception(e);
}

}  // namespace weft
