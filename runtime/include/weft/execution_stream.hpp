// SPDX-License-Identifier: Apache-2.0
// Execution streams: kernel threads, each bound to a place, each running a main scheduler.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "weft/scheduler.hpp"

namespace weft {

/// Life cycle of a stream: running -> (join or stop requested) -> terminated -> running again
/// (revive) or freed.
enum class stream_state { running, terminating, terminated };

/// An execution stream. The primary stream is the thread that called init(); secondary streams are
/// kernel threads created by the runtime, each bound to its place (see affinity_policy). Streams
/// are owned by the runtime: create() returns a reference that stays valid until free().
class execution_stream {
 public:
  /// Creates a stream with the default scheduler (config::scheduler) over a fresh pool. It takes
  /// the lowest free rank and the place of that rank.
  static execution_stream& create();
  /// Creates a stream running `main_scheduler`.
  static execution_stream& create(std::unique_ptr<scheduler> main_scheduler);
  /// Creates a stream of rank `rank` (and the place of that rank) running `main_scheduler`
  /// (Argobots' ABT_xstream_create_with_rank); -1 picks the lowest free rank, as create(sched).
  /// Throws errc::invalid_state if `rank` is taken by a live stream or below -1.
  static execution_stream& create(std::unique_ptr<scheduler> main_scheduler, int rank);
  /// The stream the calling thread runs on, or nullptr on an external thread.
  static execution_stream* self() noexcept;
  /// The primary stream.
  static execution_stream& primary();
  /// The live (not freed) stream of rank `rank`, or nullptr.
  static execution_stream* by_rank(int rank) noexcept;
  /// Number of live streams, primary included.
  static int count() noexcept;

  /// Rank: 0 for the primary, the lowest free number for the others.
  int rank() const noexcept;
  /// True for the primary stream.
  bool is_primary() const noexcept;
  /// Current life-cycle state.
  stream_state state() const noexcept;
  /// True while the stream sleeps waiting for work (its scheduler's idle policy parked it). A
  /// diagnostic for monitoring and tests: it may be stale by the time the caller reads it.
  bool is_parked() const noexcept;
  /// How many times the stream has parked since it was created (revivals included). An idle
  /// stream parks once per config::park_limit_ms, then ever less often (to once a second);
  /// anything more is a wake-up. A diagnostic for monitoring and tests; any thread.
  std::uint64_t times_parked() const noexcept;
  /// The CPUs this stream is bound to (empty when unbound).
  const std::vector<int>& cpus() const noexcept;
  /// The NUMA node its memory comes from (-1 when unknown).
  int numa_node() const noexcept;

  /// Asks the stream to finish once its pools are empty and waits until its thread has exited.
  /// Not for the primary. A calling ULT yields while it waits, so its own stream keeps working.
  void join();
  /// Asks the stream's scheduler to return at its next check, leaving queued units in its pools,
  /// and waits for the thread to exit. Pools no other scheduler uses become orphaned (see
  /// adopt_orphaned_pools) and keep their units. Not for the primary.
  void stop();
  /// Asks the stream to finish like stop(), without waiting: the only way a stream's own units
  /// can end it (Argobots' ABT_xstream_exit). join(), stop() or free() wait for the end later.
  /// Not for the primary (errc::primary_stream).
  void request_exit();
  /// Restarts a terminated stream with its scheduler (and the pools it still holds).
  void revive();
  /// Destroys a terminated stream; the reference dangles afterwards.
  void free();

  /// Replaces the main scheduler while the stream runs: the old one returns at its next check,
  /// then `next` runs. Pools only the old scheduler used are appended to next's pools, so their
  /// units (and later wake-ups addressed to them) are not lost.
  void set_main_scheduler(std::unique_ptr<scheduler> next);
  /// The installed main scheduler. Call it from the stream's own units, or while no replacement
  /// (set_main_scheduler) is pending: the stream swaps it without synchronising with other
  /// threads. main_pool() is safe from anywhere.
  scheduler& main_scheduler() const noexcept;
  /// The first pool of the main scheduler: where create() without a pool puts units. Throws
  /// errc::invalid_state once the stream was freed (by free() or a shrink event), so code racing
  /// with a shrink gets an error rather than a dangling pool.
  pool& main_pool() const;
  /// The main scheduler's migration_pool(): where units migrating to this stream go. Throws like
  /// main_pool().
  pool& migration_pool() const;
  /// Asks this stream to take over every orphaned pool: at its next check_events() they are
  /// appended to its main scheduler's pools, units and all.
  void adopt_orphaned_pools();

 protected:
  execution_stream() = default;
  ~execution_stream() = default;
};

}  // namespace weft
