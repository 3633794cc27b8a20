// SPDX-License-Identifier: Apache-2.0
#include "core/stream.hpp"

#include <pthread.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "core/eh_state.hpp"
#include "core/runtime_state.hpp"
#include "core/unit.hpp"
#include "elasticity/events.hpp"
#include "memory/overflow.hpp"
#include "observe/observe.hpp"
#include "platform/assert.hpp"
#include "platform/futex.hpp"
#include "platform/sanitizer.hpp"
#include "platform/spinlock.hpp"
#include "scheduling/pool_access.hpp"
#include "weft/error.hpp"
#include "weft/ext/defaults.hpp"

namespace weft::detail {

[[gnu::tls_model("initial-exec")]] constinit thread_local stream* tls_stream = nullptr;

namespace {

/// The longest an idle stream sleeps between safety-net checks (unless config::park_limit_ms
/// is longer): 1,000 idle streams then wake about 1,000 times a second in all.
constexpr std::chrono::milliseconds max_idle_park{1000};
/// How long a stream idle for longer sleeps at once when its policy allows (park(), `deep`):
/// every push into its pools, delivery and request wakes it at once, so this limit only bounds
/// what a wake-up lost to a race costs (parallelism: the pusher runs the unit itself). 512 idle
/// streams then wake 17 times a second in all.
constexpr std::chrono::seconds deep_idle_park{30};

std::string cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (int c : cpus) out += (out.empty() ? "" : ",") + std::to_string(c);
  return "{" + out + "}";
}

}  // namespace

[[gnu::noinline]] stream* current_stream() noexcept {
  stream* s = tls_stream;
  asm volatile("" ::: "memory");
  return s;
}

[[gnu::noinline]] void set_current_stream(stream* s) noexcept {
  tls_stream = s;
  if (s) s->switch_state().set_eh_globals(thread_eh_globals());
}

void* stream::thread_main(void* arg) {
  auto* s = static_cast<stream*>(arg);
  assert_invariant([s] { return !s->inbox_.closed(); },
                   "invariant 11: a stream's thread starts with its inbox open");
  set_current_stream(s);
  alt_signal_stack alt;
  if (!s->cpus_.empty()) {
    std::string why;
    if (!rt().topo().bind_current_thread(s->cpus_, why)) {
      std::fprintf(
          stderr,
          "weft: warning: cannot bind execution stream %d to CPUs %s (%s); it runs unbound\n",
          s->rank_, cpu_list(s->cpus_).c_str(), why.c_str());
    }
  }
  s->switching_.set_scheduler_stack(native_stack());
  s->scheduler_loop();
  s->shut_down_scheduling();
  assert_invariant([s] { return s->inbox_.closed() && s->pinned_.empty(); },
                   "invariant 11: a stream ends with its inbox closed and no pinned unit");
  set_current_stream(nullptr);
  s->state_.store(static_cast<std::uint32_t>(stream_state::terminated), std::memory_order_release);
  futex_wake(&s->state_);
  s->wake_terminated_waiters();
  return nullptr;
}

stream::stream(int rank, bool primary, std::unique_ptr<scheduler> sched, std::vector<int> cpus,
               int numa_node)
    : rank_(rank),
      primary_(primary),
      cpus_(std::move(cpus)),
      node_(numa_node),
      sched_(std::move(sched)),
      units_(rt().units(), numa_node),
      stacks_(rt().stack_size(), rt().stack_reserve()) {
  sched_->stream_ = this;
}

stream::~stream() {
  if (sched_) sched_->stream_ = nullptr;
}

void stream::start() {
  state_.store(static_cast<std::uint32_t>(stream_state::running), std::memory_order_release);
  const int rc = pthread_create(&thread_, nullptr, &thread_main, this);
  if (rc != 0) {
    state_.store(static_cast<std::uint32_t>(stream_state::terminated), std::memory_order_release);
    throw error(errc::resource, "weft: cannot create the thread of execution stream " +
                                    std::to_string(rank_) + ": " + std::strerror(rc));
  }
  thread_started_ = true;
}

void stream::finish(std::uint32_t request_bits, const char* what) {
  if (primary_) {
    throw error(errc::primary_stream,
                std::string("weft: ") + what + " is not allowed on the primary stream");
  }
  if (current_stream() == this) {
    throw error(errc::invalid_state,
                std::string("weft: a stream cannot ") + what + " itself from one of its units");
  }
  if (mark_terminating()) request(request_bits);
  wait_terminated();
  assert_invariant([this] { return state() == stream_state::terminated; },
                   "a finished stream is terminated");
}

