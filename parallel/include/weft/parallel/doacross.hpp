// SPDX-License-Identifier: Apache-2.0
// Cross-iteration dependences of a doacross loop (OpenMP's ordered(n) with depend(sink) and
// depend(source)): which iterations have been posted, kept per dispatch entry. The dispatch deals
// only the outermost logical dimension; every worker runs the iterations it is dealt in
// lexicographic order, so one monotonic progress word per entry says how far its owner got:
//   static blocks: one entry per worker;
//   static chunks: one entry per chunk, or per worker (its chunks come in increasing order)
//     where the chunks would take more than padded_limit lines;
//   dynamic: one entry per chunk (chunks start at multiples of the chunk size);
//   guided: one entry per outermost iteration (chunk bounds depend on the order of claims).
// The protocol is libgomp's (ordered.c); the waiting is the caller's.
#pragma once

#include <weft/parallel/dispatch.hpp>

#include <atomic>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace weft::parallel {

/// The element type of an iteration vector: the compiler passes long or unsigned long long
/// logical indices, read in place.
template <class T>
concept index = std::integral<T> && sizeof(T) == sizeof(std::uint64_t);

class doacross {
 public:
  /// Readies the progress of a loop of `ncounts` dimensions with trip counts `counts` (`C` is
  /// the entry point's counter type), the outermost dealt by `d` (already started) to `workers`.
  /// Not concurrent with the other calls: a team publishes the loop before its workers use it.
  template <class C>
  void start(const loop_dispatch& d, std::uint64_t workers, unsigned ncounts, const C* counts) {
    counts_.resize(ncounts);
    for (unsigned k = 0; k < ncounts; ++k) counts_[k] = static_cast<std::uint64_t>(counts[k]);
    how_ = d.how;
    workers_ = workers;
    chunk_ = d.chunk;
    chunk_shift_ = shift_of(chunk_);
    workers_shift_ = shift_of(workers_);
    // The key of an iteration is its flattened index over the longest prefix of dimensions whose
    // product fits in 64 bits (all of them unless the loop has more than 2^64 iterations). With
    // a shorter prefix a word only says which prefixes are complete, which is still exact for
    // waits on other workers' iterations and never waits on the caller's own (see done()).
    depth_ = ncounts == 0 ? 0 : 1;
    stride0_ = 1;
    std::uint64_t prod = ncounts == 0 ? 0 : counts_[0];
    for (unsigned k = 1; k < ncounts; ++k) {
      std::uint64_t next;
      if (__builtin_mul_overflow(prod, counts_[k], &next)) break;
      prod = next;
      stride0_ *= counts_[k];
      depth_ = k + 1;
    }
    full_ = depth_ == ncounts;
    const std::uint64_t n = ncounts == 0 ? 0 : counts_[0];
    if (how_ == loop_dispatch::mode::blocks) {
      q_ = n / workers;
      r_ = n % workers;
    }
    std::uint64_t ents = 0;
    // Static chunks get a word each where that fits: a waiter then reads a word its writer has
    // left (the writer is on a later chunk) instead of the one it writes at every post.
    per_chunk_ = how_ == loop_dispatch::mode::chunked && n != 0 && (n - 1) / chunk_ < padded_limit;
    if (n == 0 || prod == 0) {
      ents = 0;  // no iteration: nothing is posted or waited for
    } else if (per_chunk_) {
      ents = (n - 1) / chunk_ + 1;
    } else if (how_ == loop_dispatch::mode::blocks || how_ == loop_dispatch::mode::chunked) {
      ents = workers;
    } else if (how_ == loop_dispatch::mode::guided) {
      ents = n;
    } else {
      ents = (n - 1) / chunk_ + 1;
    }
    // A word per cache line while that stays small (entries of different workers sit side by
    // side, and every post writes one); packed beyond, where one worker owns runs of neighbours.
    spread_ = ents <= padded_limit ? line_words : 1;
    entries_ = ents;
    const std::size_t words = static_cast<std::size_t>(ents * spread_);
    if (words > capacity_) {
      words_ = std::make_unique<std::atomic<std::uint64_t>[]>(words);
      capacity_ = words;
    }
    for (std::size_t w = 0; w < words; w += spread_) words_[w].store(0, std::memory_order_relaxed);
  }

