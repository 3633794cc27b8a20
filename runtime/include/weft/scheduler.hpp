// SPDX-License-Identifier: Apache-2.0
// The scheduler interface: the policy that decides what an execution stream runs next.
#pragma once

#include <atomic>
#include <chrono>
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

/// A scheduler is the policy that chooses what its stream runs next, over its pools. The runtime
/// runs the scheduling loop (event checks, the idle policy, the stacking budget, stop and
/// replacement requests) and asks the policy through the hooks below; a ULT that yields, blocks,
/// suspends or ends on a stream whose main scheduler is a policy asks the same hooks and switches
/// straight to their choice, one context switch instead of a round trip through the loop.
///
/// Contract of the hooks (Boost.Fiber's `algorithm` in spirit):
///  - they run on the scheduler's stream only, never concurrently with each other: pick_next(),
///    pick_after_yield() and has_ready_work() from the loop or from a ULT of that stream that
///    switches out (noexcept: the direct paths cannot unwind), the on_*() hooks from the loop;
///  - they never block and never switch context; they may pop from and push to any pool the
///    scheduler serves, and cost what the pools' calls cost (they are on every switch's path);
///  - a unit a hook returns has been taken out of its pool and is run next, exactly once.
/// Units left in the pools when the loop ends are not lost: the runtime hands them on (to the
/// next scheduler or to other streams). A scheduler runs on one stream at a time; it is owned by
/// that stream while installed as its main scheduler, or by the work unit that runs it stacked
/// (push_scheduler in stacking.hpp), and works as a main scheduler and stacked alike.
///
/// Policies that must write their own loop (the Argobots C API's ABT_sched_def) derive from
/// loop_scheduler instead; their ULTs switch out through the loop.
class scheduler {
 public:
  /// A scheduler over `pools`, in priority order as the policy sees fit. At least one pool.
  explicit scheduler(std::vector<std::shared_ptr<pool>> pools);
  virtual ~scheduler();
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  // --- policy hooks ---
  /// The unit to run next, taken out of its pool, or nullptr when nothing is ready. The default
  /// takes the first unit of the first non-empty pool in pools() order.
  virtual work_unit* pick_next() noexcept;
  /// A ULT of this stream yields: queue `self` (ready, still running; its home pool is `home`,
  /// one this stream may queue into while the unit runs) with push_yielder() or
  /// push_pop_yielder(), and return what runs next, which may be `self` (it then goes on without
  /// a switch). The default is push_yielder() then pick_next(); a policy whose pick_next() would
  /// pop `home` first may answer with push_pop_yielder(), one pool call instead of two.
  virtual work_unit* pick_after_yield(work_unit* self, pool& home) noexcept;
  /// True when a unit is ready for this scheduler. The default: some pool is non-empty.
  virtual bool has_ready_work() const noexcept;
  /// Called on the stream when the loop starts (first start, revival, each stacked run), before
  /// any other hook of that run.
  virtual void on_start() {}
  /// Called on the stream when the loop ends, for whatever reason, after every other hook of
  /// that run: the last moment to make what only this stream sees visible to the others.
  virtual void on_stop() noexcept {}
  /// Called after each event check that did not end the loop: at least every event_freq() units
  /// (direct switches included) and on every round that found nothing ready. For what a policy
  /// does now and then whether or not it is idle (randws looks for new members here). May add
  /// pools (add_pool).
  virtual void on_event_check() {}
  /// Called when a round found nothing ready and no event is pending, before the stream idles
  /// (spins, parks or yields its core per idle()). May add pools (add_pool).
  virtual void on_idle() {}
  /// Called after pools() changed (add_pool, adoption of orphaned pools, hand-over at start).
  virtual void on_pools_changed() {}
  /// Where units migrating to this scheduler's stream are pushed. Default: the first pool.
  virtual pool& migration_pool() noexcept { return *pools_.front(); }

  /// The pools this scheduler serves. Changes only between hook calls (see on_pools_changed).
  const std::vector<std::shared_ptr<pool>>& pools() const noexcept { return pools_; }

