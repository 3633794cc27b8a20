// SPDX-License-Identifier: Apache-2.0
// The scheduler interface: the policy that decides what an execution stream runs next.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/pool.hpp"

namespace weft {

class execution_stream;
namespace detail {
class stream;
}

/// What a scheduler's stream does when a round over every pool found nothing: poll `spin` more
/// rounds (with a pause instruction), then give the core away, either by parking (sleeping until
/// work is pushed into one of its pools, a unit is forwarded to the stream, a request or a timer
/// is due) or, with `park = false`, by sched_yield() between further rounds.
struct idle_policy {
  /// Busy rounds before giving the core away; unset means config::idle_spin (WEFT_IDLE_SPIN).
  std::optional<unsigned> spin;
  /// Park (true) or keep polling with sched_yield (false).
  bool park = true;
};

/// A scheduler is a loop that pops work units from its pools and runs them. Users derive from it
/// and implement run(); the protected members are the runtime's mechanisms, valid only inside
/// run() on the stream that runs the scheduler.
///
/// Contract of run():
///  - run each popped unit with run_unit(); never run a unit twice, never drop one;
///  - call check_events() at least every event_freq() pops and whenever every pool was empty: it
///    delivers wake-ups addressed to this stream, applies requests (stop, join, scheduler
///    replacement, pools handed over from stopped streams) and may change pools();
///  - return as soon as check_events() (or has_to_stop()) says so. Units left in the pools are not
///    lost: the runtime hands them on (to the next scheduler or to other streams);
///  - when a round over every pool found nothing, call check_events() and then wait_for_work(),
///    and return if it says so (it does when the scheduler runs stacked: the parent takes over).
/// A scheduler runs on one stream at a time; it is owned by that stream while installed as its
/// main scheduler, or by the work unit that runs it stacked (push_scheduler in stacking.hpp).
/// Schedulers that keep this contract can be main schedulers and stacked ones alike.
class scheduler {
 public:
  /// A scheduler over `pools`, in priority order as the policy sees fit. At least one pool.
  explicit scheduler(std::vector<std::shared_ptr<pool>> pools);
  virtual ~scheduler();
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  /// The scheduling loop, called on the stream's scheduler context.
  virtual void run() = 0;
  /// Where units migrating to this scheduler's stream are pushed. Default: the first pool.
  virtual pool& migration_pool() noexcept { return *pools_.front(); }

  /// The pools this scheduler serves. Changes only inside check_events().
  const std::vector<std::shared_ptr<pool>>& pools() const noexcept { return pools_; }

  /// Sets what the stream does when idle. Call before the scheduler runs (or from run()).
  void set_idle_policy(const idle_policy& p) noexcept { idle_ = p; }
  /// The idle policy.
  const idle_policy& idle() const noexcept { return idle_; }

  /// Lets a ULT that yields, blocks, suspends or ends pick its successor itself and switch to it
  /// directly, one context switch instead of a round trip through run(). The successor is what
  /// a "first non-empty pool in order, FIFO within a pool" loop would run: the first unit popped
  /// from pools() in order, looking no further than a yielder's own pool (when nothing is queued
  /// ahead of it, the yielder just continues); a ULT that blocks with nothing queued goes to
  /// run(). The runtime still goes through run() when a request is pending and at least every
  /// event_freq() choices, and a popped unit it cannot switch to directly
  /// (a tasklet, a unit pinned elsewhere or migrating) is handed to run_unit() on the way. Only
  /// for policies that would make the same choice (basic does); off by default. Applies while
  /// the scheduler is a stream's main scheduler, not while it runs stacked. Call before run().
  void set_direct_yield(bool on) noexcept { direct_yield_ = on; }
  /// True when set_direct_yield(true) was called.
  bool direct_yield() const noexcept { return direct_yield_; }

