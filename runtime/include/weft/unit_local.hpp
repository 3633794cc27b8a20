// SPDX-License-Identifier: Apache-2.0
// ULT-local storage: per-unit values under keys, with destructors (Argobots' ABT_key, POSIX's
// pthread_key_t). Use it instead of thread_local inside ULTs (see docs/sync.md).
#pragma once

#include <cstdint>
#include <utility>

#include "weft/work_unit.hpp"

namespace weft {

namespace detail {
struct local_table;
}

/// A destructor for the values stored under a key; called with the (non-null) value.
using local_destructor = void (*)(void*);

/// A key of ULT-local storage: each work unit (ULT or tasklet) has its own value under it, and so
/// has each thread that is not running a unit (external threads, scheduler loops; the primary
/// ULT, which never leaves its thread, shares its thread's table). The value belongs to the unit,
/// not to the stream: it follows the unit across migrations.
///
/// When a unit terminates (after its callable was destroyed) and when an external thread exits,
/// the destructor of every live key whose value is non-null is called with that value, the value
/// being reset to null first; if destructors store new values, this repeats up to 4 rounds
/// (PTHREAD_DESTRUCTOR_ITERATIONS). Destructors run in the unit (a ULT destructor may block) and
/// must not throw. Values of the primary ULT are destroyed when the primary thread exits.
///
/// A key is a small copyable handle. destroy() ("delete") does not call destructors: like
/// pthread_key_delete, the values still stored are forgotten, and their owners must have freed
/// them. Using a destroyed key is an error (errc::invalid_state) for set(); get() returns nullptr.
class local_key {
 public:
  /// An invalid key (get() returns nullptr, set() throws).
  local_key() noexcept = default;

  /// Creates a key with `destructor` (may be nullptr). Throws errc::resource past 65536 live keys.
  /// Any context, runtime initialised or not.
  static local_key create(local_destructor destructor = nullptr);
  /// Deletes the key; its slot may be reused by a later create() (this handle then stays
  /// invalid). Throws errc::invalid_state for an invalid key or one already deleted.
  void destroy();

  /// The caller's value under this key (nullptr if never set, or the key is invalid). No lock,
  /// no allocation. Any context.
  void* get() const noexcept;
  /// Sets the caller's value. The first set() of a unit or thread allocates its table (may throw
  /// std::bad_alloc). Throws errc::invalid_state for an invalid or deleted key. Any context.
  void set(void* value) const;

  /// The value of unit `u` under this key, for code that manages other units (Argobots'
  /// ABT_thread_get_specific). Racy if `u` sets its own value meanwhile. The primary ULT's values
  /// live in its thread: from another thread they read as nullptr.
  void* get_for(const work_unit& u) const noexcept;
  /// Sets the value of unit `u` (not running a destructor on the old one). Call it on a unit
  /// that is not running (not yet started, blocked, suspended, yielded or ended): it races with
  /// `u` using the key, ending or throwing meanwhile. A value set on an ended unit is destroyed
  /// by the join that frees it. Throws errc::invalid_state for an invalid or deleted key, and
  /// errc::unsupported for the primary ULT from another thread.
  void set_for(work_unit& u, void* value) const;

  bool valid() const noexcept { return generation_ != 0; }
  friend bool operator==(const local_key&, const local_key&) = default;

 private:
  void* get_from(detail::local_table* t) const noexcept;
  void set_in(detail::local_table** slot, void* value) const;
  local_key(std::uint32_t index, std::uint32_t generation) noexcept
      : index_(index), generation_(generation) {}
  std::uint32_t index_ = 0;
  std::uint32_t generation_ = 0;  // 0: invalid; odd while the key is live
};

/// A typed, owning wrapper: each unit (or thread) gets its own T, default-constructed on its
/// first access and deleted when the unit terminates. The unit_local must outlive every unit
/// that uses it (its destructor deletes the key; values of units still alive then are leaked).
template <class T>
class unit_local {
 public:
  unit_local() : key_(local_key::create([](void* p) { delete static_cast<T*>(p); })) {}
  ~unit_local() {
    if (key_.valid()) key_.destroy();
  }
  unit_local(const unit_local&) = delete;
  unit_local& operator=(const unit_local&) = delete;

  /// The caller's T, created on first access.
  T& get() {
    if (void* p = key_.get()) return *static_cast<T*>(p);
    T* t = new T();
    try {
      key_.set(t);
    } catch (...) {
      delete t;
      throw;
    }
    return *t;
  }
  T& operator*() { return get(); }
  T* operator->() { return &get(); }
  /// True when the caller already has its T.
  bool has_value() const noexcept { return key_.get() != nullptr; }

 private:
  local_key key_;
};

}  // namespace weft
