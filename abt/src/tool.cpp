// SPDX-License-Identifier: Apache-2.0
// ABT_tool_*: one registered callback for work-unit events, and the queries it may make.
#include <atomic>

#include "units.hpp"
#include "weft/internal/layer_support.hpp"
#include "weft/wait_queue.hpp"

namespace abt {

std::atomic<std::uint64_t> g_tool_mask{0};

namespace {

struct tool_registration {
  std::atomic<ABT_tool_thread_callback_fn> cb{nullptr};
  std::atomic<std::uint64_t>& mask = g_tool_mask;
  std::atomic<void*> arg{nullptr};
};
tool_registration g_tool;

}  // namespace

}  // namespace abt

/// What a callback's context stands for: the event being reported.
struct ABT_tool_context_opaque {
  weft::work_unit* unit;
  std::uint64_t event;
  weft::work_unit* caller;  // the unit that caused it, nullptr for an external thread
  ABT_sync_event_type sync_type;
  void* sync_object;
};

namespace abt {

namespace {

/// Calls the registered callback for `u`.
void emit(weft::work_unit* u, std::uint64_t event, ABT_sync_event_type sync_type, void* sync_object,
          weft::work_unit* caller = weft::this_unit::current()) noexcept {
  if (!(g_tool.mask.load(std::memory_order_acquire) & event)) return;
  ABT_tool_thread_callback_fn cb = g_tool.cb.load(std::memory_order_acquire);
  if (!cb || !u) return;
  ABT_tool_context_opaque ctx{u, event, caller, sync_type, sync_object};
  cb(handle_of(u), xstream_handle(weft::this_unit::stream()), event, &ctx,
     g_tool.arg.load(std::memory_order_acquire));
}

/// True for the units whose events this layer reports from its own calls: those created through
/// ABT_ calls, and the primary ULT. The runtime reports every other unit's (C++ units).
bool reported_by_layer(weft::work_unit* u) noexcept {
  return ext_of(u) || u == primary_unit();
}

/// The sync event type of what the blocking C++ unit `u` waits for (its recorded wait_kind).
ABT_sync_event_type sync_type_of_wait(const weft::work_unit* u) noexcept {
  switch (static_cast<weft::wait_kind>(weft::detail::wait_kind_of(u))) {
    case weft::wait_kind::mutex:
      return ABT_SYNC_EVENT_TYPE_MUTEX;
    case weft::wait_kind::condition_variable:
      return ABT_SYNC_EVENT_TYPE_COND;
    case weft::wait_kind::rwlock:
      return ABT_SYNC_EVENT_TYPE_RWLOCK;
    case weft::wait_kind::barrier:
      return ABT_SYNC_EVENT_TYPE_BARRIER;
    case weft::wait_kind::eventual:
      return ABT_SYNC_EVENT_TYPE_EVENTUAL;
    case weft::wait_kind::future:
      return ABT_SYNC_EVENT_TYPE_FUTURE;
    case weft::wait_kind::stream_join:
      return ABT_SYNC_EVENT_TYPE_XSTREAM_JOIN;
    case weft::wait_kind::other:
    case weft::wait_kind::semaphore:
    case weft::wait_kind::channel:
    case weft::wait_kind::sleep:
    case weft::wait_kind::resize:
    case weft::wait_kind::client:
      return ABT_SYNC_EVENT_TYPE_OTHER;
  }
  // The other kinds client_wait_kind() hands out; 0 is no record: a join or this_unit::suspend().
  if (weft::detail::wait_kind_of(u) > static_cast<std::uint8_t>(weft::wait_kind::client))
    return ABT_SYNC_EVENT_TYPE_OTHER;
  return ABT_SYNC_EVENT_TYPE_UNKNOWN;  // no record: a join or this_unit::suspend()
}

/// The runtime's observation points, for units created through weft's C++ API: the same events
/// in the same order as for ULTs and tasklets created through ABT_ calls.
void runtime_event(weft::work_unit* u, weft::detail::unit_event e) noexcept {
  if (!u || reported_by_layer(u)) return;
  using weft::detail::unit_event;
  switch (e) {
    case unit_event::create:
      return emit(u, ABT_TOOL_EVENT_THREAD_CREATE, ABT_SYNC_EVENT_TYPE_UNKNOWN, nullptr);
    case unit_event::run:
      return emit(u, ABT_TOOL_EVENT_THREAD_RUN, ABT_SYNC_EVENT_TYPE_UNKNOWN, nullptr);
    case unit_event::yield:
      return emit(u, ABT_TOOL_EVENT_THREAD_YIELD, ABT_SYNC_EVENT_TYPE_USER, nullptr);
    case unit_event::suspend:
      return emit(u, ABT_TOOL_EVENT_THREAD_SUSPEND, sync_type_of_wait(u), nullptr);
    case unit_event::resume:
      return emit(u, ABT_TOOL_EVENT_THREAD_RESUME, ABT_SYNC_EVENT_TYPE_UNKNOWN, nullptr);
    case unit_event::finish:
      return emit(u, ABT_TOOL_EVENT_THREAD_FINISH, ABT_SYNC_EVENT_TYPE_UNKNOWN, nullptr);
    case unit_event::join:
      return emit(u, ABT_TOOL_EVENT_THREAD_JOIN, ABT_SYNC_EVENT_TYPE_UNKNOWN, nullptr);
    case unit_event::free:
      return emit(u, ABT_TOOL_EVENT_THREAD_FREE, ABT_SYNC_EVENT_TYPE_UNKNOWN, nullptr);
  }
}

}  // namespace

void tool_event(weft::work_unit* u, std::uint64_t event, ABT_sync_event_type sync_type,
                void* sync_object) noexcept {
  // A C++ unit that calls into this layer (ABT_thread_yield, an ABT_mutex) has its events
  // reported by the runtime's observation points already.
  if (!u || !reported_by_layer(u)) return;
  emit(u, event, sync_type, sync_object);
}

void scheduler_tool_event(weft::work_unit* s, std::uint64_t event,
                          ABT_sync_event_type sync_type) noexcept {
  // The stand-in never runs as a weft unit: nothing else reports it. Its caller is itself, as
  // for any ULT's own yield.
  emit(s, event, sync_type, nullptr, s);
}

}  // namespace abt

