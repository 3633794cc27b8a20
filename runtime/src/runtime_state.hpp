// The process-wide state between init() and finalize().
#pragma once

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "topology.hpp"
#include "unit_cache.hpp"
#include "weft/config.hpp"
#include "weft/pool.hpp"

namespace weft::detail {

class stream;
struct timer_node;

struct runtime_state {
  config cfg;
  std::size_t stack_size = 0;  // cfg.stack_size rounded to pages
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
