// SPDX-License-Identifier: Apache-2.0
// The two functions that switch contexts. Contexts are made by Boost.Context's make_fcontext,
// and both functions save and resume its frame (registers, x87 and MXCSR control words, resume
// address), so either may resume a context the other saved.
//
// Why two: Boost 1.74's jump_fcontext is entered with `call` but resumes the other context with
// `jmp *%r8`, which leaves a return address on the CPU's return-stack predictor that no `ret`
// consumes, so every `ret` after the switch is predicted from the wrong entry. A switch that
// ends in `ret` instead keeps the predictor in step, and predicts its own return right, when
// the context it resumes left from the same call site: true of ULT-to-ULT switches (direct
// yields, yield_to, a finished ULT's switch to the next), where a yield measured 25 ns with
// Boost's jump and 11 ns with this one on the machine it was written on. Between a ULT and its
// scheduler the two sides leave from different call sites, so that `ret` is itself
// mispredicted; there Boost's jump measured faster (blocking channel and condition-variable
// round trips on one stream).
#pragma once

#include <boost/context/detail/fcontext.hpp>

namespace weft::detail {

using fcontext = boost::context::detail::fcontext_t;
using transfer = boost::context::detail::transfer_t;

// Both: `f(to, data)` saves the calling context, switches to `to` and passes it `data`; it
// returns when something switches back, with the context that did and the pointer it passed.
// References to the functions rather than inline wrappers: GCC 12 sends a wrapper's transfer_t
// through memory, a store and reload on the path of every switch.

/// The general switch (Boost.Context's jump_fcontext): ULT to scheduler and back.
inline constexpr auto& jump = boost::context::detail::jump_fcontext;

/// The switch to a context that left from the same call site as the caller: ULT to ULT.
/// weft's own on x86-64 System V (jump_x86_64_sysv.S), Boost's elsewhere.
#if defined(__x86_64__) && defined(__ELF__)
extern "C" transfer weft_jump_fcontext(fcontext to, void* data);
inline constexpr auto& jump_to_peer = weft_jump_fcontext;
#else
inline constexpr auto& jump_to_peer = boost::context::detail::jump_fcontext;
#endif

}  // namespace weft::detail
