// SPDX-License-Identifier: Apache-2.0
// The execution stream's internals: its identity, schedulers, requests and life cycle, and the
// parts it is made of, each with its own state, owner and header (switching.hpp, inbox.hpp,
// parking.hpp, termination.hpp, pinned_units.hpp, timer.hpp, unit_ids.hpp, unit_cache.hpp,
// stack.hpp, observe_state.hpp).
#pragma once

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/inbox.hpp"
#include "core/parking.hpp"
#include "core/pinned_units.hpp"
#include "core/switching.hpp"
#include "core/termination.hpp"
#include "core/unit_ids.hpp"
#include "memory/stack.hpp"
#include "memory/unit_cache.hpp"
#include "observe/observe_state.hpp"
#include "platform/jump.hpp"
#include "scheduling/pool_attachment.hpp"
#include "sync/timer.hpp"
#include "weft/execution_stream.hpp"
#include "weft/internal/unit.hpp"
#include "weft/spinlock.hpp"
#include "weft/wait_queue.hpp"

namespace weft::detail {

/// How a stream::park() ended.
enum class park_result : std::uint8_t {
  woken,     // a push, a delivery, a request or unpark() woke it
  ran_out,   // it slept its limit, or had events to handle and did not sleep
  declined,  // it dozed beside units its scheduler left in its pools
};

class stream;

/// What the context that just switched away wants done with itself; carried by every jump and
/// carried out by whoever lands (land()), once the old context is saved and no longer running.
enum class switch_action : std::uint8_t {
  none,
  yield,
  block,
  suspend,
  terminate,
  migrate,
  sched_exit,
  requeued,      // a direct yield that already queued itself: only its context is saved
  release_stack  // a ULT that ended and completed itself: its stack (in the record) goes back
};

struct switch_record {
  work_unit* from = nullptr;  // the unit that switched away; nullptr: a scheduler context
  switch_action action = switch_action::none;
  void (*on_block)(work_unit* self, void* arg) = nullptr;  // block: runs after the switch
  void* arg = nullptr;
  pool* target = nullptr;       // migrate: the destination pool
  stream* on_stream = nullptr;  // the leaver's stream (set by the switch functions)
  stack_region stack{};         // release_stack: the stack the ended ULT ran on
};

/// Requests to a stream, handled by its scheduler through has_to_stop()/check_events().
enum stream_request : std::uint32_t {
  request_join = 1u << 0,        // finish once every pool is empty
  request_stop = 1u << 1,        // finish at the next check, leave units in the pools
  request_replace = 1u << 2,     // return so that the next scheduler can be installed
  request_adopt = 1u << 3,       // take over orphaned pools
  request_adopt_busy = 1u << 4,  // take over the orphaned pools that hold units (expand)
};

/// Requests to a stacked scheduler (scheduler::stack_requests_).
inline constexpr std::uint32_t stack_finish = 1u << 0;
inline constexpr std::uint32_t stack_stop = 1u << 1;

/// Runs `s`'s scheduling loop on the calling stream: the runtime's loop over its hooks, or a
/// loop_scheduler's run(), with on_start() and on_stop() around it (scheduler.cpp).
void run_scheduler(scheduler& s);

/// The calling thread's stream (nullptr on external threads). Not inlined: a ULT may migrate
/// between kernel threads, and a TLS address computed before a switch must not be reused after it.
stream* current_stream() noexcept;
void set_current_stream(stream* s) noexcept;

// initial-exec: one %fs-relative load instead of a __tls_get_addr call (libweft is linked at
// program start, or dlopen'ed into glibc's static TLS surplus, which one pointer always fits).
// constinit: no dynamic initialisation, so no TLS wrapper call on every access.
[[gnu::tls_model("initial-exec")]] extern constinit thread_local stream* tls_stream;

/// current_stream() for functions that never switch context themselves (push, pop, allocation):
/// an initial-exec load addresses %fs afresh each time, so nothing can be cached across a switch.
inline stream* current_stream_no_switch() noexcept {
  return tls_stream;
}

class alignas(64) stream final : public execution_stream {
 public:
  stream(int rank, bool primary, std::unique_ptr<scheduler> sched, std::vector<int> cpus,
         int numa_node);
  ~stream();