  unsigned dims() const noexcept { return static_cast<unsigned>(counts_.size()); }

  /// True when iteration `v` (dims() logical indices) lies in the iteration space: a sink outside
  /// it (i-1 at the first i) names no iteration and is not waited for.
  template <index T>
  bool in_range(const T* v) const noexcept {
    for (std::size_t k = 0; k < counts_.size(); ++k) {
      if (at(v, k) >= counts_[k]) return false;
    }
    return true;
  }

  /// True when `v` was dealt to worker `me`, whose current chunk is `cur`, in a chunk it has
  /// already started: a sink is lexicographically earlier than the iteration that waits, so
  /// the caller has run it itself.
  bool own(std::uint64_t i0, std::uint64_t me, chunk cur) const noexcept {
    return owned(entry(i0), i0, me, cur);
  }

  /// What a depend(sink) waits for: a progress word and the key it must pass.
  struct sink {
    const std::atomic<std::uint64_t>* word;  ///< null: nothing to wait for
    std::uint64_t key;
    bool reached() const noexcept { return word->load(std::memory_order_acquire) > key; }
  };

  /// The sink `v` of worker `me`, whose current chunk is `cur`: no word where `v` lies outside
  /// the space (see in_range()) or is the caller's own (see own()). One entry lookup for the
  /// three questions, since a wait asks them at every iteration.
  template <index T>
  sink sink_of(const T* v, std::uint64_t me, chunk cur) const noexcept {
    if (!in_range(v)) return {nullptr, 0};
    const std::uint64_t e = entry(at(v, 0));
    if (owned(e, at(v, 0), me, cur)) return {nullptr, 0};
    return {&words_[static_cast<std::size_t>(e * spread_)], key(v)};
  }

  /// Records that the caller has finished iteration `v` (in range, dealt to the caller).
  ///
  /// A plain store, without reading the word first: the waiter spinning on it keeps taking the
  /// line away, so a read here would stall on a miss at every post, where a store only waits in
  /// the store buffer. The word stays monotonic because its only writer runs its iterations in
  /// lexicographic order and finish() covers no more than the chunk already run:
  ///   post(v) after post(u) => key(v) >= key(u); post(v) after finish(r) => v[0] >= r.hi.
  template <index T>
  void post(const T* v) noexcept {
    word(at(v, 0)).store(key(v) + (full_ ? 1 : 0), std::memory_order_release);
  }

  /// Records that the caller has finished chunk `r` of the outermost dimension: its words then
  /// cover every iteration of the chunk, posted or not.
  void finish(chunk r) noexcept {
    if (r.lo >= r.hi || entries_ == 0) return;
    if (how_ == loop_dispatch::mode::guided) {
      for (std::uint64_t i = r.lo; i < r.hi; ++i) raise(word(i), (i + 1) * stride0_);
      return;
    }
    raise(word(r.lo), r.hi * stride0_);
  }

  /// True once `v` (in range) has been posted by its owner, or its chunk finished.
  template <index T>
  bool done(const T* v) const noexcept {
    return word(at(v, 0)).load(std::memory_order_acquire) > key(v);
  }

 private:
  static constexpr std::uint64_t line_words = 64 / sizeof(std::uint64_t);
  static constexpr std::uint64_t padded_limit = 4096;

