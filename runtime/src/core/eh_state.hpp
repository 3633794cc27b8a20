// SPDX-License-Identifier: Apache-2.0
// The C++ exception state of a context. The C++ runtime keeps the exceptions being handled (the
// stack behind std::current_exception() and `throw;`) and the count behind
// std::uncaught_exceptions() per kernel thread, in its __cxa_eh_globals. A ULT that switched away
// inside a catch handler, or in a destructor run by unwinding, would leave its state to whatever
// runs next on the thread and come back to another's (or to another thread's). So a context that
// leaves holding state leaves through jump_stowing(): its state goes into that call's frame, on
// the leaver's own stack, the thread's is left empty, and when the jump returns (on whichever
// thread) the state goes back into that thread's. A context starts empty, as a thread does, and
// every context leaves its thread empty, so a context resumed through a plain jump finds the
// thread as it needs it. A switch of a context that holds no state costs one test of the
// thread's state: the load of its address (switching::eh_globals()), of its two words, and a
// branch; the resumed side pays nothing.
#pragma once

#include <cxxabi.h>

#include <cstdint>

#include "platform/jump.hpp"

// The struct behind __cxa_get_globals() is the ABI library's: libstdc++'s libsupc++ and LLVM's
// libc++abi lay it out alike (below). With another library (libcxxrt) weft leaves the state per
// thread, and a ULT must not switch inside a handler or while unwinding (docs/design.md, 13).
#if defined(__GLIBCXX__) || defined(_LIBCPPABI_VERSION)
#define WEFT_DETAIL_EH_PER_CONTEXT 1
#else
#define WEFT_DETAIL_EH_PER_CONTEXT 0
#endif

namespace weft::detail {

/// The layout of __cxxabiv1::__cxa_eh_globals in both libraries.
struct eh_globals {
  void* caught;           // the innermost exception being handled (a chain through the others)
  unsigned int uncaught;  // thrown and not yet caught: std::uncaught_exceptions()
#if defined(__ARM_EABI_UNWINDER__) || defined(_LIBCXXABI_ARM_EHABI)
  void* propagating;  // ARM EHABI: the exceptions being propagated
#endif
};

/// The calling thread's state (a call into the C++ runtime); nullptr where weft leaves the state
/// per thread.
eh_globals* thread_eh_globals() noexcept;

/// True when the thread whose state is `g` (from thread_eh_globals(), or nullptr) is handling or
/// propagating an exception.
[[gnu::always_inline]] inline bool eh_held(const eh_globals* g) noexcept {
#if WEFT_DETAIL_EH_PER_CONTEXT
  return (reinterpret_cast<std::uintptr_t>(g->caught) | g->uncaught
#if defined(__ARM_EABI_UNWINDER__) || defined(_LIBCXXABI_ARM_EHABI)
          | reinterpret_cast<std::uintptr_t>(g->propagating)
#endif
              ) != 0;
#else
  (void)g;
  return false;
#endif
}

/// jump(to, data) for a leaver whose thread's state `g` is held (eh_held()): keeps the state in
/// this call's frame while the leaver is switched out, and puts it back into the state of the
/// thread the jump returns on. `tsan_target`: the target's ThreadSanitizer fiber, switched to
/// inside the call (the caller makes no tsan_switch of its own on this path).
[[gnu::cold, gnu::noinline]] transfer jump_stowing(fcontext to, void* data, eh_globals* g,
                                                   void* tsan_target) noexcept;
/// The same for jump_to_peer(to, data).
[[gnu::cold, gnu::noinline]] transfer jump_to_peer_stowing(fcontext to, void* data, eh_globals* g,
                                                           void* tsan_target) noexcept;

}  // namespace weft::detail