  // --- context switching (context.cpp) ---
  /// Scheduler -> `w`. Returns when some unit switches back to this scheduler context.
  void resume_unit(work_unit* w);
  /// Running ULT -> this stream's scheduler.
  void switch_to_scheduler(switch_record& rec);
  /// Running ULT that blocks or suspends (`rec`) -> the unit the scheduler's loop would run
  /// next, directly when the scheduler allows it (as yield_directly), else the scheduler.
  void switch_out(switch_record& rec);
  /// Running ULT -> `target` (yield_to); the caller's record says what happens to the caller.
  void switch_to_unit(work_unit* target, switch_record& rec);
  /// yield() of the running ULT `w` without a trip through the loop, when the main scheduler
  /// is a policy (not a loop_scheduler): queues `w` and switches to the policy's choice
  /// (scheduler::pick_after_yield), or goes on when that is `w`; reports the yield to
  /// observers. False (nothing done, nothing reported): take the loop's path.
  bool yield_directly(work_unit* w);
  /// True when the running ULT may make the scheduler's choice itself now (no request pending,
  /// event budget left); counts the choice.
  bool direct_allowed() noexcept;
  /// Jumps from the running ULT into `next`, or, when that is not a ULT it can jump into (or
  /// nullptr), to the scheduler, which runs `next` first (switching::hand_off). `rec` is the
  /// ULT's record.
  void switch_directly(work_unit* next, switch_record& rec);
  /// Gives `u` its stack and context; on failure ends it with the error and returns false.
  bool try_prepare(work_unit* u) noexcept;
  /// Called by a ULT that ended and completed itself, still running on `stack`, for the unit
  /// `w` that the scheduler runs after it: when `w` is a ULT that never ran and wants a
  /// stack like this one, gives it `stack`, makes it the running unit and returns true: the
  /// caller then runs `w`'s callable on the same stack without a context switch. False
  /// (nothing done) when `w` needs the ordinary switch.
  bool pass_stack(const stack_region& stack, work_unit* w) noexcept;
  /// switch_to_unit() for a target that has its context (inline in the direct paths), through
  /// jump_to_peer; `inline_requeued` (the direct yield's jump): land a `requeued` record here
  /// instead of in land(), and report the yield with the run it starts (obs::yielded_to).
  /// `holds_no_eh_state`: the caller has found the thread's C++ exception state empty, so the
  /// jump skips that test (core/eh_state.hpp).
  template <bool inline_requeued, bool holds_no_eh_state = false>
  void jump_to(work_unit* w, switch_record& rec);
  /// Carries out the record of the context that just switched away.
  static void land(transfer t);

  // --- mechanisms behind weft::scheduler ---
  void run_unit(work_unit* u);
  /// run_unit() for one unit; inlined into run_unit(), its only caller (one call less per run).
  [[gnu::always_inline]] inline void run_one(work_unit* w);
  /// Delivers the inbox and runs forwarded pinned units; `main`: also applies requests that
  /// change the main scheduler's pools (a stacked scheduler leaves those to the main one).
  /// `looping`: the scheduler whose loop checks; its idle spin ends before a unit runs here.
  bool check_events(bool main, scheduler& looping);
  bool has_to_stop() const noexcept;
  /// True when every scheduler on the stream must return now (stop or scheduler replacement).
  bool must_leave() const noexcept {
    return requests_.load(std::memory_order_acquire) & (request_stop | request_replace);
  }

  // --- routing ---
  /// Adds `u` to this stream's inbox; false once the stream has closed it (terminating).
  bool inbox_push(work_unit* u) noexcept;

  // --- life cycle (stream.cpp) ---
  /// Starts the kernel thread of a secondary stream.
  void start();
  /// Runs the main scheduler (and its replacements) until the stream must finish.
  void scheduler_loop();
  /// Asks for `bits` and wakes the stream if it is parked.
  void request(std::uint32_t bits) noexcept {
    assert_invariant([this, bits] { return !primary_ || !(bits & request_stop); },
                     "the primary stream is never asked to stop (finalize joins it)");
    requests_.fetch_or(bits, std::memory_order_seq_cst);
    if (park_.parked(std::memory_order_seq_cst)) unpark();
  }

