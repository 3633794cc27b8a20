// SPDX-License-Identifier: Apache-2.0
// The iteration space of a loop `for (i = start; up ? i < end : i > end; i += incr)` over a
// signed or unsigned index type: its trip count and the value of its k-th iteration. Worksharing
// hands out logical iterations 0..count()-1 and converts only at a chunk's edges, so the
// schedules never see the index type.
#pragma once

#include <cstdint>
#include <type_traits>

namespace weft::parallel {

/// A loop's iteration space over index type I (at least int-sized, at most 64 bits).
///
/// For a signed I, `up` is incr > 0 (make_space()). For an unsigned I counting down, incr holds
/// the step's two's complement, as GCC passes it to the GOMP_*_ull entry points.
template <class I>
struct iteration_space {
  static_assert(std::is_integral_v<I> && sizeof(I) >= sizeof(int) && sizeof(I) <= 8,
                "an index type of int size up to 64 bits");
  using unsigned_type = std::make_unsigned_t<I>;

  I start{};
  I end{};
  I incr{1};
  bool up = true;

  /// The number of iterations. Exact for every pair of bounds: the distance is taken in the
  /// unsigned type (it fits there whatever the bounds' signs), and rounded up as d / s plus one
  /// for a remainder, since d + s - 1 overflows for a range spanning most of the type.
  constexpr std::uint64_t count() const noexcept {
    using U = unsigned_type;
    U d, s;
    if (up) {
      if (!(start < end)) return 0;
      d = static_cast<U>(static_cast<U>(end) - static_cast<U>(start));
      s = static_cast<U>(incr);
    } else {
      if (!(end < start)) return 0;
      d = static_cast<U>(static_cast<U>(start) - static_cast<U>(end));
      s = static_cast<U>(U{0} - static_cast<U>(incr));
    }
    return d / s + (d % s != 0 ? 1 : 0);
  }

  /// The value of logical iteration k (k <= count()): wraps like the loop's own `i += incr`.
  constexpr I at(std::uint64_t k) const noexcept {
    using U = unsigned_type;
    return static_cast<I>(static_cast<U>(start) + static_cast<U>(k) * static_cast<U>(incr));
  }

  /// The bound a chunk ending at logical iteration `hi` reports: the loop's own end for the last
  /// chunk (which at(count()) may step past), at(hi) otherwise.
  constexpr I bound(std::uint64_t hi, std::uint64_t n) const noexcept {
    return hi == n ? end : at(hi);
  }
};

/// The space of a loop over a signed index; it counts down when incr < 0.
template <class I>
requires std::is_signed_v<I>
constexpr iteration_space<I> make_space(I start, I end, I incr) noexcept {
  return {start, end, incr, incr > 0};
}

/// The space of a loop over an unsigned index (incr: the step's two's complement when !up).
template <class I>
requires std::is_unsigned_v<I>
constexpr iteration_space<I> make_space(bool up, I start, I end, I incr) noexcept {
  return {start, end, incr, up};
}

}  // namespace weft::parallel