void stream::begin_stop() noexcept {
  if (mark_terminating()) request(request_stop);
}

bool stream::mark_terminating() noexcept {
  // A compare-and-swap, not a store: the stream's thread may store `terminated` at any moment
  // (a unit of its own asked it to stop), and a store would overwrite it, leaving the joiner to
  // wait for a thread that has already exited.
  auto st = state_.load(std::memory_order_acquire);
  constexpr auto terminated = static_cast<std::uint32_t>(stream_state::terminated);
  constexpr auto terminating = static_cast<std::uint32_t>(stream_state::terminating);
  while (st != terminated) {
    if (st == terminating ||
        state_.compare_exchange_weak(st, terminating, std::memory_order_acq_rel,
                                     std::memory_order_acquire))
      return true;
  }
  return false;
}

void stream::restart() {
  if (state() != stream_state::terminated || thread_started_) {
    throw error(errc::invalid_state, "weft: only a joined or stopped stream can be revived");
  }
  assert_invariant([this] { return sched_ != nullptr; },
                   "a stream is revived only before free() released its scheduler");
  requests_.store(0, std::memory_order_release);
  assert_invariant([this] { return inbox_.closed(); },
                   "invariant 11: the inbox of a terminated stream is closed until its revival");
  inbox_.reopen();
  attach_pools();
  start();
}

void stream::replace_scheduler(std::unique_ptr<scheduler> next) {
  if (!next) throw error(errc::invalid_state, "weft: set_main_scheduler needs a scheduler");
  if (next->stream_ || next->stacked_)
    throw error(errc::invalid_state, "weft: the scheduler already runs on a stream");
  if (state() == stream_state::terminated && !primary_) {
    assert_invariant([this] { return !thread_started_ || current_stream() != this; },
                     "invariant 10: a terminated stream's scheduler changes from outside it");
    // Not running: swap now; the pools are attached when the stream is revived.
    rt().attachment().hand_over_unattached(sched_->pools(), next->pools_);
    sched_->stream_ = nullptr;
    sched_ = std::move(next);
    sched_->stream_ = this;
    main_pool_.store(sched_->pools().front().get(), std::memory_order_release);
    migration_pool_.store(&sched_->migration_pool(), std::memory_order_release);
    return;
  }
  std::lock_guard lock(request_mutex_);
  if (next_sched_) {
    // A replacement that never got installed: its pools may hold work already, so the newer
    // scheduler takes them on.
    for (const auto& p : next_sched_->pools()) {
      if (std::find(next->pools().begin(), next->pools().end(), p) == next->pools().end()) {
        next->pools_.push_back(p);
      }
    }
  }
  next_sched_ = std::move(next);
  request(request_replace);
}

void stream::scheduler_loop() {
  assert_invariant([this] { return current_stream_no_switch() == this; },
                   "invariant 10: a stream installs schedulers on its own thread");
  for (;;) {
    run_scheduler(*sched_);
    std::unique_ptr<scheduler> next;
    {
      std::lock_guard lock(request_mutex_);
      next = std::move(next_sched_);
      requests_.fetch_and(~request_replace, std::memory_order_acq_rel);
    }
    if (!next) return;
    // Install the replacement: attach its pools first, so pools both share are never orphaned;
    // pools only the old scheduler used are adopted by the new one (their units are not lost).
    std::unique_ptr<scheduler> old = std::move(sched_);
    sched_ = std::move(next);
    sched_->stream_ = this;
    attach_pools();
    rt().attachment().hand_over(*this, old->pools(), sched_->pools_);
    old->stream_ = nullptr;
  }
}

void stream::attach_pools() {
  // Invariant 10: between two runs of the loop (its thread) or before a (re)start (its creator).
  assert_invariant(
      [this] {
        return current_stream_no_switch() == this || state() == stream_state::terminated ||
               !thread_started_;
      },
      "invariant 10: a scheduler's pools change on its stream, or while the stream is stopped");
  auto& pools = sched_->pools_;
  rt().attachment().attach(*this, pools);
  if (pools.empty()) {
    pools.push_back(ext::make_fallback_pool());
    rt().attachment().attach(*this, pools);
  }
  assert_invariant([&pools] { return !pools.empty(); }, "an attached main scheduler has a pool");
  main_pool_.store(pools.front().get(), std::memory_order_release);
  migration_pool_.store(&sched_->migration_pool(), std::memory_order_release);
}

