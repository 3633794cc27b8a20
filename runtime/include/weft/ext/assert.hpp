// SPDX-License-Identifier: Apache-2.0
// Checked invariants for pools and schedulers: on where WEFT_ENABLE_ASSERTS is defined (the
// library's debug, asan and tsan configurations, CMake option WEFT_DEBUG_ASSERTS), compiled to
// nothing otherwise. A program's own pools get the checks when it defines the macro itself.
#pragma once

namespace weft::ext {

/// True when the translation unit was compiled with WEFT_ENABLE_ASSERTS.
#ifdef WEFT_ENABLE_ASSERTS
inline constexpr bool asserts_enabled = true;
#else
inline constexpr bool asserts_enabled = false;
#endif

/// Prints "weft: invariant violated: <invariant>" with the file, line and function of the check
/// to stderr and aborts the process.
[[noreturn, gnu::cold]] void invariant_failed(const char* invariant, const char* file, int line,
                                              const char* function) noexcept;

/// Checks that `holds()` is true and reports `invariant` (say "invariant 8: done is final")
/// through invariant_failed() otherwise. With asserts off the body is empty and `holds` is never
/// called, so a check may load atomics or walk a list and still cost nothing in release builds.
/// The location defaults to the caller's; __builtin_FILE/LINE/FUNCTION rather than
/// std::source_location, which clang before 15 cannot provide over libstdc++.
template <class Predicate>
inline void assert_invariant(Predicate&& holds, const char* invariant,
                             const char* file = __builtin_FILE(), int line = __builtin_LINE(),
                             const char* function = __builtin_FUNCTION()) noexcept {
  if constexpr (asserts_enabled) {
    if (!static_cast<bool>(holds())) [[unlikely]]
      invariant_failed(invariant, file, line, function);
  }
}

}  // namespace weft::ext
