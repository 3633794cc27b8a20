// SPDX-License-Identifier: Apache-2.0
// The work-stealing pool: a Chase-Lev deque (the owner pushes and pops at the bottom, everyone
// else takes at the top with a CAS), plus a spinlocked side lane for pushes from other threads
// and an owner-private yield lane.
//
// Why it is safe (Chase and Lev, SPAA 2005; Lê et al., PPoPP 2013, for the weak-memory version):
//  - only the owner writes bottom_ and the array; a unit is published by the release store of
//    bottom_ after its slot was written, and a taker reads bottom_ (acquire) before the slot;
//  - the owner's take stores bottom_ - 1 and then reads top_, both seq_cst; a taker reads top_,
//    fences, then reads bottom_: if both aim at the last unit (top == bottom - 1), both CAS top_
//    and exactly one wins; otherwise their slots differ;
//  - a taker reads slot t, then CASes top_ from t: if the unit was taken meanwhile, the CAS fails
//    and the value read is dropped; top_ only grows (64-bit), so there is no ABA;
//  - takers take one unit per CAS. A batch (top += k) would be unsafe: the owner may take from
//    the bottom down into the batch between the taker's read of bottom_ and its CAS;
//  - growing copies [top, bottom) into a new array published before any later bottom_ store, so a
//    taker that sees an index pushed after the growth (through bottom_) also sees the new array;
//    old arrays stay allocated until the pool dies, since a slow taker may still read one.
//
// Out of memory: a push cannot fail (pool::push is noexcept and the runtime has no way to take
// back a wake-up or a yield), so an owner push that finds the array full and cannot allocate a
// bigger one puts the unit in the side lane instead, which is an intrusive list and needs no
// memory. Nothing is lost and nothing is reported: the owner pops the side lane when its array is
// empty (and every 61st pop), thieves take from it too; only the order changes (the unit runs
// after the array's units, not before them). The next owner push that finds the array full tries
// to grow it again, so the array grows as soon as memory is back. Retired arrays are kept on an
// intrusive list for the same reason: retiring one allocates nothing.
#include "weft/schedulers/ws_pool.hpp"

#include <algorithm>
#include <new>

#include "weft/ext/ext.hpp"

namespace weft {

struct ws_pool::ring {
  /// A ring of `capacity` slots (a power of two), or nullptr when there is no memory for it.
  static ring* make(std::int64_t capacity) noexcept {
    const auto n = static_cast<std::size_t>(capacity);
    std::unique_ptr<std::atomic<work_unit*>[]> slots(new (std::nothrow) std::atomic<work_unit*>[n]);
    std::unique_ptr<std::atomic<std::uint64_t>[]> stamps(new (std::nothrow)
                                                             std::atomic<std::uint64_t>[n]);
    if (!slots || !stamps) return nullptr;
    return new (std::nothrow) ring(capacity, std::move(slots), std::move(stamps));
  }
  std::atomic<work_unit*>& at(std::int64_t i) noexcept { return slots[i & mask]; }
  std::atomic<std::uint64_t>& stamp(std::int64_t i) noexcept { return stamps[i & mask]; }
  std::int64_t capacity() const noexcept { return mask + 1; }
  const std::int64_t mask;
  std::unique_ptr<std::atomic<work_unit*>[]> slots;
  // Beside each slot, the number of the owner push that filled it (oldest_stamp()).
  std::unique_ptr<std::atomic<std::uint64_t>[]> stamps;
  ring* retired_next = nullptr;  // the list of arrays replaced by bigger ones (ws_pool::retired_)

 private:
  ring(std::int64_t capacity, std::unique_ptr<std::atomic<work_unit*>[]> s,
       std::unique_ptr<std::atomic<std::uint64_t>[]> st) noexcept
      : mask(capacity - 1), slots(std::move(s)), stamps(std::move(st)) {}
};

namespace {

/// Most units one steal_into() takes.
constexpr std::size_t max_batch = 64;

/// The owner looks at its lanes before its array once every this many pops (as Go's scheduler
/// looks at its global queue every 61st tick: a prime, so it does not fall into step with a
/// program's own periods).
constexpr unsigned lanes_first_every = 61;

class side_guard {
 public:
  explicit side_guard(std::atomic<bool>& l) noexcept : l_(l) {
    while (l_.exchange(true, std::memory_order_acquire)) {
      while (l_.load(std::memory_order_relaxed)) cpu_relax();
    }
  }
  ~side_guard() { l_.store(false, std::memory_order_release); }
  side_guard(const side_guard&) = delete;
  side_guard& operator=(const side_guard&) = delete;