void stream::shut_down_scheduling() {
  work_unit* list = inbox_.close();
  assert_invariant([list] { return list != inbox::closed_mark(); },
                   "invariant 11: a stream shuts its scheduling down once per life");
  // Units forwarded here because they were pinned to this stream lose the pin: the stream ends,
  // their work must not.
  auto unpin_and_route = [](work_unit* u) {
    as_unit(u)->flags &= static_cast<std::uint8_t>(~unit_forwarded);
    as_unit(u)->pinned_to.store(nullptr, std::memory_order_relaxed);
    route(u);
  };
  while (list) {
    work_unit* next = list->pool_next;
    if (as_unit(list)->flags & unit_forwarded) {
      unpin_and_route(list);
    } else {
      route(list);
    }
    list = next;
  }
  while (work_unit* u = pinned_.pop_front()) unpin_and_route(u);
  assert_invariant([this] { return switching_.current() == nullptr; },
                   "a stream shuts its scheduling down with no unit running on it");
  // Orphans and handed-on timers are served at check_events(); the primary never stops, so make
  // sure it looks (a parked primary would otherwise wait for its park limit).
  stream* const primary = rt().primary();
  if (rt().attachment().release(*this, sched_->pools(), timers_) && primary && primary != this)
    primary->unpark();
}

void stream::adopt_orphans(bool busy_only) {
  assert_invariant([this] { return current_stream_no_switch() == this; },
                   "invariant 10: orphans are adopted by the stream's own event check");
  assert_invariant([this] { return !sched_->picking_; },
                   "invariant 10: orphans are not adopted while pick_next() iterates pools()");
  if (rt().attachment().adopt(*this, sched_->pools_, busy_only)) sched_->on_pools_changed();
}

void stream::serve_orphans(scheduler& looping) {
  if (work_unit* u = rt().attachment().pop_orphan()) {
    assert_invariant(
        [u] { return as_unit(u)->state.load(std::memory_order_relaxed) == unit_state::ready; },
        "invariant 2: a unit popped from an orphan is ready");
    looping.end_spin();
    run_unit(u);
  }
}

void stream::wait_terminated() {
  constexpr auto terminated = static_cast<std::uint32_t>(stream_state::terminated);
  for (;;) {
    const std::uint32_t st = state_.load(std::memory_order_acquire);
    if (st == terminated) break;
    stream* here = current_stream();
    if (here && here->current() && as_unit(here->current())->kind == unit_kind::ult) {
      // Blocks the ULT, not its stream: the stream runs other work, or parks, meanwhile. The
      // state is read again under the lock the terminating thread takes to wake the queue, so
      // the wake-up cannot be missed.
      if (!terminated_waiters_.wait(
              [this] { return state_.load(std::memory_order_acquire) == terminated; }))
        break;
    } else {
      futex_wait(&state_, st);
    }
  }
  if (thread_started_) {
    pthread_join(thread_, nullptr);
    thread_started_ = false;
  }
}

void stream::wake_terminated_waiters() noexcept {
  // This thread exits before any waiter's pthread_join returns and lets the stream be freed.
  terminated_waiters_.wake_all();
}

void stream::release_resources() noexcept {
  assert_invariant([this] { return state() == stream_state::terminated && !thread_started_; },
                   "a stream releases its resources only once its thread was joined");
  if (sched_) sched_->stream_ = nullptr;
  sched_.reset();
  main_pool_.store(nullptr, std::memory_order_release);
  migration_pool_.store(nullptr, std::memory_order_release);
  units_.flush();
  stacks_.clear();
}

bool stream::inbox_push(work_unit* u) noexcept {
  if (!inbox_.push(u)) return false;
  // Dekker with park(): it sets the parked flag, then reads the inbox; we published, now we read
  // the flag.
  if (park_.parked(std::memory_order_seq_cst)) [[unlikely]]
    unpark();
  return true;
}

