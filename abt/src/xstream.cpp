// SPDX-License-Identifier: Apache-2.0
// ABT_xstream_*: execution streams, the registry of their handles, and the layer's teardown.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <new>

#include "objects.hpp"
#include "units.hpp"
#include "weft/error.hpp"
#include "weft/runtime.hpp"
#include "weft/this_unit.hpp"
#include "weft/ult.hpp"

namespace abt {

namespace {

// xstream_handle() runs at every tool event and ABT_xstream_self(), almost always for the
// calling thread's own stream: each thread keeps its last answer, valid while the registry's
// generation is unchanged. Every change of the registry (a handle registered or dropped, the
// layer released) bumps the generation under st.mutex, so a kept answer never outlives the
// registration it came from: a handle is deleted only after the change that drops it.
std::atomic<std::uint64_t> registry_generation{1};

struct kept_handle {
  const weft::execution_stream* stream = nullptr;
  ABT_xstream handle = nullptr;
  std::uint64_t generation = 0;
};
[[gnu::tls_model("initial-exec")]] constinit thread_local kept_handle tl_kept_handle;

/// Marks the registry changed; the caller holds st.mutex.
void registry_changed() noexcept {
  registry_generation.fetch_add(1, std::memory_order_release);
}

/// Registers `h` under its rank.
void put_xstream(ABT_xstream h) {
  layer_state& st = state();
  std::lock_guard lock(st.mutex);
  if (static_cast<std::size_t>(h->rank) >= st.xstreams.size())
    st.xstreams.resize(static_cast<std::size_t>(h->rank) + 1, nullptr);
  st.xstreams[static_cast<std::size_t>(h->rank)] = h;
  registry_changed();
}

/// Unregisters `h`, whose stream has ended, and detaches it from that stream (under the
/// registry's lock: xstream_handle() reads a registered handle's stream under it).
void drop_xstream(ABT_xstream h) {
  layer_state& st = state();
  std::lock_guard lock(st.mutex);
  h->stream = nullptr;
  auto& v = st.xstreams;
  if (static_cast<std::size_t>(h->rank) < v.size() && v[static_cast<std::size_t>(h->rank)] == h)
    v[static_cast<std::size_t>(h->rank)] = nullptr;
  registry_changed();
}

ABT_xstream new_xstream(weft::execution_stream& s, ABT_sched sched) {
  auto h = std::make_unique<ABT_xstream_opaque>();  // owned here until registered
  h->stream = &s;
  h->rank = s.rank();
  h->primary = s.is_primary();
  h->main_sched = sched;
  h->cpus = s.cpus();
  put_xstream(h.get());  // may run out of memory: nothing registered then
  if (sched) sched->xstream = h.get();
  return h.release();
}

/// The CPUs of `set`, in ascending order.
std::vector<int> cpus_of(const cpu_set_t& set) {
  std::vector<int> v;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) v.push_back(c);
  return v;
}

/// Binds the calling kernel thread to `cpus` as Argobots does: the whole list goes to
/// pthread_setaffinity_np, which keeps the CPUs that exist and fails only when none does. On
/// success `effective` receives the mask the thread then has. Returns 0 or the error number.
int bind_calling_thread(const std::vector<int>& cpus, std::vector<int>& effective) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  if (int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set)) return rc;
  if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0) effective = cpus_of(set);
  return 0;
}

/// Binds the kernel thread of `h` to `cpus` (directly when the caller runs on it, otherwise
/// through a ULT pinned to that stream) and records the CPUs it ends up on. A stream that does
/// not run records the CPUs it will get when revived. Returns 0 or the error number.
int apply_affinity(ABT_xstream h, const std::vector<int>& cpus) {
  std::vector<int> effective;
  int rc = 0;
  if (weft::this_unit::stream() == h->stream) {
    rc = bind_calling_thread(cpus, effective);
  } else if (h->stream->state() != weft::stream_state::running) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return errno;
    for (int c : cpus)
      if (c >= 0 && c < CPU_SETSIZE && CPU_ISSET(c, &allowed)) effective.push_back(c);
    std::sort(effective.begin(), effective.end());
    effective.erase(std::unique(effective.begin(), effective.end()), effective.end());
    if (effective.empty()) return EINVAL;  // as pthread_setaffinity_np would say at revive
  } else {
    weft::ult u = weft::ult::create(h->stream->main_pool(), [&] {
      // Another stream may take the ULT from the pool before the pin below lands.
      while (weft::this_unit::stream() != h->stream) weft::this_unit::migrate_to(*h->stream);
      rc = bind_calling_thread(cpus, effective);
    });
    try {
      u.pin_to(h->stream);  // spares the ULT a detour through another stream
    } catch (const weft::error& e) {
      if (e.condition() != weft::errc::invalid_state) throw;  // else it already ran, on h->stream
    }
    u.join();
  }
  if (rc == 0) h->cpus = std::move(effective);
  return rc;
}

