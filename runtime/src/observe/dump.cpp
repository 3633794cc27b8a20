// SPDX-License-Identifier: Apache-2.0
// Unit dumps. The registry of live units is what the runtime keeps anyway: every descriptor lies
// in a slab of the unit allocator, and a descriptor is live from its creation until it
// terminates, so creating a unit costs nothing more for dumps to find it. What a blocked unit
// waits for comes from its own record (wait_kind_of) or, for a join, from the joined unit's join
// word, which points back at the joiner.
#include "observe/dump.hpp"

#include <cxxabi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <sstream>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "core/runtime_state.hpp"
#include "core/stream.hpp"
#include "core/unit_extras.hpp"
#include "memory/unit_cache.hpp"
#include "platform/assert.hpp"
#include "platform/backtrace.hpp"
#include "platform/sanitizer.hpp"
#include "weft/debug.hpp"
#include "weft/error.hpp"
#include "weft/scheduler.hpp"
#include "weft/wait_queue.hpp"

namespace weft::detail {

namespace {

const char* kind_name(unit_kind k) noexcept {
  return k == unit_kind::ult ? "ULT" : "tasklet";
}

const char* state_name(unit_state s) noexcept {
  switch (s) {
    case unit_state::ready:
      return "ready";
    case unit_state::running:
      return "running";
    case unit_state::blocked:
      return "blocked";
    case unit_state::terminated:
      return "terminated";
  }
  return "?";
}

const char* stream_state_name(std::uint32_t s) noexcept {
  switch (static_cast<stream_state>(s)) {
    case stream_state::running:
      return "running";
    case stream_state::terminating:
      return "terminating";
    case stream_state::terminated:
      return "terminated";
  }
  return "?";
}

/// The labels of the kinds client_wait_kind() handed out, from wait_kind::client on: each is
/// written once, under client_wait_mutex, and read by dumps without it.
constexpr unsigned max_client_wait_kinds = 16;
static_assert(static_cast<unsigned>(wait_kind::client) + max_client_wait_kinds <=
                  (0xffu >> unit_wait_shift) + 1,
              "every client kind fits the bits of unit::flags that record a wait");
std::atomic<const char*> client_wait_labels[max_client_wait_kinds] = {};
std::mutex client_wait_mutex;

/// The names of the kinds below wait_kind::client, indexed by value (0 records no wait), in the
/// enumeration's order. A table rather than a switch: a debugger reads it from a core file
/// (weft_debug_info).
constexpr const char* wait_kind_names[] = {
    nullptr,         "a wait queue", "mutex",   "condition variable",
    "rwlock",        "semaphore",    "barrier", "channel",
    "eventual",      "future",       "sleep",   "join of an execution stream",
    "resize request"};
static_assert(std::size(wait_kind_names) == static_cast<std::size_t>(wait_kind::client),
              "every wait_kind below client has a name");
static_assert(static_cast<int>(wait_kind::mutex) == 2 && static_cast<int>(wait_kind::resize) == 12,
              "wait_kind_names follows the enumeration");

const char* wait_kind_name(std::uint8_t k) noexcept {
  if (k < std::size(wait_kind_names)) return wait_kind_names[k];
  if (k >= static_cast<std::uint8_t>(wait_kind::client) &&
      k < static_cast<std::uint8_t>(wait_kind::client) + max_client_wait_kinds) {
    if (const char* label =
            client_wait_labels[k - static_cast<std::uint8_t>(wait_kind::client)].load(
                std::memory_order_acquire))
      return label;
    return "a client layer's wait";
  }
  return nullptr;
}

/// The dynamic type of `obj`, demangled ("weft::fifo_pool").
template <class T>
std::string type_name(const T& obj) {
  const char* mangled = typeid(obj).name();
  int status = -1;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : mangled;
  std::free(d);
  return out;
}

std::string address(const void* p) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

/// Every descriptor of `r` that is live (handed out and not terminated).
template <class F>
void for_each_live(runtime_state& r, bool wait, F f) {
  for (const auto& [first, count] : r.units().slabs(wait)) {
    for (std::size_t i = 0; i < count; ++i) {
      unit* u = first + i;
      // Descriptors never handed out have id 0; freed ones are terminated.
      if (u->id == 0 || u->state.load(std::memory_order_acquire) == unit_state::terminated)
        continue;
      f(u);
    }
  }
}

/// A join word that holds a ULT joiner (rather than a sentinel or a tagged external waiter).
work_unit* joiner_of(const work_unit* u) noexcept {
  const std::uintptr_t w = as_unit(u)->join_word.load(std::memory_order_acquire);
  if (w == join_none || w == join_done || w == join_detached) return nullptr;
  if (w % alignof(unit) != 0) return nullptr;  // an external thread's waiter
  return reinterpret_cast<work_unit*>(w);
}

bool external_joiner(const work_unit* u) noexcept {
  const std::uintptr_t w = as_unit(u)->join_word.load(std::memory_order_acquire);
  return w != join_none && w != join_done && w != join_detached && w % alignof(unit) != 0;
}

void write_streams(std::ostream& out, runtime_state& r, bool wait) {
  r.streams().for_each(
      [&out](stream& s) {
        out << "stream " << s.rank() << (s.is_primary() ? " (primary)" : "") << ": "
            << stream_state_name(static_cast<std::uint32_t>(s.state()));
        if (s.is_parked()) out << ", parked";
        if (const work_unit* c = s.current()) {
          out << ", running unit " << as_unit(c)->id;
        } else {
          out << ", in its scheduler";
        }
        out << '\n';
        if (scheduler* sc = s.installed_scheduler()) {
          out << "  scheduler " << type_name(*sc) << '\n';
          for (const auto& p : sc->pools()) {
            out << "  pool " << address(p.get()) << " (" << type_name(*p) << "): " << p->size()
                << " queued\n";
          }
        }
      },
      wait);
}

void write_unit(std::ostream& out, const work_unit* u,
                const std::unordered_map<const work_unit*, const work_unit*>& joined_by,
                bool backtraces) {
  const unit_state st = as_unit(u)->state.load(std::memory_order_acquire);
  out << "unit " << as_unit(u)->id << ' ' << kind_name(as_unit(u)->kind) << ' ' << state_name(st);
  if (st == unit_state::blocked) {
    out << ": ";
    const auto it = joined_by.find(u);
    if (as_unit(u)->kind == unit_kind::ult && !as_unit(u)->context) {
      // A blocked ULT has a saved context unless a unit it joins runs on its stack.
      out << "join of a unit running on its stack";
      if (it != joined_by.end()) out << " (unit " << as_unit(it->second)->id << ")";
    } else if (it != joined_by.end()) {
      out << "join of unit " << as_unit(it->second)->id;
    } else if (as_unit(u)->user_suspended.load(std::memory_order_acquire)) {
      out << "suspended (this_unit::suspend)";
    } else if (const char* what = wait_kind_name(wait_kind_of(u))) {
      out << what;
    } else {
      out << "switched out";
    }
  }
  if (external_joiner(u)) out << " (joined by a thread outside weft)";
  out << '\n';
  // ult_attributes::name, interned for the life of the process: the pointer stays valid.
  if (const unit_extras* x = extras_of(u); x && x->name) out << "  name " << x->name << '\n';
  if (const pool* home = as_unit(u)->home.load(std::memory_order_relaxed))
    out << "  pool " << address(home) << '\n';
  if (const execution_stream* s = as_unit(u)->last_stream.load(std::memory_order_relaxed)) {
    out << (st == unit_state::running ? "  on stream " : "  last ran on stream ") << impl(*s).rank()
        << '\n';
  } else if (st != unit_state::running) {
    out << "  not started\n";
  }
  if (const execution_stream* pin = as_unit(u)->pinned_to.load(std::memory_order_relaxed))
    out << "  pinned to stream " << impl(*pin).rank() << '\n';
  if (backtraces && as_unit(u)->kind == unit_kind::ult && st != unit_state::running &&
      as_unit(u)->context) {
    out << "  backtrace:\n";
    write_saved_backtrace(out, as_unit(u)->context, "    ");
  }
}

}  // namespace

void write_dump(std::ostream& out, runtime_state& r, const dump_options& what) {
  // A snapshot of running streams: its reads race with the streams' writes by design.
  const tsan_ignore_reads racy;
  if (what.streams) write_streams(out, r, what.wait_for_locks);
  if (!what.units) return;
  std::vector<const work_unit*> live;
  std::unordered_map<const work_unit*, const work_unit*> joined_by;  // joiner -> joined
  for_each_live(r, what.wait_for_locks, [&](work_unit* u) {
    if (u != what.skip) live.push_back(u);
    if (const work_unit* j = joiner_of(u)) joined_by.emplace(j, u);
  });
  out << live.size() << (live.size() == 1 ? " live unit\n" : " live units\n");
  for (const work_unit* u : live) write_unit(out, u, joined_by, what.backtraces);
}

std::size_t count_live_units(runtime_state& r, const work_unit* except) {
  const tsan_ignore_reads racy;
  std::size_t n = 0;
  for_each_live(r, true, [&](work_unit* u) { n += u != except; });
  return n;
}

}  // namespace weft::detail

