// SPDX-License-Identifier: Apache-2.0
// Keeping a context's C++ exception state across its switches (see eh_state.hpp).
#include "core/eh_state.hpp"

#include "platform/assert.hpp"
#include "platform/sanitizer.hpp"

namespace weft::detail {

eh_globals* thread_eh_globals() noexcept {
#if WEFT_DETAIL_EH_PER_CONTEXT
  return reinterpret_cast<eh_globals*>(__cxxabiv1::__cxa_get_globals());
#else
  return nullptr;
#endif
}

namespace {

template <auto& Jump>
transfer jump_keeping(fcontext to, void* data, eh_globals* g, void* tsan_target) noexcept {
  const eh_globals mine = *g;
  *g = eh_globals{};
  // ThreadSanitizer's fiber switch comes here, inside this (instrumented) call: made by the
  // caller, this call's entry would be recorded on the target's shadow stack and its exit on the
  // leaver's, unbalancing both.
  tsan_switch(tsan_target);
  const transfer t = Jump(to, data);
  // Asked afresh: the context may have resumed on another thread. The context that jumped here
  // left that thread's state empty. No call may precede the jump in this function: libstdc++
  // declares __cxa_get_globals const, so its result from before the jump would be reused.
  assert_invariant([] { return !eh_held(thread_eh_globals()); },
                   "exception state: every context leaves its thread's state empty");
  *thread_eh_globals() = mine;
  return t;
}

}  // namespace

transfer jump_stowing(fcontext to, void* data, eh_globals* g, void* tsan_target) noexcept {
  return jump_keeping<jump>(to, data, g, tsan_target);
}

transfer jump_to_peer_stowing(fcontext to, void* data, eh_globals* g, void* tsan_target) noexcept {
  return jump_keeping<jump_to_peer>(to, data, g, tsan_target);
}

}  // namespace weft::detail
