// SPDX-License-Identifier: Apache-2.0
// The steal simulator's pseudo-random numbers: splitmix64, the same sequence on every platform
// (std's distributions are not), so that a seed names one run.
#pragma once

#include <cstdint>

namespace weft::steal_sim {

class splitmix64 {
 public:
  explicit splitmix64(std::uint64_t seed) noexcept : state_(seed) {}

  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// In [0, n); n > 0. The modulo's bias is below 2^-40 for the n used here (< 2^24).
  std::uint64_t below(std::uint64_t n) noexcept { return next() % n; }
  /// In [0, 1), 53 bits.
  double unit_interval() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

}  // namespace weft::steal_sim
