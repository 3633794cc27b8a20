// SPDX-License-Identifier: Apache-2.0
#include "weft/schedulers/priority_pool.hpp"

#include <mutex>

#include "weft/error.hpp"
#include "weft/ext/ext.hpp"

namespace weft {

struct priority_pool::state {
  explicit state(unsigned levels) : lists(levels), sizes(levels) {}
  spinlock lock;
  std::vector<ext::unit_list> lists WEFT_GUARDED_BY(lock);
  std::vector<std::atomic<std::size_t>> sizes;  // written under lock, read anywhere
  std::atomic<std::size_t> total{0};            // written under lock, read anywhere
};

/// A lane tags the unit with itself (the hook is the pools' to use while the unit is pushed) and
/// pushes it into the priority pool, which reads the tag to find the priority; going through
/// priority_pool::push() wakes a stream parked on the priority pool.
class priority_pool::lane final : public pool {
 public:
  lane(priority_pool& parent, unsigned p) noexcept
      : pool(access_mode::mpmc), parent_(parent), p_(p) {}
  work_unit* pop() noexcept override { return parent_.pop_at(p_); }
  bool remove(work_unit* u) noexcept override { return parent_.remove(u); }
  std::size_t size() const noexcept override { return parent_.size_at(p_); }
  unsigned priority() const noexcept { return p_; }

 protected:
  void do_push(work_unit* u) noexcept override {
    u->pool_holder.store(this, std::memory_order_relaxed);
    parent_.push(u);
  }

 private:
  priority_pool& parent_;
  unsigned p_;
};

priority_pool::priority_pool(unsigned levels, unsigned default_priority, access_mode mode)
    : pool(mode), default_(default_priority) {
  if (levels == 0 || default_priority >= levels) {
    throw error(errc::invalid_config,
                "weft: priority_pool needs at least one level and a default priority below it");
  }
  if (mode != access_mode::mpsc && mode != access_mode::mpmc)
    throw error(errc::invalid_config, "weft: a priority_pool is mpsc or mpmc");
  s_ = std::make_unique<state>(levels);
  for (unsigned p = 0; p < levels; ++p) lanes_.push_back(std::make_unique<lane>(*this, p));
}

priority_pool::~priority_pool() = default;

void priority_pool::do_push(work_unit* u) noexcept {
  unsigned p = default_;
  pool* tag = u->pool_holder.load(std::memory_order_relaxed);
  // The tag is read: the field is the pool's again, and unit_list checks it for double pushes.
  if constexpr (ext::asserts_enabled) u->pool_holder.store(nullptr, std::memory_order_relaxed);
  // Garbage unless a lane just set it; a lane of this pool is recognised by address.
  for (unsigned i = 0; i < levels(); ++i) {
    if (tag == lanes_[i].get()) {
      p = i;
      break;
    }
  }
  push_at(u, p);
}

void priority_pool::push_at(work_unit* u, unsigned p) noexcept {
  ext::lock_guard g(s_->lock);
  ext::assert_invariant([&] { return p < levels(); }, "priority pool: a level out of range");
  s_->lists[p].push_back(u, lanes_[p].get());  // pool_holder: the lane (see remove())
  s_->sizes[p].store(s_->sizes[p].load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  s_->total.store(s_->total.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

work_unit* priority_pool::pop() noexcept {
  if (s_->total.load(std::memory_order_relaxed) == 0) return nullptr;
  ext::lock_guard g(s_->lock);
  for (unsigned p = levels(); p-- > 0;) {
    if (work_unit* u = s_->lists[p].pop_front()) {
      s_->sizes[p].store(s_->sizes[p].load(std::memory_order_relaxed) - 1,
                         std::memory_order_relaxed);
      s_->total.store(s_->total.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
      return u;
    }
  }
  return nullptr;
}

work_unit* priority_pool::pop_at(unsigned p) noexcept {
  if (s_->sizes[p].load(std::memory_order_relaxed) == 0) return nullptr;
  ext::lock_guard g(s_->lock);
  work_unit* u = s_->lists[p].pop_front();
  if (u) {
    s_->sizes[p].store(s_->sizes[p].load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    s_->total.store(s_->total.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  }
  return u;
}

bool priority_pool::remove(work_unit* u) noexcept {
  ext::lock_guard g(s_->lock);
  // While linked, a unit's pool_holder is the lane of its priority.
  pool* holder = u->pool_holder.load(std::memory_order_relaxed);
  for (unsigned p = 0; p < levels(); ++p) {
    if (holder != lanes_[p].get()) continue;
    s_->lists[p].unlink(u);
    s_->sizes[p].store(s_->sizes[p].load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    s_->total.store(s_->total.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return true;
  }
  return false;
}

std::size_t priority_pool::size_at(unsigned p) const noexcept {
  return s_->sizes[p].load(std::memory_order_relaxed);
}

std::size_t priority_pool::size() const noexcept {
  return s_->total.load(std::memory_order_relaxed);
}

std::shared_ptr<priority_pool> make_priority_pool(unsigned levels, unsigned default_priority,
                                                  access_mode mode) {
  return std::make_shared<priority_pool>(levels, default_priority, mode);
}

}  // namespace weft
