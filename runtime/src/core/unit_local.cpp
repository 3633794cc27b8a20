// SPDX-License-Identifier: Apache-2.0
// ULT-local storage: a process-wide registry of keys and one table of values per work unit
// (hung on work_unit::local_storage) or per thread that runs no unit (thread_local).
#include "core/unit_local.hpp"

#include <atomic>
#include <mutex>
#include <vector>

#include "core/unit.hpp"
#include "platform/assert.hpp"
#include "weft/error.hpp"
#include "weft/this_unit.hpp"
#include "weft/unit_local.hpp"

namespace weft {

namespace detail {

namespace {

constexpr std::uint32_t chunk_size = 256;
constexpr std::uint32_t max_chunks = 256;  // 65536 keys
constexpr int destructor_rounds = 4;       // PTHREAD_DESTRUCTOR_ITERATIONS

struct key_slot {
  std::atomic<std::uint32_t> generation{0};  // odd while live
  std::atomic<local_destructor> destructor{nullptr};
};

/// Slots live in chunks that are never freed, so get() reads them without a lock.
struct key_registry {
  std::atomic<key_slot*> chunks[max_chunks] = {};
  std::mutex mutex;  // create and destroy
  std::vector<std::uint32_t> free_slots;
  std::uint32_t next = 0;

