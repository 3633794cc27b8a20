// SPDX-License-Identifier: Apache-2.0
// ABT_tool_*: one registered callback for work-unit events, and the queries it may make.
#include <atomic>

#include "units.hpp"

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

void tool_event(weft::work_unit* u, std::uint64_t event, ABT_sync_event_type sync_type,
                void* sync_object) noexcept {
  if (!(g_tool.mask.load(std::memory_order_acquire) & event)) return;
  ABT_tool_thread_callback_fn cb = g_tool.cb.load(std::memory_order_acquire);
  if (!cb || !u) return;
  ABT_tool_context_opaque ctx{u, event, weft::this_unit::current(), sync_type, sync_object};
  cb(handle_of(u), xstream_handle(weft::this_unit::stream()), event, &ctx,
     g_tool.arg.load(std::memory_order_acquire));
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
