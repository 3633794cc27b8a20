// SPDX-License-Identifier: Apache-2.0
#include "asymmetric_fence.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "abt_internal.hpp"

namespace abt {

std::atomic<bool> g_asymmetric_fence{false};

namespace {

long membarrier(int cmd) noexcept {
  return syscall(SYS_membarrier, cmd, 0u, 0);
}

}  // namespace

void init_asymmetric_fence() noexcept {
  // ThreadSanitizer does not model membarrier: its builds keep fences it understands.
#if defined(__SANITIZE_THREAD__)
  return;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
  return;
#endif
#endif
  if (g_asymmetric_fence.load(std::memory_order_acquire)) return;
  const long cmds = membarrier(MEMBARRIER_CMD_QUERY);
  if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return;
  if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0) return;
  g_asymmetric_fence.store(true, std::memory_order_release);
  // The units' ends (thread.cpp) see it in the word they check anyway.
  g_slow_paths.fetch_and(~std::uint32_t{slow_full_fence}, std::memory_order_release);
}

void rare_store_fenced(std::atomic<std::uint8_t>& flag, std::uint8_t value) noexcept {
  if (!g_asymmetric_fence.load(std::memory_order_acquire)) {
    flag.store(value, std::memory_order_seq_cst);
    return;
  }
  flag.store(value, std::memory_order_relaxed);
  // A full fence on every thread of the process that runs now: each frequent side's store is
  // visible to the loads after this, or its loads come after it and see `value`.
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
    // Registered commands do not fail; if one did, the frequent sides would be unordered.
    std::fprintf(stderr, "weft-abt: membarrier failed after registration\n");
    std::abort();
  }
}

}  // namespace abt