  // --- stacking (a scheduler run as a work unit of another scheduler's pool) ---
  /// True once the scheduler was given to push_scheduler().
  bool stacked() const noexcept { return stacked_; }
  /// Pops a stacked scheduler may run before it hands control back to its parent (0: no limit,
  /// it returns only when idle or asked to). Default 64.
  void set_stack_budget(unsigned pops) noexcept { budget_ = pops; }
  /// Asks a stacked scheduler to end for good once its pools are empty. Any thread.
  void finish() noexcept;
  /// Asks a stacked scheduler to end for good at its next check; units left in its pools go to
  /// the main scheduler of the stream it ran on. Any thread.
  void stop() noexcept;

 protected:
  /// Runs `u` until it yields, blocks or terminates (tasklets: to completion).
  void run_unit(work_unit* u);
  /// Handles this stream's pending events; returns true when run() must return.
  bool check_events();
  /// True when run() must return: the stream is asked to stop, or to join and all pools are
  /// empty, or the scheduler is being replaced.
  bool has_to_stop() const noexcept;
  /// The stream running this scheduler.
  execution_stream& stream() const noexcept;
  /// True while the scheduler is installed on a stream (from the stream's creation, or the
  /// installation of a replacement, until it is replaced or freed) or runs stacked: stream() is
  /// valid then, also outside run() (e.g. in migration_pool(), which the stream calls when it
  /// attaches the scheduler).
  bool has_stream() const noexcept { return stream_ != nullptr; }
  /// How many pops may pass between two check_events() calls (WEFT_EVENT_FREQ).
  unsigned event_freq() const noexcept;
  /// Spin iterations before an idle loop should give its core away (idle().spin, else
  /// WEFT_IDLE_SPIN).
  unsigned idle_spin() const noexcept;
  /// Call after a round over every pool found nothing and check_events() returned false.
  /// `idle_rounds` counts such rounds in a row (reset it to 0 after running a unit): the first
  /// idle_spin() rounds only pause; then the stream parks or yields its core per idle(). Returns
  /// true when run() must return now (a stacked scheduler hands control back to its parent).
  bool wait_for_work(unsigned& idle_rounds);
  /// Appends `p` to pools() and attaches it to this scheduler's stream, as the runtime does when
  /// a stream adopts an orphaned pool: it counts in attached_schedulers(), this stream becomes the
  /// consumer of a single-consumer pool (and the producer of a single-producer one that has none),
  /// and the pool is handed on like the others when the scheduler ends. Returns false, changing
  /// nothing, if `p` is listed already or is a single-consumer pool another stream serves. Only
  /// inside run(), on this scheduler's stream, and not while iterating pools(). Used by schedulers
  /// whose set of pools grows while they run (randws finds its peers' pools this way).
  bool add_pool(std::shared_ptr<pool> p);

 private:
  friend class detail::stream;
  friend class execution_stream;
  friend struct detail_stacking;
  std::vector<std::shared_ptr<pool>> pools_;
  detail::stream* stream_ = nullptr;
  idle_policy idle_;
  bool direct_yield_ = false;
  // Stacking state: set while run() runs stacked; requests from any thread.
  bool stacked_ = false;
  bool running_stacked_ = false;
  unsigned budget_ = 64;
  unsigned pops_ = 0;  // run_unit calls since the stacked run() was entered
  std::atomic<std::uint32_t> stack_requests_{0};
};

/// Builds a scheduler (with its pools) for a new stream.
using scheduler_factory = std::function<std::unique_ptr<scheduler>()>;

/// Makes `name` selectable through config::scheduler and WEFT_SCHED. Replaces a previous entry.
void register_scheduler(std::string_view name, scheduler_factory factory);
/// Builds the scheduler registered as `name`; throws errc::invalid_config for an unknown name.
std::unique_ptr<scheduler> make_scheduler(std::string_view name);
/// Names of the registered schedulers, sorted.
std::vector<std::string> scheduler_names();

}  // namespace weft
