// SPDX-License-Identifier: Apache-2.0
// init() and finalize(): the primary stream, the secondary streams, and the order of teardown.
#include "weft/runtime.hpp"

#include <pthread.h>
#include <sched.h>

#include <boost/context/detail/fcontext.hpp>

#include <cstdio>
#include <iostream>
#include <mutex>
#include <new>
#include <sstream>

#include "core/eh_state.hpp"
#include "core/runtime_state.hpp"
#include "core/stream.hpp"
#include "core/unit.hpp"
#include "elasticity/events.hpp"
#include "elasticity/rm_client.hpp"
#include "memory/overflow.hpp"
#include "observe/dump.hpp"
#include "observe/trace_buffer.hpp"
#include "platform/assert.hpp"
#include "platform/sanitizer.hpp"
#include "sync/timer.hpp"
#include "weft/error.hpp"
#include "weft/scheduler.hpp"
#include "weft/unit_handle.hpp"

namespace weft {
namespace detail {

runtime_state* g_runtime = nullptr;
std::atomic<unit_id> next_id_block{0};

namespace {

std::mutex init_mutex;
std::uint64_t last_epoch = 0;  // the epoch of the last runtime init() started; under init_mutex
std::unique_ptr<alt_signal_stack> primary_alt_stack;

/// The primary stream's scheduler runs on a stack of its own, since the primary thread's stack
/// belongs to the primary ULT. It is entered the first time the primary ULT switches away.
[[noreturn]] void primary_scheduler_entry(transfer t) noexcept {
  asan_finish_switch(nullptr);
  stream::land(t);
  stream* s = current_stream();
  s->switch_state().set_current(nullptr);  // the primary ULT just switched away; we run no unit
  // A unit the primary ULT handed over on its way out (a tasklet it joins, say) runs first, as
  // run_unit() does when the scheduler context was already inside it.
  if (work_unit* next = s->switch_state().take_handoff()) s->run_unit(next);
  s->scheduler_loop();
  // finalize asked the scheduler to finish: go back to the primary ULT for good.
  work_unit* primary = s->primary_unit();
  assert_invariant([s] { return s->current() == nullptr; },
                   "invariant 4: the primary's loop returns with no unit running on it");
  assert_invariant(
      [primary] {
        return as_unit(primary)->state.load(std::memory_order_relaxed) == unit_state::blocked;
      },
      "invariant 4: the primary ULT waits blocked in finalize while its scheduler drains");
  switch_record rec;  // from = nullptr: the scheduler
  rec.action = switch_action::sched_exit;
  rec.on_stream = s;
  // Leaves the thread empty, as every jump does; this context never resumes.
  if (eh_globals* eh = s->switch_state().eh_globals_of_thread(); eh_held(eh)) *eh = eh_globals{};
  asan_start_switch(nullptr, as_unit(primary)->stack.lo, as_unit(primary)->stack.size);
  tsan_switch(tsan_fiber(as_unit(primary)->stack));
  jump(as_unit(primary)->context, &rec);
  __builtin_unreachable();
}

void start_primary(runtime_state& r) {
  assert_invariant([&r] { return r.primary() == nullptr && r.streams().count() == 0; },
                   "init: the primary stream is the first, made once");
  std::vector<int> cpus = place_of(0);
  const int node = topology::numa_node_of(cpus);
  stream* p = r.streams().insert(0, [&](int rank) {
    return new stream(rank, true, make_scheduler(r.cfg().scheduler), cpus, node);
  });
  r.set_primary(p);
  set_current_stream(p);
  r.bind_primary(cpus);
  primary_alt_stack = std::make_unique<alt_signal_stack>();
  p->attach_pools();

  work_unit* u = p->units().pop();
  init_unit(u, unit_kind::ult, 0, p->next_id());
  as_unit(u)->flags = unit_primary;
  as_unit(u)->pinned_to.store(p, std::memory_order_relaxed);
  as_unit(u)->home.store(p->first_pool(), std::memory_order_relaxed);
  as_unit(u)->last_stream.store(p, std::memory_order_relaxed);
  as_unit(u)->stack = native_stack();
  as_unit(u)->state.store(unit_state::running, std::memory_order_relaxed);
  p->set_primary_unit(u);
  p->switch_state().set_current(u);

  const stack_region sched_stack = map_stack(std::max<std::size_t>(r.stack_size(), 64 * 1024));
  p->switch_state().set_scheduler_stack(sched_stack);
  p->switch_state().save_scheduler_context(
      boost::context::detail::make_fcontext(static_cast<char*>(sched_stack.lo) + sched_stack.size,
                                            sched_stack.size, &primary_scheduler_entry));
}

void teardown(runtime_state* r) {
  r->streams().delete_all_but(r->primary());
  observation_at_teardown();
  if (stream* p = r->primary()) {
    unmap_stack(p->switch_state().scheduler_stack());
    work_unit* u = p->primary_unit();
    p->switch_state().set_current(nullptr);
    if (u) free_unit(u);  // null when init failed before the primary ULT was set up
    set_current_stream(nullptr);
    delete p;
  }
  r->restore_affinity();
  primary_alt_stack.reset();
  uninstall_overflow_handler();
  delete r;
}

}  // namespace

runtime_state& rt() {
  if (!g_runtime) throw error(errc::not_initialized, "weft: the runtime is not initialised");
  return *g_runtime;
}

std::vector<int> place_of(int rank) {
  return rt().place_of(rank);
}

runtime_state::runtime_state(const config& cfg)
    : cfg_(cfg),
      stack_size_(round_to_pages(cfg.stack_size)),
      stack_reserve_(cfg.stack_reserve ? round_to_pages(cfg.stack_reserve) : 0),
      primary_thread_(pthread_self()) {
  places_ = topo_.places(cfg_.affinity);
  if (cfg_.num_streams == 0) cfg_.num_streams = static_cast<int>(topo_.allowed_cpus().size());
  if (cfg_.num_streams < 1) cfg_.num_streams = 1;
}

runtime_state::~runtime_state() = default;

std::vector<int> runtime_state::place_of(int rank) const {
  if (places_.empty()) return {};
  return places_[static_cast<std::size_t>(rank) % places_.size()];
}

void runtime_state::bind_primary(const std::vector<int>& cpus) {
  if (cpus.empty()) return;
  CPU_ZERO(&saved_affinity_);
  affinity_saved_ = sched_getaffinity(0, sizeof saved_affinity_, &saved_affinity_) == 0;
  std::string why;
  if (!topo_.bind_current_thread(cpus, why)) {
    std::fprintf(stderr, "weft: warning: cannot bind the primary stream (%s); it runs unbound\n",
                 why.c_str());
  }
}

void runtime_state::restore_affinity() noexcept {
  if (affinity_saved_) sched_setaffinity(0, sizeof saved_affinity_, &saved_affinity_);
}

void runtime_state::connect_resource_manager(const std::string& address) {
  rm_ = std::make_unique<rm_client>(rm::parse_address(address, "resource_manager"));
}

void runtime_state::disconnect_resource_manager() noexcept {
  rm_.reset();
}

}  // namespace detail

void init(const config& cfg_in) {
  std::lock_guard lock(detail::init_mutex);
  if (detail::g_runtime) {
    detail::g_runtime->nest();
    return;
  }
  config cfg = cfg_in;
  cfg.apply_environment();
  cfg.validate();
  (void)make_scheduler(cfg.scheduler);  // an unknown name fails here, before anything starts

  detail::runtime_state* r = nullptr;
  try {
    r = new detail::runtime_state(cfg);
    detail::g_runtime = r;
    detail::publish_for_debuggers(r);
    detail::set_runtime_epoch(++detail::last_epoch);
    detail::install_overflow_handler();
    detail::start_primary(*r);
    for (int i = 1; i < r->cfg().num_streams; ++i) execution_stream::create();
    if (!r->cfg().resource_manager.empty()) r->connect_resource_manager(r->cfg().resource_manager);
    if (r->cfg().dump_signal != 0) detail::start_dump_signal(r->cfg().dump_signal);
    detail::observation_at_init(*r);
  } catch (...) {
    // The dump thread outlives nothing it serves: a later init would find it still running.
    detail::stop_dump_signal();
    detail::publish_for_debuggers(nullptr);
    if (detail::g_runtime) {
      // The table's lock is held only to read a slot: a stream that ends may still query it.
      bool end = false;
      for (std::size_t i = 0; !end; ++i) {
        detail::stream* s = r->streams().slot(i, end);
        if (s && !s->is_primary() && s->thread_started()) {
          s->request(detail::request_stop);
          s->wait_terminated();
        }
      }
      detail::teardown(r);
    } else {
      delete r;
    }
    detail::g_runtime = nullptr;
    detail::set_runtime_epoch(0);
    try {
      throw;
    } catch (const std::bad_alloc&) {
      // Every failure of init is a weft::error; memory exhaustion is a resource failure.
      throw error(errc::resource, "weft: init: out of memory");
    }
  }
  if (r->cfg().print) print_config(std::cerr);
}

void finalize() {
  std::unique_lock lock(detail::init_mutex);
  detail::runtime_state& r = detail::rt();
  if (r.unnest()) return;
  detail::stream* p = r.primary();
  if (!pthread_equal(pthread_self(), r.primary_thread()) || detail::current_stream() != p ||
      p->current() != p->primary_unit()) {
    throw error(errc::wrong_thread,
                "weft: the last finalize() must be called by the primary ULT (the thread that "
                "called init)");
  }
  lock.unlock();  // units still running may need to create streams or query the runtime

  // 0. No new shrink/expand requests; the resource-manager connection closes; no more dumps on
  //    a signal.
  detail::stop_dump_signal();
  detail::close_events();
  r.disconnect_resource_manager();

  // 1. Secondary streams finish their queued work and end; the primary keeps running its units
  //    while it waits (wait_terminated yields). Units still sleeping or in a timed wait are
  //    abandoned as blocked ones are: a one-hour sleep must not hold finalize up for an hour.
  r.set_finalizing();
  // By index and without allocating, so that finalize works out of memory: a stream object
  // stays valid until teardown (freed ones are parked), the lock is held only to read the slot.
  auto secondary = [&r](std::size_t i, bool& end) -> detail::stream* {
    detail::stream* s = r.streams().slot(i, end);
    return s && !s->is_primary() ? s : nullptr;
  };
  bool end = false;
  for (std::size_t i = 0; !end; ++i) {
    detail::stream* s = secondary(i, end);
    if (s && s->state() != stream_state::terminated) s->request(detail::request_join);
  }
  end = false;
  for (std::size_t i = 0; !end; ++i) {
    if (detail::stream* s = secondary(i, end)) s->wait_terminated();
  }
  detail::assert_invariant(
      [&r] {
        int running = 0;
        r.streams().for_each([&running](detail::stream& s) {
          running += !s.is_primary() && s.state() != stream_state::terminated;
        });
        return running == 0;
      },
      "finalize: every secondary stream has ended before the primary drains the orphans");

  // 2. The primary takes over pools orphaned by stopped streams, runs everything left, and its
  //    scheduler returns; primary_scheduler_entry then switches back here for good.
  p->request(detail::request_adopt);
  detail::switch_record rec{
      p->primary_unit(), detail::switch_action::block,
      [](work_unit*, void* s) { static_cast<detail::stream*>(s)->request(detail::request_join); },
      p};
  p->switch_to_scheduler(rec);
  // Every other stream has ended, so no stream can orphan a pool any more, nor hold the lock.
  detail::assert_invariant([&r] { return !r.attachment().orphans_hold_units(); },
                           "invariant 12: the primary stops at finalize only once it adopted "
                           "the orphaned pools' units");
  detail::observation_at_finalize(r);

  // 3. What is left can never run (blocked with nobody left to wake it, suspended, sleeping, or
  //    queued in a pool no scheduler serves): say so, rather than drop it silently. Every stream
  //    has stopped, so the dump reads the units undisturbed.
  //    The report is best effort: out of memory, finalize says so and still ends the runtime.
  try {
    if (const std::size_t left = detail::count_live_units(r, p->primary_unit()); left > 0) {
      std::ostringstream out;
      out << "weft: finalize: " << left << (left == 1 ? " unit" : " units")
          << " could not finish and " << (left == 1 ? "is" : "are") << " abandoned:\n";
      detail::write_dump(out, r, {false, true, true, true, p->primary_unit()});
      std::cerr << out.str() << std::flush;
    }
  } catch (...) {
    std::fputs("weft: finalize: out of memory; units that could not finish are not listed\n",
               stderr);
  }

  lock.lock();
  detail::publish_for_debuggers(nullptr);
  detail::g_runtime = nullptr;
  detail::set_runtime_epoch(0);
  detail::teardown(&r);
}

bool initialized() noexcept {
  return detail::g_runtime != nullptr;
}

const config& current_config() {
  return detail::rt().cfg();
}

void print_config(std::ostream& out) {
  out << detail::rt().cfg().describe();
}

}  // namespace weft
