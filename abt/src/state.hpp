// SPDX-License-Identifier: Apache-2.0
// The process-wide state of the ABT layer (between ABT_init and the last ABT_finalize).
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <vector>

#include "abt_internal.hpp"

namespace abt {

/// Registry of the ABT-level objects, so that weft objects can be mapped back to their handles
/// and every handle still alive at the last ABT_finalize is released.
struct layer_state {
  std::atomic<int>& init_count = g_init_count;  // the nesting depth (see abt_internal.hpp)
  bool owns_runtime = false;  // ABT_init initialised weft (false: weft::init came first)
  std::atomic<weft::work_unit*>& primary_unit = g_primary_unit;  // see abt_internal.hpp
  std::size_t default_stack_size = 0;
  std::atomic<void*> primary_arg{nullptr};  // ABT_thread_set_arg on the primary ULT
  unsigned event_freq = 64;
  std::atomic<int> creating_xstreams{0};  // ABT_xstream_create* calls between start and handle
  int max_xstreams = 0;  // ABT_MAX_NUM_XSTREAMS (0: unset); reported, never a cap (as Argobots 1.2)
  // ABT_STACK_OVERFLOW_CHECK=mprotect|mprotect_strict: a user-given stack's lowest whole page
  // becomes a guard while its ULT lives. Off by default, as in Argobots: the program's memory is
  // used whole (weft's own stacks are guarded regardless).
  std::atomic<bool> guard_user_stacks{false};

  std::mutex mutex;                   // guards everything below
  std::vector<ABT_xstream> xstreams;  // by rank (nullptr: free)
  std::vector<ABT_pool> pools;        // every live pool handle
  std::vector<ABT_sched> scheds;      // every live scheduler handle
  int next_pool_id = 0;
};

/// The layer's state (a never-destroyed singleton).
layer_state& state() noexcept;

}  // namespace abt