park_result stream::park(std::chrono::nanoseconds limit, bool deep, std::chrono::nanoseconds doze) {
  assert_invariant([this] { return current_stream_no_switch() == this; },
                   "parking: a stream parks on its own thread");
  const auto parked_at = obs::park_begin(*this);
  const auto& pools = sched_->pools();
  const std::uint32_t seen = park_.announce(pools.size());
  for (std::size_t i = 0; i < pools.size(); ++i) {
    park_.entry(i).owner = this;
    pool_access::park(*pools[i], park_.entry(i));
  }
  // Pairs with the fence in pool::push and the seq_cst accesses in inbox_push() and request().
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // A stream idle for a while stretches its safety-net limit, doubling it per idle park up to
  // max_idle_park (or `limit` when that is longer): what wakes it for real still does at once.
  // Past that, a stream idle for about max_idle_park sleeps deep (see deep_idle_park), unless it
  // is the primary (it serves orphaned pools and timers handed over by stopped streams) or a join
  // waits for a shared pool that another stream may empty unseen (has_work()).
  bool deep_now = false;
  if (park_.reached_cap(limit, max_idle_park)) {
    const auto cap = std::max(limit, std::chrono::nanoseconds(max_idle_park));
    deep_now = deep && !primary_ &&
               (requests_.load(std::memory_order_relaxed) & request_join) == 0 &&
               cap < std::chrono::nanoseconds(deep_idle_park);
    limit = deep_now ? std::chrono::nanoseconds(deep_idle_park) : cap;
  } else {
    limit = park_.stretched(limit, max_idle_park);
  }
  bool timer_bound = false;
  if (!timers_.empty()) {
    const auto due = std::chrono::duration_cast<std::chrono::nanoseconds>(
        timers_.next() - std::chrono::steady_clock::now());
    if (due <= limit) {
      limit = due;
      timer_bound = true;
    }
  }
  bool idle = !timer_bound;
  deep_now = deep_now && !timer_bound;
  const bool may_sleep = limit > std::chrono::nanoseconds::zero() && !has_events();
  const bool declined = may_sleep && pools_hold_units();
  if (declined) {
    // Off the pools' parked lists first: their pushes must not pay for waking a stream that
    // would leave their units where they are.
    for (std::size_t i = 0; i < pools.size(); ++i) pool_access::unpark(*pools[i], park_.entry(i));
    if (doze > std::chrono::nanoseconds::zero()) park_.sleep(seen, std::min(limit, doze));
    idle = false;
  } else if (may_sleep) {
    if (deep_now) park_.set_deep(true);
    park_.sleep(seen, limit);
    if (deep_now) park_.set_deep(false);
  } else {
    idle = false;
  }
  const bool woken = park_.woken_since(seen);
  park_.end(seen, idle, [this] { return !has_work(); });
  if (!declined)
    for (std::size_t i = 0; i < pools.size(); ++i) pool_access::unpark(*pools[i], park_.entry(i));
  obs::park_end(*this, parked_at);
  if (woken) return park_result::woken;
  return declined ? park_result::declined : park_result::ran_out;
}

void stream::unpark() noexcept {
  park_.wake();
}

bool stream::has_events() const noexcept {
  if (inbox_.nonempty() || !pinned_.empty()) return true;
  // A join alone is not work: it waits for the pools, the inbox and the timers to run dry, and
  // each of those wakes a parked stream (a push, an inbox delivery, the park limit set to the next
  // deadline). Counting it made a stream asked to join while its ULTs slept spin until they woke.
  // Only a shared pool emptied by another stream goes unnoticed, until the park limit.
  if (requests_.load(std::memory_order_relaxed) & ~std::uint32_t{request_join}) return true;
  if (rt().attachment().has_timers()) return true;
  return rt().events().pending();
}

bool stream::pools_hold_units() const noexcept {
  for (const auto& p : sched_->pools())
    if (!p->empty()) return true;
  return false;
}

bool stream::pools_hold_one_unit() const noexcept {
  std::size_t queued = 0;
  for (const auto& p : sched_->pools()) {
    queued += p->size();
    if (queued > 1) return false;
  }
  return queued == 1;
}

void stream::run_one(work_unit* w) {
  unit* const u = as_unit(w);
  assert_invariant(
      [u] {
        const unit_state st = u->state.load(std::memory_order_relaxed);
        return st != unit_state::running && st != unit_state::terminated;
      },
      "invariant 3: a unit the loop runs runs nowhere else, and has not ended");
  execution_stream* pin = u->pinned_to.load(std::memory_order_relaxed);
  if (pin && pin != this) [[unlikely]] {
    stream& target = impl(*pin);
    u->flags |= unit_forwarded;
    if (target.inbox_push(u)) return;
    // The stream it is pinned to has ended: run it here rather than lose it.
    u->flags &= static_cast<std::uint8_t>(~unit_forwarded);
    u->pinned_to.store(nullptr, std::memory_order_relaxed);
  }
  if (u->migrate_to.load(std::memory_order_relaxed)) [[unlikely]] {
    if (pool* m = u->migrate_to.exchange(nullptr, std::memory_order_acq_rel)) {
      obs::migrated(u, m);
      u->home.store(m, std::memory_order_relaxed);
      route(u);
      return;
    }
  }
  if (u->kind == unit_kind::tasklet) {
    work_unit* const outer = switching_.current();  // a stacked scheduler's ULT, or nullptr
    switching_.set_current(u);
    u->last_stream.store(this, std::memory_order_relaxed);
    u->state.store(unit_state::running, std::memory_order_relaxed);
    obs::run_begin(*this, u, false);
    run_callable(u);
    switching_.set_current(outer);
    obs::tasklet_ended(*this, u);
    complete_reported(u);
  } else {
    resume_unit(u);
  }
}

