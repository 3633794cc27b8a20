// SPDX-License-Identifier: Apache-2.0
// Checked invariants: on in builds configured with WEFT_DEBUG_ASSERTS (the debug, asan and tsan
// configurations), compiled to nothing in release builds.
#pragma once

namespace weft::detail {

/// True when the library was built with WEFT_ENABLE_ASSERTS (CMake option WEFT_DEBUG_ASSERTS).
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

}  // namespace weft::detail