  // --- idling (stream.cpp) ---
  /// Sleeps until work may have arrived: a push into one of the main scheduler's pools, an inbox
  /// delivery, a request, a due timer; at most `limit`, stretched (parking::stretched) while parks
  /// keep ending with nothing to do. Called by the scheduler when idle. `deep`: once the stretched
  /// limit has reached max_idle_park, the stream may sleep up to deep_idle_park (the caller's
  /// policy takes its work only from pools, whose pushes wake it). When the scheduler's pools
  /// hold units it has just left there (a work-stealing thief leaves a busy peer's newest units
  /// to their owner), it dozes instead: at most `doze` (0: not at all), woken by a delivery, a
  /// request or unpark() but not by pushes, which would each cost the pusher a system call.
  park_result park(std::chrono::nanoseconds limit, bool deep, std::chrono::nanoseconds doze);
  /// True while the stream sleeps in a deep park (see park()), which nothing but a push, a
  /// delivery, a request or unpark() ends early. Any thread; may be stale.
  bool deep_parked() const noexcept { return park_.deep(); }
  /// Wakes the stream from park() (or makes its next park() return at once). Any thread.
  void unpark() noexcept;
  /// True while the stream is inside park(). Any thread; may be stale.
  bool is_parked() const noexcept { return park_.parked(); }
  /// True when the scheduler has something to do: queued units, inbox, pinned units, requests,
  /// due timers.
  bool has_work() const noexcept { return has_events() || pools_hold_units(); }
  /// has_work() but for the pools: inbox, pinned units, requests, due timers, events.
  bool has_events() const noexcept;
  /// True when one of the main scheduler's pools is not empty.
  bool pools_hold_units() const noexcept;
  /// True when the main scheduler's pools hold one unit in all: the unit the scheduler runs next,
  /// whatever its policy. The stream's thread; a push by another stream may race with it.
  bool pools_hold_one_unit() const noexcept;
  /// Fires due timers, and takes over timers handed on by stopped streams.
  void run_timers() noexcept;
  /// Waits until a secondary stream's thread has finished (a ULT blocks without its stream).
  void wait_terminated();
  /// Wakes the ULTs blocked in wait_terminated(); called by the stream's thread once terminated.
  void wake_terminated_waiters() noexcept;
  /// After the scheduler returned: closes the inbox and releases (orphans) the pools.
  void shut_down_scheduling();
  /// Re-attaches the scheduler's pools (first start and revive).
  void attach_pools();
  /// Takes over every orphaned pool (busy_only: those holding units) into the main scheduler.
  void adopt_orphans(bool busy_only = false);
  /// Runs one unit from an orphaned pool, if one holds any and no other stream is at it.
  void serve_orphans(scheduler& looping);
  /// After free(): drops the scheduler (and its pools) and the caches; the object itself lives on
  /// (closed inbox) until finalize.
  void release_resources() noexcept;
  /// Unit id for a new unit (ids are handed out in blocks, so this takes no atomic).
  unit_id next_id() noexcept { return ids_.next(); }

  /// The unit running on this stream (nullptr while a scheduler runs); the stream's thread, or a
  /// report from another thread (see switching).
  work_unit* current() const noexcept { return switching_.current(); }

  // --- life cycle requested through execution_stream (stream.cpp) ---
  /// join() (request_join) or stop() (request_stop) from another stream or thread: marks the
  /// stream terminating, asks, and waits until its thread has ended. `what` names the call in
  /// errors (not the primary, not from one of its own units).
  void finish(std::uint32_t request, const char* what);
  /// Marks a running stream terminating and asks it to stop (request_exit(), a shrink event);
  /// does not wait.
  void begin_stop() noexcept;
  /// Starts a joined or stopped stream again, its pools attached anew.
  void restart();
  /// Installs `next` as the main scheduler: at once on a terminated stream, else at the running
  /// scheduler's next check (request_replace).
  void replace_scheduler(std::unique_ptr<scheduler> next);

