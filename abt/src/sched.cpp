// SPDX-License-Identifier: Apache-2.0
// ABT_sched_*: predefined schedulers (weft's stock ones, and a RANDWS over the given pools),
// user-defined schedulers (ABT_sched_def, run by a weft::loop_scheduler whose run() calls the
// user's),
// and the entry points a user scheduler's run callback uses (ABT_xstream_run_unit,
// ABT_xstream_check_events, ABT_sched_has_to_stop).
#include <algorithm>
#include <new>
#include <random>
#include <thread>

#include "objects.hpp"
#include "units.hpp"
#include "weft/error.hpp"
#include "weft/schedulers/basic_scheduler.hpp"
#include "weft/schedulers/fifo_pool.hpp"
#include "weft/schedulers/prio_scheduler.hpp"
#include "weft/schedulers/ws_pool.hpp"
#include "weft/this_unit.hpp"
#include "weft/unit_handle.hpp"

namespace abt {

namespace {

/// Reaches weft::scheduler's protected queries for any scheduler object: the ABT API asks them
/// of any scheduler through free functions.
struct sched_access : weft::scheduler {
  static bool has_to_stop_of(const weft::scheduler& s) {
    bool (weft::scheduler::*f)() const noexcept = &sched_access::has_to_stop;
    return (s.*f)();
  }
  static bool has_stream_of(const weft::scheduler& s) {
    bool (weft::scheduler::*f)() const noexcept = &sched_access::has_stream;
    return (s.*f)();
  }
};

/// The scheduler whose run() the calling kernel thread is in (user schedulers only). A
/// scheduler's loop never migrates between threads, so a thread_local is right here.
thread_local weft::scheduler* tl_running = nullptr;
/// The work unit the loop of tl_running runs in: nullptr for a main scheduler, the stacking ULT
/// for a stacked one.
thread_local weft::work_unit* tl_loop_unit = nullptr;

/// True when the caller is the loop of tl_running itself (not a unit it runs).
bool on_loop() noexcept {
  return tl_running && weft::this_unit::current() == tl_loop_unit;
}

/// Runs an ABT_sched_def.
class user_scheduler final : public weft::loop_scheduler {
 public:
  user_scheduler(ABT_sched h, std::vector<std::shared_ptr<weft::pool>> pools)
      : weft::loop_scheduler(std::move(pools)), h_(h) {
    set_idle_policy({.spin = {}, .park = false});
  }
  ~user_scheduler() override {
    if (self_unit_) weft::detail::discard_unit(self_unit_);
    sched_released(h_);
  }

  /// The descriptor that stands for this scheduler's loop in ABT calls made from it (Argobots
  /// runs a scheduler as a ULT): made on first use, never queued, reported as running.
  weft::work_unit* self_unit() {
    if (!self_unit_) self_unit_ = weft::detail::allocate_stand_in();
    return self_unit_;
  }

  void run() override {
    // A stream starts before ABT_xstream_create registers its handle: the user's run may ask
    // for it (ABT_xstream_self) at once, so it waits for the handle while a create is under way.
    while (has_stream() && !xstream_handle(&stream()) &&
           state().creating_xstreams.load(std::memory_order_acquire) > 0)
      std::this_thread::yield();
    stop_seen = false;
    weft::scheduler* prev = tl_running;
    weft::work_unit* prev_unit = tl_loop_unit;
    tl_running = this;
    tl_loop_unit = weft::this_unit::current();
    // Argobots' main scheduler is a ULT its stream's root runs: a tool sees it made (CREATE,
    // which a tool that tracks each ULT's state needs first) and start (RUN). A stacked one runs
    // in a weft ULT, which the runtime reports.
    if (!tl_loop_unit && tool_active()) {
      try {
        const bool fresh = !self_unit_;  // on_stop() dropped the previous loop's
        weft::work_unit* s = self_unit();
        if (fresh) scheduler_tool_event(s, ABT_TOOL_EVENT_THREAD_CREATE);
        scheduler_tool_event(s, ABT_TOOL_EVENT_THREAD_RUN);
      } catch (...) {
        // Out of memory for the stand-in: nothing to report on.
      }
    }
    h_->def.run(h_);
    tl_running = prev;
    tl_loop_unit = prev_unit;
  }
  void on_stop() noexcept override {
    // The stand-in goes with the loop it stands for (a loop that runs again makes a new one):
    // the primary stream's scheduler is destroyed after weft's runtime, which the descriptor
    // goes back to, has ended.
    if (self_unit_) {
      // Argobots' scheduler ULT returns (FINISH), is joined by its stream's end or its
      // replacement (JOIN) and freed (FREE, which weft reports as it discards the descriptor):
      // a tool that tracks ULTs by handle forgets it.
      if (tool_active()) {
        scheduler_tool_event(self_unit_, ABT_TOOL_EVENT_THREAD_FINISH);
        scheduler_tool_event(self_unit_, ABT_TOOL_EVENT_THREAD_JOIN);
      }
      weft::detail::discard_unit(self_unit_);
      self_unit_ = nullptr;
    }
  }
  weft::pool& migration_pool() noexcept override {
    if (h_->def.get_migr_pool) {
      if (ABT_pool p = h_->def.get_migr_pool(h_)) return *p->pool;
    }
    return *pools().front();
  }

