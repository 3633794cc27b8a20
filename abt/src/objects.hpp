// SPDX-License-Identifier: Apache-2.0
// Internal functions shared by the ABT core's translation units: handle registries, predefined
// pools and schedulers, configurations.
#pragma once

#include <map>
#include <memory>

#include "abt_internal.hpp"
#include "state.hpp"

namespace abt {

// --- pools (pool.cpp) ----------------------------------------------------------------------

/// weft's access mode for an ABT one (the values are checked by valid_access first).
weft::access_mode to_mode(ABT_pool_access a) noexcept;
/// True for the five ABT_POOL_ACCESS_* values.
bool valid_access(int a) noexcept;
/// Registers a handle for `p` (the handle takes a share of it).
ABT_pool register_pool(std::shared_ptr<weft::pool> p, ABT_pool_access access, bool automatic,
                       bool user_defined);
/// The handle of weft pool `p`; registers a non-automatic one for pools weft made itself (e.g.
/// the primary stream's, or pools a scheduler adopted). nullptr only for p == nullptr.
ABT_pool pool_handle_for(const std::shared_ptr<weft::pool>& p);
/// The handle of weft pool `p` if one is registered, else nullptr. Takes the registry lock.
ABT_pool find_pool(const weft::pool* p) noexcept;
/// Creates a predefined pool.
int create_basic_pool(int kind, int access, bool automatic, ABT_pool* out);
/// Unregisters and deletes a pool handle (drops its share of the weft pool).
void delete_pool_handle(ABT_pool p) noexcept;
/// The work unit an ABT_unit stands for, for running or queueing it in `pool` (of any kind): a
/// user pool's unit is taken out of its pool's registry (and freed by it), a built-in pool's unit
/// is the work unit itself; nullptr when it is neither.
weft::work_unit* unit_to_thread(ABT_unit unit, ABT_pool pool) noexcept;

// --- user-defined pools (user_pool.cpp) ------------------------------------------------------

/// Builds the weft pool of a user definition (ABT_pool_user_def or the older ABT_pool_def) and
/// registers its handle; runs the definition's init callback.
int create_user_pool(ABT_pool_user_def def, ABT_pool_config config, ABT_pool* out);
/// True when `p` was built by create_user_pool.
bool is_user_pool(ABT_pool p) noexcept;
/// Runs a user pool's free callback now and makes the weft pool inert (empty, ignoring pushes):
/// weft may keep the pool object (as an orphan) after its handle is gone.
void user_pool_retire(ABT_pool p) noexcept;
/// Pops from a user pool with the pool context `ctx` (waiting up to `wait_secs` when `wait`).
weft::work_unit* user_pool_pop_thread(ABT_pool p, ABT_pool_context ctx, bool wait,
                                      double wait_secs);
/// Makes a user pool's unit for the new, not yet submitted work unit `u` (the pool's push then
/// queues that one); ABT_ERR_OTHER when the definition makes none.
int user_pool_reserve_unit(ABT_pool p, weft::work_unit* u) noexcept;
/// Pushes a work unit into a user pool with the pool context `ctx`; ABT_ERR_OTHER when the
/// definition makes no unit for it.
int user_pool_push_thread(ABT_pool p, weft::work_unit* u, ABT_pool_context ctx);
/// ABT_pool_pop_threads on a user pool: the definition's pop_many when it has one, else pops one
/// by one; returns how many of `out[0..len)` it filled.
std::size_t user_pool_pop_many(ABT_pool p, ABT_thread* out, std::size_t len, ABT_pool_context ctx);
/// ABT_pool_push_threads on a user pool: the definition's push_many when it has one, else pushes
/// one by one; ABT_ERR_OTHER (nothing queued) when the definition makes no unit for one.
int user_pool_push_many(ABT_pool p, weft::work_unit* const* us, std::size_t n,
                        ABT_pool_context ctx);
/// Old interface: pops the pool's own unit (it stays registered until taken).
ABT_unit user_pool_pop_unit(ABT_pool p, bool wait, double wait_secs);
/// ABT_pool_push into a user pool: a unit the pool made goes back as it is, a unit of another
/// pool (built-in or user) is converted into one of this pool; ABT_ERR_INV_UNIT if the value is
/// no unit at all, ABT_ERR_OTHER (the unit left as it was) when the definition makes no unit.
int user_pool_push_unit(ABT_pool p, ABT_unit unit);
/// ABT_pool_is_empty of a user pool: its is_empty callback (get_size for the old interface).
bool user_pool_is_empty(ABT_pool p) noexcept;
/// Removes a unit (old interface's p_remove); ABT_ERR_POOL when the definition has none.
int user_pool_remove_unit(ABT_pool p, ABT_unit unit);
/// Calls the definition's print_all (ABT_ERR_POOL when it has none). `as_threads`: print_fn
/// takes ABT_thread (ABT_pool_print_all_threads) rather than ABT_unit.
int user_pool_print_all(ABT_pool p, void* arg, void (*print_fn)(void*, void*), bool as_threads);
/// The work unit behind a user pool's unit (nullptr if unknown); `forget` drops the pairing and
/// frees the unit with the pool's free callback.
weft::work_unit* user_unit_thread(ABT_unit unit, bool forget) noexcept;
/// Frees the unit associated with `u` (with its pool's callback), if any: `u` is being freed.
void user_pool_release(const weft::work_unit* u) noexcept;
/// Takes the unit associated with `u` off it without freeing it (a revive hands it to the
/// revived work unit with user_pool_attach, or frees it with user_pool_drop); nullptr if none.
ABT_unit user_pool_detach(const weft::work_unit* u) noexcept;
/// Associates the detached `unit` with `u` again; false (nothing done) when `unit` is not the
/// user pool `p`'s.
bool user_pool_attach(ABT_pool p, weft::work_unit* u, ABT_unit unit) noexcept;
/// Frees the detached `unit` with its pool's callback.
void user_pool_drop(ABT_unit unit) noexcept;
/// The user unit currently standing for `u` in a user pool, or nullptr.
ABT_unit user_unit_of(const weft::work_unit* u) noexcept;

// --- schedulers (sched.cpp) ------------------------------------------------------------------

/// Creates a predefined scheduler over `pools` (or default pools when num_pools is 0 or pools
/// is NULL); `automatic` unless the configuration says otherwise.
int create_predef_sched(int predef, int num_pools, ABT_pool* pools, ABT_sched_config config,
                        bool automatic, ABT_sched* out);
/// Wraps a scheduler weft created (a stream's main scheduler) in a handle.
ABT_sched wrap_native_sched(weft::scheduler& s);
/// Unregisters and deletes a scheduler handle, calling a user definition's free callback, and
/// frees the automatic pools no other scheduler uses.
void delete_sched_handle(ABT_sched s) noexcept;
/// The stream dropped this scheduler (freed, or replaced): forget the weft object, and delete an
/// automatic handle once nothing calls into it.
void sched_released(ABT_sched s) noexcept;

/// Called when the ULT that ran `s` stacked dropped it: deletes an automatic handle.
void stacked_scheduler_ended(ABT_sched s) noexcept;
/// True when the caller is a user scheduler's run callback (on its scheduler loop).
bool in_scheduler_loop() noexcept;
/// The unit that stands for the calling user main scheduler's loop in ABT calls (Argobots runs
/// schedulers as ULTs), or nullptr when the caller is not one.
weft::work_unit* scheduler_unit() noexcept;
/// Runs `u` from the calling user scheduler's loop (ABT_xstream_run_unit, ABT_self_schedule).
int run_from_scheduler(weft::work_unit* u);
/// ABT_thread_yield and ABT_self_yield in a user main scheduler's run, whose stand-in is `s`
/// (scheduler_unit()): the scheduler's ULT yields as in Argobots (see sched.cpp).
int yield_from_scheduler(weft::work_unit* s) noexcept;

// --- streams (xstream.cpp) -------------------------------------------------------------------

/// Registers handles for the streams that exist at ABT_init (the primary, and any weft made).
void register_existing_streams();
/// The last ABT_finalize: finalizes weft when ABT_init initialised it (its streams drain while
/// the layer is still initialised), closes the layer (close_layer), then frees every handle.
void release_all_objects(bool finalize_runtime);
/// Marks the layer uninitialised (count 0, the entry points' fast forms closed); init.cpp.
void close_layer() noexcept;
/// The handle of stream `s`, or nullptr.
ABT_xstream xstream_handle(const weft::execution_stream* s) noexcept;

// --- configurations (config.cpp) -------------------------------------------------------------

/// One typed configuration value.
struct config_value {
  int type = 0;  // ABT_SCHED_CONFIG_* / ABT_POOL_CONFIG_* (same numbering)
  union {
    int i;
    double d;
    void* p;
  } v{};
};

}  // namespace abt

/// A scheduler configuration: index -> value.
struct ABT_sched_config_opaque {
  std::map<int, abt::config_value> values;
};

/// A pool configuration: key -> value.
struct ABT_pool_config_opaque {
  std::map<int, abt::config_value> values;
};

/// A ULT attribute set.
struct ABT_thread_attr_opaque {
  std::size_t stack_size = 0;  // 0: the default, unless `unsized`
  // Read from the primary ULT, which runs on the process's stack: size 0, as Argobots reports
  // it (a ULT created with these attributes gets the default size).
  bool unsized = false;
  void* stack = nullptr;  // a user stack (recorded; weft allocates its own, see docs)
  bool migratable = true;
  void (*migration_cb)(ABT_thread, void*) = nullptr;
  void* migration_arg = nullptr;
};
