// SPDX-License-Identifier: Apache-2.0
// User-defined pools: ABT_pool_user_def_* (Argobots 1.2's interface) and the older struct
// ABT_pool_def, both as a weft::pool that calls the user's callbacks.
//
// A work unit is associated with a user pool through an ABT_unit the pool makes with its
// create-unit callback, as in Argobots: made when the work unit is created in the pool (or first
// pushed into it), queued by every push, handed back by pop as the ABT_thread (new interface) or
// the ABT_unit (old one) and kept meanwhile, and freed with the pool's callback when the work unit
// is freed or goes to another pool. The layer pairs units and work units in one registry so it can
// answer ABT_unit_get_thread and find the unit to queue.
#include <atomic>
#include <chrono>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "objects.hpp"

namespace abt {

namespace {
thread_local ABT_pool_context tl_push_context = ABT_POOL_CONTEXT_OP_POOL_OTHER;
}  // namespace

ABT_pool_context push_context() noexcept {
  return tl_push_context;
}

void set_push_context(ABT_pool_context c) noexcept {
  tl_push_context = c;
}

/// The definition ABT_pool_user_def_create builds. It is told apart from an old-style
/// ABT_pool_def (whose first member is an access value, 0..4) by its first word.
struct user_def {
  static constexpr int magic_value = 0x57465044;  // "WFPD"
  int magic = magic_value;
  ABT_pool_user_create_unit_fn create_unit = nullptr;
  ABT_pool_user_free_unit_fn free_unit = nullptr;
  ABT_pool_user_is_empty_fn is_empty = nullptr;
  ABT_pool_user_pop_fn pop = nullptr;
  ABT_pool_user_push_fn push = nullptr;
  ABT_pool_user_init_fn init = nullptr;
  ABT_pool_user_free_fn free = nullptr;
  ABT_pool_user_get_size_fn get_size = nullptr;
  ABT_pool_user_pop_wait_fn pop_wait = nullptr;
  ABT_pool_user_pop_many_fn pop_many = nullptr;
  ABT_pool_user_push_many_fn push_many = nullptr;
  ABT_pool_user_print_all_fn print_all = nullptr;
};

namespace {

bool is_new_def(ABT_pool_user_def def) {
  return *reinterpret_cast<const int*>(def) == user_def::magic_value;
}
user_def* new_def(ABT_pool_user_def def) {
  return reinterpret_cast<user_def*>(def);
}

/// Unit <-> work unit pairs of every user pool.
struct unit_registry {
  std::mutex mutex;
  std::unordered_map<ABT_unit, weft::work_unit*> to_thread;
  std::unordered_map<const weft::work_unit*, ABT_unit> to_unit;
  /// to_thread.size() + to_unit.size(), stored (release) under the mutex after every change. The
  /// lookups read it (acquire) first and skip the mutex while it is 0: a program without user
  /// pools, or with none of their units alive, runs every unit (ABT_xstream_run_unit, whose
  /// scheduler loops call it per unit) without taking this process-wide lock. A unit is recorded
  /// before its pool hands it out, so whoever holds a user pool's unit sees a nonzero count.
  std::atomic<std::size_t> entries{0};

  /// Called under the mutex after changing the maps.
  void count_entries() noexcept {
    entries.store(to_thread.size() + to_unit.size(), std::memory_order_release);
  }
  /// Whether no pair is recorded; callable without the mutex.
  bool empty() const noexcept { return entries.load(std::memory_order_acquire) == 0; }
};
unit_registry& units() {
  static unit_registry* r = new unit_registry;
  return *r;
}

class user_pool;
/// Which pool made a unit (so that forgetting it calls the right free callback).
std::unordered_map<ABT_unit, user_pool*>& unit_owner() {
  static auto* m = new std::unordered_map<ABT_unit, user_pool*>;
  return *m;
}

/// A weft pool whose operations are the user's callbacks.
class user_pool final : public weft::pool {
 public:
  user_pool(ABT_pool_access access, const user_def* nd, const ABT_pool_def* od)
      : weft::pool(to_mode(access)) {
    if (nd) {
      new_ = *nd;
      is_new_ = true;
    } else {
      old_ = *od;
    }
  }
  ~user_pool() override { retire(); }