  // The loop's mechanisms, for the ABT entry points the user's run callback calls.
  void run_unit_from_callback(weft::work_unit* u) { run_unit(u); }
  bool check_events_from_callback() { return check_events(); }
  bool wait_for_work_from_callback() { return wait_for_work(idle_rounds); }

  bool stop_seen = false;    // check_events said run() must return
  unsigned idle_rounds = 0;  // consecutive check_events calls that found every pool empty

 private:
  ABT_sched h_;
  weft::work_unit* self_unit_ = nullptr;  // see self_unit()
};

/// Argobots' RANDWS over the pools it is given: pools[0] is the own one; when it is empty, one
/// other pool chosen at random is popped, and when that is empty too, every pool once in order
/// (so that idling is decided on all of them).
class randws_over_pools final : public weft::scheduler {
 public:
  randws_over_pools(std::vector<std::shared_ptr<weft::pool>> pools, unsigned freq)
      : weft::scheduler(std::move(pools)), rng_(std::random_device{}()) {
    set_idle_policy({.spin = {}, .park = true});
    set_event_freq(freq);
  }
  void on_start() override {
    if (auto* ws = dynamic_cast<weft::ws_pool*>(pools().front().get())) ws->claim(stream());
  }
  weft::work_unit* pick_next() noexcept override {
    const auto& ps = pools();
    if (weft::work_unit* u = ps.front()->pop()) return u;
    if (ps.size() > 1) {
      std::uniform_int_distribution<std::size_t> pick(1, ps.size() - 1);
      if (weft::work_unit* u = ps[pick(rng_)]->pop()) return u;
    }
    return scheduler::pick_next();
  }

