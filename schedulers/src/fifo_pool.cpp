// SPDX-License-Identifier: Apache-2.0
// The stock FIFO pools (private, two-lane single-consumer, spinlocked shared). All are intrusive
// doubly linked lists threaded through the units' pool hook, so push, pop and remove are O(1) and
// never allocate.
#include "weft/schedulers/fifo_pool.hpp"

#include <mutex>
#include <thread>

#include "weft/ext/ext.hpp"

namespace weft {

namespace {

/// One stream pushes and pops: not a single atomic instruction.
class alignas(64) private_fifo_pool final : public pool {
 public:
  private_fifo_pool() noexcept : pool(access_mode::priv) {}
  void do_push(work_unit* u) noexcept override {
    list_.push_back(u, this);
    size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  work_unit* pop() noexcept override {
    work_unit* u = list_.pop_front();
    if (u) {
      ext::assert_invariant([this] { return size_.load(std::memory_order_relaxed) > 0; },
                            "pool counts: a private FIFO pool's size never goes below 0");
      size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    }
    return u;
  }
  work_unit* do_push_pop(work_unit* u) noexcept override {
    // Behind an empty queue `u` would be pushed and popped straight back; the size is unchanged.
    if (list_.empty()) return u;
    list_.push_back(u, this);
    return list_.pop_front();
  }
  work_unit* pop_wait(std::chrono::nanoseconds timeout) noexcept override {
    // Only this stream can push, so nothing can arrive while it waits: honour the timeout.
    if (work_unit* u = pop()) return u;
    std::this_thread::sleep_for(timeout);
    return pop();
  }
  bool remove(work_unit* u) noexcept override {
    if (u->pool_holder.load(std::memory_order_relaxed) != this) return false;
    list_.unlink(u);
    size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return true;
  }
  std::size_t size() const noexcept override { return size_.load(std::memory_order_relaxed); }

 private:
  ext::unit_list list_;
  std::atomic<std::size_t> size_{0};  // written by the owner only (no RMW), read anywhere
};

/// Shared modes: the list under a spinlock. A sleeping pop_wait registers under the lock, so a
/// push sees it (and wakes it) without any fence of its own.
class alignas(64) shared_fifo_pool final : public pool {
 public:
  explicit shared_fifo_pool(access_mode mode) noexcept : pool(mode) {}
  void do_push(work_unit* u) noexcept override {
    bool wake;
    {
      ext::lock_guard lock(lock_);
      list_.push_back(u, this);
      size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      wake = sleepers_ != 0;
      if (wake) seq_.fetch_add(1, std::memory_order_relaxed);
    }
    if (wake) ext::futex_wake(&seq_, 1);
  }
  work_unit* pop() noexcept override {
    if (size_.load(std::memory_order_relaxed) == 0) return nullptr;
    ext::lock_guard lock(lock_);
    return take();
  }
  work_unit* pop_wait(std::chrono::nanoseconds timeout) noexcept override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      std::uint32_t seen;
      {
        ext::lock_guard lock(lock_);
        if (work_unit* u = take()) return u;
        ++sleepers_;
        seen = seq_.load(std::memory_order_relaxed);
      }
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left > std::chrono::nanoseconds::zero()) {
        ext::futex_wait(&seq_, seen, std::chrono::duration_cast<std::chrono::nanoseconds>(left));
      }
      ext::lock_guard lock(lock_);
      --sleepers_;
      if (work_unit* u = take()) return u;
      if (std::chrono::steady_clock::now() >= deadline) return nullptr;
    }
  }
  bool remove(work_unit* u) noexcept override {
    ext::lock_guard lock(lock_);
    if (u->pool_holder.load(std::memory_order_relaxed) != this) return false;
    list_.unlink(u);
    size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return true;
  }
  std::size_t size() const noexcept override { return size_.load(std::memory_order_relaxed); }

 private:
  work_unit* take() noexcept WEFT_REQUIRES(lock_) {
    work_unit* u = list_.pop_front();
    if (u) {
      ext::assert_invariant([this] { return size_.load(std::memory_order_relaxed) > 0; },
                            "pool counts: a shared FIFO pool's size never goes below 0");
      size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    }
    return u;
  }

  spinlock lock_;
  ext::unit_list list_ WEFT_GUARDED_BY(lock_);
  std::atomic<std::size_t> size_{0};  // written under the lock, read anywhere
  std::uint32_t sleepers_ WEFT_GUARDED_BY(lock_) = 0;
  std::atomic<std::uint32_t> seq_{0};
};