/// Gives up a scheduler a stream no longer runs: deletes an automatic handle, or leaves the
/// user a handle it may free.
void release_main_sched(ABT_sched s) {
  if (!s) return;
  s->xstream = nullptr;
  if (!s->def.run) s->sched = nullptr;  // predefined: weft owns (and drops) the object
  if (s->automatic && !s->sched) delete_sched_handle(s);
}

}  // namespace

namespace {

/// xstream_handle() when the thread's kept answer does not serve: the registry's look-up.
[[gnu::noinline]] ABT_xstream look_up_xstream(const weft::execution_stream* s) noexcept {
  layer_state& st = state();
  std::lock_guard lock(st.mutex);
  const auto rank = static_cast<std::size_t>(s->rank());
  ABT_xstream h = nullptr;
  if (rank < st.xstreams.size() && st.xstreams[rank] && st.xstreams[rank]->stream == s)
    h = st.xstreams[rank];
  tl_kept_handle = {s, h, registry_generation.load(std::memory_order_relaxed)};
  return h;
}

}  // namespace

ABT_xstream xstream_handle(const weft::execution_stream* s) noexcept {
  if (!s) return nullptr;
  const kept_handle& kept = tl_kept_handle;
  if (kept.stream == s && kept.generation == registry_generation.load(std::memory_order_acquire))
      [[likely]]
    return kept.handle;
  return look_up_xstream(s);
}

void register_existing_streams() {
  for (int rank = 0, seen = 0, total = weft::execution_stream::count(); seen < total; ++rank) {
    weft::execution_stream* s = weft::execution_stream::by_rank(rank);
    if (!s) continue;
    ++seen;
    new_xstream(*s, wrap_native_sched(s->main_scheduler()));
  }
}

void release_all_objects(bool finalize_runtime) {
  layer_state& st = state();
  std::vector<ABT_sched> scheds;
  {
    std::lock_guard lock(st.mutex);
    scheds = st.scheds;
  }
  // Stacked schedulers end when their stream drains at finalize; their handles must not join.
  for (ABT_sched s : scheds) {
    if (auto sp = s->stacked.lock()) sp->finish();
  }
  if (finalize_runtime) weft::finalize();
  // Every stream has ended: the entry points refuse from here on, before any handle goes.
  close_layer();
  // From here on nothing allocates (the lists are swapped out, not copied), so that the
  // layer is either left as it was (the copy above failed) or released entirely.
  std::vector<ABT_xstream> xs;
  {
    std::lock_guard lock(st.mutex);
    xs.swap(st.xstreams);
    registry_changed();
    scheds.clear();
    scheds.swap(st.scheds);
  }
  for (ABT_xstream h : xs) delete h;
  for (ABT_sched s : scheds) {
    s->xstream = nullptr;
    delete_sched_handle(s);  // installed ones went with their streams; owned ones go here
  }
  std::vector<ABT_pool> pools;
  {
    std::lock_guard lock(st.mutex);
    pools.swap(st.pools);
  }
  for (ABT_pool p : pools) delete_pool_handle(p);
}

}  // namespace abt

using namespace abt;