using namespace abt;

extern "C" {

int ABT_tool_register_thread_callback(ABT_tool_thread_callback_fn cb_func, uint64_t event_mask,
                                      void* user_arg) {
  if (int rc = ensure_initialized()) return rc;
  // Registering NULL (or an empty mask) turns reporting off.
  g_tool.mask.store(0, std::memory_order_release);
  g_tool.cb.store(cb_func, std::memory_order_release);
  g_tool.arg.store(user_arg, std::memory_order_release);
  g_tool.mask.store(cb_func ? (event_mask & ABT_TOOL_EVENT_THREAD_ALL) : 0,
                    std::memory_order_release);
  if (g_tool.mask.load(std::memory_order_relaxed))
    g_slow_paths.fetch_or(slow_tool, std::memory_order_release);
  else
    g_slow_paths.fetch_and(~std::uint32_t{slow_tool}, std::memory_order_release);
  weft::detail::set_unit_event_hook(g_tool.mask.load(std::memory_order_relaxed) ? &runtime_event
                                                                                : nullptr);
  return ABT_SUCCESS;
}

int ABT_tool_query_thread(ABT_tool_context context, uint64_t event, ABT_tool_query_kind query_kind,
                          void* val) {
  if (!context) return ABT_ERR_INV_TOOL_CONTEXT;
  if (!val) return ABT_ERR_INV_ARG;
  (void)event;
  switch (query_kind) {
    case ABT_TOOL_QUERY_KIND_POOL:
      *static_cast<ABT_pool*>(val) = last_pool_of(context->unit);
      return ABT_SUCCESS;
    case ABT_TOOL_QUERY_KIND_STACK_DEPTH:
      *static_cast<int*>(val) = 0;  // weft does not nest work units on one stack
      return ABT_SUCCESS;
    case ABT_TOOL_QUERY_KIND_CALLER_TYPE:
      *static_cast<ABT_exec_entity_type*>(val) =
          context->caller ? ABT_EXEC_ENTITY_TYPE_THREAD : ABT_EXEC_ENTITY_TYPE_EXT;
      return ABT_SUCCESS;
    case ABT_TOOL_QUERY_KIND_CALLER_HANDLE:
      *static_cast<ABT_thread*>(val) = handle_of(context->caller);
      return ABT_SUCCESS;
    case ABT_TOOL_QUERY_KIND_SYNC_OBJECT_TYPE:
      *static_cast<ABT_sync_event_type*>(val) = context->sync_type;
      return ABT_SUCCESS;
    case ABT_TOOL_QUERY_KIND_SYNC_OBJECT_HANDLE:
      *static_cast<void**>(val) = context->sync_object;
      return ABT_SUCCESS;
  }
  return ABT_ERR_INV_QUERY_KIND;
}

}  // extern "C"
