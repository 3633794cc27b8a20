#include "weft/task_group.hpp"

#include <cstdio>

#include "spinlock.hpp"
#include "weft/error.hpp"

namespace weft {

task_group::~task_group() {
  if (count_ == 0 && !error_) return;
  if (count_ != 0) cancel();
  try {
    wait();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft: exception escaped a task_group destroyed without wait(): %s\n",
                 e.what());
  } catch (...) {
    std::fprintf(stderr, "weft: unknown exception escaped a task_group destroyed without wait()\n");
  }
}

void task_group::add(work_unit* u) {
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
}

void task_group::fail(std::exception_ptr e) noexcept {
  cancel();
  while (error_lock_.exchange(true, std::memory_order_acquire)) detail::cpu_relax();
  if (!error_) error_ = std::move(e);
  error_lock_.store(false, std::memory_order_release);
}

void task_group::wait() {
  // Newest first: the last ULT created is the one a join can take back from the caller's pool.
  while (count_ != 0) {
    work_unit*& slot = count_ > inline_units ? more_.back() : inline_[count_ - 1];
    work_unit* u = slot;
    try {
      if (!detail::reap_if_done(u)) detail::join_handle(u);
    } catch (const error&) {
      // Misuse (a tasklet waiting, say): the unit is still ours and still counted.
      if (u) throw;
      fail(std::current_exception());
    } catch (...) {
      // What escaped the wrapper itself: a ULT that could not get a stack, for instance.
      fail(std::current_exception());
    }
    if (count_ > inline_units) more_.pop_back();
    --count_;
  }
  // Every body has ended: nobody else touches the error any more.
  std::exception_ptr e = std::exchange(error_, nullptr);
  cancelled_.store(false, std::memory_order_relaxed);
  if (e) std::rethrow_exception(e);
}

}  // namespace weft
