// SPDX-License-Identifier: Apache-2.0
// ABT_pool_* (predefined pools, pool handles, the thread- and unit-based operations) and
// ABT_unit_*. User-defined pools are in user_pool.cpp.
#include <algorithm>
#include <chrono>
#include <new>

#include "objects.hpp"
#include "weft/error.hpp"
#include "weft/schedulers/fifo_pool.hpp"
#include "weft/schedulers/ws_pool.hpp"
#include "weft/stacking.hpp"
#include "weft/this_unit.hpp"

namespace abt {

weft::access_mode to_mode(ABT_pool_access a) noexcept {
  switch (a) {
    case ABT_POOL_ACCESS_PRIV:
      return weft::access_mode::priv;
    case ABT_POOL_ACCESS_SPSC:
      return weft::access_mode::spsc;
    case ABT_POOL_ACCESS_MPSC:
      return weft::access_mode::mpsc;
    case ABT_POOL_ACCESS_SPMC:
      return weft::access_mode::spmc;
    default:
      return weft::access_mode::mpmc;
  }
}

bool valid_access(int a) noexcept {
  return a >= ABT_POOL_ACCESS_PRIV && a <= ABT_POOL_ACCESS_MPMC;
}

namespace {

ABT_pool_access from_mode(weft::access_mode m) noexcept {
  switch (m) {
    case weft::access_mode::priv:
      return ABT_POOL_ACCESS_PRIV;
    case weft::access_mode::spsc:
      return ABT_POOL_ACCESS_SPSC;
    case weft::access_mode::mpsc:
      return ABT_POOL_ACCESS_MPSC;
    case weft::access_mode::spmc:
      return ABT_POOL_ACCESS_SPMC;
    default:
      return ABT_POOL_ACCESS_MPMC;
  }
}

/// True while a scheduler (ABT-level, or installed on a stream) uses the pool.
bool in_use(ABT_pool p) noexcept {
  return p->sched_refs.load(std::memory_order_acquire) > 0 || p->pool->attached_schedulers() > 0;
}

}  // namespace

ABT_pool register_pool(std::shared_ptr<weft::pool> p, ABT_pool_access access, bool automatic,
                       bool user_defined) {
  auto h = std::make_unique<ABT_pool_opaque>();  // owned here until registered
  h->pool = std::move(p);
  h->access = access;
  h->automatic = automatic;
  h->user_defined = user_defined;
  if (user_defined) g_slow_paths.fetch_or(slow_user_pool, std::memory_order_seq_cst);
  layer_state& st = state();
  std::lock_guard lock(st.mutex);
  st.pools.push_back(h.get());  // may run out of memory: nothing registered then
  h->id = st.next_pool_id++;
  return h.release();
}

ABT_pool find_pool(const weft::pool* p) noexcept {
  if (!p) return nullptr;
  layer_state& st = state();
  std::lock_guard lock(st.mutex);
  for (ABT_pool h : st.pools)
    if (h->pool.get() == p) return h;
  return nullptr;
}

ABT_pool pool_handle_for(const std::shared_ptr<weft::pool>& p) {
  if (!p) return nullptr;
  if (ABT_pool h = find_pool(p.get())) return h;
  ABT_pool h = register_pool(p, from_mode(p->access()), false, false);
  h->wraps_native = true;
  return h;
}

int create_basic_pool(int kind, int access, bool automatic, ABT_pool* out) {
  if (!valid_access(access)) return ABT_ERR_INV_POOL_ACCESS;
  std::shared_ptr<weft::pool> p;
  switch (kind) {
    case ABT_POOL_FIFO:
    case ABT_POOL_FIFO_WAIT:  // weft's FIFO pools all sleep in pop_wait until a push
      p = weft::make_fifo_pool(to_mode(static_cast<ABT_pool_access>(access)));
      break;
    case ABT_POOL_RANDWS:
      p = weft::make_ws_pool();
      break;
    default:
      return ABT_ERR_INV_POOL_KIND;
  }
  *out = register_pool(std::move(p), static_cast<ABT_pool_access>(access), automatic, false);
  return ABT_SUCCESS;
}

void delete_pool_handle(ABT_pool p) noexcept {
  if (!p) return;
  {
    layer_state& st = state();
    std::lock_guard lock(st.mutex);
    auto it = std::find(st.pools.begin(), st.pools.end(), p);
    if (it != st.pools.end()) st.pools.erase(it);
  }
  if (p->user_defined) user_pool_retire(p);  // its free callback, while the handle is valid
  p->pool.reset();
  delete p;
}

weft::work_unit* unit_to_thread(ABT_unit unit, ABT_pool pool) noexcept {
  if (!unit) return nullptr;
  // A user pool's unit stands for its work unit while that stays associated with the pool; going
  // to another pool (or a built-in one: `pool` null or not user-defined), the unit is freed.
  if (weft::work_unit* u = user_unit_thread(unit, false)) {
    if (!pool || !pool->user_defined) user_unit_thread(unit, true);
    return u;
  }
  // Otherwise it is a built-in pool's unit, its work unit, whatever the target pool: Argobots
  // converts a unit between pool kinds. A user pool takes only this layer's work units.
  auto* u = reinterpret_cast<weft::work_unit*>(unit);
  if (pool && pool->user_defined && !ext_of(u) && u != primary_unit()) return nullptr;
  return u;
}

}  // namespace abt

