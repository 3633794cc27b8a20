// SPDX-License-Identifier: Apache-2.0
// Chunk dispatch: how a loop's logical iterations 0..count-1 are dealt to the workers of a team
// under OpenMP's schedules (static with and without a chunk, dynamic, guided, auto). The one
// implementation behind libweft-omp's worksharing loops and weft::loops.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

namespace weft::parallel {

/// Schedule kinds, as OpenMP's schedule clause names them.
enum class schedule_kind : std::uint8_t {
  static_,  ///< fixed at entry: one block per worker, or chunks dealt round-robin
  dynamic,  ///< workers claim chunks of a fixed size from a shared counter
  guided,   ///< workers claim shrinking chunks (a share of what remains, at least `chunk`)
  auto_,    ///< the implementation's choice: static blocks
};

/// A schedule clause. chunk 0 asks for the kind's default (resolve()). `monotonic` records the
/// modifier; every dispatch here hands each worker its chunks in increasing order, which is
/// what monotonic asks and what nonmonotonic allows, so both are served alike.
struct loop_schedule {
  schedule_kind kind = schedule_kind::static_;
  std::uint64_t chunk = 0;
  bool monotonic = false;
};

/// The schedule a dispatch runs: auto becomes static blocks, dynamic and guided without a chunk
/// take chunks of at least one iteration.
constexpr loop_schedule resolve(loop_schedule s) noexcept {
  if (s.kind == schedule_kind::auto_) return {schedule_kind::static_, 0, s.monotonic};
  if (s.kind != schedule_kind::static_ && s.chunk == 0) s.chunk = 1;
  return s;
}

/// A logical range [lo, hi).
struct chunk {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
};

/// Worker `me`'s block when `n` iterations are split into `workers` contiguous blocks whose
/// sizes differ by at most one (the first n % workers blocks are one longer).
constexpr chunk static_block(std::uint64_t n, std::uint64_t workers, std::uint64_t me) noexcept {
  const std::uint64_t q = n / workers, r = n % workers;
  const std::uint64_t lo = me * q + (me < r ? me : r);
  return {lo, lo + q + (me < r ? 1 : 0)};
}

/// The size of the next guided chunk when `remaining` iterations are left: remaining / parts
/// rounded up, at least `min_chunk`, at most `remaining`.
constexpr std::uint64_t guided_size(std::uint64_t remaining, std::uint64_t parts,
                                    std::uint64_t min_chunk) noexcept {
  std::uint64_t q = remaining / parts + (remaining % parts != 0 ? 1 : 0);
  if (q < min_chunk) q = min_chunk;
  return q < remaining ? q : remaining;
}

/// The state of one loop that a team's workers share: the trip count, the resolved schedule and
/// the counter dynamic and guided chunks are claimed from (on its own cache line).
struct loop_dispatch {
  std::uint64_t count = 0;
  std::uint64_t chunk = 0;  ///< resolved: 0 only for static blocks
  schedule_kind kind = schedule_kind::static_;
  bool monotonic = false;
  /// Guided chunks are remaining / (guided_spread * workers): OpenMP's runtimes use 1, a
  /// layer that wants more, smaller chunks for balance a larger value.
  std::uint32_t guided_spread = 1;
  /// How next_chunk() deals: the kind refined once at start(), so that taking a chunk costs one
  /// dispatch on it. dynamic_cas: dynamic chunks claimed by compare-and-swap, for counts near
  /// 2^64 where fetch_add on `next` could wrap.
  enum class mode : std::uint8_t {
    blocks,
    chunked,
    dynamic,
    dynamic_cas,
    guided
  } how = mode::blocks;
  alignas(64) std::atomic<std::uint64_t> next{0};

  /// Readies the dispatch of `n` iterations under `s` (resolved here). Not concurrent with
  /// next_chunk(): a team publishes a started dispatch before its workers claim from it.
  void start(std::uint64_t n, loop_schedule s, std::uint32_t spread = 1) noexcept {
    s = resolve(s);
    count = n;
    chunk = s.chunk;
    kind = s.kind;
    monotonic = s.monotonic;
    guided_spread = spread;
    // Each worker's last fetch_add overshoots `n` by up to a chunk; teams are far narrower than
    // 2^20 workers.
    constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    switch (kind) {
      case schedule_kind::dynamic:
        how = chunk > (max >> 20) || n > max - (chunk << 20) ? mode::dynamic_cas : mode::dynamic;
        break;
      case schedule_kind::guided:
        how = mode::guided;
        break;
      default:
        how = chunk == 0 ? mode::blocks : mode::chunked;
    }
    next.store(0, std::memory_order_relaxed);
  }