  // The entry that holds the progress of outermost iteration i0.
  std::uint64_t entry(std::uint64_t i0) const noexcept {
    switch (how_) {
      case loop_dispatch::mode::blocks: {
        // Inverse of static_block(): the first r_ blocks hold q_ + 1 iterations.
        const std::uint64_t boundary = r_ * (q_ + 1);
        return i0 < boundary ? i0 / (q_ + 1) : r_ + (i0 - boundary) / q_;
      }
      case loop_dispatch::mode::chunked:
        return per_chunk_ ? quot_chunk(i0) : rem_workers(quot_chunk(i0));
      case loop_dispatch::mode::guided:
        return i0;
      case loop_dispatch::mode::dynamic:
      case loop_dispatch::mode::dynamic_cas:
        break;
    }
    return quot_chunk(i0);
  }

  // Divisions by the chunk size and the worker count, shifts and masks where those are powers of
  // two (a chunk of 1 above all): every post and wait looks its entry up, and a 64-bit division
  // costs as much as the rest of the lookup.
  std::uint64_t quot_chunk(std::uint64_t i) const noexcept {
    return chunk_shift_ != no_shift ? i >> chunk_shift_ : i / chunk_;
  }
  std::uint64_t rem_workers(std::uint64_t i) const noexcept {
    return workers_shift_ != no_shift ? i & (workers_ - 1) : i % workers_;
  }
  static constexpr unsigned no_shift = 64;
  static unsigned shift_of(std::uint64_t n) noexcept {
    return n != 0 && (n & (n - 1)) == 0 ? static_cast<unsigned>(std::countr_zero(n)) : no_shift;
  }

  // Whether worker `me` has run outermost iteration i0 (entry `e`), given that i0 comes before
  // the iteration it is at: static schedules deal i0 to a fixed worker.
  bool owned(std::uint64_t e, std::uint64_t i0, std::uint64_t me, chunk cur) const noexcept {
    if (how_ == loop_dispatch::mode::blocks) return e == me;
    if (how_ == loop_dispatch::mode::chunked) return (per_chunk_ ? rem_workers(e) : e) == me;
    return i0 >= cur.lo && i0 < cur.hi;
  }

  std::atomic<std::uint64_t>& word(std::uint64_t i0) const noexcept {
    return words_[static_cast<std::size_t>(entry(i0) * spread_)];
  }

  template <index T>
  std::uint64_t key(const T* v) const noexcept {
    std::uint64_t k = at(v, 0);
    for (unsigned d = 1; d < depth_; ++d) k = k * counts_[d] + at(v, d);
    return k;
  }

  // Index `k` of an iteration vector as a logical index (a negative one wraps past every count).
  template <index T>
  static std::uint64_t at(const T* v, std::size_t k) noexcept {
    return static_cast<std::uint64_t>(v[k]);
  }

  // Only an entry's owner writes it, so a plain store keeps the word monotonic.
  static void raise(std::atomic<std::uint64_t>& w, std::uint64_t value) noexcept {
    if (w.load(std::memory_order_relaxed) < value) w.store(value, std::memory_order_release);
  }

  std::vector<std::uint64_t> counts_;
  unsigned depth_ = 0;         ///< dimensions in the key
  bool full_ = true;           ///< the key covers every dimension
  std::uint64_t stride0_ = 1;  ///< key distance between consecutive outermost iterations
  loop_dispatch::mode how_ = loop_dispatch::mode::blocks;
  std::uint64_t workers_ = 1;
  std::uint64_t chunk_ = 0;
  unsigned chunk_shift_ = no_shift;    ///< log2(chunk_) where chunk_ is a power of two
  unsigned workers_shift_ = no_shift;  ///< log2(workers_) where workers_ is a power of two
  bool per_chunk_ = false;             ///< static chunks: an entry per chunk, not per worker
  std::uint64_t q_ = 0, r_ = 0;        ///< static blocks: block size and longer blocks
  std::uint64_t entries_ = 0;
  std::uint64_t spread_ = 1;  ///< words per entry
  std::unique_ptr<std::atomic<std::uint64_t>[]> words_;
  std::size_t capacity_ = 0;
};

}  // namespace weft::parallel
