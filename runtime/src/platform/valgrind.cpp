// SPDX-License-Identifier: Apache-2.0
#include "platform/valgrind.hpp"

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define WEFT_HAVE_VALGRIND_H 1
#endif

namespace weft::detail {

#ifdef WEFT_HAVE_VALGRIND_H

bool on_valgrind() noexcept {
  return RUNNING_ON_VALGRIND != 0;
}

unsigned valgrind_register_stack(void* lo, std::size_t size) noexcept {
  if (!on_valgrind()) return 0;
  // Valgrind's ids start at 0: ours are one more, so that 0 means "not registered".
  return VALGRIND_STACK_REGISTER(lo, static_cast<char*>(lo) + size) + 1;
}

void valgrind_deregister_stack(unsigned id) noexcept {
  if (id != 0) VALGRIND_STACK_DEREGISTER(id - 1);
}

#else

bool on_valgrind() noexcept {
  return false;
}
unsigned valgrind_register_stack(void*, std::size_t) noexcept {
  return 0;
}
void valgrind_deregister_stack(unsigned) noexcept {}

#endif

}  // namespace weft::detail