  /// Starts this dispatch as a copy of `o`'s settings (its counter at 0).
  void start_like(const loop_dispatch& o) noexcept {
    count = o.count;
    chunk = o.chunk;
    kind = o.kind;
    monotonic = o.monotonic;
    guided_spread = o.guided_spread;
    how = o.how;
    next.store(0, std::memory_order_relaxed);
  }
};

/// One worker's progress through a static schedule (dynamic and guided keep theirs in the
/// shared counter). Value-initialise it for each loop.
struct worker_cursor {
  std::uint64_t taken = 0;  ///< chunks handed out so far
  std::uint64_t next = 0;   ///< static with a chunk: the start of the next one
};

/// Hands worker `me` of `workers` its next chunk of `d`; false when it has none left.
inline bool next_chunk(loop_dispatch& d, std::uint64_t workers, std::uint64_t me, worker_cursor& c,
                       chunk& out) noexcept {
  const std::uint64_t n = d.count;
  using mode = loop_dispatch::mode;
  // Dynamic first, before the switch's indirect jump: it takes the most chunks per loop.
  if (d.how == mode::dynamic) [[likely]] {
    const std::uint64_t ch = d.chunk;
    const std::uint64_t lo = d.next.fetch_add(ch, std::memory_order_relaxed);
    if (lo >= n) return false;
    out = {lo, n - lo <= ch ? n : lo + ch};
    return true;
  }
  switch (d.how) {
    case mode::dynamic_cas: {
      const std::uint64_t ch = d.chunk;
      std::uint64_t lo = d.next.load(std::memory_order_relaxed), hi;
      do {
        if (lo >= n) return false;
        hi = n - lo <= ch ? n : lo + ch;
      } while (!d.next.compare_exchange_weak(lo, hi, std::memory_order_relaxed));
      out = {lo, hi};
      return true;
    }
    case mode::guided: {
      std::uint64_t lo = d.next.load(std::memory_order_relaxed), hi;
      const std::uint64_t parts = workers * d.guided_spread;
      do {
        if (lo >= n) return false;
        hi = lo + guided_size(n - lo, parts, d.chunk);
      } while (!d.next.compare_exchange_weak(lo, hi, std::memory_order_relaxed));
      out = {lo, hi};
      return true;
    }
    case mode::blocks:
      if (c.taken++ > 0) return false;
      out = static_block(n, workers, me);
      return out.lo < out.hi;
    case mode::dynamic:
    case mode::chunked:
      break;
  }
  // Chunk k of this worker is chunk k * workers + me of the loop; the start of the next one is
  // kept, and saturates at n instead of wrapping.
  const std::uint64_t ch = d.chunk;
  if (c.taken++ == 0 && __builtin_mul_overflow(me, ch, &c.next)) c.next = n;
  const std::uint64_t lo = c.next;
  if (lo >= n) return false;
  out = {lo, n - lo <= ch ? n : lo + ch};
  std::uint64_t stride;
  c.next = __builtin_mul_overflow(workers, ch, &stride) || stride >= n - lo ? n : lo + stride;
  return true;
}

/// Runs f(lo, hi) for each chunk worker `me` of `workers` is dealt, in order: the same chunks
/// as next_chunk(), with the mode chosen once per loop, not once per chunk (a layer that runs
/// a whole share in one call, as weft::loops does, pays no call per chunk).
template <class F>
void for_each_chunk(loop_dispatch& d, std::uint64_t workers, std::uint64_t me, F f) {
  // `f` is taken by value and the bounds read once: held in registers, not reloaded after each
  // chunk's atomic (which the compiler must assume writes any memory whose address escaped).
  const std::uint64_t n = d.count, ch = d.chunk;
  using mode = loop_dispatch::mode;
  switch (d.how) {
    case mode::blocks: {
      const chunk b = static_block(n, workers, me);
      if (b.lo < b.hi) f(b.lo, b.hi);
      return;
    }
    case mode::chunked: {
      std::uint64_t lo, stride;
      if (__builtin_mul_overflow(me, ch, &lo)) return;
      // A stride past the type ends the share after its first chunk, as a stride past n does.
      if (__builtin_mul_overflow(workers, ch, &stride)) stride = ~std::uint64_t{0};
      while (lo < n) {
        const std::uint64_t left = n - lo;
        f(lo, left <= ch ? n : lo + ch);
        if (stride >= left) return;
        lo += stride;
      }
      return;
    }
    case mode::dynamic: {
      std::atomic<std::uint64_t>& next = d.next;
      for (;;) {
        const std::uint64_t lo = next.fetch_add(ch, std::memory_order_relaxed);
        if (lo >= n) return;
        f(lo, n - lo <= ch ? n : lo + ch);
      }
    }
    case mode::dynamic_cas:
    case mode::guided:
      break;
  }
  worker_cursor c;
  chunk r;
  while (next_chunk(d, workers, me, c, r)) f(r.lo, r.hi);
}

}  // namespace weft::parallel