  /// Calls the free callback once and makes every later operation a no-op.
  void retire() noexcept {
    // Waits for the runtime's calls in flight (other streams serve orphaned pools: size(), pop()).
    std::unique_lock lock(retire_mutex_);
    ABT_pool h = handle_;
    if (!h) return;
    // Units still associated with this pool (their work units were not freed yet) go first:
    // the registry must not name a pool that is gone.
    std::vector<ABT_unit> left;
    {
      unit_registry& r = units();
      std::lock_guard rlock(r.mutex);
      for (auto it = unit_owner().begin(); it != unit_owner().end();) {
        if (it->second != this) {
          ++it;
          continue;
        }
        const ABT_unit unit = it->first;
        if (auto t = r.to_thread.find(unit); t != r.to_thread.end()) {
          if (auto tu = r.to_unit.find(t->second); tu != r.to_unit.end() && tu->second == unit)
            r.to_unit.erase(tu);
          r.to_thread.erase(t);
        }
        try {
          left.push_back(unit);
        } catch (...) {  // out of memory: the unit is forgotten, not freed
        }
        it = unit_owner().erase(it);
      }
      r.count_entries();
    }
    if (initialised_)
      for (ABT_unit unit : left) free_unit(unit);
    handle_ = nullptr;
    if (!initialised_) return;
    if (is_new_) {
      if (new_.free) new_.free(h);
    } else if (old_.p_free) {
      old_.p_free(h);
    }
  }

  void bind(ABT_pool h) noexcept { handle_ = h; }
  int init(ABT_pool_config config) {
    int rc = ABT_SUCCESS;
    if (is_new_ && new_.init) rc = new_.init(handle_, config);
    if (!is_new_ && old_.p_init) rc = old_.p_init(handle_, config);
    initialised_ = rc == ABT_SUCCESS;
    return rc;
  }

  /// Makes the pool's unit for `u` and remembers the pair; nullptr when the definition made no
  /// unit or the pair could not be recorded (out of memory: the unit is freed again).
  ABT_unit make_unit(weft::work_unit* u) noexcept {
    ABT_unit unit =
        is_new_ ? new_.create_unit(handle_, handle_of(u)) : old_.u_create_from_thread(handle_of(u));
    if (!unit) return nullptr;
    bool recorded = false;
    ABT_unit previous = nullptr;
    user_pool* previous_owner = nullptr;
    {
      unit_registry& r = units();
      std::lock_guard lock(r.mutex);
      try {
        auto tu = r.to_unit.find(u);
        const ABT_unit old = tu != r.to_unit.end() ? tu->second : nullptr;
        r.to_thread[unit] = u;
        unit_owner()[unit] = this;
        r.to_unit[u] = unit;
        recorded = true;
        // The unit of the pool `u` was associated with before goes (one unit per work unit).
        if (old && old != unit) {
          previous = old;
          if (auto o = unit_owner().find(old); o != unit_owner().end()) previous_owner = o->second;
          r.to_thread.erase(old);
          unit_owner().erase(old);
        }
      } catch (...) {
        if (!recorded) {
          r.to_thread.erase(unit);
          unit_owner().erase(unit);
        }
      }
      r.count_entries();
    }
    // Freed outside the registry's lock: the callbacks may call back into the layer.
    if (previous_owner) previous_owner->free_unit(previous);
    if (!recorded) {
      free_unit(unit);
      return nullptr;
    }
    return unit;
  }

  /// Frees `unit` with the definition's callback.
  void free_unit(ABT_unit unit) noexcept {
    if (is_new_) {
      new_.free_unit(handle_, unit);
    } else {
      ABT_unit tmp = unit;
      old_.u_free(&tmp);
    }
  }

  /// Forgets `unit` and frees it with the pool's callback; returns its work unit.
  weft::work_unit* take(ABT_unit unit) noexcept {
    weft::work_unit* u = nullptr;
    {
      unit_registry& r = units();
      std::lock_guard lock(r.mutex);
      auto it = r.to_thread.find(unit);
      if (it == r.to_thread.end()) return nullptr;
      u = it->second;
      r.to_thread.erase(it);
      // The work unit may already stand for a unit of another pool (ABT_pool_push made that
      // one first): only this pairing goes.
      auto tu = r.to_unit.find(u);
      if (tu != r.to_unit.end() && tu->second == unit) r.to_unit.erase(tu);
      unit_owner().erase(unit);
      r.count_entries();
    }
    free_unit(unit);
    return u;
  }