 private:
  std::minstd_rand rng_;
};

/// The weft pools behind ABT pool handles; a null handle gets a fresh pool of `kind` and `access`.
std::vector<std::shared_ptr<weft::pool>> weft_pools(std::vector<ABT_pool>& pools,
                                                    ABT_pool_kind kind, ABT_pool_access access) {
  std::vector<std::shared_ptr<weft::pool>> r;
  for (ABT_pool& p : pools) {
    if (!p) {
      if (int rc = create_basic_pool(kind, access, true, &p))
        throw weft::error(weft::errc::resource, "weft-abt: default pool: " + std::to_string(rc));
    }
    r.push_back(p->pool);
  }
  return r;
}

ABT_sched new_handle(std::vector<ABT_pool> pools, bool automatic) {
  auto h = std::make_unique<ABT_sched_opaque>();  // owned here until registered
  h->pools = std::move(pools);
  h->automatic = automatic;
  layer_state& st = state();
  std::lock_guard lock(st.mutex);
  st.scheds.push_back(h.get());  // may run out of memory: nothing registered or counted then
  for (ABT_pool p : h->pools) p->sched_refs.fetch_add(1, std::memory_order_acq_rel);
  return h.release();
}

bool config_int(ABT_sched_config config, int idx, int& out) {
  if (!config) return false;
  auto it = config->values.find(idx);
  if (it == config->values.end() || it->second.type != ABT_SCHED_CONFIG_INT) return false;
  out = it->second.v.i;
  return true;
}

/// Every pool of `s` is empty.
bool pools_empty(const weft::scheduler& s) {
  for (const auto& p : s.pools())
    if (!p->empty()) return false;
  return true;
}

}  // namespace

int create_predef_sched(int predef, int num_pools, ABT_pool* pools, ABT_sched_config config,
                        bool automatic, ABT_sched* out) {
  if (predef < ABT_SCHED_DEFAULT || predef > ABT_SCHED_BASIC_WAIT) return ABT_ERR_INV_SCHED_PREDEF;
  if (num_pools < 0) return ABT_ERR_INV_ARG;
  int v = 0;
  if (config_int(config, ABT_sched_config_automatic.idx, v)) automatic = v != 0;
  int freq = 0;
  config_int(config, ABT_sched_basic_freq.idx, freq);
  const ABT_pool_kind kind = predef == ABT_SCHED_BASIC_WAIT ? ABT_POOL_FIFO_WAIT
                             : predef == ABT_SCHED_RANDWS   ? ABT_POOL_RANDWS
                                                            : ABT_POOL_FIFO;
  std::vector<ABT_pool> list;
  // Without pools, Argobots makes its own: one, or three for PRIO (one per priority).
  const int default_pools = predef == ABT_SCHED_PRIO ? 3 : 1;
  if (num_pools == 0 || !pools)
    list.assign(static_cast<std::size_t>(num_pools > 0 ? num_pools : default_pools), nullptr);
  else
    list.assign(pools, pools + num_pools);
  std::vector<ABT_pool> created_here;
  for (ABT_pool p : list)
    if (!p) created_here.push_back(nullptr);
  // Argobots gives a predefined scheduler MPMC pools: programs pop them from any stream.
  std::vector<std::shared_ptr<weft::pool>> wp = weft_pools(list, kind, ABT_POOL_ACCESS_MPMC);
  std::unique_ptr<weft::scheduler> s;
  switch (predef) {
    case ABT_SCHED_DEFAULT:
    case ABT_SCHED_BASIC:
      s = std::make_unique<weft::basic_scheduler>(std::move(wp));
      break;
    case ABT_SCHED_BASIC_WAIT:
      s = std::make_unique<weft::basic_wait_scheduler>(std::move(wp));
      break;
    case ABT_SCHED_PRIO:
      s = weft::prio_scheduler::ordered(std::move(wp));
      break;
    case ABT_SCHED_RANDWS:
      s = std::make_unique<randws_over_pools>(std::move(wp), static_cast<unsigned>(freq));
      break;
  }
  ABT_sched h = new_handle(std::move(list), automatic);
  h->predef = static_cast<ABT_sched_predef>(predef);
  h->event_freq = freq;
  h->sched = s.get();
  h->owned = std::move(s);
  *out = h;
  return ABT_SUCCESS;
}

ABT_sched wrap_native_sched(weft::scheduler& s) {
  std::vector<ABT_pool> pools;
  for (const auto& p : s.pools()) pools.push_back(pool_handle_for(p));
  ABT_sched h = new_handle(std::move(pools), true);
  h->predef = ABT_SCHED_BASIC;
  h->sched = &s;
  return h;
}

void delete_sched_handle(ABT_sched s) noexcept {
  if (!s) return;
  if (s->def.run && s->def.free) s->def.free(s);
  s->owned.reset();  // a user scheduler's destructor reports back through sched_released
  // The automatic pools to free are moved to the front of s->pools (which goes with s): no list
  // to allocate, as this runs in free calls that must not fail.
  std::size_t free_now = 0;
  {
    layer_state& st = state();
    std::lock_guard lock(st.mutex);
    auto it = std::find(st.scheds.begin(), st.scheds.end(), s);
    if (it != st.scheds.end()) st.scheds.erase(it);
    for (std::size_t i = 0; i < s->pools.size(); ++i) {
      ABT_pool p = s->pools[i];
      if (p->sched_refs.fetch_sub(1, std::memory_order_acq_rel) == 1 && p->automatic &&
          p->pool->attached_schedulers() == 0)
        std::swap(s->pools[i], s->pools[free_now++]);
    }
  }
  for (std::size_t i = 0; i < free_now; ++i) delete_pool_handle(s->pools[i]);
  delete s;
}

void stacked_scheduler_ended(ABT_sched s) noexcept {
  s->sched = nullptr;
  s->stacked_live.store(false, std::memory_order_release);
  if (s->automatic) delete_sched_handle(s);
}

void sched_released(ABT_sched s) noexcept {
  if (!s) return;
  s->sched = nullptr;
  s->xstream = nullptr;
}

bool in_scheduler_loop() noexcept {
  return on_loop();
}

weft::work_unit* scheduler_unit() noexcept {
  if (!on_loop() || tl_loop_unit) return nullptr;  // a stacked loop runs in a real ULT
  auto* us = dynamic_cast<user_scheduler*>(tl_running);
  if (!us) return nullptr;
  try {
    return us->self_unit();
  } catch (...) {
    return nullptr;
  }
}

int yield_from_scheduler(weft::work_unit* s) noexcept {
  // Argobots runs a stream's main scheduler as a ULT whose parent is the stream's root ULT: a
  // yield puts the scheduler's ULT into the root's pool and switches to the root, whose loop
  // holds nothing else and runs the scheduler again at once. So the yield returns to run()
  // with nothing run in between, and a tool sees the scheduler's ULT yield (sync type USER) and
  // run again. weft's main schedulers run on the stream's own context with no root above them:
  // the stand-in reports the same events.
  if (tool_active()) {
    scheduler_tool_event(s, ABT_TOOL_EVENT_THREAD_YIELD, ABT_SYNC_EVENT_TYPE_USER);
    scheduler_tool_event(s, ABT_TOOL_EVENT_THREAD_RUN);
  }
  return ABT_SUCCESS;
}

int yield_outside_ult(weft::work_unit* self, bool report) noexcept {
  // Only a main scheduler's loop gets here: a stacked one runs in a weft ULT (its stacking
  // unit) and yields as one, back to its parent scheduler, which runs other work first.
  if (!self) {
    if (weft::work_unit* s = scheduler_unit()) return yield_from_scheduler(s);
  }
  if (!report) return ABT_SUCCESS;  // a tasklet or an external thread: nothing to yield
  return self ? ABT_ERR_INV_THREAD : ABT_ERR_INV_XSTREAM;
}

int run_from_scheduler(weft::work_unit* u) {
  if (!on_loop()) return ABT_ERR_INV_XSTREAM;  // not in a scheduler loop
  weft::scheduler* s = tl_running;
  weft::work_unit* loop_unit = tl_loop_unit;
  auto* us = dynamic_cast<user_scheduler*>(s);
  if (!us) return ABT_ERR_INV_XSTREAM;
  return guarded(ABT_ERR_THREAD, [&] {
    us->run_unit_from_callback(u);
    tl_running = s;
    tl_loop_unit = loop_unit;
    us->idle_rounds = 0;
    return ABT_SUCCESS;
  });
}

}  // namespace abt

