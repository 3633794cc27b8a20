// SPDX-License-Identifier: Apache-2.0
// The process-wide state between init() and finalize().
#pragma once

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include "core/stream_table.hpp"
#include "elasticity/event_queue.hpp"
#include "memory/unit_cache.hpp"
#include "platform/topology.hpp"
#include "scheduling/pool_attachment.hpp"
#include "weft/config.hpp"

namespace weft::detail {

class stream;
class rm_client;

/// What init() builds and finalize() tears down: the configuration it settled on, the machine's
/// topology, and the parts that each own their state and lock (the stream table, pool
/// attachment and orphans, event callbacks and requests, the unit allocator).
///
/// The configuration, topology and primary stream are fixed once init() has returned; any thread
/// reads them without a lock. The parts are reached through their own interfaces.
class runtime_state {
 public:
  /// Settles `cfg` (validated, environment applied) against the machine: stack sizes rounded to
  /// pages, places from the affinity policy, the stream count where `cfg` leaves it to the
  /// machine. init() holds its lock.
  explicit runtime_state(const config& cfg);
  runtime_state(const runtime_state&) = delete;
  runtime_state& operator=(const runtime_state&) = delete;
  ~runtime_state();

  // --- fixed after init ---
  const config& cfg() const noexcept { return cfg_; }
  /// cfg().stack_size and cfg().stack_reserve rounded to pages.
  std::size_t stack_size() const noexcept { return stack_size_; }
  std::size_t stack_reserve() const noexcept { return stack_reserve_; }
  const topology& topo() const noexcept { return topo_; }
  /// Place (CPU set) of rank `rank` under the affinity policy; empty when unbound.
  std::vector<int> place_of(int rank) const;
  /// The thread that called the first init().
  pthread_t primary_thread() const noexcept { return primary_thread_; }
  /// The primary stream; nullptr until init() created it.
  stream* primary() const noexcept { return primary_; }
  void set_primary(stream* p) noexcept { primary_ = p; }

  // --- nesting of init()/finalize(), under init()'s lock ---
  void nest() noexcept { ++init_count_; }
  /// A finalize() that pairs with a nested init(): true when an outer init() is still open.
  bool unnest() noexcept {
    if (init_count_ <= 1) return false;
    --init_count_;
    return true;
  }

  // --- the primary thread's CPU mask, kept while it is bound ---
  /// Binds the calling (primary) thread to `cpus`, keeping its mask for restore_affinity().
  void bind_primary(const std::vector<int>& cpus);
  void restore_affinity() noexcept;

  // --- finalize ---
  /// Set by the last finalize() before it joins the streams: they then stop once their queued
  /// work is done without waiting for timed sleepers, which are abandoned like blocked units.
  bool finalizing() const noexcept { return finalizing_.load(std::memory_order_acquire); }
  void set_finalizing() noexcept { finalizing_.store(true, std::memory_order_release); }

  // --- parts ---
  stream_table& streams() noexcept { return streams_; }
  const stream_table& streams() const noexcept { return streams_; }
  pool_attachment& attachment() noexcept { return attachment_; }
  callback_registry& event_callbacks() noexcept { return callbacks_; }
  event_queue& events() noexcept { return events_; }
  unit_allocator& units() noexcept { return units_; }
  /// The descriptor cache of external threads (unit.cpp serialises its use).
  unit_cache& external_units() noexcept { return external_cache_; }
  /// Connects to the resource manager at `address` (config::resource_manager).
  void connect_resource_manager(const std::string& address);
  /// Closes the resource-manager connection, if any.
  void disconnect_resource_manager() noexcept;

 private:
  config cfg_;
  std::size_t stack_size_ = 0;
  std::size_t stack_reserve_ = 0;
  int init_count_ = 1;
  pthread_t primary_thread_{};
  stream* primary_ = nullptr;
  topology topo_;
  std::vector<std::vector<int>> places_;  // from cfg_.affinity
  cpu_set_t saved_affinity_{};            // the primary thread's mask before init
  bool affinity_saved_ = false;
  std::atomic<bool> finalizing_{false};

  stream_table streams_;
  pool_attachment attachment_;
  callback_registry callbacks_;
  event_queue events_;
  unit_allocator units_;
  unit_cache external_cache_{units_, -1};  // for external threads, under a lock (unit.cpp)
  std::unique_ptr<rm_client> rm_;          // the resource-manager connection
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
