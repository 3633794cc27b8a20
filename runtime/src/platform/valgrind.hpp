// SPDX-License-Identifier: Apache-2.0
// ULT stacks told to valgrind, so that memcheck follows context switches instead of reading
// every switch as one huge stack-pointer move ("client switching stacks?"). Each call is a
// valgrind client request: a few instructions and no effect when the process does not run
// under valgrind; they are made where stacks are mapped and released, never per switch.
#pragma once

#include <cstddef>

namespace weft::detail {

/// True when the process runs under valgrind.
bool on_valgrind() noexcept;
/// Registers [lo, lo + size) as a stack; returns an id for it (0 when not under valgrind).
unsigned valgrind_register_stack(void* lo, std::size_t size) noexcept;
/// Forgets a stack registered by valgrind_register_stack() (no effect for id 0).
void valgrind_deregister_stack(unsigned id) noexcept;

}  // namespace weft::detail
