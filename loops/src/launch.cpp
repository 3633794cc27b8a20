// SPDX-License-Identifier: Apache-2.0
// Creating a team's worker units (the non-template half of launch()).
#include <weft/loops/launch.hpp>

#include <weft/execution_stream.hpp>
#include <weft/tasklet.hpp>
#include <weft/this_unit.hpp>
#include <weft/ult.hpp>

namespace weft::loops::detail {
namespace {

// Creations between two yields of a caller that fills its own pool (see start_workers()).
constexpr int creation_wave = 64;
// ...when the teams filling pools at once may queue more units than this (the frame's
// active_width: the product of the enclosing teams' widths). Below it, creating a whole team
// first is cheaper (its descriptors stay in cache); above it, waves keep the queues short. Measured
// on the nested benchmark (docs/loops.md): 2 x 1000 tasklets 1.02 -> 0.92 ms without waves, while
// 36 x 1000 needs them (1.1 ms with, 3.8 ms without).
constexpr int wave_threshold = 4096;

void start_one(pool& p, worker_slot& slot, bool ults) {
  if (ults) {
    ult::create_detached(p, &worker_entry, &slot);
  } else {
    tasklet::create_detached(p, &worker_entry, &slot);
  }
}

}  // namespace

void start_workers(team_work& team, worker_slot* slots, int width, bool ults, bool spread,
                   const nesting_frame* frame) noexcept {
  execution_stream* self = execution_stream::self();
  pool& local = self ? self->main_pool() : execution_stream::primary().main_pool();
  if (spread) {
    const int streams = stream_count();
    const int base = self ? self->rank() : 0;
    for (int w = 1; w < width; ++w) {
      worker_slot& slot = slots[w - 1];
      slot = {&team, frame, w};
      execution_stream* s = execution_stream::by_rank((base + w) % streams);
      start_one(s ? s->main_pool() : local, slot, ults);
    }
    return;
  }
  const bool waves = this_unit::is_ult() && frame->active_width > wave_threshold;
  int until_yield = creation_wave;
  for (int w = 1; w < width; ++w) {
    if (waves && --until_yield == 0) {
      this_unit::yield();
      until_yield = creation_wave;
    }
    worker_slot& slot = slots[w - 1];
    slot = {&team, frame, w};
    start_one(local, slot, ults);
  }
}

}  // namespace weft::loops::detail
