// SPDX-License-Identifier: Apache-2.0
// Sleeping and waking on a 32-bit word: the wait/notify behind the stock pools' pop_wait(),
// thin wrappers over the Linux futex system call, for slow paths only.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <ctime>

namespace weft::ext {

/// Sleeps the calling kernel thread while `*word == expected`, at most `timeout` (negative: no
/// limit). May wake spuriously: callers re-check their condition in a loop.
inline void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected,
                       std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1)) noexcept {
  timespec ts{};
  timespec* tsp = nullptr;
  if (timeout.count() >= 0) {
    ts.tv_sec = static_cast<time_t>(timeout.count() / 1000000000);
    ts.tv_nsec = static_cast<long>(timeout.count() % 1000000000);
    tsp = &ts;
  }
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, tsp,
          nullptr, 0);
}

/// Wakes up to `count` threads sleeping on `word` in futex_wait().
inline void futex_wake(std::atomic<std::uint32_t>* word, int count = INT_MAX) noexcept {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, count, nullptr,
          nullptr, 0);
}

}  // namespace weft::ext
