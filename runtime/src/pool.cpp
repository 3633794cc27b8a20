#include <thread>

#include "pool_access.hpp"
#include "spinlock.hpp"
#include "stream.hpp"

namespace weft {

pool::~pool() = default;

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

}  // namespace weft