  /// The runtime's push (a yield, a resume, a create): the work unit must not be lost, so a unit
  /// the definition cannot make is waited for (Argobots has no error to report there either).
  void push_ctx(weft::work_unit* u, ABT_pool_context ctx) noexcept {
    if (!handle_) return;  // retired: nothing can be queued any more
    bool made = false;
    ABT_unit unit = unit_for(u, &made);
    if (!unit) {
      while (!(unit = make_unit(u))) std::this_thread::yield();
    }
    push_made(unit, ctx);
  }

  /// The unit to queue for `u`: the one this pool still has registered for it, else a new one
  /// (`*made` set), else nullptr.
  ABT_unit unit_for(weft::work_unit* u, bool* made) noexcept {
    if (ABT_unit unit = own_unit_of(u)) return unit;
    ABT_unit unit = make_unit(u);
    *made = unit != nullptr;
    return unit;
  }

  /// The unit this pool made for `u` and still has registered (reserved at its creation, or
  /// popped through the old interface's ABT_pool_pop), or nullptr: the runtime's push queues
  /// that one rather than a second unit.
  ABT_unit own_unit_of(const weft::work_unit* u) const noexcept {
    unit_registry& r = units();
    std::lock_guard lock(r.mutex);
    auto it = r.to_unit.find(u);
    if (it == r.to_unit.end()) return nullptr;
    auto o = unit_owner().find(it->second);
    return o != unit_owner().end() && o->second == this ? it->second : nullptr;
  }

  /// A new work unit's unit, made before the unit is submitted so that a definition that makes
  /// none fails the create (ABT_ERR_OTHER, as Argobots) instead of the runtime's push.
  int reserve(weft::work_unit* u) noexcept {
    if (!handle_) return ABT_ERR_INV_POOL;
    return make_unit(u) ? ABT_SUCCESS : ABT_ERR_OTHER;
  }

  /// ABT_pool_push_thread: as push_ctx, but a unit the definition cannot make is the caller's
  /// error (ABT_ERR_OTHER, as Argobots returns when create_unit gives ABT_UNIT_NULL).
  int try_push_ctx(weft::work_unit* u, ABT_pool_context ctx) noexcept {
    if (!handle_) return ABT_ERR_INV_POOL;
    bool made = false;
    ABT_unit unit = unit_for(u, &made);
    if (!unit) return ABT_ERR_OTHER;
    adopt(u);
    push_made(unit, ctx);
    return ABT_SUCCESS;
  }

  /// ABT_pool_push_threads: a unit per work unit, then one call of the definition's push_many
  /// when it has one (Argobots calls it, never push, for this operation); otherwise push per
  /// unit (the old interface's p_push, as Argobots' wrapper does). A unit the definition cannot
  /// make fails the whole call before anything is queued.
  int push_many_ctx(weft::work_unit* const* us, std::size_t n, ABT_pool_context ctx) noexcept {
    if (!handle_) return ABT_ERR_INV_POOL;
    std::vector<ABT_unit> queued, made;
    try {
      queued.reserve(n);
      made.reserve(n);
    } catch (...) {
      return ABT_ERR_MEM;
    }
    for (std::size_t i = 0; i < n; ++i) {
      bool fresh = false;
      ABT_unit unit = unit_for(us[i], &fresh);
      if (!unit) {
        for (ABT_unit m : made) take(m);  // the units made here go again
        return ABT_ERR_OTHER;
      }
      queued.push_back(unit);
      if (fresh) made.push_back(unit);
    }
    for (std::size_t i = 0; i < n; ++i) adopt(us[i]);
    if (is_new_ && new_.push_many) {
      if (!queued.empty()) new_.push_many(handle_, queued.data(), queued.size(), ctx);
    } else {
      for (ABT_unit unit : queued) push_made(unit, ctx);
    }
    return ABT_SUCCESS;
  }

  /// ABT_pool_pop_threads: one call of the definition's pop_many when it has one, otherwise pop
  /// until `len` or the pool is empty. Returns the count.
  std::size_t pop_many_ctx(ABT_thread* out, std::size_t len, ABT_pool_context ctx) noexcept {
    if (!handle_ || len == 0) return 0;
    if (is_new_ && new_.pop_many) {
      std::size_t num = 0;
      new_.pop_many(handle_, out, len, &num, ctx);
      if (num > len) num = len;  // a definition that claims more than it may write
      return num;
    }
    std::size_t n = 0;
    while (n < len) {
      weft::work_unit* u = pop_ctx(ctx);
      if (!u) break;
      out[n++] = handle_of(u);
    }
    return n;
  }

