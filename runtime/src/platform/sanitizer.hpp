// SPDX-License-Identifier: Apache-2.0
// Fiber-switch annotations for AddressSanitizer and ThreadSanitizer. They compile to nothing in
// normal builds; in sanitized builds every context switch tells the sanitizer which stack it is
// entering, so ULT stacks are neither reported as overflows nor as races.
#pragma once

#include <cstddef>

#include "weft/internal/unit.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define WEFT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEFT_ASAN 1
#endif
#endif
// The descriptor's layout already depends on ThreadSanitizer (stack_region::tsan_fiber).
#ifdef WEFT_DETAIL_TSAN_FIBERS
#define WEFT_TSAN 1
#endif

extern "C" {
#ifdef WEFT_ASAN
void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, std::size_t size);
void __sanitizer_finish_switch_fiber(void* fake_stack_save, const void** bottom_old,
                                     std::size_t* size_old);
void __asan_unpoison_memory_region(const volatile void* addr, std::size_t size);
#endif
#ifdef WEFT_TSAN
void* __tsan_get_current_fiber(void);
void* __tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void* fiber);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
void AnnotateIgnoreReadsBegin(const char* file, int line);
void AnnotateIgnoreReadsEnd(const char* file, int line);
#endif
}

namespace weft::detail {

/// While alive, ThreadSanitizer ignores the calling thread's plain reads: for diagnostics that
/// read other threads' state without synchronising on purpose (unit dumps). Nothing elsewhere
/// (hence maybe_unused: outside ThreadSanitizer builds a guard of this type is an empty object).
class [[maybe_unused]] tsan_ignore_reads {
 public:
#ifdef WEFT_TSAN
  tsan_ignore_reads() noexcept {
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
  }
  ~tsan_ignore_reads() {
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
  }
#else
  tsan_ignore_reads() noexcept = default;
#endif
  tsan_ignore_reads(const tsan_ignore_reads&) = delete;
  tsan_ignore_reads& operator=(const tsan_ignore_reads&) = delete;
};

inline constexpr bool asan_enabled =
#ifdef WEFT_ASAN
    true;
#else
    false;
#endif
inline constexpr bool tsan_enabled =
#ifdef WEFT_TSAN
    true;
#else
    false;
#endif

/// Before a switch: `save` receives ASan's fake-stack handle (nullptr when the current context
/// dies with the switch); [bottom, bottom + size) is the stack being entered.
inline void asan_start_switch(void** save, const void* bottom, std::size_t size) noexcept {
#ifdef WEFT_ASAN
  __sanitizer_start_switch_fiber(save, bottom, size);
#else
  (void)save, (void)bottom, (void)size;
#endif
}
/// After a switch, on the stack that was entered.
inline void asan_finish_switch(void* save) noexcept {
#ifdef WEFT_ASAN
  __sanitizer_finish_switch_fiber(save, nullptr, nullptr);
#else
  (void)save;
#endif
}
/// Clears ASan's poison over a stack that goes back to the system: frames left on it by a parked
/// context are never unwound, and the next mapping at that address must not inherit them.
inline void asan_unpoison(void* lo, std::size_t size) noexcept {
#ifdef WEFT_ASAN
  __asan_unpoison_memory_region(lo, size);
#else
  (void)lo, (void)size;
#endif
}
/// Tells TSan that execution moves to `fiber` (a no-op for nullptr or in normal builds).
inline void tsan_switch(void* fiber) noexcept {
#ifdef WEFT_TSAN
  if (fiber) __tsan_switch_to_fiber(fiber, 0);
#else
  (void)fiber;
#endif
}
inline void* tsan_current_fiber() noexcept {
#ifdef WEFT_TSAN
  return __tsan_get_current_fiber();
#else
  return nullptr;
#endif
}
inline void* tsan_create_fiber() noexcept {
#ifdef WEFT_TSAN
  return __tsan_create_fiber(0);
#else
  return nullptr;
#endif
}
inline void tsan_destroy_fiber(void* fiber) noexcept {
#ifdef WEFT_TSAN
  if (fiber) __tsan_destroy_fiber(fiber);
#else
  (void)fiber;
#endif
}
/// The TSan fiber of stack `s` (always nullptr in other builds, whose stacks have none).
inline void* tsan_fiber(const stack_region& s) noexcept {
#ifdef WEFT_TSAN
  return s.tsan_fiber;
#else
  (void)s;
  return nullptr;
#endif
}
/// Records the TSan fiber of stack `s` (a no-op in other builds).
inline void set_tsan_fiber(stack_region& s, void* fiber) noexcept {
#ifdef WEFT_TSAN
  s.tsan_fiber = fiber;
#else
  (void)s, (void)fiber;
#endif
}

}  // namespace weft::detail
