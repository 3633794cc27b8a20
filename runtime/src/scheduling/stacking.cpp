// SPDX-License-Identifier: Apache-2.0
// Stacked schedulers: a ULT in the parent's pool whose body runs the child's loop.
#include "weft/stacking.hpp"

#include <algorithm>
#include <mutex>

#include "core/runtime_state.hpp"
#include "core/stream.hpp"
#include "observe/observe.hpp"
#include "platform/assert.hpp"
#include "scheduling/pool_attachment.hpp"
#include "weft/error.hpp"
#include "weft/this_unit.hpp"

namespace weft {

/// The body of a stacking ULT. A friend of scheduler: it sets the stacking state around run().
struct detail_stacking {
  static void run(const std::shared_ptr<scheduler>& child) {
    bool attached = false;
    detail::stream* here = nullptr;
    try {
      for (;;) {
        here = detail::current_stream();
        attach(*child, *here, attached);
        attached = true;
        enter(*child, *here);
        detail::obs::stacked(*here, true);
        try {
          detail::run_scheduler(*child);
        } catch (...) {
          leave(*child);
          throw;
        }
        leave(*child);
        detail::obs::stacked(*detail::current_stream(), false);
        if (finished(*child, *here)) break;
        this_unit::yield();  // back to the parent's pool; its scheduler decides when we run again
      }
    } catch (...) {
      if (attached) detach(*child, *detail::current_stream());
      throw;
    }
    detach(*child, *detail::current_stream());
  }

  /// Marks `child` stacked; throws if it is installed on a stream or stacked already.
  static void claim(scheduler& child) {
    if (child.stream_ || child.stacked_) {
      throw error(
          errc::invalid_state,
          "weft: push_scheduler: the scheduler is installed on a stream or stacked already");
    }
    child.stacked_ = true;
  }

 private:
  /// Names this stream as consumer (and, if the old one is gone, producer) of the child's pools.
  /// Safe while the stacking ULT runs: only the stream running it touches those roles, and it
  /// runs on one stream at a time (pinned there when a pool has a single consumer).
  static void attach(scheduler& child, detail::stream& here, bool again) {
    detail::assert_invariant([&here] { return here.current() != nullptr; },
                             "stacked schedulers: a child attaches from its stacking ULT");
    if (detail::rt().attachment().attach_stacked(here, child.pools_, again))
      detail::as_unit(here.current())->pinned_to.store(&here, std::memory_order_relaxed);
    detail::assert_invariant(
        [&child, &here] {
          return std::all_of(child.pools_.begin(), child.pools_.end(), [&here](const auto& p) {
            return !single_consumer(p->access()) || p->consumer() == &here;
          });
        },
        "invariant 6: a stacked scheduler's single-consumer pools are consumed by its stream");
  }

  static void enter(scheduler& child, detail::stream& here) {
    detail::assert_invariant(
        [&] {
          return child.stacked_ && !child.running_stacked_ && child.stream_ == nullptr &&
                 detail::current_stream() == &here;
        },
        "stacked schedulers: a child runs on one stream at a time, from its stacking ULT");
    child.stream_ = &here;
    child.running_stacked_ = true;
    child.pops_ = 0;
  }

  static void leave(scheduler& child) {
    detail::assert_invariant([&child] { return child.running_stacked_ && child.stream_; },
                             "stacked schedulers: a child leaves the run it entered");
    child.running_stacked_ = false;
    child.stream_ = nullptr;
  }

  static bool finished(scheduler& child, detail::stream& here) {
    const std::uint32_t r = child.stack_requests_.load(std::memory_order_acquire);
    if (r & detail::stack_stop) return true;
    const bool joining = here.joining();
    if (!(r & detail::stack_finish) && !joining) return false;
    for (const auto& p : child.pools_)
      if (!p->empty()) return false;
    return true;
  }

  /// The child is done: pools nobody else uses become orphans, which this stream's main
  /// scheduler adopts at its next check (so units left by stop() still run).
  static void detach(scheduler& child, detail::stream& here) {
    detail::assert_invariant(
        [&child, &here] { return !child.running_stacked_ && detail::current_stream() == &here; },
        "invariant 10: a child's pools leave it on the stream of its stacking ULT, after its loop");
    if (detail::rt().attachment().detach_stacked(here, child.pools_))
      here.request(detail::request_adopt);
  }
};

ult push_scheduler(pool& parent, std::shared_ptr<scheduler> child) {
  if (!child) throw error(errc::invalid_state, "weft: push_scheduler needs a scheduler");
  detail_stacking::claim(*child);
  return ult::create(parent, [child] { detail_stacking::run(child); });
}

}  // namespace weft
