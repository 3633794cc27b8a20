// SPDX-License-Identifier: Apache-2.0
// ABT_task_*: tasklets. In Argobots 1.1+ a tasklet is a work unit that cannot yield; here it is
// a weft tasklet behind the same handle type as a ULT.
#include "units.hpp"

using namespace abt;

namespace {

/// ABT_task_create's full path. Out of line, so that the fast form's frame is shaped by its own
/// calls only.
[[gnu::noinline]] int create_task(ABT_pool pool, void (*fn)(void*), void* arg, ABT_task* out) {
  if (tool_reporting_only() && pool && fn && !pool->user_defined)
    return create_fast<true>(weft::unit_kind::tasklet, pool, fn, arg, nullptr, out);
  if (out) *out = ABT_TASK_NULL;  // Argobots 1.x: set on error too
  if (int rc = ensure_initialized()) return rc;
  if (!pool) return ABT_ERR_INV_POOL;
  if (!fn) return ABT_ERR_INV_ARG;
  return guarded(ABT_ERR_MEM, [&] {
    return create_unit(weft::unit_kind::tasklet, *pool->pool, pool, fn, arg, nullptr, out);
  });
}

}  // namespace

extern "C" {

int ABT_task_create(ABT_pool pool, void (*task_func)(void*), void* arg, ABT_task* newtask) {
  if (fast_paths_open() && pool && task_func && !pool->user_defined) [[likely]]
    return create_fast(weft::unit_kind::tasklet, pool, task_func, arg, nullptr, newtask);
  return create_task(pool, task_func, arg, newtask);
}

int ABT_task_create_on_xstream(ABT_xstream xstream, void (*task_func)(void*), void* arg,
                               ABT_task* newtask) {
  if (newtask) *newtask = ABT_TASK_NULL;
  if (int rc = ensure_initialized()) return rc;
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  if (!task_func) return ABT_ERR_INV_ARG;
  return guarded(ABT_ERR_INV_XSTREAM, [&] {
    weft::pool& p = xstream->stream->main_pool();
    return create_unit(weft::unit_kind::tasklet, p, find_pool(&p), task_func, arg, nullptr,
                       newtask);
  });
}

int ABT_task_revive(ABT_pool pool, void (*task_func)(void*), void* arg, ABT_task* task) {
  if (task && *task && unit_view::kind(unit_of(*task)) != weft::unit_kind::tasklet)
    return ABT_ERR_INV_TASK;
  const int rc = ABT_thread_revive(pool, task_func, arg, task);
  return rc == ABT_ERR_INV_THREAD ? ABT_ERR_INV_TASK : rc;
}

int ABT_task_free(ABT_task* task) {
  return free_unit_of<ABT_ERR_INV_TASK>(task);
}

int ABT_task_join(ABT_task task) {
  if (int rc = ensure_initialized()) return rc;
  return join_unit(unit_of(task), false, ABT_ERR_INV_TASK);
}

int ABT_task_cancel(ABT_task task) {
  const int rc = ABT_thread_cancel(task);
  return rc == ABT_ERR_INV_THREAD ? ABT_ERR_INV_TASK : rc;
}

int ABT_task_self(ABT_task* task) {
  if (!task) return ABT_ERR_INV_ARG;
  *task = ABT_TASK_NULL;  // Argobots 1.x: also on error
  if (int rc = ensure_initialized()) return rc;
  const context c = calling_context();
  if (c == context::ult || c == context::primary_ult) return ABT_ERR_INV_TASK;  // Argobots 1.x
  if (c == context::scheduler && scheduler_unit()) return ABT_ERR_INV_TASK;     // a ULT there
  if (c != context::tasklet) return ABT_ERR_INV_XSTREAM;
  *task = handle_of(weft::this_unit::current());
  return ABT_SUCCESS;
}

int ABT_task_self_id(ABT_unit_id* id) {
  if (int rc = ensure_initialized()) return rc;
  if (!id) return ABT_ERR_INV_ARG;
  const context c = calling_context();
  if (c == context::ult || c == context::primary_ult) return ABT_ERR_INV_TASK;
  if (c == context::scheduler && scheduler_unit()) return ABT_ERR_INV_TASK;
  if (c != context::tasklet) return ABT_ERR_INV_XSTREAM;
  *id = weft::this_unit::id();
  return ABT_SUCCESS;
}

int ABT_task_get_xstream(ABT_task task, ABT_xstream* xstream) {
  if (!task) return ABT_ERR_INV_TASK;
  return ABT_thread_get_last_xstream(task, xstream);
}

int ABT_task_get_state(ABT_task task, ABT_task_state* state) {
  weft::work_unit* u = unit_of(task);
  if (!u) return ABT_ERR_INV_TASK;
  if (!state) return ABT_ERR_INV_ARG;
  switch (state_of(u)) {
    case ABT_THREAD_STATE_READY:
      *state = ABT_TASK_STATE_READY;
      break;
    case ABT_THREAD_STATE_TERMINATED:
      *state = ABT_TASK_STATE_TERMINATED;
      break;
    default:
      *state = ABT_TASK_STATE_RUNNING;
      break;
  }
  return ABT_SUCCESS;
}

int ABT_task_get_last_pool(ABT_task task, ABT_pool* pool) {
  if (!task) return ABT_ERR_INV_TASK;
  return ABT_thread_get_last_pool(task, pool);
}

int ABT_task_get_last_pool_id(ABT_task task, int* id) {
  if (!task) return ABT_ERR_INV_TASK;
  return ABT_thread_get_last_pool_id(task, id);
}

int ABT_task_set_migratable(ABT_task task, ABT_bool flag) {
  if (!task) return ABT_ERR_INV_TASK;
  return ABT_thread_set_migratable(task, flag);
}

int ABT_task_is_migratable(ABT_task task, ABT_bool* flag) {
  if (!task) return ABT_ERR_INV_TASK;
  return ABT_thread_is_migratable(task, flag);
}

int ABT_task_equal(ABT_task task1, ABT_task task2, ABT_bool* result) {
  return ABT_thread_equal(task1, task2, result);
}

int ABT_task_get_id(ABT_task task, ABT_unit_id* task_id) {
  if (!task) return ABT_ERR_INV_TASK;
  return ABT_thread_get_id(task, task_id);
}

int ABT_task_get_arg(ABT_task task, void** arg) {
  if (!task) return ABT_ERR_INV_TASK;
  return ABT_thread_get_arg(task, arg);
}

}  // extern "C"
