// SPDX-License-Identifier: Apache-2.0
// An asymmetric fence: a pair of threads that each store a flag and then load the other's (a
// Dekker pair) needs a full fence on both sides, unless the rare side pays for both. With Linux's
// membarrier (private expedited), the frequent side's fence is a compiler barrier and the rare
// side's is a system call that acts as a full fence on every running thread of the process. The
// ABT layer uses it where a work unit's end meets another thread's key call on that unit (one
// end per unit, cross-thread key calls are rare).
#pragma once

#include <atomic>
#include <cstdint>

namespace abt {

/// True once the membarrier command is registered for the process (never reset).
[[gnu::visibility("hidden")]] extern std::atomic<bool> g_asymmetric_fence;

/// Registers the process for membarrier's private expedited command, once; without it (an old
/// kernel, a sandbox, a sanitizer build) both sides keep full fences.
void init_asymmetric_fence() noexcept;

/// The frequent side: `flag` stored, then ordered before the caller's later loads against the
/// rare side's rare_store_fenced().
inline void frequent_store_fenced(std::atomic<std::uint8_t>& flag, std::uint8_t value) noexcept {
  if (g_asymmetric_fence.load(std::memory_order_relaxed)) {
    flag.store(value, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } else {
    flag.store(value, std::memory_order_seq_cst);
  }
}

/// The rare side: `flag` stored, then ordered before the caller's later loads against every
/// thread's frequent_store_fenced().
void rare_store_fenced(std::atomic<std::uint8_t>& flag, std::uint8_t value) noexcept;

}  // namespace abt
