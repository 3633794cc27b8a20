// SPDX-License-Identifier: Apache-2.0
#include "scheduling/pool_attachment.hpp"

#include <algorithm>
#include <chrono>
#include <new>
#include <thread>

#include "core/stream.hpp"
#include "platform/assert.hpp"
#include "scheduling/pool_access.hpp"
#include "sync/timer.hpp"

namespace weft::detail {

namespace {

/// Runs `f` (a container insertion with the strong guarantee) until it does not run out of
/// memory. For a stream that is ending: dropping the pool or timers it hands on would lose
/// units, so it waits for memory instead (a millisecond between tries).
template <class F>
void until_allocated(F&& f) noexcept {
  for (;;) {
    try {
      f();
      return;
    } catch (const std::bad_alloc&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

bool unset_or_orphaned(const stream* producer) noexcept {
  return producer == nullptr || producer == orphaned_producer;
}

/// True when `p` is on the list `orphans` (for checks).
[[maybe_unused]] bool listed(const pool_attachment::pool_list& orphans, const pool* p) noexcept {
  return std::any_of(orphans.begin(), orphans.end(),
                     [p](const std::shared_ptr<pool>& o) { return o.get() == p; });
}

}  // namespace

pool_attachment::~pool_attachment() {
  // Teardown: sleepers finalize abandoned keep their nodes here; nothing will fire them.
  for (timer_node* n : timers_) release_at_teardown(n);
}

void pool_attachment::serve_from(pool& p, stream& s, bool take_producer) {
  if (single_consumer(p.access())) pool_access::consumer(p).store(&s, std::memory_order_release);
  if (single_producer(p.access()) &&
      (take_producer ||
       unset_or_orphaned(pool_access::producer(p).load(std::memory_order_acquire))))
    pool_access::producer(p).store(&s, std::memory_order_release);
  assert_invariant(
      [&p, &s] {
        return !single_consumer(p.access()) ||
               pool_access::consumer(p).load(std::memory_order_relaxed) == &s;
      },
      "invariant 6: a single-consumer pool is served by the stream it was attached to");
  assert_invariant(
      [&p] {
        return !single_producer(p.access()) ||
               !unset_or_orphaned(pool_access::producer(p).load(std::memory_order_relaxed));
      },
      "invariant 5: a served single-producer pool has a producer stream");
}

bool pool_attachment::leave_orphans(const pool* p) {
  auto it = std::find_if(orphans_.begin(), orphans_.end(),
                         [p](const std::shared_ptr<pool>& o) { return o.get() == p; });
  if (it == orphans_.end()) return false;
  orphans_.erase(it);
  assert_invariant([this, p] { return !listed(orphans_for_checks(), p); },
                   "invariant 7: a pool is on the orphan list once");
  return true;
}

void pool_attachment::attach(stream& s, pool_list& pools) {
  lock_guard lock(mutex_);
  for (auto it = pools.begin(); it != pools.end();) {
    pool& p = **it;
    const bool was_orphan = leave_orphans(&p);
    const int before = pool_access::attached(p).fetch_add(1, std::memory_order_acq_rel);
    assert_invariant([&] { return before >= 0 && (!was_orphan || before == 0); },
                     "invariant 7: an orphaned pool is attached nowhere");
    const stream* consumer = pool_access::consumer(p).load(std::memory_order_acquire);
    if (single_consumer(p.access()) && before > 0 && consumer != &s) {
      // Another stream serves this single-consumer pool now (it adopted it while `s` was
      // stopped): serving it too would break the pool's promise.
      pool_access::attached(p).fetch_sub(1, std::memory_order_acq_rel);
      it = pools.erase(it);
      continue;
    }
    serve_from(p, s, false);
    ++it;
  }
  assert_invariant(
      [this, &pools] {
        return std::all_of(pools.begin(), pools.end(), [this](const std::shared_ptr<pool>& p) {
          return pool_access::attached(*p).load(std::memory_order_relaxed) > 0 &&
                 !listed(orphans_for_checks(), p.get());
        });
      },
      "invariant 7: an attached pool is counted and no orphan");
}

void pool_attachment::hand_over(stream& s, const pool_list& old, pool_list& next) {
  assert_invariant([&s] { return current_stream_no_switch() == &s; },
                   "invariant 10: a replacement hands the pools over on its own stream");
  lock_guard lock(mutex_);
  for (const auto& p : old) {
    if (pool_access::attached(*p).fetch_sub(1, std::memory_order_acq_rel) == 1) {
      // Only the old scheduler listed it: `next` takes it over (its count stays at one).
      pool_access::attached(*p).fetch_add(1, std::memory_order_acq_rel);
      next.push_back(p);
    } else if (pool_access::producer(*p).load(std::memory_order_acquire) == &s &&
               std::find(next.begin(), next.end(), p) == next.end()) {
      // Kept by a scheduler of another stream: `s` stops producing for it, pushes serialise on
      // the lock. (A pool `next` shares stays `s`'s: orphaning it would send every push of `s`
      // through that lock.)
      pool_access::producer(*p).store(orphaned_producer, std::memory_order_release);
    }
  }
  assert_invariant(
      [&] {
        return std::all_of(next.begin(), next.end(), [](const std::shared_ptr<pool>& p) {
          return pool_access::attached(*p).load(std::memory_order_relaxed) > 0;
        });
      },
      "invariant 7: every pool of an installed scheduler counts it");
}

void pool_attachment::hand_over_unattached(const pool_list& old, pool_list& next) {
  lock_guard lock(mutex_);
  for (const auto& p : old) {
    if (std::find(next.begin(), next.end(), p) == next.end() && !p->empty()) next.push_back(p);
  }
}

bool pool_attachment::release(stream& s, const pool_list& pools, timer_heap& timers) noexcept {
  lock_guard lock(mutex_);
  bool look_soon = false;
  if (!timers.empty()) {
    // ULTs in timed waits that started on `s` must still time out: hand the deadlines on.
    for (;;) {  // the strong guarantee: retried until memory is found (see until_allocated)
      try {
        timers.move_into(timers_);
        break;
      } catch (const std::bad_alloc&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    has_timers_.store(true, std::memory_order_relaxed);
    look_soon = true;
  }
  for (const auto& p : pools) {
    if (pool_access::producer(*p).load(std::memory_order_acquire) == &s)
      pool_access::producer(*p).store(orphaned_producer, std::memory_order_release);
    const int attached = pool_access::attached(*p).fetch_sub(1, std::memory_order_acq_rel);
    assert_invariant([attached] { return attached > 0; },
                     "invariant 7: attached(p) counts this stream's scheduler until its shutdown");
    if (attached == 1) {
      assert_invariant([this, &p] { return !listed(orphans_for_checks(), p.get()); },
                       "invariant 7: a pool is on the orphan list once");
      for (;;) {
        try {
          orphans_.push_back(p);
          break;
        } catch (const std::bad_alloc&) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      }
      has_orphans_.store(true, std::memory_order_relaxed);
      look_soon = look_soon || !p->empty();
    }
  }
  return look_soon;
}

bool pool_attachment::adopt(stream& s, pool_list& pools, bool busy_only) noexcept {
  lock_guard lock(mutex_);
  bool adopted = false;
  for (auto it = orphans_.begin(); it != orphans_.end();) {
    const auto& p = *it;
    if (busy_only && p->empty()) {
      ++it;
      continue;
    }
    // The push first (it may run out of memory: it then waits, as the pool must not be lost),
    // then the bookkeeping that makes the pool `s`'s.
    until_allocated([&] { pools.push_back(p); });
    const int before = pool_access::attached(*p).fetch_add(1, std::memory_order_acq_rel);
    assert_invariant([before] { return before == 0; },
                     "invariant 7: a pool on the orphan list is attached nowhere");
    serve_from(*p, s, true);
    it = orphans_.erase(it);
    adopted = true;
  }
  has_orphans_.store(!orphans_.empty(), std::memory_order_relaxed);
  assert_invariant([this, busy_only] { return busy_only || orphans_for_checks().empty(); },
                   "invariant 7: an adoption of all orphans leaves none");
  return adopted;
}

bool pool_attachment::add(stream& s, const std::shared_ptr<pool>& p, bool& consumes) {
  lock_guard lock(mutex_);
  consumes = false;
  auto& attached = pool_access::attached(*p);
  if (single_consumer(p->access())) {
    const stream* c = pool_access::consumer(*p).load(std::memory_order_acquire);
    if (c && c != &s && attached.load(std::memory_order_acquire) > 0) return false;
    consumes = true;
  }
  serve_from(*p, s, false);
  const bool was_orphan = leave_orphans(p.get());
  const int before = attached.fetch_add(1, std::memory_order_acq_rel);
  assert_invariant([&] { return before >= 0 && (!was_orphan || before == 0); },
                   "invariant 7: an orphaned pool is attached nowhere");
  return true;
}

bool pool_attachment::attach_stacked(stream& here, const pool_list& pools, bool counted) {
  lock_guard lock(mutex_);
  bool consumes = false;
  for (const auto& p : pools) {
    if (!counted) {
      const bool was_orphan = leave_orphans(p.get());
      const int before = pool_access::attached(*p).fetch_add(1, std::memory_order_acq_rel);
      assert_invariant([&] { return before >= 0 && (!was_orphan || before == 0); },
                       "invariant 7: an orphaned pool is attached nowhere");
    }
    consumes = consumes || single_consumer(p->access());
    // A producer that terminated without handing the pool over is gone as well.
    const stream* old = pool_access::producer(*p).load(std::memory_order_acquire);
    const bool gone = !unset_or_orphaned(old) && old->state() == stream_state::terminated;
    serve_from(*p, here, gone);
    assert_invariant(
        [this, &p] {
          return pool_access::attached(*p).load(std::memory_order_relaxed) > 0 &&
                 !listed(orphans_for_checks(), p.get());
        },
        "invariant 7: a stacked scheduler's pool is counted and no orphan while it runs");
  }
  return consumes;
}

bool pool_attachment::detach_stacked(stream& here, const pool_list& pools) {
  lock_guard lock(mutex_);
  bool orphaned = false;
  for (const auto& p : pools) {
    if (pool_access::producer(*p).load(std::memory_order_acquire) == &here)
      pool_access::producer(*p).store(orphaned_producer, std::memory_order_release);
    const int before = pool_access::attached(*p).fetch_sub(1, std::memory_order_acq_rel);
    assert_invariant([before] { return before > 0; },
                     "invariant 7: attached(p) of a stacked scheduler's pool is > 0");
    if (before == 1) {
      assert_invariant([this, &p] { return !listed(orphans_for_checks(), p.get()); },
                       "invariant 7: a pool is on the orphan list once");
      pool_access::consumer(*p).store(nullptr, std::memory_order_release);
      orphans_.push_back(p);
      has_orphans_.store(true, std::memory_order_relaxed);
      orphaned = true;
    }
  }
  return orphaned;
}

bool pool_attachment::push_orphaned(pool& p, work_unit* u) {
  lock_guard lock(mutex_);
  if (pool_access::producer(p).load(std::memory_order_acquire) != orphaned_producer) return false;
  assert_invariant([&p] { return single_producer(p.access()); },
                   "invariant 5: only a single-producer pool has an orphaned producer");
  p.push(u);
  return true;
}

void pool_attachment::orphan_producer(pool& p, stream* ended) {
  assert_invariant([ended] { return ended != nullptr && ended != orphaned_producer; },
                   "invariant 5: a producer that ended is a stream");
  lock_guard lock(mutex_);
  stream* expected = ended;
  pool_access::producer(p).compare_exchange_strong(expected, orphaned_producer,
                                                   std::memory_order_acq_rel);
}

work_unit* pool_attachment::pop_orphan() noexcept {
  // Most of the time the orphans (pools of freed streams) are empty, and a stream that finds
  // another at them goes on with its own work.
  if (!mutex_.try_lock()) return nullptr;
  work_unit* u = nullptr;
  if (orphans_.empty()) {
    has_orphans_.store(false, std::memory_order_relaxed);
  } else {
    for (const auto& p : orphans_) {
      assert_invariant(
          [&p] { return pool_access::attached(*p).load(std::memory_order_relaxed) == 0; },
          "invariant 7: a pool on the orphan list is attached nowhere");
      if (p->empty()) continue;
      if ((u = p->pop())) break;
    }
  }
  mutex_.unlock();
  assert_invariant([u] { return !u || u->pool_holder.load(std::memory_order_relaxed) == nullptr; },
                   "invariant 1: a unit popped from an orphan is linked in no pool");
  return u;
}

bool pool_attachment::orphans_hold_units() const {
  lock_guard lock(mutex_);
  return std::any_of(orphans_.begin(), orphans_.end(),
                     [](const std::shared_ptr<pool>& p) { return !p->empty(); });
}

void pool_attachment::take_timers(timer_heap& timers) noexcept {
  lock_guard lock(mutex_);
  std::size_t taken = 0;
  try {
    for (; taken < timers_.size(); ++taken) timers.add(timers_[taken]);
  } catch (...) {
    // Out of memory growing the heap: the rest wait for the next call (or another stream).
  }
  timers_.erase(timers_.begin(), timers_.begin() + static_cast<std::ptrdiff_t>(taken));
  if (timers_.empty()) has_timers_.store(false, std::memory_order_relaxed);
  assert_invariant([&timers, taken] { return taken == 0 || !timers.empty(); },
                   "timers: the deadlines taken over are in the stream's heap");
}

}  // namespace weft::detail