using namespace abt;

namespace {

/// True when the caller may not take units out of the built-in pool `pool`: a single-consumer
/// pool (PRIV, SPSC, MPSC) that a stream's scheduler serves is popped by that stream only. Its
/// lanes take no lock (Argobots' pools take one), so another thread's pop would race the
/// consumer. Such a pop finds the pool empty instead: its units stay for the stream that serves
/// it (Argobots programs poll their pools and ignore an empty one; the stream's scheduler runs
/// them, or, once no scheduler serves the pool, another stream does).
bool foreign_pop(ABT_pool pool) noexcept {
  const weft::pool& p = *pool->pool;
  return !pool->user_defined && weft::single_consumer(p.access()) && p.consumer() &&
         p.attached_schedulers() > 0 && !p.caller_is_consumer();
}

int pop_thread(ABT_pool pool, ABT_thread* thread, ABT_pool_context ctx, bool wait, double secs) {
  if (!pool) return ABT_ERR_INV_POOL;
  if (!thread) return ABT_ERR_INV_ARG;
  if (foreign_pop(pool)) {
    *thread = ABT_THREAD_NULL;
    return ABT_SUCCESS;
  }
  return guarded(ABT_ERR_POOL, [&] {
    weft::work_unit* u;
    if (pool->user_defined) {
      u = user_pool_pop_thread(pool, ctx, wait, secs);
    } else if (wait) {
      u = pool->pool->pop_wait(
          std::chrono::nanoseconds(static_cast<long long>(std::max(0.0, secs) * 1e9)));
    } else {
      u = pool->pool->pop();
    }
    *thread = handle_of(u);
    return ABT_SUCCESS;
  });
}

/// Calls fn on every unit queued in a predefined pool, in pop order. weft's pools cannot be
/// iterated, so the walk pops them all and pushes them back in the same order: units are out of
/// the pool meanwhile (other streams find fewer), and a single-producer pool may only be walked
/// from its producer stream (weft::errc::unsupported otherwise).
template <class F>
void walk_pool(ABT_pool pool, F&& fn) {
  weft::pool& p = *pool->pool;
  if (weft::single_producer(p.access()) && p.producer() &&
      p.producer() != weft::this_unit::stream()) {
    throw weft::error(weft::errc::unsupported,
                      "weft-abt: a single-producer pool is walked from its producer stream only");
  }
  std::vector<weft::work_unit*> units;
  try {
    while (weft::work_unit* u = p.pop()) units.push_back(u);
  } catch (...) {
    for (weft::work_unit* u : units) p.push(u);
    throw;
  }
  for (weft::work_unit* u : units) fn(u);
  for (weft::work_unit* u : units) p.push(u);
}

int push_thread(ABT_pool pool, ABT_thread thread, ABT_pool_context ctx) {
  if (!pool) return ABT_ERR_INV_POOL;
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  return guarded(ABT_ERR_POOL, [&] {
    // A user pool sets the unit's pool once it has made its unit (a refused one stays as it was).
    if (pool->user_defined) return user_pool_push_thread(pool, u, ctx);
    // Into a built-in pool: a user pool's unit standing for `u` goes (Argobots converts it).
    if (g_slow_paths.load(std::memory_order_relaxed) & slow_user_pool) user_pool_release(u);
    weft::detail::set_home(u, *pool->pool);
    if (thread_ext* e = ext_of(u)) e->last_pool.store(pool, std::memory_order_relaxed);
    pool->pool->push(u);
    return ABT_SUCCESS;
  });
}

}  // namespace

