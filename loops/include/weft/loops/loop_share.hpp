// SPDX-License-Identifier: Apache-2.0
// One worker's share of a loop under a schedule: the code every worksharing construct runs, on
// the chunk dispatch of weft::parallel.
#pragma once

#include <weft/loops/schedule.hpp>
#include <weft/parallel/dispatch.hpp>

#include <cstdint>

namespace weft::loops::detail {

/// The core's schedule for the layer's: the layer's default chunks, its guided spread.
constexpr parallel::loop_schedule core_schedule(const schedule& s, std::int64_t trip, int w) {
  const auto chunk = static_cast<std::uint64_t>(default_chunk(s, trip, w));
  switch (s.kind) {
    case schedule_kind::dynamic:
      return {parallel::schedule_kind::dynamic, chunk};
    case schedule_kind::guided:
      return {parallel::schedule_kind::guided, chunk};
    case schedule_kind::static_blocks:
      break;
  }
  return {parallel::schedule_kind::static_, chunk};
}

/// The shared state of one loop: its first index, its width and the core's dispatch (whose
/// counter, for dynamic and guided, the workers claim chunks from).
struct loop_state {
  loop_state(std::int64_t b, std::int64_t e, schedule s, int w) : begin(b), workers(w) {
    const std::int64_t trip = e > b ? e - b : 0;
    dispatch.start(static_cast<std::uint64_t>(trip), core_schedule(s, trip, w), guided_spread);
  }
  std::int64_t begin;
  int workers;
  parallel::loop_dispatch dispatch;
};

/// Runs worker `w`'s iterations of `st`: body(i) for each i it is dealt.
template <class Body>
void run_share(loop_state& st, int w, Body& body) {
  // By value: the chunk loop keeps `begin` and the body's address in registers.
  const std::int64_t begin = st.begin;
  Body* const b = &body;
  parallel::for_each_chunk(
      st.dispatch, static_cast<std::uint64_t>(st.workers), static_cast<std::uint64_t>(w),
      [begin, b](std::uint64_t lo, std::uint64_t hi) {
        const std::int64_t e = begin + static_cast<std::int64_t>(hi);
        for (std::int64_t i = begin + static_cast<std::int64_t>(lo); i < e; ++i) (*b)(i);
      });
}

}  // namespace weft::loops::detail
