// SPDX-License-Identifier: Apache-2.0
// Random work stealing: each stream owns a ws_pool, pushes locally, steals when it runs dry.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "weft/scheduler.hpp"
#include "weft/schedulers/ws_pool.hpp"

namespace weft {

/// The streams that steal from each other. A randws_scheduler enlists its own pool in its group;
/// every member adds the pools enlisted so far to its pools() (with
/// scheduler::add_pool) when it starts and, later, whenever the group has changed, at its next
/// idle round. So members find each other whatever order they were created or started in, a
/// stream parks on every member's pool (a push into any of them wakes it), and a member's pool
/// stays served by the others after its stream has stopped or been given another scheduler.
/// A scheduler enlists its pool when it is constructed (a scheduler that never runs leaves an
/// empty pool that costs its peers a look per steal round, and that dies with it unless a peer
/// synced meanwhile). The group holds its pools weakly: a pool lives as long as some scheduler
/// lists it.
class randws_group {
 public:
  randws_group() = default;
  randws_group(const randws_group&) = delete;
  randws_group& operator=(const randws_group&) = delete;

  /// The group of the registry's "randws" schedulers (WEFT_SCHED=randws): one per process for as
  /// long as one of its schedulers lives; a new one after that (e.g. after finalize()).
  static std::shared_ptr<randws_group> shared();

  /// Adds `p` to the group (members find it at their next sync). Any thread.
  void enlist(const std::shared_ptr<ws_pool>& p);
  /// The pools enlisted and still alive.
  std::vector<std::shared_ptr<ws_pool>> pools() const;
  /// Bumped by every enlist().
  std::uint64_t version() const noexcept { return version_.load(std::memory_order_acquire); }
  /// Units the members' loops took from each other's pools (steal_into batches, counted per
  /// unit). A direct switch may also take a peer's unit; ws_pool::stolen() counts every take.
  std::uint64_t steals() const noexcept { return steals_.load(std::memory_order_relaxed); }

 private:
  friend class randws_scheduler;
  mutable std::mutex mutex_;
  std::vector<std::weak_ptr<ws_pool>> pools_;  // under mutex_
  std::atomic<std::uint64_t> version_{0};
  std::atomic<std::uint64_t> steals_{0};
};

/// Argobots' RANDWS with a work-stealing pool. pools()[0] is the scheduler's own ws_pool, the
/// stream's main pool: units created on the stream go there (owner push, no atomic RMW). Its
/// choice (pick_next(), for the loop and for ULTs that switch out alike):
///  1. pop the own pool (its newest unit: depth first, see ws_pool);
///  2. if it is empty, try every other pool once, starting at a random one: a member's ws_pool
///     is robbed of its oldest units, up to half of them and at most steal_batch() (the first
///     runs now, the rest go into the own pool), any other pool (adopted after a replacement,
///     say) is popped.
/// At every event check (every event_freq() units, and on every empty round) it looks for members
/// enlisted meanwhile; when a round found nothing it follows the idle policy (default: spin
/// idle().spin rounds, then park until a push into any member's pool, an inbox delivery or a
/// request). A unit pinned to another stream is forwarded there by the runtime when stolen, so
/// pinning and stealing mix. Joining a randws stream waits until every pool it serves (all members'
/// pools) is empty.
class randws_scheduler final : public scheduler {
 public:
  /// How long a thief leaves a running stream's oldest unit to its owner before it takes it
  /// (see steal_grace()).
  static constexpr std::chrono::nanoseconds default_steal_grace{30'000};

  explicit randws_scheduler(std::shared_ptr<randws_group> group,
                            const idle_policy& idle = {.spin = {}, .park = true},
                            std::size_t steal_batch = 32,
                            std::chrono::nanoseconds steal_grace = default_steal_grace);
  /// A scheduler over a fresh ws_pool in randws_group::shared() (the registry's "randws").
  static std::unique_ptr<randws_scheduler> in_shared_group();

  /// The own pool's newest unit, else a theft (see above).
  work_unit* pick_next() noexcept override;
  /// push_pop_yielder() into the own pool when the yielder lives there, else the default.
  work_unit* pick_after_yield(work_unit* self, pool& home) noexcept override;
  /// Claims the own pool for this stream and adds the members' pools.
  void on_start() override;
  /// Makes the yielders only this stream sees everyone's, and gives up the own pool.
  void on_stop() noexcept override;
  /// Adds the pools of members enlisted since the last look.
  void on_event_check() override;
  /// Indexes the pools for stealing.
  void on_pools_changed() override;
  /// The own pool. Called by the stream when it attaches the scheduler, which is when the
  /// scheduler claims the pool for that stream (so the stream's pushes take the owner's path
  /// before the scheduler first runs, e.g. on the primary stream).
  pool& migration_pool() noexcept override;

  /// Its own pool (pools()[0]).
  ws_pool& own_pool() const noexcept { return *own_; }
  const std::shared_ptr<randws_group>& group() const noexcept { return group_; }
  /// Units this scheduler took from other members' pools.
  std::uint64_t steals() const noexcept { return steals_.load(std::memory_order_relaxed); }
  /// Most units one steal takes.
  std::size_t steal_batch() const noexcept { return batch_; }
  /// How long a peer's oldest unit must have waited, seen by this thief, before it is taken
  /// (0: at once), unless the last theft from that peer left it more units.
  std::chrono::nanoseconds steal_grace() const noexcept { return grace_; }

 private:
  /// What this thief last saw of one peer's pool.
  struct sighting {
    std::uint64_t stamp = 0;  // its oldest unit (ws_pool::oldest_stamp()), 0: none
    std::chrono::steady_clock::time_point since;  // when that unit was first seen there
    bool backlog = false;  // the last theft from it paid and left units behind
  };
  /// The last theft, judged when this stream next runs dry.
  struct theft {
    std::size_t victim = 0;  // index in pools()
    std::size_t taken = 0;   // 0: nothing to judge
    bool left_behind = false;
    std::chrono::steady_clock::time_point at;
  };
  work_unit* steal();
  bool ripe(sighting& s, std::uint64_t stamp) const noexcept;
  void judge_last_theft() noexcept;
  void sync();

  std::shared_ptr<randws_group> group_;
  std::shared_ptr<ws_pool> own_;
  std::size_t batch_;
  std::uint64_t seen_version_ = 0;
  std::chrono::nanoseconds grace_;
  std::vector<ws_pool*>
      victims_;  // per index of pools(): the ws_pool, or nullptr (not stolen from)
  std::vector<sighting> sightings_;  // per index of pools()
  theft last_;
  std::uint64_t rng_;
  std::atomic<std::uint64_t> steals_{0};
};

}  // namespace weft