 private:
  std::atomic<bool>& l_;
};

std::int64_t round_capacity(std::size_t n) {
  std::int64_t c = 2;
  while (static_cast<std::size_t>(c) < n) c *= 2;
  return c;
}

}  // namespace

ws_pool::ws_pool(std::size_t initial_capacity)
    : pool(access_mode::mpmc), array_(ring::make(round_capacity(initial_capacity))) {
  if (!array_.load(std::memory_order_relaxed)) throw std::bad_alloc();
}

ws_pool::~ws_pool() {
  delete array_.load(std::memory_order_relaxed);
  while (ring* r = retired_) {
    retired_ = r->retired_next;
    delete r;
  }
}

bool ws_pool::claim(execution_stream& owner) noexcept {
  void* expected = nullptr;
  void* me = &owner;
  if (claimed_.compare_exchange_strong(expected, me, std::memory_order_acq_rel)) set_owner(owner);
  return claimed_.load(std::memory_order_acquire) == me;
}

bool ws_pool::owned_by_caller() const noexcept {
  // claim() makes the winner the pool's owner, publish_private() clears both.
  return caller_is_owner();
}

void ws_pool::do_push(work_unit* u) noexcept {
  if (owned_by_caller()) {
    owner_push(u);
  } else {
    side_push(u);
  }
}

void ws_pool::do_push_yield(work_unit* u) noexcept {
  if (!owned_by_caller()) {
    side_push(u);
    return;
  }
  u->pool_next = nullptr;
  u->pool_prev = yield_tail_;
  u->pool_holder.store(this, std::memory_order_relaxed);  // marks the yield lane, for remove()
  (yield_tail_ ? yield_tail_->pool_next : yield_head_) = u;
  yield_tail_ = u;
  yield_size_.store(yield_size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void ws_pool::unlink_yielded(work_unit* u) noexcept {
  // The yield lane is the owner's alone (invariant 1 for this lane: pool_holder == this while
  // linked), and its count never goes below 0.
  ext::assert_invariant(
      [&] {
        return u->pool_holder.load(std::memory_order_relaxed) == this &&
               yield_size_.load(std::memory_order_relaxed) > 0 &&
               (u->pool_prev ? u->pool_prev->pool_next == u : yield_head_ == u);
      },
      "invariant 1: unlink of a unit that is not in the work-stealing pool's yield lane");
  (u->pool_prev ? u->pool_prev->pool_next : yield_head_) = u->pool_next;
  (u->pool_next ? u->pool_next->pool_prev : yield_tail_) = u->pool_prev;
  u->pool_next = u->pool_prev = nullptr;
  u->pool_holder.store(nullptr, std::memory_order_relaxed);
  yield_size_.store(yield_size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
}

work_unit* ws_pool::do_push_pop(work_unit* u) noexcept {
  // Only the owner calls this (pool::do_push_pop). With nothing in the array or the side lane, a
  // yield is a rotation of the yield lane: u goes on at once when it is alone, else the oldest
  // yielder runs and u queues behind the others.
  if (top_.load(std::memory_order_relaxed) >= bottom_.load(std::memory_order_relaxed) &&
      side_size_.load(std::memory_order_relaxed) == 0) [[likely]] {
    work_unit* next = yield_head_;
    if (!next) return u;
    if (!next->pool_next || !has_parked_streams()) [[likely]] {
      unlink_yielded(next);
      do_push_yield(u);
      return next;
    }
  }
  do_push_yield(u);
  return pop();
}

void ws_pool::side_push(work_unit* u) noexcept {
  side_guard g(side_lock_);
  u->pool_next = nullptr;
  (side_tail_ ? side_tail_->pool_next : side_head_) = u;
  side_tail_ = u;
  side_size_.fetch_add(1, std::memory_order_relaxed);
}

void ws_pool::owner_push(work_unit* u) noexcept {
  const std::int64_t b = bottom_.load(std::memory_order_relaxed);
  const std::int64_t t = top_.load(std::memory_order_acquire);
  ring* a = array_.load(std::memory_order_relaxed);
  if (b - t >= a->capacity()) [[unlikely]] {
    a = grow(a, t, b);
    if (!a) {  // no memory for a bigger array: the side lane needs none (see the top of the file)
      side_push(u);
      return;
    }
  }
  a->at(b).store(u, std::memory_order_relaxed);
  a->stamp(b).store(++pushes_, std::memory_order_relaxed);
  bottom_.store(b + 1, std::memory_order_release);
}

ws_pool::ring* ws_pool::grow(ring* r, std::int64_t top, std::int64_t bottom) noexcept {
  ring* bigger = ring::make(r->capacity() * 2);
  if (!bigger) return nullptr;
  for (std::int64_t i = top; i < bottom; ++i) {
    bigger->at(i).store(r->at(i).load(std::memory_order_relaxed), std::memory_order_relaxed);
    bigger->stamp(i).store(r->stamp(i).load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  array_.store(bigger, std::memory_order_release);
  r->retired_next = retired_;
  retired_ = r;
  return bigger;
}

work_unit* ws_pool::take_bottom() noexcept {
  std::int64_t b = bottom_.load(std::memory_order_relaxed);
  // A stale top_ is smaller than the real one, so this look never calls a non-empty array empty
  // the wrong way round: an array that reads empty here is empty.
  if (top_.load(std::memory_order_relaxed) >= b) return nullptr;
  --b;
  ring* a = array_.load(std::memory_order_relaxed);
  bottom_.store(b, std::memory_order_seq_cst);
  std::int64_t t = top_.load(std::memory_order_seq_cst);
  if (t > b) {  // takers emptied it meanwhile
    bottom_.store(b + 1, std::memory_order_relaxed);
    return nullptr;
  }
  work_unit* u = a->at(b).load(std::memory_order_relaxed);
  if (t == b) {
    // The last unit: a taker may be after it too; the CAS decides.
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                      std::memory_order_relaxed)) {
      u = nullptr;
    }
    bottom_.store(b + 1, std::memory_order_relaxed);
  }
  return u;
}

work_unit* ws_pool::take_top() noexcept {
  std::int64_t t = top_.load(std::memory_order_acquire);
  for (;;) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const std::int64_t b = bottom_.load(std::memory_order_acquire);
    if (t >= b) return nullptr;
    ring* a = array_.load(std::memory_order_acquire);
    work_unit* u = a->at(t).load(std::memory_order_relaxed);
    if (top_.compare_exchange_weak(t, t + 1, std::memory_order_seq_cst,
                                   std::memory_order_acquire)) {
      return u;
    }
  }
}

work_unit* ws_pool::take_side() noexcept {
  if (side_size_.load(std::memory_order_relaxed) == 0) return nullptr;
  side_guard g(side_lock_);
  work_unit* u = side_head_;
  if (!u) return nullptr;
  side_head_ = u->pool_next;
  if (!side_head_) side_tail_ = nullptr;
  side_size_.fetch_sub(1, std::memory_order_relaxed);
  return u;
}

work_unit* ws_pool::take_yielded() noexcept {
  work_unit* u = yield_head_;
  if (!u) return nullptr;
  if (u->pool_next && has_parked_streams()) [[unlikely]] {
    // Several yielders and an idle stream: let it take some. All but the last: that one may be
    // the ULT yielding right now (do_push_pop), still running, which no other stream may see.
    while (yield_head_ != yield_tail_) {
      work_unit* v = yield_head_;
      unlink_yielded(v);
      side_push(v);
    }
    wake_one_parked();
    if (work_unit* v = take_side()) return v;
    u = yield_head_;
  }
  unlink_yielded(u);
  return u;
}

work_unit* ws_pool::pop() noexcept {
  if (!owned_by_caller()) {
    work_unit* u = take_top();
    if (u) {
      stolen_.fetch_add(1, std::memory_order_relaxed);
      return u;
    }
    return take_side();
  }
  if (++owner_pops_ == lanes_first_every) [[unlikely]] {
    owner_pops_ = 0;
    if (work_unit* u = take_side()) return u;
    if (work_unit* u = take_yielded()) return u;
  }
  if (work_unit* u = take_bottom()) return u;
  if (work_unit* u = take_side()) return u;
  return take_yielded();
}

bool ws_pool::remove(work_unit* u) noexcept {
  if (!owned_by_caller()) return false;
  if (u->pool_holder.load(std::memory_order_relaxed) == this) {  // in the yield lane
    unlink_yielded(u);
    return true;
  }
  const std::int64_t b = bottom_.load(std::memory_order_relaxed);
  if (top_.load(std::memory_order_relaxed) >= b ||
      array_.load(std::memory_order_relaxed)->at(b - 1).load(std::memory_order_relaxed) != u) {
    return false;
  }
  // Slot b - 1 holds u: the take returns it, or nullptr when a taker got it first.
  return take_bottom() == u;
}

void ws_pool::publish_private() noexcept {
  if (!owned_by_caller()) return;
  while (work_unit* u = yield_head_) {
    unlink_yielded(u);
    side_push(u);
  }
  // No owner until the next claim(): a ULT that still runs on this stream and yields later must
  // not land in a lane nobody pops.
  clear_owner();
  claimed_.store(nullptr, std::memory_order_release);
}

work_unit* ws_pool::steal_into(ws_pool& into, std::size_t max, std::size_t* taken) noexcept {
  if (taken) *taken = 0;
  // A pool the caller owns (its own, or one it kept through a scheduler replacement) is popped,
  // not robbed: only the owner's pop reaches its yield lane.
  if (&into == this || owned_by_caller()) {
    work_unit* u = pop();
    if (taken) *taken = u ? 1 : 0;
    return u;
  }
  work_unit* first = take_top();
  if (!first) {
    first = take_side();
    if (taken) *taken = first ? 1 : 0;
    return first;
  }
  // Up to half of what was there, one CAS each, oldest first into our own pool.
  const std::int64_t left =
      bottom_.load(std::memory_order_acquire) - top_.load(std::memory_order_acquire);
  const std::size_t want =
      std::min<std::size_t>({std::clamp<std::size_t>(max, 1, max_batch),
                             static_cast<std::size_t>(std::max<std::int64_t>(left + 2, 0) / 2)});
  std::size_t k = 1;
  const bool mine = into.owned_by_caller();
  for (; k < want; ++k) {
    work_unit* u = take_top();
    if (!u) break;
    if (mine) {
      into.owner_push(u);
    } else {
      into.push(u);
    }
  }
  stolen_.fetch_add(k, std::memory_order_relaxed);
  if (taken) *taken = k;
  return first;
}

work_unit* ws_pool::steal_pushed() noexcept {
  work_unit* u = take_side();
  if (u) stolen_.fetch_add(1, std::memory_order_relaxed);
  return u;
}

std::uint64_t ws_pool::oldest_stamp() const noexcept {
  // Relaxed and unsynchronised on purpose: a stale or torn view only misjudges a unit's age for
  // the caller's policy; whatever it then takes, it takes with take_top()'s compare-and-swap.
  const std::int64_t t = top_.load(std::memory_order_relaxed);
  if (t >= bottom_.load(std::memory_order_relaxed)) return 0;
  return array_.load(std::memory_order_acquire)->stamp(t).load(std::memory_order_relaxed);
}

std::size_t ws_pool::size() const noexcept {
  const std::int64_t t = top_.load(std::memory_order_relaxed);
  const std::int64_t b = bottom_.load(std::memory_order_relaxed);
  const std::int64_t n = b > t ? b - t : 0;
  return static_cast<std::size_t>(n) + side_size_.load(std::memory_order_relaxed) +
         yield_size_.load(std::memory_order_relaxed);
}

std::shared_ptr<ws_pool> make_ws_pool(std::size_t initial_capacity) {
  return std::make_shared<ws_pool>(initial_capacity);
}

}  // namespace weft
