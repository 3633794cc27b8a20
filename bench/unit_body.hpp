// SPDX-License-Identifier: Apache-2.0
// The body of every unit the benchmarks create, and the optimisation barrier it uses.
#pragma once

namespace weft_bench {

/// Keeps the compiler from proving `p`'s pointee unused (what benchmark::DoNotOptimize does),
/// without making a program depend on Google Benchmark.
inline void escape(const void* p) {
  asm volatile("" : : "g"(p) : "memory");
}

/// The body of every created unit: as little as possible, but not nothing.
inline void unit_body() {
  int x = 0;
  escape(&x);
}

}  // namespace weft_bench