  /// Makes this pool `u`'s pool (where the runtime puts it back), before its unit is queued.
  void adopt(weft::work_unit* u) noexcept {
    weft::detail::set_home(u, *this);
    if (thread_ext* e = ext_of(u)) e->last_pool.store(handle_, std::memory_order_relaxed);
  }

  /// Queues a unit this pool made with the definition's push.
  void push_made(ABT_unit unit, ABT_pool_context ctx) noexcept {
    if (is_new_)
      new_.push(handle_, unit, ctx);
    else
      old_.p_push(handle_, unit);
  }

  weft::work_unit* pop_ctx(ABT_pool_context ctx) noexcept {
    if (!handle_) return nullptr;
    if (is_new_) {
      return unit_of(new_.pop(handle_, ctx));  // its unit stays: it is still this pool's
    }
    ABT_unit unit = old_.p_pop(handle_);
    return unit ? thread_of(unit) : nullptr;
  }

  weft::work_unit* pop_wait_ctx(double secs, ABT_pool_context ctx) noexcept {
    if (!handle_) return nullptr;
    if (is_new_ && new_.pop_wait) {
      return unit_of(new_.pop_wait(handle_, secs, ctx));
    }
    if (!is_new_ && old_.p_pop_timedwait) {
      ABT_unit unit = old_.p_pop_timedwait(handle_, ABT_get_wtime() + secs);
      return unit ? thread_of(unit) : nullptr;
    }
    return weft::pool::pop_wait(
        std::chrono::nanoseconds(static_cast<long long>(secs > 0 ? secs * 1e9 : 0)));
  }

  /// Old interface: the pool's own unit, left registered (ABT_pool_pop).
  ABT_unit pop_unit(bool wait, double secs) noexcept {
    if (is_new_) {
      // The new interface pops threads; hand out the unit that stands for it.
      weft::work_unit* u = wait ? pop_wait_ctx(secs, ABT_POOL_CONTEXT_OWNER_PRIMARY)
                                : pop_ctx(ABT_POOL_CONTEXT_OWNER_PRIMARY);
      return reinterpret_cast<ABT_unit>(u);
    }
    if (wait && old_.p_pop_timedwait) return old_.p_pop_timedwait(handle_, ABT_get_wtime() + secs);
    return old_.p_pop(handle_);
  }

  /// ABT_pool_push: a unit this pool made goes back as it is; any other unit is converted, as
  /// Argobots converts it (a built-in pool's unit is its work unit, another user pool's unit is
  /// freed by that pool once this pool made its own) and pushed as a new unit of this pool.
  /// ABT_ERR_INV_UNIT: the value is no unit; ABT_ERR_OTHER: the definition made no unit for it
  /// (the unit stays as it was, as Argobots leaves it).
  int push_unit(ABT_unit unit) noexcept {
    weft::work_unit* u = nullptr;
    user_pool* owner = nullptr;
    {
      unit_registry& r = units();
      std::lock_guard lock(r.mutex);
      auto it = r.to_thread.find(unit);
      if (it != r.to_thread.end()) {
        u = it->second;
        auto o = unit_owner().find(unit);
        owner = o == unit_owner().end() ? nullptr : o->second;
      }
    }
    if (!u) {
      u = reinterpret_cast<weft::work_unit*>(unit);
      if (!ext_of(u) && u != primary_unit()) return ABT_ERR_INV_UNIT;  // not this layer's
    } else if (!owner) {
      return ABT_ERR_INV_UNIT;
    }
    if (!handle_) return ABT_ERR_INV_POOL;
    ABT_unit mine = unit;
    if (owner != this) {
      mine = make_unit(u);  // frees `unit` when another pool made it
      if (!mine) return ABT_ERR_OTHER;
    }
    adopt(u);
    push_made(mine, ABT_POOL_CONTEXT_OP_POOL_OTHER);
    return ABT_SUCCESS;
  }

  /// ABT_pool_is_empty: the definition's is_empty (new interface) or get_size (old one).
  bool is_empty() const noexcept {
    std::shared_lock lock(retire_mutex_);
    if (!handle_) return true;
    if (is_new_) return new_.is_empty(handle_) != ABT_FALSE;
    return old_.p_get_size(handle_) == 0;
  }

