// SPDX-License-Identifier: Apache-2.0
// ULT stacks. Stacks of one size are carved from arenas, each one anonymous mapping holding many
// stack slots, so that the number of mappings does not grow with the number of live ULTs except
// for guard pages: a guard page needs an mprotect that splits the mapping (two VMAs per stack), so
// only the first stacks, up to a budget well below vm.max_map_count, get one; past it, arenas are
// never split and each stack is checked with a canary word instead.
//
// Slot layout. Every slot is one page plus the stack size. In a guarded arena the page is the
// guard page below the stack. In a canary arena (which begins with one spare page) the stack is
// shifted up by all but 64 bytes of that page: its top ends 64 bytes below the next slot, and its
// canary is the last word of the previous slot, 64 bytes above the previous stack's top. A canary
// then shares a page with the top frames of the stack below, a page that stack touches anyway, so
// canaries cost no resident memory; and a stack's top frames (up to 4032 bytes) fit in one page.
#include "memory/stack.hpp"

#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "core/runtime_state.hpp"
#include "core/unit_extras.hpp"
#include "observe/observe.hpp"
#include "platform/assert.hpp"
#include "platform/locks.hpp"
#include "platform/sanitizer.hpp"
#include "platform/valgrind.hpp"
#include "weft/error.hpp"

namespace weft::detail {

namespace {

constexpr std::uint64_t canary_value = 0x5745465453544b21ull;  // "WEFTSTK!"
/// Room left above a canary stack's top for the next slot's canary.
constexpr std::size_t canary_gap = 64;
/// Target sizes of an arena's mapping. Guarded arenas are small because every slot costs two
/// VMAs anyway; canary arenas are large so that 10^7 live stacks still need few mappings.
constexpr std::size_t guarded_arena_bytes = std::size_t{1} << 20;
constexpr std::size_t canary_arena_bytes = std::size_t{16} << 20;
constexpr std::size_t max_guarded_slots = 64;
constexpr std::size_t max_canary_slots = 1024;
/// Free stacks of one size (in bytes) kept whatever their age; four times as many free resident
/// stacks in arenas still in use trigger a MADV_DONTNEED pass over them, at most once per
/// drop_interval_ns: a program that frees thousands of stacks and takes them again at once (a
/// wide fan-out or a FIFO fork-join, round after round) would otherwise pay a pass, TLB
/// shootdowns and a page fault per stack every round (10x a ULT's cost); one that stopped using
/// them still gets the pages back at its next such give.
constexpr std::size_t keep_bytes = std::size_t{8} << 20;
constexpr std::uint64_t drop_interval_ns = 1'000'000'000;
/// An arena left empty this long is unmapped (at the next refill or drain of any stream). Deep
/// recursions that come back within it reuse its pages: a first touch of a page costs far more
/// than a ULT (tens of microseconds in some VMs).
constexpr std::uint64_t empty_arena_ttl_ns = 10'000'000'000;

std::uint64_t coarse_now_ns() noexcept {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(t.tv_nsec);
}

std::atomic<bool> warned_no_guard{false};

/// The canary of a stack: the word just below the page that holds its lowest byte.
char* canary_of(const void* lo) noexcept {
  const auto page_start = reinterpret_cast<std::uintptr_t>(lo) / page_size() * page_size();
  return reinterpret_cast<char*>(page_start) - sizeof canary_value;
}

void write_canary(const void* lo) noexcept {
  std::memcpy(canary_of(lo), &canary_value, sizeof canary_value);
}

void warn_no_guard(const char* why) noexcept {
  if (warned_no_guard.exchange(true)) return;
  std::fprintf(stderr,
               "weft: warning: %s; further ULT stacks are checked with canaries instead of guard "
               "pages (see vm.max_map_count and WEFT_STACK_GUARDS)\n",
               why);
}

/// vm.max_map_count, read once (65530, the kernel's default, when unreadable).
std::size_t max_map_count() noexcept {
  static const std::size_t value = [] {
    std::size_t v = 0;
    std::ifstream in("/proc/sys/vm/max_map_count");
    if (!(in >> v) || v == 0) v = 65530;
    return v;
  }();
  return value;
}

/// A stack back in its arena. `resident`: its pages may still be in memory (not yet dropped).
struct free_slot {
  stack_region stack;
  void* parked;
  bool resident;
};

struct size_class;

/// One mapping of `nslots` slots of `slot_bytes`. Slots are carved (given a canary and a TSan
/// fiber) on first use, in address order; carved slots that are not in use sit in `free`.
struct arena {
  char* base = nullptr;
  std::size_t bytes = 0;
  std::size_t slot_bytes = 0;
  std::size_t first_slot = 0;  // offset of slot 0 in the mapping
  std::size_t lo_offset = 0;   // from a slot's start to its stack's lo
  std::size_t nslots = 0;
  std::size_t carved = 0;
  bool guarded = false;
  size_class* owner = nullptr;
  std::vector<free_slot> free;
  arena* prev = nullptr;  // the owner's list of arenas with a free or uncarved slot
  arena* next = nullptr;
  bool listed = false;
  arena* older = nullptr;  // the owner's list of unused arenas, oldest first
  arena* newer = nullptr;
  bool idle = false;
  std::uint64_t idle_since = 0;
  std::vector<unsigned> valgrind_ids;  // of the carved slots, under valgrind only