extern "C" {

int ABT_pool_create(ABT_pool_user_def def, ABT_pool_config config, ABT_pool* newpool) {
  if (newpool) *newpool = ABT_POOL_NULL;  // Argobots 1.x: set on error too
  if (int rc = ensure_initialized()) return rc;
  if (!newpool) return ABT_ERR_INV_ARG;
  if (!def) return ABT_ERR_INV_POOL_USER_DEF;
  return guarded(ABT_ERR_MEM, [&] { return create_user_pool(def, config, newpool); });
}

int ABT_pool_create_basic(ABT_pool_kind kind, ABT_pool_access access, ABT_bool automatic,
                          ABT_pool* newpool) {
  if (newpool) *newpool = ABT_POOL_NULL;
  if (int rc = ensure_initialized()) return rc;
  if (!newpool) return ABT_ERR_INV_ARG;
  return guarded(ABT_ERR_MEM, [&] {
    return create_basic_pool(enum_value(kind), enum_value(access), automatic != ABT_FALSE, newpool);
  });
}

int ABT_pool_free(ABT_pool* pool) {
  if (!pool || !*pool) return ABT_ERR_INV_POOL;
  if (in_use(*pool)) return ABT_ERR_POOL;
  delete_pool_handle(*pool);
  *pool = ABT_POOL_NULL;
  return ABT_SUCCESS;
}

int ABT_pool_get_access(ABT_pool pool, ABT_pool_access* access) {
  if (!pool) return ABT_ERR_INV_POOL;
  if (!access) return ABT_ERR_INV_ARG;
  *access = pool->access;
  return ABT_SUCCESS;
}

int ABT_pool_is_empty(ABT_pool pool, ABT_bool* is_empty) {
  if (!pool) return ABT_ERR_INV_POOL;
  if (!is_empty) return ABT_ERR_INV_ARG;
  const bool empty = pool->user_defined ? user_pool_is_empty(pool) : pool->pool->empty();
  *is_empty = empty ? ABT_TRUE : ABT_FALSE;
  return ABT_SUCCESS;
}

int ABT_pool_get_size(ABT_pool pool, size_t* size) {
  if (!pool) return ABT_ERR_INV_POOL;
  if (!size) return ABT_ERR_INV_ARG;
  *size = pool->pool->size();
  return ABT_SUCCESS;
}

int ABT_pool_get_total_size(ABT_pool pool, size_t* size) {
  // weft does not count the blocked units that will come back to a pool: queued units only.
  return ABT_pool_get_size(pool, size);
}

// The forms without a context pass ABT_POOL_CONTEXT_OP_POOL_OTHER to a user pool, as Argobots.
int ABT_pool_pop_thread(ABT_pool pool, ABT_thread* thread) {
  return pop_thread(pool, thread, ABT_POOL_CONTEXT_OP_POOL_OTHER, false, 0);
}

int ABT_pool_pop_thread_ex(ABT_pool pool, ABT_thread* thread, ABT_pool_context pool_ctx) {
  return pop_thread(pool, thread, pool_ctx, false, 0);
}

int ABT_pool_pop_threads(ABT_pool pool, ABT_thread* threads, size_t len, size_t* num) {
  return ABT_pool_pop_threads_ex(pool, threads, len, num, ABT_POOL_CONTEXT_OP_POOL_OTHER);
}

int ABT_pool_pop_threads_ex(ABT_pool pool, ABT_thread* threads, size_t len, size_t* num,
                            ABT_pool_context pool_ctx) {
  if (!pool) return ABT_ERR_INV_POOL;
  if ((!threads && len) || !num) return ABT_ERR_INV_ARG;
  if (pool->user_defined) {
    return guarded(ABT_ERR_POOL, [&] {
      *num = user_pool_pop_many(pool, threads, len, pool_ctx);
      return ABT_SUCCESS;
    });
  }
  size_t n = 0;
  while (n < len) {
    ABT_thread t = ABT_THREAD_NULL;
    if (int rc = pop_thread(pool, &t, pool_ctx, false, 0)) return rc;
    if (!t) break;
    threads[n++] = t;
  }
  *num = n;
  return ABT_SUCCESS;
}

int ABT_pool_push_thread(ABT_pool pool, ABT_thread thread) {
  return push_thread(pool, thread, ABT_POOL_CONTEXT_OP_POOL_OTHER);
}

int ABT_pool_push_thread_ex(ABT_pool pool, ABT_thread thread, ABT_pool_context pool_ctx) {
  return push_thread(pool, thread, pool_ctx);
}

int ABT_pool_push_threads(ABT_pool pool, const ABT_thread* threads, size_t num) {
  return ABT_pool_push_threads_ex(pool, threads, num, ABT_POOL_CONTEXT_OP_POOL_OTHER);
}

int ABT_pool_push_threads_ex(ABT_pool pool, const ABT_thread* threads, size_t num,
                             ABT_pool_context pool_ctx) {
  if (!pool) return ABT_ERR_INV_POOL;
  if (!threads && num) return ABT_ERR_INV_ARG;
  // Null handles are skipped, as Argobots skips them.
  if (pool->user_defined) {
    return guarded(ABT_ERR_POOL, [&] {
      std::vector<weft::work_unit*> units;
      units.reserve(num);
      for (size_t i = 0; i < num; ++i)
        if (weft::work_unit* u = unit_of(threads[i])) units.push_back(u);
      return user_pool_push_many(pool, units.data(), units.size(), pool_ctx);
    });
  }
  for (size_t i = 0; i < num; ++i)
    if (threads[i])
      if (int rc = push_thread(pool, threads[i], pool_ctx)) return rc;
  return ABT_SUCCESS;
}

int ABT_pool_pop_wait_thread(ABT_pool pool, ABT_thread* thread, double time_secs) {
  return pop_thread(pool, thread, ABT_POOL_CONTEXT_OP_POOL_OTHER, true, time_secs);
}

int ABT_pool_pop_wait_thread_ex(ABT_pool pool, ABT_thread* thread, double time_secs,
                                ABT_pool_context pool_ctx) {
  return pop_thread(pool, thread, pool_ctx, true, time_secs);
}

int ABT_pool_print_all_threads(ABT_pool pool, void* arg, void (*print_fn)(void*, ABT_thread)) {
  if (!pool) return ABT_ERR_INV_POOL;
  if (!print_fn) return ABT_ERR_INV_ARG;
  if (pool->user_defined)
    return user_pool_print_all(pool, arg, reinterpret_cast<void (*)(void*, void*)>(print_fn), true);
  return guarded(ABT_ERR_POOL, [&] {
    walk_pool(pool, [&](weft::work_unit* u) { print_fn(arg, handle_of(u)); });
    return ABT_SUCCESS;
  });
}

int ABT_pool_set_data(ABT_pool pool, void* data) {
  if (!pool) return ABT_ERR_INV_POOL;
  pool->data.store(data, std::memory_order_release);
  return ABT_SUCCESS;
}

int ABT_pool_get_data(ABT_pool pool, void** data) {
  if (!pool) return ABT_ERR_INV_POOL;
  if (!data) return ABT_ERR_INV_ARG;
  *data = pool->data.load(std::memory_order_acquire);
  return ABT_SUCCESS;
}

int ABT_pool_add_sched(ABT_pool pool, ABT_sched sched) {
  if (int rc = ensure_initialized()) return rc;
  if (!pool) return ABT_ERR_INV_POOL;
  if (!sched) return ABT_ERR_INV_SCHED;
  if (!sched->owned) return ABT_ERR_INV_SCHED;  // already a stream's or stacked
  return guarded(ABT_ERR_SCHED, [&] {
    // The stacking ULT owns the scheduler; when it ends (finished or stopped) the deleter tells
    // the handle, which an automatic scheduler does not outlive.
    std::shared_ptr<weft::scheduler> sp(sched->owned.release(), [sched](weft::scheduler* p) {
      delete p;
      stacked_scheduler_ended(sched);
    });
    sched->stacked = sp;
    sched->stacked_live.store(true, std::memory_order_release);
    try {
      weft::push_scheduler(*pool->pool, std::move(sp)).detach();
    } catch (...) {
      // push_scheduler checks before it shares: the deleter has run (sp was the only owner).
      throw;
    }
    return ABT_SUCCESS;
  });
}

int ABT_pool_get_id(ABT_pool pool, int* id) {
  if (!pool) return ABT_ERR_INV_POOL;
  if (!id) return ABT_ERR_INV_ARG;
  *id = pool->id;
  return ABT_SUCCESS;
}

int ABT_pool_pop(ABT_pool pool, ABT_unit* unit) {
  if (!pool) return ABT_ERR_INV_POOL;
  if (!unit) return ABT_ERR_INV_ARG;
  if (foreign_pop(pool)) {
    *unit = ABT_UNIT_NULL;
    return ABT_SUCCESS;
  }
  return guarded(ABT_ERR_POOL, [&] {
    *unit = pool->user_defined ? user_pool_pop_unit(pool, false, 0)
                               : reinterpret_cast<ABT_unit>(pool->pool->pop());
    return ABT_SUCCESS;
  });
}

int ABT_pool_pop_wait(ABT_pool pool, ABT_unit* unit, double time_secs) {
  if (!pool) return ABT_ERR_INV_POOL;
  if (!unit) return ABT_ERR_INV_ARG;
  if (foreign_pop(pool)) {  // nothing can arrive for this caller: no wait (it may be a ULT)
    *unit = ABT_UNIT_NULL;
    return ABT_SUCCESS;
  }
  return guarded(ABT_ERR_POOL, [&] {
    if (pool->user_defined) {
      *unit = user_pool_pop_unit(pool, true, time_secs);
    } else {
      *unit = reinterpret_cast<ABT_unit>(pool->pool->pop_wait(
          std::chrono::nanoseconds(static_cast<long long>(std::max(0.0, time_secs) * 1e9))));
    }
    return ABT_SUCCESS;
  });
}

int ABT_pool_pop_timedwait(ABT_pool pool, ABT_unit* unit, double abstime_secs) {
  return ABT_pool_pop_wait(pool, unit, abstime_secs - ABT_get_wtime());
}

int ABT_pool_remove(ABT_pool pool, ABT_unit unit) {
  if (!pool) return ABT_ERR_INV_POOL;
  if (!unit) return ABT_ERR_INV_UNIT;
  if (pool->user_defined) return user_pool_remove_unit(pool, unit);
  if (foreign_pop(pool)) return ABT_ERR_POOL;  // as for a unit that is not in the pool
  return pool->pool->remove(reinterpret_cast<weft::work_unit*>(unit)) ? ABT_SUCCESS : ABT_ERR_POOL;
}

int ABT_pool_push(ABT_pool pool, ABT_unit unit) {
  if (!pool) return ABT_ERR_INV_POOL;
  if (!unit) return ABT_ERR_INV_UNIT;
  if (pool->user_defined) return user_pool_push_unit(pool, unit);
  // A user pool's unit is converted back to its work unit (that pool frees the unit).
  return push_thread(pool, handle_of(unit_to_thread(unit, nullptr)),
                     ABT_POOL_CONTEXT_OP_POOL_OTHER);
}

int ABT_pool_print_all(ABT_pool pool, void* arg, void (*print_fn)(void*, ABT_unit)) {
  if (!pool) return ABT_ERR_INV_POOL;
  if (!print_fn) return ABT_ERR_INV_ARG;
  if (!pool->user_defined) {
    return guarded(ABT_ERR_POOL, [&] {
      walk_pool(pool, [&](weft::work_unit* u) { print_fn(arg, reinterpret_cast<ABT_unit>(u)); });
      return ABT_SUCCESS;
    });
  }
  return user_pool_print_all(pool, arg, reinterpret_cast<void (*)(void*, void*)>(print_fn), false);
}

int ABT_unit_get_thread(ABT_unit unit, ABT_thread* thread) {
  if (!unit) return ABT_ERR_INV_UNIT;
  if (!thread) return ABT_ERR_INV_ARG;
  weft::work_unit* u = user_unit_thread(unit, false);
  *thread = handle_of(u ? u : reinterpret_cast<weft::work_unit*>(unit));
  return ABT_SUCCESS;
}

int ABT_unit_set_associated_pool(ABT_unit unit, ABT_pool pool) {
  if (!unit) return ABT_ERR_INV_UNIT;
  if (!pool) return ABT_ERR_INV_POOL;
  weft::work_unit* u = user_unit_thread(unit, false);
  if (!u) u = reinterpret_cast<weft::work_unit*>(unit);
  weft::detail::set_home(u, *pool->pool);
  if (thread_ext* e = ext_of(u)) e->last_pool.store(pool, std::memory_order_relaxed);
  return ABT_SUCCESS;
}

}  // extern "C"