  int remove_unit(ABT_unit unit) noexcept {
    if (is_new_ || !old_.p_remove) return ABT_ERR_POOL;
    old_.p_remove(handle_, unit);
    return ABT_SUCCESS;
  }

  int print_all(void* arg, void (*fn)(void*, void*), bool as_threads) {
    if (!handle_) return ABT_ERR_POOL;
    // The definition walks threads (new) or units (old); the caller wants one or the other: a
    // trampoline converts with the unit registry when they differ.
    struct walk {
      void* arg;
      void (*fn)(void*, void*);
    } w{arg, fn};
    if (is_new_) {
      if (!new_.print_all) return ABT_ERR_POOL;
      if (as_threads) {
        new_.print_all(handle_, arg, reinterpret_cast<void (*)(void*, ABT_thread)>(fn));
      } else {
        new_.print_all(handle_, &w, [](void* a, ABT_thread t) {
          auto* w = static_cast<walk*>(a);
          ABT_unit unit = user_unit_of(unit_of(t));
          w->fn(w->arg, unit ? static_cast<void*>(unit) : static_cast<void*>(t));
        });
      }
      return ABT_SUCCESS;
    }
    if (!old_.p_print_all) return ABT_ERR_POOL;
    if (!as_threads) {
      old_.p_print_all(handle_, arg, reinterpret_cast<void (*)(void*, ABT_unit)>(fn));
    } else {
      old_.p_print_all(handle_, &w, [](void* a, ABT_unit unit) {
        auto* w = static_cast<walk*>(a);
        w->fn(w->arg, user_unit_thread(unit, false));
      });
    }
    return ABT_SUCCESS;
  }

  // weft::pool
  // The runtime may call these from any stream that serves the pool, orphaned pools included,
  // while the user frees it: each holds retire_mutex_ shared, so retire() waits for them.
  weft::work_unit* pop() noexcept override {
    std::shared_lock lock(retire_mutex_);
    return pop_ctx(ABT_POOL_CONTEXT_OWNER_PRIMARY);
  }
  weft::work_unit* pop_wait(std::chrono::nanoseconds timeout) noexcept override {
    {
      std::shared_lock lock(retire_mutex_);
      if (!handle_) return nullptr;
      if ((is_new_ && new_.pop_wait) || (!is_new_ && old_.p_pop_timedwait))
        return pop_wait_ctx(static_cast<double>(timeout.count()) * 1e-9,
                            ABT_POOL_CONTEXT_OWNER_PRIMARY);
    }
    // No waiting callback: the base class polls pop(), which takes retire_mutex_ itself.
    return weft::pool::pop_wait(timeout);
  }
  bool remove(weft::work_unit* u) noexcept override {
    std::shared_lock lock(retire_mutex_);
    if (!handle_ || is_new_ || !old_.p_remove) return false;
    ABT_unit unit = user_unit_of(u);
    if (!unit) return false;
    if (old_.u_is_in_pool && old_.u_is_in_pool(unit) == ABT_FALSE) return false;
    old_.p_remove(handle_, unit);
    return true;
  }
  std::size_t size() const noexcept override {
    std::shared_lock lock(retire_mutex_);
    if (!handle_) return 0;
    if (is_new_) {
      if (new_.get_size) return new_.get_size(handle_);
      return new_.is_empty(handle_) == ABT_FALSE ? 1 : 0;
    }
    return old_.p_get_size(handle_);
  }

 protected:
  void do_push(weft::work_unit* u) noexcept override {
    std::shared_lock lock(retire_mutex_);
    // One push per operation carries its context: a further push from the same thread (another
    // unit woken meanwhile) is the runtime's own.
    const ABT_pool_context ctx = push_context();
    set_push_context(ABT_POOL_CONTEXT_OP_POOL_OTHER);
    push_ctx(u, ctx);
  }

 private:
  /// The work unit of a unit this pool made, or nullptr.
  static weft::work_unit* thread_of(ABT_unit unit) noexcept {
    unit_registry& r = units();
    std::lock_guard lock(r.mutex);
    auto it = r.to_thread.find(unit);
    return it == r.to_thread.end() ? nullptr : it->second;
  }