  key_slot* find(std::uint32_t index) const noexcept {
    key_slot* c = chunks[index / chunk_size].load(std::memory_order_acquire);
    return c ? &c[index % chunk_size] : nullptr;
  }
};

key_registry& registry() {
  // Never destroyed: threads may run destructors of their values after static destruction began.
  static key_registry* r = new key_registry;
  return *r;
}

}  // namespace

/// One unit's (or thread's) values, indexed by key. Outside the anonymous namespace: local_key
/// names it in its private helpers.
struct local_table {
  struct entry {
    void* value = nullptr;
    std::uint32_t generation = 0;  // of the key the value was set under
  };
  std::vector<entry> entries;
};

namespace {

/// Runs the destructors of `t`'s values (the table stays installed meanwhile, so destructors may
/// use local storage).
void run_destructors(local_table& t) noexcept {
  key_registry& reg = registry();
  for (int round = 0; round < destructor_rounds; ++round) {
    bool called = false;
    for (std::size_t i = 0; i < t.entries.size(); ++i) {  // entries may grow in a destructor
      const local_table::entry e = t.entries[i];
      if (!e.value) continue;
      t.entries[i].value = nullptr;
      key_slot* s = reg.find(static_cast<std::uint32_t>(i));
      if (!s || s->generation.load(std::memory_order_acquire) != e.generation) continue;
      if (local_destructor d = s->destructor.load(std::memory_order_acquire)) {
        d(e.value);
        called = true;
      }
    }
    if (!called) break;
  }
}

/// The table of a thread that runs no unit; its values are destroyed at thread exit.
struct thread_table {
  local_table* table = nullptr;
  ~thread_table() {
    if (!table) return;
    run_destructors(*table);
    delete table;
    table = nullptr;
  }
};
thread_local thread_table tls_table;

// Never inlined, and only called when the caller is not a unit that can migrate: the address
// of the thread-local is computed afresh by the thread that uses it.
[[gnu::noinline]] local_table** thread_table_slot() noexcept {
  return &tls_table.table;
}

/// The caller's table, or nullptr if it has none yet: its unit's (ULTs other than the primary,
/// tasklets), or its thread's.
local_table* current_table() noexcept {
  work_unit* u = this_unit::current();
  if (u && !is_primary_unit(u)) {
    const unit_extras* x = extras_of(u);
    return x ? x->locals : nullptr;
  }
  return *thread_table_slot();
}

/// Where the caller's table pointer lives, ready for a store (a unit's block is allocated here).
local_table** table_slot() {
  work_unit* u = this_unit::current();
  if (u && !is_primary_unit(u)) return &ensure_extras(u).locals;
  return thread_table_slot();
}

/// The table of unit `u` as seen from the caller; nullptr if it has none yet or if `u` is the
/// primary ULT read from another thread (its table is a thread-local of the primary thread).
local_table* table_of(const work_unit& u) noexcept {
  if (&u == this_unit::current()) return current_table();
  if (is_primary_unit(&u)) return nullptr;
  const unit_extras* x = extras_of(&u);
  return x ? x->locals : nullptr;
}

/// Where the table pointer of unit `u` lives, ready for a store; nullptr for the primary ULT
/// seen from another thread.
local_table** table_slot_of(work_unit& u) {
  if (&u == this_unit::current()) return table_slot();
  if (is_primary_unit(&u)) return nullptr;
  return &ensure_extras(&u).locals;
}

}  // namespace

void run_local_destructors(unit_extras& x) noexcept {
  local_table* t = x.locals;
  if (!t) return;
  run_destructors(*t);  // a destructor may set values again: they go to `t`, for the next round
  assert_invariant([&x, t] { return x.locals == t; },
                   "unit-local storage: the table stays installed while its destructors run");
  delete t;
  x.locals = nullptr;
}

}  // namespace detail

using detail::key_slot;
using detail::local_table;

local_key local_key::create(local_destructor destructor) {
  detail::key_registry& reg = detail::registry();
  std::lock_guard g(reg.mutex);
  std::uint32_t index;
  if (!reg.free_slots.empty()) {
    index = reg.free_slots.back();
    reg.free_slots.pop_back();
    detail::assert_invariant([index, next = reg.next] { return index < next; },
                             "unit-local keys: a freed slot is one handed out before");
  } else {
    if (reg.next == detail::chunk_size * detail::max_chunks) {
      throw error(errc::resource, "weft: too many ULT-local keys (65536 live)");
    }
    index = reg.next;
    const std::uint32_t c = index / detail::chunk_size;
    if (!reg.chunks[c].load(std::memory_order_relaxed)) {
      reg.chunks[c].store(new key_slot[detail::chunk_size], std::memory_order_release);
    }
    ++reg.next;
  }
  key_slot* s = reg.find(index);
  detail::assert_invariant(
      [s] { return s && (s->generation.load(std::memory_order_relaxed) & 1) == 0; },
      "unit-local keys: a slot handed out is not live (even generation)");
  s->destructor.store(destructor, std::memory_order_relaxed);
  std::uint32_t gen = s->generation.load(std::memory_order_relaxed) + 1;  // even -> odd
  if (gen == 0) gen = 1;
  s->generation.store(gen, std::memory_order_release);
  return local_key(index, gen);
}

void local_key::destroy() {
  detail::key_registry& reg = detail::registry();
  std::lock_guard g(reg.mutex);
  key_slot* s = valid() ? reg.find(index_) : nullptr;
  if (!s || s->generation.load(std::memory_order_relaxed) != generation_) {
    throw error(errc::invalid_state, "weft: local_key::destroy on an invalid or deleted key");
  }
  detail::assert_invariant([this] { return (generation_ & 1) == 1; },
                           "unit-local keys: a live key has an odd generation");
  s->destructor.store(nullptr, std::memory_order_relaxed);
  s->generation.store(generation_ + 1, std::memory_order_release);  // odd -> even
  reg.free_slots.push_back(index_);
}

void* local_key::get() const noexcept {
  return get_from(detail::current_table());
}

void* local_key::get_for(const work_unit& u) const noexcept {
  return get_from(detail::table_of(u));
}

void* local_key::get_from(detail::local_table* t) const noexcept {
  if (!t || index_ >= t->entries.size()) return nullptr;
  const local_table::entry& e = t->entries[index_];
  if (e.generation != generation_ || !e.value) return nullptr;
  key_slot* s = detail::registry().find(index_);
  detail::assert_invariant([s] { return s != nullptr; },
                           "unit-local keys: a value in a table was set under a key with a slot");
  if (s->generation.load(std::memory_order_relaxed) != generation_) return nullptr;  // deleted
  return e.value;
}

void local_key::set(void* value) const {
  set_in(detail::table_slot(), value);
}

void local_key::set_for(work_unit& u, void* value) const {
  local_table** slot = detail::table_slot_of(u);
  if (!slot) {
    throw error(errc::unsupported,
                "weft: the primary ULT's local values can only be set from the primary thread");
  }
  set_in(slot, value);
}

void local_key::set_in(detail::local_table** slot, void* value) const {
  key_slot* s = valid() ? detail::registry().find(index_) : nullptr;
  if (!s || s->generation.load(std::memory_order_acquire) != generation_) {
    throw error(errc::invalid_state, "weft: local_key::set on an invalid or deleted key");
  }
  if (!*slot) *slot = new local_table;
  local_table& t = **slot;
  if (index_ >= t.entries.size()) t.entries.resize(index_ + 1);
  t.entries[index_] = {value, generation_};
}

}  // namespace weft
