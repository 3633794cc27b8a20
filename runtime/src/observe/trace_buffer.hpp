// SPDX-License-Identifier: Apache-2.0
// Appending to a stream's trace buffer, and the hooks of tracing and counters into init and
// finalize (trace.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <new>
#include <string>

#include "core/stream.hpp"
#include "observe/observe_state.hpp"
#include "platform/assert.hpp"

namespace weft::detail {

class runtime_state;

/// The generation of the trace session: odd while one records, bumped at every start and stop.
extern std::atomic<std::uint32_t> g_trace_gen;

/// Gives `s` a buffer in the session of generation `gen`; nullptr when that session has ended or
/// memory ran out. Called by s's thread only.
trace_buffer* attach_trace_buffer(stream& s, std::uint32_t gen) noexcept;

/// A fresh chunk (recycled from an ended session when one is free); nullptr without memory.
trace_chunk* new_trace_chunk() noexcept;

/// s's buffer in the session recording now, or nullptr. Called by s's thread only.
inline trace_buffer* trace_buffer_of(stream& s) noexcept {
  const std::uint32_t gen = g_trace_gen.load(std::memory_order_acquire);
  if (!(gen & 1)) return nullptr;
  if (s.observer().trace_gen == gen) [[likely]]
    return s.observer().trace;
  return attach_trace_buffer(s, gen);
}

/// Appends `r` (the buffer's stream's thread only); a record that finds no memory for a new
/// chunk is counted as dropped.
inline void trace_append(trace_buffer& b, const trace_record& r) noexcept {
  trace_chunk* c = b.tail;
  assert_invariant([c] { return c && !c->next.load(std::memory_order_relaxed); },
                   "trace: records are appended to the last chunk of the stream's buffer");
  std::size_t n = c->n.load(std::memory_order_relaxed);
  assert_invariant([n] { return n <= trace_chunk::capacity; },
                   "trace: a chunk counts at most its capacity");
  if (n == trace_chunk::capacity) [[unlikely]] {
    trace_chunk* fresh = new_trace_chunk();
    if (!fresh) {
      b.dropped.store(b.dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return;
    }
    c->next.store(fresh, std::memory_order_release);
    b.tail = c = fresh;
    n = 0;
  }
  c->r[n] = r;
  c->n.store(n + 1, std::memory_order_release);
}

/// trace::start(path); error messages name `who` as the caller.
void start_trace(const std::string& path, const char* who);
/// At init: starts the trace asked for by WEFT_TRACE (config::trace).
void observation_at_init(runtime_state& r);
/// At finalize, once every unit has run: writes the trace being recorded and prints the
/// counters if config::stats asks for them. Never throws (reports failures on stderr).
void observation_at_finalize(runtime_state& r) noexcept;
/// At teardown: frees the buffers of ended trace sessions.
void observation_at_teardown() noexcept;

/// A copy of `name` that lives as long as the process (one per distinct name).
const char* intern_name(const char* name);

}  // namespace weft::detail