  mutable std::shared_mutex retire_mutex_;  // shared: the runtime's calls; exclusive: retire()
  ABT_pool handle_ = nullptr;
  bool is_new_ = false;
  bool initialised_ = false;
  user_def new_{};
  ABT_pool_def old_{};
};

user_pool& as_user(ABT_pool p) {
  return static_cast<user_pool&>(*p->pool);
}

}  // namespace

int create_user_pool(ABT_pool_user_def def, ABT_pool_config config, ABT_pool* out) {
  bool automatic = false;
  if (config) {
    auto it = config->values.find(ABT_pool_config_automatic.key);
    if (it != config->values.end() && it->second.type == ABT_POOL_CONFIG_INT)
      automatic = it->second.v.i != 0;
  }
  std::shared_ptr<user_pool> p;
  ABT_pool_access access = ABT_POOL_ACCESS_MPMC;
  if (is_new_def(def)) {
    const user_def* d = new_def(def);
    if (!d->create_unit || !d->free_unit || !d->is_empty || !d->pop || !d->push)
      return ABT_ERR_INV_POOL_USER_DEF;
    p = std::make_shared<user_pool>(access, d, nullptr);
  } else {
    const ABT_pool_def* d = reinterpret_cast<const ABT_pool_def*>(def);
    if (!valid_access(enum_value(d->access))) return ABT_ERR_INV_POOL_ACCESS;
    if (!d->u_create_from_thread || !d->u_free || !d->p_get_size || !d->p_push || !d->p_pop)
      return ABT_ERR_INV_POOL_USER_DEF;
    access = d->access;
    p = std::make_shared<user_pool>(access, nullptr, d);
  }
  ABT_pool h = register_pool(p, access, automatic, true);
  p->bind(h);
  if (int rc = p->init(config)) {
    p.reset();
    delete_pool_handle(h);
    return rc;
  }
  *out = h;
  return ABT_SUCCESS;
}

weft::work_unit* user_pool_pop_thread(ABT_pool p, ABT_pool_context ctx, bool wait,
                                      double wait_secs) {
  return wait ? as_user(p).pop_wait_ctx(wait_secs, ctx) : as_user(p).pop_ctx(ctx);
}

void user_pool_retire(ABT_pool p) noexcept {
  as_user(p).retire();
}

int user_pool_reserve_unit(ABT_pool p, weft::work_unit* u) noexcept {
  return as_user(p).reserve(u);
}

int user_pool_push_thread(ABT_pool p, weft::work_unit* u, ABT_pool_context ctx) {
  return as_user(p).try_push_ctx(u, ctx);
}

std::size_t user_pool_pop_many(ABT_pool p, ABT_thread* out, std::size_t len, ABT_pool_context ctx) {
  return as_user(p).pop_many_ctx(out, len, ctx);
}

int user_pool_push_many(ABT_pool p, weft::work_unit* const* us, std::size_t n,
                        ABT_pool_context ctx) {
  return as_user(p).push_many_ctx(us, n, ctx);
}

ABT_unit user_pool_pop_unit(ABT_pool p, bool wait, double wait_secs) {
  return as_user(p).pop_unit(wait, wait_secs);
}

int user_pool_push_unit(ABT_pool p, ABT_unit unit) {
  return as_user(p).push_unit(unit);
}

bool user_pool_is_empty(ABT_pool p) noexcept {
  return as_user(p).is_empty();
}

int user_pool_remove_unit(ABT_pool p, ABT_unit unit) {
  return as_user(p).remove_unit(unit);
}

int user_pool_print_all(ABT_pool p, void* arg, void (*print_fn)(void*, void*), bool as_threads) {
  return as_user(p).print_all(arg, print_fn, as_threads);
}

weft::work_unit* user_unit_thread(ABT_unit unit, bool forget) noexcept {
  user_pool* owner = nullptr;
  {
    unit_registry& r = units();
    if (r.empty()) return nullptr;
    std::lock_guard lock(r.mutex);
    auto it = r.to_thread.find(unit);
    if (it == r.to_thread.end()) return nullptr;
    if (!forget) return it->second;
    auto o = unit_owner().find(unit);
    owner = o == unit_owner().end() ? nullptr : o->second;
  }
  return owner ? owner->take(unit) : nullptr;
}

ABT_unit user_unit_of(const weft::work_unit* u) noexcept {
  unit_registry& r = units();
  if (r.empty()) return nullptr;
  std::lock_guard lock(r.mutex);
  auto it = r.to_unit.find(u);
  return it == r.to_unit.end() ? nullptr : it->second;
}

void user_pool_release(const weft::work_unit* u) noexcept {
  unit_registry& r = units();
  if (r.empty()) return;
  ABT_unit unit = nullptr;
  user_pool* owner = nullptr;
  {
    std::lock_guard lock(r.mutex);
    auto tu = r.to_unit.find(u);
    if (tu == r.to_unit.end()) return;
    unit = tu->second;
    if (auto o = unit_owner().find(unit); o != unit_owner().end()) owner = o->second;
  }
  if (owner) owner->take(unit);
}

ABT_unit user_pool_detach(const weft::work_unit* u) noexcept {
  unit_registry& r = units();
  if (r.empty()) return nullptr;
  std::lock_guard lock(r.mutex);
  auto tu = r.to_unit.find(u);
  if (tu == r.to_unit.end()) return nullptr;
  const ABT_unit unit = tu->second;
  r.to_unit.erase(tu);
  r.to_thread.erase(unit);  // its owner stays recorded: user_pool_attach or the pool's end
  r.count_entries();
  return unit;
}

void user_pool_drop(ABT_unit unit) noexcept {
  user_pool* owner = nullptr;
  {
    unit_registry& r = units();
    std::lock_guard lock(r.mutex);
    auto o = unit_owner().find(unit);
    if (o == unit_owner().end()) return;  // its pool ended, and freed it
    owner = o->second;
    unit_owner().erase(o);
  }
  owner->free_unit(unit);
}

bool user_pool_attach(ABT_pool p, weft::work_unit* u, ABT_unit unit) noexcept {
  unit_registry& r = units();
  std::lock_guard lock(r.mutex);
  auto o = unit_owner().find(unit);
  if (o == unit_owner().end() || o->second != &as_user(p)) return false;
  bool done = false;
  try {
    r.to_thread[unit] = u;
    r.to_unit[u] = unit;
    done = true;
  } catch (...) {
    r.to_thread.erase(unit);
  }
  r.count_entries();
  return done;
}

}  // namespace abt

