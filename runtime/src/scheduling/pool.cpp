// SPDX-License-Identifier: Apache-2.0
#include <thread>

#include "core/stream.hpp"
#include "platform/assert.hpp"
#include "platform/spinlock.hpp"
#include "scheduling/pool_access.hpp"

namespace weft {

namespace detail {

namespace {

/// The park list's lock: taken only by parking streams and by pushes that found one parked.
class park_guard {
 public:
  explicit park_guard(std::atomic<bool>& l) noexcept : l_(l) {
    while (l_.exchange(true, std::memory_order_acquire)) {
      while (l_.load(std::memory_order_relaxed)) cpu_relax();
    }
  }
  ~park_guard() { l_.store(false, std::memory_order_release); }
  park_guard(const park_guard&) = delete;
  park_guard& operator=(const park_guard&) = delete;

 private:
  std::atomic<bool>& l_;
};

}  // namespace

void pool_access::park(pool& p, park_entry& e) noexcept {
  park_guard g(p.park_lock_);
  assert_invariant([&e] { return !e.linked && e.owner != nullptr; },
                   "parking: a stream's entry is linked into a pool once per park");
  e.prev = nullptr;
  e.next = p.park_head_;
  if (e.next) e.next->prev = &e;
  p.park_head_ = &e;
  e.linked = true;
  p.parked_.fetch_add(1, std::memory_order_seq_cst);
}

void pool_access::unpark(pool& p, park_entry& e) noexcept {
  park_guard g(p.park_lock_);
  if (!e.linked) return;
  assert_invariant([&p, &e] { return e.prev ? e.prev->next == &e : p.park_head_ == &e; },
                   "parking: a linked entry is reachable from its predecessor");
  assert_invariant([&e] { return !e.next || e.next->prev == &e; },
                   "parking: a linked entry's successor points back to it");
  (e.prev ? e.prev->next : p.park_head_) = e.next;
  if (e.next) e.next->prev = e.prev;
  e.linked = false;
  const std::uint32_t before = p.parked_.fetch_sub(1, std::memory_order_relaxed);
  assert_invariant([before] { return before > 0; },
                   "parking: a pool counts each stream linked in its parked list");
}

}  // namespace detail

pool::~pool() = default;

void pool::push(work_unit* u) noexcept {
  detail::assert_invariant([u] { return u != nullptr; }, "a pool is pushed a unit, not null");
  // invariant 5: route() sends a push into an attached single-producer pool through its
  // producer's inbox; only the producer (or, for an orphaned pool, a holder of the orphan lock,
  // which this check cannot see) pushes directly.
  detail::assert_invariant(
      [this] {
        if (!single_producer(mode_)) return true;
        detail::stream* p = producer_.load(std::memory_order_acquire);
        return !p || p == detail::orphaned_producer || p == detail::current_stream_no_switch();
      },
      "invariant 5: a push into a single-producer pool from a stream other than its producer");
  do_push(u);
  // A single-consumer pool's consumer is awake when it pushes, and nobody else can pop: no one to
  // wake. (Private pools are pushed only by their owner, or under the orphan lock when no stream
  // consumes them.)
  if (single_consumer(mode_)) {
    if (mode_ == access_mode::priv) return;
    if (consumer_.load(std::memory_order_relaxed) == detail::current_stream_no_switch()) return;
  }
  // Dekker with stream::park: it links itself (a seq_cst RMW on parked_), fences, then reads
  // size(); we published the unit, fence, then read parked_. One of the two sees the other.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (wants_wake()) [[unlikely]]
    wake_parked();
}

void pool::wake_parked() noexcept {
  detail::stream* s = nullptr;
  {
    detail::park_guard g(park_lock_);
    detail::park_entry* e = park_head_;
    if (!e) return;
    // Wake one stream per push, taking it off the list so that the next push wakes another.
    detail::assert_invariant([e] { return e->linked && e->prev == nullptr; },
                             "parking: the head of a pool's parked list is linked");
    park_head_ = e->next;
    if (park_head_) park_head_->prev = nullptr;
    e->linked = false;
    const std::uint32_t before = parked_.fetch_sub(1, std::memory_order_relaxed);
    detail::assert_invariant([before] { return before > 0; },
                             "parking: a pool counts each stream linked in its parked list");
    s = e->owner;
  }
  detail::assert_invariant([s] { return s != nullptr; },
                           "parking: a parked entry names its stream");
  s->unpark();
}

work_unit* pool::pop_wait(std::chrono::nanoseconds timeout) noexcept {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (unsigned round = 0;; ++round) {
    if (work_unit* u = pop()) return u;
    if (std::chrono::steady_clock::now() >= deadline) return nullptr;
    if (round < 64) {
      detail::cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
}

work_unit* pool::do_push_pop(work_unit* u) noexcept {
  do_push_yield(u);
  return pop();
}

bool pool::remove(work_unit*) noexcept {
  return false;
}

execution_stream* pool::producer() const noexcept {
  detail::stream* s = producer_.load(std::memory_order_acquire);
  return s == detail::orphaned_producer ? nullptr : s;
}

execution_stream* pool::consumer() const noexcept {
  return consumer_.load(std::memory_order_acquire);
}

void pool::set_producer(execution_stream& s) noexcept {
  producer_.store(&detail::impl(s), std::memory_order_release);
}

execution_stream* pool::owner() const noexcept {
  return owner_.load(std::memory_order_acquire);
}

void pool::set_owner(execution_stream& s) noexcept {
  owner_.store(&detail::impl(s), std::memory_order_release);
}

void pool::clear_owner() noexcept {
  owner_.store(nullptr, std::memory_order_release);
}

}  // namespace weft
