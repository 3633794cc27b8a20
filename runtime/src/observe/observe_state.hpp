// SPDX-License-Identifier: Apache-2.0
// What a stream keeps about itself for observation: its counters and its trace buffer. Only the
// stream's own thread writes them; weft::stats() and the trace writer read them from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace weft::detail {

/// A counter with one writer (its stream's thread): no locked instruction; readers on other
/// threads see a recent value. On x86-64 the writer's add is one `add` to memory: the compiler
/// never merges the relaxed load and store of an atomic into one, and these counters sit on the
/// shortest paths (a yield, a create). A single aligned add is atomic for readers of the word.
class stream_counter {
 public:
  /// Adds `n` (the owning stream's thread only).
  void add(std::uint64_t n = 1) noexcept {
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
    asm volatile("addq %1, %0" : "+m"(v_) : "er"(n));
#else
    __atomic_store_n(&v_, __atomic_load_n(&v_, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
#endif
  }
  /// The current value (any thread).
  std::uint64_t get() const noexcept {
    return __atomic_load_n(&v_, __ATOMIC_RELAXED);
  }

 private:
  alignas(8) std::uint64_t v_ = 0;
};

/// What one trace record stands for (see trace.cpp for the fields each one uses).
enum class trace_kind : std::uint8_t {
  run_begin,   // a = unit id, b = its pool, kind = unit_kind; ends the stream's previous run
  run_name,    // b = the interned name of the run that the previous record began
  run_end,     // the stream's current run ends (back in the scheduler)
  create,      // a = new unit's id, b = creator's id (0: a scheduler context)
  wake,        // a = woken unit's id, b = waker's id (0: a scheduler context or timer)
  steal,       // a = first stolen unit's id, c = how many
  migrate,     // a = unit id, b = destination pool
  park_begin,  // the stream goes to sleep
  park_end,    // and wakes up
  stack_push,  // a stacked scheduler starts running on the stream
  stack_pop,   // and returns
  shrink,      // a shrink event handled here, c = streams stopped
  expand,      // an expand event handled here, c = streams started
};

/// One event of a stream's trace: 32 bytes, written by the stream's own thread.
struct trace_record {
  std::uint64_t ts;  // trace_clock ticks
  std::uint64_t a;
  std::uint64_t b;
  std::uint32_t c;
  trace_kind what;
  std::uint8_t kind;
  std::uint16_t pad;
};

/// A block of a stream's trace: 2 MiB, one transparent huge page where the kernel gives one (a
/// page fault per 65,534 records instead of per 128). `n` and `next` are published with release
/// stores, so that a reader on another thread sees whole records.
struct trace_chunk {
  static constexpr std::size_t bytes = std::size_t{2} << 20;
  static constexpr std::size_t capacity = (bytes - 64) / sizeof(trace_record);
  alignas(64) std::atomic<std::size_t> n{0};
  std::atomic<trace_chunk*> next{nullptr};
  alignas(64) trace_record r[capacity];
};
static_assert(sizeof(trace_chunk) <= trace_chunk::bytes);

/// A stream's trace: a list of chunks its thread appends to without a lock.
struct trace_buffer {
  trace_chunk* head = nullptr;
  trace_chunk* tail = nullptr;  // the writer's
  int rank = 0;
  std::atomic<std::uint64_t> dropped{0};  // records lost because a chunk could not be allocated
};

/// Per-stream observation state: counters that are always kept, and the trace buffer while a
/// trace is being recorded.
struct stream_observer {
  // Runs begun (a unit resumed three times counts three), by how they began: through a context
  // switch, or without one (a tasklet, or a ULT on the stack of one that just ended). Jumps back
  // to the scheduler are counted apart. One increment per run: units run = the two run counts,
  // context switches = switched runs + returns to the scheduler.
  stream_counter runs_switched;
  stream_counter runs_direct;
  stream_counter to_scheduler;
  stream_counter steals;          // units taken from other streams' pools
  stream_counter steal_attempts;  // tries to take some
  stream_counter parked_ns;       // time spent in park()
  stream_counter migrations;      // units that moved to another pool here
  stream_counter stacks_mapped;   // ULT stacks mapped for this stream (arena slots or single)
  // The stream's buffer in the trace being recorded, valid while trace_gen equals the session's
  // generation (trace.cpp); only the stream's thread reads or writes these two.
  trace_buffer* trace = nullptr;
  std::uint32_t trace_gen = 0;
};

}  // namespace weft::detail
