// SPDX-License-Identifier: Apache-2.0
#include "weft/schedulers/lifo_pool.hpp"

#include <mutex>

#include "weft/ext/ext.hpp"

namespace weft {

namespace {

template <bool Locked>
class lifo_pool final : public pool {
 public:
  explicit lifo_pool(access_mode mode) noexcept : pool(mode) {}
  work_unit* pop() noexcept override {
    if (size_.load(std::memory_order_relaxed) == 0) return nullptr;
    ext::lock_guard g(lock_);
    work_unit* u = list_.pop_front();
    if (u) {
      ext::assert_invariant([this] { return size_.load(std::memory_order_relaxed) > 0; },
                            "pool counts: a LIFO pool's size never goes below 0");
      size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    }
    return u;
  }
  bool remove(work_unit* u) noexcept override {
    ext::lock_guard g(lock_);
    if (u->pool_holder.load(std::memory_order_relaxed) != this) return false;
    list_.unlink(u);
    size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return true;
  }
  std::size_t size() const noexcept override { return size_.load(std::memory_order_relaxed); }

 protected:
  void do_push(work_unit* u) noexcept override {
    ext::lock_guard g(lock_);
    list_.push_front(u, this);
    size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

 private:
  ext::maybe_lock<Locked> lock_;
  ext::unit_list list_ WEFT_GUARDED_BY(lock_);
  std::atomic<std::size_t> size_{0};  // written under the lock, read anywhere
};

}  // namespace

std::shared_ptr<pool> make_lifo_pool(access_mode mode) {
  if (mode == access_mode::priv) return std::make_shared<lifo_pool<false>>(mode);
  return std::make_shared<lifo_pool<true>>(mode);
}

}  // namespace weft