namespace {

int create_xstream(ABT_sched sched, int rank, ABT_xstream* newxstream) {
  if (newxstream) *newxstream = ABT_XSTREAM_NULL;  // Argobots 1.x: set on error too
  if (int rc = ensure_initialized()) return rc;
  if (!newxstream) return ABT_ERR_INV_ARG;
  // ABT_MAX_NUM_XSTREAMS is a sizing hint in Argobots 1.2, whose tables grow past it: no cap.
  if (rank >= 0 && weft::execution_stream::by_rank(rank)) return ABT_ERR_INV_XSTREAM_RANK;
  if (sched && !sched->owned) return ABT_ERR_INV_SCHED;  // in use elsewhere
  return guarded(ABT_ERR_XSTREAM, [&] {
    bool made_here = false;
    if (!sched) {
      if (int rc = create_predef_sched(ABT_SCHED_BASIC, 0, nullptr, nullptr, true, &sched))
        return rc;
      made_here = true;
    }
    // Named before the stream starts: its scheduler loop reads sched->sched (check_events).
    sched->sched = sched->owned.get();
    weft::execution_stream* s = nullptr;
    // The stream starts inside create(); its user scheduler waits for the handle (see sched.cpp).
    layer_state& st = state();
    st.creating_xstreams.fetch_add(1, std::memory_order_acq_rel);
    try {
      s = &weft::execution_stream::create(std::move(sched->owned), rank);
    } catch (...) {
      st.creating_xstreams.fetch_sub(1, std::memory_order_acq_rel);
      // create() consumed the scheduler: the handle cannot be used again.
      sched->sched = nullptr;
      if (made_here) delete_sched_handle(sched);
      throw;
    }
    *newxstream = new_xstream(*s, sched);
    st.creating_xstreams.fetch_sub(1, std::memory_order_acq_rel);
    return ABT_SUCCESS;
  });
}

/// The stream of the caller and its handle; nullptr when the caller is not on a stream.
ABT_xstream self_xstream() {
  return xstream_handle(weft::this_unit::stream());
}

}  // namespace