using namespace abt;

extern "C" {

int ABT_sched_create(ABT_sched_def* def, int num_pools, ABT_pool* pools, ABT_sched_config config,
                     ABT_sched* newsched) {
  if (newsched) *newsched = ABT_SCHED_NULL;  // Argobots 1.x: set on error too
  if (int rc = ensure_initialized()) return rc;
  if (!newsched) return ABT_ERR_INV_ARG;
  if (!def || !def->run) return ABT_ERR_INV_ARG;
  if (num_pools < 0 || (num_pools > 0 && !pools)) return ABT_ERR_INV_ARG;
  return guarded(ABT_ERR_MEM, [&]() -> int {
    int automatic = 0;
    config_int(config, ABT_sched_config_automatic.idx, automatic);
    std::vector<ABT_pool> list(pools, pools + num_pools);
    // A user scheduler's missing pools are MPSC, as in Argobots.
    std::vector<std::shared_ptr<weft::pool>> wp =
        weft_pools(list, ABT_POOL_FIFO, ABT_POOL_ACCESS_MPSC);
    // weft schedulers serve at least one pool: a scheduler given none gets a private FIFO pool
    // (not listed among its ABT pools).
    if (wp.empty()) wp.push_back(weft::make_fifo_pool(weft::access_mode::mpsc));
    ABT_sched h = new_handle(std::move(list), automatic != 0);
    h->def = *def;
    auto s = std::make_unique<user_scheduler>(h, std::move(wp));
    h->sched = s.get();
    h->owned = std::move(s);
    if (def->init) {
      if (int rc = def->init(h, config)) {
        h->def.free = nullptr;  // free() pairs with a successful init() only
        delete_sched_handle(h);
        return rc;
      }
    }
    *newsched = h;
    return ABT_SUCCESS;
  });
}

int ABT_sched_create_basic(ABT_sched_predef predef, int num_pools, ABT_pool* pools,
                           ABT_sched_config config, ABT_sched* newsched) {
  if (newsched) *newsched = ABT_SCHED_NULL;
  if (int rc = ensure_initialized()) return rc;
  if (!newsched) return ABT_ERR_INV_ARG;
  return guarded(ABT_ERR_MEM, [&] {
    return create_predef_sched(enum_value(predef), num_pools, pools, config, false, newsched);
  });
}

int ABT_sched_free(ABT_sched* sched) {
  if (!sched || !*sched) return ABT_ERR_INV_SCHED;
  ABT_sched s = *sched;
  // In use: a stream's main scheduler, or stacked in a pool and not finished yet.
  if (s->xstream) return ABT_ERR_SCHED;
  if (s->stacked_live.load(std::memory_order_acquire)) return ABT_ERR_SCHED;
  if (!s->owned && s->sched) return ABT_ERR_SCHED;
  delete_sched_handle(s);
  *sched = ABT_SCHED_NULL;
  return ABT_SUCCESS;
}

int ABT_sched_set_data(ABT_sched sched, void* data) {
  if (!sched) return ABT_ERR_INV_SCHED;
  sched->data.store(data, std::memory_order_release);
  return ABT_SUCCESS;
}

int ABT_sched_get_data(ABT_sched sched, void** data) {
  if (!sched) return ABT_ERR_INV_SCHED;
  if (!data) return ABT_ERR_INV_ARG;
  *data = sched->data.load(std::memory_order_acquire);
  return ABT_SUCCESS;
}

int ABT_sched_get_num_pools(ABT_sched sched, int* num_pools) {
  if (!sched) return ABT_ERR_INV_SCHED;
  if (!num_pools) return ABT_ERR_INV_ARG;
  *num_pools = static_cast<int>(sched->pools.size());
  return ABT_SUCCESS;
}

int ABT_sched_get_pools(ABT_sched sched, int max_pools, int idx, ABT_pool* pools) {
  if (!sched) return ABT_ERR_INV_SCHED;
  if (max_pools < 0 || idx < 0 || (max_pools > 0 && !pools)) return ABT_ERR_INV_ARG;
  const int n = static_cast<int>(sched->pools.size());
  if (idx + max_pools > n) return ABT_ERR_SCHED;  // as Argobots: the range must exist
  for (int i = 0; i < max_pools; ++i)
    pools[i] = sched->pools[static_cast<std::size_t>(idx) + static_cast<std::size_t>(i)];
  return ABT_SUCCESS;
}

int ABT_sched_get_size(ABT_sched sched, size_t* size) {
  if (!sched) return ABT_ERR_INV_SCHED;
  if (!size) return ABT_ERR_INV_ARG;
  size_t n = 0;
  for (ABT_pool p : sched->pools) n += p->pool->size();
  *size = n;
  return ABT_SUCCESS;
}

int ABT_sched_get_total_size(ABT_sched sched, size_t* size) {
  return ABT_sched_get_size(sched, size);
}

int ABT_sched_finish(ABT_sched sched) {
  if (!sched) return ABT_ERR_INV_SCHED;
  return guarded(ABT_ERR_SCHED, [&] {
    if (auto sp = sched->stacked.lock()) {
      sp->finish();
    } else if (sched->xstream && sched->xstream->stream && !sched->xstream->primary) {
      // A main scheduler that finishes ends its stream; its pools keep their units.
      sched->xstream->stream->request_exit();
    } else if (sched->xstream && sched->xstream->primary) {
      return ABT_ERR_SCHED;  // the primary stream runs until ABT_finalize
    }
    return ABT_SUCCESS;
  });
}

int ABT_sched_exit(ABT_sched sched) {
  if (!sched) return ABT_ERR_INV_SCHED;
  return guarded(ABT_ERR_SCHED, [&] {
    if (auto sp = sched->stacked.lock()) {
      sp->stop();
    } else if (sched->xstream && sched->xstream->stream && !sched->xstream->primary) {
      sched->xstream->stream->request_exit();
    } else if (sched->xstream && sched->xstream->primary) {
      return ABT_ERR_SCHED;
    }
    return ABT_SUCCESS;
  });
}

int ABT_sched_has_to_stop(ABT_sched sched, ABT_bool* stop) {
  if (!sched) return ABT_ERR_INV_SCHED;
  if (!stop) return ABT_ERR_INV_ARG;
  weft::scheduler* s = sched->sched;
  if (!s || !sched_access::has_stream_of(*s)) {  // not running anywhere
    *stop = ABT_FALSE;
    return ABT_SUCCESS;
  }
  bool r = sched_access::has_to_stop_of(*s);
  if (auto* u = dynamic_cast<user_scheduler*>(s)) {
    r = r || u->stop_seen;
    // A stacked scheduler with nothing to do hands the stream back to its parent.
    if (s->stacked() && pools_empty(*s)) r = true;
  }
  *stop = r ? ABT_TRUE : ABT_FALSE;
  return ABT_SUCCESS;
}

int ABT_xstream_run_unit(ABT_unit unit, ABT_pool pool) {
  if (int rc = ensure_initialized()) return rc;
  if (!pool) return ABT_ERR_INV_POOL;  // Argobots checks the pool first
  if (!in_scheduler_loop()) {
    // Argobots runs the unit from any ULT (as ABT_self_schedule does); a tasklet or an external
    // thread cannot.
    const context c = calling_context();
    if (c == context::tasklet) return ABT_ERR_INV_THREAD;
    if (c != context::ult && c != context::primary_ult) return ABT_ERR_INV_XSTREAM;
  }
  if (!unit) return ABT_ERR_INV_UNIT;
  weft::work_unit* u = unit_to_thread(unit, pool);
  if (!u) return ABT_ERR_INV_UNIT;
  if (!in_scheduler_loop()) return ABT_self_schedule(handle_of(u), pool);
  // The unit now belongs to `pool`, as Argobots associates it: a yield puts it back there.
  weft::detail::set_home(u, *pool->pool);
  if (thread_ext* e = ext_of(u)) e->last_pool.store(pool, std::memory_order_relaxed);
  return run_from_scheduler(u);
}

int ABT_xstream_check_events(ABT_sched sched) {
  if (int rc = ensure_initialized()) return rc;
  if (!weft::this_unit::stream()) return ABT_ERR_INV_XSTREAM;  // an external thread
  if (!sched) return ABT_ERR_INV_SCHED;
  // As Argobots: only the scheduler's own ULT (its loop) may check its events.
  weft::scheduler* s = sched->sched;
  if (!s || s != tl_running || !on_loop()) return ABT_ERR_INV_THREAD;
  auto* us = dynamic_cast<user_scheduler*>(s);
  if (!us) return ABT_ERR_INV_THREAD;
  return guarded(ABT_ERR_XSTREAM, [&] {
    if (us->check_events_from_callback()) {
      us->stop_seen = true;
      return ABT_SUCCESS;
    }
    // A user scheduler whose pools are all empty spins in its run callback: after a while,
    // give the core away between checks (weft's idle policy; Argobots' schedulers sleep too).
    if (!s->stacked() && pools_empty(*s)) us->wait_for_work_from_callback();
    return ABT_SUCCESS;
  });
}

}  // extern "C"
