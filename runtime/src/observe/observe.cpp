// SPDX-License-Identifier: Apache-2.0
// The out-of-line halves of the observation points (observe.hpp): trace records and unit events
// for the installed hook, reached only while something observes.
#include "observe/observe.hpp"

#include <mutex>
#include <string>
#include <unordered_set>

#include "core/unit_extras.hpp"
#include "observe/trace_buffer.hpp"
#include "platform/assert.hpp"
#include "weft/pool.hpp"

namespace weft::detail {

[[gnu::visibility("hidden")]] constinit std::atomic<std::uint8_t> g_watch{0};

namespace {

std::atomic<unit_event_hook> g_hook{nullptr};

/// Reports `e` for `u` to the hook, if one is installed.
void hook(work_unit* u, unit_event e) noexcept {
  if (!(g_watch.load(std::memory_order_relaxed) & watch_tool)) return;
  if (unit_event_hook h = g_hook.load(std::memory_order_acquire)) h(u, e);
}

/// The id of the unit running on `s` (0: its scheduler context, or no stream).
std::uint64_t running_id(const stream* s) noexcept {
  return s && s->current() ? as_unit(s->current())->id : 0;
}

/// Appends a record to s's buffer when a trace is being recorded and `s` is a stream.
void record(stream* s, trace_kind what, std::uint64_t a, std::uint64_t b, std::uint32_t c = 0,
            std::uint8_t kind = 0) noexcept {
  if (!s || !(g_watch.load(std::memory_order_relaxed) & watch_trace)) return;
  if (trace_buffer* t = trace_buffer_of(*s))
    trace_append(*t, trace_record{trace_now(), a, b, c, what, kind, 0});
}

/// Records that `u` begins running on `s`.
void record_run(stream& s, const work_unit* u) noexcept {
  record(&s, trace_kind::run_begin, as_unit(u)->id,
         reinterpret_cast<std::uintptr_t>(as_unit(u)->home.load(std::memory_order_relaxed)), 0,
         static_cast<std::uint8_t>(as_unit(u)->kind));
  if (const unit_extras* x = extras_of(u); x && x->name)
    record(&s, trace_kind::run_name, as_unit(u)->id, reinterpret_cast<std::uintptr_t>(x->name));
}

}  // namespace

void set_unit_event_hook(unit_event_hook h) noexcept {
  g_hook.store(h, std::memory_order_release);
  if (h) {
    g_watch.fetch_or(watch_tool, std::memory_order_acq_rel);
  } else {
    g_watch.fetch_and(static_cast<std::uint8_t>(~watch_tool), std::memory_order_acq_rel);
  }
}

const char* intern_name(const char* name) {
  // Never freed: records of a trace and descriptors point at these for as long as they like.
  static auto* names = new std::unordered_set<std::string>;
  static auto* mutex = new std::mutex;
  std::lock_guard lock(*mutex);
  return names->emplace(name).first->c_str();
}

void name_unit(work_unit* u, const char* name) {
  assert_invariant([name] { return name != nullptr; },
                   "a unit is named with a string (callers skip a null name)");
  ensure_extras(u).name = intern_name(name);
}

namespace obs {

void created_slow(work_unit* u) noexcept {
  stream* s = current_stream_no_switch();
  record(s, trace_kind::create, as_unit(u)->id, running_id(s));
  hook(u, unit_event::create);
}

void run_begin_slow(stream& s, work_unit* u) noexcept {
  record_run(s, u);
  hook(u, unit_event::run);
}

void run_end_slow(stream& s) noexcept {
  record(&s, trace_kind::run_end, 0, 0);
  // Back in a stacked scheduler's ULT, whose run goes on.
  if (s.current()) record_run(s, s.current());
}

void event_slow(work_unit* u, unit_event e) noexcept {
  hook(u, e);
}

void woken_slow(work_unit* u) noexcept {
  stream* s = current_stream_no_switch();
  record(s, trace_kind::wake, as_unit(u)->id, running_id(s));
  hook(u, unit_event::resume);
}

void record_slow(stream* s, trace_kind what, std::uint64_t a, std::uint64_t b,
                 std::uint32_t c) noexcept {
  record(s, what, a, b, c);
}

void record_current(stream& s) noexcept {
  if (s.current()) record_run(s, s.current());
}

}  // namespace obs

}  // namespace weft::detail