  /// Sets what the stream does when idle. Call before the scheduler runs (or from on_start()).
  void set_idle_policy(const idle_policy& p) noexcept { idle_ = p; }
  /// The idle policy.
  const idle_policy& idle() const noexcept { return idle_; }
  /// Units the loop runs between two event checks (0: config::event_freq, WEFT_EVENT_FREQ).
  void set_event_freq(unsigned units) noexcept { event_freq_ = units; }
  /// True for a loop_scheduler: its ULTs switch out through its own loop, never directly.
  bool writes_own_loop() const noexcept { return writes_loop_; }

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
  /// The stream running this scheduler.
  execution_stream& stream() const noexcept;
  /// True while the scheduler is installed on a stream (from the stream's creation, or the
  /// installation of a replacement, until it is replaced or freed) or runs stacked: stream() is
  /// valid then, also outside the loop (e.g. in migration_pool(), which the stream calls when it
  /// attaches the scheduler).
  bool has_stream() const noexcept { return stream_ != nullptr; }
  /// True when the loop must end: the stream is asked to stop, or to join and all pools are
  /// empty, or the scheduler is being replaced; stacked: also the budget is spent or finish()
  /// or stop() was called.
  bool has_to_stop() const noexcept { return do_has_to_stop(); }
  /// How many units may run between two event checks (set_event_freq, else WEFT_EVENT_FREQ).
  unsigned event_freq() const noexcept;
  /// Spin rounds before an idle stream gives its core away (idle().spin, else WEFT_IDLE_SPIN).
  unsigned idle_spin() const noexcept;
  /// Queues the yielding ULT `self` into `home` where its pool puts yielders (for
  /// pick_after_yield; `home` is the unit's home pool, which the runtime checked this stream may
  /// queue into while the unit runs). No wake-up: this stream is awake.
  static void push_yielder(pool& home, work_unit* self) noexcept;
  /// push_yielder(home, self), then home.pop(), in one pool call (for pick_after_yield).
  static work_unit* push_pop_yielder(pool& home, work_unit* self) noexcept;
  /// Appends `p` to pools() and attaches it to this scheduler's stream, as the runtime does when
  /// a stream adopts an orphaned pool: it counts in attached_schedulers(), this stream becomes the
  /// consumer of a single-consumer pool (and the producer of a single-producer one that has none),
  /// and the pool is handed on like the others when the scheduler ends. Returns false, changing
  /// nothing, if `p` is listed already or is a single-consumer pool another stream serves. Only
  /// from on_start(), on_event_check(), on_idle() or a loop_scheduler's run(), on this
  /// scheduler's stream, and not while iterating pools(). Used by schedulers whose set of pools
  /// grows while they run (randws finds its peers' pools this way). Calls on_pools_changed().
  bool add_pool(std::shared_ptr<pool> p);

 private:
  friend class detail::stream;
  friend class execution_stream;
  friend class loop_scheduler;
  friend struct detail_stacking;
  friend struct detail_loop;
  // The loop's mechanisms (the runtime's loop and loop_scheduler's run() use them).
  void do_run_unit(work_unit* u);
  bool do_check_events();
  bool do_has_to_stop() const noexcept;
  bool do_wait_for_work(unsigned& idle_rounds);
  void begin_spin() noexcept;
  void end_spin() noexcept;
  std::vector<std::shared_ptr<pool>> pools_;
  // While the runtime's loop spins idle: the pools it told so (pool_access::spin_begin), kept
  // alive until it tells them it stopped; pools_ may grow meanwhile.
  std::vector<std::shared_ptr<pool>> spun_on_;
  bool spinning_ = false;
  // True while the runtime's loop is inside pick_next(), in the builds with asserts (invariant 10:
  // pools() does not change while a hook iterates it). Present in every build: the layout must
  // not depend on the macro.
  bool picking_ = false;
  std::chrono::nanoseconds doze_{0};  // the next doze beside units left alone (stream::park)
  detail::stream* stream_ = nullptr;
  idle_policy idle_;
  unsigned event_freq_ = 0;
  bool writes_loop_ = false;
  // Stacking state: set while the loop runs stacked; requests from any thread.
  bool stacked_ = false;
  bool running_stacked_ = false;
  unsigned budget_ = 64;
  unsigned pops_ = 0;  // run_unit calls since the stacked loop was entered
  std::atomic<std::uint32_t> stack_requests_{0};
};

/// A scheduler that writes its own loop (run()) instead of answering the hooks: for policies
/// that cannot be said as a choice per unit, and for the Argobots C API's ABT_sched_def. Its
/// ULTs switch out through its loop (no direct switches), which makes every yield, block and
/// end a round trip through run().
///
/// Contract of run():
///  - run each popped unit with run_unit(); never run a unit twice, never drop one;
///  - call check_events() at least every event_freq() pops and whenever every pool was empty: it
///    delivers wake-ups addressed to this stream, applies requests (stop, join, scheduler
///    replacement, pools handed over from stopped streams) and may change pools();
///  - return as soon as check_events() (or has_to_stop()) says so;
///  - when a round over every pool found nothing, call check_events() and then wait_for_work(),
///    and return if it says so (it does when the scheduler runs stacked: the parent takes over).
/// on_start() and on_stop() are called around run(); pick_next() and pick_after_yield() are not
/// used.
class loop_scheduler : public scheduler {
 public:
  /// A loop-writing scheduler over `pools`. At least one pool.
  explicit loop_scheduler(std::vector<std::shared_ptr<pool>> pools);

  /// The scheduling loop, called on the stream's scheduler context (or on the stacking ULT).
  virtual void run() = 0;

 protected:
  /// Runs `u` until it yields, blocks or terminates (tasklets: to completion).
  void run_unit(work_unit* u) { do_run_unit(u); }
  /// Handles this stream's pending events; returns true when run() must return.
  bool check_events() { return do_check_events(); }
  /// Call after a round over every pool found nothing and check_events() returned false.
  /// `idle_rounds` counts such rounds in a row (reset it to 0 after running a unit): the first
  /// idle_spin() rounds only pause; then the stream parks or yields its core per idle(). Returns
  /// true when run() must return now (a stacked scheduler hands control back to its parent).
  bool wait_for_work(unsigned& idle_rounds) { return do_wait_for_work(idle_rounds); }
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