extern "C" {

int ABT_xstream_create(ABT_sched sched, ABT_xstream* newxstream) {
  return create_xstream(sched, -1, newxstream);
}

int ABT_xstream_create_basic(ABT_sched_predef predef, int num_pools, ABT_pool* pools,
                             ABT_sched_config config, ABT_xstream* newxstream) {
  if (newxstream) *newxstream = ABT_XSTREAM_NULL;
  if (int rc = ensure_initialized()) return rc;
  if (!newxstream) return ABT_ERR_INV_ARG;
  ABT_sched sched = nullptr;
  int rc = guarded(ABT_ERR_MEM, [&] {
    return create_predef_sched(enum_value(predef), num_pools, pools, config, true, &sched);
  });
  if (rc) return rc;
  rc = create_xstream(sched, -1, newxstream);
  if (rc && sched->owned) delete_sched_handle(sched);
  return rc;
}

int ABT_xstream_create_with_rank(ABT_sched sched, int rank, ABT_xstream* newxstream) {
  if (rank < 0) return ABT_ERR_INV_XSTREAM_RANK;
  return create_xstream(sched, rank, newxstream);
}

int ABT_xstream_free(ABT_xstream* xstream) {
  if (int rc = ensure_initialized()) return rc;
  if (!xstream) return ABT_ERR_INV_ARG;
  if (!*xstream) return ABT_SUCCESS;  // Argobots 1.x: freeing a null handle does nothing
  ABT_xstream h = *xstream;
  if (h->primary || !h->stream) return ABT_ERR_INV_XSTREAM;
  if (weft::this_unit::stream() == h->stream) return ABT_ERR_INV_XSTREAM;
  const context c = calling_context();
  if (c == context::tasklet) return ABT_ERR_INV_THREAD;  // it would have to wait
  int rc = guarded(ABT_ERR_XSTREAM, [&] {
    h->stream->free();
    return ABT_SUCCESS;
  });
  if (rc) return rc;
  drop_xstream(h);
  release_main_sched(h->main_sched);
  delete h;
  *xstream = ABT_XSTREAM_NULL;
  return ABT_SUCCESS;
}

int ABT_xstream_join(ABT_xstream xstream) {
  if (int rc = ensure_initialized()) return rc;
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  if (xstream->primary) return ABT_ERR_INV_XSTREAM;
  if (weft::this_unit::stream() == xstream->stream) return ABT_ERR_INV_XSTREAM;
  if (calling_context() == context::tasklet) return ABT_ERR_INV_THREAD;
  return guarded(ABT_ERR_XSTREAM, [&] {
    xstream->stream->join();
    return ABT_SUCCESS;
  });
}

int ABT_xstream_revive(ABT_xstream xstream) {
  if (int rc = ensure_initialized()) return rc;
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  if (xstream->primary) return ABT_ERR_INV_XSTREAM;
  if (xstream->stream->state() != weft::stream_state::terminated) return ABT_ERR_XSTREAM_STATE;
  return guarded(ABT_ERR_XSTREAM_STATE, [&] {
    xstream->stream->revive();
    if (xstream->cpus != xstream->stream->cpus()) apply_affinity(xstream, xstream->cpus);
    return ABT_SUCCESS;
  });
}

int ABT_xstream_exit(void) {
  if (int rc = ensure_initialized()) return rc;
  const context c = calling_context();
  if (c == context::external || c == context::scheduler) return ABT_ERR_INV_XSTREAM;
  if (c == context::tasklet) return ABT_ERR_INV_THREAD;
  if (c == context::primary_ult) return ABT_ERR_INV_XSTREAM;
  weft::execution_stream* s = weft::this_unit::stream();
  if (s->is_primary()) return ABT_ERR_INV_XSTREAM;
  int rc = guarded(ABT_ERR_XSTREAM, [&] {
    s->request_exit();
    return ABT_SUCCESS;
  });
  if (rc) return rc;
  weft::this_unit::exit();  // the calling ULT ends with its stream, as in Argobots
}

int ABT_xstream_cancel(ABT_xstream xstream) {
  if (int rc = ensure_initialized()) return rc;
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  if (xstream->primary) return ABT_ERR_INV_XSTREAM;
  return guarded(ABT_ERR_XSTREAM, [&] {
    xstream->stream->request_exit();
    return ABT_SUCCESS;
  });
}

int ABT_xstream_self(ABT_xstream* xstream) {
  if (!xstream) return ABT_ERR_INV_ARG;
  *xstream = ABT_XSTREAM_NULL;  // Argobots 1.x: also on error
  if (int rc = ensure_initialized()) return rc;
  ABT_xstream h = self_xstream();
  if (!h) return ABT_ERR_INV_XSTREAM;  // an external thread
  *xstream = h;
  return ABT_SUCCESS;
}

int ABT_xstream_self_rank(int* rank) {
  if (int rc = ensure_initialized()) return rc;
  if (!rank) return ABT_ERR_INV_ARG;
  weft::execution_stream* s = weft::this_unit::stream();
  if (!s) return ABT_ERR_INV_XSTREAM;
  *rank = s->rank();
  return ABT_SUCCESS;
}

int ABT_xstream_set_rank(ABT_xstream xstream, int rank) {
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  if (rank < 0) return ABT_ERR_INV_XSTREAM_RANK;
  if (rank == xstream->rank) return ABT_SUCCESS;
  // weft fixes a stream's rank (its place and NUMA node follow from it) at creation.
  return ABT_ERR_FEATURE_NA;
}

int ABT_xstream_get_rank(ABT_xstream xstream, int* rank) {
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  if (!rank) return ABT_ERR_INV_ARG;
  *rank = xstream->rank;
  return ABT_SUCCESS;
}

int ABT_xstream_set_main_sched(ABT_xstream xstream, ABT_sched sched) {
  if (int rc = ensure_initialized()) return rc;
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  if (!sched || !sched->owned) return ABT_ERR_INV_SCHED;
  const context c = calling_context();
  if (c == context::tasklet) return ABT_ERR_INV_THREAD;
  return guarded(ABT_ERR_XSTREAM, [&] {
    weft::scheduler* raw = sched->owned.get();
    // As in Argobots, a ULT that replaces its own stream's scheduler continues in the new
    // scheduler's first pool, which a user scheduler that reads its pool list once still serves
    // (the primary ULT stays pinned to the primary stream).
    weft::work_unit* self = weft::this_unit::current();
    const bool own_stream = (c == context::ult || c == context::primary_ult) &&
                            weft::this_unit::stream() == xstream->stream && !sched->pools.empty();
    xstream->stream->set_main_scheduler(std::move(sched->owned));
    sched->sched = raw;
    ABT_sched old = xstream->main_sched;
    xstream->main_sched = sched;
    sched->xstream = xstream;
    release_main_sched(old);
    if (own_stream) {
      ABT_pool first = sched->pools.front();
      weft::detail::set_home(self, *first->pool);
      if (thread_ext* e = ext_of(self)) e->last_pool.store(first, std::memory_order_relaxed);
      // Back once the new scheduler runs it, maybe on another stream that shares the pool: a
      // tool sees the yield and the run there, as for any ABT yield.
      if (tool_active()) tool_event(self, ABT_TOOL_EVENT_THREAD_YIELD, ABT_SYNC_EVENT_TYPE_USER);
      weft::this_unit::yield();
      tool_running_again();
    }
    return ABT_SUCCESS;
  });
}

int ABT_xstream_set_main_sched_basic(ABT_xstream xstream, ABT_sched_predef predef, int num_pools,
                                     ABT_pool* pools) {
  if (int rc = ensure_initialized()) return rc;
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  ABT_sched sched = nullptr;
  int rc = guarded(ABT_ERR_MEM, [&] {
    return create_predef_sched(enum_value(predef), num_pools, pools, nullptr, true, &sched);
  });
  if (rc) return rc;
  rc = ABT_xstream_set_main_sched(xstream, sched);
  if (rc && sched->owned) delete_sched_handle(sched);
  return rc;
}

int ABT_xstream_get_main_sched(ABT_xstream xstream, ABT_sched* sched) {
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  if (!sched) return ABT_ERR_INV_ARG;
  *sched = xstream->main_sched;
  return ABT_SUCCESS;
}

int ABT_xstream_get_main_pools(ABT_xstream xstream, int max_pools, ABT_pool* pools) {
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  if (max_pools < 0 || (max_pools > 0 && !pools)) return ABT_ERR_INV_ARG;
  const auto& list = xstream->main_sched->pools;
  const int n = std::min(max_pools, static_cast<int>(list.size()));
  for (int i = 0; i < n; ++i) pools[i] = list[static_cast<std::size_t>(i)];
  return ABT_SUCCESS;
}

int ABT_xstream_get_state(ABT_xstream xstream, ABT_xstream_state* state) {
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  if (!state) return ABT_ERR_INV_ARG;
  *state = xstream->stream->state() == weft::stream_state::terminated ? ABT_XSTREAM_STATE_TERMINATED
                                                                      : ABT_XSTREAM_STATE_RUNNING;
  return ABT_SUCCESS;
}

int ABT_xstream_equal(ABT_xstream xstream1, ABT_xstream xstream2, ABT_bool* result) {
  if (!result) return ABT_ERR_INV_ARG;
  *result = xstream1 == xstream2 ? ABT_TRUE : ABT_FALSE;
  return ABT_SUCCESS;
}

int ABT_xstream_get_num(int* num_xstreams) {
  if (int rc = ensure_initialized()) return rc;
  if (!num_xstreams) return ABT_ERR_INV_ARG;
  *num_xstreams = weft::execution_stream::count();
  return ABT_SUCCESS;
}

int ABT_xstream_is_primary(ABT_xstream xstream, ABT_bool* is_primary) {
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  if (!is_primary) return ABT_ERR_INV_ARG;
  *is_primary = xstream->primary ? ABT_TRUE : ABT_FALSE;
  return ABT_SUCCESS;
}

int ABT_xstream_set_cpubind(ABT_xstream xstream, int cpuid) {
  return ABT_xstream_set_affinity(xstream, 1, &cpuid);
}

int ABT_xstream_get_cpubind(ABT_xstream xstream, int* cpuid) {
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  if (!cpuid) return ABT_ERR_INV_ARG;
  if (xstream->cpus.empty()) return ABT_ERR_CPUID;  // not bound
  *cpuid = xstream->cpus.front();
  return ABT_SUCCESS;
}

int ABT_xstream_set_affinity(ABT_xstream xstream, int num_cpuids, int* cpuids) {
  if (int rc = ensure_initialized()) return rc;
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  if (num_cpuids < 0 || (num_cpuids > 0 && !cpuids)) return ABT_ERR_INV_ARG;
  if (calling_context() == context::tasklet && weft::this_unit::stream() != xstream->stream)
    return ABT_ERR_INV_THREAD;  // would have to wait for the other stream
  return guarded(ABT_ERR_SYS, [&] {
    std::vector<int> cpus(cpuids, cpuids + num_cpuids);
    if (num_cpuids == 0) {
      // No CPUs: the process's whole mask, i.e. unbound.
      cpu_set_t set;
      if (sched_getaffinity(0, sizeof set, &set) != 0) return ABT_ERR_SYS;
      cpus = cpus_of(set);
    }
    // Argobots hands the list to pthread_setaffinity_np: CPUs the process does not have are
    // dropped, and only a list with none it has fails (ABT_ERR_SYS).
    return apply_affinity(xstream, cpus) == 0 ? ABT_SUCCESS : ABT_ERR_SYS;
  });
}

int ABT_xstream_get_affinity(ABT_xstream xstream, int max_cpuids, int* cpuids, int* num_cpuids) {
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  if (max_cpuids < 0 || (max_cpuids > 0 && !cpuids)) return ABT_ERR_INV_ARG;
  const int n = static_cast<int>(xstream->cpus.size());
  for (int i = 0; i < std::min(n, max_cpuids); ++i)
    cpuids[i] = xstream->cpus[static_cast<std::size_t>(i)];
  if (num_cpuids) *num_cpuids = n;
  return ABT_SUCCESS;
}

}  // extern "C"
