// SPDX-License-Identifier: Apache-2.0
#include "weft/scheduler.hpp"

#include <sched.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "core/runtime_state.hpp"
#include "core/stream.hpp"
#include "platform/assert.hpp"
#include "platform/spinlock.hpp"
#include "scheduling/pool_access.hpp"
#include "weft/error.hpp"
#include "weft/ext/defaults.hpp"

namespace weft {

scheduler::scheduler(std::vector<std::shared_ptr<pool>> pools) : pools_(std::move(pools)) {
  if (pools_.empty())
    throw error(errc::invalid_config, "weft: a scheduler needs at least one pool");
  for (const auto& p : pools_)
    if (!p) throw error(errc::invalid_config, "weft: a scheduler's pool is null");
}

scheduler::~scheduler() = default;

work_unit* scheduler::pick_next() noexcept {
  for (const auto& p : pools_)
    if (work_unit* u = p->pop()) return u;
  return nullptr;
}

work_unit* scheduler::pick_after_yield(work_unit* self, pool& home) noexcept {
  push_yielder(home, self);
  return pick_next();
}

bool scheduler::has_ready_work() const noexcept {
  for (const auto& p : pools_)
    if (!p->empty()) return true;
  return false;
}

void scheduler::push_yielder(pool& home, work_unit* self) noexcept {
  detail::assert_invariant(
      [self] {
        return detail::as_unit(self)->state.load(std::memory_order_relaxed) == unit_state::ready;
      },
      "invariant 4: a direct yielder is marked ready as it queues itself");
  detail::assert_invariant(
      [&home, self] {
        return detail::as_unit(self)->home.load(std::memory_order_relaxed) == &home;
      },
      "a yielder is queued in its home pool");
  detail::pool_access::push_yield_as_consumer(home, self);
}

work_unit* scheduler::push_pop_yielder(pool& home, work_unit* self) noexcept {
  detail::assert_invariant(
      [self] {
        return detail::as_unit(self)->state.load(std::memory_order_relaxed) == unit_state::ready;
      },
      "invariant 4: a direct yielder is marked ready as it queues itself");
  return detail::pool_access::push_pop_as_consumer(home, self);
}

loop_scheduler::loop_scheduler(std::vector<std::shared_ptr<pool>> pools)
    : scheduler(std::move(pools)) {
  writes_loop_ = true;
}

void scheduler::do_run_unit(work_unit* u) {
  detail::assert_invariant(
      [this] { return stream_ && detail::current_stream_no_switch() == stream_; },
      "a scheduler runs units on its own stream");
  // The unit's pushes must wake parked streams again (pool::wants_wake).
  if (spinning_) [[unlikely]]
    end_spin();
  if (running_stacked_) ++pops_;
  stream_->run_unit(u);
}

bool scheduler::do_check_events() {
  detail::assert_invariant(
      [this] { return stream_ && detail::current_stream_no_switch() == stream_; },
      "invariant 10: a scheduler's event check (which may adopt pools) runs on its stream");
  if (!running_stacked_) return stream_->check_events(true, *this);
  stream_->check_events(false, *this);
  return do_has_to_stop();
}

bool scheduler::do_has_to_stop() const noexcept {
  if (!running_stacked_) return stream_->has_to_stop();
  // A join of the stream is the stacking unit's business (it ends once these pools are empty).
  if (stream_->must_leave()) return true;
  const std::uint32_t r = stack_requests_.load(std::memory_order_acquire);
  if (r & detail::stack_stop) return true;
  if (budget_ != 0 && pops_ >= budget_) return true;
  if (r & detail::stack_finish) return !has_ready_work();
  return false;
}

namespace {

/// The first and the longest doze of a stream whose policy leaves the units it sees (see
/// stream::park): short enough that a unit which becomes worth taking waits little, long enough
/// that a thief watching a busy peer costs neither of them much. The first park that finds units
/// does not doze at all (they may have come after the policy's last look): one more look first.
constexpr std::chrono::nanoseconds min_doze{8'000};
constexpr std::chrono::nanoseconds max_doze{128'000};
/// An idle round waits at most 2^max_backoff_shift pauses.
constexpr unsigned max_backoff_shift = 10;

/// More streams than the process may run at once (its affinity mask's CPUs).
bool oversubscribed() noexcept {
  const auto& rt = *detail::g_runtime;
  return static_cast<std::size_t>(rt.streams().live()) > rt.topo().allowed_cpus().size();
}

}  // namespace

void scheduler::begin_spin() noexcept {
  if (spinning_) return;
  doze_ = std::chrono::nanoseconds::zero();
  try {
    spun_on_ = pools_;  // reuses the capacity of the last spin
  } catch (...) {
    // Out of memory: spin unmarked, so pushes wake this stream as they would a parked one.
    spun_on_.clear();
    return;
  }
  for (const auto& p : spun_on_) detail::pool_access::spin_begin(*p);
  spinning_ = true;
}

void scheduler::end_spin() noexcept {
  if (!spinning_) return;
  detail::assert_invariant([this] { return !spun_on_.empty(); },
                           "idling: a spinning scheduler marked the pools it spins on");
  spinning_ = false;
  for (const auto& p : spun_on_) detail::pool_access::spin_end(*p);
  spun_on_.clear();
}

bool scheduler::do_wait_for_work(unsigned& idle_rounds) {
  if (running_stacked_) return true;  // the parent decides what the stream does next
  if (idle_rounds < idle_spin()) {
    // Only the runtime's own loop says when it stops spinning (a unit found, a park, the end of
    // the loop); a loop_scheduler's run() does not tell.
    if (idle_rounds == 0 && !writes_loop_) begin_spin();
    // Exponential backoff between looks (1, 2, 4 ... 1024 pauses, about 20 us at most on the test
    // VM): a stream that has just run dry looks again at once, one that keeps finding nothing
    // looks less and less often, so that its looks, which read the other streams' pools, do not
    // keep taking their cache lines from the streams that push and pop there. With looks every
    // microsecond at most, an idle thief made a stream running short fan-outs 1.6 times slower;
    // every 20 us, 1.07 times.
    ++idle_rounds;
    if (oversubscribed()) [[unlikely]] {
      // More streams than CPUs: a stream that spins holds a CPU that a stream with units to run
      // may be waiting for, a kernel time slice (milliseconds) at a time. Each look gives it
      // back instead (4 streams on 2 CPUs, 13,000 migrations between them: over 120 s, now 0.2).
      sched_yield();
      return false;
    }
    const unsigned pauses = 1u << std::min(idle_rounds - 1, max_backoff_shift);
    for (unsigned i = 0; i < pauses; ++i) detail::cpu_relax();
    return false;
  }
  if (idle_.park) {
    // config::park_limit_ms: a safety net that turns what wakes nobody into latency, not a hang.
    // A policy that answers hooks takes its units from its pools, whose pushes wake the stream,
    // so a long idle stream may sleep deep; a loop of its own may poll anything, so it may not.
    end_spin();
    const detail::park_result r = stream_->park(
        std::chrono::milliseconds(detail::g_runtime->cfg().park_limit_ms), !writes_loop_, doze_);
    // Woken by a push (or a delivery, a request): spin again, so that the pushes that follow,
    // say the next levels of a chain its peer runs, find a spinner and wake nobody. A park that
    // ran out: one more look, then park again; spinning there made every safety-net wake-up of
    // an idle work-stealing stream cost idle_spin sweeps over every other stream's pool. A doze
    // beside units the policy left alone: one more look, and the next doze is twice as long.
    idle_rounds = r == detail::park_result::woken ? 0 : idle_spin();
    if (r == detail::park_result::declined)
      doze_ = doze_ == std::chrono::nanoseconds::zero() ? min_doze : std::min(doze_ * 2, max_doze);
  } else {
    sched_yield();
  }
  return false;
}

/// The scheduling loop the runtime runs for every scheduler (a loop_scheduler's own run()
/// instead). A friend of scheduler.
struct detail_loop {
  /// s.pick_next(), marked as iterating pools() where asserts are on (invariant 10).
  static work_unit* pick(scheduler& s) noexcept {
    if constexpr (!detail::asserts_enabled) {
      return s.pick_next();
    } else {
      detail::assert_invariant([&s] { return !s.picking_; },
                               "the loop's pick_next() calls do not nest");
      const std::size_t pools_before = s.pools_.size();
      s.picking_ = true;
      work_unit* u = s.pick_next();
      s.picking_ = false;
      detail::assert_invariant(
          [&s, pools_before] { return s.pools_.size() == pools_before; },
          "invariant 10: pools() does not change while pick_next() iterates it");
      detail::assert_invariant(
          [u] { return !u || u->pool_holder.load(std::memory_order_relaxed) == nullptr; },
          "invariant 1: a unit a policy picks is linked in no pool");
      return u;
    }
  }

  static void run(scheduler& s) {
    detail::assert_invariant(
        [&s] { return s.stream_ && detail::current_stream_no_switch() == s.stream_; },
        "invariant 10: a scheduler's loop, and the hooks that read pools(), run on its stream");
    s.on_start();
    struct stop_on_exit {
      scheduler& s;
      ~stop_on_exit() {
        s.end_spin();
        s.on_stop();
      }
    } stop{s};
    if (s.writes_loop_) {
      static_cast<loop_scheduler&>(s).run();
      return;
    }
    const unsigned freq = s.event_freq();
    unsigned ran = 0;
    unsigned idle = 0;
    for (;;) {
      if (work_unit* u = pick(s)) {
        detail::assert_invariant(
            [u] {
              return detail::as_unit(u)->state.load(std::memory_order_relaxed) == unit_state::ready;
            },
            "invariant 2: a unit a policy picks was taken out of its pool, ready");
        s.do_run_unit(u);
        idle = 0;
        // Stacked: hand control back to the parent as soon as the budget is spent.
        if (s.running_stacked_ && s.do_has_to_stop()) return;
        if (++ran < freq) continue;
        ran = 0;
        if (s.do_check_events()) return;
        s.on_event_check();
        continue;
      }
      ran = 0;
      if (s.do_check_events()) return;
      s.on_event_check();
      s.on_idle();
      if (s.do_wait_for_work(idle)) return;
    }
  }
};

namespace detail {

void run_scheduler(scheduler& s) {
  detail_loop::run(s);
}

}  // namespace detail

bool scheduler::add_pool(std::shared_ptr<pool> p) {
  if (!p) throw error(errc::invalid_config, "weft: add_pool: the pool is null");
  if (!stream_ || detail::current_stream_no_switch() != stream_) {
    throw error(errc::invalid_state,
                "weft: add_pool is only for the scheduler's hooks, on its stream");
  }
  detail::assert_invariant([this] { return !picking_; },
                           "invariant 10: pools() does not grow while pick_next() iterates it");
  if (std::find(pools_.begin(), pools_.end(), p) != pools_.end()) return false;
  bool consumes = false;
  if (!detail::rt().attachment().add(*stream_, p, consumes)) return false;
  detail::assert_invariant(
      [this, &p] { return !single_consumer(p->access()) || p->consumer() == stream_; },
      "invariant 6: a single-consumer pool added to a scheduler is consumed by its stream");
  // A stacked scheduler's ULT must then stay on this stream (see stacking.cpp).
  if (consumes && running_stacked_ && stream_->current())
    detail::as_unit(stream_->current())->pinned_to.store(stream_, std::memory_order_relaxed);
  pools_.push_back(std::move(p));
  on_pools_changed();
  return true;
}

void scheduler::finish() noexcept {
  stack_requests_.fetch_or(detail::stack_finish, std::memory_order_acq_rel);
}

void scheduler::stop() noexcept {
  stack_requests_.fetch_or(detail::stack_stop, std::memory_order_acq_rel);
}

execution_stream& scheduler::stream() const noexcept {
  return *stream_;
}

unsigned scheduler::event_freq() const noexcept {
  return event_freq_ != 0 ? event_freq_ : detail::g_runtime->cfg().event_freq;
}

unsigned scheduler::idle_spin() const noexcept {
  return idle_.spin ? *idle_.spin : detail::g_runtime->cfg().idle_spin;
}

namespace {

struct registry {
  std::mutex mutex;
  std::map<std::string, scheduler_factory, std::less<>> factories;
  registry() {
    // The scheduler library names its schedulers: the runtime includes none of them.
    for (auto& s : ext::stock_schedulers()) factories.emplace(s.name, std::move(s.factory));
  }
};

registry& schedulers() {
  static registry r;
  return r;
}

}  // namespace

void register_scheduler(std::string_view name, scheduler_factory factory) {
  if (name.empty() || !factory) {
    throw error(errc::invalid_config, "weft: register_scheduler needs a name and a factory");
  }
  registry& r = schedulers();
  std::lock_guard lock(r.mutex);
  r.factories.insert_or_assign(std::string(name), std::move(factory));
}

std::unique_ptr<scheduler> make_scheduler(std::string_view name) {
  registry& r = schedulers();
  scheduler_factory factory;
  {
    std::lock_guard lock(r.mutex);
    auto it = r.factories.find(name);
    if (it == r.factories.end()) {
      std::string known;
      for (const auto& [n, f] : r.factories) known += (known.empty() ? "" : ", ") + n;
      throw error(errc::invalid_config, "weft: unknown scheduler '" + std::string(name) +
                                            "' (WEFT_SCHED); known: " + known);
    }
    factory = it->second;
  }
  auto s = factory();
  if (!s)
    throw error(errc::invalid_config,
                "weft: scheduler factory '" + std::string(name) + "' returned null");
  return s;
}

std::vector<std::string> scheduler_names() {
  registry& r = schedulers();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [n, f] : r.factories) names.push_back(n);
  return names;
}

}  // namespace weft