using namespace abt;

extern "C" {

int ABT_pool_user_def_create(ABT_pool_user_create_unit_fn p_create_unit,
                             ABT_pool_user_free_unit_fn p_free_unit,
                             ABT_pool_user_is_empty_fn p_is_empty, ABT_pool_user_pop_fn p_pop,
                             ABT_pool_user_push_fn p_push, ABT_pool_user_def* newdef) {
  if (!newdef) return ABT_ERR_INV_ARG;
  if (!p_create_unit || !p_free_unit || !p_is_empty || !p_pop || !p_push) return ABT_ERR_INV_ARG;
  auto* d = new (std::nothrow) user_def;
  if (!d) return ABT_ERR_MEM;
  d->create_unit = p_create_unit;
  d->free_unit = p_free_unit;
  d->is_empty = p_is_empty;
  d->pop = p_pop;
  d->push = p_push;
  *newdef = reinterpret_cast<ABT_pool_user_def>(d);
  return ABT_SUCCESS;
}

int ABT_pool_user_def_free(ABT_pool_user_def* def) {
  if (!def || !*def || !is_new_def(*def)) return ABT_ERR_INV_POOL_USER_DEF;
  delete new_def(*def);
  *def = ABT_POOL_USER_DEF_NULL;
  return ABT_SUCCESS;
}

#define WEFT_ABT_DEF_SETTER(name, type, field)                             \
  int ABT_pool_user_def_set_##name(ABT_pool_user_def def, type p_##name) { \
    if (!def || !is_new_def(def)) return ABT_ERR_INV_POOL_USER_DEF;        \
    new_def(def)->field = p_##name;                                        \
    return ABT_SUCCESS;                                                    \
  }
WEFT_ABT_DEF_SETTER(init, ABT_pool_user_init_fn, init)
WEFT_ABT_DEF_SETTER(free, ABT_pool_user_free_fn, free)
WEFT_ABT_DEF_SETTER(get_size, ABT_pool_user_get_size_fn, get_size)
WEFT_ABT_DEF_SETTER(pop_wait, ABT_pool_user_pop_wait_fn, pop_wait)
WEFT_ABT_DEF_SETTER(pop_many, ABT_pool_user_pop_many_fn, pop_many)
WEFT_ABT_DEF_SETTER(push_many, ABT_pool_user_push_many_fn, push_many)
WEFT_ABT_DEF_SETTER(print_all, ABT_pool_user_print_all_fn, print_all)
#undef WEFT_ABT_DEF_SETTER

}  // extern "C"