/// Single-consumer modes (MPSC, SPSC). Two lanes: the consumer stream pushes into a private list
/// (no atomic instruction), everyone else pushes onto a lock-free stack that the consumer drains
/// into its list at every pop where it is non-empty. Units from one producer keep their order;
/// remote units join the queue behind what the consumer had queued when it drains them.
class alignas(64) single_consumer_fifo_pool final : public pool {
 public:
  explicit single_consumer_fifo_pool(access_mode mode) noexcept : pool(mode) {}
  void do_push(work_unit* u) noexcept override {
    if (caller_is_consumer()) {
      local_.push_back(u, this);
      local_size_.store(local_size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return;
    }
    u->pool_holder.store(nullptr,
                         std::memory_order_relaxed);  // not removable until the consumer drains it
    work_unit* head = remote_.load(std::memory_order_relaxed);
    do {
      u->pool_next = head;
    } while (!remote_.compare_exchange_weak(head, u, std::memory_order_seq_cst,
                                            std::memory_order_relaxed));
    remote_size_.fetch_add(1, std::memory_order_relaxed);
    if (sleeping_.load(std::memory_order_seq_cst)) {
      seq_.fetch_add(1, std::memory_order_relaxed);
      ext::futex_wake(&seq_, 1);
    }
  }
  work_unit* pop() noexcept override {
    check_consumer();
    if (remote_.load(std::memory_order_relaxed)) drain_remote();
    work_unit* u = local_.pop_front();
    if (u)
      local_size_.store(local_size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return u;
  }
  work_unit* do_push_pop(work_unit* u) noexcept override {
    // Only the consumer calls this (pool::do_push_pop), so `u` goes to the local lane, behind
    // whatever the remote lane held; the local size is unchanged.
    if (remote_.load(std::memory_order_relaxed)) drain_remote();
    if (local_.empty()) return u;
    local_.push_back(u, this);
    return local_.pop_front();
  }
  work_unit* pop_wait(std::chrono::nanoseconds timeout) noexcept override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (work_unit* u = pop()) return u;
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::nanoseconds::zero()) return nullptr;
      const std::uint32_t seen = seq_.load(std::memory_order_relaxed);
      // Dekker with push: we publish that we sleep, then look; a pusher publishes its unit, then
      // looks. Under seq_cst one of the two sees the other.
      sleeping_.store(true, std::memory_order_seq_cst);
      if (!remote_.load(std::memory_order_seq_cst)) {
        ext::futex_wait(&seq_, seen, std::chrono::duration_cast<std::chrono::nanoseconds>(left));
      }
      sleeping_.store(false, std::memory_order_relaxed);
    }
  }
  bool remove(work_unit* u) noexcept override {
    check_consumer();
    if (remote_.load(std::memory_order_relaxed)) drain_remote();
    if (u->pool_holder.load(std::memory_order_relaxed) != this) return false;
    local_.unlink(u);
    local_size_.store(local_size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return true;
  }
  std::size_t size() const noexcept override {
    // remote_size_ may dip below zero for a moment: a drain can subtract a unit before its
    // pusher's increment lands.
    const std::ptrdiff_t n =
        static_cast<std::ptrdiff_t>(local_size_.load(std::memory_order_relaxed)) +
        remote_size_.load(std::memory_order_relaxed);
    return n > 0 ? static_cast<std::size_t>(n) : 0;
  }

 private:
  /// invariant 6: an attached single-consumer pool is popped and remove()d by its consumer only
  /// (an orphan, attached nowhere, is served by whichever stream holds the orphan lock).
  void check_consumer() noexcept {
    ext::assert_invariant(
        [this] {
          return caller_is_consumer() || consumer() == nullptr || attached_schedulers() == 0;
        },
        "invariant 6: a single-consumer pool is popped by a stream other than its consumer");
  }

  void drain_remote() noexcept {
    work_unit* list = remote_.exchange(nullptr, std::memory_order_acquire);
    // The stack is newest-first: reverse it to keep each producer's order.
    work_unit* fifo = nullptr;
    std::size_t n = 0;
    while (list) {
      work_unit* next = list->pool_next;
      list->pool_next = fifo;
      fifo = list;
      list = next;
      ++n;
    }
    remote_size_.fetch_sub(static_cast<std::ptrdiff_t>(n), std::memory_order_relaxed);
    while (fifo) {
      work_unit* next = fifo->pool_next;
      local_.push_back(fifo, this);
      fifo = next;
    }
    local_size_.store(local_size_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  ext::unit_list local_;                     // consumer only
  std::atomic<std::size_t> local_size_{0};   // written by the consumer, read anywhere
  std::atomic<work_unit*> remote_{nullptr};  // lock-free stack of remote pushes
  std::atomic<std::ptrdiff_t> remote_size_{0};
  std::atomic<bool> sleeping_{false};
  std::atomic<std::uint32_t> seq_{0};
};

}  // namespace

std::shared_ptr<pool> make_fifo_pool(access_mode mode) {
  switch (mode) {
    case access_mode::priv:
      return std::make_shared<private_fifo_pool>();
    case access_mode::spsc:
    case access_mode::mpsc:
      return std::make_shared<single_consumer_fifo_pool>(mode);
    case access_mode::spmc:
    case access_mode::mpmc:
      break;
  }
  return std::make_shared<shared_fifo_pool>(mode);
}

}  // namespace weft
