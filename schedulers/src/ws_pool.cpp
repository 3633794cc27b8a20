// The work-stealing pool: a Chase-Lev circular array (owner pushes at the bottom, everyone takes
// at the top with a CAS), plus a spinlocked side lane for pushes from other threads.
//
// Why it is safe (see Chase and Lev, SPAA 2005; Lê et al., PPoPP 2013, for the weak-memory
// version; every access here is at least acquire/release, and the CAS is seq_cst):
//  - only the owner writes bottom_ and the array; a unit is published by the release store of
//    bottom_ after its slot was written, and a taker reads bottom_ (acquire) before the slot;
//  - a taker reads slot t, then CASes top_ from t: if the owner has meanwhile reused slot t (it
//    does so only after seeing top_ > t), the CAS fails and the value read is dropped; top_ only
//    grows (64-bit), so there is no ABA;
//  - growing copies [top, bottom) into a new array published before any later bottom_ store, so a
//    taker that sees an index pushed after the growth (through bottom_) also sees the new array;
//    old arrays stay allocated until the pool dies, since a slow taker may still read one.
#include "weft/schedulers/ws_pool.hpp"

#include <algorithm>

#include "spinlock.hpp"
#include "stream.hpp"

namespace weft {

struct ws_pool::ring {
  explicit ring(std::int64_t capacity)
      : mask(capacity - 1),
        slots(new std::atomic<work_unit*>[static_cast<std::size_t>(capacity)]) {}
  std::atomic<work_unit*>& at(std::int64_t i) noexcept { return slots[i & mask]; }
  std::int64_t capacity() const noexcept { return mask + 1; }
  const std::int64_t mask;
  std::unique_ptr<std::atomic<work_unit*>[]> slots;
};

namespace {

/// Most units one steal_into() takes.
constexpr std::size_t max_batch = 64;

class side_guard {
 public:
  explicit side_guard(std::atomic<bool>& l) noexcept : l_(l) {
    while (l_.exchange(true, std::memory_order_acquire)) {
      while (l_.load(std::memory_order_relaxed)) detail::cpu_relax();
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
    : pool(access_mode::mpmc), array_(new ring(round_capacity(initial_capacity))) {}

ws_pool::~ws_pool() {
  delete array_.load(std::memory_order_relaxed);
  for (ring* r : retired_) delete r;
}

bool ws_pool::claim(execution_stream& owner) noexcept {
  void* expected = nullptr;
  void* me = &detail::impl(owner);
  owner_.compare_exchange_strong(expected, me, std::memory_order_acq_rel);
  return owner_.load(std::memory_order_acquire) == me;
}

execution_stream* ws_pool::owner() const noexcept {
  return static_cast<detail::stream*>(owner_.load(std::memory_order_acquire));
}

bool ws_pool::owned_by_caller() const noexcept {
  void* o = owner_.load(std::memory_order_relaxed);
  return o && o == detail::current_stream_no_switch();
}

void ws_pool::do_push(work_unit* u) noexcept {
  if (owned_by_caller()) {
    owner_push(u);
    return;
  }
  side_guard g(side_lock_);
  u->pool_next = nullptr;
  if (side_tail_) {
    side_tail_->pool_next = u;
  } else {
    side_head_ = u;
  }
  side_tail_ = u;
  side_size_.fetch_add(1, std::memory_order_relaxed);
}

void ws_pool::owner_push(work_unit* u) noexcept {
  const std::int64_t b = bottom_.load(std::memory_order_relaxed);
  const std::int64_t t = top_.load(std::memory_order_acquire);
  ring* a = array_.load(std::memory_order_relaxed);
  if (b - t >= a->capacity()) a = grow(a, t, b);
  a->at(b).store(u, std::memory_order_relaxed);
  bottom_.store(b + 1, std::memory_order_release);
}

ws_pool::ring* ws_pool::grow(ring* r, std::int64_t top, std::int64_t bottom) noexcept {
  auto* bigger = new ring(r->capacity() * 2);
  for (std::int64_t i = top; i < bottom; ++i)
    bigger->at(i).store(r->at(i).load(std::memory_order_relaxed), std::memory_order_relaxed);
  array_.store(bigger, std::memory_order_release);
  retired_.push_back(r);
  return bigger;
}

void ws_pool::drain_side() noexcept {
  work_unit* list;
  {
    side_guard g(side_lock_);
    list = side_head_;
    side_head_ = side_tail_ = nullptr;
  }
  // Into the array first, then out of the count: size() may count a unit twice for a moment,
  // never zero times.
  std::size_t n = 0;
  while (list) {
    work_unit* next = list->pool_next;
    owner_push(list);
    list = next;
    ++n;
  }
  side_size_.fetch_sub(n, std::memory_order_relaxed);
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

work_unit* ws_pool::pop() noexcept {
  if (side_size_.load(std::memory_order_relaxed) != 0 && owned_by_caller()) drain_side();
  std::int64_t t = top_.load(std::memory_order_acquire);
  for (;;) {
    const std::int64_t b = bottom_.load(std::memory_order_acquire);
    if (t >= b) return take_side();
    ring* a = array_.load(std::memory_order_acquire);
    work_unit* u = a->at(t).load(std::memory_order_relaxed);
    if (top_.compare_exchange_weak(t, t + 1, std::memory_order_seq_cst,
                                   std::memory_order_acquire)) {
      return u;
    }
  }
}

work_unit* ws_pool::steal_into(ws_pool& into, std::size_t max, std::size_t* taken) noexcept {
  if (taken) *taken = 0;
  if (&into == this) {
    work_unit* u = pop();
    if (taken) *taken = u ? 1 : 0;
    return u;
  }
  max = std::clamp<std::size_t>(max, 1, max_batch);
  work_unit* batch[max_batch];
  std::int64_t t = top_.load(std::memory_order_acquire);
  std::int64_t k;
  for (;;) {
    const std::int64_t b = bottom_.load(std::memory_order_acquire);
    if (t >= b) {
      work_unit* u = take_side();
      if (taken) *taken = u ? 1 : 0;
      return u;
    }
    k = std::min<std::int64_t>((b - t + 1) / 2, static_cast<std::int64_t>(max));
    ring* a = array_.load(std::memory_order_acquire);
    for (std::int64_t i = 0; i < k; ++i) batch[i] = a->at(t + i).load(std::memory_order_relaxed);
    if (top_.compare_exchange_weak(t, t + k, std::memory_order_seq_cst,
                                   std::memory_order_acquire)) {
      break;
    }
  }
  stolen_.fetch_add(static_cast<std::uint64_t>(k), std::memory_order_relaxed);
  if (taken) *taken = static_cast<std::size_t>(k);
  if (k > 1) {
    // The rest of the batch, oldest first. The last one goes through push() so that a parked
    // stream can come and steal from us in turn.
    const bool mine = into.owned_by_caller();
    for (std::int64_t i = 1; i + 1 < k; ++i) {
      if (mine) {
        into.owner_push(batch[i]);
      } else {
        into.push(batch[i]);
      }
    }
    into.push(batch[k - 1]);
  }
  return batch[0];
}

std::size_t ws_pool::size() const noexcept {
  const std::int64_t t = top_.load(std::memory_order_relaxed);
  const std::int64_t b = bottom_.load(std::memory_order_relaxed);
  const std::int64_t n = b > t ? b - t : 0;
  return static_cast<std::size_t>(n) + side_size_.load(std::memory_order_relaxed);
}

std::shared_ptr<ws_pool> make_ws_pool(std::size_t initial_capacity) {
  return std::make_shared<ws_pool>(initial_capacity);
}

}  // namespace weft
