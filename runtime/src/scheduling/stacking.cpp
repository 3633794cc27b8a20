// SPDX-License-Identifier: Apache-2.0
// Stacked schedulers: a ULT in the parent's pool whose body runs the child's loop.
#include "weft/stacking.hpp"

#include <mutex>

#include "core/runtime_state.hpp"
#include "core/stream.hpp"
#include "observe/observe.hpp"
#include "platform/assert.hpp"
#include "scheduling/pool_access.hpp"
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
    std::lock_guard lock(detail::rt().orphan_mutex);
    bool pin = false;
    for (const auto& p : child.pools_) {
      if (!again) detail::pool_access::attached(*p).fetch_add(1, std::memory_order_acq_rel);
      if (single_consumer(p->access())) {
        detail::pool_access::consumer(*p).store(&here, std::memory_order_release);
        pin = true;
      }
      if (single_producer(p->access())) {
        auto& producer = detail::pool_access::producer(*p);
        detail::stream* old = producer.load(std::memory_order_acquire);
        if (!old || old == detail::orphaned_producer || old->state() == stream_state::terminated) {
          producer.store(&here, std::memory_order_release);
        }
      }
    }
    if (pin) detail::as_unit(here.current())->pinned_to.store(&here, std::memory_order_relaxed);
  }

  static void enter(scheduler& child, detail::stream& here) {
    child.stream_ = &here;
    child.running_stacked_ = true;
    child.pops_ = 0;
  }

  static void leave(scheduler& child) {
    child.running_stacked_ = false;
    child.stream_ = nullptr;
  }

  static bool finished(scheduler& child, detail::stream& here) {
    const std::uint32_t r = child.stack_requests_.load(std::memory_order_acquire);
    if (r & detail::stack_stop) return true;
    const bool joining = here.requests_.load(std::memory_order_acquire) & detail::request_join;
    if (!(r & detail::stack_finish) && !joining) return false;
    for (const auto& p : child.pools_)
      if (!p->empty()) return false;
    return true;
  }

  /// The child is done: pools nobody else uses become orphans, which this stream's main
  /// scheduler adopts at its next check (so units left by stop() still run).
  static void detach(scheduler& child, detail::stream& here) {
    bool orphaned = false;
    {
      std::lock_guard lock(detail::rt().orphan_mutex);
      for (const auto& p : child.pools_) {
        auto& producer = detail::pool_access::producer(*p);
        if (producer.load(std::memory_order_acquire) == &here)
          producer.store(detail::orphaned_producer, std::memory_order_release);
        const int before =
            detail::pool_access::attached(*p).fetch_sub(1, std::memory_order_acq_rel);
        // invariant 7: the stacked scheduler counted itself in attach(), so it can take itself out.
        detail::assert_invariant([before] { return before > 0; },
                                 "invariant 7: attached(p) of a stacked scheduler's pool is > 0");
        if (before == 1) {
          detail::pool_access::consumer(*p).store(nullptr, std::memory_order_release);
          detail::rt().orphans.push_back(p);
          detail::rt().has_orphans.store(true, std::memory_order_relaxed);
          orphaned = true;
        }
      }
    }
    if (orphaned) here.request(detail::request_adopt);
  }
};

ult push_scheduler(pool& parent, std::shared_ptr<scheduler> child) {
  if (!child) throw error(errc::invalid_state, "weft: push_scheduler needs a scheduler");
  detail_stacking::claim(*child);
  return ult::create(parent, [child] { detail_stacking::run(child); });
}

}  // namespace weft