void stream::run_unit(work_unit* u) {
  // A direct yield may leave a unit it popped but could not switch to (yield_directly): it runs
  // next, as it would have without the shortcut.
  do {
    run_one(u);
    u = switching_.take_handoff();
  } while (u);
  // Direct yields used up their budget: the scheduler's own count did not see them, so the
  // events they skipped are checked here (check_events() runs units too: not from inside it).
  if (switching_.take_due_events()) [[unlikely]] {
    if (!check_events(true, *sched_)) sched_->on_event_check();
  }
}

void stream::run_timers() noexcept {
  if (rt().attachment().has_timers()) [[unlikely]]
    rt().attachment().take_timers(timers_);
  if (!timers_.empty()) timers_.fire_due(std::chrono::steady_clock::now());
}

bool stream::check_events(bool main, scheduler& looping) {
  assert_invariant([this] { return current_stream_no_switch() == this; },
                   "a stream checks its events on its own thread");
  assert_invariant([this, main, &looping] { return !main || &looping == sched_.get(); },
                   "invariant 10: only the main scheduler's event check adopts pools");
  switching_.refill_direct_budget(sched_->event_freq());
  const switching::event_check checking(switching_);
  run_timers();
  if (inbox_.nonempty()) {
    work_unit* fifo = inbox_.take_in_order();
    while (fifo) {
      work_unit* u = fifo;
      fifo = u->pool_next;
      assert_invariant(
          [u] { return as_unit(u)->state.load(std::memory_order_relaxed) == unit_state::ready; },
          "invariant 2: a unit delivered through an inbox is ready");
      if (as_unit(u)->flags & unit_forwarded) {
        as_unit(u)->flags &= static_cast<std::uint8_t>(~unit_forwarded);
        pinned_.push_back(u);
      } else {
        route(u);
      }
    }
  }
  if (!pinned_.empty()) {
    // A stream that runs a unit is not idle. Left spinning, it would keep every pool it serves
    // from waking parked streams (pool::wants_wake) for as long as the unit runs: a primary ULT
    // woken through the inbox then spawned a whole fork-join tree that the parked thief slept
    // through until its park limit.
    looping.end_spin();
    while (work_unit* u = pinned_.pop_front()) run_unit(u);
  }
  if (main && (requests_.load(std::memory_order_relaxed) & (request_adopt | request_adopt_busy)))
      [[unlikely]] {
    const std::uint32_t r =
        requests_.fetch_and(~(request_adopt | request_adopt_busy), std::memory_order_acq_rel);
    adopt_orphans(!(r & request_adopt));
  }
  if (main && rt().events().pending()) [[unlikely]]
    handle_events(*this);
  if (rt().attachment().has_orphans()) [[unlikely]]
    serve_orphans(looping);
  return has_to_stop();
}

bool stream::has_to_stop() const noexcept {
  // It reads the pinned list and the timers, which only the stream's thread touches.
  assert_invariant([this] { return current_stream_no_switch() == this; },
                   "a stream answers has_to_stop() on its own thread");
  const std::uint32_t r = requests_.load(std::memory_order_acquire);
  if (!r) return false;
  if (r & (request_stop | request_replace)) return true;
  if (r & request_join) {
    // Pools to adopt are pools to empty. The request may have come after this check_events()
    // looked for it (from another thread, or from a unit it ran: finalize() asks the primary to
    // adopt and join from its primary ULT, which an orphaned unit's direct yield can run from
    // inside serve_orphans()); the scheduler's next check adopts them.
    if (r & (request_adopt | request_adopt_busy)) return false;
    if (inbox_.nonempty(std::memory_order_acquire) || !pinned_.empty()) return false;
    // Sleepers will be ready, except at finalize, which abandons them like blocked units.
    if (!timers_.empty() && timers_.has_pending() && !rt().finalizing()) return false;
    for (const auto& p : sched_->pools())
      if (!p->empty()) return false;
    return true;
  }
  return false;
}

}  // namespace weft::detail