  bool has_room() const noexcept { return !free.empty() || carved < nslots; }
  bool unused() const noexcept { return free.size() == carved; }
};

/// The arenas of one stack size.
struct size_class {
  std::size_t size = 0;
  arena* with_room = nullptr;  // most recently refilled first
  arena* oldest_idle = nullptr;
  arena* newest_idle = nullptr;
  std::size_t free_stacks = 0;
  std::size_t resident_free = 0;
  std::size_t idle_free = 0;       // free stacks in unused arenas
  std::size_t keep = 0;            // free stacks kept before an empty arena is unmapped
  std::uint64_t last_drop_ns = 0;  // coarse_now_ns() of the last drop_free_pages pass
};

/// The process-wide arenas. Leaked on purpose: stream caches give stacks back during exit.
/// Its lock also guards the size classes and arenas it lists (the analysis sees only these fields).
struct depot {
  mutex lock;
  std::map<std::uintptr_t, arena*> by_address WEFT_GUARDED_BY(lock);
  std::vector<size_class*> classes WEFT_GUARDED_BY(lock);
  std::size_t arenas WEFT_GUARDED_BY(lock) = 0;
  std::size_t guarded_arenas WEFT_GUARDED_BY(lock) = 0;
  // slots of mapped guarded arenas (one guard page each)
  std::size_t guarded_slots WEFT_GUARDED_BY(lock) = 0;
  std::size_t caches WEFT_GUARDED_BY(lock) = 0;  // live stack_cache objects (0: no runtime runs)
  // the kernel refused a guard page; retried once one is freed
  bool guards_refused WEFT_GUARDED_BY(lock) = false;
};

depot& the_depot() noexcept {
  static depot* d = new depot;
  return *d;
}

/// Most guarded slots at once: WEFT_STACK_GUARDS, or 3/8 of vm.max_map_count (each costs two
/// mappings, so guard pages alone stay under 3/4 of the limit and the rest of the process keeps a
/// quarter of it).
std::size_t guard_limit() noexcept {
  if (g_runtime && g_runtime->cfg().stack_guards >= 0)
    return static_cast<std::size_t>(g_runtime->cfg().stack_guards);
  return max_map_count() / 8 * 3;
}

bool guard_limit_is_automatic() noexcept {
  return !(g_runtime && g_runtime->cfg().stack_guards >= 0);
}

void link_front(size_class& c, arena* a) noexcept {
  assert_invariant([a] { return !a->listed && a->has_room(); },
                   "stack depot: an arena is listed once, while it has room");
  a->prev = nullptr;
  a->next = c.with_room;
  if (c.with_room) c.with_room->prev = a;
  c.with_room = a;
  a->listed = true;
}

void unlink(size_class& c, arena* a) noexcept {
  if (!a->listed) return;
  assert_invariant([&c, a] { return a->prev ? a->prev->next == a : c.with_room == a; },
                   "stack depot: a listed arena is reachable from its predecessor");
  if (a->prev) a->prev->next = a->next;
  if (a->next) a->next->prev = a->prev;
  if (c.with_room == a) c.with_room = a->next;
  a->prev = a->next = nullptr;
  a->listed = false;
}

void mark_idle(size_class& c, arena* a) noexcept {
  assert_invariant([a] { return !a->idle && a->unused(); },
                   "stack depot: only an unused arena goes on the idle list, once");
  a->idle = true;
  a->idle_since = coarse_now_ns();
  a->older = c.newest_idle;
  a->newer = nullptr;
  if (c.newest_idle)
    c.newest_idle->newer = a;
  else
    c.oldest_idle = a;
  c.newest_idle = a;
  c.idle_free += a->free.size();
}

void unmark_idle(size_class& c, arena* a) noexcept {
  if (!a->idle) return;
  assert_invariant([a] { return a->unused(); },
                   "stack depot: an idle arena has no stack in use (none comes back to it)");
  if (a->older)
    a->older->newer = a->newer;
  else
    c.oldest_idle = a->newer;
  if (a->newer)
    a->newer->older = a->older;
  else
    c.newest_idle = a->older;
  a->older = a->newer = nullptr;
  a->idle = false;
  assert_invariant([&c, a] { return c.idle_free >= a->free.size(); },
                   "stack depot: idle_free counts the free stacks of idle arenas");
  c.idle_free -= a->free.size();
}

size_class& class_of(depot& d, std::size_t size) WEFT_REQUIRES(d.lock) {
  for (size_class* c : d.classes)
    if (c->size == size) return *c;
  auto* c = new size_class;
  c->size = size;
  d.classes.push_back(c);
  return *c;
}

/// Maps an arena's memory; nullptr when the kernel refuses.
char* map_memory(std::size_t bytes) noexcept {
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  return base == MAP_FAILED ? nullptr : static_cast<char*>(base);
}

/// Sets one guard page per slot; false (and the arena unchanged in use) when the kernel refuses.
bool protect_guards(const arena& a) noexcept {
  for (std::size_t i = 0; i < a.nslots; ++i) {
    if (mprotect(a.base + i * a.slot_bytes, page_size(), PROT_NONE) != 0) return false;
  }
  return true;
}

arena* map_arena(depot& d, size_class& c) WEFT_REQUIRES(d.lock) {
  const std::size_t page = page_size();
  // Out of memory is a resource failure like a refused mapping: the ULT's join reports it.
  auto* a = new (std::nothrow) arena;
  if (!a) throw_resource("weft: cannot allocate a ULT stack arena: out of memory");
  a->owner = &c;
  const std::size_t limit = guard_limit();
  const std::size_t guarded_slots =
      std::clamp<std::size_t>(guarded_arena_bytes / (c.size + page), 1, max_guarded_slots);
  a->guarded = !d.guards_refused && d.guarded_slots + guarded_slots <= limit;
  if (a->guarded) {
    a->slot_bytes = c.size + page;
    a->lo_offset = page;
    a->nslots = guarded_slots;
    a->bytes = a->nslots * a->slot_bytes;
    a->base = map_memory(a->bytes);
    if (a->base && !protect_guards(*a)) {
      // Something else in the process took the mappings: use canaries from now on.
      char why[128];
      std::snprintf(why, sizeof why, "the kernel refused a stack guard page (%s)",
                    std::strerror(errno));
      munmap(a->base, a->bytes);
      a->base = nullptr;
      a->guarded = false;
      d.guards_refused = true;
      warn_no_guard(why);
    } else if (!a->base) {
      const int e = errno;
      delete a;
      throw_resource("weft: cannot map a ULT stack arena", e);
    }
  } else if (guard_limit_is_automatic()) {
    char why[160];
    std::snprintf(why, sizeof why,
                  "%zu ULT stacks have guard pages, which is close to vm.max_map_count (%zu)",
                  d.guarded_slots, max_map_count());
    warn_no_guard(why);
  }
  if (!a->guarded) {
    a->slot_bytes = c.size + page;
    a->first_slot = page;  // holds slot 0's canary
    a->lo_offset = page - canary_gap;
    a->nslots = std::clamp<std::size_t>(canary_arena_bytes / a->slot_bytes, 1, max_canary_slots);
    a->bytes = a->first_slot + a->nslots * a->slot_bytes;
    a->base = map_memory(a->bytes);
    if (!a->base) {
      const int e = errno;
      delete a;
      throw_resource("weft: cannot map a ULT stack arena", e);
    }
    // Only in case transparent huge pages are on for every mapping: a 2 MiB fault would make
    // every stack in it resident at once.
    madvise(a->base, a->bytes, MADV_NOHUGEPAGE);
  }
  try {
    a->free.reserve(a->nslots);
    if (on_valgrind()) a->valgrind_ids.reserve(a->nslots);
    d.by_address.emplace(reinterpret_cast<std::uintptr_t>(a->base), a);
  } catch (...) {
    munmap(a->base, a->bytes);
    delete a;
    throw_resource("weft: cannot record a ULT stack arena: out of memory");
  }
  obs::mapped_stacks(a->nslots);
  ++d.arenas;
  if (a->guarded) {
    ++d.guarded_arenas;
    d.guarded_slots += a->nslots;
  }
  c.keep = std::max(c.keep, std::max(keep_bytes / a->slot_bytes, a->nslots));
  return a;
}

/// Gives a slot its stack_region the first time it is used.
stack_region carve(arena& a) noexcept {
  assert_invariant([&a] { return a.carved < a.nslots; },
                   "stack depot: a slot is carved once, within its arena");
  stack_region s;
  s.lo = a.base + a.first_slot + a.carved * a.slot_bytes + a.lo_offset;
  s.size = static_cast<std::uint32_t>(a.owner->size);  // sizes are at most 2 GiB (allocate_unit)
  s.flags = stack_arena | (a.guarded ? stack_guarded : stack_canary);
  if (!a.guarded) write_canary(s.lo);
  // Reserved for every slot in map_arena, so this cannot allocate.
  if (const unsigned id = valgrind_register_stack(s.lo, s.size)) a.valgrind_ids.push_back(id);
  // No TSan fiber yet: a refill carves a batch, most of which may never run a ULT, and each
  // fiber costs TSan a thread context. prepare_first_run() creates it on first use.
  set_tsan_fiber(s, nullptr);
  ++a.carved;
  return s;
}

/// Forgets the context parked on a free stack and lets the kernel drop its pages. The partial
/// pages at either end are kept: they hold a neighbour's top frames or canary.
void drop_pages(free_slot& f) noexcept {
  const std::size_t page = page_size();
  const auto lo = reinterpret_cast<std::uintptr_t>(f.stack.lo);
  const std::uintptr_t first = (lo + page - 1) / page * page;
  const std::uintptr_t last = (lo + f.stack.size) / page * page;
  asan_unpoison(f.stack.lo, f.stack.size);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
  if (f.parked) {
    // A new context will be built on this stack: it gets a fresh TSan fiber on first use.
    tsan_destroy_fiber(tsan_fiber(f.stack));
    set_tsan_fiber(f.stack, nullptr);
    f.parked = nullptr;
  }
  f.resident = false;
}

void unmap_arena(depot& d, arena* a) noexcept WEFT_REQUIRES(d.lock) {
  assert_invariant([a] { return a->unused(); },
                   "invariant 9: an arena is unmapped only when none of its stacks is in use");
  size_class& c = *a->owner;
  // The lock's reads stay outside the lambda, which the thread-safety analysis sees as unlocked.
  assert_invariant(
      [&c, a, arenas = d.arenas] { return c.free_stacks >= a->free.size() && arenas > 0; },
      "stack depot: the counts include the arena being unmapped");
  for (const free_slot& f : a->free) {
    tsan_destroy_fiber(tsan_fiber(f.stack));
    if (f.resident) --c.resident_free;
  }
  unmark_idle(c, a);
  c.free_stacks -= a->free.size();
  unlink(c, a);
  d.by_address.erase(reinterpret_cast<std::uintptr_t>(a->base));
  --d.arenas;
  if (a->guarded) {
    assert_invariant([a, arenas = d.guarded_arenas,
                      slots = d.guarded_slots] { return arenas > 0 && slots >= a->nslots; },
                     "stack depot: the guard counts include the guarded arena being unmapped");
    --d.guarded_arenas;
    d.guarded_slots -= a->nslots;
    d.guards_refused = false;
  }
  for (const unsigned id : a->valgrind_ids) valgrind_deregister_stack(id);
  // Frames left by parked contexts are never unwound: the next mapping here must not inherit
  // their poison.
  asan_unpoison(a->base, a->bytes);
  munmap(a->base, a->bytes);
  delete a;
}

/// Drops the pages of the free stacks in arenas still in use (unused ones age out whole).
void drop_free_pages(size_class& c) noexcept {
  for (arena* a = c.with_room; a; a = a->next) {
    if (a->idle) continue;
    for (free_slot& f : a->free) {
      if (!f.resident) continue;
      assert_invariant([&c] { return c.resident_free > 0; },
                       "stack depot: resident_free counts every resident free stack");
      drop_pages(f);
      --c.resident_free;
    }
  }
}

/// Unmaps the arenas of `c` left unused for longer than empty_arena_ttl_ns, oldest first, while
/// more than c.keep free stacks remain.
void age_out(depot& d, size_class& c) noexcept WEFT_REQUIRES(d.lock) {
  if (!c.oldest_idle) return;
  const std::uint64_t now = coarse_now_ns();
  while (arena* a = c.oldest_idle) {
    assert_invariant([a] { return a->idle && a->unused(); },
                     "stack depot: the idle list holds unused arenas only");
    if (now - a->idle_since < empty_arena_ttl_ns) break;
    if (c.free_stacks - a->free.size() < c.keep) break;
    unmap_arena(d, a);
  }
}

/// After the last cache is gone no runtime runs: unmap every unused arena and forget every
/// parked context (the next runtime builds its own).
void release_all(depot& d) noexcept WEFT_REQUIRES(d.lock) {
  for (auto it = d.by_address.begin(); it != d.by_address.end();) {
    arena* a = it->second;
    ++it;
    if (a->unused()) {
      unmap_arena(d, a);
    } else {
      for (free_slot& f : a->free) {
        if (!f.resident) continue;
        assert_invariant([a] { return a->owner->resident_free > 0; },
                         "stack depot: resident_free counts every resident free stack");
        drop_pages(f);
        --a->owner->resident_free;
      }
    }
  }
}

arena* arena_of(depot& d, const void* lo) noexcept WEFT_REQUIRES(d.lock) {
  auto it = d.by_address.upper_bound(reinterpret_cast<std::uintptr_t>(lo));
  if (it == d.by_address.begin()) return nullptr;
  --it;
  arena* a = it->second;
  return static_cast<const char*>(lo) < a->base + a->bytes ? a : nullptr;
}

}  // namespace

std::size_t page_size() noexcept {
  static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

std::size_t round_to_pages(std::size_t bytes) noexcept {
  const std::size_t page = page_size();
  if (bytes == 0) return page;
  return (bytes + page - 1) / page * page;
}

std::size_t take_arena_stacks(std::size_t size, cached_stack* out, std::size_t want) {
  assert_invariant(
      [size, want] {
        return want > 0 && size > 0 && size % page_size() == 0 && size <= max_stack_size;
      },
      "stack depot: stacks are taken in whole pages, at most 2 GiB, at least one");
  depot& d = the_depot();
  lock_guard guard(d.lock);
  size_class& c = class_of(d, size);
  std::size_t got = 0;
  while (got < want) {
    arena* a = c.with_room;
    if (!a) {
      if (got > 0) break;  // a refill does not map an arena for stacks it may never use
      a = map_arena(d, c);
      link_front(c, a);
    }
    unmark_idle(c, a);
    while (got < want && !a->free.empty()) {
      const free_slot& f = a->free.back();
      assert_invariant([&] { return c.free_stacks > 0 && (!f.resident || c.resident_free > 0); },
                       "stack depot: a size class counts every free stack of its arenas");
      out[got++] = {f.stack, f.parked};
      --c.free_stacks;
      if (f.resident) --c.resident_free;
      a->free.pop_back();
    }
    while (got < want && a->carved < a->nslots) out[got++] = {carve(*a), nullptr};
    if (!a->has_room()) unlink(c, a);
  }
  age_out(d, c);
  return got;
}

void give_arena_stacks(const cached_stack* stacks, std::size_t n) noexcept {
  depot& d = the_depot();
  lock_guard guard(d.lock);
  size_class* last = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    arena* a = arena_of(d, stacks[i].stack.lo);
    // invariant 9: a stack comes back once, to the arena it was carved from, while it is in use.
    assert_invariant([&] { return a && a->free.size() + 1 <= a->carved; },
                     "invariant 9: a stack returned to the depot that is not in use in an arena");
    assert_invariant([&stacks, i] { return parked_on(stacks[i].stack, stacks[i].parked); },
                     "invariant 9: a free stack's parked context lies on it");
    if (!a) continue;  // only arena stacks carry stack_arena
    size_class& c = *a->owner;
    last = &c;
    a->free.push_back({stacks[i].stack, stacks[i].parked, true});
    ++c.free_stacks;
    ++c.resident_free;
    if (!a->listed) link_front(c, a);
    if (a->unused()) {
      if (d.caches == 0)
        unmap_arena(d, a);
      else
        mark_idle(c, a);
    }
  }
  if (!last) return;
  if (last->resident_free > last->idle_free + 4 * last->keep) {
    const std::uint64_t now = coarse_now_ns();
    if (now - last->last_drop_ns >= drop_interval_ns) {
      drop_free_pages(*last);
      last->last_drop_ns = now;
    }
  }
  age_out(d, *last);
}

stack_arena_stats arena_stats() noexcept {
  depot& d = the_depot();
  lock_guard guard(d.lock);
  stack_arena_stats s;
  s.arenas = d.arenas;
  s.guarded_arenas = d.guarded_arenas;
  s.guarded_stacks = d.guarded_slots;
  for (const size_class* c : d.classes) s.free_stacks += c->free_stacks;
  s.guard_limit = guard_limit();
  return s;
}

namespace {

/// Valgrind's ids of the stacks mapped one by one (map_stack), by their lo; used only under
/// valgrind, where a lock and a map per stack cost nothing that matters.
struct valgrind_stacks {
  std::mutex lock;
  std::map<const void*, unsigned> ids;
};

valgrind_stacks& the_valgrind_stacks() {
  static auto* v = new valgrind_stacks;  // leaked: stacks are unmapped during exit
  return *v;
}

void remember_valgrind_id(const void* lo, unsigned id) {
  valgrind_stacks& v = the_valgrind_stacks();
  std::lock_guard guard(v.lock);
  v.ids[lo] = id;
}

unsigned forget_valgrind_id(const void* lo) noexcept {
  valgrind_stacks& v = the_valgrind_stacks();
  std::lock_guard guard(v.lock);
  const auto it = v.ids.find(lo);
  if (it == v.ids.end()) return 0;
  const unsigned id = it->second;
  v.ids.erase(it);
  return id;
}

}  // namespace

stack_region map_stack(std::size_t size) {
  const std::size_t page = page_size();
  size = round_to_pages(size);
  if (size > max_stack_size) {
    throw error(errc::invalid_config,
                "weft: a stack of " + std::to_string(size) + " bytes is larger than 2 GiB");
  }
  void* base = mmap(nullptr, size + page, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (base == MAP_FAILED) {
    throw_resource("weft: cannot map a ULT stack", errno);
  }
  obs::mapped_stacks(1);
  stack_region s;
  s.lo = static_cast<char*>(base) + page;
  s.size = static_cast<std::uint32_t>(size);
  if (mprotect(base, page, PROT_NONE) == 0) {
    s.flags = stack_guarded;
  } else {
    // Each guard page splits the mapping; past vm.max_map_count the kernel refuses. A canary
    // (in the unprotected page below) still turns an overflow into a clear report.
    s.flags = stack_canary;
    write_canary(s.lo);
    char why[128];
    std::snprintf(why, sizeof why, "the kernel refused a stack guard page (%s)",
                  std::strerror(errno));
    warn_no_guard(why);
  }
  set_tsan_fiber(s, tsan_create_fiber());
  if (const unsigned id = valgrind_register_stack(s.lo, s.size)) remember_valgrind_id(s.lo, id);
  return s;
}

namespace {

/// Describes a stack the runtime did not map. A stack_region holds at most max_stack_size: a
/// larger stack is described by its top, where a stack starts (nothing below is checked anyway:
/// such stacks have no guard page).
stack_region describe_stack(void* lo, std::size_t size, std::uint32_t flags,
                            void* tsan_fiber) noexcept {
  if (size > max_stack_size) {
    lo = static_cast<char*>(lo) + (size - max_stack_size);
    size = max_stack_size;
  }
  stack_region st;
  st.lo = lo;
  st.size = static_cast<std::uint32_t>(size);
  st.flags = flags;
  set_tsan_fiber(st, tsan_fiber);
  return st;
}

}  // namespace

stack_bounds native_stack_bounds() noexcept {
  void* lo = nullptr;
  std::size_t size = 0;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    if (pthread_attr_getstack(&attr, &lo, &size) != 0) {
      lo = nullptr;
      size = 0;
    }
    pthread_attr_destroy(&attr);
  }
  if (!lo) return {};
  const auto l = reinterpret_cast<std::uintptr_t>(lo);
  return {l, l + size};
}

stack_region native_stack() noexcept {
  const stack_bounds b = native_stack_bounds();
  return describe_stack(reinterpret_cast<void*>(b.lo), b.hi - b.lo, stack_foreign,
                        tsan_current_fiber());
}

void set_user_stack(work_unit* u, void* lo, std::size_t size) noexcept {
  as_unit(u)->stack = describe_stack(lo, size, stack_user, tsan_create_fiber());
}

void unmap_stack(const stack_region& s) noexcept {
  // Nothing mapped (init failing before the primary's scheduler stack was mapped), or not ours.
  if (!s.lo || (s.flags & stack_foreign)) return;
  if (s.flags & stack_arena) {
    const cached_stack c{s, nullptr};
    give_arena_stacks(&c, 1);
    return;
  }
  assert_invariant(
      [&s] {
        return (s.flags & (stack_guarded | stack_canary)) &&
               !(s.flags & (stack_user | stack_borrowed));
      },
      "invariant 9: only a stack map_stack made is unmapped whole");
  tsan_destroy_fiber(tsan_fiber(s));
  if (on_valgrind()) valgrind_deregister_stack(forget_valgrind_id(s.lo));
  asan_unpoison(s.lo, s.size);
  const std::size_t page = page_size();
  munmap(static_cast<char*>(s.lo) - page, s.size + page);
}

bool stack_intact(const stack_region& s) noexcept {
  if (!(s.flags & stack_canary)) return true;
  std::uint64_t word;
  std::memcpy(&word, canary_of(s.lo), sizeof word);
  return word == canary_value;
}

stack_cache::stack_cache(std::size_t default_request, std::size_t reserve) noexcept
    : default_request_(default_request), default_size_(default_request + reserve) {
  assert_invariant(
      [default_request, reserve] {
        return default_request > 0 && default_request % page_size() == 0 &&
               reserve % page_size() == 0;
      },
      "stack cache: the default size and the reserve are whole pages (runtime_state rounds them)");
  depot& d = the_depot();
  lock_guard guard(d.lock);
  ++d.caches;
}

stack_cache::~stack_cache() {
  clear();
  depot& d = the_depot();
  lock_guard guard(d.lock);
  // The count is read here, under the lock (the analysis does not follow it into the lambda).
  assert_invariant([n = d.caches] { return n > 0; }, "stack depot: a stack cache is counted once");
  if (--d.caches == 0) release_all(d);
}

void stack_cache::refill() {
  assert_invariant([this] { return count_ == 0; },
                   "stack cache: only an empty cache is refilled (a refill overwrites it)");
  count_ = take_arena_stacks(default_size_, free_, batch);
}

void stack_cache::drain() noexcept {
  // The oldest half goes: the top of the LIFO is the warmest in the CPU's caches.
  assert_invariant([this] { return count_ >= batch; },
                   "stack cache: a drain gives back a batch the cache holds");
  give_arena_stacks(free_, batch);
  std::move(free_ + batch, free_ + count_, free_);
  count_ -= batch;
}

void* stack_cache::acquire_other(std::size_t size, stack_region& out) {
  // An empty second LIFO takes the size asked for now: a program that changes its size once
  // moves with it, one that mixes sizes pays the arenas' lock only for the sizes it mixes in.
  if (other_count_ == 0) {
    other_size_ = size;
    other_limit_ = std::clamp<std::size_t>(other_budget / size, 2, other_capacity);
    other_count_ = take_arena_stacks(size, other_free_, other_limit_ / 2);
  } else if (size != other_size_) {
    cached_stack c;
    take_arena_stacks(size, &c, 1);
    out = c.stack;
    return c.parked;
  }
  assert_invariant([this] { return other_count_ > 0 && other_count_ <= other_limit_; },
                   "stack cache: a refill leaves stacks to take");
  const cached_stack& c = other_free_[--other_count_];
  assert_invariant([&c, size] { return c.stack.lo && c.stack.size == size; },
                   "invariant 9: a stack of the second LIFO has its size");
  out = c.stack;
  return c.parked;
}

void stack_cache::release_other(const stack_region& s, void* parked) noexcept {
  if (s.size != other_size_) {
    const cached_stack c{s, parked};
    give_arena_stacks(&c, 1);
    return;
  }
  if (other_count_ == other_limit_) {
    const std::size_t half = other_limit_ / 2;
    assert_invariant([half] { return half > 0; },
                     "stack cache: the second LIFO holds at least 2 stacks, so a drain frees one");
    give_arena_stacks(other_free_, half);  // the oldest half, as drain()
    std::move(other_free_ + half, other_free_ + other_count_, other_free_);
    other_count_ -= half;
  }
  assert_invariant([this, &s] { return not_cached(other_free_, other_count_, s.lo); },
                   "invariant 9: a stack enters its stream's cache once");
  other_free_[other_count_++] = {s, parked};
}

void stack_cache::clear() noexcept {
  give_arena_stacks(free_, count_);
  count_ = 0;
  give_arena_stacks(other_free_, other_count_);
  other_count_ = 0;
}

}  // namespace weft::detail
