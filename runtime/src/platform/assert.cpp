// SPDX-License-Identifier: Apache-2.0
// The report of a failed invariant check (assert.hpp).
#include "platform/assert.hpp"

#include <cstdio>
#include <cstdlib>

namespace weft::ext {

void invariant_failed(const char* invariant, const char* file, int line,
                      const char* function) noexcept {
  // stdio on unbuffered stderr rather than iostreams: no allocation, so the report gets out even
  // when the failed check sits in an allocator or under a spinlock.
  std::fprintf(stderr, "weft: invariant violated: %s\n  checked at %s:%d in %s\n", invariant, file,
               line, function);
  std::fflush(stderr);
  std::abort();
}

}  // namespace weft::ext
