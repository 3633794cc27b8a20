// SPDX-License-Identifier: Apache-2.0
// Loop schedules (static, dynamic, guided) as the layer's options name them, and the splits of
// an iteration range among the workers of a team, on the dispatch of weft::parallel. Pure
// functions on values: usable and testable without a runtime.
#pragma once

#include <weft/parallel/dispatch.hpp>

#include <algorithm>
#include <cstdint>

namespace weft::loops {

/// How a loop's iterations are dealt to the workers of a team (as OpenMP's schedule clause).
enum class schedule_kind {
  static_blocks,  ///< fixed at entry: one block per worker, or chunks dealt round-robin
  dynamic,        ///< workers claim chunks of a fixed size from a shared counter
  guided,         ///< workers claim shrinking chunks (remaining / 2*workers, at least `chunk`)
};

/// A schedule and its chunk size; chunk 0 asks for the layer's default (see default_chunk()).
struct schedule {
  schedule_kind kind = schedule_kind::static_blocks;
  std::int64_t chunk = 0;
};

/// schedule(static[, chunk]): chunk 0 gives each worker one contiguous block.
constexpr schedule static_schedule(std::int64_t chunk = 0) {
  return {schedule_kind::static_blocks, chunk};
}
/// schedule(dynamic[, chunk]).
constexpr schedule dynamic_schedule(std::int64_t chunk = 0) {
  return {schedule_kind::dynamic, chunk};
}
/// schedule(guided[, chunk]): `chunk` is the smallest chunk handed out.
constexpr schedule guided_schedule(std::int64_t chunk = 0) {
  return {schedule_kind::guided, chunk};
}

/// Chunks per worker the dynamic schedule aims at when no chunk is given: enough that a worker
/// slowed by a neighbour's work can hand its share to others, few enough that the shared counter
/// is touched rarely.
inline constexpr std::int64_t default_chunks_per_worker = 4;

/// The chunk a schedule uses for `trip` iterations over `workers` workers: the given chunk, or
/// for dynamic ~trip/(workers*4), for guided 1, for static 0 (one block per worker).
constexpr std::int64_t default_chunk(const schedule& s, std::int64_t trip, int workers) {
  if (s.chunk > 0) return s.chunk;
  switch (s.kind) {
    case schedule_kind::dynamic:
      return std::max<std::int64_t>(1, trip / (std::int64_t{workers} * default_chunks_per_worker));
    case schedule_kind::guided:
      return 1;
    case schedule_kind::static_blocks:
      break;
  }
  return 0;
}

/// A half-open range of iterations.
struct range {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  constexpr std::int64_t size() const { return end > begin ? end - begin : 0; }
};

/// [begin, end) split into `workers` contiguous blocks whose sizes differ by at most one (the
/// first trip % workers blocks are one longer).
struct static_split {
  constexpr static_split(std::int64_t begin, std::int64_t end, int workers)
      : begin(begin),
        trip(end > begin ? static_cast<std::uint64_t>(end - begin) : 0),
        workers(workers) {}
  /// Worker `w`'s block.
  constexpr range block(int w) const {
    const parallel::chunk c = parallel::static_block(trip, static_cast<std::uint64_t>(workers),
                                                     static_cast<std::uint64_t>(w));
    return {begin + static_cast<std::int64_t>(c.lo), begin + static_cast<std::int64_t>(c.hi)};
  }
  std::int64_t begin;
  std::uint64_t trip;
  int workers;
};

/// Worker `w`'s block of [begin, end) split into `workers` contiguous blocks whose sizes differ
/// by at most one (the first trip % workers blocks are one longer).
constexpr range static_block(std::int64_t begin, std::int64_t end, int w, int workers) {
  return static_split(begin, end, workers).block(w);
}

/// Guided chunks are a share of the remaining iterations among twice the workers: smaller than
/// OpenMP's (one share per worker), so that the tail balances better.
inline constexpr std::uint32_t guided_spread = 2;

/// The size of the next guided chunk when `remaining` iterations are left: remaining/(2*workers)
/// rounded up, at least `min_chunk`, at most `remaining`.
constexpr std::int64_t guided_chunk(std::int64_t remaining, int workers, std::int64_t min_chunk) {
  return static_cast<std::int64_t>(parallel::guided_size(
      static_cast<std::uint64_t>(remaining), guided_spread * static_cast<std::uint64_t>(workers),
      static_cast<std::uint64_t>(std::max<std::int64_t>(min_chunk, 1))));
}

}  // namespace weft::loops
