// SPDX-License-Identifier: Apache-2.0
// ABT_key_* and the work-unit-specific data of ABT_thread_/ABT_self_{set,get}_specific: an
// ABT_key is a weft::local_key packed into the handle's bits (a key is 8 bytes and never 0).
#include <sched.h>

#include <bit>
#include <cstring>
#include <mutex>

#include "asymmetric_fence.hpp"
#include "units.hpp"
#include "weft/error.hpp"
#include "weft/unit_local.hpp"

namespace {

static_assert(sizeof(weft::local_key) == sizeof(std::uint64_t));

weft::local_key key_of(ABT_key k) noexcept {
  weft::local_key key;
  const auto bits = reinterpret_cast<std::uintptr_t>(k);
  const std::uint64_t wide = bits;
  std::memcpy(static_cast<void*>(&key), &wide, sizeof key);
  return key;
}

ABT_key handle_of_key(const weft::local_key& key) noexcept {
  std::uint64_t wide = 0;
  std::memcpy(&wide, static_cast<const void*>(&key), sizeof key);
  return reinterpret_cast<ABT_key>(static_cast<std::uintptr_t>(wide));
}

}  // namespace

namespace abt {

std::mutex& key_lock_of(const weft::work_unit* u) noexcept {
  static std::mutex locks[64];
  const auto bits = reinterpret_cast<std::uintptr_t>(u);
  return locks[(bits >> 6 ^ bits >> 12) % 64];
}

}  // namespace abt

namespace {

/// Another thread's ABT key call on unit `u`: holds u's key lock (against u's own key calls) and,
/// while u runs, key_setter (against the teardown of u's values when its entry ends, see
/// abt::entry_ended). A unit whose entry has ended is waited for until it has terminated; its
/// values are settled then and may be set again.
class other_unit_keys {
 public:
  explicit other_unit_keys(weft::work_unit* u) : e_(abt::ext_of(u)) {
    for (;;) {
      lock_ = std::unique_lock(abt::key_lock_of(u));
      if (!e_) return;
      // The rare side of the Dekker pair with the unit's end (abt::entry_ended).
      abt::rare_store_fenced(e_->key_setter, 1);
      if (!e_->ending.load(std::memory_order_seq_cst)) return;
      e_->key_setter.store(0, std::memory_order_seq_cst);
      if (abt::unit_view::state(u) == weft::unit_state::terminated) {
        e_ = nullptr;  // settled: nothing tears the values down any more
        return;
      }
      lock_.unlock();
      sched_yield();
    }
  }
  ~other_unit_keys() {
    if (e_) e_->key_setter.store(0, std::memory_order_seq_cst);
  }
  other_unit_keys(const other_unit_keys&) = delete;
  other_unit_keys& operator=(const other_unit_keys&) = delete;

 private:
  abt::thread_ext* e_;
  std::unique_lock<std::mutex> lock_;
};

/// The key lock of the calling unit, for its own key calls.
std::unique_lock<std::mutex> own_keys(weft::work_unit* u) {
  return std::unique_lock(abt::key_lock_of(u));
}

}  // namespace

using namespace abt;

extern "C" {

int ABT_key_create(void (*destructor)(void* value), ABT_key* newkey) {
  if (!newkey) return ABT_ERR_INV_ARG;
  *newkey = ABT_KEY_NULL;
  return guarded(ABT_ERR_MEM, [&] {
    *newkey = handle_of_key(weft::local_key::create(destructor));
    return ABT_SUCCESS;
  });
}

int ABT_key_free(ABT_key* key) {
  if (!key || !*key) return ABT_ERR_INV_KEY;
  const int rc = guarded(ABT_ERR_INV_KEY, [&] {
    key_of(*key).destroy();
    return ABT_SUCCESS;
  });
  if (rc == ABT_SUCCESS) *key = ABT_KEY_NULL;
  return rc;
}

int ABT_key_set(ABT_key key, void* value) {
  return ABT_self_set_specific(key, value);
}

int ABT_key_get(ABT_key key, void** value) {
  return ABT_self_get_specific(key, value);
}

int ABT_self_set_specific(ABT_key key, void* value) {
  if (int rc = ensure_initialized()) return rc;
  if (!key) return ABT_ERR_INV_KEY;
  const context c = calling_context();
  if (c == context::external || c == context::scheduler) return ABT_ERR_INV_XSTREAM;
  return guarded(ABT_ERR_INV_KEY, [&] {
    std::lock_guard lock(key_lock_of(weft::this_unit::current()));
    key_of(key).set(value);
    return ABT_SUCCESS;
  });
}

int ABT_self_get_specific(ABT_key key, void** value) {
  if (int rc = ensure_initialized()) return rc;
  if (!key) return ABT_ERR_INV_KEY;
  if (!value) return ABT_ERR_INV_ARG;
  const context c = calling_context();
  if (c == context::external || c == context::scheduler) return ABT_ERR_INV_XSTREAM;
  std::lock_guard lock(key_lock_of(weft::this_unit::current()));
  *value = key_of(key).get();
  return ABT_SUCCESS;
}

int ABT_thread_set_specific(ABT_thread thread, ABT_key key, void* value) {
  if (int rc = ensure_initialized()) return rc;
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (!key) return ABT_ERR_INV_KEY;
  return guarded(ABT_ERR_INV_KEY, [&] {
    if (u == weft::this_unit::current()) {
      const auto lock = own_keys(u);
      key_of(key).set_for(*u, value);
    } else {
      const other_unit_keys guard(u);
      key_of(key).set_for(*u, value);
    }
    return ABT_SUCCESS;
  });
}

int ABT_thread_get_specific(ABT_thread thread, ABT_key key, void** value) {
  if (int rc = ensure_initialized()) return rc;
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (!key) return ABT_ERR_INV_KEY;
  if (!value) return ABT_ERR_INV_ARG;
  return guarded(ABT_ERR_INV_KEY, [&] {
    if (u == weft::this_unit::current()) {
      const auto lock = own_keys(u);
      *value = key_of(key).get_for(*u);
    } else {
      const other_unit_keys guard(u);
      *value = key_of(key).get_for(*u);
    }
    return ABT_SUCCESS;
  });
}

}  // extern "C"