  // --- identity and parts, for the mechanisms that own them ---
  int rank() const noexcept { return rank_; }
  bool is_primary() const noexcept { return primary_; }
  stream_state state() const noexcept {
    return static_cast<stream_state>(state_.load(std::memory_order_acquire));
  }
  const std::vector<int>& cpus() const noexcept { return cpus_; }
  int numa_node() const noexcept { return node_; }
  /// True once start() created the thread and until wait_terminated() joined it.
  bool thread_started() const noexcept { return thread_started_; }
  /// True while a join (request_join) is pending: stacked schedulers finish with their stream.
  bool joining() const noexcept { return requests_.load(std::memory_order_acquire) & request_join; }
  /// The installed main scheduler; nullptr once the stream is freed. The stream's thread, or any
  /// thread while the stream is terminated.
  scheduler* installed_scheduler() const noexcept { return sched_.get(); }
  /// The first pool of the installed main scheduler; nullptr once the stream is freed.
  pool* first_pool() const noexcept { return main_pool_.load(std::memory_order_acquire); }
  /// The migration pool of the installed main scheduler; nullptr once the stream is freed.
  pool* migration_target() const noexcept {
    return migration_pool_.load(std::memory_order_acquire);
  }
  /// Times the stream went to sleep in park(). Any thread; may be stale.
  std::uint64_t times_parked() const noexcept { return park_.count(); }
  /// Adds a deadline to this stream's timers (the stream's thread).
  void add_timer(timer_node* n) {
    assert_invariant([this] { return current_stream_no_switch() == this; },
                     "timers: a stream's heap is filled on its own thread");
    timers_.add(n);
  }

  /// The switching part: running unit, scheduler context, direct-switch state (switching.hpp).
  switching& switch_state() noexcept { return switching_; }
  const switching& switch_state() const noexcept { return switching_; }
  /// Descriptor and stack caches of this stream's thread.
  unit_cache& units() noexcept { return units_; }
  stack_cache& stacks() noexcept { return stacks_; }
  /// Counters and trace buffer (observe.hpp).
  stream_observer& observer() noexcept { return obs_; }
  const stream_observer& observer() const noexcept { return obs_; }
  /// Primary stream only: the primary ULT (nullptr before init set it up).
  work_unit* primary_unit() const noexcept { return primary_unit_; }
  void set_primary_unit(work_unit* u) noexcept {
    assert_invariant([this, u] { return primary_ || !u; },
                     "only the primary stream has a primary ULT");
    primary_unit_ = u;
  }

 private:
  /// Moves a stream that has not terminated to `terminating`; false when its thread has already
  /// stored `terminated` (then nothing is left to ask).
  bool mark_terminating() noexcept;
  /// The body of a secondary stream's kernel thread.
  static void* thread_main(void* arg);

  // identity
  const int rank_;
  const bool primary_;
  // Threads waiting in wait_terminated() sleep on its futex; ULTs wait in terminated_waiters_.
  std::atomic<std::uint32_t> state_{static_cast<std::uint32_t>(stream_state::running)};
  termination_waiters terminated_waiters_;
  std::vector<int> cpus_;
  int node_;

  // scheduling
  std::unique_ptr<scheduler> sched_;
  std::unique_ptr<scheduler> next_sched_;       // guarded by request_mutex_
  std::atomic<pool*> main_pool_{nullptr};       // first pool of the installed scheduler
  std::atomic<pool*> migration_pool_{nullptr};  // its migration_pool()
  std::mutex request_mutex_;
  std::atomic<std::uint32_t> requests_{0};
  switching switching_;  // the running unit, the scheduler context, the direct-switch state
  inbox inbox_;          // units handed to this stream by other threads
  parking park_;         // the word it sleeps on when idle (park, unpark)
  timer_heap timers_;    // deadlines of ULTs that wait here
  pinned_units pinned_;  // units pinned here, forwarded from other streams

  // caches
  unit_cache units_;
  stack_cache stacks_;
  unit_ids ids_;

  // thread
  pthread_t thread_{};
  bool thread_started_ = false;
  work_unit* primary_unit_ = nullptr;  // primary stream only: the primary ULT

  stream_observer obs_;  // counters and trace buffer (observe.hpp)
};

inline stream& impl(execution_stream& s) noexcept {
  return static_cast<stream&>(s);
}
inline const stream& impl(const execution_stream& s) noexcept {
  return static_cast<const stream&>(s);
}

}  // namespace weft::detail
