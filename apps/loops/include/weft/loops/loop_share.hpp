// SPDX-License-Identifier: Apache-2.0
// One worker's share of a loop under a schedule: the code every worksharing construct runs.
#pragma once

#include <weft/loops/schedule.hpp>

#include <atomic>
#include <cstdint>

namespace weft::loops::detail {

/// The shared state of one loop: its bounds, schedule and, for dynamic and guided, the counter
/// the workers claim chunks from (on its own cache line).
struct loop_state {
  loop_state(std::int64_t b, std::int64_t e, schedule s, int w)
      : begin(b),
        end(e),
        kind(s.kind),
        workers(w),
        chunk(default_chunk(s, e > b ? e - b : 0, w)),
        blocks(b, e, w),
        next(b) {}
  std::int64_t begin, end;
  schedule_kind kind;
  int workers;
  std::int64_t chunk;
  static_split blocks;  // static schedule without a chunk: one block per worker
  alignas(64) std::atomic<std::int64_t> next;
};

/// Runs worker `w`'s iterations of `st`: body(i) for each i it is dealt.
template <class Body>
void run_share(loop_state& st, int w, Body& body) {
  const std::int64_t end = st.end;
  switch (st.kind) {
    case schedule_kind::static_blocks: {
      if (st.chunk == 0) {
        const range r = st.blocks.block(w);
        for (std::int64_t i = r.begin; i < r.end; ++i) body(i);
        return;
      }
      const std::int64_t stride = st.chunk * st.workers;
      for (std::int64_t lo = st.begin + w * st.chunk; lo < end; lo += stride) {
        const std::int64_t hi = lo + st.chunk < end ? lo + st.chunk : end;
        for (std::int64_t i = lo; i < hi; ++i) body(i);
      }
      return;
    }
    case schedule_kind::dynamic:
      for (;;) {
        const std::int64_t lo = st.next.fetch_add(st.chunk, std::memory_order_relaxed);
        if (lo >= end) return;
        const std::int64_t hi = lo + st.chunk < end ? lo + st.chunk : end;
        for (std::int64_t i = lo; i < hi; ++i) body(i);
      }
    case schedule_kind::guided:
      for (;;) {
        std::int64_t lo = st.next.load(std::memory_order_relaxed), hi;
        do {
          if (lo >= end) return;
          hi = lo + guided_chunk(end - lo, st.workers, st.chunk);
        } while (!st.next.compare_exchange_weak(lo, hi, std::memory_order_relaxed));
        for (std::int64_t i = lo; i < hi; ++i) body(i);
      }
  }
}

}  // namespace weft::loops::detail