namespace weft {

wait_kind client_wait_kind(const char* label) noexcept {
  detail::assert_invariant([label] { return label != nullptr; },
                           "client_wait_kind: a label is a string (dumps print it)");
  const std::lock_guard lock(detail::client_wait_mutex);
  for (unsigned i = 0; i < detail::max_client_wait_kinds; ++i) {
    const char* l = detail::client_wait_labels[i].load(std::memory_order_relaxed);
    if (!l) {
      detail::client_wait_labels[i].store(label, std::memory_order_release);
    } else if (std::strcmp(l, label) != 0) {
      continue;
    }
    return static_cast<wait_kind>(static_cast<unsigned>(wait_kind::client) + i);
  }
  return wait_kind::client;
}

void dump_units(std::ostream& out) {
  detail::runtime_state& r = detail::rt();
  std::ostringstream text;  // one write: a dump is not interleaved with other output
  text << "weft: unit dump\n";
  detail::write_dump(text, r, {});
  out << text.str() << std::flush;
}

}  // namespace weft

// What tools/gdb/weft_gdb.py uses: functions it calls in a stopped process, and a table it reads
// where it cannot call (a core file). C linkage: gdb finds them without debug information.
extern "C" {

/// The dump as text (what: 1 streams, 2 units, 4 backtraces), valid until the next call; an
/// empty string when weft is not initialised.
[[gnu::visibility("default"), gnu::used]] const char* weft_debug_dump(int what) {
  static std::string text;
  text.clear();
  if (weft::detail::runtime_state* r = weft::detail::g_runtime) {
    std::ostringstream out;
    weft::detail::write_dump(out, *r, {(what & 1) != 0, (what & 2) != 0, (what & 4) != 0, false});
    text = out.str();
  }
  return text.c_str();
}

/// Where a debugger that cannot call into the process (a core file: tools/gdb/weft_gdb.py) finds
/// the unit descriptors and how they are laid out. uint32 fields first, then pointers; `version`
/// changes whenever a field or its meaning does.
struct weft_debug_layout {
  std::uint32_t version;
  std::uint32_t unit_size;  // a descriptor (they lie in arrays, the slabs)
  std::uint32_t unit_align;
  std::uint32_t unit_id;              // offsets of its fields: uint64
  std::uint32_t unit_kind;            // uint8, weft::unit_kind
  std::uint32_t unit_state;           // uint8, weft::unit_state
  std::uint32_t unit_flags;           // uint8, the wait_kind from bit wait_shift
  std::uint32_t unit_context;         // pointer: the saved context of a parked ULT
  std::uint32_t unit_join_word;       // uintptr: 0, 1, 2 or the joiner's descriptor
  std::uint32_t unit_home;            // pointer: its pool
  std::uint32_t unit_user_suspended;  // uint8
  std::uint32_t wait_shift;
  std::uint32_t slab_size;         // a slab record
  std::uint32_t slab_memory;       // offsets of its fields: pointer to the first descriptor
  std::uint32_t slab_count;        // size_t: descriptors in it
  std::uint32_t wait_names_count;  // wait_names[k] names kind k below this
  std::uint32_t client_kinds;  // client_labels[k - wait_names_count], nullptr when not given out
  const char* const* wait_names;
  const void* client_labels;
  const void* slabs;  // the std::vector of slab records while weft is initialised, else nullptr
};

// offsetof on a class with a base is conditionally supported: GCC and Clang support it and warn.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
[[gnu::visibility("default"), gnu::used]] weft_debug_layout weft_debug_info = {
    1,
    sizeof(weft::detail::unit),
    alignof(weft::detail::unit),
    offsetof(weft::detail::unit, id),
    offsetof(weft::detail::unit, kind),
    offsetof(weft::detail::unit, state),
    offsetof(weft::detail::unit, flags),
    offsetof(weft::detail::unit, context),
    offsetof(weft::detail::unit, join_word),
    offsetof(weft::detail::unit, home),
    offsetof(weft::detail::unit, user_suspended),
    weft::detail::unit_wait_shift,
    sizeof(weft::detail::unit_allocator::slab),
    offsetof(weft::detail::unit_allocator::slab, memory),
    offsetof(weft::detail::unit_allocator::slab, count),
    std::size(weft::detail::wait_kind_names),
    weft::detail::max_client_wait_kinds,
    weft::detail::wait_kind_names,
    weft::detail::client_wait_labels,
    nullptr};
#pragma GCC diagnostic pop
static_assert(offsetof(weft_debug_layout, wait_names) == 72,
              "the pointers follow at 8-byte alignment");
static_assert(sizeof(weft::detail::unit::id) == 8 && sizeof(weft::detail::unit::kind) == 1 &&
                  sizeof(weft::detail::unit::state) == 1 &&
                  sizeof(weft::detail::unit::flags) == 1 &&
                  sizeof(weft::detail::unit::user_suspended) == 1 &&
                  sizeof(weft::detail::unit::join_word) == 8 &&
                  sizeof(std::atomic<const char*>) == sizeof(const char*),
              "weft_debug_layout's field sizes");
// A debugger reads the slab list as libstdc++ lays a std::vector out: begin, end, capacity.
static_assert(sizeof(std::vector<weft::detail::unit_allocator::slab>) == 3 * sizeof(void*));

/// The saved context of the parked ULT `id` (nullptr when there is none: not a ULT, running,
/// never started, or no such unit), for a debugger's call; weft_gdb.py reads it from memory.
[[gnu::visibility("default"), gnu::used]] void* weft_debug_context(unsigned long long id) {
  weft::detail::runtime_state* r = weft::detail::g_runtime;
  if (!r) return nullptr;
  const weft::detail::tsan_ignore_reads racy;
  for (const auto& [first, count] : r->units().slabs(false)) {
    for (std::size_t i = 0; i < count; ++i) {
      const weft::detail::unit* u = first + i;
      if (u->id != id || u->kind != weft::unit_kind::ult) continue;
      const auto st = u->state.load(std::memory_order_acquire);
      if (st == weft::unit_state::running || st == weft::unit_state::terminated) return nullptr;
      return u->context;
    }
  }
  return nullptr;
}

}  // extern "C"

namespace weft::detail {

void publish_for_debuggers(runtime_state* r) noexcept {
  weft_debug_info.slabs = r ? r->units().slab_list() : nullptr;
}

}  // namespace weft::detail
