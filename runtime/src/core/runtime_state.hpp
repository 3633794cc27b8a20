// SPDX-License-Identifier: Apache-2.0
// The process-wide state between init() and finalize().
#pragma once

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "memory/unit_cache.hpp"
#include "platform/topology.hpp"
#include "weft/config.hpp"
#include "weft/events.hpp"
#include "weft/pool.hpp"

namespace weft::detail {

class stream;
struct timer_node;
class rm_client;

/// A registered pair of event callbacks.
struct event_entry {
  event_kind kind;
  event_callbacks callbacks;
};

struct runtime_state {
  config cfg;
  std::size_t stack_size = 0;     // cfg.stack_size rounded to pages
  std::size_t stack_reserve = 0;  // cfg.stack_reserve rounded to pages
  int init_count = 0;
  pthread_t primary_thread{};
  stream* primary = nullptr;
  topology topo;
  std::vector<std::vector<int>> places;  // from cfg.affinity
  cpu_set_t saved_affinity{};            // the primary thread's mask before init
  bool affinity_saved = false;

  std::mutex streams_mutex;
  std::vector<stream*> streams;  // index = rank; nullptr for free ranks
  // Freed streams, kept (without scheduler or caches) until finalize: a unit pinned to a freed
  // stream still finds a closed inbox there and runs elsewhere instead of touching freed memory.
  std::vector<stream*> freed_streams;

  unit_allocator units;
  unit_cache external_cache{units, -1};  // for external threads, under a lock (unit.cpp)

  unit_cache& external_units() noexcept { return external_cache; }

  std::mutex orphan_mutex;  // also serialises pushes into orphaned single-producer pools
  std::vector<std::shared_ptr<pool>> orphans;
  // Timers of stopped streams, taken over by the next stream that checks its events.
  std::vector<timer_node*> orphan_timers;  // under orphan_mutex
  std::atomic<bool> has_orphan_timers{false};
  // True while rt().orphans may hold units; streams then serve them (stream::serve_orphans).
  std::atomic<bool> has_orphans{false};

  // Shrink/expand events (events.cpp).
  std::mutex callbacks_mutex;  // held while callbacks run, so removal waits for them
  std::map<callback_id, event_entry> callbacks;
  callback_id next_callback = 1;
  std::mutex events_mutex;
  std::deque<std::shared_ptr<resize_state>> events;  // under events_mutex
  bool event_in_progress = false;                    // under events_mutex
  bool events_closed = false;                        // under events_mutex (finalize)
  /// Set by the last finalize() before it joins the streams: they then stop once their queued
  /// work is done without waiting for timed sleepers, which are abandoned like blocked units.
  std::atomic<bool> finalizing{false};
  // A request queued and none in progress, or a shrink waiting for its targets to end.
  std::atomic<bool> events_pending{false};
  std::unique_ptr<rm_client> rm;  // the resource-manager connection
};

/// Blocks of unit ids handed out so far; process-wide, so ids stay unique across re-inits.
extern std::atomic<unit_id> next_id_block;

/// The state, or nullptr when weft is not initialised.
extern runtime_state* g_runtime;

/// The state; throws errc::not_initialized when there is none.
runtime_state& rt();

/// Place (CPU set) and NUMA node of rank `rank` under the current policy.
std::vector<int> place_of(int rank);

}  // namespace weft::detail
