// SPDX-License-Identifier: Apache-2.0
// ABT_info_*: configuration queries and human-readable dumps of the layer's objects.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "objects.hpp"
#include "units.hpp"
#include "weft/runtime.hpp"
#include "weft/unit_handle.hpp"

using namespace abt;

namespace {

const char* predef_name(ABT_sched s) {
  if (s->def.run) return "user-defined";
  switch (s->predef) {
    case ABT_SCHED_PRIO:
      return "PRIO";
    case ABT_SCHED_RANDWS:
      return "RANDWS";
    case ABT_SCHED_BASIC_WAIT:
      return "BASIC_WAIT";
    default:
      return "BASIC";
  }
}

const char* access_name(ABT_pool_access a) {
  switch (a) {
    case ABT_POOL_ACCESS_PRIV:
      return "PRIV";
    case ABT_POOL_ACCESS_SPSC:
      return "SPSC";
    case ABT_POOL_ACCESS_MPSC:
      return "MPSC";
    case ABT_POOL_ACCESS_SPMC:
      return "SPMC";
    default:
      return "MPMC";
  }
}

const char* state_name(ABT_thread_state s) {
  switch (s) {
    case ABT_THREAD_STATE_READY:
      return "READY";
    case ABT_THREAD_STATE_RUNNING:
      return "RUNNING";
    case ABT_THREAD_STATE_BLOCKED:
      return "BLOCKED";
    default:
      return "TERMINATED";
  }
}

void print_pool(FILE* fp, ABT_pool p) {
  std::fprintf(fp, "== pool %d (%p) ==\nkind    : %s\naccess  : %s\nsize    : %zu\n", p->id,
               static_cast<void*>(p), p->user_defined ? "user-defined" : "predefined",
               access_name(p->access), p->pool->size());
}

void print_sched(FILE* fp, ABT_sched s) {
  std::fprintf(fp, "== sched (%p) ==\ntype    : %s\nnum_pools: %zu\nin use  : %s\n",
               static_cast<void*>(s), predef_name(s), s->pools.size(),
               s->xstream        ? "main scheduler"
               : s->stacked_live ? "stacked"
                                 : "no");
  for (ABT_pool p : s->pools) print_pool(fp, p);
}

void print_xstream(FILE* fp, ABT_xstream x) {
  const char* st = x->stream->state() == weft::stream_state::terminated ? "TERMINATED" : "RUNNING";
  std::fprintf(fp, "== xstream %d (%p) ==\ntype    : %s\nstate   : %s\ncpus    :", x->rank,
               static_cast<void*>(x), x->primary ? "primary" : "secondary", st);
  for (int c : x->cpus) std::fprintf(fp, " %d", c);
  std::fprintf(fp, "\n");
  if (x->main_sched) print_sched(fp, x->main_sched);
}

/// One ABT_info_trigger_print_all_thread_stacks: as in Argobots, the dump waits until every
/// running stream has reached a scheduling point (a unit pinned to each stream has run there),
/// or until the timeout, then prints and calls back with whether it timed out.
struct stack_dump {
  FILE* fp;
  void (*cb)(ABT_bool, void*);
  void* arg;
  int expected = 0;
  std::atomic<int> arrived{0};
  std::atomic<bool> done{false};
  std::atomic<int> refs{0};  // responders and the timer that still hold it
};

void release_dump(stack_dump* d) noexcept {
  if (d->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete d;
}

void finish_dump(stack_dump* d, bool timed_out) {
  if (d->done.exchange(true, std::memory_order_acq_rel)) return;
  if (ensure_initialized() == ABT_SUCCESS) ABT_info_print_all_xstreams(d->fp);
  if (d->cb) d->cb(timed_out ? ABT_TRUE : ABT_FALSE, d->arg);
}

/// The body of the unit pinned to each stream.
void dump_responder(weft::work_unit* u) {
  auto* d = static_cast<stack_dump*>(callable_of(u).entry_arg);
  if (d->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == d->expected) finish_dump(d, false);
  release_dump(d);
}

void trigger_stack_dump(FILE* fp, double timeout, void (*cb)(ABT_bool, void*), void* arg) {
  std::vector<weft::execution_stream*> streams;
  {
    layer_state& st = state();
    std::lock_guard lock(st.mutex);
    for (ABT_xstream x : st.xstreams)
      if (x && x->stream && x->stream->state() == weft::stream_state::running)
        streams.push_back(x->stream);
  }
  auto* d = new stack_dump{fp, cb, arg};
  d->expected = static_cast<int>(streams.size());
  const bool timed = timeout >= 0;
  d->refs.store(d->expected + (timed ? 1 : 0) + 1, std::memory_order_relaxed);
  if (timed) {
    std::thread([d, timeout] {
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
      while (!d->done.load(std::memory_order_acquire) &&
             std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      finish_dump(d, true);  // a no-op when every stream answered in time
      release_dump(d);
    }).detach();
  }
  for (weft::execution_stream* s : streams) {
    // Pinned before it is queued, so that it runs on `s` and nowhere else.
    weft::work_unit* u = weft::detail::allocate_unit(weft::unit_kind::ult, 0);
    weft::detail::unit_callable& c = callable_of(u);
    c.invoke = &dump_responder;
    c.destroy = nullptr;
    c.entry_arg = d;
    weft::detail::pin_unit(u, *s);
    weft::detail::submit_unit(u, s->main_pool());
    weft::detail::detach_unit(u);
  }
  if (streams.empty()) finish_dump(d, false);
  release_dump(d);
}

}  // namespace

extern "C" {

int ABT_info_query_config(ABT_info_query_kind query_kind, void* val) {
  if (!val) return ABT_ERR_INV_ARG;
  auto* b = static_cast<ABT_bool*>(val);
  switch (query_kind) {
    case ABT_INFO_QUERY_KIND_ENABLED_DEBUG:
    case ABT_INFO_QUERY_KIND_ENABLED_PRINT_ERRNO:
    case ABT_INFO_QUERY_KIND_ENABLED_LOG:
    case ABT_INFO_QUERY_KIND_ENABLED_VALGRIND:
    case ABT_INFO_QUERY_KIND_ENABLED_PRESERVE_FPU:
    case ABT_INFO_QUERY_KIND_ENABLED_CHECK_POOL_PRODUCER:
    case ABT_INFO_QUERY_KIND_ENABLED_CHECK_POOL_CONSUMER:
    case ABT_INFO_QUERY_KIND_DYNAMIC_PROMOTION:
    case ABT_INFO_QUERY_KIND_ENABLED_STACK_UNWIND:
      *b = ABT_FALSE;
      return ABT_SUCCESS;
    case ABT_INFO_QUERY_KIND_ENABLED_CHECK_ERROR:
    case ABT_INFO_QUERY_KIND_ENABLED_THREAD_CANCEL:
    case ABT_INFO_QUERY_KIND_ENABLED_TASK_CANCEL:
    case ABT_INFO_QUERY_KIND_ENABLED_MIGRATION:
    case ABT_INFO_QUERY_KIND_ENABLED_STACKABLE_SCHED:
    case ABT_INFO_QUERY_KIND_ENABLED_EXTERNAL_THREAD:
    case ABT_INFO_QUERY_KIND_ENABLED_SCHED_SLEEP:
    case ABT_INFO_QUERY_KIND_ENABLED_AFFINITY:
    case ABT_INFO_QUERY_KIND_ENABLED_TOOL:
    case ABT_INFO_QUERY_KIND_FCONTEXT:                  // Boost.Context's fcontext
    case ABT_INFO_QUERY_KIND_ENABLED_LAZY_STACK_ALLOC:  // stacks are taken at first run
      *b = ABT_TRUE;
      return ABT_SUCCESS;
    case ABT_INFO_QUERY_KIND_ENABLED_PRINT_CONFIG:
      *b = weft::initialized() && weft::current_config().print ? ABT_TRUE : ABT_FALSE;
      return ABT_SUCCESS;
    case ABT_INFO_QUERY_KIND_MAX_NUM_XSTREAMS:
      *static_cast<int*>(val) = state().max_xstreams > 0 ? state().max_xstreams : 1 << 20;
      return ABT_SUCCESS;
    case ABT_INFO_QUERY_KIND_DEFAULT_THREAD_STACKSIZE:
    case ABT_INFO_QUERY_KIND_DEFAULT_SCHED_STACKSIZE:
      if (int rc = ensure_initialized()) return rc;
      *static_cast<size_t*>(val) = state().default_stack_size;
      return ABT_SUCCESS;
    case ABT_INFO_QUERY_KIND_DEFAULT_SCHED_EVENT_FREQ:
      if (int rc = ensure_initialized()) return rc;
      *static_cast<uint64_t*>(val) = state().event_freq;
      return ABT_SUCCESS;
    case ABT_INFO_QUERY_KIND_DEFAULT_SCHED_SLEEP_NSEC:
      *static_cast<uint64_t*>(val) = 100000000;  // a parked stream's safety-net wake-up
      return ABT_SUCCESS;
    case ABT_INFO_QUERY_KIND_ENABLED_STACK_OVERFLOW_CHECK:
      *static_cast<int*>(val) = 3;  // guard pages, reported by a signal handler
      return ABT_SUCCESS;
    case ABT_INFO_QUERY_KIND_WAIT_POLICY:
      *static_cast<int*>(val) = 1;  // the default scheduler polls (BASIC_WAIT parks)
      return ABT_SUCCESS;
  }
  return ABT_ERR_INV_QUERY_KIND;
}

int ABT_info_print_config(FILE* fp) {
  if (int rc = ensure_initialized()) return rc;
  if (!fp) return ABT_ERR_INV_ARG;
  return guarded(ABT_ERR_OTHER, [&] {
    std::fprintf(fp, "weft-abt (Argobots %s API)\n%s", ABT_VERSION,
                 weft::current_config().describe().c_str());
    return ABT_SUCCESS;
  });
}

int ABT_info_print_all_xstreams(FILE* fp) {
  if (int rc = ensure_initialized()) return rc;
  if (!fp) return ABT_ERR_INV_ARG;
  layer_state& st = state();
  std::lock_guard lock(st.mutex);
  int n = 0;
  for (ABT_xstream x : st.xstreams) n += x != nullptr;
  std::fprintf(fp, "# of created ESs: %d\n", n);
  for (ABT_xstream x : st.xstreams)
    if (x && x->stream) print_xstream(fp, x);
  return ABT_SUCCESS;
}

int ABT_info_print_xstream(FILE* fp, ABT_xstream xstream) {
  if (!fp) return ABT_ERR_INV_ARG;
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  print_xstream(fp, xstream);
  return ABT_SUCCESS;
}

int ABT_info_print_sched(FILE* fp, ABT_sched sched) {
  if (!fp) return ABT_ERR_INV_ARG;
  if (!sched) return ABT_ERR_INV_SCHED;
  print_sched(fp, sched);
  return ABT_SUCCESS;
}

int ABT_info_print_pool(FILE* fp, ABT_pool pool) {
  if (!fp) return ABT_ERR_INV_ARG;
  if (!pool) return ABT_ERR_INV_POOL;
  print_pool(fp, pool);
  return ABT_SUCCESS;
}

int ABT_info_print_thread(FILE* fp, ABT_thread thread) {
  if (!fp) return ABT_ERR_INV_ARG;
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  weft::execution_stream* s = unit_view::last_stream(u);
  std::fprintf(fp,
               "== %s (%p) ==\nid      : %llu\nstate   : %s\nlast ES : %d\nprimary : %s\n"
               "stack   : %zu bytes\n",
               unit_view::kind(u) == weft::unit_kind::ult ? "ULT" : "tasklet",
               static_cast<void*>(u), static_cast<unsigned long long>(unit_view::id(u)),
               state_name(state_of(u)), s ? s->rank() : -1, u == primary_unit() ? "yes" : "no",
               stack_size_of(u));
  return ABT_SUCCESS;
}

int ABT_info_print_thread_attr(FILE* fp, ABT_thread_attr attr) {
  if (!fp) return ABT_ERR_INV_ARG;
  if (!attr) return ABT_ERR_INV_THREAD_ATTR;
  std::fprintf(fp, "== ULT attr (%p) ==\nstacksize : %zu\nmigratable: %s\n",
               static_cast<void*>(attr), attr_stack_size(attr), attr->migratable ? "yes" : "no");
  return ABT_SUCCESS;
}

int ABT_info_print_task(FILE* fp, ABT_task task) {
  return ABT_info_print_thread(fp, task);
}

int ABT_info_print_thread_stack(FILE* fp, ABT_thread thread) {
  if (!fp) return ABT_ERR_INV_ARG;
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  // weft has no stack unwinder: the stack's bounds are what it can show.
  const weft::detail::stack_region st = unit_view::stack(u);
  if (unit_view::kind(u) != weft::unit_kind::ult || !st.lo) {
    std::fprintf(fp, "unit %llu: no stack (not started, finished, or a tasklet)\n",
                 static_cast<unsigned long long>(unit_view::id(u)));
  } else {
    std::fprintf(fp, "unit %llu: stack [%p, %p), %zu bytes\n",
                 static_cast<unsigned long long>(unit_view::id(u)), st.lo,
                 static_cast<void*>(static_cast<char*>(st.lo) + st.size),
                 static_cast<std::size_t>(st.size));
  }
  return ABT_SUCCESS;
}

int ABT_info_print_thread_stacks_in_pool(FILE* fp, ABT_pool pool) {
  if (!fp) return ABT_ERR_INV_ARG;
  if (!pool) return ABT_ERR_INV_POOL;
  struct ctx {
    FILE* fp;
  } c{fp};
  return ABT_pool_print_all_threads(pool, &c, [](void* a, ABT_thread t) {
    ABT_info_print_thread_stack(static_cast<ctx*>(a)->fp, t);
  });
}

int ABT_info_trigger_print_all_thread_stacks(FILE* fp, double timeout,
                                             void (*cb_func)(ABT_bool, void*), void* arg) {
  if (int rc = ensure_initialized()) return rc;
  if (!fp) return ABT_ERR_INV_ARG;
  return guarded(ABT_ERR_MEM, [&] {
    trigger_stack_dump(fp, timeout, cb_func, arg);
    return ABT_SUCCESS;
  });
}

}  // extern "C"
